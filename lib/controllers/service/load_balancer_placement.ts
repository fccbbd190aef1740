/**
 * Step 4 of a pass over a Service: where a new load balancer goes — its zone, its private network and each node's
 * member addresses (the rule the doctor checks with: the server's leg on the network, for IPv6 else its public
 * address), and whether it is an HA pair — from cached facts of the account. A Service none of whose nodes has an
 * address waits for the user before anything is created; nodes left out of some family are a notice.
 *
 * @module
 */
import type { CreateLoadBalancerInput } from "../../cloud/load_balancers.ts";
import type { SlimService } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { chooseHighAvailability, createLoadBalancerBody } from "../../provider/service/load_balancer_plan.ts";
import { namedNetwork, placementMessage, serviceNetworkMembers } from "../../provider/service/load_balancer_network.ts";
import type { DesiredMember } from "../../provider/service/member_selection.ts";
import {
  chooseZone,
  type LoadBalancerDefaults,
  type LoadBalancerIntent,
  type Notice,
  serviceFamilies,
  tooManyMembersNotice,
} from "../../provider/service/service_plan.ts";
import type { DryRunReport } from "../../runtime/dry_run.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import type { PlacementFacts } from "./placement_facts.ts";
import { DEFAULTS } from "../../defaults.ts";

/** Where a new load balancer goes, and why it is a single VM when it is one. */
export interface Placement {
  /** The create body. */
  create: CreateLoadBalancerInput;
  /** Set when it is a single VM: why (the `SingleNodeLoadBalancer` event). */
  singleReason?: string;
  /** The members: each chosen node's addresses for the load balancer's network. */
  members: readonly DesiredMember[];
  /** Nodes left out of some IP family (`NodeWithoutMemberAddress`) and addresses past the limit (`TooManyMembers`). */
  notices: Notice[];
}

/** The placement's members and the notice about nodes left out of some family. */
interface PlacedMembers {
  /** The network's id. */
  networkId: string;
  /** The members. */
  members: readonly DesiredMember[];
  /** The `NodeWithoutMemberAddress` and `TooManyMembers` notices (no message when nothing is left out). */
  notices: Notice[];
}

/** The second look after a failed decision reads the networks again (a node's server may have joined since). */
const NETWORK_FRESH_MS = 0;

/** What the placement uses. */
interface LoadBalancerPlacementOptions {
  /** Cached networks and zone capabilities. */
  facts: PlacementFacts;
  /** Defaults for new load balancers. */
  defaults: LoadBalancerDefaults;
  /** Set in a dry run. */
  dryRun?: DryRunReport;
}

/** Places new load balancers. */
export class LoadBalancerPlacement {
  readonly #facts: LoadBalancerPlacementOptions["facts"];
  readonly #defaults: LoadBalancerPlacementOptions["defaults"];
  readonly #dryRun: LoadBalancerPlacementOptions["dryRun"];
  /**
   * The nodes each Service's last decision left out of some family, by Service key: a node newly left out is looked
   * up again from a fresh read (it may have just joined); nodes that stay out (IPv6-only servers in a dual-stack
   * Service) are not, so a steady cluster reads nothing more.
   */
  readonly #leftOut = new Map<string, string>();

  /** Starts with nothing left out: a first decision that leaves a node out is made again from a fresh read. */
  constructor(options: LoadBalancerPlacementOptions) {
    this.#facts = options.facts;
    this.#defaults = options.defaults;
    this.#dryRun = options.dryRun;
  }

  /** Forgets what the Service's last decision left out (its load balancer is going). */
  forget(key: string): void {
    this.#leftOut.delete(key);
  }

  /** Zone, network and HA of a new load balancer; undefined while nodes are still being initialised. */
  async place(service: SlimService, intent: LoadBalancerIntent): Promise<Placement | undefined> {
    if (intent.nodes.length === 0 && intent.pendingNodes > 0 && !intent.settings.zone && !this.#defaults.zone) {
      log.info(2, "waiting for the nodes to be initialised before placing the load balancer", { service: intent.key });
      // A dry run initialises no node, so it says what the real run would do next.
      this.#dryRun?.note(
        "service",
        intent.key,
        `would create load balancer ${intent.loadBalancerName} for Service ${intent.key} once its ` +
          `${intent.pendingNodes} node(s) are initialised (its zone and network come from them)`,
      );
      return undefined;
    }
    const zone = chooseZone(intent, this.#defaults.zone);
    if (!zone.ok) throw new WaitingForUser("SyncLoadBalancerFailed", zone.problem, { condition: "NoZone" });
    const network = await this.onNetwork(service, intent);
    const annotated = intent.settings.highAvailability;
    const capabilities = this.#defaults.highAvailability === "auto" && annotated === undefined
      ? await this.#facts.capabilities(zone.value)
      : undefined;
    const ha = chooseHighAvailability({
      mode: this.#defaults.highAvailability,
      zone: zone.value,
      capabilities,
      annotated,
    });
    return {
      create: createLoadBalancerBody(intent, { zone: zone.value, networkId: network.networkId, pair: ha.pair }),
      singleReason: ha.singleReason,
      members: network.members,
      notices: network.notices,
    };
  }

  /**
   * The load balancer's network and the members ({@linkcode serviceNetworkMembers}, the rule the doctor checks
   * with); when no node has an address the Service waits for the user, before anything is created or changed. The
   * servers' public IPv6 addresses are read only when an IPv6 member lacks a leg. A decision that failed, or left out
   * a node the last one did not, is made once more from a fresh read: a server attached (or created) since the cached
   * read is seen.
   */
  async onNetwork(
    service: SlimService,
    intent: LoadBalancerIntent,
    existingNetworkId?: string,
  ): Promise<PlacedMembers> {
    const defaultNetworkId = this.#defaults.networkId;
    const families = serviceFamilies(service);
    const named = existingNetworkId ?? namedNetwork(intent.settings.networkId, defaultNetworkId)?.id;
    const read = async (maxAgeMs?: number) => {
      if (!named) return await this.#facts.networks({ maxAgeMs });
      const network = await this.#facts.network(named, { maxAgeMs });
      return network ? [network] : [];
    };
    const decide = async (maxAgeMs?: number, withPublic = false) => {
      const publicIpv6 = withPublic ? await this.#facts.publicIpv6({ maxAgeMs }) : undefined;
      return serviceNetworkMembers(intent, families, {
        networks: await read(maxAgeMs),
        defaultNetworkId,
        existingNetworkId,
        publicIpv6: publicIpv6 ? (id) => publicIpv6.get(id) : undefined,
      });
    };
    const incomplete = (placed: Awaited<ReturnType<typeof decide>>) => !placed.ok || placed.leftOut !== undefined;
    const lacksIpv6 = (placed: Awaited<ReturnType<typeof decide>>) =>
      placed.ok ? placed.leftOut?.nodes.some((n) => n.families.includes(6)) : placed.missing.length > 0;
    let placed = await decide();
    if (families.includes(6) && lacksIpv6(placed)) placed = await decide(undefined, true);
    const leftOut = (decided: typeof placed) => (decided.ok ? decided.leftOut?.nodes.map((n) => n.node).join() : "");
    const seenBefore = placed.ok && leftOut(placed) === this.#leftOut.get(intent.key);
    if (incomplete(placed) && !seenBefore) placed = await decide(NETWORK_FRESH_MS, families.includes(6));
    if (placed.ok && placed.leftOut) this.#leftOut.set(intent.key, leftOut(placed)!);
    else this.#leftOut.delete(intent.key);
    if (!placed.ok) {
      throw new WaitingForUser("SyncLoadBalancerFailed", placementMessage(placed), {
        recheckAfterMs: DEFAULTS.networkRecheckMs,
        condition: placed.missing.length > 0 ? "NoMemberAddress" : "NoNetwork",
      });
    }
    return {
      networkId: placed.networkId,
      members: placed.members,
      notices: [
        {
          topic: "member-addresses",
          reason: "NodeWithoutMemberAddress",
          message: placed.leftOut ? placementMessage(placed.leftOut) : undefined,
        },
        tooManyMembersNotice(placed),
      ],
    };
  }
}
