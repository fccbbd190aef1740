/**
 * The doctor's check of `--node-labels-from-server`: which server labels the controller would copy onto each Node
 * (the same rules, `provider/node/server_labels.ts`, over the servers the doctor listed anyway), and which selected
 * ones it would skip because they cannot be Kubernetes labels (a warning naming them: each would get an
 * `InvalidServerLabel` event). Only in the checklist when the flag is set.
 *
 * @module
 */
import { planServerLabels, type ServerLabelSelector } from "../provider/node/server_labels.ts";
import type { NodeMatch } from "./placement_checks.ts";
import { type CheckName, type Finding, nameList, pass, plural, warn } from "./report.ts";

/** The check of the server labels copied onto Nodes. */
export const SERVER_LABELS: CheckName = {
  id: "server-labels",
  title: "Server labels copied onto Nodes (--node-labels-from-server)",
};

/** The finding: the labels each matched node would carry, and those that would be skipped. */
export function serverLabelsFinding(selector: ServerLabelSelector, matches: NodeMatch[]): Finding {
  const copied: string[] = [];
  const skipped: string[] = [];
  let nodes = 0;
  for (const match of matches) {
    if (match.kind !== "matched") continue;
    const plan = planServerLabels({}, match.server.labels ?? {}, selector);
    const labels = Object.entries(plan.changes).map(([key, value]) => `${key}=${value}`);
    if (labels.length > 0) {
      nodes++;
      copied.push(`${match.node}: ${labels.join(", ")}`);
    }
    for (const label of plan.skipped) skipped.push(`${match.node}: ${label.key} (${label.why})`);
  }
  const result = copied.length > 0
    ? `${plural(nodes, "node")} would carry their servers' labels ${selector.text} as: ${nameList(copied, 5)}`
    : `no server label of a matched node matches ${selector.text}: nothing would be copied`;
  if (skipped.length > 0) {
    return warn(
      SERVER_LABELS,
      `${result}; ${plural(skipped.length, "label")} would be skipped: ${nameList(skipped, 5)}`,
      "each skipped label gets a Warning InvalidServerLabel on its Node: change it on the server (a Kubernetes " +
        "label value has at most 63 letters, digits, '-', '_', '.'), or leave it out of --node-labels-from-server",
    );
  }
  if (copied.length === 0) {
    return warn(
      SERVER_LABELS,
      result,
      "check the keys in --node-labels-from-server against the servers' labels (keys are exact; end one with * " +
        "for a prefix)",
    );
  }
  return pass(SERVER_LABELS, result);
}
