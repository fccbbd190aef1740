/**
 * Fixtures shared by the Ankra Cloud client's tests against the simulator (tests/unit/cloud/client_*_test.ts).
 *
 * @module
 */
import assert from "node:assert/strict";
import { CloudApiError } from "../../../lib/cloud/errors.ts";

/** The labels a Service's load balancer carries (Service `shop/web` of cluster `prod`), for creates and label lists. */
export const LB_LABELS = { "ccm.ankra.cloud/service": "shop/web", "ccm.ankra.cloud/cluster": "prod" };

/** The {@linkcode CloudApiError} `promise` rejects with; fails the test when it succeeds or rejects with anything else. */
export async function failure(promise: Promise<unknown>): Promise<CloudApiError> {
  try {
    await promise;
  } catch (cause) {
    assert.ok(cause instanceof CloudApiError, `expected a CloudApiError, got ${cause}`);
    return cause;
  }
  assert.fail("the call succeeded");
}
