import assert from "node:assert/strict";
import { kubeProxyNodeIpsFinding, nodesGainingFamily } from "../../../lib/doctor/node_ip_checks.ts";
import { matchNodes } from "../../../lib/doctor/placement_checks.ts";
import { k3sArgs, node, server } from "./doctor_fixtures.ts";

const dualStack = { ...server("s1", "k3s-1"), public_ipv6: "2001:db8:0:1::1" };
const registeredV4 = (name: string, extra = {}) =>
  node(name, {
    addresses: [{ type: "InternalIP", address: "10.0.0.5" }, { type: "Hostname", address: name }],
    providedNodeIP: "10.0.0.5",
    ...extra,
  });

Deno.test("doctor: a k3s node joining with --node-ip=<v4> on a dual-stack server is warned of one k3s restart, with the fix", () => {
  const nodes = [registeredV4("k3s-1", { k3sNodeArgs: k3sArgs("server", "--node-ip", "10.0.0.5") })];
  const finding = kubeProxyNodeIpsFinding(nodes, matchNodes(nodes, [dualStack]));
  assert.equal(finding.status, "warn");
  assert.match(finding.result, /k3s-1: 10\.0\.0\.5\) on a server that has the other \(2001:db8:0:1::1\)/);
  assert.match(finding.result, /kube-proxy 1\.37\+ exits/);
  assert.match(finding.result, /on k3s \(k3s-1\) that restarts the whole k3s service once/);
  assert.match(finding.fix!, /--node-ip=<v4>,<v6>.*10\.0\.0\.5,2001:db8:0:1::1/);
});

Deno.test("doctor: both families' node IPs, an initialised node, or a server of one family pass", () => {
  const both = registeredV4("a", {
    addresses: [{ type: "InternalIP", address: "10.0.0.5" }, { type: "InternalIP", address: "2001:db8:0:1::1" }],
    providedNodeIP: "10.0.0.5,2001:db8:0:1::1",
  });
  assert.equal(kubeProxyNodeIpsFinding([both], matchNodes([both], [dualStack])).status, "pass");
  const initialised = registeredV4("k3s-1", { taints: [], providerID: "ankracloud://de-fsn1/s1" });
  assert.equal(kubeProxyNodeIpsFinding([initialised], matchNodes([initialised], [dualStack])).status, "pass");
  const v4Only = { ...server("s1", "k3s-1"), public_ipv4: "203.0.113.7" };
  const onV4Server = registeredV4("k3s-1");
  assert.deepEqual(nodesGainingFamily([onV4Server], matchNodes([onV4Server], [v4Only])), []);
});
