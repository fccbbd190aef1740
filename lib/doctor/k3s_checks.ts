/**
 * k3s's own components that would compete with this controller, read from each node's `k3s.io/node-args`
 * annotation (the arguments every k3s server and agent was started with, config file included):
 *
 * - **ServiceLB** (klipper-lb): left on, it answers every LoadBalancer Service beside this controller. Servers turn it
 *   off with `--disable=servicelb`.
 * - **k3s's cloud controller** (its `cloud-node` and `cloud-node-lifecycle` controllers): left on, it sets
 *   `k3s://` providerIDs and removes the uninitialized taint first. Servers turn it off with
 *   `--disable-cloud-controller`. (Since k3s moved ServiceLB into its cloud controller manager, that process runs
 *   until both are disabled.)
 *
 * Nodes without the annotation are not k3s's; both checks are skipped when no node is a k3s server.
 *
 * @module
 */
import type { SlimNode } from "../kube/slim.ts";
import { parseGoBoolean } from "../config.ts";
import { k3sArgs, k3sServersRunningServiceLb } from "../provider/k3s.ts";
import { type CheckName, fail, type Finding, nameList, pass, plural, skip } from "./finding.ts";

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
export function k3sServersRunningCloudController(nodes: K3sNode[]): string[] {
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
