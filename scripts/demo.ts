/**
 * The local demo: a real Kubernetes control plane, the Ankra Cloud simulator with a zone, a network and two servers,
 * the controller, two nodes registered as a kubelet with `--cloud-provider=external` registers its node (tainted
 * `node.cloudprovider.kubernetes.io/uninitialized`), and a LoadBalancer Service — with a short timeline of what
 * happens. The simulator's data plane runs in `loopback` mode — its load balancers are HAProxy processes, as Ankra's
 * are (Debian's package `haproxy`): the servers' network is inside 127.0.0.0/8, each Node runs a small echo server on
 * the Service's node port, and the timeline ends with a request to the Service's published IPv4 answered by a Node
 * through the load balancer (the demo prints the `curl` to repeat it). Then it waits for Ctrl-C.
 *
 *     source scripts/env.sh && deno task demo
 *
 * Ctrl-C (or SIGTERM) at any moment stops the controller, the simulator and the control plane in that order, removes
 * everything the demo made (the control plane's directory with its CA key included) and exits 0. The one thing it
 * keeps on purpose is the controller's log, whose path it prints. The servers and the controller run in their own
 * process groups, so the terminal's Ctrl-C reaches only the demo, which stops them in order.
 *
 * `DEMO_EXIT_WHEN_READY=1` ends the demo once a request through the Service's address is answered (used by a test).
 *
 * @module
 */
import { EVENT_COMPONENTS } from "../lib/controllers/controllers.ts";
import { locateTestBinaries } from "./control_plane_session.ts";
import { type ControlPlane, startControlPlane } from "../tests/support/control_plane/control_plane.ts";
import { kubeletNode, kubeOk } from "../tests/support/http/kube_http.ts";
import { type RunningSimulator, startSimulator } from "../simulator/server.ts";
import { parseSeed } from "../simulator/seed.ts";

const TOKEN = "act_local-demo-token-" + crypto.randomUUID().slice(0, 8);
/** The Service's port: above 1024, so the loopback data plane binds it without privileges. */
const SERVICE_PORT = 8080;
const started = performance.now();

function say(text: string): void {
  console.log(`[${((performance.now() - started) / 1000).toFixed(1).padStart(5)} s] ${text}`);
}

/** The demo was asked to stop before it finished starting. */
class DemoStopped extends Error {}

/** The machine lacks something the demo needs; scripts/prerequisites.sh has said what and how to install it. */
class MissingPrerequisites extends Error {}

let stopping = false;
const interrupted = Promise.withResolvers<void>();
const onSignal = () => {
  if (!stopping) say("stopping (Ctrl-C)");
  stopping = true;
  interrupted.resolve();
};
Deno.addSignalListener("SIGINT", onSignal);
Deno.addSignalListener("SIGTERM", onSignal);

/** Waits for `work`, or returns undefined as soon as the demo is asked to stop. */
async function unlessStopped<T>(work: Promise<T>): Promise<T | undefined> {
  const result = await Promise.race([work, interrupted.promise.then(() => undefined)]);
  if (stopping) work.catch(() => {}); // finishes (or fails) on its own; cleanup stops what it started
  return stopping ? undefined : result;
}

let plane: ControlPlane | undefined;
let simulator: RunningSimulator | undefined;
let controller: Deno.ChildProcess | undefined;
const echoServers: Deno.HttpServer[] = [];
let planeStarting: Promise<ControlPlane> | undefined;
const logPath = await Deno.makeTempFile({ prefix: "ankra-cloud-ccm-demo-", suffix: ".log" });
let ready = false;
let failure: unknown;

try {
  // What the demo needs that a fresh Debian machine may lack (HAProxy above all), before anything is built.
  const prerequisites = await new Deno.Command("bash", {
    args: [new URL("./prerequisites.sh", import.meta.url).pathname, "demo"],
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (!prerequisites.success) throw new MissingPrerequisites();
  say("building or finding kube-apiserver, kubectl, etcd and helm (the first run builds them: about 10 minutes)");
  const binDir = await unlessStopped(locateTestBinaries());
  if (!binDir) throw new DemoStopped();
  Deno.env.set("KUBEBUILDER_ASSETS", binDir);
  planeStarting = startControlPlane({ ownProcessGroup: true });
  plane = await unlessStopped(planeStarting);
  if (!plane) throw new DemoStopped();
  say(`Kubernetes API ready at ${plane.url}`);
  simulator = await startSimulator({
    seed: parseSeed({
      settings: { load_balancer_create_delay_ms: 4000, edge_sync_delay_ms: 1000, data_plane: "loopback" },
      tokens: [{ token: TOKEN, scope: "read_write" }],
      zones: [{ name: "de-fsn1", region: "eu-central", display_name: "Falkenstein 1", compute_nodes: 2 }],
      // Inside 127.0.0.0/8: the Nodes' addresses are local, so the load balancer's connections reach their echo servers.
      networks: [{
        id: "net-demo",
        name: "demo",
        zone: "de-fsn1",
        cidr: "127.10.0.0/16",
        ula_prefix: "fd64:d:0:1::/64",
      }],
      servers: ["worker-1", "worker-2"].map((hostname) => ({
        hostname,
        zone: "de-fsn1",
        plan: "standard-2c-4g",
        interfaces: [{ network_id: "net-demo" }],
      })),
    }),
  });
  say(
    `Ankra Cloud simulator at ${simulator.url} (control API ${simulator.url}/_simulator/state), its load balancers ` +
      `carrying traffic on loopback through HAProxy (public IPv4 from ${simulator.sim.world.settings.loopback_ipv4_range})`,
  );
  const log = await Deno.open(logPath, { write: true, append: true });
  controller = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      new URL("../main.ts", import.meta.url).pathname,
      `--kubeconfig=${plane.kubeconfigPath}`,
      "--cluster-name=demo",
      "--leader-elect=false",
      "--secure-port=0",
      "--server-list-period=5s",
      "--v=2",
    ],
    env: { ANKRA_CLOUD_TOKEN: TOKEN, ANKRA_CLOUD_API_URL: simulator.url },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  // Both streams into the kept log file.
  const copy = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) {
      for (let written = 0; written < chunk.length;) written += log.writeSync(chunk.subarray(written));
    }
  };
  Promise.all([copy(controller.stdout), copy(controller.stderr)]).finally(() => log.close()).catch(() => {});
  say("controller started (ankra-cloud-ccm --cluster-name=demo)");

  for (const name of ["worker-1", "worker-2"]) {
    await kubeOk(plane, "POST", "/api/v1/nodes", { body: kubeletNode(name) });
  }
  say(
    "nodes worker-1 and worker-2 registered, as a kubelet with --cloud-provider=external registers its node: " +
      "tainted node.cloudprovider.kubernetes.io/uninitialized until the controller initialises them",
  );
  const created = await kubeOk<{ spec: { ports: { nodePort: number }[] } }>(
    plane,
    "POST",
    "/api/v1/namespaces/default/services",
    {
      body: {
        metadata: { name: "web", annotations: { "load-balancer.ankra.cloud/ipv4": "true" } },
        spec: {
          type: "LoadBalancer",
          selector: { app: "web" },
          ports: [{ name: "http", port: SERVICE_PORT, targetPort: 8080 }],
        },
      },
    },
  );
  const nodePort = created.spec.ports[0].nodePort;
  say(`Service default/web of type LoadBalancer created (port ${SERVICE_PORT}, node port ${nodePort})`);
  for (const server of simulator.sim.world.servers.values()) {
    const address = server.interfaces[0].address;
    echoServers.push(
      Deno.serve({ hostname: address, port: nodePort, onListen: () => {} }, (_request, info) =>
        new Response(
          `hello from ${server.hostname} (${address}:${nodePort}); the load balancer connected from ` +
            `${info.remoteAddr.hostname}\n`,
        )),
    );
  }
  say(`an echo server on each node's address at the node port ${nodePort} (worker-1, worker-2)`);

  const seen = new Set<string>();
  let published: string | undefined;
  let answered = false;
  let readyAt = 0;
  const once = (key: string, text: string) => {
    if (!seen.has(key)) {
      seen.add(key);
      say(text);
    }
  };
  while (!stopping) {
    for (const name of ["worker-1", "worker-2"]) {
      const node = await kubeOk<
        { spec: { providerID?: string; taints?: { key: string }[] }; status: { addresses: { address: string }[] } }
      >(plane, "GET", `/api/v1/nodes/${name}`);
      if (node.spec.providerID && !node.spec.taints?.some((t) => t.key.includes("uninitialized"))) {
        once(
          `node-${name}`,
          `node ${name} initialised: ${node.spec.providerID}, addresses ${
            node.status.addresses.map((a) => a.address).join(", ")
          }`,
        );
      }
    }
    for (const lb of simulator.sim.loadBalancers.items.values()) {
      once(`lb-${lb.id}-${lb.state}`, `load balancer ${lb.name} (${lb.id}) is ${lb.state}`);
    }
    const service = await kubeOk<{ status: { loadBalancer?: { ingress?: { ip: string }[] } } }>(
      plane,
      "GET",
      "/api/v1/namespaces/default/services/web",
    );
    const ips = service.status.loadBalancer?.ingress?.map((i) => i.ip) ?? [];
    if (ips.length > 0 && !ready) {
      ready = true;
      readyAt = performance.now();
      published = ips.find((ip) => !ip.includes(":"));
      say(`Service default/web has its address: ${ips.join(", ")}`);
      const events = await kubeOk<{ items: DemoEvent[] }>(plane, "GET", "/api/v1/namespaces/default/events");
      const { ours, kubernetes } = warningsBySource(events.items);
      say(
        ours.length
          ? `Warnings from the controller on the way: ${ours.join(", ")}`
          : "no Warning events from the controller on the way",
      );
      // The API server's own repair loop may warn about a Service created a moment after it started
      // (ClusterIPNotAllocated: its IPAddress informer had not seen the new address yet); shown, not the controller's.
      if (kubernetes.length) say(`Warnings from Kubernetes itself: ${kubernetes.join(", ")}`);
    }
    // The request goes once both members are up (or after 30 s, to show why it fails).
    const waited = performance.now() - readyAt > 30_000;
    if (ready && !answered && (!published || waited || await membersUp(simulator))) {
      answered = true;
      const url = `http://${published}:${SERVICE_PORT}/`;
      if (!published) say("the Service has no IPv4 address: the loopback data plane serves IPv4 only");
      else {
        try {
          const text = (await (await fetch(url)).text()).trim();
          say(`request to ${url} answered through the load balancer: ${text}`);
        } catch (cause) {
          say(`request to ${url} failed: ${(cause as Error).message} (see ${simulator.url}/_simulator/state)`);
        }
      }
      console.log(
        `\nExplore (the kubectl the demo built):\n` +
          (published ? `  curl ${url}                 # answered by a Node through the load balancer\n` : "") +
          `  ${binDir}/kubectl --kubeconfig ${plane.kubeconfigPath} get nodes,services -o wide\n` +
          `  ${binDir}/kubectl --kubeconfig ${plane.kubeconfigPath} get events\n` +
          `  curl ${simulator.url}/_simulator/state\n` +
          `  the controller's log: ${logPath}\n` +
          "  (Ctrl-C ends the demo and removes everything but that log)\n",
      );
      if (Deno.env.get("DEMO_EXIT_WHEN_READY")) break;
    }
    await Promise.race([new Promise((resolve) => setTimeout(resolve, 250)), interrupted.promise]);
  }
} catch (cause) {
  // Requests fail once the demo is stopping; anything else is a real failure.
  if (!stopping && !(cause instanceof DemoStopped)) failure = cause;
} finally {
  if (controller) {
    try {
      controller.kill("SIGTERM");
    } catch { /* already gone */ }
    await controller.status;
  }
  await Promise.all(echoServers.map((server) => server.shutdown().catch(() => {})));
  await simulator?.stop().catch(() => {});
  plane ??= await planeStarting?.catch(() => undefined);
  await plane?.stop().catch(() => {});
  Deno.removeSignalListener("SIGINT", onSignal);
  Deno.removeSignalListener("SIGTERM", onSignal);
}
/** An Event as the demo reads it: core/v1 carries the reporter in `reportingComponent` or, for older writers, `source`. */
interface DemoEvent {
  type: string;
  reason: string;
  reportingComponent?: string;
  source?: { component?: string };
}

/** The components the controller's events are reported by. */
const CONTROLLER_COMPONENTS: ReadonlySet<string> = new Set(Object.values(EVENT_COMPONENTS));

/** Warning reasons split into the controller's and the rest of Kubernetes' (named with their component). */
function warningsBySource(events: DemoEvent[]): { ours: string[]; kubernetes: string[] } {
  const ours: string[] = [];
  const kubernetes: string[] = [];
  for (const event of events.filter((e) => e.type === "Warning")) {
    const component = event.reportingComponent || event.source?.component || "";
    if (CONTROLLER_COMPONENTS.has(component)) ours.push(event.reason);
    else kubernetes.push(`${event.reason} (${component || "unnamed"})`);
  }
  return { ours, kubernetes };
}

/** True when the demo's load balancer has members on both Nodes and the data plane counts them up. */
async function membersUp(running: RunningSimulator): Promise<boolean> {
  const state = await (await fetch(`${running.url}/_simulator/state`)).json() as {
    load_balancers: { backends: { members: { health: string | null }[] }[] }[];
  };
  const members = state.load_balancers.flatMap((lb) => lb.backends.flatMap((b) => b.members));
  return members.length === 2 && members.every((m) => m.health === "up");
}

if (failure instanceof MissingPrerequisites) {
  await Deno.remove(logPath).catch(() => {});
  console.error("demo: stopped before building anything; install what is named above, then run it again");
  Deno.exit(1);
}
if (failure) {
  console.error(`demo failed: ${failure instanceof Error ? failure.message : failure}`);
  console.error(`the controller's log: ${logPath}`);
  Deno.exit(1);
}
say(`demo stopped; everything removed except the controller's log: ${logPath}`);
Deno.exit(0);
