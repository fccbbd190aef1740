/**
 * The controller's Deno permissions and V8 flags: one list each, used by the release launcher, the image, the
 * Containerfile, the systemd unit (through the launcher), the burst benchmark and `deno task run`, read from the files
 * that spell them. What the runtime does under them (nothing spawns, writes or loads native code; the launcher's shell
 * rule agrees with the TypeScript one) starts processes: tests/integration/runtime_permissions_test.ts.
 */
import assert from "node:assert/strict";
import {
  ENVIRONMENT_VARIABLES,
  FILE_VARIABLES,
  PERMISSION_FLAGS,
  permissionFlagsFor,
  V8_FLAGS,
  V8_FLAGS_ARGUMENT,
} from "../../../lib/runtime_permissions.ts";
import { OPTIONS } from "../../../lib/config/options.ts";
import { ENTRYPOINT } from "../../../scripts/image/ccm_image.ts";
import { controllerRunArguments, MAIN as RUN_MAIN, SCRIPT_VARIABLES } from "../../../scripts/run_controller.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;
const MAIN = `${ROOT}main.ts`;
const FORBIDDEN = /^(-A|--allow-all|--allow-run|--allow-write|--allow-ffi|--allow-import)(=|$)/;

/** The permission flags in a list of `deno run` arguments (those starting with --allow-). */
function permissionsIn(args: readonly string[]): string[] {
  return args.filter((a) => /^--allow-|^-A$/.test(a));
}

/** The ENTRYPOINT of the Containerfile, as a list. */
async function containerfileEntrypoint(): Promise<string[]> {
  const containerfile = await Deno.readTextFile(`${ROOT}Containerfile`);
  const entrypoint = /^ENTRYPOINT (.*)$/m.exec(containerfile)?.[1];
  assert.ok(entrypoint, "the Containerfile has an ENTRYPOINT");
  return JSON.parse(entrypoint);
}

/** deno.json's `run` task, split into words. */
async function runTask(): Promise<string[]> {
  const tasks = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks as Record<string, string>;
  return tasks.run.split(/\s+/);
}

Deno.test("the image, the Containerfile, deno task run and the release launcher use the one permission list", async () => {
  for (const flag of PERMISSION_FLAGS) assert.doesNotMatch(flag, FORBIDDEN);
  assert.deepEqual(permissionsIn(ENTRYPOINT), [...PERMISSION_FLAGS], "the image's entrypoint");
  assert.deepEqual(
    permissionsIn(await containerfileEntrypoint()),
    [...PERMISSION_FLAGS],
    "the Containerfile's entrypoint",
  );

  // deno task run: the launcher's rule, the list plus the directories of the files given (scripts/run_controller.ts).
  const args = ["--kubeconfig", "/srv/kube/config", "--cluster-name=dev"];
  const env = { ANKRA_CLOUD_TOKEN_FILE: "/run/secret/token" };
  const started = controllerRunArguments(args, env);
  assert.deepEqual(permissionsIn(started), permissionFlagsFor(args, env), "deno task run, files given");
  assert.deepEqual(permissionsIn(controllerRunArguments([], {})), [...PERMISSION_FLAGS], "deno task run, none given");
  assert.deepEqual(started.slice(-args.length - 1), [RUN_MAIN, ...args], "main.ts with the arguments as given");
  assert.equal(RUN_MAIN, MAIN);

  // The launcher's flags come from the module at build time (tests/integration/release_permissions_test.ts checks the
  // result).
  const build = await Deno.readTextFile(`${ROOT}scripts/build.sh`);
  assert.match(build, /ccm_permissions="\$\(deno eval "\$permissions_module console\.log\(p\.PERMISSION_FLAGS/);
  assert.match(build, /^ccm_flags="\$ccm_permissions /m, "the launcher's and deno compile's flags start with them");
  assert.doesNotMatch(build.split("\n").filter((l) => l.startsWith("ccm_flags=")).join(""), /--allow-all/);

  // The systemd unit runs the release launcher, so it has the launcher's permissions.
  const unit = await Deno.readTextFile(`${ROOT}deploy/systemd/ankra-cloud-ccm.service`);
  assert.match(unit, /^ExecStart=\/opt\/ankra-cloud-ccm\/bin\/ankra-cloud-ccm /m);
});

Deno.test("deno task run starts scripts/run_controller.ts with only what that script needs", async () => {
  const task = await runTask();
  assert.deepEqual(task.slice(0, 2), ["deno", "run"]);
  assert.equal(task.at(-1), "scripts/run_controller.ts", "the task passes its arguments to the script");
  assert.deepEqual(permissionsIn(task), [`--allow-env=${SCRIPT_VARIABLES.join(",")}`, "--allow-run=deno"]);
  assert.deepEqual(SCRIPT_VARIABLES, [...FILE_VARIABLES, "MALLOC_ARENA_MAX"]);
  assert.ok(task.includes("--no-prompt"), "a missing permission is an error, never a question");
});

Deno.test("every place that writes the V8 flags writes exactly the one list", async () => {
  const v8In = (args: readonly string[]) => args.filter((a) => a.startsWith("--v8-flags="));
  assert.equal(V8_FLAGS_ARGUMENT, `--v8-flags=${V8_FLAGS.join(",")}`);
  assert.deepEqual(v8In(ENTRYPOINT), [V8_FLAGS_ARGUMENT], "the image's entrypoint");
  assert.deepEqual(v8In(await containerfileEntrypoint()), [V8_FLAGS_ARGUMENT], "the Containerfile's entrypoint");
  assert.deepEqual(v8In(controllerRunArguments(["--v=2"], {})), [V8_FLAGS_ARGUMENT], "deno task run");
  // In the entrypoints and deno task run, the V8 flags follow the permissions, as in the launcher.
  for (const args of [ENTRYPOINT, await containerfileEntrypoint(), controllerRunArguments([], {})]) {
    assert.equal(args.indexOf(V8_FLAGS_ARGUMENT), args.indexOf(PERMISSION_FLAGS.at(-1)!) + 1);
  }

  // The launcher and deno compile (scripts/build.sh) and the burst benchmark ask the module.
  const build = await Deno.readTextFile(`${ROOT}scripts/build.sh`);
  assert.match(build, /^ccm_v8_flags="\$\(deno eval "\$permissions_module console\.log\(p\.V8_FLAGS_ARGUMENT\)"\)"$/m);
  assert.match(build, /^ccm_flags="\$ccm_permissions \$ccm_v8_flags"$/m);
  const bench = await Deno.readTextFile(`${ROOT}bench/burst_settings.ts`);
  assert.match(bench, /env\("BENCH_DENO_FLAGS"\) \?\? V8_FLAGS_ARGUMENT\)/);

  // No other file spells the list out (reports record the flags of a run; tests/ holds none).
  const literal = /--v8-flags=--[^\s"'`]*/g;
  const spelled: string[] = [];
  for await (const path of sourceFiles(ROOT)) {
    for (const [found] of (await Deno.readTextFile(path)).matchAll(literal)) {
      spelled.push(`${path.slice(ROOT.length)}: ${found}`);
    }
  }
  assert.deepEqual(spelled, [`Containerfile: ${V8_FLAGS_ARGUMENT}`]);
});

/** Text files of the repository that may hold a command line: not dependencies, builds, reports or tests. */
async function* sourceFiles(dir: string): AsyncGenerator<string> {
  const skipped = new Set(["node_modules", "coverage", "dist", "tests", ".git", ".cache"]);
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}${entry.name}`;
    if (entry.isDirectory && !skipped.has(entry.name)) yield* sourceFiles(`${path}/`);
    else if (
      entry.isFile && !entry.name.endsWith("_report.md") &&
      /(\.(ts|sh|json|ya?ml|md|service|tpl)|^Containerfile)$/.test(entry.name)
    ) {
      yield path;
    }
  }
}

Deno.test("every variable the configuration reads may be read, and no other but the trust store's", () => {
  const declared = Object.values(OPTIONS).flatMap((o) => "env" in o && o.env ? [o.env as string] : []);
  assert.ok(declared.length >= 10);
  for (const name of declared) assert.ok(ENVIRONMENT_VARIABLES.includes(name), name);
  assert.deepEqual(
    ENVIRONMENT_VARIABLES.filter((name) => !declared.includes(name)),
    ["KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "DENO_TLS_CA_STORE"],
  );
});
