/**
 * Which node addresses become a Service's load balancer members. A backend holds at most 256 members (the API's
 * limit); below that every eligible node's address of each of the Service's IP families is a member. Above it, each
 * Service keeps a stable subset:
 *
 * - **both families**: the 256 places are shared between the Service's families (128 + 128 for dual-stack, more for
 *   one family when the other has fewer candidates), so a dual-stack Service never loses a family;
 * - **spread across zones**: each zone gets places in proportion to its candidate nodes (largest remainder);
 * - **different Services prefer different nodes**: within a zone nodes are ranked by rendezvous hashing of
 *   (Service, node), so the load of many Services spreads over all nodes;
 * - **minimal churn**: a node that joins or leaves moves at most a place or two, because a node's rank does not depend
 *   on the other nodes.
 *
 * Pure functions.
 *
 * @module
 */
import { ZONE_LABEL } from "../../ankra_names.ts";
import { parseIp } from "../../ip_address.ts";
import type { SlimNode } from "../../kube/slim.ts";
import { parseProviderId } from "../provider_id.ts";
import { sha256 } from "../sha256.ts";

/** Members a backend may hold (`replace_load_balancer_members` maxItems). */
export const MAX_MEMBERS = 256;

/** A member to send: the node it stands for and its address. */
export interface DesiredMember {
  /** Name of the Node the member stands for; orders each family and, with `address`, names the member. */
  node: string;
  /** Address (canonical text). */
  address: string;
}

/** The members chosen for a Service, and how many candidate addresses were left out. */
export interface MemberSelection {
  /** Members, per family (IPv6 first), each family ordered by node name. */
  readonly members: readonly DesiredMember[];
  /** Candidate addresses in all (every eligible node's address of every family). */
  candidates: number;
}

/** The zone of a node: the `topology.kubernetes.io/zone` label, else the zone of its providerID, else "". */
export function nodeZone(node: SlimNode): string {
  return node.labels[ZONE_LABEL] ?? parseProviderId(node.providerID ?? "")?.zone ?? "";
}

/**
 * The address of `node` a member of `family` uses: its first InternalIP of that family, else its first ExternalIP.
 */
export function memberAddress(node: SlimNode, family: 4 | 6): string | undefined {
  const pick = (type: string) =>
    node.addresses.filter((a) => a.type === type).map((a) => parseIp(a.address)).find((ip) => ip?.family === family);
  return (pick("InternalIP") ?? pick("ExternalIP"))?.text;
}

/** The rendezvous score of a node for a Service: the first 48 bits of SHA-256(service NUL node). */
function rendezvousScore(serviceKey: string, nodeName: string): number {
  const digest = sha256(new TextEncoder().encode(`${serviceKey}\u0000${nodeName}`));
  return digest[0] * 2 ** 40 + digest[1] * 2 ** 32 + digest[2] * 2 ** 24 + digest[3] * 2 ** 16 + digest[4] * 256 +
    digest[5];
}

/** Splits `places` over groups in proportion to their sizes (largest remainder; ties by group order). */
export function proportionalShares(sizes: number[], places: number): number[] {
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total <= places) return [...sizes];
  // Integer arithmetic: equal remainders must compare equal, so ties go by group order.
  const shares = sizes.map((size) => Math.floor((size * places) / total));
  let left = places - shares.reduce((a, b) => a + b, 0);
  const order = sizes.map((size, index) => ({ index, remainder: (size * places) % total }))
    .sort((a, b) => b.remainder - a.remainder || a.index - b.index);
  for (const { index } of order) {
    if (left === 0) break;
    if (shares[index] < sizes[index]) {
      shares[index]++;
      left--;
    }
  }
  return shares;
}

/** Places per family: an equal split of `limit`, with what one family cannot use given to the others. */
function familyShares(counts: number[], limit: number): number[] {
  const shares = counts.map(() => 0);
  let left = limit;
  let open = counts.map((_, i) => i).filter((i) => counts[i] > 0);
  while (left > 0 && open.length > 0) {
    const each = Math.max(1, Math.floor(left / open.length));
    for (const i of open) {
      const take = Math.min(each, counts[i] - shares[i], left);
      shares[i] += take;
      left -= take;
    }
    open = open.filter((i) => shares[i] < counts[i]);
  }
  return shares;
}

/** Options of {@linkcode selectMembers}. */
interface SelectMembersOptions {
  /** `<namespace>/<name>` of the Service. */
  serviceKey: string;
  /** Most members per backend (default {@linkcode MAX_MEMBERS}). */
  limit?: number;
  /**
   * The address of a node for a family. Default {@linkcode memberAddress} (the node's reported addresses); on a
   * private network the addresses of the nodes' servers on it (`placeOnNetwork` in `load_balancer_network.ts`).
   */
  address?: (node: SlimNode, family: 4 | 6) => string | undefined;
}

/**
 * The members of a Service's backends: for each family in `families` (IPv6 first), the chosen nodes' addresses.
 * `nodes` are the eligible nodes matched to Ankra servers.
 */
export function selectMembers(
  nodes: readonly SlimNode[],
  families: readonly (4 | 6)[],
  options: SelectMembersOptions,
): MemberSelection {
  const limit = options.limit ?? MAX_MEMBERS;
  const addressOf = options.address ?? memberAddress;
  const byName = [...nodes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const perFamily = families.map((family) =>
    byName.flatMap((node) => {
      const address = addressOf(node, family);
      return address ? [{ node, address }] : [];
    })
  );
  const candidates = perFamily.reduce((sum, list) => sum + list.length, 0);
  if (candidates <= limit) {
    return { members: perFamily.flat().map(({ node, address }) => ({ node: node.name, address })), candidates };
  }
  const scores = new Map(byName.map((node) => [node.name, rendezvousScore(options.serviceKey, node.name)]));
  const shares = familyShares(perFamily.map((list) => list.length), limit);
  const members: DesiredMember[] = [];
  perFamily.forEach((list, index) => {
    const zones = new Map<string, typeof list>();
    for (const entry of list) {
      const zone = nodeZone(entry.node);
      zones.set(zone, [...(zones.get(zone) ?? []), entry]);
    }
    const zoneNames = [...zones.keys()].sort();
    const zoneShares = proportionalShares(zoneNames.map((z) => zones.get(z)!.length), shares[index]);
    const chosen = zoneNames.flatMap((zone, i) =>
      [...zones.get(zone)!].sort((a, b) => scores.get(b.node.name)! - scores.get(a.node.name)!)
        .slice(0, zoneShares[i])
    );
    chosen.sort((a, b) => (a.node.name < b.node.name ? -1 : a.node.name > b.node.name ? 1 : 0));
    members.push(...chosen.map(({ node, address }) => ({ node: node.name, address })));
  });
  return { members, candidates };
}
