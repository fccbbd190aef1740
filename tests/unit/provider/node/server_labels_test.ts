/**
 * Server labels as Node labels (`--node-labels-from-server`), the pure rules: which labels the flag selects, the node
 * label each becomes, what is set, changed and removed (only under `server.ankra.cloud`), what is skipped and why, and
 * the same inside the node plan (initialisation and later passes).
 */
import assert from "node:assert/strict";
import {
  isServerLabelKey,
  nodeLabelKeyFor,
  parseServerLabelSelector,
  planServerLabels,
  selectsServerLabel,
  SERVER_LABEL_SELECTOR,
  skippedServerLabelMessage,
} from "../../../../lib/provider/node/server_labels.ts";
import { planNode, UNINITIALIZED_TAINT } from "../../../../lib/provider/node/node_plan.ts";
import { fakeNode } from "../../../support/fakes/fake_cluster.ts";

const selector = (text: string) => parseServerLabelSelector(text)!;

Deno.test("the flag's value: keys, prefixes ending in *, or *; anything else breaks its rule", () => {
  for (const good of ["pool", "*", "pool,gpu", "team.example/*", "pool , gpu-*", "a/b,c.d_e-f"]) {
    assert.ok(SERVER_LABEL_SELECTOR.test(good), good);
  }
  for (const bad of ["pool,", ",pool", "po ol", "pool=gpu", "**", "a*b", "x".repeat(64), "pool;gpu", "ä"]) {
    assert.ok(!SERVER_LABEL_SELECTOR.test(bad), bad);
  }
  assert.equal(parseServerLabelSelector(undefined), undefined);
  assert.equal(parseServerLabelSelector(""), undefined, "empty: the feature is off");
  const parsed = selector("pool, team.example/* ,gpu-*");
  assert.deepEqual([...parsed.keys], ["pool"]);
  assert.deepEqual(parsed.prefixes, ["team.example/", "gpu-"]);
  assert.equal(parsed.all, false);
  assert.equal(parsed.text, "pool,team.example/*,gpu-*");
});

Deno.test("a selector copies exactly the keys it names, those its prefixes start, or every key for *", () => {
  const some = selector("pool,team.example/*,gpu-*");
  assert.ok(selectsServerLabel(some, "pool"));
  assert.ok(selectsServerLabel(some, "team.example/tier"));
  assert.ok(selectsServerLabel(some, "gpu-count"));
  assert.ok(!selectsServerLabel(some, "pool2"), "a key is exact");
  assert.ok(!selectsServerLabel(some, "team.example"), "the prefix includes its '/'");
  assert.ok(!selectsServerLabel(some, "gpu"));
  assert.ok(selectsServerLabel(selector("*"), "anything/at-all"));
});

Deno.test("a server label key becomes a node label under server.ankra.cloud, a prefixed one under a subdomain", () => {
  assert.deepEqual(nodeLabelKeyFor("pool"), { ok: true, key: "server.ankra.cloud/pool" });
  assert.deepEqual(nodeLabelKeyFor("Rack_7.b"), { ok: true, key: "server.ankra.cloud/Rack_7.b" });
  assert.deepEqual(nodeLabelKeyFor("team.example/tier"), { ok: true, key: "team.example.server.ankra.cloud/tier" });
  assert.deepEqual(
    nodeLabelKeyFor("kubernetes.ankra.cloud/role"),
    { ok: true, key: "kubernetes.ankra.cloud.server.ankra.cloud/role" },
  );
  // No two server keys become one node label: with and without a prefix land under different prefixes.
  assert.notEqual(
    (nodeLabelKeyFor("a.b/c") as { key: string }).key,
    (nodeLabelKeyFor("a/b.c") as { key: string }).key,
  );
  const refused = (key: string) => {
    const mapped = nodeLabelKeyFor(key);
    assert.ok(!mapped.ok, key);
    return mapped.why;
  };
  assert.match(refused("a/b/c"), /at most one '\/'/);
  assert.match(refused("Team/tier"), /prefix "Team" is no lower-case DNS subdomain/);
  assert.match(refused("team_x/tier"), /prefix "team_x"/);
  assert.match(refused("x/-y"), /"-y" is no Kubernetes label name/);
  assert.match(refused("x".repeat(64)), /is no Kubernetes label name/);
});

Deno.test("the controller's node labels are those under server.ankra.cloud or a subdomain of it, nothing else", () => {
  for (const ours of ["server.ankra.cloud/pool", "team.example.server.ankra.cloud/tier"]) {
    assert.ok(isServerLabelKey(ours), ours);
  }
  for (
    const theirs of [
      "pool",
      "node.ankra.cloud/managed",
      "myserver.ankra.cloud/pool",
      "server.ankra.cloud.example/pool",
      "topology.kubernetes.io/zone",
    ]
  ) assert.ok(!isServerLabelKey(theirs), theirs);
});

Deno.test("copies are set and changed, the controller's stale ones removed, every other label left alone", () => {
  const node = {
    "server.ankra.cloud/pool": "cpu", // changed on the server
    "server.ankra.cloud/gone": "x", // removed from the server
    "server.ankra.cloud/by-hand": "mine", // a user's label under the controller's domain
    "team.example.server.ankra.cloud/tier": "gold", // in step
    "pool": "user", // a user's label: never touched
    "node.ankra.cloud/managed": "true",
  };
  const server = { pool: "gpu", "team.example/tier": "gold", rack: "r7", unselected: "z" };
  const plan = planServerLabels(node, server, selector("pool,rack,team.example/*"));
  assert.deepEqual(plan.changes, {
    "server.ankra.cloud/pool": "gpu",
    "server.ankra.cloud/rack": "r7",
    "server.ankra.cloud/gone": null,
    "server.ankra.cloud/by-hand": null,
  });
  assert.deepEqual(plan.skipped, []);
  const applied = Object.fromEntries(
    Object.entries({ ...node, ...plan.changes }).filter((entry): entry is [string, string] => entry[1] !== null),
  );
  assert.deepEqual(planServerLabels(applied, server, selector("pool,rack,team.example/*")).changes, {}, "in step");
  assert.deepEqual(
    planServerLabels(applied, server, selector("*")).changes,
    { "server.ankra.cloud/unselected": "z" },
    "a wider selector copies more",
  );
  const inStep = {
    "server.ankra.cloud/pool": "gpu",
    "server.ankra.cloud/rack": "r7",
    "team.example.server.ankra.cloud/tier": "gold",
    "pool": "user",
  };
  assert.deepEqual(planServerLabels(inStep, server, selector("pool,rack,team.example/*")).changes, {});
  assert.deepEqual(
    planServerLabels(inStep, server, selector("rack")).changes,
    { "server.ankra.cloud/pool": null, "team.example.server.ankra.cloud/tier": null },
    "a label no longer selected is removed",
  );
});

Deno.test("a selected label that cannot be a Kubernetes label is skipped (and its old copy removed), saying why", () => {
  const server = {
    "note": "two words",
    "long": "v".repeat(64),
    "empty": "",
    "Team/x": "y",
    "ok": "fine",
  };
  const plan = planServerLabels({ "server.ankra.cloud/note": "oneword" }, server, selector("*"));
  assert.deepEqual(plan.changes, {
    "server.ankra.cloud/empty": "",
    "server.ankra.cloud/ok": "fine",
    "server.ankra.cloud/note": null,
  });
  assert.deepEqual(plan.skipped.map((s) => s.key), ["Team/x", "long", "note"], "in key order");
  assert.match(plan.skipped[0].why, /prefix "Team"/);
  assert.match(plan.skipped[1].why, /64 characters long \(a Kubernetes label value has at most 63\)/);
  assert.match(plan.skipped[2].why, /no Kubernetes label value/);
  assert.equal(
    skippedServerLabelMessage({ zone: "de-fsn1", id: "s-1" }, plan.skipped[2]),
    'server label note="two words" of server de-fsn1/s-1 is not copied to the node: its value is no Kubernetes ' +
      "label value (letters, digits, '-', '_', '.', starting and ending with a letter or digit); change the label " +
      "on the server, or leave it out of --node-labels-from-server",
  );
});

const facts = (labels: Record<string, string>) => ({
  server: { id: "s-1", zone: "de-fsn1", plan: "standard-2c-4g", hostname: "w1", labels },
  interfaces: [],
  region: "eu-central",
});

Deno.test("the node plan writes server labels at initialisation and in later label writes, only with the flag", () => {
  const joining = fakeNode("w1", {
    providerID: undefined,
    taints: [{ key: UNINITIALIZED_TAINT, effect: "NoSchedule" }],
    labels: { "server.ankra.cloud/old": "x" },
  });
  const plan = planNode(joining, facts({ pool: "gpu", bad: "a b" }), { serverLabels: selector("*") });
  assert.equal(plan.kind, "update");
  if (plan.kind !== "update") return;
  assert.equal(plan.initialise?.labels["server.ankra.cloud/pool"], "gpu");
  assert.equal(plan.initialise?.labels["server.ankra.cloud/old"], null);
  assert.equal(plan.initialise?.labels["topology.kubernetes.io/zone"], "de-fsn1");
  assert.deepEqual(plan.skippedLabels?.map((s) => s.key), ["bad"]);

  const initialised = fakeNode("w1", {
    providerID: "ankracloud://de-fsn1/s-1",
    labels: {
      "topology.kubernetes.io/zone": "de-fsn1",
      "failure-domain.beta.kubernetes.io/zone": "de-fsn1",
      "topology.kubernetes.io/region": "eu-central",
      "failure-domain.beta.kubernetes.io/region": "eu-central",
      "node.kubernetes.io/instance-type": "standard-2c-4g",
      "beta.kubernetes.io/instance-type": "standard-2c-4g",
      "server.ankra.cloud/pool": "cpu",
    },
    addresses: [{ type: "Hostname", address: "w1" }],
  });
  const later = planNode(initialised, facts({ pool: "gpu" }), { serverLabels: selector("pool") });
  assert.deepEqual(later.kind === "update" && later.labels, { "server.ankra.cloud/pool": "gpu" });
  const off = planNode(initialised, facts({ pool: "gpu" }));
  assert.equal(off.kind === "update" && off.labels, undefined, "without the flag nothing under the domain is touched");
});
