/**
 * Running the Debian tools the image is built and opened with (tar, gzip, find, apt-get, dpkg-deb, skopeo, umoci):
 * one place that turns a missing tool into "install it" and a failing one into its command line and its stderr.
 *
 * @module
 */

/** The Debian package of each tool whose package has another name. */
const DEBIAN_PACKAGE: Record<string, string> = {
  "apt-cache": "apt",
  "apt-get": "apt",
  "dpkg-deb": "dpkg",
  find: "findutils",
};

/** Options of {@linkcode runTool}. */
export interface RunToolOptions {
  /** Working directory. */
  cwd?: string;
}

/**
 * Runs `command` with `args` and returns its standard output.
 *
 * @throws `<command> is not installed: apt-get install <package>` when it is missing, and
 * `<command> <args> failed: <stderr>` when it exits with an error.
 */
export async function runTool(command: string, args: string[], options: RunToolOptions = {}): Promise<string> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(command, { args, cwd: options.cwd, stdout: "piped", stderr: "piped" }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new Error(`${command} is not installed: apt-get install ${DEBIAN_PACKAGE[command] ?? command}`);
    }
    throw error;
  }
  if (!output.success) {
    throw new Error(`${command} ${args.join(" ")} failed: ${new TextDecoder().decode(output.stderr).trim()}`);
  }
  return new TextDecoder().decode(output.stdout);
}
