/**
 * The operate probe: the one request of the doctor that is not a read. The Ankra Cloud API has no route that tells
 * an API token its own scope, so write permission shows only as the answer to a write. The probe is a
 * `create_load_balancer` the API must refuse — its zone does not exist and its `network_id` is empty, two
 * independent reasons, either of which stops a create — with a body that is otherwise well-formed, so it gets past
 * the checks the API makes before looking at the zone:
 *
 * 1. the token (401 when invalid or expired),
 * 2. its scope (403 for a read-only token),
 * 3. the body's shape (400 for an unknown field or a wrong type — the probe has none),
 * 4. the billing gates of a billable create (403 `email_unverified`, 402 `payment_method_required`,
 *    `owner_approval_required`, `account_suspended`),
 * 5. the zone (404), the network (400), and only then quota and capacity.
 *
 * That is the simulator's order (token and scope in `simulator/operation_route.ts`, body shape in
 * `simulator/routes/load_balancers.ts`; billing gates, zone, network in `simulator/load_balancers.ts`); the API
 * document lists the answers but not their order. Where its order differs,
 * an answer can say less (a 404 or 400 then does not prove the billing gates pass), never something false about
 * the scope: a 403 without `email_unverified` is the read-only answer. It sends `public_ipv4: false` and
 * `high_availability: false` (the cheapest kind, should any API ever accept it) and a label naming it.
 *
 * The findings: whether the token may make changes, and whether the account may create billable resources.
 *
 * @module
 */
import type { CreateLoadBalancerInput } from "../cloud/client.ts";
import type { ReadFailure } from "./facts.ts";
import { type CheckName, fail, type Finding, pass, skip, warn } from "./finding.ts";

/** The zone of the probe: a name no Ankra zone has (zones are named like `de-fsn1`). */
export const OPERATE_PROBE_ZONE = "ankra-cloud-ccm-doctor-no-such-zone";

/** The probe's body: well-formed, refused for its zone and its empty network. */
export const OPERATE_PROBE: CreateLoadBalancerInput = {
  zone: OPERATE_PROBE_ZONE,
  name: "ankra-cloud-ccm-doctor-probe",
  network_id: "",
  labels: { "ccm.ankra.cloud/doctor-probe": "true" },
  high_availability: false,
  public_ipv4: false,
};

/** What the probe got: refused (the expected outcome) with the API's answer, or — never expected — created. */
export type ProbeOutcome =
  | { created: false; failure: ReadFailure }
  | { created: true; loadBalancerId: string };

/** The check of write permission. */
export const TOKEN_OPERATE: CheckName = { id: "token-operate", title: "API token may make changes (operate)" };
/** The check of the billing and email gates. */
export const ACCOUNT_CAN_CREATE: CheckName = {
  id: "account-can-create",
  title: "Account may create load balancers (billing, verified email)",
};

/** What the probe's answer says. */
export type ProbeVerdict =
  | "created"
  | "unauthorized"
  | "read_only"
  | "email_unverified"
  | "payment_required"
  | "refused_as_invalid"
  | "inconclusive";

/** Reads the probe's answer. */
export function probeVerdict(outcome: ProbeOutcome): ProbeVerdict {
  if (outcome.created) return "created";
  const { status, reason } = outcome.failure;
  if (status === 401) return "unauthorized";
  if (status === 403) return reason === "email_unverified" ? "email_unverified" : "read_only";
  if (status === 402) return "payment_required";
  if (status === 400 || status === 404 || status === 409 || status === 422) return "refused_as_invalid";
  return "inconclusive";
}

function answer(failure: ReadFailure): string {
  return `HTTP ${failure.status}${failure.reason ? ` ${failure.reason}` : ""}`;
}

const CREATED_FIX = (id: string) =>
  `delete load balancer ${id} (named ${OPERATE_PROBE.name}, label ccm.ankra.cloud/doctor-probe=true) in the ` +
  "Ankra Cloud portal, and report this: the API accepted a create in a zone that does not exist";

/** Whether the token may make changes, from the probe's answer. */
export function operateFinding(outcome: ProbeOutcome): Finding {
  const verdict = probeVerdict(outcome);
  if (outcome.created) {
    return fail(
      TOKEN_OPERATE,
      `the probe created load balancer ${outcome.loadBalancerId} although its zone does not exist`,
      CREATED_FIX(outcome.loadBalancerId),
    );
  }
  const failure = outcome.failure;
  switch (verdict) {
    case "read_only":
      return fail(
        TOKEN_OPERATE,
        `the token may not make changes: the API refused a change (${answer(failure)} on create_load_balancer); ` +
          "it is read-only, or its user's role lacks operate",
        "create an API token with operate permission (scope read_write, or a list including operate) as a user " +
          "whose role may operate (not viewer), in the Ankra Cloud portal, and give it to the controller\n" +
          "(ANKRA_CLOUD_TOKEN, --ankra-cloud-token-file, or the chart's api.token)",
      );
    case "email_unverified":
    case "payment_required":
      return pass(
        TOKEN_OPERATE,
        `the token may make changes: the API passed its scope check and stopped at the billing gate (${
          answer(failure)
        })`,
      );
    case "refused_as_invalid":
      return pass(
        TOKEN_OPERATE,
        `the token may make changes: the API refused the probe only for its made-up zone (${answer(failure)})`,
      );
    case "unauthorized":
      return skip(TOKEN_OPERATE, "skipped: the API refuses the token itself (see above)");
    default:
      return warn(
        TOKEN_OPERATE,
        `could not be told: the probe got no usable answer (${failure.message})`,
        "run the doctor again in a minute; if it persists, check the Ankra Cloud status page",
      );
  }
}

const PAYMENT_FIXES: Record<string, string> = {
  payment_method_required: "add a default payment method to the account in the Ankra Cloud portal (Billing)",
  owner_approval_required: "the account owner must approve paid usage in the Ankra Cloud portal (or add credit)",
  account_suspended: "the account is suspended: settle the overdue invoice, or contact Ankra Cloud support",
};

/** Whether the account may create billable resources (load balancers), from the probe's answer. */
export function accountCanCreateFinding(outcome: ProbeOutcome): Finding {
  const verdict = probeVerdict(outcome);
  if (outcome.created) {
    return fail(ACCOUNT_CAN_CREATE, "the probe was not refused", CREATED_FIX(outcome.loadBalancerId));
  }
  const failure = outcome.failure;
  switch (verdict) {
    case "email_unverified":
      return fail(
        ACCOUNT_CAN_CREATE,
        "the email address of the token's user is not verified: new load balancers are refused (HTTP 403 " +
          "email_unverified)",
        "verify the email address of the user who created the token (the Ankra Cloud portal sends the link), " +
          "or use a token of a verified user",
      );
    case "payment_required":
      return fail(
        ACCOUNT_CAN_CREATE,
        `the account may not create billable resources now (${answer(failure)})`,
        PAYMENT_FIXES[failure.reason ?? ""] ??
          "check the account's billing state in the Ankra Cloud portal (payment method, approval, invoices)",
      );
    case "refused_as_invalid":
      return pass(
        ACCOUNT_CAN_CREATE,
        `no billing (402) or email (403) gate stopped the probe; the API refused it as invalid (${answer(failure)})`,
      );
    case "read_only":
      return skip(ACCOUNT_CAN_CREATE, "skipped: a read-only token is refused before the billing checks");
    case "unauthorized":
      return skip(ACCOUNT_CAN_CREATE, "skipped: the API refuses the token itself (see above)");
    default:
      return skip(ACCOUNT_CAN_CREATE, "skipped: the probe got no usable answer (see above)");
  }
}
