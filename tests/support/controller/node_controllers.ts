/**
 * The node controllers running in this process against the test control plane and a simulator, with short periods,
 * for end-to-end tests.
 *
 * @module
 */
import type { V1Node } from "@kubernetes/client-node";
import { CloudView } from "../../../lib/controllers/node/cloud_view.ts";
import { NodeController } from "../../../lib/controllers/node/node_controller.ts";
import { NodeLifecycleController } from "../../../lib/controllers/node/node_lifecycle_controller.ts";
import type { KubeClient } from "../../../lib/kube/client.ts";
import { EventRecorder } from "../../../lib/kube/events.ts";
import { Informer } from "../../../lib/kube/informer.ts";
import { nodeInformer } from "../../../lib/kube/cluster_informers.ts";
import type { SlimNode } from "../../../lib/kube/slim.ts";
import type { Seed } from "../../../simulator/seed.ts";
import { testControlPlane } from "../control_plane/control_plane.ts";
import { startTestCloud, type TestCloud, testSeed } from "../cloud/simulator.ts";
import { nodeWriter } from "../../../lib/kube/node_writes.ts";
import { testKubeClients } from "./kube_clients.ts";

/** Running node controllers. */
export interface RunningNodeControllers extends AsyncDisposable {
  /** Simulator and client. */
  cloud: TestCloud;
  /** Admin Kubernetes client. */
  kube: KubeClient;
  /** The node informer. */
  nodes: Informer<V1Node, SlimNode>;
  /** The shared view. */
  view: CloudView;
  /** Lifecycle passes finished so far (the periodic ones and those after a node went NotReady). */
  lifecyclePasses(): number;
}

/** The lifecycle controller, counting its finished passes: a test waits on passes, not on time. */
class CountedNodeLifecycleController extends NodeLifecycleController {
  /** Passes finished. */
  passes = 0;

  /** One pass, counted once it has finished (a failed pass counts too: it ran). */
  override async monitor(): Promise<void> {
    try {
      await super.monitor();
    } finally {
      this.passes++;
    }
  }
}

/** Options of {@linkcode startNodeControllers}. */
export interface NodeControllerTestOptions {
  /** Simulator seed. */
  seed?: Seed;
  /** Server list period (default 1 s). */
  serverListPeriodMs?: number;
  /** Least time between the lists proving a server gone (default 1 s). */
  confirmAfterMs?: number;
  /** Address refresh period (default 1 s). */
  refreshPeriodMs?: number;
  /** Lifecycle period (default 200 ms). */
  monitorPeriodMs?: number;
  /** How long the Ankra Cloud client waits for an answer (default 5 s). */
  cloudTimeoutMs?: number;
}

/** Starts the informer, view and both node controllers. */
export async function startNodeControllers(options: NodeControllerTestOptions = {}): Promise<RunningNodeControllers> {
  const plane = testControlPlane();
  const cloud = await startTestCloud(options.seed ?? testSeed(), { timeoutMs: options.cloudTimeoutMs });
  // The controllers run as the chart's RBAC allows, not as the admin the test acts as.
  const clients = await testKubeClients(plane);
  const { kube, controllerKube } = clients;
  const nodes = nodeInformer(controllerKube);
  const view = new CloudView(cloud.client, {
    refreshPeriodMs: options.serverListPeriodMs ?? 1_000,
    minRefreshIntervalMs: 200,
    confirmAfterMs: options.confirmAfterMs ?? 1_000,
  });
  const lifecycle = new CountedNodeLifecycleController({
    writes: nodeWriter({ kube: controllerKube }),
    nodes: nodes.watched(),
    view,
    events: new EventRecorder(controllerKube, { component: "cloud-node-lifecycle-controller", host: "test" }),
    periodMs: options.monitorPeriodMs ?? 200,
  });
  const stop = new AbortController();
  const informerRun = nodes.run(stop.signal);
  await nodes.synced;
  const runs = [
    informerRun,
    view.run(stop.signal),
    new NodeController({
      writes: nodeWriter({ kube: controllerKube }),
      nodes: nodes.watched(),
      view,
      events: new EventRecorder(controllerKube, { component: "cloud-node-controller", host: "test" }),
      refreshPeriodMs: options.refreshPeriodMs ?? 1_000,
      workers: 2,
      retryBaseMs: 200,
    }).run(stop.signal),
    lifecycle.run(stop.signal),
  ];
  return {
    cloud,
    kube,
    nodes,
    view,
    lifecyclePasses: () => lifecycle.passes,
    async [Symbol.asyncDispose]() {
      stop.abort();
      await Promise.all(runs);
      clients.close();
      await cloud[Symbol.asyncDispose]();
    },
  };
}

/** Waits until a condition holds; kept here for the tests that import it from this module. */
export { eventually } from "../wait/eventually.ts";
