/**
 * The controller as the chart's pod in the real two-node cluster (`real_cluster.ts`), in place of the process the
 * cluster starts with: the image built from this checkout (`../image/test_image.ts`) loaded into the first node's
 * containerd under two tags (nothing is pulled: the nodes have no way out), the chart installed from `chart/` with the
 * values an operator of this IPv4-only cluster gives (the API's URL, the token and CA bundle in their own Secret,
 * `net-1`, `loadBalancer.ipv4: true`), the pod pinned to the first node (host network, where the process ran). Then
 * what an operator does to it: kill its process, `helm upgrade` it to the other tag.
 *
 * @module
 */
import { VERSION } from "../../../lib/version.ts";
import { kubeOk } from "../http/kube_http.ts";
import type { RealCluster } from "./real_cluster.ts";
import { SIMULATOR_PORT } from "./real_cluster_commands.ts";
import { archiveImages } from "./real_cluster_node.ts";
import type { PodDoc } from "../real_node/real_node_objects.ts";
import {
  CHART_NAMESPACE,
  killedAndRestarted,
  readyPod,
  renewingHolder,
  rolledOutPod,
} from "../real_node/real_node_steps.ts";
import { TEST_TOKEN } from "../cloud/simulator.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;
const NS = CHART_NAMESPACE;
/** The image name the pod runs, loaded into the node (never pulled). */
export const CHART_IMAGE = "localhost/ankra-cloud-ccm";
/** The second tag of the same image, for `helm upgrade`. */
export const ROLLOUT_TAG = `${VERSION}-rollout`;

/** The chart's values for the real cluster (pure). */
export function realClusterChartValues(options: { apiUrl: string; nodeName: string }): string {
  return [
    "clusterName: real-cluster",
    "api:",
    `  url: ${options.apiUrl}`,
    "  existingSecret: ankra-cloud-api",
    "  existingSecretHasCABundle: true",
    "loadBalancer:",
    "  networkID: net-1",
    "  ipv4: true",
    "image:",
    `  repository: ${CHART_IMAGE}`,
    `  tag: ${VERSION}`,
    "  pullPolicy: Never",
    "nodeSelector:",
    `  kubernetes.io/hostname: ${options.nodeName}`,
    "logVerbosity: 4",
    // A server's announced stop is seen within 10 s (the planned-stop step), not within the default 60 s.
    "extraArgs:",
    "  - --server-list-period=10s",
    "",
  ].join("\n");
}

/** The chart's controller in the cluster. */
export interface ChartController {
  /** The live pod, once Ready. */
  pod(timeoutMs?: number): Promise<PodDoc>;
  /** The Lease holder once it renews (not `notHolder`). */
  leader(timeoutMs: number, notHolder?: string): Promise<string>;
  /** SIGKILL to the controller's process; resolves once the kubelet has restarted it and it is Ready. */
  killProcess(): Promise<void>;
  /** `helm upgrade --reuse-values --set image.tag=<tag>`; resolves with the new pod Ready and the most pods seen running. */
  upgrade(tag: string): Promise<{ pod: PodDoc; mostRunning: number }>;
}

/**
 * Stops the cluster's controller process and installs the chart in its place, from the image layout `layout`; resolves
 * once the pod is Ready and leads.
 */
export async function installChartController(cluster: RealCluster, layout: string): Promise<ChartController> {
  const [first] = cluster.nodes;
  const dir = `${cluster.dir}/chart`;
  await Deno.mkdir(dir, { recursive: true });
  const tars = await archiveImages([
    { layout, tag: VERSION, name: `${CHART_IMAGE}:${VERSION}` },
    { layout, tag: VERSION, name: `${CHART_IMAGE}:${ROLLOUT_TAG}` },
  ], dir);
  await first.importImages(tars);
  await kubeOk(cluster.plane, "POST", `/api/v1/namespaces/${NS}/secrets`, {
    body: {
      metadata: { name: "ankra-cloud-api" },
      stringData: { token: TEST_TOKEN, "ca.crt": cluster.plane.caCert },
    },
  });
  await Deno.writeTextFile(
    `${dir}/values.yaml`,
    realClusterChartValues({
      apiUrl: `https://${cluster.topology.gatewayIp}:${SIMULATOR_PORT}`,
      nodeName: first.plan.name,
    }),
  );
  await cluster.killController();
  const install = await cluster.helm([
    "install",
    "ankra-cloud-ccm",
    `${ROOT}chart`,
    "-n",
    NS,
    "-f",
    `${dir}/values.yaml`,
  ]);
  if (install.code !== 0) throw new Error(`helm install failed: ${install.text}`);
  const chart: ChartController = {
    pod: (timeoutMs = 90_000) => readyPod(cluster, timeoutMs),
    leader: (timeoutMs, notHolder) => renewingHolder(cluster, timeoutMs, notHolder),
    killProcess: async () => {
      await killedAndRestarted(cluster, await chart.pod(10_000), first.containerPid);
    },
    upgrade: async (tag) => {
      const upgrade = cluster.helm([
        "upgrade",
        "ankra-cloud-ccm",
        `${ROOT}chart`,
        "-n",
        NS,
        "--reuse-values",
        "--set",
        `image.tag=${tag}`,
      ]);
      const rolled = await rolledOutPod(cluster, tag, 120_000);
      const done = await upgrade;
      if (done.code !== 0) throw new Error(`helm upgrade failed: ${done.text}`);
      return rolled;
    },
  };
  await chart.pod();
  await chart.leader(60_000);
  return chart;
}
