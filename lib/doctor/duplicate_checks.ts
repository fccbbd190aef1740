/**
 * The doctor's check for duplicate load balancers: a Service (or share group) of this cluster with more than one load
 * balancer labelled for it — a second, billed one that serves nobody. It applies the controller's own rule
 * (`provider/service/duplicate_load_balancers.ts`) to the account's load balancers and the cluster's Services, so it
 * names the one the controller keeps and the ones it deletes. Pure.
 *
 * @module
 */
import type { ListedLoadBalancerFacts, ServiceFacts } from "./facts.ts";
import {
  type DuplicateCandidate,
  keeperWords,
  keyServices,
  pinnedIds,
  planDuplicates,
} from "../provider/service/duplicate_load_balancers.ts";
import type { ClusterIdentity } from "../provider/service/load_balancer_ownership.ts";
import { type CheckName, fail, type Finding, nameList, pass, plural } from "./report.ts";

/** The check that no Service of this cluster has more than one load balancer. */
export const DUPLICATE_LOAD_BALANCERS: CheckName = {
  id: "duplicate-load-balancers",
  title: "One load balancer per Service",
};

function candidate(lb: ListedLoadBalancerFacts): DuplicateCandidate {
  return {
    id: lb.id,
    labels: lb.labels,
    name: lb.name ?? "",
    state: lb.state ?? "",
    created_at: lb.created_at ?? "",
    public_ipv4: lb.public_ipv4 ?? null,
    public_ipv6: lb.public_ipv6 ?? null,
    public_ipv6_addresses: lb.public_ipv6_addresses ?? [],
  };
}

/**
 * Whether a Service or share group of `cluster` has more than one of its load balancers among `loadBalancers` (the
 * account's), given the cluster's `services`: it fails naming each key, the one that stays and the ones to delete.
 */
export function duplicateLoadBalancersFinding(
  cluster: ClusterIdentity,
  loadBalancers: readonly ListedLoadBalancerFacts[],
  services: readonly ServiceFacts[],
): Finding {
  const plan = planDuplicates(
    {
      loadBalancers: loadBalancers.map(candidate),
      servicesOf: (key) => keyServices(services, key),
      pinned: pinnedIds(services),
      at: 0,
    },
    new Map(),
    { cluster, confirmAfterMs: 0 },
  );
  if (plan.remove.length === 0) {
    return pass(DUPLICATE_LOAD_BALANCERS, "no Service of this cluster has more than one load balancer");
  }
  const byKey = new Map<string, typeof plan.remove>();
  for (const duplicate of plan.remove) byKey.set(duplicate.key, [...(byKey.get(duplicate.key) ?? []), duplicate]);
  const keys = [...byKey].map(([key, duplicates]) => {
    const keeper = duplicates[0].keeper;
    const service = key.startsWith("shared:") ? `share group ${key.slice("shared:".length)}` : `Service ${key}`;
    return `${service}: ${keeper.id} stays (${keeperWords(keeper.reason)}), ` +
      `${nameList(duplicates.map((d) => d.id))} ${duplicates.length === 1 ? "is a duplicate" : "are duplicates"}`;
  });
  return fail(
    DUPLICATE_LOAD_BALANCERS,
    `${plural(plan.remove.length, "duplicate load balancer")}, billed and serving nobody: ${keys.join("; ")}`,
    "the controller deletes each one one to two drift periods (--load-balancer-drift-period) after it sees it, with " +
      "the event DeletedDuplicateLoadBalancer on the Service; if it is not running, delete them in the Ankra Cloud " +
      `console: ${nameList(plan.remove.map((d) => d.id))}. A load balancer a Service names in ` +
      "load-balancer.ankra.cloud/load-balancer-id is never deleted",
  );
}
