/**
 * Duplicate load balancers through the sweeper over fakes (fast tier): a Service store filled by hand, the in-process
 * simulator, an explicit clock and a recording event sink. Of two load balancers labelled for one Service the one its
 * status shows (or the one it pins) stays and the other goes at the second observation a period later — never during
 * an API outage or after an incomplete list, never another cluster's, a legacy or an unlabelled one, never in a dry
 * run, and also with `--sweep-leaked-load-balancers=false`. The pure rule is
 * tests/unit/provider/service/duplicate_load_balancers_test.ts; the controller end to end is
 * tests/integration/duplicate_load_balancers_test.ts.
 */
import assert from "node:assert/strict";
import { CLUSTER_UID_LABEL } from "../../../../lib/ankra_names.ts";
import { LoadBalancerSweeper } from "../../../../lib/controllers/service/load_balancer_sweeper.ts";
import type { EventSink } from "../../../../lib/kube/events.ts";
import { objectKey } from "../../../../lib/kube/object_key.ts";
import type { SlimService } from "../../../../lib/kube/slim.ts";
import { loadBalancerLabels } from "../../../../lib/provider/service/load_balancer_names.ts";
import { DryRunReport } from "../../../../lib/runtime/dry_run.ts";
import { MetricsRegistry } from "../../../../lib/runtime/metrics.ts";
import { eventually } from "../../../support/wait/eventually.ts";
import { FakeStore } from "../../../support/fakes/fake_cluster.ts";
import { slimService } from "../../../support/fakes/slim_service.ts";
import { createLabelledLoadBalancer, startTestCloud, type TestCloud } from "../../../support/cloud/simulator.ts";

const PERIOD_MS = 1_000;
const UID = "uid-unit";
const ours = (name: string) => ({ ...loadBalancerLabels("unit", "default", name), [CLUSTER_UID_LABEL]: UID });

/** The load balancer's IPv6 address once it runs. */
async function addressOf(cloud: TestCloud, id: string): Promise<string> {
  return await eventually(async () => (await cloud.client.getLoadBalancer(id)).public_ipv6, { what: `${id} runs` });
}

/** Events recorded, as `type reason namespace/name: message`. */
function recordingSink(): EventSink & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    event(object, type, reason, message) {
      lines.push(`${type} ${reason} ${object.namespace}/${object.name}: ${message}`);
    },
  };
}

/** A live (not deleting, not gone) load balancer of the simulator. */
function live(cloud: TestCloud, id: string): boolean {
  const lb = cloud.simulator.sim.loadBalancers.items.get(id);
  return lb !== undefined && lb.state !== "deleting";
}

Deno.test("the one the status shows stays; the other goes a period later, never during an outage or on a partial list", async () => {
  await using cloud = await startTestCloud();
  const sim = cloud.simulator.sim;
  const older = await createLabelledLoadBalancer(cloud, "k8s-unit-default-web", ours("web"));
  const newer = await createLabelledLoadBalancer(cloud, "k8s-unit-default-web", ours("web"));
  const foreign = await createLabelledLoadBalancer(cloud, "k8s-unit-default-web", {
    ...loadBalancerLabels("unit", "default", "web"),
    [CLUSTER_UID_LABEL]: "uid-other",
  });
  const legacy = await createLabelledLoadBalancer(
    cloud,
    "k8s-unit-default-web",
    loadBalancerLabels("unit", "default", "web"),
  );
  const unlabelled = await createLabelledLoadBalancer(cloud, "k8s-unit-default-web", {});
  const services = new FakeStore<SlimService>(objectKey);
  services.put(slimService({ namespace: "default", name: "web", ingress: [{ ip: await addressOf(cloud, newer) }] }));
  const events = recordingSink();
  const metrics = new MetricsRegistry();
  let now = 0;
  const sweeper = new LoadBalancerSweeper({
    cloud: cloud.client,
    services,
    clusterName: "unit",
    clusterUid: UID,
    periodMs: PERIOD_MS,
    events,
    metrics,
    now: () => now,
  });
  const first = await sweeper.sweep();
  assert.deepEqual(first.duplicates, { found: [older], deleted: [], pending: 1 });
  assert.equal(events.lines.length, 1);
  assert.match(
    events.lines[0],
    new RegExp(`^Warning DuplicateLoadBalancer default/web: load balancers ${newer} and ${older} .* are both labelled`),
  );
  assert.match(events.lines[0], /stays, the one whose address is in the Service's status/);
  // A period later, but the API fails, then answers with one item it cannot read: no observation, nothing deleted.
  now = PERIOD_MS;
  sim.faults.add({ operation: "list_load_balancers", status: 503, times: 0 });
  const outage = await sweeper.sweep();
  assert.equal(outage.observed, false);
  sim.faults.clear();
  sim.faults.add({ operation: "list_load_balancers", malformed: "item", times: 1 });
  const partial = await sweeper.sweep();
  assert.equal(partial.observed, false);
  assert.match(partial.reason!, /incomplete/);
  assert.ok(live(cloud, older), "nothing deleted without a complete observation");
  // The API is back: the confirming observation deletes the duplicate, and only it.
  const confirmed = await sweeper.sweep();
  assert.deepEqual(confirmed.duplicates.deleted, [older]);
  assert.ok(!live(cloud, older), "the duplicate is being deleted");
  for (const id of [newer, foreign, legacy, unlabelled]) assert.ok(live(cloud, id), `${id} is untouched`);
  assert.match(
    events.lines[1],
    new RegExp(`^Normal DeletedDuplicateLoadBalancer default/web: deleted load balancer ${older} .* ${newer} .* stays`),
  );
  assert.match(metrics.render(), /^ankra_ccm_duplicate_load_balancers_found_total 1$/m);
  now = 3 * PERIOD_MS;
  const after = await sweeper.sweep();
  assert.deepEqual(after.duplicates, { found: [], deleted: [], pending: 0 }, "one left: no duplicate");
  assert.equal(events.lines.length, 2);
});

Deno.test("a pinned load balancer stays over the status; duplicates go with the leak sweep off; a dry run only reports", async () => {
  await using cloud = await startTestCloud();
  const older = await createLabelledLoadBalancer(cloud, "k8s-unit-default-web", ours("web"));
  const newer = await createLabelledLoadBalancer(cloud, "k8s-unit-default-web", ours("web"));
  const leaked = await createLabelledLoadBalancer(cloud, "k8s-unit-default-gone", ours("gone"));
  const services = new FakeStore<SlimService>(objectKey);
  // The status still shows the older one's address, but the Service now names the newer one.
  services.put(slimService({
    namespace: "default",
    name: "web",
    ingress: [{ ip: await addressOf(cloud, older) }],
    annotations: { "load-balancer.ankra.cloud/load-balancer-id": newer },
  }));
  let now = 0;
  const options = {
    cloud: cloud.client,
    services,
    clusterName: "unit",
    clusterUid: UID,
    periodMs: PERIOD_MS,
    sweepLeaked: false,
    now: () => now,
  };
  const dryRun = new DryRunReport();
  const dry = new LoadBalancerSweeper({ ...options, dryRun });
  await dry.sweep();
  now = PERIOD_MS;
  const reported = await dry.sweep();
  assert.deepEqual(reported.duplicates.deleted, []);
  assert.deepEqual(dryRun.actions.map((a) => [a.action, a.detail]), [
    [
      "delete_load_balancer",
      `delete duplicate load balancer ${older} (k8s-unit-default-web): Service default/web keeps ${newer}`,
    ],
  ]);
  assert.ok(live(cloud, older), "a dry run deletes nothing");
  now = 0;
  const sweeper = new LoadBalancerSweeper(options);
  const first = await sweeper.sweep();
  assert.deepEqual(first.duplicates.found, [older]);
  now = PERIOD_MS;
  const second = await sweeper.sweep();
  assert.deepEqual(second.duplicates.deleted, [older], "the pinned one stays, whatever the status shows");
  assert.deepEqual(second.swept, [], "the leak sweep is off");
  assert.ok(live(cloud, newer) && live(cloud, leaked));
});
