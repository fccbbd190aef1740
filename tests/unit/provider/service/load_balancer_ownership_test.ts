import assert from "node:assert/strict";
import {
  collisionMessage,
  loadBalancerOwnership,
  servesService,
} from "../../../../lib/provider/service/load_balancer_ownership.ts";

const CLUSTER = { name: "prod", uid: "uid-a" };
const SERVICE = "ccm.ankra.cloud/service";
const NAME = "ccm.ankra.cloud/cluster";
const UID = "ccm.ankra.cloud/cluster-uid";

Deno.test("a load balancer with this cluster's name and UID is its own", () => {
  const labels = { [SERVICE]: "shop/web", [NAME]: "prod", [UID]: "uid-a" };
  assert.deepEqual(loadBalancerOwnership(labels, CLUSTER), { kind: "own", service: "shop/web" });
  assert.ok(servesService(labels, CLUSTER, "shop/web"));
  assert.ok(!servesService(labels, CLUSTER, "shop/api"), "not another Service's");
});

Deno.test("the Go controller's load balancer (name and Service labels, no UID) is adopted as legacy", () => {
  const labels = { [SERVICE]: "shop/web", [NAME]: "prod" };
  assert.deepEqual(loadBalancerOwnership(labels, CLUSTER), { kind: "legacy", service: "shop/web" });
  assert.ok(servesService(labels, CLUSTER, "shop/web"));
});

Deno.test("another cluster's load balancer with the same --cluster-name is foreign and never served", () => {
  const labels = { [SERVICE]: "shop/web", [NAME]: "prod", [UID]: "uid-b" };
  assert.deepEqual(loadBalancerOwnership(labels, CLUSTER), { kind: "foreign", uid: "uid-b" });
  assert.ok(!servesService(labels, CLUSTER, "shop/web"));
  assert.deepEqual(loadBalancerOwnership({ [UID]: "uid-b" }, CLUSTER), { kind: "foreign", uid: "uid-b" });
});

Deno.test("unlabelled, other-cluster and service-less load balancers are told apart", () => {
  assert.deepEqual(loadBalancerOwnership({}, CLUSTER), { kind: "unlabelled" });
  assert.deepEqual(loadBalancerOwnership({ [SERVICE]: "shop/web", [NAME]: "staging" }, CLUSTER), { kind: "other" });
  assert.deepEqual(loadBalancerOwnership({ [NAME]: "prod", [UID]: "uid-a" }, CLUSTER), { kind: "other" });
  assert.ok(!servesService({}, CLUSTER, "shop/web"), "an unlabelled one is adopted by name, never as a Service's");
});

Deno.test("the collision message names the load balancer, the other UID and what to do", () => {
  const message = collisionMessage({ id: "lb-9", name: "k8s-prod-shop-web", labels: { [UID]: "uid-b" } });
  assert.match(message, /^load balancer lb-9 \(k8s-prod-shop-web\)/);
  assert.match(message, /ccm\.ankra\.cloud\/cluster-uid=uid-b/);
  assert.match(message, /--cluster-name unique in the Ankra account/);
});
