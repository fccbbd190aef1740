/**
 * The text of `--help`, rendered from the option table: usage, every flag with the variable that can set it and its
 * default, then the variable-only settings.
 *
 * @module
 */
import { PROGRAM, VERSION } from "../version.ts";
import type { OptionSpec } from "./option_readers.ts";
import { OPTIONS } from "./options.ts";

/** Renders `--help`: usage, then every flag and environment variable with its default. */
export function helpText(): string {
  const lines = [
    `${PROGRAM} ${VERSION}: Kubernetes cloud controller manager for Ankra Cloud`,
    "",
    "Usage:",
    `  ${PROGRAM} [flags]                 run the controller`,
    `  ${PROGRAM} doctor [flags]          check the API, token, nodes, network and RBAC before installing`,
    "                                    (--output=text|json; exit 1 when a check fails)",
    `  ${PROGRAM} cleanup --cluster-name=<name> [flags]`,
    "                                    delete every load balancer of the cluster and its members on edges",
    "                                    (with --kubeconfig while the cluster exists, else by name alone;",
    "                                    --dry-run prints the plan, --cluster-uid=<uid> names one of several",
    "                                    clusters with that name, --include-released deletes preserved ones too)",
    "",
    "Flags (and the environment variable that can set them):",
  ];
  const options = Object.values(OPTIONS) as OptionSpec<unknown>[];
  for (const option of options) {
    if (!option.flag) continue;
    const name = option.kind === "boolean" ? `--${option.flag}[=true|false]` : `--${option.flag}=<${option.kind}>`;
    const env = option.env ? ` [env ${option.env}]` : "";
    const dflt = option.default !== undefined ? ` (default ${option.default})` : "";
    lines.push(`  ${name}${env}`, `      ${option.help}${dflt}`);
  }
  lines.push("", "Environment:");
  for (const option of options) {
    if (option.flag || !option.env) continue;
    const dflt = option.default !== undefined ? ` (default ${option.default})` : "";
    lines.push(`  ${option.env}`, `      ${option.help}${dflt}`);
  }
  lines.push(
    "",
    "Every other flag of the upstream cloud-controller-manager command is accepted: with a warning when it changes",
    "nothing here, refused with the reason when it cannot be honoured (docs/upstream_flags.md lists them).",
    "Durations are Go-style (500ms, 15s, 5m, 1h30m). The token is read from ANKRA_CLOUD_TOKEN or the token file",
    "and is never printed.",
  );
  return lines.join("\n");
}
