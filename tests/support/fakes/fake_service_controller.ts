/**
 * The service controller over fakes, for the fast tier: its stores and writers are plain objects
 * (`fake_cluster.ts`), its Ankra side the in-process simulator with the real client. Short periods throughout.
 *
 * @module
 */
import { CloudView } from "../../../lib/controllers/node/cloud_view.ts";
import { ServiceController } from "../../../lib/controllers/service/service_controller.ts";
import { objectKey } from "../../../lib/kube/object_key.ts";
import type { SlimNode, SlimService } from "../../../lib/kube/slim.ts";
import type { AllowedResources } from "../../../lib/provider/service/allowed_resources.ts";
import type { Seed } from "../../../simulator/seed.ts";
import { eventually } from "../wait/eventually.ts";
import {
  eventsAbout,
  fakeNode,
  FakeServiceWriter,
  FakeStore,
  type RecordedEvent,
  RecordingEvents,
} from "./fake_cluster.ts";
import { serverSeed, startTestCloud, type TestCloud, testSeed } from "../cloud/simulator.ts";
import { slimService } from "./slim_service.ts";

/** A service controller running over fakes. */
export interface FakeServiceController extends AsyncDisposable {
  /** The simulator and its client. */
  cloud: TestCloud;
  /** The shared server list the controller reads (a test may make it list now: `refresh({ force: true })`). */
  servers: CloudView;
  /** The Services the controller reads (a test puts and changes them). */
  services: FakeStore<SlimService>;
  /** The Nodes the controller reads. */
  nodes: FakeStore<SlimNode>;
  /** Every Service write. */
  writes: FakeServiceWriter;
  /** Events of source `service-controller`. */
  serviceEvents: RecordingEvents;
  /** Events of source `ankra-cloud-ccm`. */
  providerEvents: RecordingEvents;
  /** Adds an initialised Node and its server, on net-1 at `address`. */
  addNode(name: string, address: string): void;
  /** Puts a LoadBalancer Service `default/<name>` (port 80 → 30080, IPv4) with `extra` over it. */
  addService(name: string, extra?: Partial<SlimService>): SlimService;
  /** Changes `default/<name>`'s annotations: each key set, or removed where its value is `null`. */
  annotate(name: string, annotations: Record<string, string | null>): void;
  /** Resolves with `default/<name>` once its status has an address. */
  served(name: string, timeoutMs?: number): Promise<SlimService>;
  /** The events about `default/<name>`: the service-controller's, then this provider's. */
  eventsOf(name: string): RecordedEvent[];
  /** The nodes holding ready endpoints, by Service key (`externalTrafficPolicy: Local`). */
  endpoints: FakeEndpoints;
}

/**
 * The nodes holding ready endpoints of each Service, as the controller reads them from EndpointSlices: synced from the
 * start; {@linkcode FakeEndpoints.set} changes a Service's and tells the controller.
 */
export class FakeEndpoints {
  readonly #nodes = new Map<string, ReadonlySet<string>>();
  readonly #listeners: ((service: string) => void)[] = [];
  /** Always synced. */
  readonly hasSynced = true;
  /** Resolved. */
  readonly synced: Promise<void> = Promise.resolve();

  /** Listens to changes. */
  onChange(listener: (service: string) => void): void {
    this.#listeners.push(listener);
  }

  /** The nodes holding a ready endpoint of `service` (none unless set). */
  readyNodes(service: string): ReadonlySet<string> {
    return this.#nodes.get(service) ?? new Set();
  }

  /** Sets the nodes holding ready endpoints of `default/<name>` and tells the listeners. */
  set(name: string, nodes: string[]): void {
    this.#nodes.set(`default/${name}`, new Set(nodes));
    for (const listener of this.#listeners) listener(`default/${name}`);
  }
}

/** Options of {@linkcode startFakeServiceController}. */
export interface FakeServiceControllerOptions {
  /** Simulator seed (default: the test seed, creates taking 300 ms). */
  seed?: Seed;
  /** Drift-check period (default 10 min: only what a test does wakes a Service). */
  driftCheckMs?: number;
  /** The default network (default `net-1`; `null`: none configured, the nodes' shared one is used). */
  networkId?: string | null;
  /** `--load-balancer-class`. */
  loadBalancerClass?: string;
  /** The certificates, edges and networks Services may name (default: all). */
  allowedResources?: AllowedResources;
  /**
   * The shared server list's period (`--server-list-period`); default: the list runs only when a node-address pass
   * asks for it (before its first list, or for a server it has not listed).
   */
  serverListPeriodMs?: number;
}

/** Starts the controller over fakes; `await using` stops it and the simulator. */
export async function startFakeServiceController(
  options: FakeServiceControllerOptions = {},
): Promise<FakeServiceController> {
  const cloud = await startTestCloud(options.seed ?? testSeed({ settings: { load_balancer_create_delay_ms: 100 } }));
  const services = new FakeStore<SlimService>(objectKey);
  const nodes = new FakeStore<SlimNode>((node) => node.name);
  const writes = new FakeServiceWriter(services);
  const serviceEvents = new RecordingEvents();
  const providerEvents = new RecordingEvents();
  const endpoints = new FakeEndpoints();
  const servers = new CloudView(cloud.client, {
    refreshPeriodMs: options.serverListPeriodMs ?? 60_000,
    minRefreshIntervalMs: 100,
  });
  const controller = new ServiceController({
    endpoints,
    writes,
    serverVersion: () => Promise.resolve("v1.35.4"),
    cloud: cloud.client,
    servers,
    services,
    nodes,
    clusterName: "unit",
    clusterUid: "uid-unit",
    loadBalancerClass: options.loadBalancerClass,
    allowedResources: options.allowedResources,
    defaults: {
      networkId: options.networkId === null ? undefined : (options.networkId ?? "net-1"),
      highAvailability: "auto",
    },
    serviceEvents,
    providerEvents,
    workers: 2,
    provisioningPollMs: 50,
    driftCheckMs: options.driftCheckMs ?? 600_000,
    nodeBatchMs: 50,
    endpointBatchMs: 50,
    retryBaseMs: 50,
  });
  const stop = new AbortController();
  const running = Promise.all([
    controller.run(stop.signal),
    options.serverListPeriodMs === undefined ? undefined : servers.run(stop.signal),
  ]);
  return {
    endpoints,
    cloud,
    servers,
    services,
    nodes,
    writes,
    serviceEvents,
    providerEvents,
    addNode(name, address) {
      cloud.simulator.sim.world.addServer(serverSeed({
        id: `srv-${name}`,
        hostname: name,
        zone: "de-fsn1",
        interfaces: [{ network_id: "net-1", address }],
      }));
      nodes.put(fakeNode(name, {
        providerID: `ankracloud://de-fsn1/srv-${name}`,
        addresses: [{ type: "InternalIP", address }, { type: "Hostname", address: name }],
      }));
    },
    addService(name, extra = {}) {
      const service = slimService({ namespace: "default", name, uid: `uid-${name}`, generation: 1, ...extra });
      services.put(service);
      return service;
    },
    annotate(name, annotations) {
      services.update(`default/${name}`, (copy) => {
        for (const [key, value] of Object.entries(annotations)) {
          if (value === null) delete copy.annotations[key];
          else copy.annotations[key] = value;
        }
      });
    },
    served(name, timeoutMs = 10_000) {
      return eventually(() => {
        const service = services.store.get(`default/${name}`);
        return service?.ingress.length ? service : undefined;
      }, { what: `default/${name}'s address`, timeoutMs });
    },
    eventsOf(name) {
      return eventsAbout(`Service default/${name}`, serviceEvents, providerEvents);
    },
    async [Symbol.asyncDispose]() {
      stop.abort();
      await running;
      await cloud[Symbol.asyncDispose]();
    },
  };
}
