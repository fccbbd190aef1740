/**
 * The steps of a pass over a Service, built once per controller from its settings ({@linkcode passSteps}), in the
 * order a pass uses them: finding (where each load balancer is, finding a Service's, placing a new one, edges,
 * sharing), applying (sending the calls, the writes, cleaning up, waiting for new load balancers to provision) and
 * telling (the events, the Ready condition).
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
import type { ServiceControllerSettings } from "./service_controller_options.ts";
import { ServiceEdge } from "./service_edge.ts";
import { ServiceLookup } from "./service_lookup.ts";
import { ServiceReadiness } from "./service_readiness.ts";
import { ServiceReporter } from "./service_reporter.ts";
import { ServiceShare } from "./service_share.ts";
import { ServiceOnNodes } from "./service_on_nodes.ts";

/**
 * The steps of a pass, each built once from the controller's settings: none is handed another through a closure,
 * and each imports only the steps below it (edge → cleanup → edge membership; lookup, share and cleanup → directory).
 */
export interface PassSteps {
  /** Find: where each Service's load balancer is. */
  directory: LoadBalancerDirectory;
  /** Find: a Service's load balancer (or the one it names). */
  lookup: ServiceLookup;
  /** Find: where a new load balancer goes, and the members on its network. */
  placement: LoadBalancerPlacement;
  /** Find and apply on an edge. */
  edge: ServiceEdge;
  /** Leave an edge the Service no longer names. */
  edges: EdgeMembership;
  /** Check, join and leave a share group. */
  share: ServiceShare;
  /** Apply a plan; write a served address. */
  apply: ServiceApply;
  /** Retire a load balancer; the pass over a Service whose load balancer must go. */
  cleanup: ServiceCleanup;
  /** Sends the calls (describes them in a dry run). */
  send: CloudCallSender;
  /** Waits for new load balancers to provision. */
  tracker: ProvisioningTracker;
  /** Tells the events of each pass. */
  reporter: ServiceReporter;
  /** Writes the Ready condition of each pass. */
  readiness: ServiceReadiness;
  /** Find, plan and apply in node-address mode (no load balancer). */
  onNodes: ServiceOnNodes;
}

/** Builds the steps of the passes of a controller with `settings`. */
export function passSteps(settings: ServiceControllerSettings): PassSteps {
  const { cloud, writes, clusterName, clusterUid, driftCheckMs, provisioningPollMs } = settings;
  const directory = new LoadBalancerDirectory(cloud, { clusterName, clusterUid, documentTtlMs: driftCheckMs });
  const tracker = new ProvisioningTracker(cloud, { clusterName, minPollMs: provisioningPollMs, directory });
  const send = cloudCallSender(cloud, { controller: "service", dryRun: settings.dryRun });
  const edges = new EdgeMembership({ cloud, send, writes, clusterName, clusterUid });
  const facts = new PlacementFacts(cloud);
  const cleanup = new ServiceCleanup({
    directory,
    tracker,
    send,
    writes,
    clusterName,
    clusterUid,
    edges,
    deletePollMs: provisioningPollMs,
  });
  return {
    directory,
    lookup: new ServiceLookup({ directory, cleanup, recheckAfterMs: driftCheckMs }),
    placement: new LoadBalancerPlacement({
      facts,
      defaults: settings.defaults,
      dryRun: settings.dryRun,
    }),
    edge: new ServiceEdge({ cloud, send, writes, cleanup }),
    edges,
    share: new ServiceShare({
      services: settings.services.store,
      directory,
      cleanup,
      send,
      writes,
      clusterName,
      clusterUid,
      loadBalancerClass: settings.loadBalancerClass,
      classRule: { requireClass: settings.requireLoadBalancerClass },
    }),
    apply: new ServiceApply({ writes, directory, send, driftCheckMs, dryRun: settings.dryRun !== undefined }),
    cleanup,
    send,
    tracker,
    reporter: new ServiceReporter(settings),
    readiness: new ServiceReadiness(writes),
    onNodes: new ServiceOnNodes({
      facts,
      nodes: settings.nodes.store,
      services: settings.services.store,
      writes,
      cleanup,
      clusterName,
      deletePollMs: provisioningPollMs,
      reserved: settings.reservedPorts,
      memberDrainMs: settings.memberDrainMs,
      driftCheckMs,
      defaultMode: settings.defaults.mode ?? "load-balancer",
    }),
  };
}
