/**
 * What a failed real-cluster test prints to explain itself: the end of each control-plane component's, the
 * simulator's and the controller process's log, every node's (containerd, kubelet, kube-proxy), and the chart's
 * controller pod's when one runs (this run's and, after a restart, the last one's).
 *
 * @module
 */
import type { ToolResult } from "../chart/helm.ts";
import { logTail } from "./real_cluster_host.ts";
import type { ClusterNode } from "./real_cluster_node.ts";
import { CHART_NAMESPACE, CHART_SELECTOR } from "../real_node/real_node_steps.ts";

/** Where the logs are. */
export interface ClusterLogSources {
  /** The directory of the host's components' logs (`<name>.log`). */
  logsDir: string;
  /** The host's components, by log name. */
  components: string[];
  /** The nodes. */
  nodes: ClusterNode[];
  /** kubectl against the cluster (for the chart's pod). */
  kubectl(args: string[]): Promise<ToolResult>;
}

/** The last `lines` lines of every log, each under a heading naming it. */
export async function clusterLogs(sources: ClusterLogSources, lines = 40): Promise<string> {
  const parts: string[] = [];
  for (const name of sources.components) {
    const file = `${sources.logsDir}/${name}.log`;
    parts.push(`--- ${name} (${file})\n${await logTail(file, lines)}`);
  }
  for (const node of sources.nodes) parts.push(await node.logs(lines));
  // The controller run by the chart (real_cluster_chart.ts), when there is one: this run's log and the last one's.
  for (const previous of [false, true]) {
    const pod = await sources.kubectl([
      "-n",
      CHART_NAMESPACE,
      "logs",
      "-l",
      CHART_SELECTOR,
      `--tail=${lines}`,
      ...(previous ? ["--previous"] : []),
    ]).catch(() => undefined);
    if (pod?.code === 0 && pod.stdout.trim()) {
      parts.push(`--- the chart's controller pod${previous ? " (before its last restart)" : ""}\n${pod.stdout}`);
    }
  }
  return parts.join("\n");
}
