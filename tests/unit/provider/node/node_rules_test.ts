import assert from "node:assert/strict";
import { classifyProviderId, formatProviderId, parseProviderId } from "../../../../lib/provider/provider_id.ts";
import { serverPresence } from "../../../../lib/provider/node/server_state.ts";
import {
  applyProvidedNodeIp,
  sameAddresses,
  serverAddresses,
  withKubeletHostname,
} from "../../../../lib/provider/node/node_addresses.ts";
import { labelChanges } from "../../../../lib/provider/node/node_plan.ts";
import { hostnameCandidates } from "../../../../lib/provider/server_match.ts";
import type { SlimNode } from "../../../../lib/kube/slim.ts";

Deno.test("providerIDs are parsed exactly like the Go controller, and round-trip", () => {
  assert.deepEqual(parseProviderId("ankracloud://de-fsn1/0f9c2d1e-7b"), { zone: "de-fsn1", serverId: "0f9c2d1e-7b" });
  assert.equal(formatProviderId({ zone: "de-fsn1", serverId: "0f9c2d1e-7b" }), "ankracloud://de-fsn1/0f9c2d1e-7b");
  for (
    const bad of [
      "",
      "hcloud://123",
      "ankracloud://",
      "ankracloud://de-fsn1",
      "ankracloud://de-fsn1/",
      "ankracloud:///server",
      "ankracloud://de-fsn1/server/extra",
      "ankracloud:/de-fsn1/server",
      "aws:///i-123",
      "AnkraCloud://de-fsn1/x",
    ]
  ) assert.equal(parseProviderId(bad), undefined, bad);
});

Deno.test("providerIDs of other providers are told apart from ours and from malformed ones", () => {
  assert.equal(classifyProviderId(undefined), "none");
  assert.equal(classifyProviderId("ankracloud://z/1"), "ours");
  assert.equal(classifyProviderId("ankracloud:/z/1"), "malformed");
  assert.equal(classifyProviderId("ankracloud://z"), "malformed");
  for (const foreign of ["hcloud://123", "aws:///i-1", "k3s://node-1", "kind://docker/kind/x"]) {
    assert.equal(classifyProviderId(foreign), "foreign", foreign);
  }
});

Deno.test("stopping and stopped servers are shut down, deleting ones are gone, every other state exists", () => {
  const table: [string, boolean, boolean][] = [
    ["started", true, false],
    ["starting", true, false],
    ["stopping", true, true],
    ["stopped", true, true],
    ["error", true, false],
    ["creating", true, false],
    ["deleting", false, false],
    ["rebooting-someday", true, false],
  ];
  for (const [state, exists, shutdown] of table) assert.deepEqual(serverPresence(state), { exists, shutdown }, state);
});

Deno.test("addresses are ordered IPv6 first, canonical and without duplicates", () => {
  const addresses = serverAddresses(
    { hostname: "worker-1", public_ipv6: "fd64:1:0:2a::1", public_ipv4: "203.0.113.7" },
    [
      { address: "10.0.0.5", address6: "FD12:3456:789A::5" },
      { address: "10.1.0.5", address6: "fd12:3456:789b::5" },
    ],
  );
  assert.deepEqual(addresses, [
    { type: "ExternalIP", address: "fd64:1:0:2a::1" },
    { type: "ExternalIP", address: "203.0.113.7" },
    { type: "InternalIP", address: "fd12:3456:789a::5" },
    { type: "InternalIP", address: "fd12:3456:789b::5" },
    { type: "InternalIP", address: "10.0.0.5" },
    { type: "InternalIP", address: "10.1.0.5" },
    { type: "Hostname", address: "worker-1" },
  ]);
  assert.deepEqual(serverAddresses({ hostname: "v6-only", public_ipv6: "2001:db8::1", public_ipv4: null }, []), [
    { type: "ExternalIP", address: "2001:db8::1" },
    { type: "Hostname", address: "v6-only" },
  ]);
  assert.deepEqual(
    serverAddresses({ hostname: "", public_ipv6: "::ffff:1.2.3.4", public_ipv4: " 1.2.3.4 " }, [
      { address: "1.2.3.4", address6: "not-an-ip" },
    ]),
    [{ type: "ExternalIP", address: "1.2.3.4" }],
    "IPv4-mapped IPv6 is not an IPv6 address; duplicates and junk are dropped",
  );
});

Deno.test("a server whose public IPv6 is private (a ULA only Ankra Cloud reaches) publishes it as InternalIP", () => {
  const server = { hostname: "w", public_ipv6: "fd00:ab::1", public_ipv6_is_private: true, public_ipv4: "203.0.113.9" };
  assert.deepEqual(serverAddresses(server, [{ address: "10.0.0.5", address6: "fd12::5" }]), [
    { type: "InternalIP", address: "fd00:ab::1" },
    { type: "ExternalIP", address: "203.0.113.9" },
    { type: "InternalIP", address: "fd12::5" },
    { type: "InternalIP", address: "10.0.0.5" },
    { type: "Hostname", address: "w" },
  ]);
  assert.equal(serverAddresses({ ...server, public_ipv6_is_private: false }, [])[0].type, "ExternalIP");
});

Deno.test("the kubelet's Hostname is kept when the cloud gives none", () => {
  const cloud = [{ type: "ExternalIP", address: "2001:db8::1" }];
  assert.deepEqual(withKubeletHostname(cloud, [{ type: "Hostname", address: "kubelet-name" }]), [
    ...cloud,
    { type: "Hostname", address: "kubelet-name" },
  ]);
});

Deno.test("the provided node IP goes first, other addresses of its type go, and a mismatch is reported", () => {
  const cloud = [
    { type: "ExternalIP", address: "2001:db8::1" },
    { type: "InternalIP", address: "fd12::5" },
    { type: "InternalIP", address: "10.0.0.5" },
    { type: "Hostname", address: "w1" },
  ];
  assert.deepEqual(applyProvidedNodeIp(cloud, "10.0.0.5"), {
    ok: true,
    addresses: [
      { type: "InternalIP", address: "10.0.0.5" },
      { type: "ExternalIP", address: "2001:db8::1" },
      { type: "Hostname", address: "w1" },
    ],
  });
  assert.deepEqual(applyProvidedNodeIp(cloud, "fd12:0::5,10.0.0.5"), {
    ok: true,
    addresses: [
      { type: "InternalIP", address: "fd12::5" },
      { type: "InternalIP", address: "10.0.0.5" },
      { type: "ExternalIP", address: "2001:db8::1" },
      { type: "Hostname", address: "w1" },
    ],
  });
  assert.deepEqual(applyProvidedNodeIp(cloud, "10.0.0.5,::1"), { ok: false, missing: ["::1"] });
  assert.deepEqual(applyProvidedNodeIp(cloud, undefined), { ok: true, addresses: cloud });
});

Deno.test("address lists compare as lists: order matters, a dual-stack pair is not a change", () => {
  const a = [{ type: "InternalIP", address: "fd12::5" }, { type: "InternalIP", address: "10.0.0.5" }];
  assert.ok(sameAddresses(a, [...a]));
  assert.ok(!sameAddresses(a, [...a].reverse()));
});

Deno.test("FQDN node names are also looked up by their first label", () => {
  assert.deepEqual(hostnameCandidates("worker-1.cluster.example"), ["worker-1.cluster.example", "worker-1"]);
  assert.deepEqual(hostnameCandidates("worker-1."), ["worker-1.", "worker-1"]);
  assert.deepEqual(hostnameCandidates(".foo"), [".foo"]);
  assert.deepEqual(hostnameCandidates("worker-1"), ["worker-1"]);
});

Deno.test("only topology labels that differ are changed; other labels are never touched", () => {
  const node = {
    labels: { "topology.kubernetes.io/zone": "de-fsn1", "custom": "keep", "node.kubernetes.io/instance-type": "old" },
  } as unknown as SlimNode;
  assert.deepEqual(
    labelChanges(node, {
      providerID: "ankracloud://de-fsn1/1",
      instanceType: "standard-2c-4g",
      zone: "de-fsn1",
      region: "eu-central",
      addresses: [],
    }),
    {
      "node.kubernetes.io/instance-type": "standard-2c-4g",
      "beta.kubernetes.io/instance-type": "standard-2c-4g",
      "failure-domain.beta.kubernetes.io/zone": "de-fsn1",
      "topology.kubernetes.io/region": "eu-central",
      "failure-domain.beta.kubernetes.io/region": "eu-central",
    },
  );
});
