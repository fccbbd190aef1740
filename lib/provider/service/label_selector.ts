/**
 * Kubernetes label selectors in their text form (`pool=edge,zone!=b`, `tier in (web,api)`, `gpu`, `!spot`), as
 * `kubectl get -l` and the `load-balancer.ankra.cloud/node-selector` annotation write them: parsed into requirements
 * that all must hold, each key and value checked by the label rules. Pure functions.
 *
 * @module
 */

/** One requirement of a selector. */
export type LabelRequirement =
  | { key: string; operator: "=" | "!="; value: string }
  | { key: string; operator: "in" | "notin"; values: string[] }
  | { key: string; operator: "exists" | "!exists" };

/** A parsed selector, or the rule the text breaks. */
type ParsedSelector = { ok: true; requirements: LabelRequirement[] } | { ok: false; rule: string };

const NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VALUE = /^(([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?)$/;

/** True for a label key: an optional DNS-subdomain prefix (at most 253) and `/`, then a name of at most 63. */
function isLabelKey(key: string): boolean {
  const slash = key.indexOf("/");
  if (slash < 0) return NAME.test(key);
  const prefix = key.slice(0, slash);
  return prefix.length <= 253 && PREFIX.test(prefix) && NAME.test(key.slice(slash + 1));
}

/** Splits at the commas outside parentheses. */
function clauses(text: string): string[] | undefined {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")" && --depth < 0) return undefined;
    else if (text[i] === "," && depth === 0) {
      out.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (depth !== 0) return undefined;
  out.push(text.slice(start).trim());
  return out;
}

function requirement(clause: string): LabelRequirement | string {
  const set = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(clause);
  if (set) {
    const values = set[3].split(",").map((v) => v.trim());
    if (!isLabelKey(set[1])) return `"${set[1]}" is not a label key`;
    if (values.some((v) => !VALUE.test(v))) return `a value of ${set[1]} is not a label value`;
    return { key: set[1], operator: set[2] as "in" | "notin", values };
  }
  const compare = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(clause);
  if (compare) {
    if (!isLabelKey(compare[1])) return `"${compare[1]}" is not a label key`;
    if (!VALUE.test(compare[3])) return `"${compare[3]}" is not a label value`;
    return { key: compare[1], operator: compare[2] === "!=" ? "!=" : "=", value: compare[3] };
  }
  const absent = /^!\s*(\S+)$/.exec(clause);
  if (absent) {
    return isLabelKey(absent[1]) ? { key: absent[1], operator: "!exists" } : `"${absent[1]}" is not a label key`;
  }
  if (isLabelKey(clause)) return { key: clause, operator: "exists" };
  return `"${clause}" is not a requirement (key=value, key!=value, key in (a,b), key notin (a), key or !key)`;
}

/** Parses a selector; an empty text is refused (it would select every node: leave the annotation out instead). */
export function parseLabelSelector(text: string): ParsedSelector {
  const parts = clauses(text.trim());
  if (!parts) return { ok: false, rule: "must have balanced parentheses" };
  if (parts.some((p) => p === "")) return { ok: false, rule: "must not have an empty requirement" };
  const requirements: LabelRequirement[] = [];
  for (const part of parts) {
    const parsed = requirement(part);
    if (typeof parsed === "string") return { ok: false, rule: `must be a label selector: ${parsed}` };
    requirements.push(parsed);
  }
  return { ok: true, requirements };
}

/** True when `labels` meet every requirement (`!=` and `notin` also hold where the key is absent, as in Kubernetes). */
export function matchesSelector(labels: Record<string, string>, requirements: LabelRequirement[]): boolean {
  return requirements.every((r) => {
    const value = labels[r.key];
    switch (r.operator) {
      case "=":
        return value === r.value;
      case "!=":
        return value !== r.value;
      case "in":
        return value !== undefined && r.values.includes(value);
      case "notin":
        return value === undefined || !r.values.includes(value);
      case "exists":
        return value !== undefined;
      case "!exists":
        return value === undefined;
    }
  });
}
