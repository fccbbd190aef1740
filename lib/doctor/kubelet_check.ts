/**
 * Whether the kubelets run with `--cloud-provider=external`. Such a kubelet registers its Node with the taint
 * `node.cloudprovider.kubernetes.io/uninitialized`, which the cloud controller removes when it sets the providerID;
 * so a Node with neither a providerID nor that taint was registered by a kubelet without the flag, and no cloud
 * controller will ever initialise it (the taint is only added at registration).
 *
 * @module
 */
import type { SlimNode } from "../kube/slim.ts";
import { UNINITIALIZED_TAINT } from "../provider/node_plan.ts";
import { type CheckName, fail, type Finding, nameList, pass, plural, skip } from "./finding.ts";

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
