/**
 * The service controller running in this process against the test control plane and a simulator, with short
 * periods, for end-to-end tests.
 *
 * @module
 */
import type { V1Service } from "@kubernetes/client-node";
import { CloudView } from "../../../lib/controllers/node/cloud_view.ts";
import { ServiceController } from "../../../lib/controllers/service/service_controller.ts";
import type { KubeClient } from "../../../lib/kube/client.ts";
import { serviceWriter } from "../../../lib/kube/service_writes.ts";
import { EventRecorder } from "../../../lib/kube/events.ts";
import { Informer } from "../../../lib/kube/informer.ts";
import { nodeInformer, serviceInformer } from "../../../lib/kube/cluster_informers.ts";
import { endpointSliceInformer, ReadyEndpoints } from "../../../lib/kube/endpoint_slices.ts";
import type { SlimService } from "../../../lib/kube/slim.ts";
import type { MetricsRegistry } from "../../../lib/runtime/metrics.ts";
import type { AllowedResources } from "../../../lib/provider/service/allowed_resources.ts";
import type { Seed } from "../../../simulator/seed.ts";
import { readClusterUid } from "../../../lib/controllers/cluster_identity.ts";
import { type SharedControlPlane, testControlPlane } from "../control_plane/control_plane.ts";
import { addNodeServersTo } from "./service_fixtures.ts";
import { testKubeClients } from "./kube_clients.ts";
import { startTestCloud, type TestCloud, testSeed } from "../cloud/simulator.ts";

/** A running service controller. */
export interface RunningServiceController extends AsyncDisposable {
  /** Simulator and client. */
  cloud: TestCloud;
  /** Admin client. */
  kube: KubeClient;
  /** The UID the controller labels its load balancers with (the `kube-system` namespace's, unless given). */
  clusterUid: string;
  /** Services informer. */
  services: Informer<V1Service, SlimService>;
  /** Stops the controller (not the simulator), as a crash would. */
  stopController(): Promise<void>;
  /** Starts a fresh controller against the same simulator (a restart). */
  startController(): void;
}

/** Options. */
export interface ServiceControllerTestOptions {
  /** Seed (default: test seed with a 300 ms create delay). */
  seed?: Seed;
  /** Cluster name (default `test`). */
  clusterName?: string;
  /** Default network (default `net-1`). */
  networkId?: string | null;
  /** HA mode (default auto). */
  highAvailability?: "auto" | "true" | "false";
  /** `--load-balancer-class`. */
  loadBalancerClass?: string;
  /** `--require-load-balancer-class`. */
  requireLoadBalancerClass?: boolean;
  /** Drift-check period (default 2 s). */
  driftCheckMs?: number;
  /** `--member-drain-period` (default 0: members leave at once). */
  memberDrainMs?: number;
  /** Metrics registry the controller reports to. */
  metrics?: MetricsRegistry;
  /** The certificates, edges and networks Services may name (default: all). */
  allowedResources?: AllowedResources;
  /** The cluster's UID (default: the `kube-system` namespace's, read as the controller reads it). */
  clusterUid?: string;
  /** The control plane (default: the test run's shared one). */
  plane?: SharedControlPlane;
  /** A simulator shared with another controller: not stopped with this one, and its servers are the caller's. */
  cloud?: TestCloud;
}

/** Starts informers and the service controller. */
export async function startServiceController(
  options: ServiceControllerTestOptions = {},
): Promise<RunningServiceController> {
  const plane = options.plane ?? testControlPlane();
  const cloud = options.cloud ?? await startTestCloud(options.seed ?? testSeed());
  if (!options.cloud) addNodeServersTo(cloud.simulator.sim.world);
  // The controllers run as the chart's RBAC allows, not as the admin the test acts as.
  const clients = await testKubeClients(plane);
  const { kube, controllerKube } = clients;
  const informerStop = new AbortController();
  const nodes = nodeInformer(controllerKube);
  const services = serviceInformer(controllerKube);
  const endpointSlices = endpointSliceInformer(controllerKube);
  const endpoints = new ReadyEndpoints(endpointSlices.watched());
  const informers = [
    nodes.run(informerStop.signal),
    services.run(informerStop.signal),
    endpointSlices.run(informerStop.signal),
  ];
  await Promise.all([nodes.synced, services.synced, endpointSlices.synced]);
  const clusterUid = options.clusterUid ?? await readClusterUid(controllerKube);
  let controllerStop = new AbortController();
  let running: Promise<void> = Promise.resolve();
  const start = () => {
    controllerStop = new AbortController();
    // The shared server list, listed when a node-address pass asks for it (no node controller runs here).
    const servers = new CloudView(cloud.client, { minRefreshIntervalMs: 100 });
    running = new ServiceController({
      writes: serviceWriter({ kube: controllerKube }),
      serverVersion: () => controllerKube.serverVersion(),
      cloud: cloud.client,
      servers,
      services: services.watched(),
      nodes: nodes.watched(),
      clusterName: options.clusterName ?? "test",
      clusterUid,
      loadBalancerClass: options.loadBalancerClass,
      requireLoadBalancerClass: options.requireLoadBalancerClass,
      defaults: {
        networkId: options.networkId === null ? undefined : (options.networkId ?? "net-1"),
        highAvailability: options.highAvailability ?? "auto",
      },
      allowedResources: options.allowedResources,
      serviceEvents: new EventRecorder(controllerKube, { component: "service-controller", host: "test" }),
      providerEvents: new EventRecorder(controllerKube, { component: "ankra-cloud-ccm", host: "test" }),
      workers: 2,
      provisioningPollMs: 200,
      driftCheckMs: options.driftCheckMs ?? 2_000,
      memberDrainMs: options.memberDrainMs,
      metrics: options.metrics,
      endpoints,
      nodeBatchMs: 300,
      retryBaseMs: 300,
    }).run(controllerStop.signal);
  };
  start();
  return {
    cloud,
    kube,
    clusterUid,
    services,
    async stopController() {
      controllerStop.abort();
      await running;
    },
    startController: start,
    async [Symbol.asyncDispose]() {
      controllerStop.abort();
      await running;
      informerStop.abort();
      await Promise.all(informers);
      clients.close();
      if (options.cloud) return;
      addNodeServersTo(undefined);
      await cloud[Symbol.asyncDispose]();
    },
  };
}
