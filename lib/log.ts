/**
 * Levelled, structured logging in the style of klog's `--v`: level 0 always prints, higher levels only when the
 * verbosity allows. Every line passes through secret redaction, so a registered secret (the Ankra Cloud token) never
 * reaches the output even when an error message or a value carries it by accident.
 *
 * @module
 */

/** Output format of log lines. */
type LogFormat = "text" | "json";

/** Key/value context attached to a log line. */
type LogFields = Record<string, unknown>;

/** Where finished lines go; tests replace it to capture output. */
type LogSink = (line: string, stream: "stdout" | "stderr") => void;

const REDACTED = "[REDACTED]";
const secrets = new Set<string>();
let verbosity = 2;
let format: LogFormat = "text";
let sink: LogSink = defaultSink;

function defaultSink(line: string, stream: "stdout" | "stderr"): void {
  const bytes = new TextEncoder().encode(line + "\n");
  try {
    const target = stream === "stderr" ? Deno.stderr : Deno.stdout;
    for (let written = 0; written < bytes.length;) written += target.writeSync(bytes.subarray(written));
  } catch {
    // A closed or broken output (the reader went away) must never stop the controller.
  }
}

/**
 * Registers a secret value: from now on every occurrence of it in log output, error text passed through
 * {@linkcode redact}, or event messages built with it is replaced by `[REDACTED]`. Values shorter than 4
 * characters are ignored (they would redact ordinary words).
 */
export function registerSecret(value: string): void {
  if (value.length >= 4) secrets.add(value);
}

/** Replaces every registered secret in `text` with `[REDACTED]`. */
export function redact(text: string): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** Sets the verbosity (`--v`), the output format and optionally the sink. */
export function configureLogging(options: { verbosity?: number; format?: LogFormat; sink?: LogSink }): void {
  if (options.verbosity !== undefined) verbosity = options.verbosity;
  if (options.format !== undefined) format = options.format;
  if (options.sink !== undefined) sink = options.sink;
}

/** True when messages at `level` are printed with the current verbosity. */
function logEnabled(level: number): boolean {
  return level <= verbosity;
}

function renderValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message);
  if (typeof value === "string") return /^[A-Za-z0-9_.:/@+-]+$/.test(value) ? value : JSON.stringify(value);
  if (value === undefined) return "undefined";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function emit(severity: "info" | "warning" | "error", message: string, fields: LogFields): void {
  const time = new Date().toISOString();
  let line: string;
  if (format === "json") {
    const record: Record<string, unknown> = { ts: time, level: severity, msg: message };
    for (const [key, value] of Object.entries(fields)) {
      record[key] = value instanceof Error ? value.message : value;
    }
    line = JSON.stringify(record);
  } else {
    const parts = [time, severity.toUpperCase().padEnd(7), message];
    for (const [key, value] of Object.entries(fields)) parts.push(`${key}=${renderValue(value)}`);
    line = parts.join(" ");
  }
  sink(redact(line), severity === "info" ? "stdout" : "stderr");
}

/** Logs an informational message when `level` ≤ the verbosity (level 0 always prints). */
export function info(level: number, message: string, fields: LogFields = {}): void {
  if (logEnabled(level)) emit("info", message, fields);
}

/** Logs a warning; warnings always print. */
export function warn(message: string, fields: LogFields = {}): void {
  emit("warning", message, fields);
}

/** Logs an error; errors always print. */
export function error(message: string, fields: LogFields = {}): void {
  emit("error", message, fields);
}
