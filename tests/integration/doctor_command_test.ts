/**
 * `ankra-cloud-ccm doctor` as a user runs it: `main.ts` as a subprocess with the release launcher's permissions,
 * against the real kube-apiserver and the Ankra Cloud simulator served over TLS. The JSON output has the documented
 * shape, the checklist shows the fix, the exit code says whether the setup is ready, and the token is printed nowhere.
 *
 * Every test starts from a cluster without Nodes and without the Leases the doctor reads (test files run one after
 * another, so this touches no other test's objects).
 */
import assert from "node:assert/strict";
import { testControlPlane } from "../support/control_plane/control_plane.ts";
import { runMain } from "../support/doctor/doctor_command.ts";
import { cloudEnv, healthyWorld, onCleanCluster, startCloud } from "../support/doctor/doctor_world.ts";
import { READ_ONLY_TOKEN, TEST_TOKEN } from "../support/cloud/simulator.ts";

Deno.test(
  "main.ts doctor --kubeconfig --output=json: the documented shape, exit 0, the token nowhere",
  onCleanCluster(async () => {
    await using cloud = await startCloud();
    await healthyWorld(cloud);
    const result = await runMain(
      ["doctor", `--kubeconfig=${testControlPlane().kubeconfigPath}`, "--output=json"],
      cloudEnv(cloud),
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const document = JSON.parse(result.stdout);
    assert.deepEqual(Object.keys(document), ["version", "ok", "findings"]);
    assert.match(document.version, /^v\d+\.\d+\.\d+/);
    assert.equal(document.ok, true);
    assert.equal(document.findings.length, 23);
    for (const finding of document.findings) {
      assert.deepEqual(Object.keys(finding), ["id", "title", "status", "result"]);
      // Node-address mode is not in use here, nor --node-labels-from-server: their three checks are skipped, saying so.
      const expected = ["node-addresses", "node-address-ports", "server-labels"].includes(finding.id) ? "skip" : "pass";
      assert.equal(finding.status, expected, `${finding.id}: ${finding.result}`);
    }
    assert.ok(!result.stdout.includes(TEST_TOKEN) && !result.stderr.includes(TEST_TOKEN));
    assert.equal(result.stderr, "");
  }),
);

Deno.test(
  "main.ts doctor with a read-only token prints the checklist with the fix and exits 1",
  onCleanCluster(async () => {
    await using cloud = await startCloud();
    await healthyWorld(cloud);
    const result = await runMain(
      ["doctor", `--kubeconfig=${testControlPlane().kubeconfigPath}`],
      cloudEnv(cloud, { ANKRA_CLOUD_TOKEN: READ_ONLY_TOKEN }),
    );
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /^ankra-cloud-ccm v[\d.]+ doctor: /);
    assert.match(result.stdout, /\n✗ API token may make changes \(operate\): the token may not make changes/);
    assert.match(result.stdout, /\n {4}create an API token with operate permission/);
    assert.match(result.stdout, /\n✓ RBAC permissions of the controller: /);
    assert.match(result.stdout, /18 passed, 1 failed, 0 warnings, 4 skipped: fix the failures above/);
    assert.ok(!result.stdout.includes(READ_ONLY_TOKEN) && !result.stderr.includes(READ_ONLY_TOKEN));
  }),
);
