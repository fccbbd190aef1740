/**
 * A command run to its end with its output captured, for tests that check what a tool printed and how it ended
 * (`systemd-analyze`, `kubectl auth can-i`, `curl`, `tar`).
 *
 * @module
 */

/** What {@linkcode runCommand} returns: the exit code and the decoded standard output and standard error. */
export interface CommandOutput {
  /** Exit code. */
  code: number;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/**
 * Runs `cmd` with `args` and waits for it to end. `env` is added to this process's environment; `stdin`, when given,
 * is written to the command's standard input (otherwise it reads nothing). Never throws on a non-zero exit code.
 */
export async function runCommand(
  cmd: string,
  args: string[],
  options: { env?: Record<string, string>; stdin?: string } = {},
): Promise<CommandOutput> {
  const child = new Deno.Command(cmd, {
    args,
    env: options.env,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const out = await child.output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}
