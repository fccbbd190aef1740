/**
 * The systemd unit file read the way systemd reads it — only what `deploy/systemd/ankra-cloud-ccm.service` uses:
 * sections and assignments with continuations, `%d` and `%%`, quoted words, `EnvironmentFile=`, `${VAR}` and `$VAR`
 * in `ExecStart=`, `LoadCredential=`. The systemd tests start the controller from what this returns.
 *
 * @module
 */
import assert from "node:assert/strict";

/** One assignment of a unit file: `key=value` in the section `[section]`. */
export interface UnitEntry {
  /** The section's name, without the brackets (`Service`). */
  section: string;
  /** The setting (`ExecStart`). */
  key: string;
  /** Everything after the first `=`, trimmed. */
  value: string;
}

/** Parses a unit file into its assignments, in order (comments and blank lines dropped, continuations joined). */
export function parseUnit(text: string): UnitEntry[] {
  const entries: UnitEntry[] = [];
  let section = "";
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i].trim();
    if (!line || line.startsWith("#") || line.startsWith(";")) continue;
    while (line.endsWith("\\") && i + 1 < lines.length) line = line.slice(0, -1) + " " + lines[++i].trim();
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1];
      continue;
    }
    const eq = line.indexOf("=");
    if (eq < 0) throw new Error(`unit line without '=': ${line}`);
    entries.push({ section, key: line.slice(0, eq).trim(), value: line.slice(eq + 1).trim() });
  }
  return entries;
}

/** Expands the specifiers this unit may use: `%d` (credentials directory) and `%%`. */
function expandSpecifiers(value: string, credentialsDir: string): string {
  return value.replace(/%(.)/g, (_, c: string) => {
    if (c === "d") return credentialsDir;
    if (c === "%") return "%";
    throw new Error(`specifier %${c} is not expected in this unit: ${value}`);
  });
}

/** Splits a command line or `Environment=` value into words, honouring double and single quotes. */
function splitWords(value: string): string[] {
  const words: string[] = [];
  let current = "";
  let quote: string | undefined;
  let inWord = false;
  for (const ch of value) {
    if (quote) {
      if (ch === quote) quote = undefined;
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(current);
      current = "";
      inWord = false;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unterminated quote in: ${value}`);
  if (inWord) words.push(current);
  return words;
}

/** Reads an environment file: `KEY=value` lines, `#`/`;` comments, optional surrounding quotes. */
function parseEnvironmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || line.startsWith(";")) continue;
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!match) throw new Error(`environment file line is not KEY=value: ${line}`);
    let value = match[2].trim();
    if (/^(".*"|'.*')$/.test(value)) value = value.slice(1, -1);
    env[match[1]] = value;
  }
  return env;
}

/**
 * `ExecStart` with the environment substituted as systemd does: `${VAR}` inside a word is replaced by the value as
 * is; `$VAR` as a word of its own becomes the value split at white space (zero or more words).
 */
function expandCommand(words: string[], env: Record<string, string>): string[] {
  const argv: string[] = [];
  for (const word of words) {
    const alone = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(word);
    if (alone) {
      argv.push(...(env[alone[1]] ?? "").split(/\s+/).filter(Boolean));
      continue;
    }
    argv.push(word.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env[name] ?? ""));
  }
  return argv;
}

/** How systemd would start the service: the environment and the command, with `%d` = `credentialsDir`. */
export interface ServiceLaunch {
  /** The environment: `Environment=`, then the environment file over it, and `CREDENTIALS_DIRECTORY`. */
  env: Record<string, string>;
  /** `ExecStart=` split into words, specifiers and variables expanded. */
  argv: string[];
  /** Credential name → source path (`LoadCredential=`). */
  credentials: Map<string, string>;
}

/**
 * Reads the `[Service]` section of `unitText` as systemd would start it, with the shipped environment file replaced by
 * `environmentFile` and `%d` by `credentialsDir`. Asserts the unit's shape on the way: one `ExecStart` without prefix
 * characters, the environment file at its documented path.
 */
export function serviceLaunch(unitText: string, environmentFile: string, credentialsDir: string): ServiceLaunch {
  const service = parseUnit(unitText).filter((e) => e.section === "Service");
  const env: Record<string, string> = {};
  const fileEnv: Record<string, string> = {};
  const credentials = new Map<string, string>();
  let exec: string | undefined;
  for (const { key, value } of service) {
    if (key === "Environment") {
      for (const assignment of splitWords(expandSpecifiers(value, credentialsDir))) {
        const eq = assignment.indexOf("=");
        env[assignment.slice(0, eq)] = assignment.slice(eq + 1);
      }
    } else if (key === "EnvironmentFile") {
      // The shipped path is replaced by the test's copy; its settings override Environment= (systemd.exec(5)).
      assert.equal(value, "/etc/ankra-cloud-ccm/ankra-cloud-ccm.env");
      Object.assign(fileEnv, parseEnvironmentFile(Deno.readTextFileSync(environmentFile)));
    } else if (key === "LoadCredential") {
      const [name, path] = value.split(":");
      credentials.set(name, path);
    } else if (key === "ExecStart") {
      assert.equal(exec, undefined, "one ExecStart");
      exec = value;
    }
  }
  assert.ok(exec, "the unit has an ExecStart line");
  assert.ok(!/^[@\-:+!]/.test(exec), "no ExecStart prefix characters");
  const merged = { ...env, ...fileEnv, CREDENTIALS_DIRECTORY: credentialsDir };
  return { env: merged, argv: expandCommand(splitWords(expandSpecifiers(exec, credentialsDir)), merged), credentials };
}
