/**
 * Runs an unpacked image (an OCI runtime bundle from `scripts/image/unpack_image.ts`) for tests, without a
 * container engine: with `runc` or `crun` when the machine lets them make their namespaces and cgroups, else with
 * the fallback of `chroot` into the root file system — bound read-only in a private mount namespace when `unshare`
 * and `mount` work — as the image's user.
 *
 * `IMAGE_TEST_RUNTIME=runc|crun|chroot` forces one.
 *
 * @module
 */
import { type BindMount, type ImageConfig, numericUser, runtimeSpec } from "../../../scripts/image/unpack_image.ts";

/** How a bundle is run. */
export type RuntimeKind = "runc" | "crun" | "chroot";

/** A way to run a bundle, found by {@linkcode pickRuntime}. */
export interface ImageRuntime {
  /** Which runtime. */
  kind: RuntimeKind;
  /** Why the ones before it were not used, for the test's log. */
  notes: string[];
}

/** What to run in the image. */
export interface RunOptions {
  /** Arguments after the entrypoint. */
  args: string[];
  /** Instead of the image's entrypoint (e.g. the Deno runtime with `eval`, to look around inside). */
  entrypoint?: string[];
  /** Variables added to the image's environment. */
  env?: Record<string, string>;
  /** Host files bound read-only into the container. */
  mounts?: BindMount[];
}

/** A running container. */
export interface RunningContainer {
  /** Resolves when the process has ended, with its exit code. */
  status: Promise<number>;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Stops it (SIGKILL) and cleans up the runtime's state. */
  stop(): Promise<void>;
}

const decoder = new TextDecoder();

async function exec(command: string, args: string[]): Promise<{ code: number; text: string }> {
  try {
    const output = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
    return { code: output.code, text: decoder.decode(output.stdout) + decoder.decode(output.stderr) };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { code: 127, text: `${command}: not installed` };
    throw error;
  }
}

function containerId(): string {
  return `ccm-test-${crypto.getRandomValues(new Uint32Array(1))[0].toString(36)}`;
}

/**
 * Starts `options.args` in the bundle with `kind`. For runc/crun the bundle's `config.json` is (re)written from
 * `image`; for chroot the same user, environment, working directory and read-only mounts are applied by hand.
 */
export async function startInImage(
  kind: RuntimeKind,
  bundle: string,
  image: ImageConfig,
  options: RunOptions,
): Promise<RunningContainer> {
  let command: string[];
  let cleanup: () => Promise<void>;
  const id = containerId();
  if (kind === "chroot") {
    command = await chrootCommand(bundle, image, options);
    cleanup = async () => {};
  } else {
    await Deno.writeTextFile(`${bundle}/config.json`, JSON.stringify(runtimeSpec(image, options), null, 2));
    const state = `${bundle}.state`;
    await Deno.mkdir(state, { recursive: true });
    command = [kind, "--root", state, "run", "--bundle", bundle, id];
    cleanup = async () => {
      await exec(kind, ["--root", state, "kill", id, "KILL"]);
      await exec(kind, ["--root", state, "delete", "--force", id]);
    };
  }
  const child = new Deno.Command(command[0], {
    args: command.slice(1),
    cwd: bundle,
    clearEnv: kind === "chroot",
    env: kind === "chroot" ? imageEnv(image, options) : undefined,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) text += chunk;
  };
  const collected = Promise.all([collect(child.stdout), collect(child.stderr)]);
  const status = child.status.then(async (s) => {
    await collected;
    return s.code;
  });
  let stopped = false;
  return {
    status,
    output: () => text,
    async stop() {
      if (stopped) return;
      stopped = true;
      await cleanup();
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await status;
    },
  };
}

/** Runs to completion and returns the exit code and output. */
export async function runInImage(
  kind: RuntimeKind,
  bundle: string,
  image: ImageConfig,
  options: RunOptions,
): Promise<{ code: number; output: string }> {
  const container = await startInImage(kind, bundle, image, options);
  const code = await container.status;
  await container.stop();
  return { code, output: container.output() };
}

function imageEnv(image: ImageConfig, options: RunOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of image.config.Env ?? []) {
    const equals = entry.indexOf("=");
    env[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  return { ...env, ...options.env };
}

/** Whether `unshare --mount` plus a read-only bind mount work here (the chroot fallback's read-only root). */
async function canBindReadOnly(): Promise<boolean> {
  const probe = await exec("unshare", [
    "--mount",
    "--propagation",
    "private",
    "sh",
    "-c",
    'd="$(mktemp -d)" && mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" && ! touch "$d/x" 2>/dev/null; r=$?; umount "$d"; rmdir "$d"; exit $r',
  ]);
  return probe.code === 0;
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'"'"'`)}'`;
}

/**
 * The chroot fallback's command line: in a private mount namespace, the root file system bound read-only onto
 * itself with /proc, /dev and the mounts inside it, then `chroot --userspec=<image user>` into it and exec the
 * entrypoint. Without mount namespaces, a plain chroot on the (writable) unpacked root file system.
 */
async function chrootCommand(bundle: string, image: ImageConfig, options: RunOptions): Promise<string[]> {
  const rootfs = `${bundle}/rootfs`;
  const { uid, gid } = numericUser(image.config.User);
  const argv = [...(options.entrypoint ?? image.config.Entrypoint ?? []), ...options.args];
  const chroot = ["chroot", `--userspec=${uid}:${gid}`, `--groups=${gid}`, rootfs, ...argv].map(shellQuote).join(" ");
  const workdir = image.config.WorkingDir || "/";
  if (workdir !== "/") throw new Error(`the chroot fallback runs in / only; the image wants ${workdir}`);
  // Mount points must exist before the root becomes read-only.
  for (const dir of ["proc", "dev"]) await Deno.mkdir(`${rootfs}/${dir}`, { recursive: true });
  for (const mount of options.mounts ?? []) {
    const target = `${rootfs}${mount.destination}`;
    await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), { recursive: true });
    if ((await Deno.stat(mount.source)).isDirectory) await Deno.mkdir(target, { recursive: true });
    else await Deno.writeTextFile(target, "", { append: true });
  }
  if (!(await canBindReadOnly())) {
    console.log("image runtime: chroot fallback WITHOUT a read-only root (unshare/mount are not allowed here)");
    const binds = (options.mounts ?? []).map((m) => `cp ${shellQuote(m.source)} ${shellQuote(rootfs + m.destination)}`);
    return ["sh", "-c", [...binds, `exec ${chroot}`].join(" && ")];
  }
  const r = shellQuote(rootfs);
  const script = [
    `mount --bind ${r} ${r}`,
    `mount -t proc proc ${r}/proc`,
    `mount --rbind /dev ${r}/dev`,
    ...(options.mounts ?? []).flatMap((m) => {
      const target = shellQuote(rootfs + m.destination);
      return [`mount --bind ${shellQuote(m.source)} ${target}`, `mount -o remount,bind,ro ${target}`];
    }),
    `mount -o remount,bind,ro ${r}`,
    `exec ${chroot}`,
  ].join(" && ");
  return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script];
}

/**
 * Finds a runtime that runs the bundle's `--version`: runc, then crun, then the chroot fallback (or the one
 * `IMAGE_TEST_RUNTIME` names).
 *
 * @throws when none works, with each one's error.
 */
export async function pickRuntime(bundle: string, image: ImageConfig, expected: string): Promise<ImageRuntime> {
  const forced = Deno.env.get("IMAGE_TEST_RUNTIME") as RuntimeKind | undefined;
  const candidates: RuntimeKind[] = forced ? [forced] : ["runc", "crun", "chroot"];
  const notes: string[] = [];
  for (const kind of candidates) {
    const result = await runInImage(kind, bundle, image, { args: ["--version"] });
    if (result.code === 0 && result.output.includes(expected)) return { kind, notes };
    notes.push(`${kind}: exit ${result.code}: ${result.output.trim().split("\n").slice(-3).join(" | ")}`);
  }
  throw new Error(
    `no way to run the image here: ${notes.join("; ")} — install runc (apt-get install runc) or run as root`,
  );
}
