/**
 * What a k3s cluster's nodes say about k3s's own components, from the annotation `k3s.io/node-args` (the JSON list
 * of arguments each k3s server or agent was started with, config file included). Pure functions.
 *
 * ServiceLB (klipper-lb) is k3s's built-in load balancer controller: left running beside this controller, both
 * answer every LoadBalancer Service and write its status. k3s servers turn it off with `--disable=servicelb`
 * (also `--disable servicelb`, a comma list, or the older `--no-deploy`).
 *
 * @module
 */
import type { SlimNode } from "../kube/slim.ts";

/** A node's k3s arguments, or undefined for a node that is not k3s's (or whose annotation is unreadable). */
export function k3sArgs(annotation: string | undefined): string[] | undefined {
  if (!annotation) return undefined;
  try {
    const parsed = JSON.parse(annotation);
    return Array.isArray(parsed) && parsed.every((a) => typeof a === "string") ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The components a k3s server was told not to run (`--disable`, `--disable=`, `--no-deploy`, comma lists). */
function k3sDisabledComponents(args: string[]): Set<string> {
  const disabled = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const match = /^--?(disable|no-deploy)(?:=(.*))?$/.exec(args[i]);
    if (!match) continue;
    const value = match[2] ?? args[i + 1] ?? "";
    for (const item of value.split(",")) if (item.trim()) disabled.add(item.trim());
  }
  return disabled;
}

/** The k3s servers among `nodes` that run ServiceLB (started without `--disable=servicelb`), by name. */
export function k3sServersRunningServiceLb(nodes: readonly Pick<SlimNode, "name" | "k3sNodeArgs">[]): string[] {
  return nodes.filter((node) => {
    const args = k3sArgs(node.k3sNodeArgs);
    return args !== undefined && args[0] === "server" && !k3sDisabledComponents(args).has("servicelb");
  }).map((node) => node.name).sort();
}

/** The Warning for a Service while k3s ServiceLB also runs, or undefined. */
export function serviceLbNotice(servers: string[]): string | undefined {
  if (servers.length === 0) return undefined;
  const named = servers.slice(0, 3).join(", ") + (servers.length > 3 ? ` and ${servers.length - 3} more` : "");
  return `k3s ServiceLB also serves LoadBalancer Services here (k3s server ${named} runs without ` +
    "--disable=servicelb), so two controllers write this Service's status: restart every k3s server with " +
    "--disable=servicelb";
}
