/**
 * Several Services on one load balancer (`load-balancer.ankra.cloud/share: <key>`): the Services of one namespace
 * naming the same key (or of several namespaces that allow each other, `share_groups.ts`) share one load balancer —
 * one address — each Service's ports its own frontends and backends
 * (`tcp-<port>`: ports are distinct across the group), so health checks, balance and `externalTrafficPolicy` stay per
 * Service. The rules, pure:
 *
 * - which load balancer a Service uses ({@linkcode loadBalancerKeyOf}: its own, or its group's);
 * - who came first ({@linkcode earlier}: creation time, then name) — the earliest Service of a group made the load
 *   balancer, and a later one that asks for a port an earlier one uses, or for another `ipv4`, `network-id` or `zone`
 *   than the earliest one, is refused with a message naming the other ({@linkcode shareCheck}), and nothing of it is
 *   applied;
 * - which listeners are another sharer's and are never touched by this Service's passes ({@linkcode ShareCheck}).
 *
 * @module
 */
import { ANNOTATION_PREFIX, SHARED_NAMESPACES_LABEL } from "../../ankra_names.ts";
import { objectKey } from "../../kube/object_key.ts";
import { type SlimService } from "../../kube/slim.ts";
import { type LoadBalancerSettings, parseAnnotations } from "./annotations.ts";
import type { LoadBalancer } from "../../cloud/schemas.ts";
import type { CloudCall } from "./cloud_calls.ts";
import { isManagedListener, listenerName } from "./load_balancer_names.ts";
import { type LoadBalancerKey, sharedKey } from "./load_balancer_ownership.ts";
import { portPlan } from "./service_plan.ts";
import { namespacesLabelValue, recordedGroupOf } from "./share_groups.ts";

const SHARE_KEY = /^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/;

/** The share key a Service asks for (`load-balancer.ankra.cloud/share`), when it is a valid one. */
export function shareKeyOf(service: Pick<SlimService, "annotations">): string | undefined {
  const key = service.annotations[`${ANNOTATION_PREFIX}share`]?.trim();
  return key && SHARE_KEY.test(key) ? key : undefined;
}

/**
 * The directory key of the load balancer the Service uses: its group's when it shares (the group across namespaces
 * when that is what it last joined), else its own.
 */
export function loadBalancerKeyOf(service: Pick<SlimService, "namespace" | "name" | "annotations">): LoadBalancerKey {
  const share = shareKeyOf(service);
  if (!share) return objectKey(service);
  const recorded = recordedGroupOf(service);
  return sharedKey(recorded?.key === share ? recorded.namespace : service.namespace, share);
}

/** True when `a` came before `b`: created earlier, or at the same time with a name that sorts first. */
export function earlier(
  a: Pick<SlimService, "creationTimestamp" | "name">,
  b: Pick<SlimService, "creationTimestamp" | "name">,
): boolean {
  const at = a.creationTimestamp ?? "";
  const bt = b.creationTimestamp ?? "";
  return at !== bt ? at < bt : a.name < b.name;
}

/** What sharing decides for one Service's pass. */
export interface ShareCheck {
  /** Why the Service is refused (a port or a creation-time setting another sharer holds), naming that Service. */
  conflict?: string;
  /** Listener names of the other sharers' ports (not the Service's own): never changed or deleted by its pass. */
  claimedByOthers: Set<string>;
}

type CreationSettings = Pick<LoadBalancerSettings, "ipv4" | "networkId" | "zone">;

function creationSettings(service: SlimService): CreationSettings | undefined {
  const parsed = parseAnnotations(service.annotations, { sessionAffinity: service.sessionAffinity });
  return parsed.ok ? parsed.settings : undefined;
}

function settingsConflict(mine: CreationSettings, first: CreationSettings, firstName: string): string | undefined {
  const differ: string[] = [];
  const show = (value: unknown) => (value === undefined ? "not set" : String(value));
  if (mine.ipv4 !== first.ipv4) differ.push(`ipv4 ${mine.ipv4} (it has ${first.ipv4})`);
  if (mine.networkId !== first.networkId) {
    differ.push(`network-id ${show(mine.networkId)} (it has ${show(first.networkId)})`);
  }
  if (mine.zone !== first.zone) differ.push(`zone ${show(mine.zone)} (it has ${show(first.zone)})`);
  if (differ.length === 0) return undefined;
  return `asks for ${differ.join(", ")}, unlike Service ${firstName}, the first of the Services sharing its load ` +
    "balancer, which was made with those settings; nothing of this Service is applied: give it the same " +
    `${ANNOTATION_PREFIX}ipv4, network-id and zone annotations, or another share key`;
}

/**
 * Checks `service` against the other Services of its group (`sharers`: same group, served, not being deleted; the
 * Service itself excluded): a port an earlier sharer uses, or creation-time settings unlike the earliest sharer's,
 * is a conflict; the other sharers' ports are theirs. `before` orders them: {@linkcode earlier} within a namespace,
 * `acrossOrder` across namespaces (those already on the load balancer first).
 */
export function shareCheck(
  service: SlimService,
  settings: CreationSettings,
  sharers: SlimService[],
  before: (a: SlimService, b: SlimService) => boolean = earlier,
): ShareCheck {
  const mine = new Set(portPlan(service).tcp.map((p) => p.port));
  const claimedByOthers = new Set<string>();
  let conflict: string | undefined;
  const ordered = [...sharers].sort((a, b) => (before(a, b) ? -1 : 1));
  for (const other of ordered) {
    for (const port of portPlan(other).tcp) {
      if (!mine.has(port.port)) claimedByOthers.add(listenerName(port.port));
      else if (!conflict && before(other, service)) {
        conflict = `port ${port.port} is already served by Service ${objectKey(other)} on the load balancer this ` +
          "Service shares with it; nothing of this Service is applied: choose another port, or another share key";
      }
    }
  }
  const first = ordered[0];
  if (!conflict && first && before(first, service)) {
    const theirs = creationSettings(first);
    if (theirs) conflict = settingsConflict(settings, theirs, objectKey(first));
  }
  return { conflict, claimedByOthers };
}

/**
 * The calls that take a leaving Service's listeners off its group's load balancer, which stays for the others: every
 * frontend this controller made that no remaining sharer claims (`claimedByOthers`), then such backends (a backend
 * cannot go while a frontend forwards to it). Hand-made listeners stay.
 */
export function planShareLeave(
  lb: Pick<LoadBalancer, "id" | "frontends" | "backends">,
  claimedByOthers: ReadonlySet<string>,
): CloudCall[] {
  const ref = { id: lb.id };
  const leaving = (name: string) => isManagedListener(name) && !claimedByOthers.has(name);
  return [
    ...lb.frontends.filter((f) => leaving(f.name)).map((f): CloudCall => ({
      operation: "delete_load_balancer_frontend",
      loadBalancer: ref,
      frontendId: f.id,
      name: f.name,
    })),
    ...lb.backends.filter((b) => leaving(b.name)).map((b): CloudCall => ({
      operation: "delete_load_balancer_backend",
      loadBalancer: ref,
      backend: { id: b.id },
      name: b.name,
    })),
  ];
}

/**
 * The call that hands a share group's load balancer to the group the same Services form now (`to`): a group within
 * a namespace that opened to others (`share-namespaces`), or a group across namespaces back within the one namespace
 * left. It keeps its address and listeners; its name and its shared label become the new group's (with the list of
 * namespaces on it across namespaces, without it within one), its other labels stay.
 */
export function planGroupMove(
  lb: Pick<LoadBalancer, "id" | "labels">,
  to: { name: string; labels: Record<string, string> },
): Extract<CloudCall, { operation: "update_load_balancer" }> {
  const labels = { ...lb.labels, ...to.labels };
  if (!(SHARED_NAMESPACES_LABEL in to.labels)) delete labels[SHARED_NAMESPACES_LABEL];
  return { operation: "update_load_balancer", loadBalancer: { id: lb.id }, body: { name: to.name, labels } };
}

/**
 * The call that brings the list of namespaces on a group's load balancer across namespaces in step with those
 * admitted now (`ccm.ankra.cloud/shared-namespaces`), or none when it says that already.
 */
export function planNamespacesLabel(
  lb: Pick<LoadBalancer, "id" | "labels">,
  namespaces: readonly string[],
): CloudCall | undefined {
  const value = namespacesLabelValue(namespaces);
  if ((lb.labels[SHARED_NAMESPACES_LABEL] ?? "") === value) return undefined;
  const labels = { ...lb.labels, [SHARED_NAMESPACES_LABEL]: value };
  return { operation: "update_load_balancer", loadBalancer: { id: lb.id }, body: { labels } };
}
