/**
 * The checks of the Kubernetes side, pure functions of what the doctor read:
 *
 * - **the API server** answers, with its certificate verified against the kubeconfig's (or the in-cluster) CA, and
 *   takes the credentials;
 * - **the kubelets run with `--cloud-provider=external`**: such a kubelet registers its Node with the taint
 *   `node.cloudprovider.kubernetes.io/uninitialized`, which the cloud controller removes when it sets the providerID;
 *   a Node with neither was registered without the flag, and no cloud controller will ever initialise it;
 * - **k3s's own components** that would compete with this controller, read from each node's `k3s.io/node-args`
 *   (the arguments every k3s server and agent was started with, config file included): ServiceLB (klipper-lb; off
 *   with `--disable=servicelb`) would answer every LoadBalancer Service beside this controller, and k3s's cloud
 *   controller (off with `--disable-cloud-controller`) would set `k3s://` providerIDs first. Nodes without the
 *   annotation are not k3s's; both checks are skipped when no node is a k3s server;
 * - **other controllers**, seen through their leader-election Leases in `kube-system` — the upstream
 *   `cloud-controller-manager`, k3s's `k3s-cloud-controller-manager` — and this controller's own Lease: a holder
 *   renewing now means a controller already runs (fine while upgrading it, not when installing a second one). A
 *   Lease counts as held when it names a holder and its last renewal is newer than its duration (default 15 s) plus
 *   {@linkcode CLOCK_SKEW_MS} for the difference between the holder's clock and this host's;
 * - **RBAC**: whether the identity the doctor runs as may do everything the controller does (one
 *   `SelfSubjectAccessReview` per permission; run the doctor with the controller's own kubeconfig or ServiceAccount
 *   to check the controller's permissions — an admin's kubeconfig passes everything).
 *
 * @module
 */
import type { SlimNode } from "../kube/slim.ts";
import { parseGoBoolean } from "../go_syntax.ts";
import { UNINITIALIZED_TAINT } from "../provider/node/node_plan.ts";
import { k3sArgs, k3sServersRunningServiceLb } from "../provider/k3s.ts";
import {
  CLOUD_CONTROLLER_LEASE_NAMESPACE,
  type ClusterFacts,
  K3S_CLOUD_CONTROLLER_LEASE,
  type LeaseFacts,
  UPSTREAM_CLOUD_CONTROLLER_LEASE,
} from "./facts.ts";
import type { Fetched } from "./fetched.ts";
import { type AccessAnswer, describeAccess } from "./required_permissions.ts";
import { type CheckName, fail, type Finding, nameList, pass, plural, skip, warn } from "./report.ts";
import { objectKey } from "../kube/object_key.ts";

/** The check of the Kubernetes API. */
export const KUBERNETES_API: CheckName = { id: "kubernetes-api", title: "Kubernetes API reachable" };

/** The finding when no connection could be configured at all (`problem` names the kubeconfig or in-cluster issue). */
export function kubernetesConnectionFinding(problem: string): Finding {
  return fail(
    KUBERNETES_API,
    problem,
    "pass --kubeconfig=<file> (on k3s: /etc/rancher/k3s/k3s.yaml), or run the doctor in a Pod with the " +
      "controller's ServiceAccount",
  );
}

/** The finding of the Kubernetes API, from the reachability request, the identity and the version. */
export function kubernetesApiFinding(
  facts: Pick<ClusterFacts, "server" | "source" | "reachability" | "identity" | "version">,
): Finding {
  const { server, source, reachability } = facts;
  if (!reachability.ok) {
    if (reachability.kind === "tls") {
      return fail(
        KUBERNETES_API,
        `TLS verification failed for ${server}: ${reachability.message}`,
        `the CA of ${source} (certificate-authority or certificate-authority-data) must be the one that signed the ` +
          "API server's certificate, and the server's address must be in that certificate",
      );
    }
    return fail(
      KUBERNETES_API,
      `could not reach ${server} (from ${source}): ${reachability.message}`,
      "check the server address in the kubeconfig (or --master) and that this host reaches the API server",
    );
  }
  if (facts.identity && !facts.identity.ok && facts.identity.failure.status === 401) {
    return fail(
      KUBERNETES_API,
      `the API server refuses the credentials of ${source} (HTTP 401)`,
      "renew the kubeconfig's credentials (token, client certificate or exec plugin), or use another kubeconfig",
    );
  }
  const version = facts.version?.ok ? `Kubernetes ${facts.version.value}` : "version unknown";
  const who = facts.identity?.ok && facts.identity.value ? `, as ${facts.identity.value}` : "";
  return pass(KUBERNETES_API, `${server} answered (${version}${who})`);
}

/** The check of the kubelets' cloud provider. */
export const KUBELET_EXTERNAL: CheckName = {
  id: "kubelet-external",
  title: "Kubelets run with --cloud-provider=external",
};

/** The nodes registered by a kubelet without `--cloud-provider=external`, by name. */
export function nodesWithoutExternalCloudProvider(nodes: Pick<SlimNode, "name" | "providerID" | "taints">[]): string[] {
  return nodes.filter((node) => !node.providerID && !node.taints.some((t) => t.key === UNINITIALIZED_TAINT))
    .map((node) => node.name).sort();
}

/** The finding of the kubelets' cloud provider. */
export function kubeletExternalFinding(nodes: Pick<SlimNode, "name" | "providerID" | "taints">[]): Finding {
  if (nodes.length === 0) return skip(KUBELET_EXTERNAL, "skipped: the cluster has no Nodes yet");
  const without = nodesWithoutExternalCloudProvider(nodes);
  if (without.length === 0) {
    const waiting = nodes.filter((node) => !node.providerID).length;
    return pass(
      KUBELET_EXTERNAL,
      `all ${plural(nodes.length, "node")} have a providerID or wait for the cloud controller (${waiting} with the ` +
        "uninitialized taint)",
    );
  }
  return fail(
    KUBELET_EXTERNAL,
    `${plural(without.length, "node")} ${without.length === 1 ? "has" : "have"} neither a providerID nor the ` +
      `uninitialized taint (registered by a kubelet without --cloud-provider=external): ${nameList(without)}`,
    [
      "start every kubelet with --cloud-provider=external:",
      "  k3s: --kubelet-arg=cloud-provider=external on every server and agent (config.yaml: kubelet-arg: " +
      '["cloud-provider=external"])',
      "  kubeadm: nodeRegistration.kubeletExtraArgs cloud-provider: external in the InitConfiguration and " +
      "JoinConfiguration (or KUBELET_EXTRA_ARGS=--cloud-provider=external in /etc/default/kubelet)",
      "  other: add --cloud-provider=external to the kubelet's command line",
      "then delete each such Node (kubectl delete node <name>) and restart its kubelet, so it registers again " +
      "with the taint",
    ].join("\n"),
  );
}

/** The check of k3s ServiceLB. */
export const K3S_SERVICELB: CheckName = { id: "k3s-servicelb", title: "k3s ServiceLB disabled" };
/** The check of k3s's cloud controller. */
export const K3S_CLOUD_CONTROLLER: CheckName = {
  id: "k3s-cloud-controller",
  title: "k3s cloud controller disabled",
};

type K3sNode = Pick<SlimNode, "name" | "k3sNodeArgs">;

/** The k3s servers among `nodes`, by name. */
export function k3sServers(nodes: K3sNode[]): string[] {
  return nodes.filter((node) => k3sArgs(node.k3sNodeArgs)?.[0] === "server").map((node) => node.name).sort();
}

/** True when k3s arguments turn the cloud controller off (`--disable-cloud-controller`, `=true`; last one wins). */
export function k3sCloudControllerDisabled(args: string[]): boolean {
  let disabled = false;
  for (const arg of args) {
    const match = /^--?disable-cloud-controller(?:=(.*))?$/.exec(arg);
    if (match) disabled = match[1] === undefined ? true : parseGoBoolean(match[1]) ?? false;
  }
  return disabled;
}

/** The k3s servers among `nodes` that run k3s's cloud controller (no `--disable-cloud-controller`), by name. */
function k3sServersRunningCloudController(nodes: K3sNode[]): string[] {
  return nodes.filter((node) => {
    const args = k3sArgs(node.k3sNodeArgs);
    return args !== undefined && args[0] === "server" && !k3sCloudControllerDisabled(args);
  }).map((node) => node.name).sort();
}

/** The finding of ServiceLB. */
export function serviceLbFinding(nodes: K3sNode[]): Finding {
  const servers = k3sServers(nodes);
  if (servers.length === 0) return skip(K3S_SERVICELB, "skipped: no node is a k3s server (no k3s.io/node-args)");
  const running = k3sServersRunningServiceLb(nodes);
  if (running.length === 0) {
    return pass(K3S_SERVICELB, `all ${plural(servers.length, "k3s server")} run with --disable=servicelb`);
  }
  return fail(
    K3S_SERVICELB,
    `ServiceLB runs on ${plural(running.length, "k3s server")} (started without --disable=servicelb): ` +
      `${nameList(running)}; it would answer every LoadBalancer Service beside this controller`,
    "restart every k3s server with --disable=servicelb (config.yaml: disable: [servicelb]); the k3s " +
      "installer: INSTALL_K3S_EXEC='server --disable=servicelb'",
  );
}

/** The finding of k3s's cloud controller. */
export function k3sCloudControllerFinding(nodes: K3sNode[]): Finding {
  const servers = k3sServers(nodes);
  if (servers.length === 0) {
    return skip(K3S_CLOUD_CONTROLLER, "skipped: no node is a k3s server (no k3s.io/node-args)");
  }
  const running = k3sServersRunningCloudController(nodes);
  if (running.length === 0) {
    return pass(
      K3S_CLOUD_CONTROLLER,
      `all ${plural(servers.length, "k3s server")} run with --disable-cloud-controller`,
    );
  }
  return fail(
    K3S_CLOUD_CONTROLLER,
    `k3s's own cloud controller runs on ${plural(running.length, "k3s server")} (started without ` +
      `--disable-cloud-controller): ${nameList(running)}; it would initialise nodes with k3s:// providerIDs`,
    "restart every k3s server with --disable-cloud-controller (config.yaml: disable-cloud-controller: true), and " +
      "every k3s node with --kubelet-arg=cloud-provider=external",
  );
}

/** The check of other cloud controllers. */
export const OTHER_CLOUD_CONTROLLER: CheckName = {
  id: "other-cloud-controller",
  title: "No other cloud controller holds a Lease",
};
/** The check of this controller's own Lease. */
export const LEADER_LEASE: CheckName = { id: "leader-lease", title: "Leader-election Lease not held" };

/** Allowance for the difference between the holder's clock and this host's, milliseconds. */
const CLOCK_SKEW_MS = 10_000;

/** How long ago the Lease was last renewed (or acquired), milliseconds; undefined without a time. */
function leaseAgeMs(lease: LeaseFacts, now: Date): number | undefined {
  const time = lease.renewTime ?? lease.acquireTime;
  if (!time) return undefined;
  const parsed = Date.parse(time);
  return Number.isNaN(parsed) ? undefined : now.getTime() - parsed;
}

/** True when the Lease has a holder renewing it (last renewal newer than its duration plus the clock skew). */
export function leaseHeld(lease: LeaseFacts, now: Date): boolean {
  if (!lease.holder) return false;
  const age = leaseAgeMs(lease, now);
  if (age === undefined) return false;
  return age <= (lease.durationSeconds ?? 15) * 1000 + CLOCK_SKEW_MS;
}

function heldText(lease: LeaseFacts, now: Date): string {
  const seconds = Math.max(0, Math.round((leaseAgeMs(lease, now) ?? 0) / 1000));
  return `${lease.namespace}/${lease.name} is held by ${lease.holder} (renewed ${seconds} s ago)`;
}

/** The finding of other cloud controllers, from the upstream and the k3s Leases (`null`: no such Lease). */
export function otherCloudControllerFinding(
  leases: { upstream: Fetched<LeaseFacts | null>; k3s: Fetched<LeaseFacts | null> },
  now: Date,
): Finding {
  const unreadable = [leases.upstream, leases.k3s].filter((l) => !l.ok);
  const held = [leases.upstream, leases.k3s].flatMap((
    l,
  ) => (l.ok && l.value && leaseHeld(l.value, now) ? [l.value] : []));
  if (held.length > 0) {
    const fixes = held.map((lease) =>
      lease.name === K3S_CLOUD_CONTROLLER_LEASE
        ? "k3s's cloud controller manager runs (ServiceLB or its node controllers): restart every k3s server with " +
          "--disable-cloud-controller and --disable=servicelb"
        : "another cloud controller runs: remove it (its Deployment or DaemonSet in kube-system) before installing " +
          "this one; fine only while it is an older ankra-cloud-ccm being replaced"
    );
    return warn(
      OTHER_CLOUD_CONTROLLER,
      `${nameList(held.map((lease) => heldText(lease, now)))}: two cloud controllers would both initialise nodes ` +
        "and answer LoadBalancer Services",
      fixes.join("\n"),
    );
  }
  if (unreadable.length > 0) {
    const failure = (unreadable[0] as { ok: false; failure: { message: string } }).failure;
    return skip(OTHER_CLOUD_CONTROLLER, `skipped: the Leases in kube-system cannot be read: ${failure.message}`);
  }
  return pass(
    OTHER_CLOUD_CONTROLLER,
    `neither ${CLOUD_CONTROLLER_LEASE_NAMESPACE}/${UPSTREAM_CLOUD_CONTROLLER_LEASE} nor ` +
      `${CLOUD_CONTROLLER_LEASE_NAMESPACE}/${K3S_CLOUD_CONTROLLER_LEASE} is held`,
  );
}

/** The finding of this controller's own Lease `namespace/name`. */
export function leaderLeaseFinding(
  lease: Fetched<LeaseFacts | null>,
  where: { namespace: string; name: string },
  now: Date,
): Finding {
  const name = objectKey(where);
  if (!lease.ok) return skip(LEADER_LEASE, `skipped: Lease ${name} cannot be read: ${lease.failure.message}`);
  if (!lease.value) return pass(LEADER_LEASE, `Lease ${name} does not exist yet`);
  if (!leaseHeld(lease.value, now)) {
    return pass(
      LEADER_LEASE,
      `Lease ${name} is not held now${lease.value.holder ? ` (last holder ${lease.value.holder})` : ""}`,
    );
  }
  return warn(
    LEADER_LEASE,
    `${heldText(lease.value, now)}: a controller with this Lease already runs`,
    "fine while upgrading or replacing that controller (the new one takes over when it stops); for a second, " +
      "separate installation in this cluster, remove one of them: two controllers must not manage the same nodes " +
      "and Services",
  );
}

/** The check of RBAC permissions. */
export const RBAC: CheckName = { id: "rbac", title: "RBAC permissions of the controller" };

/** The finding of RBAC permissions, for `identity` when known. */
export function rbacFinding(access: Fetched<AccessAnswer[]>, identity?: string): Finding {
  const who = identity ? ` ${identity}` : " this identity";
  if (!access.ok) return skip(RBAC, `skipped: the access reviews failed: ${access.failure.message}`);
  const missing = access.value.filter((answer) => !answer.allowed).map((answer) => describeAccess(answer.check));
  if (missing.length === 0) {
    return pass(RBAC, `${who.trim()} may do all ${access.value.length} things the controller does`);
  }
  return fail(
    RBAC,
    `${who.trim()} lacks ${plural(missing.length, "permission")}: ${missing.join(", ")}`,
    "bind the ClusterRole system:ankra-cloud-ccm of chart/templates/rbac.yaml, in the Lease's namespace its Role " +
      "system:ankra-cloud-ccm:leader-election (and system:auth-delegator for --metrics-authorization=delegated) " +
      "to the controller's identity (the Helm chart does this for its ServiceAccount), or add the missing verbs to " +
      "its role",
  );
}
