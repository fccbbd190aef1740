/**
 * The doctor's `duplicate-load-balancers` check: a Service (or share group) of this cluster with more than one load
 * balancer fails, naming the one the controller keeps and the ones it deletes; another cluster's, a legacy and an
 * unlabelled load balancer never count; without the cluster's Services or UID it is skipped, saying why.
 */
import assert from "node:assert/strict";
import { checklist } from "../../../lib/doctor/checklist.ts";
import { duplicateLoadBalancersFinding } from "../../../lib/doctor/duplicate_checks.ts";
import type { ListedLoadBalancerFacts } from "../../../lib/doctor/facts.ts";
import { failedRead, fetched } from "../../../lib/doctor/fetched.ts";
import { slimService } from "../../support/fakes/slim_service.ts";

const CLUSTER = { name: "kubernetes", uid: "uid-a" };
const OURS = { "ccm.ankra.cloud/cluster": "kubernetes", "ccm.ankra.cloud/cluster-uid": "uid-a" };

function lb(id: string, labels: Record<string, string>, minute: number, ipv6?: string): ListedLoadBalancerFacts {
  return {
    id,
    labels,
    name: `k8s-kubernetes-${id}`,
    state: "running",
    created_at: `2026-01-01T10:${String(minute).padStart(2, "0")}:00Z`,
    public_ipv4: null,
    public_ipv6: ipv6 ?? null,
    public_ipv6_addresses: ipv6 ? [ipv6] : [],
  };
}

const web = (extra = {}) => slimService({ namespace: "default", name: "web", ...extra });

Deno.test("duplicate-load-balancers passes with one load balancer per Service, whoever else is labelled alike", () => {
  const finding = duplicateLoadBalancersFinding(CLUSTER, [
    lb("lb-1", { ...OURS, "ccm.ankra.cloud/service": "default/web" }, 1),
    // Same Service label, but another cluster's, a legacy one (no UID) and an unlabelled one: none counts.
    lb("lb-2", { ...OURS, "ccm.ankra.cloud/service": "default/web", "ccm.ankra.cloud/cluster-uid": "uid-b" }, 2),
    lb("lb-3", { "ccm.ankra.cloud/cluster": "kubernetes", "ccm.ankra.cloud/service": "default/web" }, 3),
    lb("lb-4", {}, 4),
  ], [web()]);
  assert.equal(finding.status, "pass", finding.result);
  assert.equal(finding.result, "no Service of this cluster has more than one load balancer");
});

Deno.test("duplicate-load-balancers fails naming the one that stays and the duplicates, with the fix", () => {
  const own = { ...OURS, "ccm.ankra.cloud/service": "default/web" };
  const shared = { ...OURS, "ccm.ankra.cloud/shared": "shop.front" };
  const finding = duplicateLoadBalancersFinding(CLUSTER, [
    lb("lb-1", own, 1),
    lb("lb-2", own, 2, "2001:db8::2"),
    lb("lb-7", shared, 1),
    lb("lb-8", shared, 2),
    lb("lb-9", shared, 3),
    // A Service that is gone: its load balancers are leaks, the sweeper's business, not this check's.
    lb("lb-5", { ...OURS, "ccm.ankra.cloud/service": "default/gone" }, 1),
    lb("lb-6", { ...OURS, "ccm.ankra.cloud/service": "default/gone" }, 2),
  ], [
    web({ ingress: [{ ip: "2001:db8::2" }] }),
    slimService({ namespace: "shop", name: "a", annotations: { "load-balancer.ankra.cloud/share": "front" } }),
  ]);
  assert.equal(finding.id, "duplicate-load-balancers");
  assert.equal(finding.status, "fail");
  assert.equal(
    finding.result,
    "3 duplicate load balancers, billed and serving nobody: Service default/web: lb-2 stays (the one whose address " +
      "is in the Service's status), lb-1 is a duplicate; share group shop.front: lb-7 stays (the oldest, as no " +
      "Service's status shows an address of any of them), lb-8, lb-9 are duplicates",
  );
  assert.match(finding.fix!, /the controller deletes each one one to two drift periods/);
  assert.match(finding.fix!, /delete them in the Ankra Cloud console: lb-1, lb-8, lb-9\./);
});

Deno.test("duplicate-load-balancers keeps the load balancer a Service pins, whatever its status shows", () => {
  const own = { ...OURS, "ccm.ankra.cloud/service": "default/web" };
  const pinned = web({ annotations: { "load-balancer.ankra.cloud/load-balancer-id": "lb-2" } });
  const finding = duplicateLoadBalancersFinding(CLUSTER, [lb("lb-1", own, 1), lb("lb-2", own, 2)], [pinned]);
  assert.match(
    finding.result,
    /lb-2 stays \(the one the Service names in load-balancer\.ankra\.cloud\/load-balancer-id\)/,
  );
});

Deno.test("duplicate-load-balancers is skipped without the Services or the cluster's UID, saying which", () => {
  const cloud = {
    reachability: { ok: true as const, url: "u", status: 401, body: "" },
    zones: fetched([{ name: "de-fsn1" }]),
    loadBalancers: fetched([]),
    capabilities: {},
  };
  const settings = {
    apiUrl: "https://cloud.example",
    highAvailability: "auto" as const,
    leaderElect: false,
    leaseName: "x",
    leaseNamespace: "kube-system",
    delegatedAuthorization: false,
    clusterName: "kubernetes",
  };
  const cluster = {
    server: "https://k8s:6443",
    source: "test",
    reachability: { ok: true as const, url: "u", status: 200, body: "" },
    leases: {},
    clusterUid: fetched("uid-a"),
    services: failedRead({ kind: "forbidden", status: 403, message: "services is forbidden" }),
  };
  const find = (c: typeof cluster | Omit<typeof cluster, "clusterUid">) =>
    checklist({ warnings: [], settings, cloud, cluster: c, now: new Date() })
      .find((f) => f.id === "duplicate-load-balancers")!;
  const noServices = find(cluster);
  assert.equal(noServices.status, "skip");
  assert.equal(noServices.result, "skipped: the Services cannot be listed: services is forbidden");
  const { clusterUid: _, ...withoutUid } = cluster;
  assert.equal(find(withoutUid).result, "skipped: the cluster's UID was not read");
});
