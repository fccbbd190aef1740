/**
 * Builds (or finds cached) everything the test suite runs besides this checkout, before any test's clock starts: the
 * test binaries of the current and the oldest Kubernetes, the test registry, and — where this machine runs the real
 * tiers (root, overlayfs, runc, …) — the node binaries, the e2e binaries and the systemd root. Each part says when it
 * starts, the build scripts say what they build and how long it has taken so far, and each part ends with its time; a
 * part that fails stops the preparation with its own error. On a warm machine every part is a cache hit (seconds).
 *
 *     deno run --allow-all scripts/prepare_tests.ts
 *
 * `scripts/run_tests.ts` runs it first when it runs the whole suite.
 *
 * @module
 */
import { kubernetesVersions } from "../tests/support/control_plane/versions.ts";
import { readHostFacts, realNodeBlockers } from "../tests/support/real_node/real_node_host.ts";
import { readClusterFacts, realClusterBlockers } from "../tests/support/real_cluster/real_cluster_host.ts";
import { nspawnUnavailable } from "../tests/support/systemd/nspawn_machine.ts";

/** One part of the preparation: a build script, its environment, and why it may not be needed here. */
interface Part {
  /** What it is, for the progress lines. */
  what: string;
  /** The script under scripts/. */
  script: string;
  /** Extra environment. */
  env?: Record<string, string>;
  /** Why this machine does not need it (the tests that would use it are ignored here), or undefined. */
  unneeded?: string;
}

/** The parts, in the order the suite first needs them. */
async function parts(): Promise<Part[]> {
  const versions = await kubernetesVersions();
  const host = readHostFacts();
  const nodeBlockers = realNodeBlockers(host);
  const clusterBlockers = realClusterBlockers(await readClusterFacts(host));
  const nspawn = nspawnUnavailable();
  return [
    { what: `kube-apiserver, kubectl ${versions.current}, etcd, helm`, script: "test_binaries.sh" },
    {
      what: `kube-apiserver, kubectl ${versions.oldest} (the old-version tier)`,
      script: "test_binaries.sh",
      env: { K8S_VERSION: versions.oldest },
    },
    { what: "the test registry (image and chart tests)", script: "image_tools.sh" },
    {
      what: `kubelet, kube-proxy, kube-controller-manager, kube-scheduler ${versions.current}, containerd, pause`,
      script: "node_binaries.sh",
      unneeded: nodeBlockers.length > 0 && clusterBlockers.length > 0 ? nodeBlockers.join("; ") : undefined,
    },
    {
      what: `e2e.test, agnhost and CoreDNS (the real cluster)`,
      script: "e2e_binaries.sh",
      unneeded: clusterBlockers.length > 0 ? clusterBlockers.join("; ") : undefined,
    },
    { what: "the Debian root the systemd unit boots in", script: "systemd_rootfs.sh", unneeded: nspawn },
  ];
}

/** Runs every needed part in turn; throws naming the part that failed. Returns the seconds each took. */
export async function prepareTests(): Promise<{ what: string; seconds: number }[]> {
  const all = await parts();
  const times: { what: string; seconds: number }[] = [];
  for (const [i, part] of all.entries()) {
    const step = `prepare (${i + 1} of ${all.length})`;
    if (part.unneeded) {
      console.error(`${step}: ${part.what}: not needed here (${part.unneeded})`);
      continue;
    }
    console.error(`${step}: ${part.what}`);
    const started = performance.now();
    const done = await new Deno.Command("bash", {
      args: [new URL(`./${part.script}`, import.meta.url).pathname],
      env: part.env,
      stdin: "null",
      stdout: "null",
      stderr: "inherit",
    }).output();
    const seconds = (performance.now() - started) / 1000;
    if (!done.success) {
      throw new Error(`${step}: scripts/${part.script} failed after ${seconds.toFixed(0)} s: see the lines above`);
    }
    console.error(`${step}: ${part.what}: ready in ${seconds.toFixed(0)} s`);
    times.push({ what: part.what, seconds });
  }
  return times;
}

if (import.meta.main) {
  try {
    const times = await prepareTests();
    console.error(`prepared in ${times.reduce((sum, t) => sum + t.seconds, 0).toFixed(0)} s`);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    Deno.exit(1);
  }
}
