/**
 * An in-process simulator and a client for it, for tests.
 *
 * @module
 */
import { AnkraCloudClient, type ClientOptions } from "../../../lib/cloud/client.ts";
import { type RunningSimulator, startSimulator } from "../../../simulator/server.ts";
import * as v from "valibot";
import type { SharedControlPlane } from "../control_plane/control_plane.ts";
import { kubeletNode, kubeOk } from "../http/kube_http.ts";
import { parseSeed, type Seed, type SeedServer, SeedServerSchema } from "../../../simulator/seed.ts";

/** The operate-scope token every test simulator knows. */
export const TEST_TOKEN = "act_dGVzdC10b2tlbi1vcGVyYXRlLXNjb3BlLXh4eHh4eA";
/** A read-only token every test simulator knows. */
export const READ_ONLY_TOKEN = "act_cmVhZC1vbmx5LXRva2VuLWZvci10ZXN0cy14eHh4";

/** A seed for tests: two zones in one region, one network, fast life cycles; `extra` is merged over it. */
export function testSeed(extra: Record<string, unknown> = {}): Seed {
  const base = {
    settings: {
      load_balancer_create_delay_ms: 300,
      load_balancer_delete_delay_ms: 200,
      edge_sync_delay_ms: 200,
      rate_limit_per_minute: 100_000,
    },
    tokens: [{ token: TEST_TOKEN, scope: "read_write" }, { token: READ_ONLY_TOKEN, scope: "read" }],
    zones: [
      { name: "de-fsn1", region: "eu-central", display_name: "Falkenstein 1", compute_nodes: 2, servers: 3 },
      { name: "de-fsn2", region: "eu-central", display_name: "Falkenstein 2", compute_nodes: 1 },
    ],
    networks: [{ id: "net-1", name: "private", zone: "de-fsn1", cidr: "10.0.0.0/16", ula_prefix: "fd64:1:0:1::/64" }],
  };
  const merged: Record<string, unknown> = { ...base, ...extra };
  merged.settings = { ...base.settings, ...(extra.settings as object ?? {}) };
  return parseSeed(merged);
}

/** A running test simulator with a client. */
export interface TestCloud extends AsyncDisposable {
  /** The simulator. */
  simulator: RunningSimulator;
  /** A client using {@linkcode TEST_TOKEN}. */
  client: AnkraCloudClient;
  /** A client with another token or options. */
  clientWith(
    options: { token?: string } & ClientOptions & { maxRequestsPerMinute?: number; burst?: number; timeoutMs?: number },
  ): AnkraCloudClient;
}

/** Options of {@linkcode startTestCloud}: the client's, and the simulator's clock. */
export type TestCloudOptions = ClientOptions & {
  maxRequestsPerMinute?: number;
  burst?: number;
  timeoutMs?: number;
  /** The simulator's clock in milliseconds (default `Date.now`): a test moves life cycles on by moving it. */
  simulatorClock?: () => number;
};

/** Starts a simulator with `seed` and a client; `await using` stops both. */
export async function startTestCloud(
  seed: Seed = testSeed(),
  clientOptions: TestCloudOptions = {},
): Promise<TestCloud> {
  const { simulatorClock, ...forClient } = clientOptions;
  const simulator = await startSimulator({ seed, clock: simulatorClock });
  const clients: AnkraCloudClient[] = [];
  const clientWith: TestCloud["clientWith"] = (options) => {
    const client = new AnkraCloudClient({
      apiUrl: simulator.url,
      token: options.token ?? TEST_TOKEN,
      maxRequestsPerMinute: options.maxRequestsPerMinute,
      requestBurst: options.burst,
      requestTimeoutMs: options.timeoutMs ?? 5_000,
    }, { retry: { baseDelayMs: 20, maxDelayMs: 200 }, ...options });
    clients.push(client);
    return client;
  };
  const client = clientWith(forClient);
  return {
    simulator,
    client,
    clientWith,
    async [Symbol.asyncDispose]() {
      for (const c of clients) c.close();
      await simulator.stop();
    },
  };
}

/** A server for `world.addServer`, with the seed file's defaults (plan, state `started`, no labels or legs). */
export function serverSeed(input: v.InferInput<typeof SeedServerSchema>): SeedServer {
  return v.parse(SeedServerSchema, input);
}

/**
 * An initialised Node (providerID, zone label, no taints) in the control plane, and its server in the simulator's
 * world at `address` on net-1 — so the Node is a load balancer member at that address.
 */
export async function createServedNode(
  plane: SharedControlPlane,
  world: { addServer(server: SeedServer): unknown },
  options: { name: string; address: string },
): Promise<void> {
  const { name, address } = options;
  world.addServer(serverSeed({
    id: `srv-${name}`,
    hostname: name,
    zone: "de-fsn1",
    interfaces: [{ network_id: "net-1", address }],
  }));
  const body = kubeletNode(name, {
    providerID: `ankracloud://de-fsn1/srv-${name}`,
    labels: { "topology.kubernetes.io/zone": "de-fsn1" },
    addresses: [{ type: "InternalIP", address }],
  }) as { spec: { taints: unknown[] } };
  body.spec.taints = [];
  await kubeOk(plane, "POST", "/api/v1/nodes", { body });
}

/**
 * Creates a load balancer in the simulator through its API with `labels`, in de-fsn1 on net-1 without a public IPv4,
 * as another controller, a script or a person would (the leak sweep, duplicate, cleanup, identity and directory tests);
 * its id.
 */
export async function createLabelledLoadBalancer(
  cloud: TestCloud,
  name: string,
  labels: Record<string, string>,
): Promise<string> {
  const { loadBalancer } = await cloud.client.createLoadBalancer({
    zone: "de-fsn1",
    name,
    network_id: "net-1",
    labels,
    public_ipv4: false,
  });
  return loadBalancer.id;
}
