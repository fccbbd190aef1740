/**
 * The systemd install of `deploy/systemd/` as the guide sets it up on a host, for the systemd tests: where its files
 * are, `write-kubeconfig.sh` run against the test control plane, `/etc/ankra-cloud-ccm` made as the guide makes it,
 * and the cluster-wide objects the script creates removed again afterwards.
 *
 * @module
 */
import assert from "node:assert/strict";
import { runCommand } from "./command_output.ts";
import { testControlPlane } from "../control_plane/control_plane.ts";
import { toolPath } from "../chart/helm.ts";
import { kubeRequest } from "../http/kube_http.ts";
import { TEST_TOKEN } from "../cloud/simulator.ts";

/** The repository's root directory (no trailing slash). */
export const ROOT = new URL("../../..", import.meta.url).pathname.replace(/\/$/, "");
const SYSTEMD_DIR = `${ROOT}/deploy/systemd`;
/** The shipped unit file. */
export const UNIT = `${SYSTEMD_DIR}/ankra-cloud-ccm.service`;
/** The shipped environment file (installed as `/etc/ankra-cloud-ccm/ankra-cloud-ccm.env`). */
export const ENV_FILE = `${SYSTEMD_DIR}/ankra-cloud-ccm.env`;
const SCRIPT = `${SYSTEMD_DIR}/write-kubeconfig.sh`;
/** The shipped ServiceAccount, roles and bindings, which `write-kubeconfig.sh` applies. */
export const RBAC = `${SYSTEMD_DIR}/rbac.yaml`;
/** The program the launcher runs, run from source by the tests in the launcher's place. */
export const MAIN = `${ROOT}/main.ts`;
/** Where the unit expects the release tarball's launcher. */
export const LAUNCHER = "/opt/ankra-cloud-ccm/bin/ankra-cloud-ccm";

/** The path of `systemd-analyze` (Debian's systemd package); throws saying what to install when it is missing. */
export function systemdAnalyze(): string {
  for (const path of ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"]) {
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch { /* next */ }
  }
  throw new Error("systemd-analyze not found: install Debian's systemd package (apt-get install systemd)");
}

/**
 * Runs deploy/systemd/write-kubeconfig.sh against the test control plane with the test's kubectl, writing `output`
 * with the script's flags `extra`; resolves with how it ended (never throws on a failure of the script).
 */
export function writeKubeconfig(output: string, extra: string[]) {
  const plane = testControlPlane();
  return runCommand("sh", [SCRIPT, `--admin-kubeconfig=${plane.kubeconfigPath}`, `--output=${output}`, ...extra], {
    env: { KUBECTL: toolPath("kubectl") },
  });
}

/** Removes what write-kubeconfig.sh created, so other tests (the chart's) can own the same cluster-wide names. */
export async function removeSystemdRbac(): Promise<void> {
  const plane = testControlPlane();
  await runCommand(toolPath("kubectl"), [
    `--kubeconfig=${plane.kubeconfigPath}`,
    "delete",
    "--ignore-not-found",
    "--wait=false",
    "-f",
    RBAC,
  ]);
  await kubeRequest(plane, "DELETE", "/api/v1/namespaces/kube-system/secrets/ankra-cloud-ccm-token");
}

/** `/etc/ankra-cloud-ccm` as the guide makes it: the API token and a least-privilege kubeconfig, root-only. */
export async function prepareEtc(dir: string): Promise<string> {
  const etc = `${dir}/etc`;
  await Deno.mkdir(etc, { mode: 0o700 });
  await Deno.writeTextFile(`${etc}/token`, `${TEST_TOKEN}\n`, { mode: 0o600 });
  const written = await writeKubeconfig(`${etc}/kubeconfig`, ["--token-source=request", "--duration=1h"]);
  assert.equal(written.code, 0, written.stderr);
  return etc;
}
