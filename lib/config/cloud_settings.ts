/**
 * The Ankra Cloud connection settings read from files and variables: the API token (from `ANKRA_CLOUD_TOKEN` or the
 * token file, registered as a secret before any message can carry it), the extra CA bundle, the API URL and the
 * allow-lists of the account resources Services may name. Each problem is one {@linkcode ConfigError} naming the
 * variable or flag and what to do; the token is never in one.
 *
 * @module
 */
import { registerSecret } from "../log.ts";
import { encryptedOrLoopback } from "../tls.ts";
import type { AllowedResources } from "../provider/service/allowed_resources.ts";
import { ConfigError } from "../config_error.ts";
import type { OptionValues } from "./options.ts";

/** Reads a text file (token file, CA bundle); tests pass their own. */
export type ReadFile = (path: string) => string;

/**
 * The API token: `ANKRA_CLOUD_TOKEN`, or the contents of `--ankra-cloud-token-file` (never both); it must be set and
 * hold no white space.
 */
export function readToken(values: Pick<OptionValues, "token" | "tokenFile">, readFile: ReadFile): string {
  const direct = values.token;
  const file = values.tokenFile;
  if (direct && file) {
    throw new ConfigError(
      "both ANKRA_CLOUD_TOKEN and --ankra-cloud-token-file (ANKRA_CLOUD_TOKEN_FILE) are set: keep only one",
    );
  }
  let token = direct;
  if (file) {
    try {
      token = readFile(file).trim();
      registerSecret(token);
    } catch (cause) {
      const why = cause instanceof Deno.errors.NotFound
        ? "it does not exist"
        : cause instanceof Deno.errors.NotCapable
        ? "the runtime may not read it (keep it under /etc/ankra-cloud or /etc/ankra-cloud-ccm, or start the " +
          "controller through its launcher, which allows the directory of the file it is given)"
        : "it cannot be read";
      throw new ConfigError(`--ankra-cloud-token-file ${file}: ${why}; point it at the file holding the API token`);
    }
    if (!token) throw new ConfigError(`--ankra-cloud-token-file ${file} is empty: put the API token in it`);
  }
  if (token) registerSecret(token);
  if (!token) {
    throw new ConfigError(
      "ANKRA_CLOUD_TOKEN is not set: give the controller an Ankra Cloud API token with operate permission " +
        "(ANKRA_CLOUD_TOKEN or --ankra-cloud-token-file)",
    );
  }
  if (/\s/.test(token)) {
    throw new ConfigError("the Ankra Cloud API token contains white space: check ANKRA_CLOUD_TOKEN or the token file");
  }
  return token;
}

/** The text of the CA bundle at `path`, which must hold at least one PEM certificate. */
export function readCaBundle(path: string, readFile: ReadFile): string {
  let text: string;
  try {
    text = readFile(path);
  } catch (cause) {
    const why = cause instanceof Deno.errors.NotFound ? "does not exist" : "cannot be read";
    throw new ConfigError(`ANKRA_CLOUD_CA_BUNDLE ${path} ${why}: point it at a PEM file of CA certificates`);
  }
  if (!/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.test(text)) {
    throw new ConfigError(`ANKRA_CLOUD_CA_BUNDLE ${path} holds no PEM certificate: use a file of CA certificates`);
  }
  return text;
}

/**
 * The API base URL without a trailing slash: https, or plain http to a loopback address only (the simulator on this
 * machine); no credentials, query or fragment.
 */
export function readApiUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`ANKRA_CLOUD_API_URL "${value.slice(0, 80)}" is not a URL: use e.g. https://cloud.ankra.app`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ConfigError(`ANKRA_CLOUD_API_URL must be an https:// URL, not "${value.slice(0, 80)}"`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new ConfigError("ANKRA_CLOUD_API_URL must not carry credentials, a query or a fragment: give the base URL");
  }
  if (!encryptedOrLoopback(url)) {
    throw new ConfigError(
      `ANKRA_CLOUD_API_URL ${url.origin} is plain http to a host that is not loopback: the token would travel ` +
        "unencrypted; use https (plain http only to 127.0.0.1, ::1 or localhost, e.g. the simulator)",
    );
  }
  return url.toString().replace(/\/+$/, "");
}

/** Splits an allow-list variable (already checked by its rule) into its ids; undefined (allow all) when unset. */
function idList(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : [...new Set(value.split(",").map((id) => id.trim()))];
}

/**
 * The allow-lists of the account resources a Service may name (`ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS`,
 * `…_EDGES`, `…_NETWORK_IDS`); an unset variable allows all. The default network `ANKRA_CLOUD_NETWORK_ID`, when set
 * with a network list, must be on it.
 */
export function readAllowedResources(
  values: Pick<OptionValues, "allowedCertificateIds" | "allowedEdges" | "allowedNetworkIds" | "networkId">,
): AllowedResources {
  const allowed: AllowedResources = {
    certificateIds: idList(values.allowedCertificateIds),
    edges: idList(values.allowedEdges),
    networkIds: idList(values.allowedNetworkIds),
  };
  if (values.networkId && allowed.networkIds && !allowed.networkIds.includes(values.networkId)) {
    throw new ConfigError(
      `ANKRA_CLOUD_NETWORK_ID ${values.networkId} is not in ANKRA_CLOUD_ALLOWED_NETWORK_IDS: add it to the list or ` +
        "choose a default network from it",
    );
  }
  return allowed;
}
