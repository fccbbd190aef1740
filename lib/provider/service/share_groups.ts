/**
 * Share groups across namespaces (`load-balancer.ankra.cloud/share-namespaces`), pure, over the Services that share
 * (served, not being deleted; the caller filters them):
 *
 * - **which group** a Service is in ({@linkcode shareGroupOf}): a namespace where some Service with share key `K`
 *   names other namespaces (or `*`) is *open* for `K`, and every Service of it with that key is in the one group of `K`
 *   across namespaces (`*.K`: one per key in the cluster); in a namespace that is not open, its Services with key `K`
 *   are the group of that namespace as before (`<namespace>.K`, the same name and labels). A namespace only ever
 *   becomes open by its own Services' annotation: another namespace's `*` changes nothing for it;
 * - **consent** ({@linkcode consentCheck}): a Service joins the group across namespaces only when every Service of
 *   the group from another namespace allows its namespace and it allows theirs. Services are taken in order — those
 *   of the namespaces already on the group's load balancer first (its label `ccm.ankra.cloud/shared-namespaces`,
 *   which only the controller writes: a Service's own annotations cannot move it up), then by creation time — and
 *   each one that is refused does not count for the later ones, so a newcomer can never push out, or get onto the
 *   address of, a namespace already sharing that has not allowed it. A Service of a namespace not yet on it also
 *   waits while a namespace it names explicitly shares `K` within itself (that namespace has not allowed it yet): it
 *   would otherwise get a load balancer of its own, and the other namespace's group another one. The refusal names
 *   the side that did not consent and what to add.
 * - **what is recorded** on a Service (`ccm.ankra.cloud/share`): the key for a group within a namespace (as before),
 *   `*.<key>` for the group across namespaces ({@linkcode recordedGroupOf}, {@linkcode recordValue}).
 *
 * @module
 */
import { ANNOTATION_PREFIX, SHARE_IN_USE_ANNOTATION, SHARED_NAMESPACES_LABEL } from "../../ankra_names.ts";
import { objectKey } from "../../kube/object_key.ts";
import type { SlimService } from "../../kube/slim.ts";
import { ANNOTATIONS, defaultSettings, type LoadBalancerSettings } from "./annotations.ts";
import { ACROSS_NAMESPACES, type LoadBalancerKey, sharedKey } from "./load_balancer_ownership.ts";

/** A share group: the Services of `namespace` with share key `key`, or of every open namespace (`*`). */
export interface ShareGroup {
  /** The namespace, or {@linkcode ACROSS_NAMESPACES}. */
  namespace: string;
  /** The share key. */
  key: string;
}

/** What a Service reads of sharing. */
type Sharing = Pick<SlimService, "namespace" | "name" | "annotations" | "creationTimestamp">;

/** One annotation read by its declared rule alone (the others may be invalid); undefined when unset or invalid. */
function readOne(service: Sharing, name: string): LoadBalancerSettings | undefined {
  const value = service.annotations[ANNOTATION_PREFIX + name]?.trim();
  const spec = ANNOTATIONS.find((annotation) => annotation.name === name);
  if (!value || !spec) return undefined;
  const settings = defaultSettings();
  return spec.read(value, settings) === undefined ? settings : undefined;
}

/**
 * The share key a Service names and the namespaces it allows, each read alone: a Service whose other annotations are
 * invalid still counts in its group (its listeners stay its own).
 */
function sharingOf(service: Sharing): { key: string; namespaces?: { all: boolean; names: string[] } } | undefined {
  const key = readOne(service, "share")?.share;
  if (!key) return undefined;
  return { key, namespaces: readOne(service, "share-namespaces")?.shareNamespaces };
}

/** True when two groups are the same one. */
export function sameGroup(a: ShareGroup | undefined, b: ShareGroup | undefined): boolean {
  return a?.namespace === b?.namespace && a?.key === b?.key;
}

/** The group the controller last recorded on the Service (`ccm.ankra.cloud/share`): `<key>` or `*.<key>`. */
export function recordedGroupOf(service: Pick<SlimService, "namespace" | "annotations">): ShareGroup | undefined {
  const recorded = service.annotations[SHARE_IN_USE_ANNOTATION];
  if (!recorded) return undefined;
  const across = `${ACROSS_NAMESPACES}.`;
  return recorded.startsWith(across)
    ? { namespace: ACROSS_NAMESPACES, key: recorded.slice(across.length) }
    : { namespace: service.namespace, key: recorded };
}

/** What is recorded on a Service of `group`: its key within a namespace, `*.<key>` across namespaces. */
export function recordValue(group: ShareGroup): string {
  return group.namespace === ACROSS_NAMESPACES ? `${ACROSS_NAMESPACES}.${group.key}` : group.key;
}

/** True when the Service lets other namespaces into its group: `*`, or a namespace other than its own. */
function opensToOthers(service: Sharing, namespaces: { all: boolean; names: string[] } | undefined): boolean {
  return namespaces !== undefined && (namespaces.all || namespaces.names.some((name) => name !== service.namespace));
}

/** True when a Service of `namespace` with key `key` in `services` names other namespaces: the namespace is open. */
function isOpen(namespace: string, key: string, services: readonly Sharing[]): boolean {
  return services.some((other) => {
    if (other.namespace !== namespace) return false;
    const sharing = sharingOf(other);
    return sharing?.key === key && opensToOthers(other, sharing.namespaces);
  });
}

/**
 * The group of `service` among `services` (those that share; `service` may or may not be among them): across
 * namespaces when its namespace is open for its key, else its namespace's. Undefined when it asks for no valid key.
 */
export function shareGroupOf(service: Sharing, services: readonly Sharing[]): ShareGroup | undefined {
  const sharing = sharingOf(service);
  if (!sharing) return undefined;
  const open = opensToOthers(service, sharing.namespaces) || isOpen(service.namespace, sharing.key, services);
  return { namespace: open ? ACROSS_NAMESPACES : service.namespace, key: sharing.key };
}

/** The Services of `services` in `group`. */
export function groupMembers<S extends Sharing>(group: ShareGroup, services: readonly S[]): S[] {
  return services.filter((service) => sameGroup(shareGroupOf(service, services), group));
}

/** True when `service` lets the Services of `namespace` into its group (its own namespace always). */
function allows(service: Sharing, namespace: string): boolean {
  if (service.namespace === namespace) return true;
  const namespaces = sharingOf(service)?.namespaces;
  return namespaces !== undefined && (namespaces.all || namespaces.names.includes(namespace));
}

/** The longest label value the API takes. */
const LABEL_VALUE_MAX = 255;

/** The namespaces on a group's load balancer, from its {@linkcode SHARED_NAMESPACES_LABEL} (none without one). */
export function namespacesOnIt(labels: Readonly<Record<string, string>> | undefined): Set<string> {
  return new Set((labels?.[SHARED_NAMESPACES_LABEL] ?? "").split(",").filter(Boolean));
}

/** The {@linkcode SHARED_NAMESPACES_LABEL} value of `namespaces` (in order): as many as fit in a label value. */
export function namespacesLabelValue(namespaces: readonly string[]): string {
  let value = "";
  for (const namespace of namespaces) {
    const next = value ? `${value},${namespace}` : namespace;
    if (next.length > LABEL_VALUE_MAX) break;
    value = next;
  }
  return value;
}

/**
 * The order in which a group across namespaces takes its Services: those of the namespaces on its load balancer
 * (`onIt`) first, then by creation time, then by namespace and name. Used for consent and, in `shareCheck`, for
 * ports and settings.
 */
export function acrossOrder(onIt: ReadonlySet<string>): (a: Sharing, b: Sharing) => boolean {
  const rank = (service: Sharing) => onIt.has(service.namespace) ? 0 : 1;
  return (a, b) => {
    if (rank(a) !== rank(b)) return rank(a) < rank(b);
    const at = a.creationTimestamp ?? "";
    const bt = b.creationTimestamp ?? "";
    return at !== bt ? at < bt : objectKey(a) < objectKey(b);
  };
}

const SHARE_NAMESPACES = `${ANNOTATION_PREFIX}share-namespaces`;
const SHARE_ANNOTATION = `${ANNOTATION_PREFIX}share`;

/** Why `service` may not join the group of its admitted `earlier` members, naming the side that did not consent. */
function pairRefusal(service: Sharing, key: string, earlier: readonly Sharing[]): string | undefined {
  for (const other of earlier) {
    if (other.namespace === service.namespace) continue;
    if (!allows(other, service.namespace)) {
      return `Service ${objectKey(other)} of share group ${key} across namespaces does not allow namespace ` +
        `${service.namespace}: add ${service.namespace} (or *) to its ${SHARE_NAMESPACES}, or give this Service ` +
        "another share key; nothing of this Service is applied";
    }
    if (!allows(service, other.namespace)) {
      return `this Service does not allow namespace ${other.namespace}, where Service ${objectKey(other)} of its ` +
        `share group ${key} is: add ${other.namespace} (or *) to its ${SHARE_NAMESPACES}, or give it another ` +
        "share key; nothing of this Service is applied";
    }
  }
  return undefined;
}

/**
 * Why `service`, not yet on its group's load balancer, waits for a namespace it names that shares `key` within
 * itself (has not opened to it), or undefined.
 */
function namedRefusal(service: Sharing, key: string, services: readonly Sharing[]): string | undefined {
  for (const namespace of sharingOf(service)?.namespaces?.names ?? []) {
    if (namespace === service.namespace || isOpen(namespace, key, services)) continue;
    const theirs = services.filter((other) => other.namespace === namespace && sharingOf(other)?.key === key);
    if (theirs.length === 0) continue;
    const names = theirs.map((other) => objectKey(other)).sort();
    return `namespace ${namespace}, named in ${SHARE_NAMESPACES}, shares ${key} within itself (${names.join(", ")}) ` +
      `and does not allow namespace ${service.namespace}: add ${SHARE_NAMESPACES}: ${service.namespace} (or *) to ` +
      `its Services sharing ${key}, or take ${namespace} out of this Service's; nothing of this Service is applied ` +
      "until then";
  }
  return undefined;
}

/**
 * The consent check of `service` in its group across namespaces (see the module documentation); `services` are all
 * the Services that share (any namespace, any key; `service` among them), `onIt` the namespaces on the group's load
 * balancer ({@linkcode namespacesOnIt}). Always ok for a group within a namespace. When ok, `namespaces` are those of
 * the whole group's admitted Services, in order: what the load balancer's label should say.
 */
export function consentCheck(
  service: Sharing,
  services: readonly Sharing[],
  onIt: ReadonlySet<string> = new Set(),
): { ok: true; namespaces: string[] } | { ok: false; message: string } {
  const group = shareGroupOf(service, services);
  if (!group || group.namespace !== ACROSS_NAMESPACES) return { ok: true, namespaces: [service.namespace] };
  const self = objectKey(service);
  const members = groupMembers(group, services).filter((member) => objectKey(member) !== self);
  const order = acrossOrder(onIt);
  const ordered = [...members, service].sort((a, b) => (order(a, b) ? -1 : order(b, a) ? 1 : 0));
  const admitted: Sharing[] = [];
  let mine: string | undefined;
  for (const member of ordered) {
    const refusal = (onIt.has(member.namespace) ? undefined : namedRefusal(member, group.key, services)) ??
      pairRefusal(member, group.key, admitted);
    if (objectKey(member) === self) mine = refusal;
    if (!refusal) admitted.push(member);
  }
  if (mine) return { ok: false, message: mine };
  return { ok: true, namespaces: [...new Set(admitted.map((member) => member.namespace))] };
}

/**
 * The directory keys of every share group some Service of `services` (the whole store, whatever its type or class)
 * is in or may be in: its namespace's group of the key it names, the group across namespaces of that key when it
 * names namespaces or any Service of its namespace does, and the group it last joined. The sweeper never deletes the
 * load balancer of one of these: it errs on keeping.
 */
export function liveGroupKeys(all: readonly Sharing[]): Set<LoadBalancerKey> {
  const services = all.filter((service) =>
    service.annotations[SHARE_ANNOTATION] !== undefined || service.annotations[SHARE_IN_USE_ANNOTATION] !== undefined
  );
  const keys = new Set<LoadBalancerKey>();
  for (const service of services) {
    const recorded = recordedGroupOf(service);
    if (recorded) keys.add(sharedKey(recorded.namespace, recorded.key));
    const group = shareGroupOf(service, services);
    if (!group) continue;
    keys.add(sharedKey(service.namespace, group.key));
    if (group.namespace === ACROSS_NAMESPACES) keys.add(sharedKey(ACROSS_NAMESPACES, group.key));
  }
  return keys;
}
