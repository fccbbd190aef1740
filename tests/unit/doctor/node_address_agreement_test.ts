/**
 * The doctor and the controller agree in node-address worlds: for the same Nodes, servers and Service, the doctor
 * (before the controller ran: Nodes without providerIDs, matched to servers by hostname) and the controller (after it
 * initialised them: each Node with its server's providerID) choose the same mode for the Service and the same serving
 * nodes — eligibility (the exclusion label, a Node being deleted, one not an Ankra server), the Service's node
 * selector, nodes whose servers are down left out (unless none other could serve), Ready ones else all. Each world also pins the expected answer, so both being wrong the same way fails too.
 */
import assert from "node:assert/strict";
import { nodeAddressServices, nodesServing, serversByNode } from "../../../lib/doctor/node_address_checks.ts";
import { matchNodes } from "../../../lib/doctor/placement_checks.ts";
import type { SlimNode } from "../../../lib/kube/slim.ts";
import type { ServingMode } from "../../../lib/provider/service/annotations.ts";
import { servingNodes } from "../../../lib/provider/service/node_address_plan.ts";
import { decideService } from "../../../lib/provider/service/service_decision.ts";
import { serverDown } from "../../../lib/provider/node/server_state.ts";
import { node, server } from "./doctor_fixtures.ts";
import { slimService } from "../../support/fakes/slim_service.ts";

interface World {
  name: string;
  /** Nodes as their kubelets register them; each is a server of the same hostname unless `foreign`. */
  nodes: {
    name: string;
    ready?: boolean;
    labels?: Record<string, string>;
    deleting?: boolean;
    foreign?: boolean;
    /** Its server's state (`started` unless told). */
    serverState?: string;
  }[];
  /** The Service's annotations and class. */
  annotations?: Record<string, string>;
  loadBalancerClass?: string;
  /** `--default-load-balancer-mode`. */
  defaultMode?: ServingMode;
  expect: { mode: ServingMode; serving: string[] };
}

const ON_NODES = { "load-balancer.ankra.cloud/mode": "node-addresses" };

const WORLDS: World[] = [
  {
    name: "a single k3s server under the default mode node-addresses",
    nodes: [{ name: "k3s-1" }],
    defaultMode: "node-addresses",
    expect: { mode: "node-addresses", serving: ["k3s-1"] },
  },
  {
    name: "three nodes, one NotReady: the Ready ones serve",
    nodes: [{ name: "a" }, { name: "b", ready: false }, { name: "c" }],
    annotations: ON_NODES,
    expect: { mode: "node-addresses", serving: ["a", "c"] },
  },
  {
    name: "none Ready: all eligible serve (the Service keeps an address)",
    nodes: [{ name: "a", ready: false }, { name: "b", ready: false }],
    loadBalancerClass: "ankra.cloud/node-addresses",
    expect: { mode: "node-addresses", serving: ["a", "b"] },
  },
  {
    name: "an excluded node, a node being deleted and a node of another provider serve not",
    nodes: [
      { name: "a" },
      { name: "b", labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "true" } },
      { name: "c", deleting: true },
      { name: "d", foreign: true },
    ],
    annotations: ON_NODES,
    expect: { mode: "node-addresses", serving: ["a"] },
  },
  {
    name: "a node selector narrows the serving nodes",
    nodes: [{ name: "a", labels: { pool: "edge" } }, { name: "b" }, { name: "c", labels: { pool: "edge" } }],
    annotations: { ...ON_NODES, "load-balancer.ankra.cloud/node-selector": "pool=edge" },
    expect: { mode: "node-addresses", serving: ["a", "c"] },
  },
  {
    name: "a node whose server is stopped, though its Node still says Ready, serves not",
    nodes: [{ name: "a", serverState: "stopped" }, { name: "b" }, { name: "c", serverState: "deleting" }],
    annotations: ON_NODES,
    expect: { mode: "node-addresses", serving: ["b"] },
  },
  {
    name: "every server down: all eligible serve (the Service keeps an address)",
    nodes: [{ name: "a", serverState: "stopped" }, { name: "b", serverState: "stopping" }],
    annotations: ON_NODES,
    expect: { mode: "node-addresses", serving: ["a", "b"] },
  },
  {
    name: "the mode annotation load-balancer wins over the default mode node-addresses",
    nodes: [{ name: "a" }],
    annotations: { "load-balancer.ankra.cloud/mode": "load-balancer" },
    defaultMode: "node-addresses",
    expect: { mode: "load-balancer", serving: ["a"] },
  },
];

/** The world's Nodes: as their kubelets register them (`initialised: false`), or after the controller initialised them. */
function nodesOf(world: World, initialised: boolean): SlimNode[] {
  return world.nodes.map((n) =>
    node(n.name, {
      labels: n.labels ?? {},
      ready: n.ready === false ? "False" : "True",
      deletionTimestamp: n.deleting ? "2026-12-01T00:00:00Z" : undefined,
      providerID: n.foreign ? `hcloud://${n.name}` : initialised ? `ankracloud://de-fsn1/s-${n.name}` : undefined,
      ...(initialised || n.foreign ? { taints: [] } : {}),
    })
  );
}

for (const world of WORLDS) {
  Deno.test(`the doctor and the controller agree in node-address mode: ${world.name}`, () => {
    const service = slimService({ annotations: world.annotations ?? {}, loadBalancerClass: world.loadBalancerClass });
    const settings = { clusterName: "kubernetes", defaultLoadBalancerMode: world.defaultMode };

    // The controller, once it initialised the Nodes, with the nodes its server list shows down as leaving.
    const intent = decideService(service, nodesOf(world, true), {
      clusterName: "kubernetes",
      defaults: { highAvailability: "auto", mode: world.defaultMode },
      leaving: new Set(world.nodes.filter((n) => n.serverState && serverDown(n.serverState)).map((n) => n.name)),
    });
    const controllerServing = servingNodes(intent.nodes).map((n) => n.name);

    // The doctor, before: Nodes matched to servers by hostname.
    const nodes = nodesOf(world, false);
    const servers = world.nodes.filter((n) => !n.foreign)
      .map((n) => ({ ...server(`s-${n.name}`, n.name), state: n.serverState ?? "started" }));
    const doctorServing = nodesServing(service, nodes, serversByNode(matchNodes(nodes, servers)), settings)
      .map((n) => n.name);
    const doctorMode = nodeAddressServices([{ ...service }], settings).length > 0 ? "node-addresses" : "load-balancer";

    assert.equal(intent.mode, world.expect.mode, "the controller's mode");
    assert.equal(doctorMode, intent.mode, "the doctor's mode");
    assert.deepEqual(controllerServing, world.expect.serving, "the controller's serving nodes");
    assert.deepEqual(doctorServing, controllerServing, "the doctor's serving nodes");
  });
}
