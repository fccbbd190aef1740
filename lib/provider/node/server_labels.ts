/**
 * Server labels as Node labels (`--node-labels-from-server`), pure: which server labels are copied (the
 * {@linkcode ServerLabelSelector}: keys, key prefixes ending in `*`, or `*`), the node label each becomes
 * ({@linkcode nodeLabelKeyFor}: under `server.ankra.cloud`), and what a node's labels need to be in step with its
 * server ({@linkcode planServerLabels}): labels to set, labels to remove, and server labels that cannot be Kubernetes
 * labels (skipped, each named in a Warning event).
 *
 * Ownership is by domain: while the flag is set, every node label whose prefix is `server.ankra.cloud` or ends in
 * `.server.ankra.cloud` is the controller's — set from a selected server label, removed when that label goes, changes,
 * is no longer selected or cannot be copied. A label a user sets there is removed too (the domain is reserved, as the
 * documentation says); a label under any other prefix is never touched. Without the flag nothing under the domain is
 * touched, copied or removed.
 *
 * @module
 */
import { SERVER_LABEL_DOMAIN } from "../../ankra_names.ts";

/** Which server labels are copied: exact keys, key prefixes, or all. */
export interface ServerLabelSelector {
  /** The flag's text, as given (for messages). */
  text: string;
  /** True for `*`: every server label. */
  all: boolean;
  /** Keys copied as they are named. */
  keys: ReadonlySet<string>;
  /** Keys starting with one of these are copied (`team.io/*` → `team.io/`). */
  prefixes: readonly string[];
}

/** One item of the flag: `*`, a server label key, or a key prefix followed by `*` (Ankra label key characters). */
const SELECTOR_ITEM = String.raw`(\*|[A-Za-z0-9._/-]{1,63}\*?)`;

/** The flag's whole value: comma-separated items (spaces around the commas allowed). */
export const SERVER_LABEL_SELECTOR = new RegExp(`^${SELECTOR_ITEM}(\\s*,\\s*${SELECTOR_ITEM})*$`);

/**
 * The selector of a `--node-labels-from-server` value, or undefined for none (empty: the feature is off). The value
 * must match {@linkcode SERVER_LABEL_SELECTOR} (the option's rule checks it first).
 */
export function parseServerLabelSelector(text: string | undefined): ServerLabelSelector | undefined {
  const items = (text ?? "").split(",").map((item) => item.trim()).filter(Boolean);
  if (items.length === 0) return undefined;
  return {
    text: items.join(","),
    all: items.includes("*"),
    keys: new Set(items.filter((item) => !item.endsWith("*"))),
    prefixes: items.filter((item) => item.endsWith("*") && item !== "*").map((item) => item.slice(0, -1)),
  };
}

/** True when the selector copies the server label `key`. */
export function selectsServerLabel(selector: ServerLabelSelector, key: string): boolean {
  return selector.all || selector.keys.has(key) || selector.prefixes.some((prefix) => key.startsWith(prefix));
}

/** A Kubernetes label name (the part after the prefix), and a label value when not empty. */
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** A DNS-1123 subdomain (a label key's prefix). */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The node label a server label key becomes, or why it cannot become one. */
type MappedKey = { ok: true; key: string } | { ok: false; why: string };

/**
 * The node label of server label `key`: `server.ankra.cloud/<key>`; a key with a prefix, `<prefix>/<name>`, becomes
 * `<prefix>.server.ankra.cloud/<name>` (one key, one node label: no two server keys map to the same one). A name that
 * is no Kubernetes label name, a prefix that is no lower-case DNS subdomain, or more than one `/` cannot be copied.
 */
export function nodeLabelKeyFor(key: string): MappedKey {
  const parts = key.split("/");
  if (parts.length > 2) return { ok: false, why: "a Kubernetes label key has at most one '/'" };
  const name = parts.at(-1)!;
  if (!LABEL_NAME.test(name)) {
    return {
      ok: false,
      why: `"${name}" is no Kubernetes label name (at most 63 letters, digits, '-', '_', '.', starting and ending ` +
        "with a letter or digit)",
    };
  }
  if (parts.length === 1) return { ok: true, key: `${SERVER_LABEL_DOMAIN}/${name}` };
  const prefix = `${parts[0]}.${SERVER_LABEL_DOMAIN}`;
  if (!DNS_SUBDOMAIN.test(parts[0]) || prefix.length > 253) {
    return { ok: false, why: `its prefix "${parts[0]}" is no lower-case DNS subdomain` };
  }
  return { ok: true, key: `${prefix}/${name}` };
}

/** True for a node label key under the controller's server label domain (`server.ankra.cloud` or a subdomain). */
export function isServerLabelKey(nodeKey: string): boolean {
  const slash = nodeKey.indexOf("/");
  if (slash < 0) return false;
  const prefix = nodeKey.slice(0, slash);
  return prefix === SERVER_LABEL_DOMAIN || prefix.endsWith(`.${SERVER_LABEL_DOMAIN}`);
}

/** Why a label value cannot be a Kubernetes label value, or undefined when it can. */
function valueProblem(value: string): string | undefined {
  if (value === "" || LABEL_NAME.test(value)) return undefined;
  return value.length > 63
    ? `its value is ${value.length} characters long (a Kubernetes label value has at most 63)`
    : "its value is no Kubernetes label value (letters, digits, '-', '_', '.', starting and ending with a letter " +
      "or digit)";
}

/** A selected server label that is not copied. */
export interface SkippedServerLabel {
  /** The server label's key. */
  key: string;
  /** Its value. */
  value: string;
  /** Why it cannot be a Kubernetes label. */
  why: string;
}

/** What a node's labels need to be in step with its server's. */
interface ServerLabelPlan {
  /** Node labels to set (a value) or remove (`null`), as a merge patch of `metadata.labels`; empty when in step. */
  changes: Record<string, string | null>;
  /** Selected server labels that cannot be Kubernetes labels, in key order. */
  skipped: SkippedServerLabel[];
}

/**
 * What makes `nodeLabels` carry exactly the selected labels of `serverLabels` under the server label domain: the
 * copies that are missing or differ are set, every other label under the domain is removed, every label outside it
 * is left alone.
 */
export function planServerLabels(
  nodeLabels: Readonly<Record<string, string>>,
  serverLabels: Readonly<Record<string, string>>,
  selector: ServerLabelSelector,
): ServerLabelPlan {
  const wanted = new Map<string, string>();
  const skipped: SkippedServerLabel[] = [];
  for (const key of Object.keys(serverLabels).sort()) {
    if (!selectsServerLabel(selector, key)) continue;
    const value = serverLabels[key];
    const mapped = nodeLabelKeyFor(key);
    const why = mapped.ok ? valueProblem(value) : mapped.why;
    if (why || !mapped.ok) skipped.push({ key, value, why: why! });
    else wanted.set(mapped.key, value);
  }
  const changes: Record<string, string | null> = {};
  for (const [key, value] of wanted) if (nodeLabels[key] !== value) changes[key] = value;
  for (const key of Object.keys(nodeLabels)) {
    if (isServerLabelKey(key) && !wanted.has(key)) changes[key] = null;
  }
  return { changes, skipped };
}

/** The message of the Warning a node gets for a server label that is not copied. */
export function skippedServerLabelMessage(server: { zone: string; id: string }, label: SkippedServerLabel): string {
  const shown = label.value.length > 80 ? `${label.value.slice(0, 80)}…` : label.value;
  return `server label ${label.key}="${shown}" of server ${server.zone}/${server.id} is not copied to the node: ` +
    `${label.why}; change the label on the server, or leave it out of --node-labels-from-server`;
}
