import assert from "node:assert/strict";
import {
  backstopRoutes,
  bridgeConflist,
  cloudNamespaceCommands,
  clusterTopology,
  hostRoutedRanges,
  setupCommands,
  simulatorRouteFixes,
  teardownCommands,
  topologyLeftovers,
} from "../../support/real_cluster/real_cluster_topology.ts";
import { realClusterBlockers } from "../../support/real_cluster/real_cluster_host.ts";
import { REAL_NODE_COMMANDS } from "../../support/real_node/real_node_host.ts";
import {
  e2eArgs,
  e2eSummary,
  LOAD_BALANCER_TESTS,
  modeLists,
  NAMED_SKIPS,
  readJunit,
  skipReason,
  skipRegex,
  suiteChanges,
  unexpectedOutcomes,
} from "../../support/real_cluster/real_cluster_e2e.ts";
import { vmLegAddress } from "../../../simulator/data_plane/local_addresses.ts";
import { parsePrefix } from "../../../lib/ip_address.ts";

const t = clusterTopology(["node-a", "node-b"]);

Deno.test("every range the cluster uses is blackholed on the host before anything is routed", () => {
  const backstops = backstopRoutes(t).map((args) => args.join(" "));
  for (const range of hostRoutedRanges(t)) {
    assert.ok(backstops.some((b) => b.includes(`blackhole ${range} metric 4000`)), `no backstop for ${range}`);
  }
  const first = cloudNamespaceCommands(t).map((args) => args.join(" "));
  assert.deepEqual(first.slice(0, backstops.length), backstops, "the backstops come first");
  // Only documentation, private and ULA ranges: nothing the host's default routes would carry elsewhere.
  for (const range of hostRoutedRanges(t)) {
    assert.match(range, /^(10\.(97|98|244)\.|198\.51\.100\.|198\.18\.0\.|2001:db8::)/);
  }
  // 203.0.113.0/24 holds this machine's package and module proxy (203.0.113.80): never routed into the test.
  assert.ok(!hostRoutedRanges(t).some((r) => r.startsWith("203.0.113.")));
});

Deno.test("the cloud namespace has no default route and the nodes route each other's pod ranges", () => {
  const all = setupCommands(t).map((args) => args.join(" "));
  assert.ok(!all.some((c) => c.startsWith(`-n ${t.cloudNetns} route add default`)), "the cloud has a default route");
  assert.ok(all.includes(`-n ${t.nodes[0].netns} route add 10.244.2.0/24 via 10.97.0.3`));
  assert.ok(all.includes(`-n ${t.nodes[1].netns} route add 10.244.1.0/24 via 10.97.0.2`));
  assert.ok(all.includes(`-n ${t.cloudNetns} route add 10.244.1.0/24 via 10.97.0.2`));
  assert.ok(all.includes("-6 route replace 2001:db8::/32 via fd98::2 dev ccm-h0"));
});

Deno.test("teardown removes every namespace, the host veth, each route and each backstop the setup made", () => {
  const down = teardownCommands(t).map((args) => args.join(" "));
  for (const ns of [t.cloudNetns, ...t.nodes.map((n) => n.netns)]) assert.ok(down.includes(`netns del ${ns}`));
  assert.ok(down.includes("link del ccm-h0"));
  assert.equal(down.filter((c) => c.includes("blackhole")).length, backstopRoutes(t).length);
});

Deno.test("the leftover check names what teardown left and ignores the host's own routes", () => {
  const left = topologyLeftovers(t, {
    netns: "ccm-cloud (id: 3)\nother-ns\n",
    links: "7: ccm-h0@if2: <BROADCAST> mtu 1500\n2: eth0: <BROADCAST>\n",
    routes4: "default via 192.0.2.1 dev eth0\nblackhole 10.97.0.0/24 metric 4000\n",
    routes6: "default via fd00::1 dev eth0 metric 1024\n",
  });
  assert.deepEqual(left, [
    "network namespace ccm-cloud",
    "link ccm-h0",
    "route blackhole 10.97.0.0/24 metric 4000",
  ]);
});

Deno.test("the nodes stay reachable from the cloud: only the half of the network holding the LB legs stays local", () => {
  const [del, add] = simulatorRouteFixes(t).map((args) => args.join(" "));
  assert.equal(del, "-n ccm-cloud route del local 10.97.0.0/24 dev lo table local");
  assert.equal(add, "-n ccm-cloud route replace local 10.97.0.128/25 dev lo table local");
  const network = { prefix4: parsePrefix("10.97.0.0/24")!, prefix6: parsePrefix("fd97:0:0:1::/64")! };
  for (const seq of [1, 2, 50, 200]) {
    for (const index of [0, 1]) {
      const leg = vmLegAddress(network as never, { seq, index }, 4);
      assert.ok(Number(leg.split(".")[3]) >= 128, `leg ${leg} is outside the local half`);
    }
  }
  for (const node of t.nodes) assert.ok(Number(node.ip.split(".")[3]) < 128);
});

Deno.test("each node's bridge allocates its own pod range, keeps IPAM state in its directory and does not masquerade", () => {
  const conf = JSON.parse(bridgeConflist(t.nodes[1], "/tmp/x/ipam"));
  const bridge = conf.plugins[0];
  assert.equal(bridge.type, "bridge");
  assert.equal(bridge.ipMasq, false);
  assert.equal(bridge.ipam.dataDir, "/tmp/x/ipam");
  assert.deepEqual(bridge.ipam.ranges, [[{ subnet: "10.244.2.0/24", gateway: "10.244.2.1" }]]);
});

Deno.test("the real-cluster gate asks for nsenter and Debian's CNI plugins on top of a real node", () => {
  const reasons = realClusterBlockers({
    uid: 0,
    filesystems: ["overlay"],
    commands: Object.keys(REAL_NODE_COMMANDS),
    cgroupsWritable: true,
    nsenter: false,
    cniPlugins: ["bridge"],
    netns: true,
  });
  assert.equal(reasons.length, 2);
  assert.match(reasons[0], /nsenter.*util-linux/);
  assert.match(reasons[1], /host-local, loopback, portmap.*containernetworking-plugins/);
});

Deno.test("the e2e run skips exactly the named tests and reports ran, passed, failed and skipped", () => {
  const regex = new RegExp(skipRegex(NAMED_SKIPS));
  assert.ok(
    regex.test(
      "[sig-network] LoadBalancers [Feature:LoadBalancer] should be able to change the type and ports of a UDP service [Slow]",
    ),
  );
  assert.ok(
    !regex.test(
      "[sig-network] LoadBalancers [Feature:LoadBalancer] should be able to change the type and ports of a TCP service [Slow]",
    ),
  );
  assert.ok(
    !regex.test(
      "[sig-network] LoadBalancers [Feature:LoadBalancer] should handle load balancer cleanup finalizer for service",
    ),
  );
  const xml = `<testsuites><testsuite>
    <testcase name="[SynchronizedBeforeSuite]" status="passed" time="1"></testcase>
    <testcase name="[sig-network] LoadBalancers [Feature:LoadBalancer] should handle load balancer cleanup finalizer for service [Slow]" status="passed" time="62.4"></testcase>
    <testcase name="[sig-network] LoadBalancers [Feature:LoadBalancer] should be able to change the type and ports of a UDP service [Slow]" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
    <testcase name="[sig-network] LoadBalancers ExternalTrafficPolicy: Local [Feature:LoadBalancer] [Slow] should work from pods" status="failed" time="30"><failure message="timed out&#xA;more" type="failed">x</failure></testcase>
    <testcase name="[sig-network] Services should serve a basic endpoint" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
  </testsuite></testsuites>`;
  const cases = readJunit(xml);
  assert.equal(cases.length, 3);
  assert.equal(e2eSummary(cases), "2 ran, 1 passed, 1 failed, 1 skipped");
  assert.match(skipReason(cases[1]), /TCP only.*loadbalancer\.go:270/);
  assert.equal(cases[2].message, "timed out");
});

Deno.test("a known product gap passes the run only while it fails with its own message", () => {
  const name =
    "[sig-network] LoadBalancers ExternalTrafficPolicy: Local [Feature:LoadBalancer] [Slow] should work for " +
    "type=LoadBalancer [sig-network]";
  const other = "[sig-network] LoadBalancers [Feature:LoadBalancer] should handle load balancer cleanup finalizer";
  const gap = { name, status: "failed" as const, seconds: 1, message: "Source IP was NOT preserved" };
  assert.deepEqual(unexpectedOutcomes([gap]), []);
  assert.equal(unexpectedOutcomes([{ ...gap, message: "timed out" }]).length, 1);
  assert.match(unexpectedOutcomes([{ ...gap, status: "passed" }])[0], /take it off/);
  assert.match(unexpectedOutcomes([{ name: other, status: "failed", seconds: 1, message: "x" }])[0], /^failed:/);
});

Deno.test("in node-address mode the e2e run skips only the long tests and Local's first-address test", () => {
  const args = e2eArgs({ kubeconfig: "k", kubectlPath: "kubectl", reportDir: "r", mode: "node-addresses" });
  const skip = new RegExp(args.find((a) => a.startsWith("--ginkgo.skip="))!.slice("--ginkgo.skip=".length));
  for (const text of ["of a UDP service", "source ranges", "without NodePort"]) {
    assert.ok(!skip.test(`[sig-network] LoadBalancers [Feature:LoadBalancer] ${text}`), `${text} runs`);
  }
  assert.ok(skip.test("ExternalTrafficPolicy: Local [Feature:LoadBalancer] should work for type=LoadBalancer"));
  assert.ok(
    skip.test("should not have connectivity disruption during rolling update with externalTrafficPolicy=Local"),
    "the long tests stay with deno task e2e",
  );
  const sourceIp = {
    name: "[sig-network] LoadBalancers ExternalTrafficPolicy: Local [Feature:LoadBalancer] should work for " +
      "type=LoadBalancer [Slow]",
    status: "failed" as const,
    seconds: 1,
    message: "Source IP was NOT preserved",
  };
  assert.deepEqual(unexpectedOutcomes([sourceIp]), [], "a known gap with a load balancer");
  assert.equal(unexpectedOutcomes([sourceIp], "node-addresses").length, 1, "a failure on the nodes' addresses");
  assert.deepEqual(modeLists("node-addresses").skips.map((x) => x.pattern), ["should work for type=LoadBalancer"]);
  assert.match(skipReason({ ...sourceIp, status: "skipped" }, "node-addresses"), /only when the scheduler puts/);
  // The README's command runs there only what the load-balancer run cannot pass.
  const focus = new RegExp(args.find((a) => a.startsWith("--ginkgo.focus="))!.slice("--ginkgo.focus=".length));
  assert.ok(
    focus.test(
      "[sig-network] LoadBalancers [Feature:LoadBalancer] should be able to change the type and ports of a UDP service",
    ),
  );
  assert.ok(!focus.test("[sig-network] LoadBalancers [Feature:LoadBalancer] should work from pods"));
  assert.match(
    skipReason(
      { name: "… [Feature:LoadBalancer] should work from pods", status: "skipped", seconds: 0, message: "" },
      "node-addresses",
    ),
    /passes in the load-balancer run/,
  );
});

Deno.test("a LoadBalancer e2e suite renamed, split or grown upstream is reported, not silently run or skipped", () => {
  const full = (text: string) => `[sig-network] LoadBalancers [Feature:LoadBalancer] ${text} [Slow]`;
  const report = LOAD_BALANCER_TESTS.map(full);
  assert.deepEqual(suiteChanges(report), [], "v1.37.2's 17 tests, each named once");
  // 1.38 splits "…without NodePort and change it" into two tests with longer names.
  const split = report.filter((n) => !n.includes("without NodePort")).concat(
    full(
      "should be able to create LoadBalancer Service without NodePort and change it with Cluster external traffic policy",
    ),
    full(
      "should be able to create LoadBalancer Service without NodePort and change it with Local external traffic policy",
    ),
  );
  assert.match(
    suiteChanges(split).join("\n"),
    /"should be able to create LoadBalancer Service without NodePort and change it" names 2 tests \(split\)/,
  );
  const renamed = report.map((n) => n.replace("should work from pods", "should work from pods in the cluster"));
  assert.deepEqual(suiteChanges(renamed), []);
  const gone = report.filter((n) => !n.includes("should work from pods"));
  assert.match(suiteChanges(gone).join("\n"), /no test is named "should work from pods" any more/);
  const added = [...report, full("should keep a brand new promise")];
  assert.match(suiteChanges(added).join("\n"), /a test no list names \(new or renamed\): .*brand new promise/);
});
