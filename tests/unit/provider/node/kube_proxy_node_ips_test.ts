/**
 * kube-proxy ≥ 1.37 exits when the node IPs it reads from its Node change (on k3s: the whole k3s process). Each case
 * follows one node through its life as the cloud-node controller plans it — the kubelet's registration, the
 * initialisation, address refreshes, a controller restart with the API listing legs in another order, an IPv4 add-on,
 * a second private network — and counts the changes kube-proxy would see.
 */
import assert from "node:assert/strict";
import type { NodeAddress, SlimNode } from "../../../../lib/kube/slim.ts";
import {
  keepKubeProxyNodeIps,
  kubeProxyNodeIps,
  sameKubeProxyNodeIps,
} from "../../../../lib/provider/node/kube_proxy_node_ips.ts";
import { type NodeServerFacts, planNode, UNINITIALIZED_TAINT } from "../../../../lib/provider/node/node_plan.ts";
import { fakeNode } from "../../../support/fakes/fake_cluster.ts";

const PUBLIC_V6 = "2001:db8:0:1::1";
const ULA = "fd64:1:0:1::a00:5";
const LEG_V4 = "10.0.0.5";

function server(extra: Partial<NodeServerFacts["server"]> = {}): NodeServerFacts {
  return {
    server: { id: "srv-1", zone: "de-fsn1", plan: "cx-4", hostname: "worker-1", public_ipv6: PUBLIC_V6, ...extra },
    interfaces: [{ address: LEG_V4, address6: ULA }],
    region: "eu-central",
  };
}

/** The Node as a kubelet with `--cloud-provider=external` registers it: its node IPs as InternalIPs, tainted. */
function registered(nodeIp: string | undefined, detectedIp = LEG_V4): SlimNode {
  const ips = nodeIp ? nodeIp.split(",") : [detectedIp];
  return fakeNode("worker-1", {
    addresses: [...ips.map((address) => ({ type: "InternalIP", address })), { type: "Hostname", address: "worker-1" }],
    taints: [{ key: UNINITIALIZED_TAINT, effect: "NoSchedule" }],
    ...(nodeIp ? { providedNodeIP: nodeIp } : {}),
  });
}

/** Runs the controller's plan over `node` for each step's server facts; gives kube-proxy's IPs after each step. */
function life(node: SlimNode, steps: [string, NodeServerFacts][]): { step: string; ips: string[] }[] {
  const seen = [{ step: "registered", ips: kubeProxyNodeIps(node.addresses) }];
  for (const [step, facts] of steps) {
    const plan = planNode(node, facts);
    assert.equal(plan.kind, "update", `${step}: ${JSON.stringify(plan)}`);
    if (plan.kind === "update") {
      node = { ...node, addresses: plan.addresses ?? node.addresses, taints: plan.initialise ? [] : node.taints };
    }
    seen.push({ step, ips: kubeProxyNodeIps(node.addresses) });
  }
  return seen;
}

function changes(seen: { step: string; ips: string[] }[]): string[] {
  return seen.slice(1).filter((s, i) => s.ips.join() !== seen[i].ips.join()).map((s) => `${s.step}: ${s.ips}`);
}

const legsReversed: NodeServerFacts = {
  ...server(),
  interfaces: [{ address: "10.1.0.5", address6: "fd64:2:0:1::a01:5" }, { address: LEG_V4, address6: ULA }],
};
const AFTER_INIT: [string, NodeServerFacts][] = [
  ["address refresh", server()],
  ["controller restart", server()],
  ["IPv4 add-on", server({ public_ipv4: "203.0.113.7" })],
  ["second private network, listed first", legsReversed],
];

Deno.test("kube-proxy's node IPs are upstream's GetNodeHostIPs: first InternalIP, then the other family", () => {
  const a = (type: string, address: string): NodeAddress => ({ type, address });
  assert.deepEqual(kubeProxyNodeIps([a("ExternalIP", PUBLIC_V6), a("InternalIP", LEG_V4)]), [LEG_V4, PUBLIC_V6]);
  assert.deepEqual(kubeProxyNodeIps([a("InternalIP", ULA), a("InternalIP", LEG_V4)]), [ULA, LEG_V4]);
  assert.deepEqual(kubeProxyNodeIps([a("ExternalIP", "203.0.113.7"), a("Hostname", "x")]), ["203.0.113.7"]);
  assert.deepEqual(kubeProxyNodeIps([a("Hostname", "x")]), []);
  assert.ok(sameKubeProxyNodeIps([a("InternalIP", LEG_V4)], [a("Hostname", "x"), a("InternalIP", "010.0.0.5")]));
});

Deno.test("--node-ip=<v4> on a server with both families: kube-proxy's IPs change once, at initialisation, never after", () => {
  const seen = life(registered(LEG_V4), [["initialisation", server()], ...AFTER_INIT]);
  assert.deepEqual(changes(seen), [`initialisation: ${LEG_V4},${PUBLIC_V6}`]);
});

Deno.test("--node-ip=<v4>,<public v6> (k3s's guidance): kube-proxy's IPs never change", () => {
  const seen = life(registered(`${LEG_V4},${PUBLIC_V6}`), [["initialisation", server()], ...AFTER_INIT]);
  assert.deepEqual(changes(seen), []);
  assert.deepEqual(seen.at(-1)!.ips, [LEG_V4, PUBLIC_V6]);
});

Deno.test("--node-ip=<v4>,<private ULA>: kube-proxy's IPs never change", () => {
  const seen = life(registered(`${LEG_V4},${ULA}`), [["initialisation", server()], ...AFTER_INIT]);
  assert.deepEqual(changes(seen), []);
});

Deno.test("no --node-ip: the kubelet's own IP gives way to the cloud's once, at initialisation, never after", () => {
  const seen = life(registered(undefined), [["initialisation", server()], ...AFTER_INIT]);
  assert.deepEqual(changes(seen), [`initialisation: ${ULA},${LEG_V4}`], "IPv6 first, as the Go controller");
});

Deno.test("a node initialised by an older controller keeps kube-proxy's IPs when this one orders its addresses otherwise", () => {
  // Written by an earlier version, or by this one from the API's earlier order: the second leg first.
  const node = fakeNode("worker-1", {
    addresses: [
      { type: "ExternalIP", address: PUBLIC_V6 },
      { type: "InternalIP", address: "fd64:2:0:1::a01:5" },
      { type: "InternalIP", address: ULA },
      { type: "InternalIP", address: "10.1.0.5" },
      { type: "InternalIP", address: LEG_V4 },
      { type: "Hostname", address: "worker-1" },
    ],
  });
  const plan = planNode(node, {
    ...server(),
    interfaces: [{ address: LEG_V4, address6: ULA }, { address: "10.1.0.5", address6: "fd64:2:0:1::a01:5" }],
  });
  assert.equal(plan.kind, "update");
  assert.ok(plan.kind === "update" && plan.addresses, "the list is rewritten");
  assert.deepEqual(kubeProxyNodeIps(plan.addresses), ["fd64:2:0:1::a01:5", "10.1.0.5"], "kube-proxy's IPs stay");
});

Deno.test("keepKubeProxyNodeIps gives way when an IP of kube-proxy's is gone from the server", () => {
  const current = [{ type: "InternalIP", address: "10.9.9.9" }];
  const desired = [{ type: "InternalIP", address: LEG_V4 }];
  assert.equal(keepKubeProxyNodeIps(current, desired), desired);
});
