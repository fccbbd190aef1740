/**
 * The checks of where load balancers go, made with the controller's own rules (so the doctor cannot say ✓ where
 * the controller fails):
 *
 * - **nodes matched**: every Node is one Ankra server ({@linkcode matchServer}, the node controller's rule), and no
 *   server is claimed by two Nodes;
 * - **the private network**: the network new load balancers sit on and each member Node's addresses for both IP
 *   families ({@linkcode placeOnNetwork}, the service controller's rule, over the Nodes that become members:
 *   {@linkcode eligibleNodes} matched to servers; a server's leg there, for IPv6 else its public IPv6 address). A Node
 *   that serves only one family is a warning (Services of the other family skip it). With ANKRA_CLOUD_NETWORK_ID set,
 *   that network must also reach ANKRA_CLOUD_ZONE. Membership comes from `get_network` (the servers' legs) and
 *   `list_servers`, so it is right before the controller has set any node address;
 * - **zones**: what each zone a load balancer may land in (the matched servers' zones and ANKRA_CLOUD_ZONE) can
 *   hold, with ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY decided by {@linkcode chooseHighAvailability}: a zone
 *   without compute holds no load balancer; `auto` takes a single VM where a pair is impossible (a warning: no
 *   failover), `true` asks for a pair (refused where the zone cannot place one), `false` asks for single VMs.
 *
 * @module
 */
import { ANNOTATION_PREFIX } from "../ankra_names.ts";
import type { Network, Server, ZoneCapabilities } from "../cloud/client.ts";
import type { SlimNode } from "../kube/slim.ts";
import { chooseHighAvailability } from "../provider/service/load_balancer_plan.ts";
import {
  type NetworkPlacement,
  type NodeOnServer,
  placeOnNetwork,
  serverNetworks,
} from "../provider/service/load_balancer_network.ts";
import { matchServer, serverLookup, type ServerMatch } from "../provider/server_match.ts";
import type { HighAvailabilityMode } from "../provider/service/service_plan.ts";
import { eligibleNodes } from "../provider/service/service_nodes.ts";
import type { Fetched } from "./fetched.ts";
import {
  type CheckName,
  fail,
  type Finding,
  type FindingStatus,
  nameList,
  pass,
  plural,
  skip,
  warn,
} from "./report.ts";

/** The check of node matching. */
export const NODES_MATCHED: CheckName = { id: "nodes-matched", title: "Every node matched to one Ankra server" };
/** The check of the private network. */
export const PRIVATE_NETWORK: CheckName = { id: "private-network", title: "One private network for load balancers" };
/** The check of zone capabilities. */
export const ZONE_CAPABILITIES: CheckName = {
  id: "zone-capabilities",
  title: "Zones can hold load balancers (HA pair or single VM)",
};

/** How one node relates to the account's servers. */
export type NodeMatch = ServerMatch<Server>;

/** Finds the server of each node (sorted by name) in `servers` (the whole `list_servers` answer). */
export function matchNodes(nodes: Pick<SlimNode, "name" | "providerID">[], servers: Server[]): NodeMatch[] {
  const lookup = serverLookup(servers);
  return [...nodes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((node) => matchServer(node, lookup));
}

/** The servers of the matched nodes. */
export function matchedServers(matches: NodeMatch[]): Server[] {
  const servers = new Map<string, Server>();
  for (const match of matches) if (match.kind === "matched") servers.set(match.server.id, match.server);
  return [...servers.values()];
}

/** The Nodes that become load balancer members (eligible and matched to a server), with their servers. */
export function memberNodes(nodes: SlimNode[], servers: Server[]): NodeOnServer[] {
  return matchNodes(eligibleNodes(nodes), servers)
    .flatMap((m) => {
      if (m.kind !== "matched") return [];
      const ipv6 = m.server.public_ipv6;
      return [
        ipv6 ? { node: m.node, serverId: m.server.id, publicIpv6: ipv6 } : { node: m.node, serverId: m.server.id },
      ];
    });
}

/** Servers claimed by more than one node: server id → node names. */
function sharedServers(matches: NodeMatch[]): Map<string, string[]> {
  const claims = new Map<string, string[]>();
  for (const match of matches) {
    if (match.kind === "matched") claims.set(match.server.id, [...(claims.get(match.server.id) ?? []), match.node]);
  }
  return new Map([...claims].filter(([, nodes]) => nodes.length > 1));
}

/** The finding of node matching. */
export function nodesMatchedFinding(matches: NodeMatch[]): Finding {
  if (matches.length === 0) return skip(NODES_MATCHED, "skipped: the cluster has no Nodes yet");
  const of = <K extends NodeMatch["kind"]>(kind: K) =>
    matches.filter((m): m is Extract<NodeMatch, { kind: K }> => m.kind === kind);
  const matched = of("matched");
  const foreign = of("foreign");
  const shared = sharedServers(matches);
  const problems: string[] = [];
  const fixes: string[] = [];
  const missing = of("missing");
  if (missing.length > 0) {
    problems.push(`not matched: ${nameList(missing.map((m) => `${m.node} (${m.why})`))}`);
    fixes.push(
      "name each node after its server's hostname (or an FQDN whose first label is it), or start its kubelet " +
        "with --provider-id=ankracloud://<zone>/<server-id>",
    );
  }
  const ambiguous = of("ambiguous");
  if (ambiguous.length > 0) {
    const each = ambiguous.map((m) =>
      `${m.node} (${m.servers.length} servers have hostname ${m.hostname}: ${
        m.servers.map((s) => `${s.zone}/${s.id}`).join(", ")
      })`
    );
    problems.push(`ambiguous: ${nameList(each)}`);
    fixes.push(
      "give the servers distinct hostnames, or start each such node's kubelet with " +
        "--provider-id=ankracloud://<zone>/<server-id>",
    );
  }
  const malformed = of("malformed");
  if (malformed.length > 0) {
    problems.push(`malformed providerID: ${nameList(malformed.map((m) => `${m.node} (${m.providerID})`))}`);
    fixes.push(
      "a providerID is ankracloud://<zone>/<server-id>; it cannot be changed on a Node: delete the Node and " +
        "restart its kubelet with the right --provider-id (or none)",
    );
  }
  if (shared.size > 0) {
    problems.push(
      `one server for several nodes: ${nameList([...shared].map(([id, nodes]) => `${id} (${nodes.join(", ")})`))}`,
    );
    fixes.push("each node is one server: delete the stale Node objects, or fix the nodes' names or providerIDs");
  }
  const counted = `${matched.length} of ${plural(matches.length, "node")} matched`;
  if (problems.length > 0) {
    if (foreign.length > 0) problems.push(`other providers: ${nameList(foreign.map((m) => m.node))}`);
    return fail(NODES_MATCHED, `${counted}; ${problems.join("; ")}`, fixes.join("\n"));
  }
  if (foreign.length > 0) {
    return warn(
      NODES_MATCHED,
      `${counted}; ${plural(foreign.length, "node")} of other providers, left alone: ${
        nameList(foreign.map((m) => `${m.node} (${m.providerID})`))
      }`,
      "if these are Ankra servers, another cloud controller set their providerID: disable it, then delete each " +
        "such Node and restart its kubelet with --cloud-provider=external so it registers again",
    );
  }
  const byHostname = matched.filter((m) => m.by === "hostname").length;
  return pass(
    NODES_MATCHED,
    `all ${plural(matches.length, "node")} matched (${matched.length - byHostname} by providerID, ${byHostname} by ` +
      "hostname)",
  );
}

function describe(network: Pick<Network, "id" | "name" | "cidr">): string {
  return `${network.id} (${network.name}, ${network.cidr})`;
}

/** What the network check reads. */
interface NetworkCheckInput {
  /** ANKRA_CLOUD_NETWORK_ID. */
  configuredId?: string;
  /** `get_network` of it. */
  configured?: Fetched<Network>;
  /** Every network with its members (when none is configured). */
  networks?: Fetched<Network[]>;
  /** The Nodes that become members, with their servers ({@linkcode memberNodes}). */
  nodes: NodeOnServer[];
  /** ANKRA_CLOUD_ZONE. */
  zone?: string;
}

/** `worker-1 10.0.0.5 fd64:1:0:1::5, worker-2 2001:db8::6`: each member Node's IPv4, then IPv6 address. */
function memberList(placement: Extract<NetworkPlacement, { ok: true }>): string {
  return nameList(
    [...placement.addresses].sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([n, a]) => `${n} ${[a[4], a[6]].filter(Boolean).join(" ")}`),
    5,
  );
}

/** A placement that serves: pass, or a warning naming the Nodes that serve only one family. */
function placedFinding(placement: Extract<NetworkPlacement, { ok: true }>, result: string): Finding {
  const text = `${result}; members: ${memberList(placement)}`;
  if (!placement.leftOut) return pass(PRIVATE_NETWORK, text);
  return warn(PRIVATE_NETWORK, `${text}; but ${placement.leftOut.problem}`, placement.leftOut.fix);
}

/** The finding of the private network: the controller's decision ({@linkcode placeOnNetwork}) in words. */
export function networkFinding(input: NetworkCheckInput): Finding {
  if (input.configuredId) return configuredNetworkFinding(input.configuredId, input);
  if (input.nodes.length === 0) return skip(PRIVATE_NETWORK, "skipped: no node is matched to a server yet");
  if (!input.networks) return skip(PRIVATE_NETWORK, "skipped: the networks were not read");
  if (!input.networks.ok) {
    return skip(PRIVATE_NETWORK, `skipped: reading the networks failed: ${input.networks.failure.message}`);
  }
  const networks = input.networks.value;
  const placement = placeOnNetwork({ nodes: input.nodes, networks });
  if (!placement.ok) {
    const legs = serverNetworks(networks);
    const where = placement.missing.length > 0 ? [] : input.nodes.map((n) => {
      const ids = [...(legs.get(n.serverId) ?? [])].sort();
      return `${n.node}: ${ids.length > 0 ? ids.join("+") : "none"}`;
    });
    return fail(PRIVATE_NETWORK, `${placement.problem}${where.length ? ` (${nameList(where)})` : ""}`, placement.fix);
  }
  const network = networks.find((n) => n.id === placement.networkId)!;
  const count = input.nodes.length;
  return placedFinding(
    placement,
    `${count === 1 ? "the member node's server is on" : `the ${count} member nodes' servers share`} ` +
      `${describe(network)}, which new load balancers will use`,
  );
}

function configuredNetworkFinding(id: string, input: NetworkCheckInput): Finding {
  const configured = input.configured;
  if (!configured) return skip(PRIVATE_NETWORK, `skipped: ANKRA_CLOUD_NETWORK_ID ${id} was not read`);
  if (!configured.ok) {
    if (configured.failure.kind === "not_found") {
      return fail(
        PRIVATE_NETWORK,
        `ANKRA_CLOUD_NETWORK_ID ${id} names no network of the account (HTTP 404 on get_network)`,
        "set ANKRA_CLOUD_NETWORK_ID to the id of the private network the nodes share (portal: Networks), or " +
          "unset it to let the controller use the one network every node shares",
      );
    }
    return skip(PRIVATE_NETWORK, `skipped: get_network ${id} failed: ${configured.failure.message}`);
  }
  const network = configured.value;
  if (input.zone && network.zones.length > 0 && !network.zones.includes(input.zone)) {
    return fail(
      PRIVATE_NETWORK,
      `ANKRA_CLOUD_NETWORK_ID ${describe(network)} does not reach ANKRA_CLOUD_ZONE ${input.zone} (it spans ${
        network.zones.join(", ")
      }): creates would be refused`,
      "choose a network and a zone that go together: set ANKRA_CLOUD_ZONE to one of the network's zones, or " +
        "ANKRA_CLOUD_NETWORK_ID to a network in that zone",
    );
  }
  const placement = placeOnNetwork({
    nodes: input.nodes,
    networks: [network],
    named: { id, source: "ANKRA_CLOUD_NETWORK_ID" },
  });
  if (!placement.ok) return fail(PRIVATE_NETWORK, placement.problem, placement.fix);
  const count = input.nodes.length;
  if (count === 0) return pass(PRIVATE_NETWORK, `ANKRA_CLOUD_NETWORK_ID ${describe(network)} exists`);
  return placedFinding(
    placement,
    `ANKRA_CLOUD_NETWORK_ID ${describe(network)} exists and serves ${plural(count, "member node")}`,
  );
}

/** A zone to check and why. */
interface ZoneToCheck {
  /** The zone's API name (e.g. `de-fsn1`), as in ANKRA_CLOUD_ZONE and the `topology.kubernetes.io/zone` label. */
  name: string;
  /** Where it comes from. */
  source: "nodes" | "ANKRA_CLOUD_ZONE";
}

/** The zones to check: ANKRA_CLOUD_ZONE first, then the nodes' zones by name. */
export function zonesToCheck(nodeZones: Iterable<string>, configuredZone?: string): ZoneToCheck[] {
  const zones: ZoneToCheck[] = configuredZone ? [{ name: configuredZone, source: "ANKRA_CLOUD_ZONE" }] : [];
  for (const name of [...new Set(nodeZones)].sort()) {
    if (name && name !== configuredZone) zones.push({ name, source: "nodes" });
  }
  return zones;
}

interface ZoneVerdict {
  status: FindingStatus;
  text: string;
  fix?: string;
}

const RANK: Record<FindingStatus, number> = { pass: 0, skip: 1, warn: 2, fail: 3 };

function zoneVerdict(
  zone: ZoneToCheck,
  answer: Fetched<ZoneCapabilities> | undefined,
  mode: HighAvailabilityMode,
): ZoneVerdict {
  const name = zone.name;
  if (!answer) return { status: "skip", text: `${name}: not read` };
  if (!answer.ok) {
    if (answer.failure.kind === "not_found" && zone.source === "ANKRA_CLOUD_ZONE") {
      return {
        status: "fail",
        text: `ANKRA_CLOUD_ZONE ${name} is not a zone of the account`,
        fix: "set ANKRA_CLOUD_ZONE to one of the account's zones (e.g. de-fsn1), or unset it to use the zone " +
          "most of a Service's nodes are in",
      };
    }
    const assumed = chooseHighAvailability({ mode, zone: name, capabilities: "unknown" });
    return {
      status: "warn",
      text: `${name}: capabilities unknown (${answer.failure.message}); the controller then assumes ${
        assumed.pair ? "an HA pair" : "a single VM"
      }`,
      fix: "run the doctor again; if it persists, set ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY=false to ask " +
        "for single VMs explicitly",
    };
  }
  const capabilities = answer.value;
  const reasons = capabilities.reasons ?? {};
  if (!capabilities.features.compute) {
    return {
      status: "fail",
      text: `${name}: no load balancer can be placed (${reasons.compute ?? "the zone has no compute node"})`,
      fix: zone.source === "ANKRA_CLOUD_ZONE"
        ? "set ANKRA_CLOUD_ZONE to a zone with compute nodes"
        : `set ANKRA_CLOUD_ZONE (or the ${ANNOTATION_PREFIX}zone annotation) to a zone with compute nodes`,
    };
  }
  const choice = chooseHighAvailability({ mode, zone: name, capabilities });
  const why = reasons.load_balancer_ha ?? "the zone cannot place a pair";
  if (choice.pair && capabilities.features.load_balancer_ha) return { status: "pass", text: `${name}: HA pair` };
  if (choice.pair) {
    return {
      status: "fail",
      text: `${name}: ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY=true asks for a pair, which the zone cannot ` +
        `place (${why}): creates there are refused`,
      fix: "set ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY=auto (a single VM where a pair is impossible) or " +
        "false, or place the load balancers in a zone with two compute nodes",
    };
  }
  if (mode === "false") {
    return {
      status: "pass",
      text: `${name}: single VM (as configured${capabilities.features.load_balancer_ha ? "; a pair is possible" : ""})`,
    };
  }
  return {
    status: "warn",
    text: `${name}: single VM only, no failover (${why})`,
    fix: "a single-VM load balancer has no failover; for a pair the zone needs two compute nodes. To accept " +
      "single VMs, set ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY=false (this check then passes)",
  };
}

/** The finding of zone capabilities: the worst zone decides the status; every zone is named. */
export function zoneCapabilitiesFinding(
  zones: ZoneToCheck[],
  capabilities: Record<string, Fetched<ZoneCapabilities>>,
  mode: HighAvailabilityMode,
): Finding {
  if (zones.length === 0) {
    return skip(ZONE_CAPABILITIES, "skipped: no zone is known (no node is matched and ANKRA_CLOUD_ZONE is unset)");
  }
  const verdicts = zones.map((zone) => zoneVerdict(zone, capabilities[zone.name], mode));
  const worst = verdicts.reduce((a, b) => (RANK[b.status] > RANK[a.status] ? b : a));
  const result = verdicts.map((v) => v.text).join("; ");
  const fixes = [...new Set(verdicts.filter((v) => v.status === worst.status && v.fix).map((v) => v.fix!))];
  switch (worst.status) {
    case "fail":
      return fail(ZONE_CAPABILITIES, result, fixes.join("\n"));
    case "warn":
      return warn(ZONE_CAPABILITIES, result, fixes.join("\n"));
    case "skip":
      return skip(ZONE_CAPABILITIES, `skipped: ${result}`);
    default:
      return pass(ZONE_CAPABILITIES, result);
  }
}
