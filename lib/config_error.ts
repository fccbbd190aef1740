/**
 * The one error kind of the configuration: every bad or missing flag, variable or file is reported as a
 * {@linkcode ConfigError} whose message is the whole line shown to the user. A leaf beside `log.ts` (its only import,
 * for redaction): the configuration (`lib/config/`) throws it, and so may any lower layer that finds a setting it
 * cannot honour (`lib/tls.ts`), without importing the configuration.
 *
 * @module
 */
import { redact } from "./log.ts";

/** A configuration problem: one line naming the flag or variable and what to do. */
export class ConfigError extends Error {
  /** Creates the error; `message` is the whole line shown to the user (registered secrets are redacted). */
  constructor(message: string) {
    super(redact(message));
    this.name = "ConfigError";
  }
}
