/**
 * What the runtime does under the controller's permission list and V8 flags (lib/runtime_permissions.ts), in processes
 * of its own: the flags are accepted and give `gc()`, nothing spawns, writes, loads a library or reads elsewhere, the
 * launcher's shell rule for the files named at run time agrees with the TypeScript one, `--version`, `--help` and the
 * doctor run, and `deno task run` reads the files it is given (it starts main.ts: about a second, no API server). The
 * lists themselves are checked without a process in tests/unit/release/runtime_permissions_test.ts.
 */
import assert from "node:assert/strict";
import {
  launcherReadRule,
  namedFileDirectories,
  PERMISSION_FLAGS,
  permissionFlagsFor,
  V8_FLAGS_ARGUMENT,
} from "../../lib/runtime_permissions.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const MAIN = `${ROOT}main.ts`;

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
