/**
 * The systemd unit in `deploy/systemd/` as files, checked as an operator would use them:
 *
 * - the unit passes `systemd-analyze verify` (Debian's systemd package) and `systemd-analyze security` rates it
 *   low exposure, with the settings the guide promises;
 * - `rbac.yaml` is exactly the Helm chart's ServiceAccount, ClusterRole and bindings (labels aside).
 *
 * The unit's command line running the controller is systemd_two_hosts_test.ts; the launcher's system calls,
 * systemd_syscalls_test.ts; the kubeconfig script, systemd_kubeconfig_test.ts.
 *
 * No systemd manager runs on this machine, so DynamicUser=, LoadCredential= and the sandboxing are exercised here by
 * their effects; tests/real/real_systemd_test.ts runs the unit under a real systemd in a container.
 */
import assert from "node:assert/strict";
import { loadAll } from "js-yaml";
import { runCommand } from "../support/systemd/command_output.ts";
import { toolPath } from "../support/chart/helm.ts";
import { LAUNCHER, RBAC, ROOT, systemdAnalyze, UNIT } from "../support/systemd/systemd_install.ts";
import { parseUnit } from "../support/systemd/systemd_unit_file.ts";

Deno.test("the unit passes systemd-analyze verify and is rated low exposure by systemd-analyze security", async () => {
  const analyze = systemdAnalyze();
  const unit = await Deno.readTextFile(UNIT);
  // As shipped, verify fails only because the launcher is not installed on this machine.
  const asShipped = await runCommand(analyze, ["verify", UNIT]);
  if (asShipped.code !== 0) {
    assert.match(asShipped.stderr, new RegExp(`${LAUNCHER} is not executable`), asShipped.stderr);
    const rest = asShipped.stderr.split("\n").filter((l) => l.trim() && !l.includes(LAUNCHER));
    assert.deepEqual(rest, [], "no other complaint about the unit as shipped");
  }
  // A copy whose ExecStart names an executable that exists must pass without a word.
  const dir = await Deno.makeTempDir({ prefix: "ccm-unit-" });
  try {
    const stub = `${dir}/ankra-cloud-ccm`;
    await Deno.writeTextFile(stub, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    const copy = `${dir}/ankra-cloud-ccm.service`;
    await Deno.writeTextFile(copy, unit.replaceAll(LAUNCHER, stub));
    const verified = await runCommand(analyze, ["verify", copy]);
    assert.equal(verified.code, 0, verified.stdout + verified.stderr);
    assert.equal(verified.stderr.trim(), "", "systemd-analyze verify has no warning");
    const security = await runCommand(analyze, ["security", "--offline=yes", "--no-pager", copy]);
    assert.equal(security.code, 0, security.stderr);
    const level = /Overall exposure level for \S+: (\d+\.\d+)/.exec(security.stdout);
    assert.ok(level, security.stdout);
    assert.ok(Number(level[1]) <= 1.5, `exposure ${level[1]} (1.5 or lower expected):\n${security.stdout}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  // The settings the guide promises.
  const service = new Map<string, string[]>();
  for (const e of parseUnit(unit).filter((e) => e.section === "Service")) {
    service.set(e.key, [...(service.get(e.key) ?? []), e.value]);
  }
  const one = (key: string) => service.get(key)?.join(" ");
  assert.equal(one("DynamicUser"), "yes");
  assert.deepEqual(service.get("LoadCredential"), [
    "token:/etc/ankra-cloud-ccm/token",
    "kubeconfig:/etc/ankra-cloud-ccm/kubeconfig",
  ]);
  assert.ok(service.get("Environment")?.includes("ANKRA_CLOUD_TOKEN_FILE=%d/token"));
  assert.equal(one("EnvironmentFile"), "/etc/ankra-cloud-ccm/ankra-cloud-ccm.env");
  assert.equal(one("Restart"), "always");
  assert.equal(one("RestartSec"), "5");
  assert.equal(one("ProtectSystem"), "strict");
  assert.equal(one("NoNewPrivileges"), "yes");
  assert.equal(one("CapabilityBoundingSet"), "");
  assert.equal(one("RestrictAddressFamilies"), "AF_INET AF_INET6 AF_UNIX");
  assert.ok(service.get("SystemCallFilter")?.includes("@system-service"));
  assert.match(one("ExecStart") ?? "", /--leader-elect=true/);
  assert.match(one("MemoryMax") ?? "", /^\d+[KMG]$/);
});

Deno.test("rbac.yaml is the chart's ServiceAccount, ClusterRole and bindings (labels aside)", async () => {
  const rendered = await runCommand(toolPath("helm"), [
    "template",
    "ankra-cloud-ccm",
    `${ROOT}/chart`,
    "--namespace",
    "kube-system",
    "--set",
    "api.token=placeholder",
    "--show-only",
    "templates/serviceaccount.yaml",
    "--show-only",
    "templates/rbac.yaml",
  ]);
  assert.equal(rendered.code, 0, rendered.stderr);
  const withoutLabels = (text: string) =>
    loadAll(text).filter(Boolean).map((doc) => {
      const { metadata, ...rest } = doc as { metadata: Record<string, unknown> };
      const { labels: _labels, ...meta } = metadata;
      return { ...rest, metadata: meta };
    });
  const byKindAndName = (docs: Record<string, unknown>[]) =>
    docs.sort((a, b) =>
      `${a.kind}/${(a.metadata as { name: string }).name}`.localeCompare(
        `${b.kind}/${(b.metadata as { name: string }).name}`,
      )
    );
  assert.deepEqual(
    byKindAndName(withoutLabels(await Deno.readTextFile(RBAC))),
    byKindAndName(withoutLabels(rendered.stdout)),
    "deploy/systemd/rbac.yaml differs from the chart: copy the chart's rules",
  );
});
