/** The node lifecycle decision, a pure function of the node and what the shared server view knows. */
import assert from "node:assert/strict";
import type { Server } from "../../../../lib/cloud/schemas.ts";
import type { SlimNode } from "../../../../lib/kube/slim.ts";
import { lifecycleAction } from "../../../../lib/provider/node/node_lifecycle.ts";
import { SHUTDOWN_TAINT } from "../../../../lib/provider/node/node_plan.ts";

const NODE: SlimNode = {
  name: "worker-1",
  uid: "u1",
  resourceVersion: "1",
  providerID: "ankracloud://de-fsn1/srv-1",
  labels: {},
  taints: [],
  addresses: [],
  ready: "False",
};
const TAINTED = { ...NODE, taints: [{ key: SHUTDOWN_TAINT, effect: "NoSchedule" }] };

/** A view that knows `servers` (by id) and the ids proven gone. */
function view(servers: Record<string, string>, options: { gone?: string[]; synced?: boolean } = {}) {
  return {
    synced: options.synced ?? true,
    server: (id: string) => (servers[id] ? { id, state: servers[id] } as unknown as Server : undefined),
    isGone: (id: string) => options.gone?.includes(id) ?? false,
  };
}

Deno.test("a Ready node loses the shutdown taint and is otherwise left alone, whatever the view says", () => {
  assert.equal(lifecycleAction({ ...TAINTED, ready: "True" }, view({})), "remove-shutdown-taint");
  assert.equal(lifecycleAction({ ...NODE, ready: "True" }, view({}, { gone: ["srv-1"] })), "none");
});

Deno.test("a NotReady node whose server is stopped or stopping is tainted once", () => {
  assert.equal(lifecycleAction(NODE, view({ "srv-1": "stopped" })), "add-shutdown-taint");
  assert.equal(lifecycleAction(NODE, view({ "srv-1": "stopping" })), "add-shutdown-taint");
  assert.equal(lifecycleAction(TAINTED, view({ "srv-1": "stopped" })), "none", "already tainted");
  assert.equal(lifecycleAction(NODE, view({ "srv-1": "started" })), "none");
  assert.equal(lifecycleAction({ ...NODE, ready: "Unknown" }, view({ "srv-1": "stopped" })), "add-shutdown-taint");
});

Deno.test("a node is deleted only with proof: its server deleting, or proven gone; absent from one list is a check", () => {
  assert.equal(lifecycleAction(NODE, view({ "srv-1": "deleting" })), "delete");
  assert.equal(lifecycleAction(NODE, view({}, { gone: ["srv-1"] })), "delete");
  assert.equal(lifecycleAction(NODE, view({})), "check-unknown", "absent from the list: look closer, do not delete");
});

Deno.test("nothing is decided without a synced view, for a node being deleted, or for another provider's node", () => {
  assert.equal(lifecycleAction(NODE, view({}, { gone: ["srv-1"], synced: false })), "none");
  assert.equal(
    lifecycleAction({ ...NODE, deletionTimestamp: "2026-01-02T00:00:00Z" }, view({}, { gone: ["srv-1"] })),
    "none",
  );
  assert.equal(
    lifecycleAction({ ...NODE, providerID: "aws:///eu-west-1a/i-1" }, view({}, { gone: ["srv-1"] })),
    "none",
  );
  assert.equal(lifecycleAction({ ...NODE, providerID: undefined }, view({})), "none");
});
