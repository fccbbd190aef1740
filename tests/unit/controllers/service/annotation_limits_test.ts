/**
 * What a Service's annotations may make the controller do, over fakes (fast tier): an id that would leave its URL
 * path segment (`edge: ".."`, or the recorded edge edited to it) never becomes a request; a certificate outside the
 * operator's allow-list is a `ResourceNotAllowed` Warning and no frontend uses it. The chart's allow-list values
 * reaching the controller as its variables are in tests/integration/annotation_limits_test.ts.
 */
import { EDGE_IN_USE_ANNOTATION } from "../../../../lib/ankra_names.ts";
import assert from "node:assert/strict";
import { eventually } from "../../../support/wait/eventually.ts";
import { startFakeServiceController } from "../../../support/fakes/fake_service_controller.ts";

const PREFIX = "load-balancer.ankra.cloud/";

/** Requests an id taken from an annotation would have made: an unknown operation, an edge call, or `/v1/` itself. */
function strayRequests(log: { operation: string; method: string; path: string }[]): string[] {
  return log.filter((e) => e.operation === "unknown" || e.operation.endsWith("_edge") || e.path === "/v1/")
    .map((e) => `${e.method} ${e.path}`);
}

Deno.test('a Service with edge ".." gets InvalidAnnotation, and the simulator receives no request for it', async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("dots", { annotations: { [`${PREFIX}edge`]: ".." } });
  const event = await eventually(() => env.eventsOf("dots").find((e) => e.reason === "InvalidAnnotation"), {
    what: "an InvalidAnnotation event",
  });
  assert.equal(event.type, "Warning");
  assert.match(event.message, /load-balancer\.ankra\.cloud\/edge must be an Ankra Cloud edge id .*, not "\.\."/);
  // A Service made afterwards is served: the controller went on working, and what it sent is in the log.
  env.addService("after");
  await env.served("after");
  assert.deepEqual(strayRequests(sim.log), [], "no request built from the annotation");
  const service = env.services.store.get("default/dots")!;
  assert.deepEqual(service.finalizers, [], "nothing was started for it");
  assert.deepEqual(service.ingress, []);
});

Deno.test('a recorded edge edited by hand to ".." is forgotten without a request, and the Service is served', async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("recorded", { annotations: { [EDGE_IN_USE_ANNOTATION]: ".." } });
  await env.served("recorded");
  await eventually(() => !env.services.store.get("default/recorded")!.annotations[EDGE_IN_USE_ANNOTATION], {
    what: "the recorded edge forgotten",
  });
  assert.deepEqual(strayRequests(sim.log), [], "no request built from the recorded edge");
});

Deno.test("a certificate outside the allow-list gets ResourceNotAllowed, and no frontend of the simulator uses it", async () => {
  await using env = await startFakeServiceController({ allowedResources: { certificateIds: ["cert-team"] } });
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  const tls = (certificates: string) => ({
    ports: [{ protocol: "TCP", port: 443, nodePort: 30443 }],
    annotations: { [`${PREFIX}tls-ports`]: "443", [`${PREFIX}certificate-ids`]: certificates },
  });
  env.addService("wildcard", tls("cert-team,cert-wildcard"));
  env.addService("team", tls("cert-team"));
  await env.served("team");
  const event = await eventually(() => env.eventsOf("wildcard").find((e) => e.reason === "ResourceNotAllowed"), {
    what: "a ResourceNotAllowed event",
  });
  assert.equal(event.type, "Warning");
  assert.match(
    event.message,
    /certificate-ids names certificate "cert-wildcard", which ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS does not allow/,
  );
  const frontends = () => [...sim.loadBalancers.items.values()].flatMap((lb) => lb.frontends);
  assert.equal(sim.loadBalancers.items.size, 1, "only the allowed Service has a load balancer");
  assert.deepEqual(frontends().map((f) => [f.port, f.tls, f.certificate_ids]), [[443, true, ["cert-team"]]]);
  assert.deepEqual(env.services.store.get("default/wildcard")!.ingress, [], "no address for the refused Service");

  // Naming only allowed certificates lifts it: the Service is served, and still no frontend has the wildcard.
  env.annotate("wildcard", { [`${PREFIX}certificate-ids`]: "cert-team" });
  await env.served("wildcard");
  assert.equal(sim.loadBalancers.items.size, 2);
  assert.ok(!frontends().some((f) => f.certificate_ids.includes("cert-wildcard")), "the wildcard is never used");
});
