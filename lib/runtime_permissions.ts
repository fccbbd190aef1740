/**
 * The Deno permissions and V8 flags the controller runs with, in one place: the release launcher (`scripts/build.sh`
 * asks this module), the image's entrypoint (`scripts/image/ccm_image.ts` imports it), the `Containerfile`'s
 * `ENTRYPOINT`, `deno task run` (`scripts/run_controller.ts`), the burst benchmark and the systemd unit (which runs
 * the release launcher) all use {@linkcode PERMISSION_FLAGS} and {@linkcode V8_FLAGS};
 * tests/unit/release/runtime_permissions_test.ts checks that they agree.
 *
 * What the controller is given, and nothing else — no `--allow-run`, `--allow-write`, `--allow-ffi` or
 * `--allow-import`:
 *
 * | Flag | For |
 * | --- | --- |
 * | `--allow-net` | HTTPS to the Ankra Cloud API and the Kubernetes API, and serving `/healthz`, `/readyz` and `/metrics` on `--secure-port`. Not narrowed to hosts: the API URL and the Kubernetes server are known only at run time (a variable, the kubeconfig's contents). |
 * | `--allow-env=…` | exactly the variables the configuration reads ({@linkcode ENVIRONMENT_VARIABLES}) |
 * | `--allow-read=…` | the system CA bundles, the in-cluster service account, the chart's credentials directory, the host's settings directory ({@linkcode READ_PATHS}); the release launcher and `deno task run` add the directory of each file named by a flag or variable ({@linkcode FILE_FLAGS}, {@linkcode FILE_VARIABLES}) |
 * | `--allow-sys=hostname` | the host name: the Lease holder's identity, the node controllers' event source, the self-signed serving certificate |
 *
 * The `doctor` subcommand and `--version` run through the same launcher with the same permissions: the doctor reads
 * and asks nothing more than the controller does.
 *
 * @module
 */
import { OPTIONS } from "./config/options.ts";
import { SYSTEM_CA_FILES, TRUST_STORE_VARIABLE } from "./tls.ts";
import { SERVICE_ACCOUNT_DIR } from "./kube/kubeconfig.ts";

/** The chart's credentials volume: the token Secret (and the CA bundle) mounted there. */
const CHART_CREDENTIALS_DIR = "/etc/ankra-cloud";

/** The host's settings directory (the systemd guide's token and kubeconfig; a hand-run container's mounts). */
const HOST_SETTINGS_DIR = "/etc/ankra-cloud-ccm";

/**
 * Every environment variable the controller reads: the configuration's and the in-cluster API server's; and the one
 * it sets, `DENO_TLS_CA_STORE` (emptied at start, so each client trusts only the certificates it names: lib/tls.ts).
 */
export const ENVIRONMENT_VARIABLES: readonly string[] = [
  ...Object.values(OPTIONS).flatMap((option) => "env" in option && option.env ? [option.env as string] : []),
  "KUBERNETES_SERVICE_HOST",
  "KUBERNETES_SERVICE_PORT",
  TRUST_STORE_VARIABLE,
];

/** Paths readable wherever the controller runs (a path allows everything below it). */
const READ_PATHS: readonly string[] = [
  ...SYSTEM_CA_FILES,
  SERVICE_ACCOUNT_DIR,
  CHART_CREDENTIALS_DIR,
  HOST_SETTINGS_DIR,
];

/** What the controller asks the operating system. */
const SYSTEM_INFO: readonly string[] = ["hostname"];

/** The permission flags, in the order every launcher writes them. */
export const PERMISSION_FLAGS: readonly string[] = [
  "--allow-net",
  `--allow-env=${ENVIRONMENT_VARIABLES.join(",")}`,
  `--allow-read=${READ_PATHS.join(",")}`,
  `--allow-sys=${SYSTEM_INFO.join(",")}`,
];

/**
 * Flags naming a file the controller reads; the release launcher and `deno task run` add each one's directory to
 * `--allow-read` (the
 * directory: a Secret is swapped by a symlink beside the file, and a kubeconfig names its certificates relative to
 * itself).
 */
const FILE_FLAGS: readonly string[] = [
  "kubeconfig",
  "ankra-cloud-token-file",
  "tls-cert-file",
  "tls-private-key-file",
];

/** Variables naming a file the controller reads; their directories are added as for {@linkcode FILE_FLAGS}. */
export const FILE_VARIABLES: readonly string[] = ["ANKRA_CLOUD_TOKEN_FILE", "ANKRA_CLOUD_CA_BUNDLE"];

function directoryOf(path: string): string {
  if (!path.includes("/")) return ".";
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

/**
 * The directories the release launcher and `deno task run` add to `--allow-read` for a command line and environment:
 * that of every file named by {@linkcode FILE_FLAGS} (`--name=value`, `--name value`, `-name`, `_` for `-`) or
 * {@linkcode FILE_VARIABLES}, in the order found.
 */
export function namedFileDirectories(args: readonly string[], env: Record<string, string | undefined>): string[] {
  const found: string[] = [];
  let pending = false;
  for (const arg of args) {
    if (pending) {
      if (arg) found.push(directoryOf(arg));
      pending = false;
      continue;
    }
    const match = /^--?([A-Za-z0-9_-]+)(=(.*))?$/.exec(arg);
    if (!match || !FILE_FLAGS.includes(match[1].replaceAll("_", "-"))) continue;
    if (match[2] === undefined) pending = true;
    else if (match[3]) found.push(directoryOf(match[3]));
  }
  for (const name of FILE_VARIABLES) {
    const value = env[name];
    if (value) found.push(directoryOf(value));
  }
  return found;
}

/**
 * The permission flags for one run: {@linkcode PERMISSION_FLAGS} with `--allow-read` extended by
 * {@linkcode namedFileDirectories} — what the release launcher and `deno task run` pass (tests that start `main.ts`
 * use it too).
 */
export function permissionFlagsFor(args: readonly string[], env: Record<string, string | undefined>): string[] {
  const extra = namedFileDirectories(args, env);
  return PERMISSION_FLAGS.map((flag) =>
    flag.startsWith("--allow-read=") && extra.length ? `${flag},${extra.join(",")}` : flag
  );
}

/**
 * The release launcher's POSIX sh lines that collect into `$read_dirs` (each with a leading comma) the directories
 * {@linkcode namedFileDirectories} finds: the same rule, for a launcher that has only a shell. No external command
 * is used (the launcher needs no `PATH`).
 */
export function launcherReadRule(): string {
  const pattern = (name: string) => `--${name.replaceAll("-", "[-_]")}|-${name.replaceAll("-", "[-_]")}`;
  const flags = FILE_FLAGS.map(pattern).join("|");
  const valued = FILE_FLAGS.map((name) => pattern(name).split("|").map((f) => `${f}=*`).join("|")).join("|");
  return [
    "read_dirs=",
    'allow_dir() { case "$1" in */*) d="${1%/*}"; read_dirs="$read_dirs,${d:-/}" ;; ?*) read_dirs="$read_dirs,." ;; esac; }',
    "pending=",
    'for arg in "$@"; do',
    '  if [ -n "$pending" ]; then allow_dir "$arg"; pending=; continue; fi',
    '  case "$arg" in',
    `    ${valued}) allow_dir "\${arg#*=}" ;;`,
    `    ${flags}) pending=1 ;;`,
    "  esac",
    "done",
    ...FILE_VARIABLES.map((name) => `allow_dir "\${${name}:-}"`),
  ].join("\n");
}

/** {@linkcode PERMISSION_FLAGS} as the release launcher writes them: `--allow-read` ends with `$read_dirs`. */
export function launcherPermissionFlags(): string {
  return PERMISSION_FLAGS.map((flag) => flag.startsWith("--allow-read=") ? `"${flag}$read_dirs"` : flag).join(" ");
}

/**
 * The V8 flags of every launcher, in this order (measured in bench/memory_report.md, on the release launcher):
 *
 * - `--expose-gc` gives the program `gc()`: `collectGarbage()` (lib/controller_manager.ts) runs a full collection
 *   after the first sync, when the first lists of a large cluster leave tens of megabytes of parsed pages behind that
 *   V8 only gives back after a full collection.
 * - `--max-semi-space-size=1` caps the young generation's semi-spaces at 1 MiB: the controller allocates little at a
 *   time (a watch event, a list page of 100), and a larger young generation is only resident memory.
 * - `--lite-mode` turns off V8's optimizing compilers and allocates feedback lazily; the controller waits on I/O and
 *   loses nothing by it. It implies `--jitless`: no memory is ever made executable, which the systemd unit's
 *   `MemoryDenyWriteExecute=yes` relies on.
 * - `--optimize-for-size` makes V8 prefer a smaller heap and smaller code over speed (with `--lite-mode`: 77.0 →
 *   70.4 MiB resident at 1,000 nodes and 1,000 Services).
 *
 * Measured and left out (bench/memory_report.md): `--minor-ms`, `--single-threaded`, `--single-threaded-gc`,
 * `--semi-space-growth-factor=1`, `--bytecode-old-time=1` — no gain, or more memory at scale.
 */
export const V8_FLAGS: readonly string[] = [
  "--expose-gc",
  "--max-semi-space-size=1",
  "--lite-mode",
  "--optimize-for-size",
];

/** {@linkcode V8_FLAGS} as the one `deno run` argument every launcher writes after the permissions. */
export const V8_FLAGS_ARGUMENT = `--v8-flags=${V8_FLAGS.join(",")}`;

/** Reads {@linkcode ENVIRONMENT_VARIABLES} (the only variables the process may read), but the trust store's. */
export function readEnvironment(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const name of ENVIRONMENT_VARIABLES) {
    if (name === TRUST_STORE_VARIABLE) continue;
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}
