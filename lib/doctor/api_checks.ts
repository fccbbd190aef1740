/**
 * The Ankra Cloud API checks that need one read each: the API answers (with TLS verified), the token is valid,
 * and the account has room for another load balancer. Pure functions of the answers.
 *
 * @module
 */
import type { Fetched } from "./facts.ts";
import { type CheckName, fail, type Finding, pass, plural, skip, warn } from "./finding.ts";
import type { Reachability } from "./reachability.ts";

/** The check that the API answers. */
export const API_REACHABLE: CheckName = { id: "api-reachable", title: "Ankra Cloud API reachable (TLS verified)" };
/** The check that the token is valid. */
export const TOKEN_VALID: CheckName = { id: "token-valid", title: "API token valid" };
/** The check of load balancer quota headroom. */
export const LOAD_BALANCER_QUOTA: CheckName = { id: "load-balancer-quota", title: "Load balancer quota headroom" };

/** Load balancers an account may have (stated in the API document's prose on `create_load_balancer`). */
export const LOAD_BALANCER_LIMIT = 5;

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
        "load-balancer.ankra.cloud/edge), or ask Ankra Cloud support for a higher limit",
    );
  }
  return pass(LOAD_BALANCER_QUOTA, `${used} of ${limit} load balancers in use: room for ${limit - used} more`);
}
