/**
 * The data plane's pure rules: which addresses each mode serves and contacts, the VMs' legs, the listeners the plan
 * gives (`planHaproxies`), the
 * control API's exposure warning and the netns mode's namespace check. (What HAProxy is told and what it says are in
 * `haproxy_config_test.ts` and `haproxy_output_test.ts`.)
 */
import assert from "node:assert/strict";
import { servability, unreachableReason, vmLegAddress } from "../../../simulator/data_plane/local_addresses.ts";
import { planHaproxies, type PlanInput } from "../../../simulator/data_plane/haproxy_plan.ts";
import { controlApiExposureWarning } from "../../../simulator/control_exposure.ts";
import { interfaceNames, namespaceProblem } from "../../../simulator/data_plane/netns_routes.ts";
import { DEFAULT_HEALTH_CHECK, type LoadBalancerState } from "../../../simulator/load_balancer_state.ts";
import type { EdgeState } from "../../../simulator/edges.ts";
import { World } from "../../../simulator/world.ts";
import { testSeed } from "../../support/cloud/simulator.ts";

Deno.test("loopback serves and contacts only 127.0.0.0/8 and ::1; netns everything", () => {
  assert.deepEqual(servability("127.203.113.1", "loopback"), { served: true });
  assert.equal(servability("2001:db8::1", "loopback").served, false);
  assert.equal(servability("203.0.113.1", "loopback").served, false);
  assert.deepEqual(servability("2001:db8::1", "netns"), { served: true });
  assert.equal(unreachableReason("127.9.0.1", "loopback"), undefined);
  assert.equal(unreachableReason("::1", "loopback"), undefined);
  assert.match(unreachableReason("10.0.0.5", "loopback")!, /never sends traffic off this machine/);
  assert.match(unreachableReason("fd64:1::5", "loopback")!, /not a loopback address/);
  assert.equal(unreachableReason("10.0.0.5", "netns"), undefined);
});

Deno.test("a load balancer VM's leg is a host of its network from the top, its IPv6 leg in the ULA /64", () => {
  const world = new World(testSeed());
  const network = world.network("net-1");
  assert.equal(vmLegAddress(network, { seq: 0, index: 0 }, 4), "10.0.255.254");
  assert.equal(vmLegAddress(network, { seq: 0, index: 1 }, 4), "10.0.255.253");
  assert.equal(vmLegAddress(network, { seq: 3, index: 0 }, 4), "10.0.255.248");
  assert.equal(vmLegAddress(network, { seq: 0, index: 0 }, 6), world.address6For(network, "10.0.255.254"));
  assert.ok(world.isNetworkHost(network, { family: 4, value: 0x0a00fff8n, text: "10.0.255.248" }));
});

/** A running pair with an http and a TLS frontend on one http backend (no members). */
function runningLoadBalancer(overrides: Partial<LoadBalancerState> = {}): LoadBalancerState {
  return {
    id: "lb-1",
    seq: 1,
    zone: "de-fsn1",
    name: "lb",
    network_id: "net-1",
    state: "running",
    labels: {},
    high_availability: true,
    wants_ipv4: true,
    public_ipv4: "127.203.113.1",
    public_ipv6_addresses: ["2001:db8:0:1::1", "2001:db8:0:2::1"],
    configuration_generation: 3,
    applied_generation: 3,
    frontends: [
      {
        id: "fe-1",
        name: "http",
        port: 80,
        backend_id: "be-1",
        tls: false,
        certificate_ids: [],
        redirect_to_https: false,
      },
      {
        id: "fe-2",
        name: "https",
        port: 443,
        backend_id: "be-1",
        tls: true,
        certificate_ids: ["c"],
        redirect_to_https: false,
      },
    ],
    backends: [{
      id: "be-1",
      name: "b",
      mode: "http",
      balance: "roundrobin",
      health_check: DEFAULT_HEALTH_CHECK,
      members: [],
    }],
    active_operation: null,
    created_at: "2026-01-01T00:00:00Z",
    ...overrides,
  };
}

/** Every listener the plan gives for `input`, in order (no networks or certificates). */
function planListeners(input: Pick<PlanInput, "loadBalancers" | "edges" | "mode">) {
  return planHaproxies({ ...input, networks: [], certificates: undefined }).flatMap((plan) => plan.listeners);
}

Deno.test("the listener plan: every frontend on every published address, by the VM holding it; none while creating", () => {
  const specs = planListeners({ loadBalancers: [runningLoadBalancer()], edges: [], mode: "loopback" });
  assert.deepEqual(
    specs.map((s) => [s.key, s.served, s.route.kind === "load_balancer" ? s.route.vm : -1, s.tls ?? null]),
    [
      ["2001:db8:0:1::1|80", false, 0, null],
      ["2001:db8:0:2::1|80", false, 1, null],
      ["127.203.113.1|80", true, 0, null],
      ["2001:db8:0:1::1|443", false, 0, ["c"]],
      ["2001:db8:0:2::1|443", false, 1, ["c"]],
      ["127.203.113.1|443", true, 0, ["c"]],
    ],
  );
  assert.ok(planListeners({ loadBalancers: [runningLoadBalancer()], edges: [], mode: "netns" }).every((s) => s.served));
  for (const state of ["creating", "deleting", "error"] as const) {
    assert.deepEqual(planListeners({ loadBalancers: [runningLoadBalancer({ state })], edges: [], mode: "netns" }), []);
  }
  const edge = {
    id: "edge-1",
    state: "running",
    placement: "combined",
    roles: ["load_balancer"],
    machines: [{ public_ipv4: "127.203.113.2", public_ipv6: "2001:db8:0:3::1" }],
  } as unknown as EdgeState;
  const members = [30080, 30080, 30443].map((frontend_port, i) => ({
    id: `m${i}`,
    name: `m${i}`,
    frontend_port,
    address: "127.9.0.1",
    port: 1,
    weight: 100,
    enabled: true,
  }));
  assert.deepEqual(
    planListeners({ loadBalancers: [], edges: [{ edge, members }], mode: "loopback" }).map((s) => [s.key, s.served]),
    [["2001:db8:0:3::1|30080", false], ["127.203.113.2|30080", true], ["2001:db8:0:3::1|30443", false], [
      "127.203.113.2|30443",
      true,
    ]],
  );
});

Deno.test("listening beyond loopback gets one warning naming the address; loopback none", () => {
  for (const host of ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost"]) {
    assert.equal(controlApiExposureWarning(host), undefined, host);
  }
  for (const host of ["0.0.0.0", "::", "10.0.0.5", "simulator.internal"]) {
    const warning = controlApiExposureWarning(host)!;
    assert.match(warning, new RegExp(`listening on ${host.replace(/\./g, "\\.")}, beyond loopback`));
    assert.match(warning, /no authentication/);
  }
});

Deno.test("the netns data plane runs only in a network namespace of its own, never the host's", () => {
  const lo = ["lo"];
  assert.equal(namespaceProblem("net:[4026532001]", "net:[4026531840]", ["lo", "eth0"]), undefined, "not PID 1's");
  assert.match(
    namespaceProblem("net:[4026531840]", "net:[4026531840]", lo)!,
    /only inside a network namespace of its own/,
  );
  const unreadable = new Error("permission denied");
  assert.equal(namespaceProblem("net:[7]", unreadable, lo), undefined, "PID 1's unreadable: only lo is a fresh one");
  assert.match(namespaceProblem("net:[7]", unreadable, ["lo", "eth0"])!, /interfaces besides lo: eth0/);
  assert.match(namespaceProblem(unreadable, "net:[7]", lo)!, /cannot tell .*permission denied/);
  assert.deepEqual(
    interfaceNames(
      "Inter-|   Receive\n face |bytes\n    lo: 1 2 3\n  eth0: 4 5 6\n",
    ),
    ["lo", "eth0"],
  );
});
