/**
 * The one error kind of the configuration: every bad or missing flag, variable or file is reported as a
 * {@linkcode ConfigError} whose message is the whole line shown to the user.
 *
 * @module
 */
import { redact } from "../log.ts";

/** A configuration problem: one line naming the flag or variable and what to do. */
export class ConfigError extends Error {
  /** Creates the error; `message` is the whole line shown to the user (registered secrets are redacted). */
  constructor(message: string) {
    super(redact(message));
    this.name = "ConfigError";
  }
}
