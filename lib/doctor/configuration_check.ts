/**
 * The first finding: whether the flags and variables make a valid configuration. A problem fails it (and the
 * checks that need the bad setting are skipped); remarks about settings that work but deserve attention (plain
 * http, flags accepted for compatibility) make it a warning.
 *
 * @module
 */
import { type CheckName, fail, type Finding, pass, warn } from "./finding.ts";

/** The check of the configuration. */
export const CONFIGURATION: CheckName = { id: "configuration", title: "Configuration" };

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
