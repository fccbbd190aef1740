/**
 * Which Ankra Cloud server each Node is, by the controller's own rule: an Ankra providerID
 * (`ankracloud://<zone>/<server-id>`) names the server by id; a node without a providerID is found by hostname —
 * its name, then the first DNS label of an FQDN name ({@linkcode hostnameCandidates}) — where exactly one server must
 * have it. Nodes of other providers (another providerID scheme) are left alone, as the controller leaves them.
 *
 * The finding: every node matched to exactly one server, and no server claimed by two nodes.
 *
 * @module
 */
import type { Server } from "../cloud/client.ts";
import type { SlimNode } from "../kube/slim.ts";
import { hostnameCandidates } from "../provider/node_plan.ts";
import { classifyProviderId, parseProviderId } from "../provider/provider_id.ts";
import { type CheckName, fail, type Finding, nameList, pass, plural, skip, warn } from "./finding.ts";

/** The check of node matching. */
export const NODES_MATCHED: CheckName = { id: "nodes-matched", title: "Every node matched to one Ankra server" };

/** How one node relates to the account's servers. */
export type NodeMatch =
  | { node: string; kind: "matched"; server: Server; by: "providerID" | "hostname" }
  | { node: string; kind: "foreign"; providerID: string }
  | { node: string; kind: "malformed"; providerID: string }
  | { node: string; kind: "missing"; why: string }
  | { node: string; kind: "ambiguous"; hostname: string; servers: Server[] };

/** Finds the server of each node in `servers` (the whole `list_servers` answer). */
export function matchNodes(nodes: Pick<SlimNode, "name" | "providerID">[], servers: Server[]): NodeMatch[] {
  const byId = new Map(servers.map((s) => [s.id, s]));
  const byHostname = new Map<string, Server[]>();
  for (const server of servers) byHostname.set(server.hostname, [...(byHostname.get(server.hostname) ?? []), server]);
  return [...nodes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((node): NodeMatch => {
    const kind = classifyProviderId(node.providerID);
    if (kind === "foreign") return { node: node.name, kind: "foreign", providerID: node.providerID! };
    if (kind === "malformed") return { node: node.name, kind: "malformed", providerID: node.providerID! };
    if (kind === "ours") {
      const id = parseProviderId(node.providerID!)!.serverId;
      const server = byId.get(id);
      return server
        ? { node: node.name, kind: "matched", server, by: "providerID" }
        : { node: node.name, kind: "missing", why: `no server has id ${id} (spec.providerID ${node.providerID})` };
    }
    const candidates = hostnameCandidates(node.name);
    for (const hostname of candidates) {
      const found = byHostname.get(hostname) ?? [];
      if (found.length === 1) return { node: node.name, kind: "matched", server: found[0], by: "hostname" };
      if (found.length > 1) return { node: node.name, kind: "ambiguous", hostname, servers: found };
    }
    return { node: node.name, kind: "missing", why: `no server has hostname ${candidates.join(" or ")}` };
  });
}

/** The servers of the matched nodes. */
export function matchedServers(matches: NodeMatch[]): Server[] {
  const servers = new Map<string, Server>();
  for (const match of matches) if (match.kind === "matched") servers.set(match.server.id, match.server);
  return [...servers.values()];
}

/** Servers claimed by more than one node: server id → node names. */
export function sharedServers(matches: NodeMatch[]): Map<string, string[]> {
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
  const missing = of("missing");
  const ambiguous = of("ambiguous");
  const malformed = of("malformed");
  const foreign = of("foreign");
  const shared = sharedServers(matches);
  const problems: string[] = [];
  const fixes: string[] = [];
  if (missing.length > 0) {
    problems.push(`not matched: ${nameList(missing.map((m) => `${m.node} (${m.why})`))}`);
    fixes.push(
      "name each node after its server's hostname (or an FQDN whose first label is it), or start its kubelet " +
        "with --provider-id=ankracloud://<zone>/<server-id>",
    );
  }
  if (ambiguous.length > 0) {
    problems.push(
      `ambiguous: ${
        nameList(
          ambiguous.map((m) =>
            `${m.node} (${m.servers.length} servers have hostname ${m.hostname}: ${
              m.servers.map((s) => `${s.zone}/${s.id}`).join(", ")
            })`
          ),
        )
      }`,
    );
    fixes.push(
      "give the servers distinct hostnames, or start each such node's kubelet with " +
        "--provider-id=ankracloud://<zone>/<server-id>",
    );
  }
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
