/**
 * The controller's Deno permissions and V8 flags: one list each, used by the release launcher, the image, the
 * Containerfile, the systemd unit (through the launcher), the burst benchmark and `deno task run`; nothing that spawns,
 * writes or loads native code; the launcher's shell rule for the files named at run time agrees with the TypeScript
 * one, and `deno task run` follows the same rule (it starts main.ts: about a second, no API server).
 */
import assert from "node:assert/strict";
import {
  ENVIRONMENT_VARIABLES,
  FILE_VARIABLES,
  launcherReadRule,
  namedFileDirectories,
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

Deno.test("the V8 flags are ones this runtime accepts, and --expose-gc gives the program gc()", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", V8_FLAGS_ARGUMENT, "console.log(typeof globalThis.gc)"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, stderr);
  assert.equal(new TextDecoder().decode(output.stdout).trim(), "function");
  assert.doesNotMatch(stderr, /did not recognize|unknown flag/i);
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

Deno.test("the launcher's shell rule allows the same directories as the TypeScript rule", async () => {
  const cases: { args: string[]; env: Record<string, string> }[] = [
    { args: [], env: {} },
    { args: ["--kubeconfig=/etc/kubernetes/admin.conf", "--cluster-name=prod"], env: {} },
    {
      args: ["--kubeconfig", "/srv/kube/config", "--v=4"],
      env: { ANKRA_CLOUD_TOKEN_FILE: "/run/credentials/x/token" },
    },
    { args: ["-kubeconfig=kc", "--ankra_cloud_token_file=/t/token"], env: { ANKRA_CLOUD_CA_BUNDLE: "/ca.pem" } },
    { args: ["--tls-cert-file=/tls/a b/tls.crt", "--tls-private-key-file", "rel/tls.key"], env: {} },
    { args: ["--cluster-name=kubeconfig", "--kubeconfig="], env: { ANKRA_CLOUD_TOKEN_FILE: "" } },
  ];
  for (const { args, env } of cases) {
    const script = `${launcherReadRule()}\nprintf '%s' "$read_dirs"`;
    const output = await new Deno.Command("sh", {
      args: ["-c", script, "launcher", ...args],
      env,
      clearEnv: true,
      stdout: "piped",
    }).output();
    assert.equal(output.code, 0);
    const fromShell = new TextDecoder().decode(output.stdout).split(",").slice(1);
    assert.deepEqual(fromShell, namedFileDirectories(args, env), JSON.stringify({ args, env }));
  }
  assert.deepEqual(namedFileDirectories(["--kubeconfig=/srv/kube/config"], { ANKRA_CLOUD_TOKEN_FILE: "/x/token" }), [
    "/srv/kube",
    "/x",
  ]);
  assert.match(permissionFlagsFor(["--kubeconfig=/srv/k"], {}).find((f) => f.startsWith("--allow-read="))!, /,\/srv$/);
});

Deno.test("under the permission list the program cannot spawn, write, load a library or read elsewhere", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const probe = `${dir}/probe.ts`;
    await Deno.writeTextFile(
      probe,
      `const tries = {
        spawn: () => new Deno.Command("true").outputSync(),
        write: () => Deno.writeTextFileSync(${JSON.stringify(`${dir}/written`)}, "x"),
        ffi: () => Deno.dlopen("libc.so.6", {}),
        readElsewhere: () => Deno.readTextFileSync("/etc/passwd"),
        otherVariable: () => Deno.env.get("HOME"),
        osRelease: () => Deno.osRelease(),
      };
      const result = {};
      for (const [name, attempt] of Object.entries(tries)) {
        try { attempt(); result[name] = "allowed"; } catch (e) { result[name] = e.name; }
      }
      result.hostname = typeof Deno.hostname();
      console.log(JSON.stringify(result));`,
    );
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...PERMISSION_FLAGS, "--no-prompt", "--no-config", probe],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    assert.deepEqual(JSON.parse(new TextDecoder().decode(output.stdout)), {
      spawn: "NotCapable",
      write: "NotCapable",
      ffi: "NotCapable",
      readElsewhere: "NotCapable",
      otherVariable: "NotCapable",
      osRelease: "NotCapable",
      hostname: "string",
    });
    await assert.rejects(Deno.lstat(`${dir}/written`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--version, --help and the doctor work under the permission list, reading the variables they need", async () => {
  const run = async (args: string[], env: Record<string, string> = {}) => {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...PERMISSION_FLAGS, "--no-prompt", MAIN, ...args],
      env: { ...env, NO_COLOR: "1" },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    return { code: output.code, out: decoder.decode(output.stdout) + decoder.decode(output.stderr) };
  };
  const version = await run(["--version"]);
  assert.equal(version.code, 0, version.out);
  assert.match(version.out, /^ankra-cloud-ccm v\d/);
  const help = await run(["--help"]);
  assert.equal(help.code, 0, help.out);
  // A bad variable is read (and reported by the doctor as its first finding): the environment reaches the program.
  const doctor = await run(["doctor", "--output=json"], {
    ANKRA_CLOUD_API_URL: "not a url",
    ANKRA_CLOUD_TOKEN: "act_x1",
  });
  assert.equal(doctor.code, 1);
  assert.match(doctor.out, /ANKRA_CLOUD_API_URL \\"not a url\\" is not a URL/);
  assert.doesNotMatch(doctor.out, /NotCapable|Requires .* access/);
});

Deno.test("deno task run reads the kubeconfig and token file it is given, as the release launcher does", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ccm-task-run-" });
  try {
    await Deno.mkdir(`${dir}/kube`);
    await Deno.mkdir(`${dir}/secret`);
    // Not YAML: the controller can only say so if it was allowed to read the file.
    await Deno.writeTextFile(`${dir}/kube/config`, "clusters: [unclosed\n");
    await Deno.writeTextFile(`${dir}/secret/token`, "act_task_run_probe\n");
    const env = Object.fromEntries(
      Object.entries(Deno.env.toObject()).filter(([name]) => !/^(ANKRA_CLOUD_|KUBERNETES_SERVICE_)/.test(name)),
    );
    const deno = Deno.execPath();
    const output = await new Deno.Command(deno, {
      args: ["task", "--quiet", "run", "--kubeconfig", `${dir}/kube/config`, "--leader-elect=false", "--secure-port=0"],
      cwd: ROOT,
      env: {
        ...env,
        // The script may start only the deno on PATH: this one.
        PATH: `${deno.slice(0, deno.lastIndexOf("/"))}:${env.PATH ?? "/usr/bin:/bin"}`,
        ANKRA_CLOUD_TOKEN_FILE: `${dir}/secret/token`,
        ANKRA_CLOUD_API_URL: "https://127.0.0.1:1",
        NO_COLOR: "1",
      },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    const out = decoder.decode(output.stdout) + decoder.decode(output.stderr);
    assert.doesNotMatch(
      out,
      /outside what the runtime may read|the runtime may not read|NotCapable|Requires .* access/,
    );
    assert.match(out, new RegExp(`${dir}/kube/config: not valid YAML`), out);
    assert.equal(output.code, 1, out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
