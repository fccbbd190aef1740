/**
 * A Service served on its nodes' own public addresses (node-address mode), one implementation of
 * `ServingStrategy` (steps 2–5 of a pass, `node_address_plan.ts` deciding): move off an edge or share group it left,
 * find the public addresses of the servers behind its serving nodes (in the shared cloud view, listed every
 * `--server-list-period`), plan the ingress, write it.
 * Nothing is written to Ankra Cloud — but for a Service that had an Ankra load balancer before it moved to this mode:
 * that one is retired first (deleted, or released with `preserve-on-delete`), once per Service and process. The
 * cleanup finalizer is added as upstream's service controller adds it to every Service it serves (Kubernetes' e2e
 * checks it), so deleting the Service or changing its type clears its status through the usual cleanup pass. Which
 * nodes each Service was last published on and which are draining is kept here between passes, and each node's
 * servers' public addresses as the last server list had them: after every list, {@linkcode NodeAddressServing.serversMoved}
 * tells whether a node's server changed its addresses (an IPv4 add-on bought or released, an IPv6 /64 renumbered), the
 * controller then queues the node-address Services, and a pass that publishes the same nodes at other addresses says so
 * in a Normal `NodeAddressesChanged` naming the old and the new ones.
 *
 * @module
 */
import type { SlimNode, SlimService } from "../../kube/slim.ts";
import type { ServiceWriter } from "../../kube/service_writes.ts";
import type { StoreReader } from "../../kube/store.ts";
import { parseProviderId } from "../../provider/provider_id.ts";
import {
  type ClaimingService,
  ingressChange,
  planNodeAddresses,
  type PublicAddresses,
  publicAddressesOf,
} from "../../provider/service/node_address_plan.ts";
import type { ReservedRange } from "../../provider/service/reserved_ports.ts";
import type { ServingMode } from "../../provider/service/annotations.ts";
import { type IngressStyle, sameIngress } from "../../provider/service/service_ingress.ts";
import type { NodeAddressIntent } from "../../provider/service/service_plan.ts";
import { servingModeOf } from "../../provider/service/serving_mode.ts";
import type { ReconcileResult } from "../../runtime/work_queue.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import type { PassReport } from "./pass_report.ts";
import type { ServiceMove } from "./service_move.ts";
import type { ServingStrategy } from "./serving_strategy.ts";
import type { ServerView } from "./service_controller_options.ts";
import type { ServiceCleanup } from "./service_cleanup.ts";
import { loadBalancerLabels, loadBalancerName } from "../../provider/service/load_balancer_names.ts";
import { FINALIZER } from "../../provider/service/service_plan.ts";

/** What the node-address step uses. */
interface NodeAddressServingOptions {
  /** The servers, in the shared cloud view. */
  servers: ServerView;
  /** The Nodes (also those no longer eligible: a draining node keeps its address). */
  nodes: StoreReader<SlimNode>;
  /** The Services (the other node-address Services' claims). */
  services: StoreReader<SlimService>;
  /** Where the ingress and the finalizer are written. */
  writes: Pick<ServiceWriter, "writeIngress" | "setFinalizer">;
  /** Retires the load balancer a Service had before it moved to node-address mode. */
  cleanup: Pick<ServiceCleanup, "retireDedicated">;
  /** Step 2: off an edge or share group the Service left. */
  move: Pick<ServiceMove, "move">;
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
  /** `--default-load-balancer-mode` (undefined: `load-balancer`). */
  defaultMode?: ServingMode;
}

/** Serving on node addresses, and what it keeps between passes. */
export class NodeAddressServing implements ServingStrategy<NodeAddressIntent> {
  readonly #options: NodeAddressServingOptions;
  /** The nodes each Service was last published on, by Service key. */
  readonly #published = new Map<string, string[]>();
  /** The nodes draining from each Service's ingress: node → since (epoch ms), by Service key. */
  readonly #leaving = new Map<string, Map<string, number>>();
  /** Services whose former load balancer is known to be gone (looked up once per process and move). */
  readonly #noLoadBalancer = new Set<string>();
  /** Each node's server's public addresses at the last server list (`<ipv6>|<ipv4>`), by node name. */
  readonly #listed = new Map<string, string>();

  /** Keeps `options`. */
  constructor(options: NodeAddressServingOptions) {
    this.#options = options;
  }

  /** Forgets the Service's published nodes and drains (it is gone or no longer in node-address mode). */
  forget(key: string): void {
    this.#published.delete(key);
    this.#leaving.delete(key);
    this.#noLoadBalancer.delete(key);
  }

  /** The other node-address Services and what they claim. */
  #others(self: SlimService): ClaimingService[] {
    return this.#options.services.list().filter((s) =>
      s.type === "LoadBalancer" && !s.deletionTimestamp && s.uid !== self.uid &&
      servingModeOf(s, this.#options.defaultMode) === "node-addresses"
    ).map((s) => ({
      key: `${s.namespace}/${s.name}`,
      creationTimestamp: s.creationTimestamp,
      ports: s.ports,
      ingress: s.ingress,
    }));
  }

  /** The server id of node `name`, by its providerID (a node not initialised yet has none). */
  #serverOf(name: string): string | undefined {
    const node = this.#options.nodes.get(name);
    return node?.providerID ? parseProviderId(node.providerID)?.serverId : undefined;
  }

  /** The public addresses of node `name`'s server as the view knows it now; undefined when it is not listed. */
  #addressesNow(name: string): PublicAddresses | undefined {
    const id = this.#serverOf(name);
    const server = id ? this.#options.servers.server(id) : undefined;
    return server ? publicAddressesOf(server) : undefined;
  }

  /**
   * The public addresses of each node's server, by node name. Before the view's first complete list it lists now (a
   * failure then fails the pass: nothing is known yet); a node whose server the view has not listed yet makes it list
   * again (at most every few seconds). A later failed list keeps what the view knew: an outage never takes an address
   * away.
   */
  async #addresses(candidates: readonly SlimNode[]): Promise<(node: string) => PublicAddresses | undefined> {
    const view = this.#options.servers;
    if (!view.synced && !(await view.refresh({ force: true }))) {
      throw new Error("the servers' public addresses are not known yet: list_servers failed (see the log)");
    }
    const unlisted = candidates.some((node) => {
      const id = this.#serverOf(node.name);
      return id !== undefined && !view.server(id);
    });
    if (unlisted) await view.refresh();
    return (name) => this.#addressesNow(name);
  }

  /**
   * After a server list: true when some node's server has other public addresses than at the list before (an IPv4
   * add-on bought or released, an IPv6 /64 renumbered, a node or its server listed for the first time).
   */
  serversMoved(): boolean {
    // A node not in the last list's record counts as moved too — the first list that sees it included: the Services
    // were published from addresses read before it (a pass's own list, or none while the node store was still empty
    // at the start), which may already be old. Taking that first list as the baseline missed a change made before it
    // for good. The extra look costs one pass per node-address Service, which writes nothing when the ingress stays.
    let moved = false;
    const seen = new Set<string>();
    for (const node of this.#options.nodes.list()) {
      const now = this.#addressesNow(node.name);
      const text = now ? `${now.ipv6 ?? ""}|${now.ipv4 ?? ""}` : "";
      seen.add(node.name);
      if (this.#listed.get(node.name) !== text) {
        moved = true;
        this.#listed.set(node.name, text);
      }
    }
    for (const name of this.#listed.keys()) if (!seen.has(name)) this.#listed.delete(name);
    return moved;
  }

  /**
   * Moves the Service off an edge or share group it left, then publishes it on its nodes' addresses; throws
   * {@linkcode WaitingForUser} where it is refused.
   */
  async ensure(report: PassReport, intent: NodeAddressIntent, style: IngressStyle): Promise<ReconcileResult> {
    const { service } = report;
    const options = this.#options;
    if ((await options.move.move(report, intent)).lookAgain) return { requeueAfterMs: options.deletePollMs };
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
    const addressesOf = await this.#addresses(intent.nodes);
    const published = this.#published.get(intent.key);
    const plan = planNodeAddresses({
      service,
      candidates: intent.nodes,
      addressesOf,
      reserved: options.reserved,
      others: this.#others(service),
      style,
      drain: {
        periodMs: options.memberDrainMs,
        now: Date.now(),
        published: published ?? [],
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
      const before = service.ingress.flatMap((i) => (i.ip ? [i.ip] : []));
      const nodesNow = [...plan.nodes, ...draining];
      // The same nodes at other addresses: their servers' addresses changed.
      if (published && published.length === nodesNow.length && published.every((n) => nodesNow.includes(n))) {
        const nodeOf = (ip: string) => nodesNow.find((n) => addressesOf(n)?.ipv4 === ip || addressesOf(n)?.ipv6 === ip);
        report.event(
          "provider",
          "Normal",
          "NodeAddressesChanged",
          `the public addresses of the servers behind its nodes changed (${
            ingressChange(before, addresses, nodeOf)
          }): ` +
            `now served on ${addresses.join(", ")}, before on ${before.join(", ") || "none"} (${described})`,
        );
      } else {
        report.event(
          "provider",
          "Normal",
          "NodeAddressesPublished",
          `served on the addresses of ${described}: ${
            addresses.join(", ")
          } (node-address mode: no Ankra load balancer)`,
        );
      }
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
