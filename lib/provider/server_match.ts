/**
 * Which Ankra Cloud server a Node is — one rule for the node controller, the service controller and the doctor:
 *
 * - an Ankra providerID (`ankracloud://<zone>/<server-id>`) names the server by id;
 * - a Node without a providerID is found by hostname — its name, then the first DNS label of an FQDN name
 *   ({@linkcode hostnameCandidates}) — where exactly one server must have it (two make it ambiguous);
 * - a Node of another provider (another providerID scheme) is left alone; a malformed Ankra providerID matches
 *   nothing.
 *
 * Pure: the servers come through a {@linkcode ServerLookup} (a list, or the controller's shared cloud view).
 *
 * @module
 */
import { classifyProviderId, parseProviderId } from "./provider_id.ts";

/** Hostnames to look a node up by: its name, then the first DNS label of an FQDN name. */
export function hostnameCandidates(nodeName: string): string[] {
  const dot = nodeName.indexOf(".");
  if (dot > 0) return [nodeName, nodeName.slice(0, dot)];
  return [nodeName];
}

/** What matching needs of a server. */
interface MatchableServer {
  /** The id an Ankra providerID (`ankracloud://<zone>/<server-id>`) names. */
  id: string;
  /** Compared exactly with a Node's name, then its first DNS label ({@linkcode hostnameCandidates}). */
  hostname: string;
  /** Not matched on; callers build the Node's providerID and zone label from it. */
  zone: string;
}

/** Where the servers are looked up. */
interface ServerLookup<S extends MatchableServer> {
  /** The server with `id`, if known. */
  byId(id: string): S | undefined;
  /** The servers whose hostname is exactly `hostname`. */
  byHostname(hostname: string): S[];
}

/** How one Node relates to the account's servers. */
export type ServerMatch<S extends MatchableServer> =
  | { node: string; kind: "matched"; server: S; by: "providerID" | "hostname" }
  | { node: string; kind: "foreign"; providerID: string }
  | { node: string; kind: "malformed"; providerID: string }
  | { node: string; kind: "missing"; why: string; serverId?: string }
  | { node: string; kind: "ambiguous"; hostname: string; servers: S[] };

/** A lookup over a whole `list_servers` answer. */
export function serverLookup<S extends MatchableServer>(servers: S[]): ServerLookup<S> {
  const byId = new Map(servers.map((s) => [s.id, s]));
  const byHostname = new Map<string, S[]>();
  for (const server of servers) byHostname.set(server.hostname, [...(byHostname.get(server.hostname) ?? []), server]);
  return { byId: (id) => byId.get(id), byHostname: (hostname) => byHostname.get(hostname) ?? [] };
}

/** The server id an Ankra providerID names; undefined without one (or for another provider's). */
export function providerServerId(node: { providerID?: string }): string | undefined {
  return node.providerID ? parseProviderId(node.providerID)?.serverId : undefined;
}

/** Finds the server of `node` (see the module documentation). */
export function matchServer<S extends MatchableServer>(
  node: { name: string; providerID?: string },
  lookup: ServerLookup<S>,
): ServerMatch<S> {
  const kind = classifyProviderId(node.providerID);
  if (kind === "foreign") return { node: node.name, kind: "foreign", providerID: node.providerID! };
  if (kind === "malformed") return { node: node.name, kind: "malformed", providerID: node.providerID! };
  if (kind === "ours") {
    const id = providerServerId(node)!;
    const server = lookup.byId(id);
    return server ? { node: node.name, kind: "matched", server, by: "providerID" } : {
      node: node.name,
      kind: "missing",
      serverId: id,
      why: `no server has id ${id} (spec.providerID ${node.providerID})`,
    };
  }
  const candidates = hostnameCandidates(node.name);
  for (const hostname of candidates) {
    const found = lookup.byHostname(hostname);
    if (found.length === 1) return { node: node.name, kind: "matched", server: found[0], by: "hostname" };
    if (found.length > 1) return { node: node.name, kind: "ambiguous", hostname, servers: found };
  }
  return { node: node.name, kind: "missing", why: `no server has hostname ${candidates.join(" or ")}` };
}
