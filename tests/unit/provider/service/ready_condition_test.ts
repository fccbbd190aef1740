/**
 * The Service's `load-balancer.ankra.cloud/Ready` condition: what each outcome says, and that an unchanged state is
 * no write.
 */
import assert from "node:assert/strict";
import { READY_CONDITION_TYPE } from "../../../../lib/ankra_names.ts";
import {
  notReady,
  readyConditionUpdate,
  servingState,
  waitingState,
} from "../../../../lib/provider/service/ready_condition.ts";
import { failedState } from "../../../../lib/controllers/service/service_readiness.ts";
import { CloudApiError, type CloudErrorKind } from "../../../../lib/cloud/errors.ts";
import { WaitingForUser } from "../../../../lib/runtime/waiting_for_user.ts";

const NOW = new Date("2026-12-01T10:00:00.123Z");
const LATER = new Date("2026-12-01T10:05:00Z");

Deno.test("a new state is written with its generation and transition time; the same state again is no write", () => {
  const first = readyConditionUpdate(undefined, notReady("Creating", "load balancer lb-1 is being created"), {
    generation: 3,
    now: NOW,
  });
  assert.deepEqual(first, {
    type: READY_CONDITION_TYPE,
    status: "False",
    reason: "Creating",
    message: "load balancer lb-1 is being created",
    observedGeneration: 3,
    lastTransitionTime: "2026-12-01T10:00:00Z",
  });
  assert.equal(
    readyConditionUpdate(first, notReady("Creating", "load balancer lb-1 is being created"), {
      generation: 3,
      now: LATER,
    }),
    undefined,
    "steady state: no write",
  );
  // Another reason with the same status keeps the transition time; a new generation is written.
  const quota = readyConditionUpdate(first, notReady("QuotaExceeded", "quota"), { generation: 3, now: LATER })!;
  assert.equal(quota.lastTransitionTime, first!.lastTransitionTime);
  assert.equal(
    readyConditionUpdate(quota, notReady("QuotaExceeded", "quota"), { generation: 4, now: LATER })!
      .observedGeneration,
    4,
  );
  // Serving moves the transition time.
  const serving = readyConditionUpdate(quota, servingState("load balancer lb-1", ["2001:db8::1", "203.0.113.5"]), {
    generation: 4,
    now: LATER,
  })!;
  assert.equal(serving.status, "True");
  assert.equal(serving.reason, "Serving");
  assert.equal(serving.message, "load balancer lb-1 serves at 2001:db8::1, 203.0.113.5");
  assert.equal(serving.lastTransitionTime, "2026-12-01T10:05:00Z");
  // A long message is cut, so the condition stays well inside the API's limit.
  const long = readyConditionUpdate(undefined, notReady("SyncFailed", "x".repeat(5_000)), { now: NOW })!;
  assert.equal(long.message.length, 1_024);
  assert.equal("observedGeneration" in long, false);
});

Deno.test("waiting for the user: the notice that tells the user names the reason", () => {
  const waitFor = { message: "invalid annotations", reported: true };
  assert.deepEqual(
    waitingState({
      waitFor,
      notices: [
        { topic: "ports", reason: "UnsupportedPort" },
        { topic: "annotations", reason: "InvalidAnnotation", message: "load-balancer.ankra.cloud/ipv4: not a bool" },
      ],
    }),
    notReady("InvalidAnnotation", "load-balancer.ankra.cloud/ipv4: not a bool"),
  );
  assert.deepEqual(
    waitingState({ waitFor: { message: "port 80 has no NodePort", reported: false }, notices: [] }),
    notReady("NoNodePort", "port 80 has no NodePort"),
  );
  assert.equal(waitingState({ notices: [] }), undefined, "nothing to wait for");
});

Deno.test("a failed pass: quota, payment, token, outages, invalid requests and the placement's own reasons", () => {
  const api = (kind: CloudErrorKind, status: number, reason?: string) =>
    new CloudApiError(kind, { operation: "create_load_balancer", status, reason });
  assert.equal(failedState(api("quota_exceeded", 422, "quota_exceeded")).reason, "QuotaExceeded");
  assert.equal(failedState(api("payment_required", 402, "payment_required")).reason, "PaymentRequired");
  assert.equal(failedState(api("unauthorized", 401)).reason, "Unauthorized");
  assert.equal(failedState(api("unavailable", 503)).reason, "WaitingForAPI");
  assert.equal(failedState(api("bad_request", 400, "bad_request")).reason, "InvalidRequest");
  // The reporter wraps a refused request in a WaitingForUser: the API's reason still shows.
  const wrapped = new WaitingForUser("SyncLoadBalancerFailed", "refused", {
    cause: api("quota_exceeded", 422, "quota_exceeded"),
  });
  assert.equal(failedState(wrapped).reason, "QuotaExceeded");
  assert.deepEqual(
    failedState(
      new WaitingForUser("SyncLoadBalancerFailed", "no node can be a member", { condition: "NoMemberAddress" }),
    ),
    notReady("NoMemberAddress", "no node can be a member"),
  );
  assert.equal(failedState(new WaitingForUser("ClusterNameCollision", "taken")).reason, "ClusterNameCollision");
  assert.equal(failedState(new Error("load balancer lb-1 is being deleted")).reason, "SyncFailed");
});
