/**
 * Values written the way Go's standard library reads them, so command lines, annotations and kubelet settings written
 * for the Go controller mean the same here: booleans as `strconv.ParseBool` accepts them and durations as
 * `time.ParseDuration` does (the units this controller needs: `ms`, `s`, `m`, `h`).
 *
 * @example
 * ```ts
 * parseGoBoolean("T"); // true
 * parseDuration("1m30s"); // 90000
 * ```
 *
 * @module
 */

const GO_TRUE = ["true", "1", "t", "T", "TRUE", "True"];
const GO_FALSE = ["false", "0", "f", "F", "FALSE", "False"];
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Reads a Go-syntax boolean (`1`, `t`, `T`, `TRUE`, `true`, `True` and their false twins); undefined when it is not one. */
export function parseGoBoolean(value: string): boolean | undefined {
  if (GO_TRUE.includes(value)) return true;
  if (GO_FALSE.includes(value)) return false;
  return undefined;
}

/**
 * Parses a Go-style duration (`300ms`, `15s`, `1m30s`, `2h`, `1.5s`, or a bare `0`) into whole milliseconds;
 * `undefined` when malformed (a bare number other than 0, an unknown unit, trailing text). Surrounding space is ignored.
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === "0") return 0;
  let total = 0;
  let consumed = 0;
  for (const match of trimmed.matchAll(DURATION_PART)) {
    total += Number(match[1]) * DURATION_UNITS[match[2]];
    consumed += match[0].length;
  }
  if (consumed === 0 || consumed !== trimmed.length) return undefined;
  return Math.round(total);
}
