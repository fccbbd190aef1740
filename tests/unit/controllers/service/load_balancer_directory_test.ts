/**
 * The load balancer directory against the simulator (no Kubernetes needed): which load balancer a Service gets by its
 * labels and UID — its own, a legacy one to adopt, or none because another cluster's has its name.
 */
import { CLUSTER_UID_LABEL } from "../../../../lib/ankra_names.ts";
import assert from "node:assert/strict";
import { isNotFound } from "../../../../lib/cloud/errors.ts";
import { LoadBalancerDirectory } from "../../../../lib/controllers/service/load_balancer_directory.ts";
import { loadBalancerLabels, loadBalancerName } from "../../../../lib/provider/service/load_balancer_names.ts";
import { eventually } from "../../../support/wait/eventually.ts";
import { createLabelledLoadBalancer, startTestCloud, type TestCloud } from "../../../support/cloud/simulator.ts";

const UID = "uid-this";
const OTHER = "uid-other";

/** Creates a load balancer named for Service shop/`service` of cluster prod, with `labels`; its id. */
function make(cloud: TestCloud, service: string, labels: Record<string, string>): Promise<string> {
  return createLabelledLoadBalancer(cloud, loadBalancerName("prod", "shop", service), labels);
}

function wanted(service: string) {
  return { labels: loadBalancerLabels("prod", "shop", service), name: loadBalancerName("prod", "shop", service) };
}

Deno.test("own, legacy and another cluster's load balancers are told apart when a term begins", async () => {
  await using cloud = await startTestCloud();
  const own = await make(cloud, "own", { ...loadBalancerLabels("prod", "shop", "own"), [CLUSTER_UID_LABEL]: UID });
  const legacy = await make(cloud, "legacy", loadBalancerLabels("prod", "shop", "legacy"));
  const twin = await make(cloud, "twin", { ...loadBalancerLabels("prod", "shop", "twin"), [CLUSTER_UID_LABEL]: OTHER });
  const directory = new LoadBalancerDirectory(cloud.client, {
    clusterName: "prod",
    clusterUid: UID,
    documentTtlMs: 60_000,
  });
  await directory.prime();
  const found = async (service: string) =>
    await directory.find(`shop/${service}`, { ...wanted(service), mayExist: true });
  const ownFound = await found("own");
  assert.equal(ownFound?.lb.id, own);
  assert.ok(!ownFound?.unlabelled && !ownFound?.foreign);
  const legacyFound = await found("legacy");
  assert.equal(legacyFound?.lb.id, legacy);
  assert.ok(legacyFound?.unlabelled && legacyFound.legacy, "to be adopted: it gets the UID label");
  const twinFound = await found("twin");
  assert.equal(twinFound?.lb.id, twin);
  assert.ok(twinFound?.foreign && !twinFound.unlabelled, "the name is taken by another cluster's");
  assert.equal(directory.idOf("shop/twin"), undefined, "never remembered as the Service's");
  // Once the other cluster's is gone, the name is free: nothing is found, so the Service gets a new one.
  await cloud.client.deleteLoadBalancer(twin);
  // The simulator moves its operations on as requests come in: ask until the API says 404.
  await eventually(
    () =>
      cloud.client.getLoadBalancer(twin).then(() => false, (cause) => {
        if (isNotFound(cause)) return true;
        throw cause;
      }),
    5_000,
    "the other cluster's deleted",
  );
  assert.equal(await found("twin"), undefined);
});

Deno.test("without the account's list, the label filter finds a legacy one and refuses another cluster's", async () => {
  await using cloud = await startTestCloud();
  const legacy = await make(cloud, "legacy", loadBalancerLabels("prod", "shop", "legacy"));
  const twin = await make(cloud, "twin", { ...loadBalancerLabels("prod", "shop", "twin"), [CLUSTER_UID_LABEL]: OTHER });
  const directory = new LoadBalancerDirectory(cloud.client, {
    clusterName: "prod",
    clusterUid: UID,
    documentTtlMs: 60_000,
  });
  assert.ok(!directory.primed);
  const legacyFound = await directory.find("shop/legacy", { ...wanted("legacy"), mayExist: true });
  assert.equal(legacyFound?.lb.id, legacy);
  assert.ok(legacyFound?.legacy);
  const twinFound = await directory.find("shop/twin", { ...wanted("twin"), mayExist: true });
  assert.equal(twinFound?.lb.id, twin);
  assert.ok(twinFound?.foreign);
});

Deno.test("several load balancers for one Service: the lookup keeps the one its status shows, else the oldest", async () => {
  await using cloud = await startTestCloud();
  const labels = { ...loadBalancerLabels("prod", "shop", "dup"), [CLUSTER_UID_LABEL]: UID };
  const older = await make(cloud, "dup", labels);
  const newer = await make(cloud, "dup", labels);
  const shown = await eventually(async () => (await cloud.client.getLoadBalancer(newer)).public_ipv6, 5_000);
  const directory = () =>
    new LoadBalancerDirectory(cloud.client, { clusterName: "prod", clusterUid: UID, documentTtlMs: 60_000 });
  // When a term begins: neither is taken on trust, the label lookup decides with the status in hand.
  const primed = directory();
  await primed.prime();
  assert.equal(primed.idOf("shop/dup"), undefined, "two equally good ones: none remembered from the list");
  const byStatus = await primed.find("shop/dup", { ...wanted("dup"), mayExist: true, addresses: [shown] });
  assert.equal(byStatus?.lb.id, newer, "the one whose address the Service's status shows");
  const unprimed = directory();
  assert.equal((await unprimed.find("shop/dup", { ...wanted("dup"), mayExist: true }))?.lb.id, older, "the oldest");
  // The one it uses is deleted (as a duplicate, or by hand): it looks for another before a new one is made.
  await cloud.client.deleteLoadBalancer(older);
  await eventually(
    () => cloud.client.getLoadBalancer(older).then(() => false, (cause) => isNotFound(cause)),
    5_000,
    "deleted",
  );
  const labelLists = () => cloud.simulator.sim.log.filter((e) => e.path.includes("label=")).length;
  const before = labelLists();
  const next = await unprimed.find("shop/dup", { ...wanted("dup"), mayExist: true, fresh: true });
  assert.equal(next?.lb.id, newer, "the other one serves; none is created");
  assert.ok(labelLists() > before, "found by the label lookup");
});

Deno.test("a label lookup whose list has an item it cannot read creates nothing: it may be the Service's", async () => {
  await using cloud = await startTestCloud();
  const id = await make(cloud, "spoiled", {
    ...loadBalancerLabels("prod", "shop", "spoiled"),
    [CLUSTER_UID_LABEL]: UID,
  });
  const directory = new LoadBalancerDirectory(cloud.client, {
    clusterName: "prod",
    clusterUid: UID,
    documentTtlMs: 60_000,
  });
  await directory.prime();
  directory.markUncertain("shop/spoiled"); // as after a create whose outcome is unknown
  cloud.simulator.sim.faults.add({ operation: "list_load_balancers", malformed: "item", times: 1 });
  await assert.rejects(
    directory.find("shop/spoiled", { ...wanted("spoiled"), mayExist: true }),
    /labelled for shop\/spoiled has 1 item\(s\) that cannot be read; no load balancer is created/,
  );
  assert.equal((await directory.find("shop/spoiled", { ...wanted("spoiled"), mayExist: true }))?.lb.id, id);
});
