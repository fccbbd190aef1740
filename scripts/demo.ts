/**
 * The local demo: a real Kubernetes control plane, the Ankra Cloud simulator with a zone, a network and two servers,
 * the controller, two nodes registered as kubelets with `--cloud-provider=external` register them, and a
 * LoadBalancer Service — with a short timeline of what happens. Then it waits for Ctrl-C and leaves the kubeconfig
 * and the simulator URL to explore.
 *
 *     source scripts/env.sh && deno task demo
 *
 * `DEMO_EXIT_WHEN_READY=1` ends the demo once the Service has its address (used by a test).
 *
 * @module
 */
import { locateTestBinaries } from "./control_plane_session.ts";
import { startControlPlane } from "../tests/support/control_plane.ts";
import { kubeletNode, kubeOk } from "../tests/support/kube_http.ts";
import { startSimulator } from "../simulator/server.ts";
import { parseSeed } from "../simulator/seed.ts";

const TOKEN = "act_local-demo-token-" + crypto.randomUUID().slice(0, 8);
const started = performance.now();

function say(text: string): void {
  console.log(`[${((performance.now() - started) / 1000).toFixed(1).padStart(5)} s] ${text}`);
}

say("building or finding kube-apiserver and etcd (the first run builds them: about 14 minutes)");
Deno.env.set("KUBEBUILDER_ASSETS", await locateTestBinaries());
const plane = await startControlPlane();
say(`Kubernetes API ready at ${plane.url}`);
const simulator = await startSimulator({
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

const controller = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "--allow-all",
    new URL("../main.ts", import.meta.url).pathname,
    `--kubeconfig=${plane.kubeconfigPath}`,
    "--cluster-name=demo",
    "--leader-elect=false",
    "--secure-port=0",
    "--server-list-period=5s",
    "--v=0",
  ],
  env: { ANKRA_CLOUD_TOKEN: TOKEN, ANKRA_CLOUD_API_URL: simulator.url },
  stdout: "null",
  stderr: "null",
}).spawn();
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
let stopping = false;
const stop = () => stopping = true;
Deno.addSignalListener("SIGINT", stop);
Deno.addSignalListener("SIGTERM", stop);
let ready = false;
while (!stopping) {
  for (const name of ["worker-1", "worker-2"]) {
    const node = await kubeOk<
      { spec: { providerID?: string; taints?: { key: string }[] }; status: { addresses: { address: string }[] } }
    >(
      plane,
      "GET",
      `/api/v1/nodes/${name}`,
    );
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
    console.log(
      `\nExplore:\n  kubectl --kubeconfig ${plane.kubeconfigPath} get nodes,services -o wide\n` +
        `  curl ${simulator.url}/_simulator/state\n  (Ctrl-C ends the demo and removes everything)\n`,
    );
    if (Deno.env.get("DEMO_EXIT_WHEN_READY")) break;
  }
  await new Promise((resolve) => setTimeout(resolve, 250));
}

controller.kill("SIGTERM");
await controller.status;
await simulator.stop();
await plane.stop();
say("demo stopped; everything removed");
Deno.exit(ready ? 0 : 1);
