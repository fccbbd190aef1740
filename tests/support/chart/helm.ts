/**
 * helm and kubectl for tests, against the test control plane, with Helm's configuration, cache and data in a
 * temporary directory of this test process (nothing is read from or written to the user's ~/.config/helm).
 *
 * @module
 */
import { testControlPlane } from "../control_plane/control_plane.ts";

/** What a command printed and how it ended. */
export interface ToolResult {
  /** Exit code. */
  code: number;
  /** Standard output. */
  stdout: string;
  /** Standard output and standard error. */
  text: string;
}

/** Options of {@linkcode helm} and {@linkcode kubectl}. */
export interface ToolOptions {
  /** Extra environment (e.g. another HELM_CONFIG_HOME). */
  env?: Record<string, string>;
  /** Working directory. */
  cwd?: string;
  /** Leave out `--kubeconfig` (the command reads KUBECONFIG from `env`, as a user's shell would). */
  noKubeconfigFlag?: boolean;
}

const decoder = new TextDecoder();
let helmHome: string | undefined;

/** The binary `name` beside the test binaries (`KUBEBUILDER_ASSETS`), else from PATH. */
export function toolPath(name: "helm" | "kubectl"): string {
  const dir = Deno.env.get("KUBEBUILDER_ASSETS");
  return dir ? `${dir}/${name}` : name;
}

/** HELM_CONFIG_HOME, HELM_CACHE_HOME and HELM_DATA_HOME under `dir` (created). */
export function helmHomes(dir: string): Record<string, string> {
  const env = {
    HELM_CONFIG_HOME: `${dir}/config`,
    HELM_CACHE_HOME: `${dir}/cache`,
    HELM_DATA_HOME: `${dir}/data`,
  };
  for (const path of Object.values(env)) Deno.mkdirSync(path, { recursive: true });
  return env;
}

function defaultHelmHome(): Record<string, string> {
  if (!helmHome) {
    const dir = Deno.makeTempDirSync({ prefix: "ccm-helm-home-" });
    helmHome = dir;
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch { /* already gone */ }
    });
  }
  return helmHomes(helmHome);
}

async function runTool(name: "helm" | "kubectl", args: string[], options: ToolOptions): Promise<ToolResult> {
  const kubeconfig = options.noKubeconfigFlag ? [] : [`--kubeconfig=${testControlPlane().kubeconfigPath}`];
  const output = await new Deno.Command(toolPath(name), {
    args: [...args, ...kubeconfig],
    cwd: options.cwd,
    env: { ...(name === "helm" ? defaultHelmHome() : {}), ...options.env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = decoder.decode(output.stdout);
  return { code: output.code, stdout, text: stdout + decoder.decode(output.stderr) };
}

/** Runs helm with `args` (and `--kubeconfig` of the test control plane). */
export function helm(args: string[], options: ToolOptions = {}): Promise<ToolResult> {
  return runTool("helm", args, options);
}

/** Runs kubectl with `args` (and `--kubeconfig` of the test control plane). */
export function kubectl(args: string[], options: ToolOptions = {}): Promise<ToolResult> {
  return runTool("kubectl", args, options);
}

/** Like {@linkcode helm} but throws with the output unless it exits 0; returns standard output. */
export async function helmOk(args: string[], options: ToolOptions = {}): Promise<string> {
  const result = await helm(args, options);
  if (result.code !== 0) throw new Error(`helm ${args.join(" ")} failed (${result.code}):\n${result.text}`);
  return result.stdout;
}

/** Like {@linkcode kubectl} but throws with the output unless it exits 0; returns standard output. */
export async function kubectlOk(args: string[], options: ToolOptions = {}): Promise<string> {
  const result = await kubectl(args, options);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(" ")} failed (${result.code}):\n${result.text}`);
  return result.stdout;
}

/** Runs `work`, printing how long it took (the integration tests report each step's cost). */
export async function timed<T>(what: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    console.log(`${what}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
}
