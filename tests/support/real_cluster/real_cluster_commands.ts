/**
 * The command lines of the real cluster's own programs, as pure functions: the simulator in the cloud namespace
 * (its seed: every node an Ankra server at its node IP on `net-1`) and the controller in the first node's namespace,
 * configured as the chart configures its pod (token in the environment, the API over HTTPS with the cluster's CA).
 *
 * @module
 */
import type { Seed } from "../../../simulator/seed.ts";
import { inNetns } from "./real_cluster_host.ts";
import { type ClusterTopology, PUBLIC_IPV4_RANGES } from "./real_cluster_topology.ts";
import { serverSeed, TEST_TOKEN, testSeed } from "../cloud/simulator.ts";

/** The simulator's port in the cloud namespace. */
export const SIMULATOR_PORT = 8787;
const SIMULATOR_MAIN = new URL("../../../simulator/main.ts", import.meta.url).pathname;
const CONTROLLER_MAIN = new URL("../../../main.ts", import.meta.url).pathname;

/**
 * The simulator's world: the test seed with the plan's network and one server per node, with the plan's public IPv6
 * and IPv4 (and the account's load balancer `certificates`, when given).
 */
export function clusterSeed(t: ClusterTopology, certificates?: Seed["certificates"]): Seed {
  return testSeed({
    ...(certificates ? { certificates } : {}),
    settings: { public_ipv4_ranges: PUBLIC_IPV4_RANGES },
    networks: [{ id: "net-1", name: "private", zone: "de-fsn1", cidr: t.nodeNetwork, ula_prefix: t.nodeNetwork6 }],
    servers: t.nodes.map((n) =>
      serverSeed({
        hostname: n.name,
        zone: "de-fsn1",
        public_ipv6: n.publicIp6,
        public_ipv4: n.publicIp4,
        interfaces: [{ network_id: "net-1", address: n.ip }],
      })
    ),
  });
}

/** The simulator in the cloud namespace: HTTPS on every address, `--data-plane=netns`. */
export function simulatorCommand(t: ClusterTopology, files: { seed: string; cert: string; key: string }) {
  return inNetns(t.cloudNetns, Deno.execPath(), [
    "run",
    "--allow-all",
    SIMULATOR_MAIN,
    `--listen=0.0.0.0:${SIMULATOR_PORT}`,
    `--seed=${files.seed}`,
    "--data-plane=netns",
    `--tls-cert=${files.cert}`,
    `--tls-key=${files.key}`,
  ]);
}

/**
 * The controller in the first node's namespace (where the chart's hostNetwork pod would run), reaching the simulator
 * at the nodes' gateway and kube-apiserver through `kubeconfig`; the token is in its environment, not its arguments.
 * The cluster is IPv4-only, so it runs as the operator of one would (`loadBalancer.ipv4: true`): every load balancer
 * gets its public IPv4, which the Services' ingress lists first.
 */
export function controllerCommand(
  t: ClusterTopology,
  files: { caFile: string; kubeconfig: string },
  extraArgs: string[] = [],
) {
  return inNetns(t.nodes[0].netns, "env", [
    `ANKRA_CLOUD_TOKEN=${TEST_TOKEN}`,
    `ANKRA_CLOUD_API_URL=https://${t.gatewayIp}:${SIMULATOR_PORT}`,
    `ANKRA_CLOUD_CA_BUNDLE=${files.caFile}`,
    "ANKRA_CLOUD_NETWORK_ID=net-1",
    "ANKRA_CLOUD_LOAD_BALANCER_IPV4=true",
    Deno.execPath(),
    "run",
    "--allow-all",
    CONTROLLER_MAIN,
    `--kubeconfig=${files.kubeconfig}`,
    "--cluster-name=real-cluster",
    "--leader-elect=false",
    `--bind-address=${t.nodes[0].ip}`,
    "--v=4",
    ...extraArgs,
  ]);
}
