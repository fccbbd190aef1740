/**
 * What the setup the doctor looks at needs, decided from the controller's settings and what the doctor read — as the
 * controller decides it: the Services it serves (`wantsLoadBalancer`) and the mode of each (`servingModeOf`, the
 * controller's one rule), and the mode a new Service would get (`--default-load-balancer-mode`):
 *
 * - **an Ankra load balancer** when a Service is served by one, or a new one would be (the default mode);
 * - **node-address mode** when a Service is served on its nodes' addresses, or a new one would be;
 * - **a token that may operate** when a load balancer is needed, or the account holds load balancers of this cluster
 *   (the controller deletes the one a Service had before it moved to node addresses, and keeps the others in step).
 *   Node-address mode alone writes nothing to Ankra Cloud: a read-only token is enough.
 *
 * What cannot be read counts as needed (the checks then run, and say what they could not read). The checklist skips a
 * check whose need is not there, with the reason given here. Pure.
 *
 * @module
 */
import { CLUSTER_LABEL, CLUSTER_UID_LABEL, RELEASED_LABEL } from "../ankra_names.ts";
import { objectKey } from "../kube/object_key.ts";
import type { ServingMode } from "../provider/service/annotations.ts";
import { servingMode, servingModeOf } from "../provider/service/serving_mode.ts";
import { wantsLoadBalancer } from "../provider/service/service_plan.ts";
import type { DoctorSettings } from "./doctor_settings.ts";
import type { CloudFacts, ClusterFacts, ServiceFacts } from "./facts.ts";
import { nameList, plural } from "./report.ts";

/** Whether the setup needs something, and why (or why not). */
interface Need {
  /** True when it is needed (or could not be told). */
  needed: boolean;
  /** Why, or why not: one clause, for the skip of a check that needs it. */
  why: string;
}

/** What the setup needs. */
export interface SetupNeeds {
  /** An Ankra load balancer (a private network, a zone, quota, billing). */
  loadBalancer: Need;
  /** Node-address mode (public addresses on the serving nodes, their ports). */
  nodeAddresses: Need;
  /** An API token that may make changes. */
  operate: Need;
}

/** The settings that say which Services the controller serves, and how. */
export type ModeRule = Pick<
  DoctorSettings,
  "defaultLoadBalancerMode" | "loadBalancerClass" | "requireLoadBalancerClass"
>;

/** The settings the decision reads. */
type NeedSettings = ModeRule & Pick<DoctorSettings, "clusterName">;

/** A Service the controller serves, with its mode. */
interface ServedService {
  /** The Service as read. */
  service: ServiceFacts;
  /** How the controller serves it. */
  mode: ServingMode;
}

/** The Services the controller serves (not being deleted), each with its mode, by namespace/name. */
export function servedServices(services: readonly ServiceFacts[], settings: ModeRule): ServedService[] {
  return services.filter((service) =>
    !service.deletionTimestamp &&
    wantsLoadBalancer(service, settings.loadBalancerClass, { requireClass: settings.requireLoadBalancerClass })
  ).map((service) => ({ service, mode: servingModeOf(service, settings.defaultLoadBalancerMode) }))
    .sort((a, b) => (objectKey(a.service) < objectKey(b.service) ? -1 : 1));
}

/** The mode a new Service would get: one without the node-address class or a `mode` annotation. */
function defaultModeOf(settings: ModeRule): ServingMode {
  return servingMode({}, undefined, settings.defaultLoadBalancerMode);
}

/**
 * The account's load balancers of this cluster (labelled with its `--cluster-name`, with its UID or none), not those
 * released with `preserve-on-delete` (the controller leaves them alone until a Service takes one back).
 */
export function ownLoadBalancers(
  loadBalancers: readonly { id: string; labels: Record<string, string> }[],
  clusterName: string,
  clusterUid: string | undefined,
): string[] {
  return loadBalancers.filter((lb) => {
    if (lb.labels[CLUSTER_LABEL] !== clusterName || lb.labels[RELEASED_LABEL] !== undefined) return false;
    const uid = lb.labels[CLUSTER_UID_LABEL];
    return uid === undefined || clusterUid === undefined || uid === clusterUid;
  }).map((lb) => lb.id).sort();
}

/**
 * What the setup needs, from what the doctor read: the Services (when listed), and this cluster's load balancers among
 * the account's (when listed; the cluster's UID tells another cluster's of the same name apart). The doctor's reads
 * and its checklist both decide by this, so a check is skipped exactly when its request was not made.
 */
export function needsFromFacts(
  settings: NeedSettings,
  facts: { cloud?: Pick<CloudFacts, "loadBalancers">; cluster?: Pick<ClusterFacts, "services" | "clusterUid"> },
): SetupNeeds {
  const services = facts.cluster?.services?.ok ? facts.cluster.services.value : undefined;
  const listed = facts.cloud?.loadBalancers?.ok ? facts.cloud.loadBalancers.value : undefined;
  const uid = facts.cluster?.clusterUid?.ok ? facts.cluster.clusterUid.value : undefined;
  return setupNeeds(settings, services, listed && ownLoadBalancers(listed, settings.clusterName, uid));
}

function names(served: ServedService[]): string {
  return nameList(served.map((s) => objectKey(s.service)), 5);
}

/**
 * What the setup needs: `services` as listed (undefined: not listed), `ownLoadBalancers` the ids of this cluster's
 * load balancers in the account (undefined: not listed).
 */
export function setupNeeds(
  settings: NeedSettings,
  services: readonly ServiceFacts[] | undefined,
  ownLoadBalancers: readonly string[] | undefined,
): SetupNeeds {
  const byDefault = defaultModeOf(settings);
  const served = services ? servedServices(services, settings) : undefined;
  const onLoadBalancers = served?.filter((s) => s.mode === "load-balancer") ?? [];
  const onNodes = served?.filter((s) => s.mode === "node-addresses") ?? [];
  const defaultText = `--default-load-balancer-mode=${byDefault}`;

  let loadBalancer: Need;
  if (onLoadBalancers.length > 0) {
    loadBalancer = {
      needed: true,
      why: `${plural(onLoadBalancers.length, "Service")} on Ankra load balancers (${names(onLoadBalancers)})`,
    };
  } else if (byDefault === "load-balancer") {
    loadBalancer = { needed: true, why: `${defaultText}: a new LoadBalancer Service gets an Ankra load balancer` };
  } else if (!served) {
    loadBalancer = { needed: true, why: "the Services were not listed, so some may need an Ankra load balancer" };
  } else {
    loadBalancer = {
      needed: false,
      why: `every LoadBalancer Service is served on node addresses (${
        onNodes.length > 0 ? `${plural(onNodes.length, "Service")}: ${names(onNodes)}` : "none exists yet"
      }) and a new one would be too (${defaultText})`,
    };
  }

  const nodeAddresses: Need = onNodes.length > 0
    ? { needed: true, why: `${plural(onNodes.length, "Service")} in node-address mode (${names(onNodes)})` }
    : byDefault === "node-addresses"
    ? { needed: true, why: `${defaultText} (no such Service yet)` }
    : {
      needed: false,
      why: `no Service is served on node addresses${served ? "" : " (as far as could be read)"} and ${defaultText}`,
    };

  let operate: Need;
  if (loadBalancer.needed) {
    operate = { needed: true, why: `load balancers are created and changed: ${loadBalancer.why}` };
  } else if (!ownLoadBalancers) {
    operate = {
      needed: true,
      why: "the account's load balancers were not listed: this cluster may have some the controller deletes",
    };
  } else if (ownLoadBalancers.length > 0) {
    operate = {
      needed: true,
      why: `the account holds ${plural(ownLoadBalancers.length, "load balancer")} of this cluster ` +
        `(${nameList([...ownLoadBalancers], 5)}), which the controller deletes: their Services are served on node ` +
        "addresses now, or gone",
    };
  } else {
    operate = {
      needed: false,
      why: `node-address mode writes nothing to Ankra Cloud, and the account holds no load balancer of this cluster ` +
        `(--cluster-name ${settings.clusterName}): a read-only token is enough`,
    };
  }
  return { loadBalancer, nodeAddresses, operate };
}
