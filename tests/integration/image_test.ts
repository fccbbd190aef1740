/**
 * The container image, built without a container engine (scripts/image/build_image.ts): reproducible to the
 * digest, what the Containerfile describes, pushable to and pullable from an OCI registry, and working — the amd64
 * image in an OCI runtime (runc/crun, or a chroot fallback) with a read-only root as uid 65532 against the test
 * control plane and the simulator, the arm64 image's `--version` under qemu-aarch64.
 *
 * Needs: skopeo, umoci, runc (or crun), qemu-user, dpkg-deb/apt-get, GNU tar, gzip, curl (`.ci/run` installs them), Go for the registry
 * (scripts/image_tools.sh), root.
 */
import assert from "node:assert/strict";
import { VERSION } from "../../lib/version.ts";
import {
  DENO_DIR,
  DENO_PATH,
  ENTRYPOINT,
  ENV,
  EXPOSED_PORT,
  INSTALL_DIR,
  USER,
} from "../../scripts/image/ccm_image.ts";
import { findReference, readJsonBlob } from "../../scripts/image/oci_layout.ts";
import { type ImageConfig, unpackImage } from "../../scripts/image/unpack_image.ts";
import { freePort, kubeconfigText, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { pickRuntime, runInImage, startInImage } from "../support/image/image_runtime.ts";
import { kubeletNode, kubeOk, kubeRequest } from "../support/http/kube_http.ts";
import { eventually } from "../support/controller/node_controllers.ts";
import { startRegistry } from "../support/image/registry.ts";
import { serverSeed, startTestCloud, TEST_TOKEN, testSeed } from "../support/cloud/simulator.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const decoder = new TextDecoder();

/** Tools the test runs, with the Debian package that has each. */
const TOOLS: [tool: string, debianPackage: string][] = [
  ["skopeo", "skopeo"],
  ["umoci", "umoci"],
  ["qemu-aarch64", "qemu-user"],
  ["dpkg-deb", "dpkg"],
  ["apt-get", "apt"],
  ["curl", "curl"],
  ["setpriv", "util-linux"],
  ["unshare", "util-linux"],
  ["gzip", "gzip"],
  ["tar", "tar"],
];

function onPath(tool: string): boolean {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (dir && Deno.statSync(`${dir}/${tool}`).isFile) return true;
    } catch { /* not here */ }
  }
  return false;
}

function requireTools(): void {
  const missing = TOOLS.filter(([tool]) => !onPath(tool));
  if (!onPath("runc") && !onPath("crun")) missing.push(["runc", "runc"]);
  if (missing.length > 0) {
    throw new Error(
      `missing ${missing.map(([tool]) => tool).join(", ")}: install them with ` +
        `\`apt-get install -y ${[...new Set(missing.map(([, pkg]) => pkg))].join(" ")}\` (bash .ci/run does)`,
    );
  }
  if (Deno.uid() !== 0) throw new Error("the image test unpacks and runs images as root: run it as root (as CI does)");
}

async function run(command: string, args: string[]): Promise<string> {
  const output = await new Deno.Command(command, { args, cwd: ROOT, stdout: "piped", stderr: "piped" }).output();
  const text = decoder.decode(output.stdout) + decoder.decode(output.stderr);
  if (!output.success) throw new Error(`${command} ${args.join(" ")} failed (${output.code}):\n${text}`);
  return decoder.decode(output.stdout);
}

async function timed<T>(what: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  console.log(`${what}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

interface BuildSummary {
  index: { digest: string };
  platforms: {
    architecture: string;
    compressedSize: number;
    uncompressedSize: number;
    debianPackages: { name: string; version: string }[];
  }[];
  sbom: string;
}

function buildImage(dist: string, out: string): Promise<BuildSummary> {
  return run(Deno.execPath(), [
    "run",
    "--allow-all",
    "scripts/image/build_image.ts",
    `--dist=${dist}`,
    `--out=${out}`,
    "--json",
  ]).then((text) => JSON.parse(text) as BuildSummary);
}

function mebibytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The final stage of the Containerfile: instruction → arguments (continuation lines joined). */
function containerfileFinalStage(text: string): { instruction: string; value: string }[] {
  const joined = text.replace(/\\\n/g, " ").split("\n").filter((line) => line.trim() && !line.startsWith("#"));
  const lastFrom = joined.findLastIndex((line) => /^FROM\s/i.test(line));
  return joined.slice(lastFrom).map((line) => {
    const [instruction, ...rest] = line.trim().split(/\s+/);
    return { instruction: instruction.toUpperCase(), value: rest.join(" ") };
  });
}

Deno.test("the image builds reproducibly, travels through a registry and runs the controller read-only as nonroot", async (t) => {
  requireTools();
  const dir = await Deno.makeTempDir({ prefix: "ccm-image-test-" });
  await Deno.chmod(dir, 0o755); // uid 65532 runs the arm64 image from here under qemu
  try {
    await timed(
      "release build (scripts/build.sh --no-compile)",
      () => run("bash", ["scripts/build.sh", "--no-compile", "--out", `${dir}/dist`]),
    );
    const first = await timed("image build 1", () => buildImage(`${dir}/dist`, `${dir}/image-1`));
    const second = await timed("image build 2", () => buildImage(`${dir}/dist`, `${dir}/image-2`));

    await t.step("two builds give the same image index digest", () => {
      assert.equal(second.index.digest, first.index.digest);
      console.log(`image index: ${first.index.digest}`);
      for (const p of first.platforms) {
        console.log(
          `linux/${p.architecture}: ${mebibytes(p.compressedSize)} compressed, ` +
            `${mebibytes(p.uncompressedSize)} uncompressed`,
        );
      }
      assert.deepEqual(first.platforms.map((p) => p.architecture), ["amd64", "arm64"]);
    });

    await t.step(
      "beside the layout, an SBOM names the index, each platform's Debian packages and the runtime",
      async () => {
        const sbom = JSON.parse(await Deno.readTextFile(first.sbom)) as {
          spdxVersion: string;
          packages: {
            name: string;
            versionInfo: string;
            primaryPackagePurpose: string;
            checksums?: { checksumValue: string }[];
          }[];
        };
        assert.equal(first.sbom, `${dir}/ankra-cloud-ccm-${VERSION}-image.spdx.json`);
        assert.equal(sbom.spdxVersion, "SPDX-2.3");
        const index = sbom.packages.find((p) =>
          p.name === "ankra-cloud-ccm" && p.checksums?.[0].checksumValue.length === 64
        );
        assert.equal(`sha256:${index?.checksums?.[0].checksumValue}`, first.index.digest);
        for (const platform of first.platforms) {
          for (const deb of platform.debianPackages) {
            assert.ok(sbom.packages.some((p) => p.name === deb.name && p.versionInfo === deb.version), deb.name);
          }
        }
        for (const runtime of ["@deno/linux-x64-glibc", "@deno/linux-arm64-glibc"]) {
          assert.ok(sbom.packages.some((p) => p.name === runtime), runtime);
        }
      },
    );

    const layout = `${dir}/image-1`;
    const indexDescriptor = await findReference(layout, VERSION);
    const index = await readJsonBlob<{ manifests: { digest: string; platform: { architecture: string } }[] }>(
      layout,
      indexDescriptor.digest,
    );

    await t.step("each platform's config has the entrypoint, env, user, port and OCI labels", async () => {
      for (const entry of index.manifests) {
        const manifest = await readJsonBlob<{ config: { digest: string } }>(layout, entry.digest);
        const config = await readJsonBlob<ImageConfig & { created: string }>(layout, manifest.config.digest);
        assert.equal(config.architecture, entry.platform.architecture);
        assert.deepEqual(config.config.Entrypoint, ENTRYPOINT);
        assert.deepEqual(config.config.Env, ENV);
        assert.equal(config.config.User, "65532:65532");
        assert.equal(config.config.WorkingDir, "/");
        assert.deepEqual(Object.keys(config.config.ExposedPorts ?? {}), ["10258/tcp"]);
        const labels = config.config.Labels ?? {};
        for (const key of ["title", "version", "revision", "source", "licenses", "created", "description"]) {
          assert.ok(labels[`org.opencontainers.image.${key}`], `label org.opencontainers.image.${key}`);
        }
        assert.equal(labels["org.opencontainers.image.version"], VERSION);
        assert.equal(labels["org.opencontainers.image.created"], config.created);
        assert.match(labels["cloud.ankra.image.debian-packages"], /(^| )libc6=\S+/);
      }
    });

    await t.step("the Containerfile describes the same entrypoint, env, user, working directory and port", async () => {
      const containerfile = await Deno.readTextFile(`${ROOT}/Containerfile`);
      assert.ok(!containerfile.includes(VERSION), "the Containerfile takes the version as a build argument");
      const manifest = await readJsonBlob<{ config: { digest: string } }>(layout, index.manifests[0].digest);
      const config = await readJsonBlob<ImageConfig>(layout, manifest.config.digest);
      const denoVersion = containerfile.match(/^ARG DENO_VERSION=(\S+)$/m)?.[1];
      assert.equal(denoVersion, config.config.Labels?.["cloud.ankra.image.deno-version"], "the same Deno runtime");
      const stage = containerfileFinalStage(containerfile);
      const one = (instruction: string) => stage.filter((s) => s.instruction === instruction).map((s) => s.value);
      assert.deepEqual(JSON.parse(one("ENTRYPOINT")[0]), ENTRYPOINT);
      assert.deepEqual(one("USER"), [USER]);
      assert.deepEqual(one("WORKDIR"), ["/"]);
      assert.deepEqual(one("EXPOSE"), [EXPOSED_PORT]);
      // PATH and SSL_CERT_FILE come from the distroless base there; the rest is set in the Containerfile.
      const containerfileEnv = one("ENV").join(" ").split(/\s+/).filter(Boolean);
      const ownEnv = ENV.filter((e) => !/^(PATH|SSL_CERT_FILE)=/.test(e));
      assert.deepEqual([...containerfileEnv].sort(), [...ownEnv].sort());
      const copies = one("COPY").map((value) => value.split(/\s+/).pop());
      assert.ok(copies.every((target) => target?.startsWith(INSTALL_DIR)), `COPY targets: ${copies.join(", ")}`);
    });

    await using registry = await timed("registry start (scripts/image_tools.sh + serve)", () => startRegistry());
    const reference = `${registry.url}/ankra-cloud-ccm:${VERSION}`;
    const pulled = `${dir}/pulled`;

    await t.step("the index pushed to a registry and pulled back by tag keeps its digest", async () => {
      await timed("skopeo push", () =>
        run("skopeo", [
          "copy",
          "--all",
          "--preserve-digests",
          "--dest-tls-verify=false",
          `oci:${layout}:${VERSION}`,
          `docker://${reference}`,
        ]));
      const inspected = JSON.parse(
        await run("skopeo", ["inspect", "--raw", "--tls-verify=false", `docker://${reference}`]),
      );
      assert.equal(inspected.mediaType, "application/vnd.oci.image.index.v1+json");
      assert.equal(inspected.manifests.length, 2);
      await timed("skopeo pull", () =>
        run("skopeo", [
          "copy",
          "--all",
          "--preserve-digests",
          "--src-tls-verify=false",
          `docker://${reference}`,
          `oci:${pulled}:${VERSION}`,
        ]));
      assert.equal((await findReference(pulled, VERSION)).digest, first.index.digest);
    });

    await t.step("helm pushes a chart to the test registry over plain HTTP", async () => {
      const assets = Deno.env.get("KUBEBUILDER_ASSETS");
      const helm = assets ? `${assets}/helm` : "helm";
      const chart = `${dir}/chart/registry-probe`;
      await Deno.mkdir(chart, { recursive: true });
      await Deno.writeTextFile(`${chart}/Chart.yaml`, "apiVersion: v2\nname: registry-probe\nversion: 0.1.0\n");
      await run(helm, ["package", chart, "--destination", `${dir}/chart`]);
      const push = await run(helm, [
        "push",
        `${dir}/chart/registry-probe-0.1.0.tgz`,
        `oci://${registry.url}/charts`,
        "--plain-http",
      ]);
      assert.match(push, /registry-probe/);
      const shown = await run(helm, [
        "show",
        "chart",
        `oci://${registry.url}/charts/registry-probe`,
        "--version",
        "0.1.0",
        "--plain-http",
      ]);
      assert.match(shown, /name: registry-probe/);
    });

    const bundle = `${dir}/bundle-amd64`;
    const amd64 = await timed(
      "unpack amd64",
      () => unpackImage(pulled, bundle, { ref: VERSION, architecture: "amd64" }),
    );
    const runtime = await timed("runtime probe", () => pickRuntime(bundle, amd64.config, `ankra-cloud-ccm ${VERSION}`));
    console.log(
      `image runtime: ${runtime.kind}` + (runtime.notes.length ? ` (not used: ${runtime.notes.join("; ")})` : ""),
    );

    await t.step("the amd64 image prints its version in an OCI runtime, read-only, as 65532", async () => {
      const result = await runInImage(runtime.kind, bundle, amd64.config, { args: ["--version"] });
      assert.equal(result.code, 0, result.output);
      assert.equal(result.output, `ankra-cloud-ccm ${VERSION}\n`);
      assert.equal(await Deno.stat(`${amd64.rootfs}${DENO_DIR}`).then((s) => s.mode! & 0o777), 0o555);
      const probe = await runInImage(runtime.kind, bundle, amd64.config, {
        entrypoint: [DENO_PATH, "eval", "--no-config"],
        args: [
          `console.log(Deno.uid(), Deno.gid(), Deno.cwd());
           for (const path of ["/probe", "/tmp/probe", "${DENO_DIR}/probe", "/home/nonroot/probe"]) {
             try { Deno.writeTextFileSync(path, "x"); console.log("wrote " + path); } catch { console.log("refused " + path); }
           }`,
        ],
      });
      assert.equal(probe.code, 0, probe.output);
      assert.equal(
        probe.output,
        `65532 65532 /\nrefused /probe\nrefused /tmp/probe\nrefused ${DENO_DIR}/probe\nrefused /home/nonroot/probe\n`,
        "runs as 65532:65532 in / and can write nowhere in the image",
      );
      const bundleText = await Deno.readTextFile(`${amd64.rootfs}/etc/ssl/certs/ca-certificates.crt`);
      assert.ok((bundleText.match(/BEGIN CERTIFICATE/g) ?? []).length > 100, "the CA bundle holds the Mozilla roots");
    });

    await t.step("the amd64 image initialises a Node against the test control plane and the simulator", async () => {
      const plane = testControlPlane();
      await using cloud = await startTestCloud(testSeed());
      const secrets = `${dir}/secrets`;
      await Deno.mkdir(secrets);
      await Deno.writeTextFile(`${secrets}/kubeconfig`, kubeconfigText(plane.url, plane.caCert, plane.token));
      await Deno.writeTextFile(`${secrets}/token`, TEST_TOKEN);
      for (const file of ["kubeconfig", "token"]) await Deno.chmod(`${secrets}/${file}`, 0o444);
      const node = uniqueName("image-node");
      cloud.simulator.sim.world.addServer(
        serverSeed({ hostname: node, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }),
      );
      const port = freePort();
      const controller = await startInImage(runtime.kind, bundle, amd64.config, {
        args: [
          "--kubeconfig=/etc/ankra-cloud-ccm/kubeconfig",
          "--cluster-name=image",
          "--leader-elect=false",
          `--secure-port=${port}`,
          "--bind-address=127.0.0.1",
          "--server-list-period=2s",
        ],
        env: {
          ANKRA_CLOUD_TOKEN_FILE: "/etc/ankra-cloud-ccm/token",
          ANKRA_CLOUD_API_URL: cloud.simulator.url,
          ANKRA_CLOUD_NETWORK_ID: "net-1",
        },
        mounts: [
          { source: `${secrets}/kubeconfig`, destination: "/etc/ankra-cloud-ccm/kubeconfig" },
          { source: `${secrets}/token`, destination: "/etc/ankra-cloud-ccm/token" },
        ],
      });
      let exited: number | undefined;
      controller.status.then((code) => (exited = code));
      try {
        await kubeOk(plane, "POST", "/api/v1/nodes", { body: kubeletNode(node) });
        await timed("node initialised by the image", () =>
          eventually(
            async () => {
              if (exited !== undefined) throw new Error(`the controller exited (${exited}):\n${controller.output()}`);
              const n = await kubeOk<{ spec: { providerID?: string } }>(plane, "GET", `/api/v1/nodes/${node}`);
              return Boolean(n.spec.providerID);
            },
            30_000,
            "spec.providerID set by the controller in the image",
          ));
        const health = await run("curl", ["-ksS", "--max-time", "5", `https://127.0.0.1:${port}/healthz`]);
        assert.equal(health, "ok");
      } catch (error) {
        console.log(`controller output:\n${controller.output()}`);
        throw error;
      } finally {
        await controller.stop();
        await kubeRequest(plane, "DELETE", `/api/v1/nodes/${node}`);
      }
      const output = controller.output();
      assert.match(output, new RegExp(node), "the controller in the image logged the node it initialised");
      assert.ok(!output.includes(TEST_TOKEN), "the token is never logged");
      assert.ok(!/read-only file system|EROFS|permission denied/i.test(output), `no write attempts:\n${output}`);
    });

    await t.step("the arm64 image prints its version under qemu-aarch64", async () => {
      const arm64 = await unpackImage(pulled, `${dir}/bundle-arm64`, { ref: VERSION, architecture: "arm64" });
      const env = arm64.config.config.Env ?? [];
      const [deno, ...args] = arm64.config.config.Entrypoint ?? [];
      // -L: the arm64 loader and libraries come from the image, so the host needs no arm64 libc.
      const output = await timed("arm64 --version under qemu", () =>
        run("env", [
          "-i",
          ...env,
          "setpriv",
          "--reuid=65532",
          "--regid=65532",
          "--clear-groups",
          "qemu-aarch64",
          "-L",
          arm64.rootfs,
          `${arm64.rootfs}${deno}`,
          ...args,
          "--version",
        ]));
      assert.equal(output, `ankra-cloud-ccm ${VERSION}\n`);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
