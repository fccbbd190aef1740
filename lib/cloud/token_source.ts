/**
 * Where the Ankra Cloud API token comes from while the controller runs: a fixed value (`ANKRA_CLOUD_TOKEN`), or a
 * file (`ANKRA_CLOUD_TOKEN_FILE`: the chart's mounted Secret, a systemd credential) that is read again when it
 * changes, so a rotated token is used without a restart.
 *
 * A mounted Secret changes by a swap of its `..data` symlink in the file's directory, so the directory is watched
 * (not the file, whose own link never changes), with a re-read on a period as a safety net (watches can be lost on
 * some file systems) and on demand (the transport asks after a 401, before reporting the token as refused).
 *
 * Each switch is logged once with the file and a short SHA-256 fingerprint, never the token. A file that becomes
 * unusable (missing, empty, white space inside) leaves the current token in use, with one warning.
 *
 * @module
 */
import * as log from "../log.ts";
import { registerSecret } from "../log.ts";
import { DEFAULTS } from "../defaults.ts";

/** The token the transport sends, and how to look for a newer one. */
export interface TokenSource {
  /** The token to send now. */
  readonly current: string;
  /** Reads the source again; resolves true when the token changed (and is now {@linkcode current}). */
  refresh(): Promise<boolean>;
  /** Calls `listener` after every change of the token; the returned function stops that. */
  onChange(listener: () => void): () => void;
  /** Stops watching. */
  close(): void;
}

/** A token that never changes (`ANKRA_CLOUD_TOKEN`). */
export function fixedToken(token: string): TokenSource {
  registerSecret(token);
  return {
    current: token,
    refresh: () => Promise.resolve(false),
    onChange: () => () => {},
    close() {},
  };
}

/** What one read of the token file means for the token in use. */
type TokenReadOutcome =
  | { kind: "unchanged" }
  | { kind: "changed"; token: string }
  | { kind: "unusable"; problem: string };

/** One read of the token file: its text, or why it could not be read. */
type TokenFileRead = { text: string } | { error: unknown };

/**
 * Decides what a read of the token file means: the same token, a new one to switch to, or a file that cannot be
 * used (the current token stays).
 */
export function decideTokenRead(current: string, read: TokenFileRead): TokenReadOutcome {
  if ("error" in read) {
    const missing = read.error instanceof Deno.errors.NotFound;
    return {
      kind: "unusable",
      problem: missing ? "it does not exist" : `it cannot be read (${errorName(read.error)})`,
    };
  }
  const token = read.text.trim();
  if (!token) return { kind: "unusable", problem: "it is empty" };
  if (/\s/.test(token)) return { kind: "unusable", problem: "the token in it contains white space" };
  return token === current ? { kind: "unchanged" } : { kind: "changed", token };
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : "unknown error";
}

/** A short, non-reversible fingerprint of a token for logs: `sha256:` and the first 8 hex digits. */
export async function tokenFingerprint(token: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
  return "sha256:" + [...digest.slice(0, 4)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Options of {@linkcode TokenFile}. */
interface TokenFileOptions {
  /** Re-read period, milliseconds (default 10 s); 0 turns the period off. */
  pollIntervalMs?: number;
  /** Watch the file's directory for changes (default true). */
  watch?: boolean;
  /** Quiet time after a file system event before reading, milliseconds (default 100). */
  settleMs?: number;
  /** Reads the file (tests). */
  readFile?: (path: string) => Promise<string>;
}

/**
 * The token file, read again on a change in its directory, on a period and on demand; the token read at start is
 * `initial` (the configuration has already checked it).
 */
export class TokenFile implements TokenSource {
  readonly #path: string;
  readonly #options: TokenFileOptions & Required<Pick<TokenFileOptions, "settleMs">>;
  readonly #listeners: (() => void)[] = [];
  readonly #readFile: (path: string) => Promise<string>;
  #current: string;
  #reading?: Promise<boolean>;
  #problem?: string;
  #watcher?: Deno.FsWatcher;
  #timer?: ReturnType<typeof setInterval>;
  #settle?: ReturnType<typeof setTimeout>;
  #closed = false;

  /** Starts watching `path`; `initial` is the token the file held at start. */
  constructor(path: string, initial: string, options: TokenFileOptions = {}) {
    this.#path = path;
    this.#current = initial;
    const { settleMs = DEFAULTS.tokenFileSettleMs, pollIntervalMs = DEFAULTS.tokenFilePollMs } = options;
    this.#options = { ...options, settleMs };
    this.#readFile = options.readFile ?? Deno.readTextFile;
    registerSecret(initial);
    const period = pollIntervalMs;
    if (period > 0) {
      const timer = setInterval(() => void this.refresh(), period);
      Deno.unrefTimer(timer);
      this.#timer = timer;
    }
    if (options.watch ?? true) this.#watch();
  }

  /** The token to send now. */
  get current(): string {
    return this.#current;
  }

  /** Reads the file again (one read at a time); resolves true when the token changed. */
  refresh(): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    this.#reading ??= this.#read().finally(() => this.#reading = undefined);
    return this.#reading;
  }

  /** Calls `listener` after every change of the token; the returned function stops that. */
  onChange(listener: () => void): () => void {
    this.#listeners.push(listener);
    return () => {
      const at = this.#listeners.indexOf(listener);
      if (at >= 0) this.#listeners.splice(at, 1);
    };
  }

  /** Stops the watch and the period. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    clearTimeout(this.#settle);
    try {
      this.#watcher?.close();
    } catch { /* already closed */ }
  }

  async #read(): Promise<boolean> {
    let read: TokenFileRead;
    try {
      read = { text: await this.#readFile(this.#path) };
    } catch (error) {
      read = { error };
    }
    const outcome = decideTokenRead(this.#current, read);
    if (outcome.kind === "unusable") {
      if (this.#problem !== outcome.problem) {
        log.warn(
          `the API token file ${this.#path} cannot be used: ${outcome.problem}; the controller keeps the token it ` +
            "has: put the new token in the file (or the Secret)",
        );
      }
      this.#problem = outcome.problem;
      return false;
    }
    this.#problem = undefined;
    if (outcome.kind === "unchanged") return false;
    registerSecret(outcome.token);
    this.#current = outcome.token;
    log.info(0, `API token changed (file ${this.#path}), now using it`, {
      fingerprint: await tokenFingerprint(outcome.token),
    });
    for (const listener of this.#listeners) listener();
    return true;
  }

  #watch(): void {
    const slash = this.#path.lastIndexOf("/");
    const directory = slash < 0 ? "." : this.#path.slice(0, slash) || "/";
    try {
      this.#watcher = Deno.watchFs(directory, { recursive: false });
    } catch (cause) {
      log.info(1, "the token file's directory cannot be watched; it is read again on a period", {
        directory,
        error: errorName(cause),
      });
      return;
    }
    (async () => {
      try {
        for await (const _event of this.#watcher!) {
          clearTimeout(this.#settle);
          this.#settle = setTimeout(() => void this.refresh(), this.#options.settleMs);
        }
      } catch { /* closed */ }
    })();
  }
}
