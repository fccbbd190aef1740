/**
 * Steps 3–5 of a pass over a Service in node-address mode (`node_address_plan.ts`): find the public addresses of the
 * servers behind its nodes (the account's server list, cached with the placement's facts), plan the ingress, write it.
 * Nothing is written to Ankra Cloud — but for a Service that had an Ankra load balancer before it moved to this mode:
 * that one is retired first (deleted, or released with `preserve-on-delete`), once per Service and process. The
 * cleanup finalizer is added as upstream's service controller adds it to every Service it serves (Kubernetes' e2e
 * checks it), so deleting the Service or changing its type clears its status through the usual cleanup pass. Which
 * nodes each Service was last published on, and which are draining, is kept here between passes.
 *
 * @module
 */
import type { SlimNode, SlimService } from "../../kube/slim.ts";
import type { ServiceWriter } from "../../kube/service_writes.ts";
import type { StoreReader } from "../../kube/store.ts";
import { parseProviderId } from "../../provider/provider_id.ts";
import type { ClaimingService, PublicAddresses } from "../../provider/service/node_address_plan.ts";
import { planNodeAddresses } from "../../provider/service/node_address_plan.ts";
import type { ReservedRange } from "../../provider/service/reserved_ports.ts";
import type { ServingMode } from "../../provider/service/annotations.ts";
import { parseAnnotations } from "../../provider/service/annotations.ts";
import { type IngressStyle, sameIngress } from "../../provider/service/service_ingress.ts";
import type { ServiceIntent } from "../../provider/service/service_plan.ts";
import { servingMode } from "../../provider/service/serving_mode.ts";
import type { ReconcileResult } from "../../runtime/work_queue.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import type { PassReport } from "./pass_report.ts";
import type { PlacementFacts } from "./placement_facts.ts";
import type { ServiceCleanup } from "./service_cleanup.ts";
import { loadBalancerLabels, loadBalancerName } from "../../provider/service/load_balancer_names.ts";
import { FINALIZER } from "../../provider/service/service_plan.ts";

/** A server newly seen behind a node is looked up in a list at most this old. */
const NEW_SERVER_MAX_AGE_MS = 30_000;

/** What the node-address step uses. */
interface ServiceOnNodesOptions {
  /** The servers' public addresses (shared with the placement). */
  facts: Pick<PlacementFacts, "publicAddresses">;
  /** The Nodes (also those no longer eligible: a draining node keeps its address). */
  nodes: StoreReader<SlimNode>;
  /** The Services (the other node-address Services' claims). */
  services: StoreReader<SlimService>;
  /** Where the ingress and the finalizer are written. */
  writes: Pick<ServiceWriter, "writeIngress" | "setFinalizer">;
  /** Retires the load balancer a Service had before it moved to node-address mode. */
  cleanup: Pick<ServiceCleanup, "retireDedicated">;
  /** `--cluster-name` (the names and labels of the Services' load balancers). */
  clusterName: string;
  /** Look again after this long while that load balancer is being deleted. */
  deletePollMs: number;
  /** `--node-address-reserved-ports`. */
  reserved: readonly ReservedRange[];
  /** `--member-drain-period`, milliseconds. */
  memberDrainMs: number;
  /** `--load-balancer-drift-period`: a served Service is looked at again after this long. */
  driftCheckMs: number;
  /** `--default-load-balancer-mode`. */
  defaultMode: ServingMode;
}

/** The node-address passes, and what they keep between passes. */
export class ServiceOnNodes {
  readonly #options: ServiceOnNodesOptions;
  /** The nodes each Service was last published on, by Service key. */
  readonly #published = new Map<string, string[]>();
  /** The nodes draining from each Service's ingress: node → since (epoch ms), by Service key. */
  readonly #leaving = new Map<string, Map<string, number>>();
  /** Services whose former load balancer is known to be gone (looked up once per process and move). */
  readonly #noLoadBalancer = new Set<string>();

  /** Keeps `options`. */
  constructor(options: ServiceOnNodesOptions) {
    this.#options = options;
  }

  /** Forgets the Service's published nodes and drains (it is gone or no longer in node-address mode). */
  forget(key: string): void {
    this.#published.delete(key);
    this.#leaving.delete(key);
    this.#noLoadBalancer.delete(key);
  }

  /** True when `service` is served in node-address mode (its annotations read alone; invalid ones count as not). */
  onNodes(service: SlimService): boolean {
    const parsed = parseAnnotations(service.annotations, { sessionAffinity: service.sessionAffinity });
    return servingMode(service, parsed.ok ? parsed.settings.mode : undefined, this.#options.defaultMode) ===
      "node-addresses";
  }

  /** The other node-address Services and what they claim. */
  #others(self: SlimService): ClaimingService[] {
    return this.#options.services.list().filter((s) =>
      s.type === "LoadBalancer" && !s.deletionTimestamp && s.uid !== self.uid && this.onNodes(s)
    ).map((s) => ({
      key: `${s.namespace}/${s.name}`,
      creationTimestamp: s.creationTimestamp,
      ports: s.ports,
      ingress: s.ingress,
    }));
  }

  /** The public addresses of each node's server, by node name; a node whose server is not listed is read afresh. */
  async #addresses(candidates: readonly SlimNode[]): Promise<(node: string) => PublicAddresses | undefined> {
    const serverOf = (name: string) => {
      const node = this.#options.nodes.get(name);
      return node?.providerID ? parseProviderId(node.providerID)?.serverId : undefined;
    };
    let servers = await this.#options.facts.publicAddresses();
    const unlisted = candidates.some((node) => {
      const id = serverOf(node.name);
      return id !== undefined && !servers.has(id);
    });
    if (unlisted) servers = await this.#options.facts.publicAddresses({ maxAgeMs: NEW_SERVER_MAX_AGE_MS });
    return (name) => {
      const id = serverOf(name);
      return id ? servers.get(id) : undefined;
    };
  }

  /** Publishes the Service on its nodes' addresses; throws {@linkcode WaitingForUser} where it is refused. */
  async ensure(report: PassReport, intent: ServiceIntent, style: IngressStyle): Promise<ReconcileResult> {
    const { service } = report;
    const options = this.#options;
    if (!this.#noLoadBalancer.has(intent.key)) {
      // Moved from an Ankra load balancer: that one goes first (its address stays until the nodes' are written).
      const retiring = await options.cleanup.retireDedicated(report, {
        key: intent.key,
        labels: loadBalancerLabels(options.clusterName, service.namespace, service.name),
        name: loadBalancerName(options.clusterName, service.namespace, service.name),
      });
      if (retiring) return { requeueAfterMs: options.deletePollMs };
      this.#noLoadBalancer.add(intent.key);
    }
    if (!service.finalizers.includes(FINALIZER)) await options.writes.setFinalizer(service, FINALIZER, true);
    const plan = planNodeAddresses({
      service,
      candidates: intent.nodes,
      addressesOf: await this.#addresses(intent.nodes),
      reserved: options.reserved,
      others: this.#others(service),
      style,
      drain: {
        periodMs: options.memberDrainMs,
        now: Date.now(),
        published: this.#published.get(intent.key) ?? [],
        leaving: this.#leaving.get(intent.key) ?? new Map(),
      },
    });
    if (!plan.ok) throw new WaitingForUser("SyncLoadBalancerFailed", plan.message, { condition: plan.reason });
    report.notices([{
      topic: "node-addresses",
      reason: "NodeWithoutPublicAddress",
      message: plan.withoutAddress.length > 0
        ? `node(s) ${plan.withoutAddress.join(", ")} serve this Service but their servers have no public address ` +
          `of its IP families; they are left out of its ingress`
        : undefined,
    }]);
    const addresses = plan.ingress.map((i) => i.ip);
    const draining = [...plan.leaving.keys()];
    const described = `nodes ${plan.nodes.join(", ")}${draining.length ? ` (draining: ${draining.join(", ")})` : ""}`;
    if (!sameIngress(service.ingress, plan.ingress)) {
      await options.writes.writeIngress(service, plan.ingress);
      report.event(
        "provider",
        "Normal",
        "NodeAddressesPublished",
        `served on the addresses of ${described}: ${addresses.join(", ")} (node-address mode: no Ankra load balancer)`,
      );
    }
    this.#published.set(intent.key, [...plan.nodes, ...draining]);
    if (plan.leaving.size > 0) this.#leaving.set(intent.key, plan.leaving);
    else this.#leaving.delete(intent.key);
    report.state = {
      status: "True",
      reason: "ServingOnNodes",
      message: `served on the addresses of ${described} at ${addresses.join(", ")} (node-address mode: no Ankra ` +
        "load balancer)",
    };
    const dueInMs = plan.nextAtMs === undefined ? Infinity : Math.max(0, plan.nextAtMs - Date.now());
    return { requeueAfterMs: Math.min(options.driftCheckMs, dueInMs) };
  }
}
