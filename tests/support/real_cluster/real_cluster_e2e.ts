/**
 * Kubernetes' own LoadBalancer e2e tests (`test/e2e/network/loadbalancer.go` at v1.37.2 — the same 17 tests, on the
 * same lines, as at v1.35.4 and v1.36.3 — label `[Feature:LoadBalancer]`) against the real cluster: the tests the run
 * expects, by their text ({@linkcode LOAD_BALANCER_TESTS}: a test renamed, split or added upstream is reported, never
 * silently run or skipped), which tests are skipped and why (only what the Ankra API cannot do), the `e2e.test`
 * command line, and the reading of its JUnit report into `N ran, N passed, N skipped`. Pure functions; the run itself
 * is tests/real/e2e_loadbalancer_test.ts.
 *
 * @module
 */

/** A test skipped on purpose: a part of its name (a regular expression), the reason, and where upstream has it. */
export interface NamedSkip {
  /** Matches the test's name (ginkgo `--ginkgo.skip`). */
  pattern: string;
  /** Why this controller cannot pass it. */
  reason: string;
  /** The test's source line in k8s.io/kubernetes@v1.37.2. */
  source: string;
}

/**
 * The text of every `[Feature:LoadBalancer]` test of k8s.io/kubernetes@v1.37.2 (`It` texts, `loadbalancer.go` lines
 * 132–1221). Each names exactly one test of the report; a report test none of them names, or one that names none or
 * several, is a change of the suite that the run reports ({@linkcode suiteChanges}) — 1.38 splits "…without NodePort
 * and change it" in two, for instance.
 */
export const LOAD_BALANCER_TESTS: readonly string[] = [
  "should be able to change the type and ports of a TCP service",
  "should be able to change the type and ports of a UDP service",
  "should only allow access from service loadbalancer source ranges",
  "should have session affinity work for LoadBalancer service with Local traffic policy",
  "should be able to switch session affinity for LoadBalancer service with Local traffic policy",
  "should have session affinity work for LoadBalancer service with Cluster traffic policy",
  "should be able to switch session affinity for LoadBalancer service with Cluster traffic policy",
  "should handle load balancer cleanup finalizer for service",
  "should be able to create LoadBalancer Service without NodePort and change it",
  "should be able to preserve UDP traffic when server pod cycles for a LoadBalancer service on different nodes",
  "should be able to preserve UDP traffic when server pod cycles for a LoadBalancer service on the same nodes",
  "should not have connectivity disruption during rolling update with externalTrafficPolicy=Cluster",
  "should not have connectivity disruption during rolling update with externalTrafficPolicy=Local",
  "should work for type=LoadBalancer",
  "should only target nodes with endpoints",
  "should target all nodes with endpoints",
  "should work from pods",
];

/**
 * How the report's tests differ from {@linkcode LOAD_BALANCER_TESTS} and from the names the skip and gap lists use:
 * one line per test added or renamed upstream (named by no entry), per entry that names no test (gone or renamed)
 * and per entry that names several (split). Empty when the suite is the one these lists were written for.
 */
export function suiteChanges(
  names: string[],
  lists = { expected: LOAD_BALANCER_TESTS, named: namedPatterns() },
): string[] {
  const changes: string[] = [];
  for (const name of names) {
    if (!lists.expected.some((text) => name.includes(text))) {
      changes.push(`a test no list names (new or renamed): ${name}`);
    }
  }
  for (const text of new Set([...lists.expected, ...lists.named])) {
    const matched = names.filter((name) => name.includes(text));
    if (matched.length === 0) changes.push(`no test is named "${text}" any more (gone or renamed)`);
    if (matched.length > 1) changes.push(`"${text}" names ${matched.length} tests (split): ${matched.join("; ")}`);
  }
  return changes;
}

function namedPatterns(): string[] {
  return [...NAMED_SKIPS, ...LONG_TESTS, ...KNOWN_PRODUCT_GAPS].map((s) => s.pattern);
}

/** Every test the run skips. Nothing else is skipped by the harness. */
export const NAMED_SKIPS: NamedSkip[] = [
  {
    pattern: "should be able to change the type and ports of a UDP service",
    reason: "Ankra load balancers forward TCP only (the controller refuses UDP ports: lib/provider/service_plan.ts)",
    source: "test/e2e/network/loadbalancer.go:270",
  },
  {
    pattern:
      "should be able to preserve UDP traffic when server pod cycles for a LoadBalancer service on different nodes",
    reason: "Ankra load balancers forward TCP only",
    source: "test/e2e/network/loadbalancer.go:707",
  },
  {
    pattern:
      "should be able to preserve UDP traffic when server pod cycles for a LoadBalancer service on the same nodes",
    reason: "Ankra load balancers forward TCP only",
    source: "test/e2e/network/loadbalancer.go:841",
  },
  {
    pattern: "should only allow access from service loadbalancer source ranges",
    reason: "the Ankra API has no source filter: loadBalancerSourceRanges cannot be enforced (the controller says so " +
      "in an event)",
    source: "test/e2e/network/loadbalancer.go:422",
  },
  {
    pattern: "should be able to create LoadBalancer Service without NodePort and change it",
    reason: "Ankra load balancers reach pods through the nodes' NodePorts (the controller refuses " +
      "allocateLoadBalancerNodePorts: false); every kind job skips it too",
    source: "test/e2e/network/loadbalancer.go:642",
  },
];

/**
 * Tests the README's test command (and `.ci/run`) leaves to `deno task e2e` because of their length — never dropped
 * silently: they are reported as skipped with this reason.
 */
export const LONG_TESTS: NamedSkip[] = [
  {
    pattern: "should not have connectivity disruption during rolling update with externalTrafficPolicy=Cluster",
    reason: "about 10 minutes (5 rolling updates of pods that delay their shutdown 60 s): run by `deno task e2e`",
    source: "test/e2e/network/loadbalancer.go:975",
  },
  {
    pattern: "should not have connectivity disruption during rolling update with externalTrafficPolicy=Local",
    reason: "about 10 minutes (5 rolling updates of pods that delay their shutdown 60 s): run by `deno task e2e`",
    source: "test/e2e/network/loadbalancer.go:984",
  },
];

/**
 * Tests that fail because of the product today, each with the change that would make it pass: expected to fail with
 * this message (a strict expected failure — when one passes, the run fails until it is taken off this list).
 */
export const KNOWN_PRODUCT_GAPS: (NamedSkip & { failure: string })[] = [
  {
    // 1.35 named it "… Local [Feature:LoadBalancer] [Slow] should work for type=LoadBalancer"; 1.37 puts the labels
    // last ("… Local [Feature:LoadBalancer] should work for type=LoadBalancer [Slow] [sig-network, …]").
    pattern: "should work for type=LoadBalancer",
    failure: "Source IP was NOT preserved",
    reason: "an Ankra load balancer proxies (HAProxy): pods see its VM's address, not the client's. The test " +
      "skips itself for `ipMode: Proxy` (\"LoadBalancer uses 'Proxy' IPMode\"); the controller declares `VIP` for " +
      'plain TCP so that pods calling the address are short-cut by kube-proxy ("should work from pods" needs that) ' +
      "and `Proxy` where the load balancer terminates TLS or speaks http; `load-balancer.ankra.cloud/ip-mode: Proxy` " +
      "chooses it per Service",
    source: "test/e2e/network/loadbalancer.go:1016",
  },
];

/**
 * How the controller serves the tests' Services in a run: with Ankra load balancers (the default), or on the nodes'
 * own addresses (`--default-load-balancer-mode=node-addresses`, docs/node-addresses.md).
 */
export type E2eMode = "load-balancer" | "node-addresses";

/**
 * What node-address mode cannot pass, and why. The client's address with `Local` is kept there (the real cluster's
 * own step proves it: tests/support/real_cluster/real_cluster_node_mode.ts); what fails is the test's order.
 */
export const NODE_ADDRESS_SKIPS: NamedSkip[] = [
  {
    pattern: "should work for type=LoadBalancer",
    reason: "node-address mode publishes a Local Service on the nodes that hold its pods (every eligible node while " +
      "none does, as this test's Service has none when it reads its first address); the test keeps that first " +
      "address and then starts the pod, so it passes only when the scheduler puts the pod on that node (measured " +
      "here: passed once, failed twice): a node without the pod refuses Local traffic, and no node address follows " +
      "a pod as a load balancer's does",
    source: "test/e2e/network/loadbalancer.go:1016",
  },
];

/**
 * The skips and known gaps of a run in `mode`. In node-address mode kube-proxy answers on the nodes' addresses, so
 * what an Ankra load balancer cannot do (UDP, source ranges, no NodePorts) runs there: nothing is skipped but the long
 * tests and {@linkcode NODE_ADDRESS_SKIPS}, and no failure is expected.
 */
export function modeLists(mode: E2eMode): { skips: NamedSkip[]; gaps: typeof KNOWN_PRODUCT_GAPS } {
  return mode === "load-balancer"
    ? { skips: NAMED_SKIPS, gaps: KNOWN_PRODUCT_GAPS }
    : { skips: NODE_ADDRESS_SKIPS, gaps: [] };
}

/**
 * What the node-address run of the README's test command runs: the tests the load-balancer run skips or expects to
 * fail for a reason of the Ankra load balancer (UDP, source ranges, no NodePorts, the client's address with `Local`).
 * The others pass in the load-balancer run already and test kube-proxy's side the same way in both modes; `E2E_ALL=1`
 * (`deno task e2e`) runs every test in both modes.
 */
export function nodeAddressFocus(): string {
  return [...NAMED_SKIPS, ...KNOWN_PRODUCT_GAPS].map((s) => escape(s.pattern)).join("|");
}

/** The focus of the run. */
export const E2E_FOCUS = "\\[Feature:LoadBalancer\\]";

/** A regular expression special characters escaped. */
function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The `--ginkgo.skip` value for `skips`. */
export function skipRegex(skips: NamedSkip[]): string {
  return skips.map((s) => escape(s.pattern)).join("|");
}

/** What {@linkcode e2eArgs} needs. */
export interface E2eRun {
  /** The admin kubeconfig. */
  kubeconfig: string;
  /** kubectl. */
  kubectlPath: string;
  /** Where the JUnit report goes. */
  reportDir: string;
  /** An extra focus narrowing the run (a regular expression), e.g. from `E2E_FOCUS`. */
  narrow?: string;
  /** Run the {@linkcode LONG_TESTS} too (`deno task e2e`). */
  all?: boolean;
  /** How the controller serves the Services (default `load-balancer`). */
  mode?: E2eMode;
}

/** The tests a run skips: the named ones of its mode, and the long ones unless `all`. */
export function skipsOf(all: boolean, mode: E2eMode = "load-balancer"): NamedSkip[] {
  const { skips } = modeLists(mode);
  return all ? skips : [...skips, ...LONG_TESTS];
}

/** The command line of `e2e.test` for the LoadBalancer subset. */
export function e2eArgs(run: E2eRun): string[] {
  const narrow = run.narrow ?? (run.mode === "node-addresses" && !run.all ? nodeAddressFocus() : undefined);
  return [
    "--provider=skeleton",
    `--kubeconfig=${run.kubeconfig}`,
    `--kubectl-path=${run.kubectlPath}`,
    `--ginkgo.focus=${E2E_FOCUS}${narrow ? `.*(${narrow})` : ""}`,
    `--ginkgo.skip=${skipRegex(skipsOf(run.all ?? false, run.mode))}`,
    "--ginkgo.no-color",
    "--ginkgo.v",
    `--ginkgo.junit-report=${run.reportDir}/junit_loadbalancer.xml`,
    `--report-dir=${run.reportDir}`,
    "--disable-log-dump",
    "--dump-logs-on-failure=false",
    "--allowed-not-ready-nodes=0",
    "--node-schedulable-timeout=2m",
  ];
}

/** One test of the report. */
export interface E2eCase {
  /** Its full name. */
  name: string;
  /** Its outcome. */
  status: "passed" | "failed" | "skipped";
  /** Seconds it took. */
  seconds: number;
  /** The failure or skip message (first line). */
  message: string;
}

function attribute(tag: string, name: string): string {
  const match = new RegExp(`\\b${name}="([^"]*)"`).exec(tag);
  return match
    ? match[1].replace(/&#xA;/g, "\n").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(
      /&amp;/g,
      "&",
    )
    : "";
}

/**
 * The LoadBalancer tests of a ginkgo JUnit report (suite set-up and tear-down nodes left out; tests outside the
 * focus, which ginkgo lists as skipped, left out too).
 */
export function readJunit(xml: string): E2eCase[] {
  const cases: E2eCase[] = [];
  for (const match of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const name = attribute(match[1], "name");
    if (!name.includes("[Feature:LoadBalancer]")) continue;
    const body = match[2] ?? "";
    const failure = /<(failure|error)\b([^>]*)/.exec(body);
    const skipped = /<skipped\b([^>]*)/.exec(body);
    const status = attribute(match[1], "status");
    cases.push({
      name,
      status: failure ? "failed" : skipped || status === "skipped" ? "skipped" : "passed",
      seconds: Number(attribute(match[1], "time")) || 0,
      message: (failure ? attribute(failure[2], "message") : skipped ? attribute(skipped[1], "message") : "")
        .split("\n")[0],
    });
  }
  return cases;
}

/** The closing line: `N ran, N passed, N failed, N skipped`. */
export function e2eSummary(cases: E2eCase[]): string {
  const count = (s: E2eCase["status"]) => cases.filter((c) => c.status === s).length;
  const ran = cases.length - count("skipped");
  return `${ran} ran, ${count("passed")} passed, ${count("failed")} failed, ${count("skipped")} skipped`;
}

/** Why a skipped test was skipped: the named skip it matches, else ginkgo's own message (a run-time skip). */
export function skipReason(testCase: E2eCase, mode: E2eMode = "load-balancer"): string {
  const named = [...modeLists(mode).skips, ...LONG_TESTS].find((s) => testCase.name.includes(s.pattern));
  if (named) return `${named.reason} (${named.source})`;
  if (mode === "node-addresses" && !new RegExp(nodeAddressFocus()).test(testCase.name)) {
    return "passes in the load-balancer run; the node-address run of the README's command runs only what an Ankra " +
      "load balancer cannot (`deno task e2e` runs every test in both modes)";
  }
  return `skipped by the test itself: ${testCase.message || "no message"}`;
}

/**
 * The failures that fail the run: every failed test not in {@linkcode KNOWN_PRODUCT_GAPS} (or failing with another
 * message), and every known gap that passed (take it off the list). The run checks {@linkcode suiteChanges} beside.
 */
export function unexpectedOutcomes(cases: E2eCase[], mode: E2eMode = "load-balancer"): string[] {
  const out: string[] = [];
  for (const c of cases) {
    const gap = modeLists(mode).gaps.find((g) => c.name.includes(g.pattern));
    if (c.status === "failed" && !(gap && c.message.includes(gap.failure))) out.push(`failed: ${c.name}: ${c.message}`);
    if (c.status === "passed" && gap) out.push(`passed, take it off KNOWN_PRODUCT_GAPS: ${c.name}`);
  }
  return out;
}

/** Why a known gap failed, for the report; undefined for other tests. */
export function knownGap(testCase: E2eCase, mode: E2eMode = "load-balancer"): string | undefined {
  const gap = modeLists(mode).gaps.find((g) => testCase.name.includes(g.pattern));
  return gap && testCase.status === "failed" ? `known product gap: ${gap.reason} (${gap.source})` : undefined;
}
