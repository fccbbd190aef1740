/**
 * The steps of a pass over a Service, built once per controller from its options ({@linkcode passSteps}): where each
 * load balancer is, placing new ones, waiting for them to provision, what the user is told, the Ready condition,
 * sending the calls, cleaning up, edges, sharing, finding a Service's load balancer and applying a plan.
 *
 * @module
 */
import { type CloudCallSender, cloudCallSender } from "../cloud_call_executor.ts";
import { EdgeMembership } from "./edge_membership.ts";
import { LoadBalancerDirectory } from "./load_balancer_directory.ts";
import { LoadBalancerPlacement } from "./load_balancer_placement.ts";
import { PlacementFacts } from "./placement_facts.ts";
import { ProvisioningTracker } from "./provisioning_tracker.ts";
import { ServiceApply } from "./service_apply.ts";
import { ServiceCleanup } from "./service_cleanup.ts";
import type { ServiceControllerOptions } from "./service_controller_options.ts";
import { ServiceEdge } from "./service_edge.ts";
import { ServiceLookup } from "./service_lookup.ts";
import { ServiceReadiness } from "./service_readiness.ts";
import { ServiceReporter } from "./service_reporter.ts";
import { ServiceShare } from "./service_share.ts";
import { DEFAULTS } from "../../defaults.ts";

/**
 * The steps of a pass, each built once from the controller's options: none is handed another through a closure, and
 * each imports only the steps below it (edge → cleanup → edge membership; apply and cleanup → tracker → directory).
 */
export interface PassSteps {
  directory: LoadBalancerDirectory;
  placement: LoadBalancerPlacement;
  tracker: ProvisioningTracker;
  reporter: ServiceReporter;
  readiness: ServiceReadiness;
  send: CloudCallSender;
  cleanup: ServiceCleanup;
  edge: ServiceEdge;
  edges: EdgeMembership;
  share: ServiceShare;
  lookup: ServiceLookup;
  apply: ServiceApply;
}

/** Builds the steps of the passes of a controller with `o` and drift-check period `driftMs`. */
export function passSteps(o: ServiceControllerOptions, driftMs: number): PassSteps {
  const pollMs = o.provisioningPollMs ?? DEFAULTS.provisioningPollMs;
  const directory = new LoadBalancerDirectory(o.cloud, {
    clusterName: o.clusterName,
    clusterUid: o.clusterUid,
    documentTtlMs: driftMs,
  });
  const tracker = new ProvisioningTracker(o.cloud, { clusterName: o.clusterName, minPollMs: pollMs, directory });
  const reporter = new ServiceReporter(o);
  const send = cloudCallSender(o.cloud, { controller: "service", dryRun: o.dryRun });
  const edges = new EdgeMembership({
    cloud: o.cloud,
    send,
    writes: o.writes,
    clusterName: o.clusterName,
    clusterUid: o.clusterUid,
  });
  const cleanup = new ServiceCleanup({
    directory,
    tracker,
    reporter,
    send,
    writes: o.writes,
    clusterName: o.clusterName,
    clusterUid: o.clusterUid,
    edges,
    deletePollMs: pollMs,
  });
  return {
    directory,
    placement: new LoadBalancerPlacement({
      facts: new PlacementFacts(o.cloud),
      defaults: o.defaults,
      dryRun: o.dryRun,
    }),
    tracker,
    reporter,
    readiness: new ServiceReadiness(o.writes),
    send,
    cleanup,
    edge: new ServiceEdge({
      cloud: o.cloud,
      send,
      writes: o.writes,
      reporter,
      cleanup,
      driftCheckMs: driftMs,
      provisioningPollMs: pollMs,
    }),
    edges,
    share: new ServiceShare({
      services: o.services.store,
      directory,
      cleanup,
      send,
      writes: o.writes,
      clusterName: o.clusterName,
      clusterUid: o.clusterUid,
      loadBalancerClass: o.loadBalancerClass,
      classRule: { requireClass: o.requireLoadBalancerClass },
    }),
    lookup: new ServiceLookup({ directory, cleanup, recheckAfterMs: driftMs }),
    apply: new ServiceApply({
      writes: o.writes,
      directory,
      tracker,
      reporter,
      send,
      driftCheckMs: driftMs,
      dryRun: o.dryRun !== undefined,
    }),
  };
}
