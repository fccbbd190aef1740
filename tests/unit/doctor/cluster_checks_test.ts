/**
 * k3s's own components, other controllers' Leases and RBAC answers, from already-read objects.
 */
import assert from "node:assert/strict";
import type { LeaseFacts } from "../../../lib/doctor/facts.ts";
import { failedRead, fetched } from "../../../lib/doctor/fetched.ts";
import {
  k3sCloudControllerDisabled,
  k3sCloudControllerFinding,
  k3sServers,
  leaderLeaseFinding,
  leaseHeld,
  otherCloudControllerFinding,
  rbacFinding,
  serviceLbFinding,
} from "../../../lib/doctor/cluster_checks.ts";
import { k3sArgs, node } from "./doctor_fixtures.ts";

Deno.test("k3s servers without --disable=servicelb fail; agents and other nodes do not count", () => {
  const nodes = [
    node("server-1", {
      k3sNodeArgs: k3sArgs("server", "--disable", "traefik,servicelb", "--disable-cloud-controller"),
    }),
    node("server-2", { k3sNodeArgs: k3sArgs("server", "--disable-cloud-controller=true") }),
    node("agent-1", { k3sNodeArgs: k3sArgs("agent") }),
    node("kubeadm-1"),
  ];
  assert.deepEqual(k3sServers(nodes), ["server-1", "server-2"]);
  const finding = serviceLbFinding(nodes);
  assert.equal(finding.status, "fail");
  assert.match(finding.result, /ServiceLB runs on 1 k3s server .*: server-2;/);
  assert.match(finding.fix!, /--disable=servicelb/);
  assert.equal(serviceLbFinding(nodes.slice(0, 1)).status, "pass");
  assert.equal(serviceLbFinding(nodes.slice(2)).status, "skip");
});

Deno.test("k3s servers without --disable-cloud-controller fail; the flag's forms are read", () => {
  assert.equal(k3sCloudControllerDisabled(["server", "--disable-cloud-controller"]), true);
  assert.equal(k3sCloudControllerDisabled(["server", "--disable-cloud-controller=true"]), true);
  assert.equal(k3sCloudControllerDisabled(["server", "--disable-cloud-controller=false"]), false);
  assert.equal(
    k3sCloudControllerDisabled(["server", "--disable-cloud-controller", "--disable-cloud-controller=0"]),
    false,
  );
  assert.equal(k3sCloudControllerDisabled(["server", "--disable", "servicelb"]), false);
  const nodes = [
    node("server-1", { k3sNodeArgs: k3sArgs("server", "--disable-cloud-controller", "--disable=servicelb") }),
    node("server-2", { k3sNodeArgs: k3sArgs("server", "--disable=servicelb") }),
  ];
  const finding = k3sCloudControllerFinding(nodes);
  assert.equal(finding.status, "fail");
  assert.match(finding.result, /runs on 1 k3s server .*: server-2;/);
  assert.match(finding.fix!, /--disable-cloud-controller/);
  assert.match(finding.fix!, /--kubelet-arg=cloud-provider=external/);
  assert.equal(k3sCloudControllerFinding(nodes.slice(0, 1)).status, "pass");
  assert.equal(k3sCloudControllerFinding([node("plain")]).status, "skip");
});

const NOW = new Date("2025-06-01T12:00:00Z");

function lease(name: string, holder: string | undefined, secondsAgo: number, durationSeconds = 15): LeaseFacts {
  return {
    namespace: "kube-system",
    name,
    holder,
    renewTime: new Date(NOW.getTime() - secondsAgo * 1000).toISOString().replace("Z", "123Z"),
    durationSeconds,
  };
}

Deno.test("a Lease is held while its holder renews within its duration (plus clock skew)", () => {
  assert.equal(leaseHeld(lease("x", "a", 3), NOW), true);
  assert.equal(leaseHeld(lease("x", "a", 24), NOW), true);
  assert.equal(leaseHeld(lease("x", "a", 30), NOW), false);
  assert.equal(leaseHeld(lease("x", undefined, 1), NOW), false);
  assert.equal(leaseHeld(lease("x", "a", 100, 120), NOW), true);
});

Deno.test("another cloud controller renewing its Lease is a warning naming it; stale or absent ones pass", () => {
  const upstream = otherCloudControllerFinding({
    upstream: fetched(lease("cloud-controller-manager", "other-ccm_1", 2)),
    k3s: fetched(null),
  }, NOW);
  assert.equal(upstream.status, "warn");
  assert.match(upstream.result, /kube-system\/cloud-controller-manager is held by other-ccm_1 \(renewed 2 s ago\)/);
  const k3s = otherCloudControllerFinding({
    upstream: fetched(lease("cloud-controller-manager", "old", 3600)),
    k3s: fetched(lease("k3s-cloud-controller-manager", "server-1", 1)),
  }, NOW);
  assert.equal(k3s.status, "warn");
  assert.match(k3s.fix!, /--disable-cloud-controller and --disable=servicelb/);
  assert.equal(otherCloudControllerFinding({ upstream: fetched(null), k3s: fetched(null) }, NOW).status, "pass");
  const forbidden = otherCloudControllerFinding({
    upstream: failedRead({ kind: "forbidden", status: 403, message: "GET …: 403 forbidden" }),
    k3s: fetched(null),
  }, NOW);
  assert.equal(forbidden.status, "skip");
});

Deno.test("this controller's Lease held now is a warning (upgrade or second installation); released passes", () => {
  const where = { namespace: "kube-system", name: "ankra-cloud-ccm" };
  const held = leaderLeaseFinding(fetched(lease("ankra-cloud-ccm", "host_1", 1)), where, NOW);
  assert.equal(held.status, "warn");
  assert.match(held.fix!, /upgrading/);
  const released = leaderLeaseFinding(fetched(lease("ankra-cloud-ccm", undefined, 1)), where, NOW);
  assert.equal(released.status, "pass");
  assert.equal(
    leaderLeaseFinding(fetched(null), where, NOW).result,
    "Lease kube-system/ankra-cloud-ccm does not exist yet",
  );
});

Deno.test("RBAC names every missing permission and the identity", () => {
  const finding = rbacFinding(
    fetched([
      { check: { group: "", resource: "nodes", verb: "list" }, allowed: true },
      { check: { group: "", resource: "nodes", subresource: "status", verb: "patch" }, allowed: false },
      {
        check: { group: "coordination.k8s.io", resource: "leases", verb: "update", namespace: "kube-system" },
        allowed: false,
      },
    ]),
    "system:serviceaccount:kube-system:partial",
  );
  assert.equal(finding.status, "fail");
  assert.equal(
    finding.result,
    "system:serviceaccount:kube-system:partial lacks 2 permissions: patch nodes/status, update leases " +
      "(coordination.k8s.io) in kube-system",
  );
  assert.match(finding.fix!, /system:ankra-cloud-ccm/);
  const ok = rbacFinding(fetched([{ check: { group: "", resource: "nodes", verb: "list" }, allowed: true }]));
  assert.equal(ok.status, "pass");
  assert.equal(ok.result, "this identity may do all 1 things the controller does");
});
