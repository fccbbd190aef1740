/**
 * `ankra-cloud-ccm doctor` for a cluster served on node addresses, end to end: the real kube-apiserver, the Ankra
 * Cloud simulator served over TLS, and the doctor as a user runs it (`main.ts doctor`, the release launcher's
 * permissions). A single k3s server with no private network, `--default-load-balancer-mode=node-addresses` and a
 * read-only token minted through the simulator's control API passes (exit 0): the load-balancer checks and the token's
 * operate check are skipped saying why, in the text and in the JSON, and the doctor sends Ankra Cloud nothing but
 * reads — no operate probe, no network or zone read. One Service asking for a load balancer brings every one of them
 * back. A hostNetwork pod taking a node-address Service's port on its node is named; with the controller's own
 * identity, which may not list pods, that check is skipped saying what to do.
 *
 * Every test starts from a cluster without Nodes and without the Leases the doctor reads, and removes its Services and
 * pods however it ends (test files run one after another, so this touches no other test's objects).
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { controllerKubeconfig } from "../support/controller/controller_identity.ts";
import { runMain } from "../support/doctor/doctor_command.ts";
import {
  addServer,
  cloudEnv,
  createNode,
  doctor,
  type DoctorCloud,
  onCleanCluster,
  startCloud,
  writesOf,
} from "../support/doctor/doctor_world.ts";
import { kubeOk, kubeRequest } from "../support/http/kube_http.ts";

const NS = "default";
const SERVICES = `/api/v1/namespaces/${NS}/services`;
const PODS = `/api/v1/namespaces/${NS}/pods`;

/**
 * One k3s server, set up as the k3s guide says, on an Ankra server with no private network (its public IPv6 and the
 * IPv4 add-on), and Traefik's Service on 80 and 443 (class-less: the default mode serves it on node addresses).
 */
async function k3sSingleNode(cloud: DoctorCloud) {
  const name = uniqueName("k3s-one");
  const server = addServer(cloud, name, "de-fsn1", []);
  cloud.simulator.sim.world.changePublicAddresses(server, { public_ipv4: "198.51.100.40" });
  await createNode(name, { providerID: `ankracloud://de-fsn1/${server.id}`, initialised: true });
  const traefik = uniqueName("traefik");
  await kubeOk(testControlPlane(), "POST", SERVICES, {
    body: {
      metadata: { name: traefik, namespace: NS },
      spec: {
        type: "LoadBalancer",
        selector: { app: traefik },
        ports: [{ name: "web", port: 80, targetPort: 8000 }, { name: "websecure", port: 443, targetPort: 8443 }],
      },
    },
  });
  return { name, traefik };
}

/** Deletes the Services and pods named (pods at once: no kubelet runs here to confirm a graceful deletion). */
async function remove(services: string[], pods: string[] = []): Promise<void> {
  const plane = testControlPlane();
  for (const name of services) await kubeRequest(plane, "DELETE", `${SERVICES}/${name}`);
  for (const name of pods) {
    await kubeRequest(plane, "DELETE", `${PODS}/${name}`, { body: { gracePeriodSeconds: 0 } });
  }
}

/** A read-only token minted through the simulator's control API, as a test of a real setup would. */
async function mintReadOnlyToken(cloud: DoctorCloud): Promise<string> {
  const token = `act_${crypto.randomUUID().replaceAll("-", "")}`;
  const response = await fetch(`${cloud.simulator.url}/_simulator/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token, scope: "read" }),
    client: Deno.createHttpClient({ caCerts: [await Deno.readTextFile(testControlPlane().caFile)] }),
  });
  assert.equal(response.status, 201, await response.text());
  return token;
}

Deno.test(
  "a single k3s server on node addresses with a read-only token: exit 0, what does not apply skipped, no write",
  onCleanCluster(async () => {
    await using cloud = await startCloud();
    const { traefik } = await k3sSingleNode(cloud);
    try {
      const token = await mintReadOnlyToken(cloud);
      const args = [
        "doctor",
        `--kubeconfig=${testControlPlane().kubeconfigPath}`,
        "--default-load-balancer-mode=node-addresses",
      ];
      const env = cloudEnv(cloud, { ANKRA_CLOUD_TOKEN: token });
      const text = await runMain(args, env);
      assert.equal(text.code, 0, text.stdout + text.stderr);
      assert.match(
        text.stdout,
        /\n− API token may make changes \(operate\): skipped: the token need not make changes: /,
      );
      assert.match(text.stdout, /a read-only token is enough\n/);
      assert.match(
        text.stdout,
        /\n− One private network for load balancers: skipped: no Ankra load balancer is needed: /,
      );
      assert.match(text.stdout, /\n✓ Node-address Services: serving nodes have public addresses/);
      // The six load-balancer checks, duplicate load balancers (nothing to operate on) and server labels (not asked for).
      assert.match(text.stdout, /0 failed, 0 warnings, 8 skipped: ready\n$/);

      const json = await runMain([...args, "--output=json"], env);
      assert.equal(json.code, 0, json.stdout + json.stderr);
      const document = JSON.parse(json.stdout) as {
        ok: boolean;
        findings: { id: string; status: string; result: string }[];
      };
      assert.equal(document.ok, true);
      const by = Object.fromEntries(document.findings.map((f) => [f.id, f]));
      for (const id of ["account-can-create", "load-balancer-quota", "private-network", "zone-capabilities"]) {
        assert.equal(by[id].status, "skip", id);
        assert.match(
          by[id].result,
          new RegExp(
            `^skipped: no Ankra load balancer is needed: every LoadBalancer Service is served on node ` +
              `addresses \\(.*default/${traefik}.*\\) and a new one would be too \\(--default-load-balancer-mode=node-addresses\\)`,
          ),
        );
      }
      for (const id of ["token-operate", "cluster-name-unique", "duplicate-load-balancers"]) {
        assert.equal(by[id].status, "skip", id);
      }
      for (const id of ["token-valid", "nodes-matched", "node-addresses", "node-address-ports", "ipv6-renumber"]) {
        assert.equal(by[id].status, "pass", `${id}: ${by[id].result}`);
      }
      assert.match(by["node-addresses"].result, new RegExp(`default/${traefik}`));
      assert.deepEqual(writesOf(cloud), [], "no operate probe, no write at all");
      for (const read of ["list_networks", "get_network", "get_zone_capabilities"]) {
        assert.equal(cloud.simulator.sim.count(read), 0, `${read}: nothing a load balancer needs is read`);
      }
      assert.ok(
        cloud.simulator.sim.count("list_servers") >= 2 && cloud.simulator.sim.count("list_load_balancers") >= 2,
      );

      // One Service asks for an Ankra load balancer: its needs are back, and the read-only token and the missing
      // private network fail.
      await kubeOk(testControlPlane(), "PATCH", `${SERVICES}/${traefik}`, {
        patch: "merge",
        body: { metadata: { annotations: { "load-balancer.ankra.cloud/mode": "load-balancer" } } },
      });
      const withLoadBalancer = await runMain(args, env);
      assert.equal(withLoadBalancer.code, 1, withLoadBalancer.stdout);
      assert.match(
        withLoadBalancer.stdout,
        /\n✗ API token may make changes \(operate\): the token may not make changes/,
      );
      assert.match(withLoadBalancer.stdout, /\n✗ One private network for load balancers: /);
      assert.deepEqual(writesOf(cloud).map((w) => [w.operation, w.status]), [["create_load_balancer", 403]]);
    } finally {
      await remove([traefik]);
    }
  }),
);

Deno.test(
  "a hostNetwork pod taking a node-address Service's port on a serving node is named; without pod access, said",
  onCleanCluster(async () => {
    await using cloud = await startCloud();
    const { name, traefik } = await k3sSingleNode(cloud);
    const ingress = uniqueName("nginx-host");
    try {
      await kubeOk(testControlPlane(), "POST", PODS, {
        body: {
          metadata: { name: ingress, namespace: NS, labels: { app: ingress } },
          spec: {
            nodeName: name,
            hostNetwork: true,
            containers: [{ name: "nginx", image: "nginx", ports: [{ containerPort: 80 }, { containerPort: 10254 }] }],
          },
        },
      });
      const env = cloudEnv(cloud);
      const flags = ["--default-load-balancer-mode=node-addresses"];
      const { by, report } = await doctor(env, flags);
      const ports = by["node-address-ports"];
      assert.equal(ports.status, "warn", ports.result);
      assert.match(
        ports.result,
        new RegExp(
          `^1 port of node-address Services is also taken on a node that serves it by a pod listening on ` +
            `the node's own addresses: default/${traefik} port 80/TCP: default/${ingress} \\(hostNetwork\\) on ${name}; ` +
            "kube-proxy captures the Service's address and port first",
        ),
      );
      assert.match(ports.fix!, /give the Service another port, or serve it with an Ankra load balancer/);
      assert.equal(report.ok, true, "a warning: the Service works, the pod loses that port on the public address");
      // The controller's own identity may not list pods: the check says so and what to do.
      const asController = await doctor(env, flags, await controllerKubeconfig());
      const skipped = asController.by["node-address-ports"];
      assert.equal(skipped.status, "skip");
      assert.match(
        skipped.result,
        /^skipped: the Pods cannot be listed: .*\(the controller's own identity may not list them: run the doctor with an administrator's kubeconfig/,
      );
    } finally {
      await remove([traefik], [ingress]);
    }
  }),
);
