/**
 * The operator's allow-lists of the account resources a Service may name in its annotations: certificates
 * (`certificate-ids`), edges (`edge`) and networks (`network-id`), from `ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS`,
 * `ANKRA_CLOUD_ALLOWED_EDGES` and `ANKRA_CLOUD_ALLOWED_NETWORK_IDS`. They stop whoever may create a LoadBalancer
 * Service from using the account's other resources through this controller: terminating TLS with the company's
 * wildcard certificate, squatting another team's edge, or placing a load balancer on another network.
 *
 * An unset list allows every resource of its kind, as before the lists existed. A Service that names a resource
 * outside a set list gets one Warning {@linkcode RESOURCE_NOT_ALLOWED} naming the annotation, the id and the variable,
 * and nothing of it is applied: nothing is created or changed for the Service until the annotation names allowed
 * resources only (the same rule as an invalid annotation; a load balancer or edge membership it already has stays as
 * it is). Only what a Service names is checked: the operator's own `ANKRA_CLOUD_NETWORK_ID` must be in the network
 * list (checked once at start-up), and the network the nodes share, chosen when nothing is named, is the cluster's.
 *
 * Pure.
 *
 * @module
 */
import { ANNOTATION_PREFIX } from "../../ankra_names.ts";
import { type LoadBalancerSettings } from "./annotations.ts";
import type { Notice, ServiceIntent } from "./service_plan.ts";

/** The event reason of a Service naming a resource outside an allow-list. */
export const RESOURCE_NOT_ALLOWED = "ResourceNotAllowed";

/** The allow-lists; an absent list allows every resource of its kind. */
export interface AllowedResources {
  /** Certificates `certificate-ids` may name (`ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS`). */
  certificateIds?: readonly string[];
  /** Edges `edge` may name (`ANKRA_CLOUD_ALLOWED_EDGES`). */
  edges?: readonly string[];
  /** Networks `network-id` may name (`ANKRA_CLOUD_ALLOWED_NETWORK_IDS`). */
  networkIds?: readonly string[];
}

/** A resource a Service names that its allow-list does not hold. */
interface DisallowedResource {
  /** The full annotation that names it. */
  annotation: string;
  /** What it is, in words. */
  kind: "certificate" | "edge" | "network";
  /** Its id. */
  id: string;
  /** The variable holding the list. */
  variable: string;
}

/** Each kind of resource: where a Service names it, and its list. */
const KINDS = [
  {
    kind: "network",
    annotation: "network-id",
    variable: "ANKRA_CLOUD_ALLOWED_NETWORK_IDS",
    list: (allowed: AllowedResources) => allowed.networkIds,
    named: (settings: NamedResources) => (settings.networkId ? [settings.networkId] : []),
  },
  {
    kind: "edge",
    annotation: "edge",
    variable: "ANKRA_CLOUD_ALLOWED_EDGES",
    list: (allowed: AllowedResources) => allowed.edges,
    named: (settings: NamedResources) => (settings.edgeId ? [settings.edgeId] : []),
  },
  {
    kind: "certificate",
    annotation: "certificate-ids",
    variable: "ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS",
    list: (allowed: AllowedResources) => allowed.certificateIds,
    named: (settings: NamedResources) => settings.certificateIds,
  },
] as const;

/** The settings that name account resources. */
type NamedResources = Pick<LoadBalancerSettings, "networkId" | "edgeId" | "certificateIds">;

/** True when `id` may be named as a resource of `list` (every id is allowed when the list is unset). */
function isAllowed(list: readonly string[] | undefined, id: string): boolean {
  return list === undefined || list.includes(id);
}

/** The resources `settings` names that their allow-list does not hold, in annotation order (networks, edges, certificates). */
export function disallowedResources(settings: NamedResources, allowed: AllowedResources): DisallowedResource[] {
  const found: DisallowedResource[] = [];
  for (const spec of KINDS) {
    const list = spec.list(allowed);
    for (const id of spec.named(settings)) {
      if (!isAllowed(list, id)) {
        found.push({ annotation: ANNOTATION_PREFIX + spec.annotation, kind: spec.kind, id, variable: spec.variable });
      }
    }
  }
  return found;
}

/** One event message for all of `disallowed`, with what to do. */
function describeDisallowed(disallowed: DisallowedResource[]): string {
  const each = disallowed.map((d) => `${d.annotation} names ${d.kind} "${d.id}", which ${d.variable} does not allow`);
  return `${each.join("; ")}; nothing is created or changed until the annotation names an allowed one (or the ` +
    "controller's operator adds it to the list)";
}

/**
 * `intent` with the allow-lists applied: when its settings name a resource outside them, its `annotations` notice
 * becomes a {@linkcode RESOURCE_NOT_ALLOWED} Warning and the Service waits for the user (nothing is created or
 * changed). Otherwise `intent` as it is. A Service whose annotations are invalid keeps its `InvalidAnnotation`
 * (its settings are the defaults then, which name nothing).
 */
export function withinAllowedResources<I extends ServiceIntent>(intent: I, allowed: AllowedResources): I {
  const disallowed = disallowedResources(intent.settings, allowed);
  if (disallowed.length === 0) return intent;
  const notice: Notice = {
    topic: "annotations",
    reason: RESOURCE_NOT_ALLOWED,
    message: describeDisallowed(disallowed),
  };
  return {
    ...intent,
    notices: [...intent.notices.filter((other) => other.topic !== notice.topic), notice],
    waitFor: intent.waitFor ?? { message: "an annotation names a resource that is not allowed", reported: true },
  };
}
