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
import { NodeAddressServing } from "./node_address_serving.ts";
import { LoadBalancerServing } from "./load_balancer_serving.ts";
import { ServiceMove } from "./service_move.ts";

/**
 * The steps of a pass, each built once from the controller's settings: none is handed another through a closure,
 * and each imports only the steps below it (edge → cleanup → edge membership; lookup, share and cleanup → directory;
 * the two ways of serving → the steps they go through).
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
  /** Serving on Ankra load balancers: move, find, plan and apply. */
  loadBalancers: LoadBalancerServing;
  /** Serving on node addresses (no load balancer): move, find, plan and apply. */
  nodeAddresses: NodeAddressServing;
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
  const lookup = new ServiceLookup({ directory, cleanup, recheckAfterMs: driftCheckMs });
  const placement = new LoadBalancerPlacement({ facts, defaults: settings.defaults, dryRun: settings.dryRun });
  const edge = new ServiceEdge({ cloud, send, writes, cleanup });
  const share = new ServiceShare({
    services: settings.services.store,
    directory,
    cleanup,
    send,
    writes,
    clusterName,
    clusterUid,
    loadBalancerClass: settings.loadBalancerClass,
    classRule: { requireClass: settings.requireLoadBalancerClass },
  });
  const apply = new ServiceApply({ writes, directory, send, driftCheckMs, dryRun: settings.dryRun !== undefined });
  const reporter = new ServiceReporter(settings);
  const move = new ServiceMove({ edges, share });
  return {
    directory,
    lookup,
    placement,
    edge,
    edges,
    share,
    apply,
    cleanup,
    send,
    tracker,
    reporter,
    readiness: new ServiceReadiness(writes),
    loadBalancers: new LoadBalancerServing(settings, { move, share, lookup, placement, edge, apply, reporter }),
    nodeAddresses: new NodeAddressServing({
      servers: settings.servers,
      nodes: settings.nodes.store,
      services: settings.services.store,
      writes,
      cleanup,
      move,
      clusterName,
      deletePollMs: provisioningPollMs,
      reserved: settings.reservedPorts,
      memberDrainMs: settings.memberDrainMs,
      driftCheckMs,
      defaultMode: settings.defaults.mode,
    }),
  };
}
