/**
 * Ankra provider IDs: `ankracloud://<zone>/<server-id>`, parsed exactly as the Go controller does (no trimming,
 * case-sensitive scheme, zone and id non-empty, no further `/`), plus a test for providerIDs of other providers
 * (another scheme), which this controller leaves alone.
 *
 * @module
 */

/** The providerID scheme and `--cloud-provider` name. */
const PROVIDER_NAME = "ankracloud";
const PREFIX = `${PROVIDER_NAME}://`;

/** A parsed providerID. */
interface ProviderId {
  /** Zone, e.g. `de-fsn1`. */
  zone: string;
  /** Ankra Cloud server id: non-empty, no `/`. */
  serverId: string;
}

/** Parses an Ankra providerID; `undefined` when it is not one. */
export function parseProviderId(providerID: string): ProviderId | undefined {
  if (!providerID.startsWith(PREFIX)) return undefined;
  const rest = providerID.slice(PREFIX.length);
  const slash = rest.indexOf("/");
  if (slash <= 0) return undefined;
  const zone = rest.slice(0, slash);
  const serverId = rest.slice(slash + 1);
  if (!serverId || serverId.includes("/")) return undefined;
  return { zone, serverId };
}

/** Formats `ankracloud://<zone>/<server-id>`. */
export function formatProviderId(id: ProviderId): string {
  return `${PREFIX}${id.zone}/${id.serverId}`;
}

/** How a node's providerID relates to this provider. */
type ProviderIdKind = "none" | "ours" | "malformed" | "foreign";

/**
 * Classifies a providerID: empty; ours; ours but malformed (`ankracloud:…` that does not parse); or another
 * provider's (any other scheme, e.g. `hcloud://123`, `aws:///i-1`, `k3s://node`).
 */
export function classifyProviderId(providerID: string | undefined): ProviderIdKind {
  if (!providerID) return "none";
  if (parseProviderId(providerID)) return "ours";
  if (providerID.startsWith(`${PROVIDER_NAME}:`)) return "malformed";
  return "foreign";
}
