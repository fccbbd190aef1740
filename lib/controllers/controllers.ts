/**
 * The controllers this binary runs while it leads, chosen with `--controllers`: the shared cloud view, the
 * cloud-node and cloud-node-lifecycle controllers (and the service controller once it exists).
 *
 * @module
 */
import type { Controller, ControllerContext } from "../controller_manager.ts";
import { EventRecorder } from "../kube/events.ts";
import { CloudView } from "./cloud_view.ts";
import { NodeController } from "./node_controller.ts";
import { NodeLifecycleController } from "./node_lifecycle_controller.ts";
import { ServiceController } from "./service_controller.ts";

/** Builds the selected controllers for one term of leadership. */
export function buildControllers(context: ControllerContext): Controller[] {
  const { config, kube, cloud, nodes, services, metrics } = context;
  const host = Deno.hostname();
  const wanted = new Set(config.controllers);
  const controllers: Controller[] = [];
  if (wanted.has("cloud-node") || wanted.has("cloud-node-lifecycle")) {
    const view = new CloudView(cloud, { refreshPeriodMs: config.serverListPeriodMs });
    controllers.push({ name: "cloud-view", run: (signal) => view.run(signal) });
    if (wanted.has("cloud-node")) {
      controllers.push(
        new NodeController({
          kube,
          nodes,
          view,
          events: new EventRecorder(kube, { component: "cloud-node-controller", host, metrics }),
          refreshPeriodMs: config.nodeStatusUpdateFrequencyMs,
          workers: config.concurrentNodeSyncs,
          metrics,
        }),
      );
    }
    if (wanted.has("cloud-node-lifecycle")) {
      controllers.push(
        new NodeLifecycleController({
          kube,
          nodes,
          view,
          events: new EventRecorder(kube, { component: "cloud-node-lifecycle-controller", host, metrics }),
          periodMs: config.nodeMonitorPeriodMs,
        }),
      );
    }
  }
  if (wanted.has("service")) {
    controllers.push(
      new ServiceController({
        kube,
        cloud,
        services,
        nodes,
        clusterName: config.clusterName,
        loadBalancerClass: config.loadBalancerClass,
        defaults: {
          networkId: config.cloud.networkId,
          zone: config.cloud.zone,
          highAvailability: config.cloud.loadBalancerHighAvailability,
        },
        serviceEvents: new EventRecorder(kube, { component: "service-controller", host, metrics }),
        providerEvents: new EventRecorder(kube, { component: "ankra-cloud-ccm", host, metrics }),
        workers: config.concurrentServiceSyncs,
        metrics,
      }),
    );
  }
  return controllers;
}
