/**
 * Turns one platform of an image in an OCI layout into an OCI runtime bundle — `rootfs/` plus a `config.json` for
 * `runc`/`crun` — with skopeo (which picks the platform out of the index) and umoci (which checks every blob against
 * its digest and applies the layers in order, owners kept when run as root, whiteouts applied):
 *
 *     deno run -A scripts/image/unpack_image.ts --layout=dist/image --architecture=amd64 BUNDLE_DIR [-- ARGS…]
 *     runc run --bundle BUNDLE_DIR ccm
 *
 * @module
 */
import { type Descriptor, findReference, readJsonBlob } from "./oci_layout.ts";
import { runTool } from "./run_tool.ts";

/** The parts of an OCI image configuration a runtime bundle needs. */
export interface ImageConfig {
  /** Platform architecture. */
  architecture: string;
  /** Runtime configuration. */
  config: {
    User?: string;
    Env?: string[];
    Entrypoint?: string[];
    Cmd?: string[];
    WorkingDir?: string;
    ExposedPorts?: Record<string, unknown>;
    Labels?: Record<string, string>;
  };
  /** Layer diff IDs. */
  rootfs: { type: string; diff_ids: string[] };
}

/** An unpacked platform image. */
export interface UnpackedImage {
  /** The bundle directory. */
  bundle: string;
  /** `bundle/rootfs`. */
  rootfs: string;
  /** The image configuration. */
  config: ImageConfig;
  /** The platform manifest's descriptor. */
  manifest: Descriptor;
}

/** A read-only bind mount of a host file or directory into the container. */
export interface BindMount {
  /** Host path. */
  source: string;
  /** Path in the container. */
  destination: string;
}

/**
 * Unpacks the `architecture` image of the index tagged `ref` in `layout` into `bundle/rootfs` (`bundle` must not
 * exist yet). Without root, umoci unpacks rootless (every file then belongs to the caller).
 *
 * @throws when the layout lacks the tag or the platform, a blob's digest is wrong, or skopeo/umoci are missing.
 */
export async function unpackImage(
  layout: string,
  bundle: string,
  options: { ref: string; architecture: string },
): Promise<UnpackedImage> {
  const top = await findReference(layout, options.ref);
  let manifest = top;
  if (top.mediaType === "application/vnd.oci.image.index.v1+json") {
    const index = await readJsonBlob<{ manifests: Descriptor[] }>(layout, top.digest);
    const found = index.manifests.find((m) =>
      m.platform?.os === "linux" && m.platform.architecture === options.architecture
    );
    if (!found) throw new Error(`${layout} ${options.ref} has no linux/${options.architecture} image`);
    manifest = found;
  }
  const { config } = await readJsonBlob<{ config: Descriptor }>(layout, manifest.digest);
  const imageConfig = await readJsonBlob<ImageConfig>(layout, config.digest);
  // umoci unpacks a tag that names one manifest: skopeo copies this platform's out of the index, blobs unchanged.
  const single = await Deno.makeTempDir({ prefix: "ccm-unpack-" });
  try {
    await runTool("skopeo", [
      "copy",
      "--quiet",
      "--preserve-digests",
      "--override-os=linux",
      `--override-arch=${options.architecture}`,
      `oci:${layout}:${options.ref}`,
      `oci:${single}:${options.ref}`,
    ]);
    const picked = await findReference(single, options.ref);
    if (picked.digest !== manifest.digest) {
      throw new Error(
        `skopeo picked ${picked.digest} for linux/${options.architecture}, the index names ` +
          `${manifest.digest}: check the index's platforms`,
      );
    }
    await runTool("umoci", [
      "unpack",
      ...(Deno.uid() === 0 ? [] : ["--rootless"]),
      `--image=${single}:${options.ref}`,
      bundle,
    ]);
  } finally {
    await Deno.remove(single, { recursive: true });
  }
  // umoci makes the bundle 0700; the image's user reaches rootfs/ through it when run without a runtime (qemu -L).
  await Deno.chmod(bundle, 0o755);
  return { bundle, rootfs: `${bundle}/rootfs`, config: imageConfig, manifest };
}

/** `User` of an image configuration as numbers (`uid:gid`; these images use numeric users only). */
export function numericUser(user: string | undefined): { uid: number; gid: number } {
  const match = /^(\d+)(?::(\d+))?$/.exec(user ?? "0");
  if (!match) throw new Error(`image user ${user} is not numeric uid:gid: this runtime bundle cannot resolve names`);
  return { uid: Number(match[1]), gid: Number(match[2] ?? match[1]) };
}

/**
 * The OCI runtime `config.json` that runs the image as its configuration says (user, entrypoint, environment,
 * working directory) with a read-only root file system, in the host's network namespace (so 127.0.0.1 is the
 * host's), with `args` after the entrypoint (or after `entrypoint`, when given), `env` added and `mounts` bound
 * read-only.
 */
export function runtimeSpec(
  image: ImageConfig,
  options: {
    args?: string[];
    entrypoint?: string[];
    env?: Record<string, string>;
    mounts?: BindMount[];
    hostname?: string;
  } = {},
): Record<string, unknown> {
  const { uid, gid } = numericUser(image.config.User);
  const extraEnv = Object.entries(options.env ?? {}).map(([k, v]) => `${k}=${v}`);
  return {
    ociVersion: "1.0.2",
    process: {
      terminal: false,
      user: { uid, gid },
      args: [...(options.entrypoint ?? image.config.Entrypoint ?? []), ...(options.args ?? image.config.Cmd ?? [])],
      env: [...(image.config.Env ?? []), ...extraEnv],
      cwd: image.config.WorkingDir || "/",
      noNewPrivileges: true,
      capabilities: { bounding: [], effective: [], permitted: [], ambient: [] },
      rlimits: [{ type: "RLIMIT_NOFILE", hard: 4096, soft: 4096 }],
    },
    root: { path: "rootfs", readonly: true },
    hostname: options.hostname ?? "ankra-cloud-ccm",
    mounts: [
      { destination: "/proc", type: "proc", source: "proc" },
      {
        destination: "/dev",
        type: "tmpfs",
        source: "tmpfs",
        options: ["nosuid", "strictatime", "mode=755", "size=65536k"],
      },
      {
        destination: "/dev/pts",
        type: "devpts",
        source: "devpts",
        options: ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"],
      },
      {
        destination: "/dev/shm",
        type: "tmpfs",
        source: "shm",
        options: ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"],
      },
      { destination: "/sys", type: "bind", source: "/sys", options: ["rbind", "nosuid", "noexec", "nodev", "ro"] },
      ...(options.mounts ?? []).map((m) => ({
        destination: m.destination,
        type: "bind",
        source: m.source,
        options: ["rbind", "ro", "nosuid", "nodev"],
      })),
    ],
    linux: {
      // No network namespace: the container shares the host's, like `hostNetwork: true`.
      namespaces: [{ type: "pid" }, { type: "ipc" }, { type: "uts" }, { type: "mount" }],
      maskedPaths: ["/proc/kcore", "/proc/keys", "/proc/timer_list", "/sys/firmware"],
      readonlyPaths: ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"],
    },
  };
}

if (import.meta.main) {
  const separator = Deno.args.indexOf("--");
  const own = separator === -1 ? Deno.args : Deno.args.slice(0, separator);
  const args = separator === -1 ? undefined : Deno.args.slice(separator + 1);
  const value = (name: string) => own.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const bundle = own.find((a) => !a.startsWith("--"));
  if (!bundle) {
    console.error(
      "usage: unpack_image.ts --layout=dist/image [--ref=TAG] [--architecture=amd64] BUNDLE_DIR [-- ARGS…]",
    );
    Deno.exit(2);
  }
  const { VERSION } = await import("../../lib/version.ts");
  const unpacked = await unpackImage(value("layout") ?? "dist/image", bundle, {
    ref: value("ref") ?? VERSION,
    architecture: value("architecture") ?? "amd64",
  });
  await Deno.writeTextFile(`${bundle}/config.json`, JSON.stringify(runtimeSpec(unpacked.config, { args }), null, 2));
  console.log(`unpacked ${unpacked.manifest.digest} into ${bundle}: run it with \`runc run --bundle ${bundle} ccm\``);
}
