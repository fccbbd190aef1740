/**
 * The whole story of an error in one line: its message and those of its causes (`fetch failed: error sending
 * request: invalid peer certificate: UnknownIssuer`), so a network or TLS failure says what actually went wrong.
 *
 * @module
 */

/** The messages of `error` and its causes (at most 8 deep), repeated ones once, joined with `: `. */
export function causeChain(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 8; depth++) {
    const message = current instanceof Error ? current.message : String(current);
    if (message && !parts.includes(message)) parts.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(": ");
}
