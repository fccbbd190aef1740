/**
 * The controllers this binary runs while it leads (or, in a dry run, at once), chosen with `--controllers`: the
 * shared cloud view (the server list every controller reads), the cloud-node and cloud-node-lifecycle controllers, and
 * the service controller. This is the one
 * place where each controller is handed what it may touch: read-only views of the informers' stores
 * (`Informer.watched`), the one write interface of its kind (`nodeWriter`, `serviceWriter`: the API server, or in a
 * dry run the report), its event sinks and the Ankra client.
 *
 * @module
 */
import type { Controller, ControllerContext } from "../controller_manager.ts";
import { endpointSliceInformer, ReadyEndpoints } from "../kube/endpoint_slices.ts";
import { EventRecorder } from "../kube/events.ts";
import { nodeWriter } from "../kube/node_writes.ts";
import { serviceWriter } from "../kube/service_writes.ts";
import { CloudView } from "./node/cloud_view.ts";
import { ClusterUid } from "./cluster_identity.ts";
import { NodeController } from "./node/node_controller.ts";
import { NodeLifecycleController } from "./node/node_lifecycle_controller.ts";
import { LoadBalancerSweeper } from "./service/load_balancer_sweeper.ts";
import { ServiceController } from "./service/service_controller.ts";

/** The components this binary's events are reported by (`source.component` and `reportingComponent`), by writer. */
export const EVENT_COMPONENTS = {
  node: "cloud-node-controller",
  nodeLifecycle: "cloud-node-lifecycle-controller",
  service: "service-controller",
  provider: "ankra-cloud-ccm",
} as const;

/** Builds the selected controllers for one term of leadership. */
export function buildControllers(context: ControllerContext): Controller[] {
  const { config, kube, cloud, nodes, services, metrics, dryRun } = context;
  const host = Deno.hostname();
  const target = { kube, dryRun };
  const recorder = (component: string) => new EventRecorder(kube, { component, host, metrics, dryRun });
  const wanted = new Set(config.controllers);
  const controllers: Controller[] = [];
  // One server list every --server-list-period for all of them: the node controllers' servers, and the public
  // addresses node-address Services are published on (which follow a server's changes within that period).
  const view = new CloudView(cloud, { refreshPeriodMs: config.serverListPeriodMs });
  if (wanted.has("cloud-node") || wanted.has("cloud-node-lifecycle") || wanted.has("service")) {
    controllers.push({ name: "cloud-view", run: (signal) => view.run(signal) });
  }
  if (wanted.has("cloud-node")) {
    controllers.push(
      new NodeController({
        writes: nodeWriter(target),
        nodes: nodes.watched(),
        view,
        events: recorder(EVENT_COMPONENTS.node),
        refreshPeriodMs: config.nodeStatusUpdateFrequencyMs,
        workers: config.concurrentNodeSyncs,
        metrics,
        serverLabels: config.nodeLabelsFromServer,
      }),
    );
  }
  if (wanted.has("cloud-node-lifecycle")) {
    controllers.push(
      new NodeLifecycleController({
        writes: nodeWriter(target),
        nodes: nodes.watched(),
        view,
        events: recorder(EVENT_COMPONENTS.nodeLifecycle),
        periodMs: config.nodeMonitorPeriodMs,
        workers: config.concurrentNodeLifecycleSyncs,
        metrics,
      }),
    );
  }
  if (wanted.has("service")) {
    const endpointSlices = endpointSliceInformer(kube, { metrics });
    controllers.push({ name: "endpointslices", run: (signal) => endpointSlices.run(signal) });
    // Read once per term: the load balancer writers start only once the cluster's UID is known.
    const clusterUid = new ClusterUid(kube);
    const once = (name: string, run: (uid: string, signal: AbortSignal) => Promise<void>): Controller => ({
      name,
      run: async (signal) => {
        let uid;
        try {
          uid = await clusterUid.get(signal);
        } catch (cause) {
          if (signal.aborted) return;
          throw cause;
        }
        await run(uid, signal);
      },
    });
    controllers.push(once("service", (uid, signal) =>
      new ServiceController({
        writes: serviceWriter(target),
        serverVersion: () => kube.serverVersion(),
        cloud,
        servers: view,
        services: services.watched(),
        nodes: nodes.watched(),
        clusterName: config.clusterName,
        clusterUid: uid,
        loadBalancerClass: config.loadBalancerClass,
        requireLoadBalancerClass: config.requireLoadBalancerClass,
        defaults: {
          networkId: config.cloud.networkId,
          zone: config.cloud.zone,
          highAvailability: config.cloud.loadBalancerHighAvailability,
          ipv4: config.cloud.loadBalancerIpv4,
          mode: config.defaultLoadBalancerMode,
        },
        reservedPorts: config.nodeAddressReservedPorts,
        allowedResources: config.cloud.allowedResources,
        serviceEvents: recorder(EVENT_COMPONENTS.service),
        providerEvents: recorder(EVENT_COMPONENTS.provider),
        workers: config.concurrentServiceSyncs,
        driftCheckMs: config.loadBalancerDriftPeriodMs,
        memberDrainMs: config.memberDrainPeriodMs,
        dryRun,
        metrics,
        endpoints: new ReadyEndpoints(endpointSlices.watched()),
      }).run(signal)));
    // Leaks only with --sweep-leaked-load-balancers; duplicates (several for one Service) always.
    controllers.push(once("load-balancer-sweeper", (uid, signal) =>
      new LoadBalancerSweeper({
        cloud,
        services: services.watched(),
        clusterName: config.clusterName,
        clusterUid: uid,
        periodMs: config.loadBalancerDriftPeriodMs,
        sweepLeaked: config.sweepLeakedLoadBalancers,
        events: recorder(EVENT_COMPONENTS.service),
        dryRun,
        metrics,
      }).run(signal)));
  }
  return controllers;
}
