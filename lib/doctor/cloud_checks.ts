/**
 * The checks of the configuration and the Ankra Cloud account, pure functions of what the doctor read:
 *
 * - the flags and variables make a valid configuration (a problem fails it and the checks that need the bad setting
 *   are skipped; remarks about settings that work but deserve attention make it a warning);
 * - the API answers, with TLS verified; the token is valid;
 * - the token may make changes, and the account may create billable resources — read from the operate probe's
 *   answer (see `operate_probe.ts`);
 * - the account has room for another load balancer.
 *
 * @module
 */
import { ANNOTATION_PREFIX, CLUSTER_LABEL, CLUSTER_UID_LABEL, DOCTOR_PROBE_LABEL } from "../ankra_names.ts";
import type { Fetched, Reachability, ReadFailure } from "./fetched.ts";
import { OPERATE_PROBE, type ProbeOutcome } from "./operate_probe.ts";
import { type CheckName, fail, type Finding, nameList, pass, plural, skip, warn } from "./report.ts";

/** The check of the configuration. */
const CONFIGURATION: CheckName = { id: "configuration", title: "Configuration" };

/** The finding of the configuration. */
export function configurationFinding(problem: string | undefined, warnings: string[], apiUrl?: string): Finding {
  if (problem) {
    return fail(
      CONFIGURATION,
      problem,
      "correct the flag or variable named above (`ankra-cloud-ccm --help` lists them all); the checks that need " +
        "it are skipped until then",
    );
  }
  if (warnings.length > 0) {
    return warn(CONFIGURATION, warnings.join("; "), "each remark above says what to change");
  }
  return pass(CONFIGURATION, `the flags and variables are valid${apiUrl ? ` (API ${apiUrl})` : ""}`);
}

/** The check that the API answers. */
export const API_REACHABLE: CheckName = { id: "api-reachable", title: "Ankra Cloud API reachable (TLS verified)" };
/** The check that the token is valid. */
export const TOKEN_VALID: CheckName = { id: "token-valid", title: "API token valid" };
/** The check of load balancer quota headroom. */
export const LOAD_BALANCER_QUOTA: CheckName = { id: "load-balancer-quota", title: "Load balancer quota headroom" };

/** Load balancers an account may have (the API's limit per account; the quota route does not list it). */
const LOAD_BALANCER_LIMIT = 5;

/** Whether the Ankra Cloud API at `apiUrl` answered, from the unauthenticated request. */
export function apiReachableFinding(reach: Reachability, settings: { apiUrl: string; caBundlePath?: string }): Finding {
  const plainHttp = settings.apiUrl.startsWith("http://");
  if (reach.ok) {
    return pass(
      API_REACHABLE,
      `${settings.apiUrl} answered${plainHttp ? " (plain http: no TLS to verify)" : "; TLS verified"}`,
    );
  }
  const host = new URL(settings.apiUrl).host;
  switch (reach.kind) {
    case "tls":
      return fail(
        API_REACHABLE,
        `TLS verification failed for ${settings.apiUrl}: ${reach.message}`,
        settings.caBundlePath
          ? `the certificate is not signed by the system roots or by ANKRA_CLOUD_CA_BUNDLE (${settings.caBundlePath}): ` +
            "put the CA that signed it in that file (PEM); also check the clock and that the URL names the API"
          : "if the API's certificate comes from a private CA (a proxy that inspects TLS, a private endpoint), set " +
            "ANKRA_CLOUD_CA_BUNDLE to a PEM file of that CA; otherwise check the clock and that the URL names the API",
      );
    case "dns":
      return fail(
        API_REACHABLE,
        `the name ${host} does not resolve (${reach.message})`,
        "check ANKRA_CLOUD_API_URL (default https://cloud.ankra.app) and this host's DNS",
      );
    case "timeout":
      return fail(
        API_REACHABLE,
        `no answer from ${settings.apiUrl} in time`,
        `check that this host may reach ${host} (firewall, egress policy, proxy)`,
      );
    default:
      return fail(
        API_REACHABLE,
        `could not reach ${settings.apiUrl}: ${reach.message}`,
        `check ANKRA_CLOUD_API_URL and that this host may reach ${host} (firewall, egress policy, proxy)`,
      );
  }
}

/** Whether the API takes the token, from `list_zones`. */
export function tokenValidFinding(zones: Fetched<{ name: string }[]>): Finding {
  if (zones.ok) {
    return pass(TOKEN_VALID, `the API accepts the token (list_zones: ${plural(zones.value.length, "zone")})`);
  }
  const failure = zones.failure;
  if (failure.status === 401) {
    return fail(
      TOKEN_VALID,
      "the API refuses the token as invalid or expired (HTTP 401 on list_zones)",
      "create a new API token with operate permission in the Ankra Cloud portal and give it to the controller " +
        "(ANKRA_CLOUD_TOKEN, --ankra-cloud-token-file, or the chart's api.token); tokens expire after 90 days " +
        "unless made for longer",
    );
  }
  if (failure.status === 403) {
    return fail(
      TOKEN_VALID,
      `the API refuses the token even for reading (HTTP 403 on list_zones${
        failure.reason ? `, ${failure.reason}` : ""
      })`,
      "use a token whose scope includes read, made by a user who still belongs to the account",
    );
  }
  if (failure.kind === "invalid_answer") {
    return fail(
      TOKEN_VALID,
      `the answer is not the Ankra Cloud API's: ${failure.message}`,
      "check that ANKRA_CLOUD_API_URL names the Ankra Cloud API (default https://cloud.ankra.app)",
    );
  }
  return warn(
    TOKEN_VALID,
    `could not be told: ${failure.message}`,
    "run the doctor again in a minute; if it persists, check the Ankra Cloud status page",
  );
}

/** The check that no other cluster in the account runs with this `--cluster-name`. */
export const CLUSTER_NAME_UNIQUE: CheckName = {
  id: "cluster-name-unique",
  title: "--cluster-name unique in the Ankra account",
};

/**
 * Whether another cluster's load balancers (another `ccm.ankra.cloud/cluster-uid`) carry this `--cluster-name`: the
 * controller never touches them, but a Service whose load balancer name one of them holds waits
 * (`ClusterNameCollision`), and the Go controller of such a cluster would take this one's for its own.
 */
export function clusterNameFinding(
  name: string,
  uid: string,
  loadBalancers: { id: string; labels: Record<string, string> }[],
): Finding {
  const named = loadBalancers.filter((lb) => lb.labels[CLUSTER_LABEL] === name);
  const others = new Map<string, string[]>();
  for (const lb of named) {
    const theirs = lb.labels[CLUSTER_UID_LABEL];
    if (theirs && theirs !== uid) others.set(theirs, [...(others.get(theirs) ?? []), lb.id]);
  }
  const own = named.length - [...others.values()].reduce((sum, ids) => sum + ids.length, 0);
  if (others.size === 0) {
    return pass(
      CLUSTER_NAME_UNIQUE,
      `no other cluster's load balancer carries --cluster-name ${name} (${plural(own, "load balancer")} of this ` +
        `cluster, ${CLUSTER_UID_LABEL}=${uid} or none)`,
    );
  }
  return warn(
    CLUSTER_NAME_UNIQUE,
    `${others.size} other cluster(s) run with --cluster-name ${name}: ${
      [...others].map(([other, ids]) => `${CLUSTER_UID_LABEL}=${other} (${nameList(ids)})`).join("; ")
    }; this controller never changes them, but a Service whose load balancer name one holds waits ` +
      "(ClusterNameCollision)",
    "give each cluster its own --cluster-name (chart value clusterName); moving a cluster to a new name makes new " +
      "load balancers for its Services, so do it before Services are served, or see docs/migrating-from-go.md",
  );
}

/** Whether another load balancer fits in the account, from the number it has. */
export function quotaFinding(count: Fetched<number>, limit = LOAD_BALANCER_LIMIT): Finding {
  if (!count.ok) return skip(LOAD_BALANCER_QUOTA, `skipped: list_load_balancers failed: ${count.failure.message}`);
  const used = count.value;
  if (used >= limit) {
    return warn(
      LOAD_BALANCER_QUOTA,
      `the account has ${plural(used, "load balancer")} of at most ${limit}: a new LoadBalancer Service would be ` +
        "refused (quota_exceeded)",
      "delete load balancers that are no longer used, put Services on a combined edge (annotation " +
        `${ANNOTATION_PREFIX}edge), or ask Ankra Cloud support for a higher limit`,
    );
  }
  return pass(LOAD_BALANCER_QUOTA, `${used} of ${limit} load balancers in use: room for ${limit - used} more`);
}

/** The check of write permission. */
export const TOKEN_OPERATE: CheckName = { id: "token-operate", title: "API token may make changes (operate)" };
/** The check of the billing and email gates. */
export const ACCOUNT_CAN_CREATE: CheckName = {
  id: "account-can-create",
  title: "Account may create load balancers (billing, verified email)",
};

/** What the probe's answer says. */
type ProbeVerdict =
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
  `delete load balancer ${id} (named ${OPERATE_PROBE.name}, label ${DOCTOR_PROBE_LABEL}=true) in the ` +
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
