/**
 * The controller's Deno permissions: one list, used by the release launcher, the image, the Containerfile, the
 * systemd unit (through the launcher) and `deno task run`; nothing that spawns, writes or loads native code; the
 * launcher's shell rule for the files named at run time agrees with the TypeScript one.
 */
import assert from "node:assert/strict";
import {
  ENVIRONMENT_VARIABLES,
  launcherReadRule,
  namedFileDirectories,
  PERMISSION_FLAGS,
  permissionFlagsFor,
} from "../lib/runtime_permissions.ts";
import { OPTIONS } from "../lib/config/options.ts";
import { ENTRYPOINT } from "../scripts/image/ccm_image.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const MAIN = `${ROOT}main.ts`;
const FORBIDDEN = /^(-A|--allow-all|--allow-run|--allow-write|--allow-ffi|--allow-import)(=|$)/;

/** The permission flags in a list of `deno run` arguments (those starting with --allow-). */
function permissionsIn(args: readonly string[]): string[] {
  return args.filter((a) => /^--allow-|^-A$/.test(a));
}

Deno.test("the image, the Containerfile, deno task run and the release launcher use the one permission list", async () => {
  for (const flag of PERMISSION_FLAGS) assert.doesNotMatch(flag, FORBIDDEN);
  assert.deepEqual(permissionsIn(ENTRYPOINT), [...PERMISSION_FLAGS], "the image's entrypoint");

  const containerfile = await Deno.readTextFile(`${ROOT}Containerfile`);
  const entrypoint = /^ENTRYPOINT (.*)$/m.exec(containerfile)?.[1];
  assert.ok(entrypoint, "the Containerfile has an ENTRYPOINT");
  assert.deepEqual(permissionsIn(JSON.parse(entrypoint)), [...PERMISSION_FLAGS], "the Containerfile's entrypoint");

  const tasks = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks as Record<string, string>;
  assert.deepEqual(permissionsIn(tasks.run.split(/\s+/)), [...PERMISSION_FLAGS], "deno task run");

  // The launcher's flags come from the module at build time (tests/release_permissions_test.ts checks the result).
  const build = await Deno.readTextFile(`${ROOT}scripts/build.sh`);
  assert.match(build, /ccm_permissions="\$\(deno eval "\$permissions_module console\.log\(p\.PERMISSION_FLAGS/);
  assert.match(build, /^ccm_flags="\$ccm_permissions /m, "the launcher's and deno compile's flags start with them");
  assert.doesNotMatch(build.split("\n").filter((l) => l.startsWith("ccm_flags=")).join(""), /--allow-all/);

  // The systemd unit runs the release launcher, so it has the launcher's permissions.
  const unit = await Deno.readTextFile(`${ROOT}deploy/systemd/ankra-cloud-ccm.service`);
  assert.match(unit, /^ExecStart=\/opt\/ankra-cloud-ccm\/bin\/ankra-cloud-ccm /m);
});

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
