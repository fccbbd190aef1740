/**
 * What a Service's annotations may make the controller do, end to end (real kube-apiserver, simulator, service
 * controller in-process): an id that would leave its URL path segment (`edge: ".."`, or the recorded edge edited to
 * it) never becomes a request; a certificate outside the operator's allow-list is a `ResourceNotAllowed` Warning and
 * no frontend uses it; the chart's allow-list values reach the controller as its variables.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane.ts";
import { kubeOk } from "../support/kube_http.ts";
import { helm } from "../support/helm.ts";
import { resolveCommand } from "../../lib/config.ts";
import { TEST_TOKEN } from "../support/simulator.ts";
import { EDGE_IN_USE_ANNOTATION } from "../../lib/kube/slim.ts";
import { eventually } from "../support/eventually.ts";
import { startServiceController } from "../support/service_controller.ts";
import {
  createNodes,
  createService,
  deleteNodes,
  deleteService,
  eventsFor,
  getService,
  ingressIps,
  NS,
  serviceExists,
} from "../support/service_fixtures.ts";

const PREFIX = "load-balancer.ankra.cloud/";
const CHART = new URL("../../chart", import.meta.url).pathname;

Deno.test('a Service with edge ".." gets InvalidAnnotation, and the simulator receives no request for it', async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const dots = uniqueName("dots");
  const after = uniqueName("after");
  const from = sim.log.length;
  await createService(dots, { annotations: { [`${PREFIX}edge`]: ".." } });
  try {
    await eventually(
      async () => (await eventsFor(dots)).some((e) => e.reason === "InvalidAnnotation"),
      15_000,
      "an InvalidAnnotation event",
    );
    const event = (await eventsFor(dots)).find((e) => e.reason === "InvalidAnnotation")!;
    assert.equal(event.type, "Warning");
    assert.match(event.message, /load-balancer\.ankra\.cloud\/edge must be an Ankra Cloud edge id .*, not "\.\."/);
    // A Service made afterwards is served: the controller went on working, and what it sent is in the log.
    await createService(after);
    await eventually(async () => ingressIps(await getService(after)).length > 0, 15_000, "the next Service served");
    const sent = sim.log.slice(from);
    const stray = sent.filter((e) => e.operation === "unknown" || e.operation.endsWith("_edge") || e.path === "/v1/");
    assert.deepEqual(stray.map((e) => `${e.method} ${e.path}`), [], "no request built from the annotation");
    const service = await getService(dots);
    assert.deepEqual(service.metadata?.finalizers ?? [], [], "nothing was started for it");
    assert.deepEqual(ingressIps(service), []);
  } finally {
    await deleteService(dots);
    await deleteService(after);
    await eventually(async () => !(await serviceExists(dots)) && !(await serviceExists(after)), 15_000);
    await deleteNodes(nodes);
  }
});

Deno.test('a recorded edge edited by hand to ".." is forgotten without a request, and the Service is served', async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const name = uniqueName("recorded");
  const from = sim.log.length;
  await createService(name, { annotations: { [EDGE_IN_USE_ANNOTATION]: ".." } });
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000, "the Service served");
    await eventually(async () => !((await getService(name)).metadata?.annotations ?? {})[EDGE_IN_USE_ANNOTATION]);
    const sent = sim.log.slice(from);
    const stray = sent.filter((e) => e.operation === "unknown" || e.operation.endsWith("_edge") || e.path === "/v1/");
    assert.deepEqual(stray.map((e) => `${e.method} ${e.path}`), [], "no request built from the recorded edge");
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes(nodes);
  }
});

Deno.test("a certificate outside the allow-list gets ResourceNotAllowed, and no frontend of the simulator uses it", async () => {
  await using env = await startServiceController({ allowedResources: { certificateIds: ["cert-team"] } });
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const wildcard = uniqueName("wildcard");
  const team = uniqueName("team");
  const tls = (certificates: string) => ({
    ports: [{ port: 443 }],
    annotations: { [`${PREFIX}tls-ports`]: "443", [`${PREFIX}certificate-ids`]: certificates },
  });
  await createService(wildcard, tls("cert-team,cert-wildcard"));
  await createService(team, tls("cert-team"));
  try {
    await eventually(async () => ingressIps(await getService(team)).length > 0, 15_000, "the allowed Service served");
    await eventually(
      async () => (await eventsFor(wildcard)).some((e) => e.reason === "ResourceNotAllowed"),
      15_000,
      "a ResourceNotAllowed event",
    );
    const event = (await eventsFor(wildcard)).find((e) => e.reason === "ResourceNotAllowed")!;
    assert.equal(event.type, "Warning");
    assert.match(
      event.message,
      /certificate-ids names certificate "cert-wildcard", which ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS does not allow/,
    );
    const frontends = () => [...sim.loadBalancers.items.values()].flatMap((lb) => lb.frontends);
    assert.equal(sim.loadBalancers.items.size, 1, "only the allowed Service has a load balancer");
    assert.deepEqual(frontends().map((f) => [f.port, f.tls, f.certificate_ids]), [[443, true, ["cert-team"]]]);
    assert.deepEqual(ingressIps(await getService(wildcard)), [], "no address for the refused Service");

    // Naming only allowed certificates lifts it: the Service is served, and still no frontend has the wildcard.
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${wildcard}`, {
      body: { metadata: { annotations: { [`${PREFIX}certificate-ids`]: "cert-team" } } },
    });
    await eventually(async () => ingressIps(await getService(wildcard)).length > 0, 15_000, "served once allowed");
    assert.equal(sim.loadBalancers.items.size, 2);
    assert.ok(!frontends().some((f) => f.certificate_ids.includes("cert-wildcard")), "the wildcard is never used");
  } finally {
    await deleteService(wildcard);
    await deleteService(team);
    await eventually(async () => !(await serviceExists(wildcard)) && !(await serviceExists(team)), 15_000);
    await deleteNodes(nodes);
  }
});

Deno.test("the chart's allow-list values become the controller's variables; without them none is set", async () => {
  const plain = await helm(["template", "t", CHART, "--set", "api.token=x"]);
  assert.equal(plain.code, 0, plain.text);
  assert.doesNotMatch(plain.text, /ANKRA_CLOUD_ALLOWED_/, "unset: every resource allowed, as before");
  const lists = await helm([
    "template",
    "t",
    CHART,
    "--set",
    "api.token=x",
    "--set",
    "loadBalancer.allowedCertificateIDs={cert-a,cert-b}",
    "--set",
    "loadBalancer.allowedEdges={edge-1}",
    "--set",
    "loadBalancer.allowedNetworkIDs={net-1,net-2}",
    "--set",
    "loadBalancer.networkID=net-2",
  ]);
  assert.equal(lists.code, 0, lists.text);
  const env: Record<string, string> = {};
  for (const [, name, value] of lists.text.matchAll(/- name: (ANKRA_CLOUD_[A-Z_]+)\n\s+value: "([^"]*)"/g)) {
    env[name] = value;
  }
  assert.equal(env.ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS, "cert-a,cert-b");
  assert.equal(env.ANKRA_CLOUD_ALLOWED_EDGES, "edge-1");
  assert.equal(env.ANKRA_CLOUD_ALLOWED_NETWORK_IDS, "net-1,net-2");
  const command = resolveCommand([], { env: { ...env, ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_TOKEN_FILE: "" } });
  assert.ok(command.kind === "run");
  assert.deepEqual(command.config.cloud.allowedResources, {
    certificateIds: ["cert-a", "cert-b"],
    edges: ["edge-1"],
    networkIds: ["net-1", "net-2"],
  });
  const bad = await helm(["template", "t", CHART, "--set", "api.token=x", "--set", "loadBalancer.allowedEdges={..}"]);
  assert.notEqual(bad.code, 0, "the schema refuses what is not an id");
  assert.match(bad.text, /at '\/loadBalancer\/allowedEdges\/0': '\.\.' does not match pattern/);
});
