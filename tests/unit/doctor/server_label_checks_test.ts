/**
 * The doctor's `server-labels` check: with `--node-labels-from-server` it names the labels each matched Node would
 * carry and warns about the selected ones that would be skipped; without the flag it is not in the checklist.
 */
import assert from "node:assert/strict";
import { checklist } from "../../../lib/doctor/checklist.ts";
import { fetched } from "../../../lib/doctor/fetched.ts";
import { matchNodes } from "../../../lib/doctor/placement_checks.ts";
import { serverLabelsFinding } from "../../../lib/doctor/server_label_checks.ts";
import { parseServerLabelSelector } from "../../../lib/provider/node/server_labels.ts";
import { node, server } from "./doctor_fixtures.ts";

const selector = (text: string) => parseServerLabelSelector(text)!;

function labelled(id: string, hostname: string, labels: Record<string, string>) {
  return { ...server(id, hostname), labels };
}

Deno.test("server-labels names each node's copies, and warns about a label that would be skipped", () => {
  const servers = [
    labelled("s-1", "w1", { pool: "gpu", "team.example/tier": "gold", other: "x" }),
    labelled("s-2", "w2", { pool: "big pool" }),
  ];
  const matches = matchNodes([node("w1"), node("w2"), node("w3")], servers);
  const finding = serverLabelsFinding(selector("pool,team.example/*"), matches);
  assert.equal(finding.status, "warn");
  assert.match(
    finding.result,
    /^1 node would carry their servers' labels pool,team.example\/\* as: w1: server.ankra.cloud\/pool=gpu, team.example.server.ankra.cloud\/tier=gold; 1 label would be skipped: w2: pool \(its value is no Kubernetes label value/,
  );
  assert.match(finding.fix!, /InvalidServerLabel/);

  const clean = serverLabelsFinding(selector("team.example/*"), matches);
  assert.equal(clean.status, "pass");
  assert.match(clean.result, /w1: team.example.server.ankra.cloud\/tier=gold$/);

  const none = serverLabelsFinding(selector("gpu"), matches);
  assert.equal(none.status, "warn");
  assert.match(none.result, /no server label of a matched node matches gpu: nothing would be copied/);
});

Deno.test("the check follows kube-proxy's node IPs, and is skipped, saying so, unless the flag is set", () => {
  const base = {
    warnings: [],
    settings: {
      apiUrl: "https://cloud.example",
      highAvailability: "auto" as const,
      leaderElect: false,
      leaseName: "l",
      leaseNamespace: "kube-system",
      delegatedAuthorization: false,
      clusterName: "kubernetes",
    },
    cloud: {
      reachability: { ok: true as const, url: "u", status: 401, body: "" },
      zones: fetched([{ name: "de-fsn1" }]),
      servers: fetched([labelled("s-1", "w1", { pool: "gpu" })]),
      capabilities: {},
    },
    cluster: {
      server: "https://k8s:6443",
      source: "/kubeconfig",
      reachability: { ok: true as const, url: "u", status: 200, body: "" },
      nodes: fetched([node("w1")]),
      leases: {},
    },
    now: new Date(),
  };
  const ids = (findings: { id: string }[]) => findings.map((f) => f.id);
  const without = checklist(base).find((f) => f.id === "server-labels")!;
  assert.equal(without.status, "skip");
  assert.match(without.result, /--node-labels-from-server is not set/);
  const withFlag = checklist({ ...base, settings: { ...base.settings, nodeLabelsFromServer: selector("pool") } });
  const at = ids(withFlag).indexOf("server-labels");
  assert.equal(ids(withFlag)[at - 1], "kube-proxy-node-ips");
  assert.equal(withFlag[at].status, "pass");
  assert.match(withFlag[at].result, /w1: server.ankra.cloud\/pool=gpu/);
});
