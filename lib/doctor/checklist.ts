/**
 * The checklist: a table of checks ({@linkcode CHECKS}), each declaring what it needs — facts the doctor must have read
 * (the Ankra Cloud API taking the token, the Nodes, the servers, the Pods, …) and what the setup must use for the
 * check to apply ({@linkcode SetupNeeds}: an Ankra load balancer, node-address mode, a token that may operate) — as
 * kubeadm's preflight checkers each declare themselves. A check whose first unmet need is a missing fact is skipped
 * saying what could not be read; one the setup does not need is skipped saying why it does not apply (a cluster that
 * serves every Service on node addresses needs no private network, no zone, no quota and no token that may operate).
 * Every check is always listed, in the table's order. What the checks read and need is worked out in
 * `checklist_input.ts`. Pure.
 *
 * Order: configuration; the Ankra Cloud API (reachable, token valid, operate, billing, quota, cluster name, duplicate
 * load balancers); the Kubernetes API; nodes and servers (matched, kubelet flag, kube-proxy's node IPs, the
 * server labels copied with `--node-labels-from-server`, IPv6 renumbering); the private network and zones (load
 * balancers); k3s (ServiceLB, cloud controller); node-address mode (public addresses, ports); Leases; RBAC.
 *
 * @module
 */
import {
  ACCOUNT_CAN_CREATE,
  accountCanCreateFinding,
  API_REACHABLE,
  apiReachableFinding,
  CLUSTER_NAME_UNIQUE,
  clusterNameFinding,
  configurationFinding,
  LOAD_BALANCER_QUOTA,
  operateFinding,
  quotaFinding,
  TOKEN_OPERATE,
  TOKEN_VALID,
  tokenValidFinding,
} from "./cloud_checks.ts";
import { type ChecklistInput, type Need, NEEDS_CONFIGURATION, unmet, type World, worldOf } from "./checklist_input.ts";
import {
  K3S_CLOUD_CONTROLLER,
  K3S_SERVICELB,
  k3sCloudControllerFinding,
  KUBELET_EXTERNAL,
  kubeletExternalFinding,
  KUBERNETES_API,
  kubernetesApiFinding,
  kubernetesConnectionFinding,
  LEADER_LEASE,
  leaderLeaseFinding,
  OTHER_CLOUD_CONTROLLER,
  otherCloudControllerFinding,
  RBAC,
  rbacFinding,
  serviceLbFinding,
} from "./cluster_checks.ts";
import {
  CLOUD_CONTROLLER_LEASE_NAMESPACE,
  type CloudFacts,
  type ClusterFacts,
  K3S_CLOUD_CONTROLLER_LEASE,
  leaseKey,
  UPSTREAM_CLOUD_CONTROLLER_LEASE,
} from "./facts.ts";
import { failedRead } from "./fetched.ts";
import { hostPortsFinding, NODE_ADDRESS_PORTS } from "./host_port_checks.ts";
import {
  matchedServers,
  memberNodes,
  networkFinding,
  NODES_MATCHED,
  nodesMatchedFinding,
  PRIVATE_NETWORK,
  ZONE_CAPABILITIES,
  zoneCapabilitiesFinding,
  zonesToCheck,
} from "./placement_checks.ts";
import { KUBE_PROXY_NODE_IPS, kubeProxyNodeIpsFinding } from "./node_ip_checks.ts";
import { DUPLICATE_LOAD_BALANCERS, duplicateLoadBalancersFinding } from "./duplicate_checks.ts";
import { NODE_ADDRESSES, nodeAddressesFinding } from "./node_address_checks.ts";
import { SERVER_LABELS, serverLabelsFinding } from "./server_label_checks.ts";
import { type CheckName, type Finding, skip } from "./report.ts";
import { IPV6_RENUMBER, ipv6RenumberFinding } from "./server_address_checks.ts";

/** One check of the table: its name, what it needs, and what it finds when every need is met. */
interface Check {
  /** Its id and title. */
  name: CheckName;
  /** Its needs, in the order they are tried: the first unmet one is the reason it is skipped. */
  needs: readonly Need[];
  /** Its finding, called only when every need is met. */
  run(world: World): Finding;
}

/** A check's finding: skipped for its first unmet need, else what it finds. */
function findingOf(check: Check, world: World): Finding {
  for (const need of check.needs) {
    const why = unmet(world, need);
    if (why !== undefined) return skip(check.name, `skipped: ${why}`);
  }
  return check.run(world);
}

/** The probe's outcome, or a skip saying it was not sent. */
function withProbe(world: World, check: CheckName, run: (probe: NonNullable<CloudFacts["probe"]>) => Finding) {
  const probe = world.input.cloud?.probe;
  return probe ? run(probe) : skip(check, "skipped: the probe was not sent");
}

/** `cluster-name-unique`: the account's load balancers against the cluster's UID. */
function clusterNameCheck(world: World): Finding {
  const { input } = world;
  const listed = input.cloud?.loadBalancers;
  if (!listed) return skip(CLUSTER_NAME_UNIQUE, "skipped: the load balancers were not listed");
  if (!listed.ok) return skip(CLUSTER_NAME_UNIQUE, `skipped: list_load_balancers failed: ${listed.failure.message}`);
  const uid = world.clusterWhy ? undefined : input.cluster?.clusterUid;
  if (world.clusterWhy || !uid) {
    return skip(CLUSTER_NAME_UNIQUE, `skipped: ${world.clusterWhy ?? "the cluster's UID was not read"}`);
  }
  if (!uid.ok) {
    return skip(CLUSTER_NAME_UNIQUE, `skipped: the kube-system namespace cannot be read: ${uid.failure.message}`);
  }
  return clusterNameFinding(input.settings!.clusterName, uid.value, listed.value);
}

/** `duplicate-load-balancers`: this cluster's load balancers against its Services (the controller's own rule). */
function duplicatesCheck(world: World): Finding {
  const { input } = world;
  const listed = input.cloud?.loadBalancers;
  if (!listed) return skip(DUPLICATE_LOAD_BALANCERS, "skipped: the load balancers were not listed");
  if (!listed.ok) {
    return skip(DUPLICATE_LOAD_BALANCERS, `skipped: list_load_balancers failed: ${listed.failure.message}`);
  }
  const uid = input.cluster?.clusterUid;
  if (!uid) return skip(DUPLICATE_LOAD_BALANCERS, "skipped: the cluster's UID was not read");
  if (!uid.ok) {
    return skip(DUPLICATE_LOAD_BALANCERS, `skipped: the kube-system namespace cannot be read: ${uid.failure.message}`);
  }
  if (!world.services) return skip(DUPLICATE_LOAD_BALANCERS, `skipped: ${world.servicesWhy}`);
  return duplicateLoadBalancersFinding(
    { name: input.settings!.clusterName, uid: uid.value },
    listed.value,
    world.services,
  );
}

/** `server-labels`: only with `--node-labels-from-server`, the labels each matched Node would carry. */
function serverLabelsCheck(world: World): Finding {
  const selector = world.input.settings!.nodeLabelsFromServer;
  if (!selector) return skip(SERVER_LABELS, "skipped: --node-labels-from-server is not set: no server label is copied");
  const why = unmet(world, "servers");
  return why === undefined ? serverLabelsFinding(selector, world.matches!) : skip(SERVER_LABELS, `skipped: ${why}`);
}

/** `private-network`: the network new load balancers sit on (the controller's decision). */
function networkCheck(world: World): Finding {
  const settings = world.input.settings!;
  const cloud = world.input.cloud!;
  if (!settings.networkId && !world.matches) {
    return skip(PRIVATE_NETWORK, `skipped: ${world.nodes ? world.serversWhy : world.nodesWhy}`);
  }
  return networkFinding({
    configuredId: settings.networkId,
    configured: cloud.configuredNetwork,
    networks: cloud.networks,
    nodes: world.nodes && world.servers ? memberNodes(world.nodes, world.servers) : [],
    zone: settings.zone,
  });
}

/** `zone-capabilities`: the zones a load balancer may land in. */
function zonesCheck(world: World): Finding {
  const settings = world.input.settings!;
  const matched = world.matches ? matchedServers(world.matches) : [];
  const zones = zonesToCheck(matched.map((s) => s.zone), settings.zone);
  if (zones.length === 0 && !world.matches) {
    return skip(ZONE_CAPABILITIES, `skipped: ${world.nodes ? world.serversWhy : world.nodesWhy}`);
  }
  return zoneCapabilitiesFinding(zones, world.input.cloud!.capabilities, settings.highAvailability);
}

/** `kubernetes-api`: whether the API server answers and takes the credentials. */
function kubernetesCheck(world: World): Finding {
  const { input } = world;
  if (input.cluster) return kubernetesApiFinding(input.cluster);
  if (input.clusterProblem) return kubernetesConnectionFinding(input.clusterProblem);
  return skip(KUBERNETES_API, `skipped: ${input.clusterSkipped ?? NEEDS_CONFIGURATION}`);
}

/** A Lease the doctor asked about, or a failed read naming it. */
function leaseOf(cluster: ClusterFacts, namespace: string, name: string) {
  return cluster.leases[leaseKey(namespace, name)] ??
    failedRead({ kind: "not_read", message: `${namespace}/${name} was not read` });
}

/** The checks, in checklist order, each with what it needs. */
const CHECKS: readonly Check[] = [
  {
    name: { id: "configuration", title: "Configuration" },
    needs: [],
    run: ({ input }) => configurationFinding(input.problem, input.warnings, input.settings?.apiUrl),
  },
  {
    name: API_REACHABLE,
    needs: ["ankra-api"],
    run: ({ input }) => apiReachableFinding(input.cloud!.reachability, input.settings!),
  },
  {
    name: TOKEN_VALID,
    needs: ["ankra-api", "api-answers"],
    run: ({ input }) => tokenValidFinding(input.cloud!.zones!),
  },
  { name: TOKEN_OPERATE, needs: ["operate", "token"], run: (w) => withProbe(w, TOKEN_OPERATE, operateFinding) },
  {
    name: ACCOUNT_CAN_CREATE,
    needs: ["load-balancer", "token"],
    run: (w) => withProbe(w, ACCOUNT_CAN_CREATE, accountCanCreateFinding),
  },
  {
    name: LOAD_BALANCER_QUOTA,
    needs: ["load-balancer", "token"],
    run: ({ input }) => {
      const listed = input.cloud!.loadBalancers;
      if (!listed) return skip(LOAD_BALANCER_QUOTA, "skipped: the load balancers were not listed");
      return quotaFinding(listed.ok ? { ok: true, value: listed.value.length } : listed);
    },
  },
  { name: CLUSTER_NAME_UNIQUE, needs: ["operate", "token"], run: clusterNameCheck },
  { name: DUPLICATE_LOAD_BALANCERS, needs: ["operate", "token", "kubernetes"], run: duplicatesCheck },
  { name: KUBERNETES_API, needs: [], run: kubernetesCheck },
  { name: NODES_MATCHED, needs: ["servers"], run: (w) => nodesMatchedFinding(w.matches!) },
  { name: KUBELET_EXTERNAL, needs: ["nodes"], run: (w) => kubeletExternalFinding(w.nodes!) },
  { name: KUBE_PROXY_NODE_IPS, needs: ["servers"], run: (w) => kubeProxyNodeIpsFinding(w.nodes!, w.matches!) },
  { name: SERVER_LABELS, needs: ["settings"], run: serverLabelsCheck },
  { name: IPV6_RENUMBER, needs: ["servers"], run: (w) => ipv6RenumberFinding(w.matches!) },
  { name: PRIVATE_NETWORK, needs: ["load-balancer", "token"], run: networkCheck },
  { name: ZONE_CAPABILITIES, needs: ["load-balancer", "token"], run: zonesCheck },
  { name: K3S_SERVICELB, needs: ["nodes"], run: (w) => serviceLbFinding(w.nodes!) },
  { name: K3S_CLOUD_CONTROLLER, needs: ["nodes"], run: (w) => k3sCloudControllerFinding(w.nodes!) },
  {
    name: NODE_ADDRESSES,
    needs: ["node-addresses", "nodes"],
    run: (w) =>
      nodeAddressesFinding({
        settings: w.input.settings!,
        services: w.services,
        servicesWhy: w.servicesWhy,
        nodes: w.nodes!,
        matches: w.matches,
        serversWhy: w.serversWhy,
      }),
  },
  {
    name: NODE_ADDRESS_PORTS,
    needs: ["node-addresses", "services", "servers", "pods"],
    run: (w) =>
      hostPortsFinding({
        settings: w.input.settings!,
        services: w.services!,
        nodes: w.nodes!,
        matches: w.matches!,
        pods: w.pods!,
      }),
  },
  {
    name: OTHER_CLOUD_CONTROLLER,
    needs: ["kubernetes", "settings"],
    run: ({ input }) =>
      otherCloudControllerFinding({
        upstream: leaseOf(input.cluster!, CLOUD_CONTROLLER_LEASE_NAMESPACE, UPSTREAM_CLOUD_CONTROLLER_LEASE),
        k3s: leaseOf(input.cluster!, CLOUD_CONTROLLER_LEASE_NAMESPACE, K3S_CLOUD_CONTROLLER_LEASE),
      }, input.now),
  },
  {
    name: LEADER_LEASE,
    needs: ["kubernetes", "settings"],
    run: ({ input }) => {
      const settings = input.settings!;
      if (!settings.leaderElect) {
        return skip(LEADER_LEASE, "skipped: --leader-elect=false: the controller takes no Lease");
      }
      const where = { namespace: settings.leaseNamespace, name: settings.leaseName };
      return leaderLeaseFinding(leaseOf(input.cluster!, where.namespace, where.name), where, input.now);
    },
  },
  {
    name: RBAC,
    needs: ["kubernetes"],
    run: ({ input }) => {
      const cluster = input.cluster!;
      if (!cluster.access) return skip(RBAC, "skipped: the access reviews were not made");
      return rbacFinding(cluster.access, cluster.identity?.ok ? cluster.identity.value : undefined);
    },
  },
];

/** The findings, in checklist order: every check of the table, run or skipped with the reason. */
export function checklist(input: ChecklistInput): Finding[] {
  const world = worldOf(input);
  return CHECKS.map((check) => findingOf(check, world));
}
