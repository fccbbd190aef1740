/**
 * The local demo: a real Kubernetes control plane, the Ankra Cloud simulator with a zone, a network and two servers,
 * the controller, two nodes registered as kubelets with `--cloud-provider=external` register them, and a
 * LoadBalancer Service — with a short timeline of what happens. Then it waits for Ctrl-C.
 *
 *     source scripts/env.sh && deno task demo
 *
 * Ctrl-C (or SIGTERM) at any moment stops the controller, the simulator and the control plane in that order, removes
 * everything the demo made (the control plane's directory with its CA key included) and exits 0. The one thing it
 * keeps on purpose is the controller's log, whose path it prints. The servers and the controller run in their own
 * process groups, so the terminal's Ctrl-C reaches only the demo, which stops them in order.
 *
 * `DEMO_EXIT_WHEN_READY=1` ends the demo once the Service has its address (used by a test).
 *
 * @module
 */
import { locateTestBinaries } from "./control_plane_session.ts";
import { type ControlPlane, startControlPlane } from "../tests/support/control_plane.ts";
import { kubeletNode, kubeOk } from "../tests/support/kube_http.ts";
import { type RunningSimulator, startSimulator } from "../simulator/server.ts";
import { parseSeed } from "../simulator/seed.ts";

const TOKEN = "act_local-demo-token-" + crypto.randomUUID().slice(0, 8);
const started = performance.now();

function say(text: string): void {
  console.log(`[${((performance.now() - started) / 1000).toFixed(1).padStart(5)} s] ${text}`);
}

/** The demo was asked to stop before it finished starting. */
class DemoStopped extends Error {}

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
let planeStarting: Promise<ControlPlane> | undefined;
const logPath = await Deno.makeTempFile({ prefix: "ankra-cloud-ccm-demo-", suffix: ".log" });
let ready = false;
let failure: unknown;

try {
  say("building or finding kube-apiserver and etcd (the first run builds them: about 14 minutes)");
  const binDir = await unlessStopped(locateTestBinaries());
  if (!binDir) throw new DemoStopped();
  Deno.env.set("KUBEBUILDER_ASSETS", binDir);
  planeStarting = startControlPlane({ ownProcessGroup: true });
  plane = await unlessStopped(planeStarting);
  if (!plane) throw new DemoStopped();
  say(`Kubernetes API ready at ${plane.url}`);
  simulator = await startSimulator({
    seed: parseSeed({
      settings: { load_balancer_create_delay_ms: 4000, edge_sync_delay_ms: 1000 },
      tokens: [{ token: TOKEN, scope: "read_write" }],
      zones: [{ name: "de-fsn1", region: "eu-central", display_name: "Falkenstein 1", compute_nodes: 2 }],
      networks: [{ id: "net-demo", name: "demo", zone: "de-fsn1", cidr: "10.0.0.0/16", ula_prefix: "fd64:d:0:1::/64" }],
      servers: ["worker-1", "worker-2"].map((hostname) => ({
        hostname,
        zone: "de-fsn1",
        plan: "standard-2c-4g",
        interfaces: [{ network_id: "net-demo" }],
      })),
    }),
  });
  say(`Ankra Cloud simulator at ${simulator.url} (control API ${simulator.url}/_simulator/state)`);
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
  say("nodes worker-1 and worker-2 registered as kubelets with --cloud-provider=external do (uninitialized taint)");
  await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
    body: {
      metadata: { name: "web" },
      spec: { type: "LoadBalancer", selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
    },
  });
  say("Service default/web of type LoadBalancer created");

  const seen = new Set<string>();
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
      say(`Service default/web has its address: ${ips.join(", ")}`);
      const events = await kubeOk<{ items: { type: string; reason: string }[] }>(
        plane,
        "GET",
        "/api/v1/namespaces/default/events",
      );
      const warnings = events.items.filter((e) => e.type === "Warning").map((e) => e.reason);
      say(warnings.length ? `Warnings on the way: ${warnings.join(", ")}` : "no Warning events on the way");
      console.log(
        `\nExplore (the kubectl the demo built):\n` +
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
  await simulator?.stop().catch(() => {});
  plane ??= await planeStarting?.catch(() => undefined);
  await plane?.stop().catch(() => {});
  Deno.removeSignalListener("SIGINT", onSignal);
  Deno.removeSignalListener("SIGTERM", onSignal);
}
if (failure) {
  console.error(`demo failed: ${failure instanceof Error ? failure.message : failure}`);
  console.error(`the controller's log: ${logPath}`);
  Deno.exit(1);
}
say(`demo stopped; everything removed except the controller's log: ${logPath}`);
Deno.exit(0);
