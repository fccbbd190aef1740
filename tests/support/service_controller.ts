/**
 * The service controller running in this process against the test control plane and a simulator, with short
 * periods, for end-to-end tests.
 *
 * @module
 */
import type { V1Service } from "@kubernetes/client-node";
import { ServiceController } from "../../lib/controllers/service_controller.ts";
import { KubeClient } from "../../lib/kube/client.ts";
import { EventRecorder } from "../../lib/kube/events.ts";
import { Informer } from "../../lib/kube/informer.ts";
import { nodeInformer, serviceInformer } from "../../lib/kube/cluster_informers.ts";
import { endpointSliceInformer, ReadyEndpoints } from "../../lib/kube/endpoint_slices.ts";
import type { SlimService } from "../../lib/kube/slim.ts";
import type { MetricsRegistry } from "../../lib/runtime/metrics.ts";
import type { Seed } from "../../simulator/seed.ts";
import { testControlPlane } from "./control_plane.ts";
import { addNodeServersTo } from "./service_fixtures.ts";
import { startTestCloud, type TestCloud, testSeed } from "./simulator.ts";

/** A running service controller. */
export interface RunningServiceController extends AsyncDisposable {
  /** Simulator and client. */
  cloud: TestCloud;
  /** Admin client. */
  kube: KubeClient;
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
  /** Drift-check period (default 2 s). */
  driftCheckMs?: number;
  /** Metrics registry the controller reports to. */
  metrics?: MetricsRegistry;
}

/** Starts informers and the service controller. */
export async function startServiceController(
  options: ServiceControllerTestOptions = {},
): Promise<RunningServiceController> {
  const plane = testControlPlane();
  const cloud = await startTestCloud(options.seed ?? testSeed());
  addNodeServersTo(cloud.simulator.sim.world);
  const kube = new KubeClient(
    { server: plane.url, caCerts: [plane.caCert], auth: { kind: "token", token: plane.token }, source: "test" },
    { qps: 200, burst: 200 },
  );
  const informerStop = new AbortController();
  const nodes = nodeInformer(kube);
  const services = serviceInformer(kube);
  const endpointSlices = endpointSliceInformer(kube);
  const endpoints = new ReadyEndpoints(endpointSlices);
  const informers = [
    nodes.run(informerStop.signal),
    services.run(informerStop.signal),
    endpointSlices.run(informerStop.signal),
  ];
  await Promise.all([nodes.synced, services.synced, endpointSlices.synced]);
  let controllerStop = new AbortController();
  let running: Promise<void> = Promise.resolve();
  const start = () => {
    controllerStop = new AbortController();
    running = new ServiceController({
      writes: { kube },
      cloud: cloud.client,
      services,
      nodes,
      clusterName: options.clusterName ?? "test",
      loadBalancerClass: options.loadBalancerClass,
      defaults: {
        networkId: options.networkId === null ? undefined : (options.networkId ?? "net-1"),
        highAvailability: options.highAvailability ?? "auto",
      },
      serviceEvents: new EventRecorder(kube, { component: "service-controller", host: "test" }),
      providerEvents: new EventRecorder(kube, { component: "ankra-cloud-ccm", host: "test" }),
      workers: 2,
      provisioningPollMs: 200,
      driftCheckMs: options.driftCheckMs ?? 2_000,
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
      kube.close();
      addNodeServersTo(undefined);
      await cloud[Symbol.asyncDispose]();
    },
  };
}
