/**
 * Node matching and the kubelet's cloud provider, from already-read nodes and servers.
 */
import assert from "node:assert/strict";
import { kubeletExternalFinding, nodesWithoutExternalCloudProvider } from "../../../lib/doctor/cluster_checks.ts";
import { matchedServers, matchNodes, nodesMatchedFinding } from "../../../lib/doctor/placement_checks.ts";
import { node, server } from "./doctor_fixtures.ts";

const servers = [
  server("srv-1", "worker-1"),
  server("srv-2", "worker-2"),
  server("srv-3a", "twin", "de-fsn1"),
  server("srv-3b", "twin", "de-fsn2"),
];

Deno.test("nodes match by providerID, by name, by the first label of an FQDN name; others are told apart", () => {
  const matches = matchNodes([
    node("by-id", { providerID: "ankracloud://de-fsn1/srv-2" }),
    node("worker-1.cluster.example"),
    node("twin"),
    node("nobody"),
    node("gone", { providerID: "ankracloud://de-fsn1/srv-404" }),
    node("hetzner", { providerID: "hcloud://123" }),
    node("bad", { providerID: "ankracloud://de-fsn1" }),
  ], servers);
  const by = Object.fromEntries(matches.map((m) => [m.node, m]));
  assert.equal(by["by-id"].kind, "matched");
  assert.equal(by["by-id"].kind === "matched" && by["by-id"].server.id, "srv-2");
  assert.equal(by["worker-1.cluster.example"].kind === "matched" && by["worker-1.cluster.example"].by, "hostname");
  assert.equal(by["twin"].kind, "ambiguous");
  assert.equal(by["nobody"].kind === "missing" && by["nobody"].why, "no server has hostname nobody");
  assert.match(by["gone"].kind === "missing" ? by["gone"].why : "", /no server has id srv-404/);
  assert.equal(by["hetzner"].kind, "foreign");
  assert.equal(by["bad"].kind, "malformed");
  assert.deepEqual(matchedServers(matches).map((s) => s.id).sort(), ["srv-1", "srv-2"]);
});

Deno.test("all nodes matched passes; counts by providerID and hostname", () => {
  const finding = nodesMatchedFinding(matchNodes([
    node("worker-1"),
    node("x", { providerID: "ankracloud://de-fsn1/srv-2" }),
  ], servers));
  assert.equal(finding.status, "pass");
  assert.equal(finding.result, "all 2 nodes matched (1 by providerID, 1 by hostname)");
  assert.equal(finding.fix, undefined);
});

Deno.test("unmatched and ambiguous nodes fail, each named with why, with the fixes", () => {
  const finding = nodesMatchedFinding(matchNodes([node("worker-1"), node("nobody"), node("twin")], servers));
  assert.equal(finding.status, "fail");
  assert.match(finding.result, /^1 of 3 nodes matched/);
  assert.match(finding.result, /not matched: nobody \(no server has hostname nobody\)/);
  assert.match(finding.result, /ambiguous: twin \(2 servers have hostname twin: de-fsn1\/srv-3a, de-fsn2\/srv-3b\)/);
  assert.match(finding.fix!, /--provider-id=ankracloud:\/\/<zone>\/<server-id>/);
  assert.match(finding.fix!, /distinct hostnames/);
});

Deno.test("two nodes on one server fail; nodes of other providers alone are a warning", () => {
  const shared = nodesMatchedFinding(matchNodes([
    node("worker-1"),
    node("old", { providerID: "ankracloud://de-fsn1/srv-1" }),
  ], servers));
  assert.equal(shared.status, "fail");
  assert.match(shared.result, /one server for several nodes: srv-1 \(old, worker-1\)/);
  const foreign = nodesMatchedFinding(matchNodes([node("worker-1"), node("k", { providerID: "k3s://k" })], servers));
  assert.equal(foreign.status, "warn");
  assert.match(foreign.result, /1 node of other providers, left alone: k \(k3s:\/\/k\)/);
  assert.equal(nodesMatchedFinding([]).status, "skip");
});

Deno.test("a node with neither providerID nor the uninitialized taint was started without the external provider", () => {
  const nodes = [
    node("waiting"),
    node("initialised", { providerID: "ankracloud://de-fsn1/srv-1", taints: [] }),
    node("foreign", { providerID: "k3s://foreign", taints: [] }),
    node("plain", { taints: [] }),
    node("also-plain", { taints: [{ key: "other", effect: "NoSchedule" }] }),
  ];
  assert.deepEqual(nodesWithoutExternalCloudProvider(nodes), ["also-plain", "plain"]);
  const finding = kubeletExternalFinding(nodes);
  assert.equal(finding.status, "fail");
  assert.match(finding.result, /2 nodes have neither a providerID nor the uninitialized taint.*: also-plain, plain$/);
  assert.match(finding.fix!, /--kubelet-arg=cloud-provider=external/);
  assert.match(finding.fix!, /kubeletExtraArgs/);
  assert.match(finding.fix!, /kubectl delete node <name>/);
  assert.equal(kubeletExternalFinding(nodes.slice(0, 3)).status, "pass");
  assert.equal(kubeletExternalFinding([]).status, "skip");
});
