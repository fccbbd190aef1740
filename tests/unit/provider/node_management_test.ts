/** Nodes labelled `node.ankra.cloud/managed=false`: the decisions that leave them alone, as pure functions. */
import assert from "node:assert/strict";
import type { Server } from "../../../lib/cloud/schemas.ts";
import type { SlimNode } from "../../../lib/kube/slim.ts";
import { lifecycleAction } from "../../../lib/provider/node/node_lifecycle.ts";
import { isUnmanagedNode } from "../../../lib/provider/node_management.ts";
import { SHUTDOWN_TAINT } from "../../../lib/provider/node/node_plan.ts";
import { nodeChangeMatters } from "../../../lib/provider/service/service_changes.ts";
import { eligibleNodes } from "../../../lib/provider/service/service_nodes.ts";

const NODE: SlimNode = {
  name: "onprem-1",
  uid: "u1",
  resourceVersion: "1",
  providerID: "ankracloud://de-fsn1/srv-1",
  labels: { "node.ankra.cloud/managed": "false" },
  taints: [],
  addresses: [],
  ready: "False",
};

const VIEW = {
  synced: true,
  server: (id: string) => ({ id, state: "stopped" }) as unknown as Server,
  isGone: () => true,
};

Deno.test("only the value false (any case) takes a node out of the controller's hands", () => {
  assert.ok(isUnmanagedNode(NODE));
  assert.ok(isUnmanagedNode({ labels: { "node.ankra.cloud/managed": "FALSE" } }));
  assert.ok(!isUnmanagedNode({ labels: { "node.ankra.cloud/managed": "true" } }));
  assert.ok(!isUnmanagedNode({ labels: {} }));
});

Deno.test("an unmanaged node is never tainted, untainted or deleted, whatever its server", () => {
  assert.equal(lifecycleAction(NODE, VIEW), "none", "a stopped server: no shutdown taint");
  assert.equal(lifecycleAction(NODE, { ...VIEW, server: () => undefined }), "none", "a gone server: not deleted");
  const tainted: SlimNode = { ...NODE, ready: "True", taints: [{ key: SHUTDOWN_TAINT, effect: "NoSchedule" }] };
  assert.equal(lifecycleAction(tainted, VIEW), "none", "a taint someone else set is not removed either");
  assert.equal(lifecycleAction({ ...NODE, labels: {} }, VIEW), "add-shutdown-taint", "the same node, managed");
});

Deno.test("an unmanaged node is never a member, and labelling it wakes the Services", () => {
  const managed = { ...NODE, name: "worker-1", labels: {} };
  assert.deepEqual(eligibleNodes([NODE, managed]).map((n) => n.name), ["worker-1"]);
  assert.ok(nodeChangeMatters(managed, { ...managed, labels: { "node.ankra.cloud/managed": "false" } }));
});
