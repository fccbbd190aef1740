/**
 * The checklist: every finding, in order, from the facts the doctor read. Pure: a check whose facts are missing
 * (because an earlier read failed or the configuration lacks what it needs) is skipped with the reason.
 *
 * Order: configuration; the Ankra Cloud API (reachable, token valid, operate, billing, quota); the Kubernetes API;
 * nodes (matched, kubelet flag); the private network; zones; k3s (ServiceLB, cloud controller); node-address mode
 * (only when a Service uses it or it is the default); Leases; RBAC.
 *
 * @module
 */
import { isUnmanagedNode } from "../provider/node_management.ts";
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
  type DoctorSettings,
  failedRead,
  K3S_CLOUD_CONTROLLER_LEASE,
  leaseKey,
  UPSTREAM_CLOUD_CONTROLLER_LEASE,
} from "./facts.ts";
import {
  matchedServers,
  matchNodes,
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
import { NODE_ADDRESSES, nodeAddressesFinding, nodeAddressModeInUse } from "./node_address_checks.ts";
import { type CheckName, type Finding, skip } from "./report.ts";

/** Everything the checklist is made from. */
export interface ChecklistInput {
  /** The configuration problem, when there is one. */
  problem?: string;
  /** The configuration's remarks. */
  warnings: string[];
  /** The settings; undefined when the configuration could not be built even without the Ankra Cloud settings. */
  settings?: DoctorSettings;
  /** What the Ankra Cloud API answered; undefined when it was not asked. */
  cloud?: CloudFacts;
  /** Why the Ankra Cloud API was not asked. */
  cloudSkipped?: string;
  /** What the Kubernetes API answered; undefined when it was not asked. */
  cluster?: ClusterFacts;
  /** Why the Kubernetes API could not be asked: a connection problem (fails its check) … */
  clusterProblem?: string;
  /** … or a configuration problem (skips it). */
  clusterSkipped?: string;
  /** The time Lease renewals are compared with. */
  now: Date;
}

const NEEDS_CONFIGURATION = "needs a valid configuration (see above)";

/** Why the Ankra Cloud checks after reachability cannot run, or undefined when they can. */
function cloudBlocked(input: ChecklistInput): string | undefined {
  const cloud = input.cloud;
  if (!cloud) return input.cloudSkipped ?? NEEDS_CONFIGURATION;
  if (!cloud.reachability.ok) return "the Ankra Cloud API did not answer (see above)";
  if (!cloud.zones) return "the token was not checked";
  if (!cloud.zones.ok) {
    const status = cloud.zones.failure.status;
    if (status === 401 || status === 403) return "the Ankra Cloud API refuses the token (see above)";
    if (cloud.zones.failure.kind === "invalid_answer") return "the answer is not the Ankra Cloud API's (see above)";
  }
  return undefined;
}

/** Why the Kubernetes checks cannot run, or undefined when they can. */
function clusterBlocked(input: ChecklistInput): string | undefined {
  const cluster = input.cluster;
  if (!cluster) return input.clusterProblem ? "no Kubernetes connection (see above)" : NEEDS_CONFIGURATION;
  if (!cluster.reachability.ok) return "the Kubernetes API did not answer (see above)";
  if (cluster.identity && !cluster.identity.ok && cluster.identity.failure.status === 401) {
    return "the Kubernetes API refuses the credentials (see above)";
  }
  return undefined;
}

function skipped(check: CheckName, why: string): Finding {
  return skip(check, `skipped: ${why}`);
}

/** `cluster-name-unique`: needs the account's load balancers and the cluster's UID. */
function clusterNameCheck(input: ChecklistInput, cloudWhy: string | undefined): Finding {
  const listed = input.cloud?.loadBalancers;
  const uid = input.cluster?.clusterUid;
  if (!input.settings || !input.cloud || cloudWhy || !listed) {
    return skipped(CLUSTER_NAME_UNIQUE, cloudWhy ?? input.cloudSkipped ?? "the load balancers were not listed");
  }
  if (!listed.ok) return skipped(CLUSTER_NAME_UNIQUE, `list_load_balancers failed: ${listed.failure.message}`);
  const clusterWhy = clusterBlocked(input);
  if (clusterWhy || !uid) return skipped(CLUSTER_NAME_UNIQUE, clusterWhy ?? "the cluster's UID was not read");
  if (!uid.ok) {
    return skipped(CLUSTER_NAME_UNIQUE, `the kube-system namespace cannot be read: ${uid.failure.message}`);
  }
  return clusterNameFinding(input.settings.clusterName, uid.value, listed.value);
}

/** The findings, in checklist order. */
export function checklist(input: ChecklistInput): Finding[] {
  const findings: Finding[] = [configurationFinding(input.problem, input.warnings, input.settings?.apiUrl)];
  const settings = input.settings;
  const cloud = input.cloud;
  const cloudWhy = cloudBlocked(input);

  // Ankra Cloud API.
  if (!cloud || !settings) {
    const why = input.cloudSkipped ?? NEEDS_CONFIGURATION;
    for (const check of [API_REACHABLE, TOKEN_VALID, TOKEN_OPERATE, ACCOUNT_CAN_CREATE, LOAD_BALANCER_QUOTA]) {
      findings.push(skipped(check, why));
    }
  } else {
    findings.push(apiReachableFinding(cloud.reachability, settings));
    if (!cloud.reachability.ok || !cloud.zones) findings.push(skipped(TOKEN_VALID, cloudWhy!));
    else findings.push(tokenValidFinding(cloud.zones));
    if (cloudWhy || !cloud.probe) {
      findings.push(skipped(TOKEN_OPERATE, cloudWhy ?? "the probe was not sent"));
      findings.push(skipped(ACCOUNT_CAN_CREATE, cloudWhy ?? "the probe was not sent"));
    } else {
      findings.push(operateFinding(cloud.probe), accountCanCreateFinding(cloud.probe));
    }
    const listed = cloud.loadBalancers;
    findings.push(
      cloudWhy || !listed
        ? skipped(LOAD_BALANCER_QUOTA, cloudWhy ?? "the load balancers were not listed")
        : quotaFinding(listed.ok ? { ok: true, value: listed.value.length } : listed),
    );
  }
  findings.push(clusterNameCheck(input, cloudWhy));

  // Kubernetes API.
  const cluster = input.cluster;
  if (cluster) findings.push(kubernetesApiFinding(cluster));
  else if (input.clusterProblem) findings.push(kubernetesConnectionFinding(input.clusterProblem));
  else findings.push(skipped(KUBERNETES_API, input.clusterSkipped ?? NEEDS_CONFIGURATION));
  const clusterWhy = clusterBlocked(input);
  const nodes = clusterWhy ? undefined : cluster?.nodes;
  const nodesWhy = clusterWhy ??
    (!nodes ? "the Nodes were not listed" : !nodes.ok ? `the Nodes cannot be listed: ${nodes.failure.message}` : "");
  // Nodes labelled node.ankra.cloud/managed=false are not Ankra servers: the controller leaves them alone, so does this.
  const nodeList = nodes?.ok ? nodes.value.filter((node) => !isUnmanagedNode(node)) : undefined;

  // Nodes and servers.
  const servers = cloudWhy ? undefined : cloud?.servers;
  const serversWhy = cloudWhy ??
    (!servers ? "the servers were not listed" : !servers.ok ? `list_servers failed: ${servers.failure.message}` : "");
  const matches = nodeList && servers?.ok ? matchNodes(nodeList, servers.value) : undefined;
  if (matches) findings.push(nodesMatchedFinding(matches));
  else findings.push(skipped(NODES_MATCHED, nodeList ? serversWhy : nodesWhy));
  findings.push(nodeList ? kubeletExternalFinding(nodeList) : skipped(KUBELET_EXTERNAL, nodesWhy));
  findings.push(
    nodeList && matches
      ? kubeProxyNodeIpsFinding(nodeList, matches)
      : skipped(KUBE_PROXY_NODE_IPS, nodeList ? serversWhy : nodesWhy),
  );

  // Network and zones.
  if (!settings || !cloud || cloudWhy) {
    findings.push(skipped(PRIVATE_NETWORK, cloudWhy ?? NEEDS_CONFIGURATION));
    findings.push(skipped(ZONE_CAPABILITIES, cloudWhy ?? NEEDS_CONFIGURATION));
  } else {
    const matched = matches ? matchedServers(matches) : [];
    if (!settings.networkId && !matches) {
      findings.push(skipped(PRIVATE_NETWORK, nodeList ? serversWhy : nodesWhy));
    } else {
      findings.push(networkFinding({
        configuredId: settings.networkId,
        configured: cloud.configuredNetwork,
        networks: cloud.networks,
        nodes: nodeList && servers?.ok ? memberNodes(nodeList, servers.value) : [],
        zone: settings.zone,
      }));
    }
    const zones = zonesToCheck(matched.map((s) => s.zone), settings.zone);
    if (zones.length === 0 && !matches) {
      findings.push(skipped(ZONE_CAPABILITIES, nodeList ? serversWhy : nodesWhy));
    } else {
      findings.push(zoneCapabilitiesFinding(zones, cloud.capabilities, settings.highAvailability));
    }
  }

  // k3s.
  findings.push(nodeList ? serviceLbFinding(nodeList) : skipped(K3S_SERVICELB, nodesWhy));
  findings.push(nodeList ? k3sCloudControllerFinding(nodeList) : skipped(K3S_CLOUD_CONTROLLER, nodesWhy));

  // Node-address mode: only when a Service uses it, or it is the default.
  const services = clusterWhy ? undefined : cluster?.services;
  const serviceList = services?.ok ? services.value : undefined;
  if (settings && nodeAddressModeInUse(serviceList, settings)) {
    const servicesWhy = clusterWhy ??
      (!services
        ? "the Services were not listed"
        : !services.ok
        ? `the Services cannot be listed: ${services.failure.message}`
        : "");
    const finding = nodeList
      ? nodeAddressesFinding({ settings, services: serviceList, servicesWhy, nodes: nodeList, matches, serversWhy })
      : skipped(NODE_ADDRESSES, nodesWhy);
    if (finding) findings.push(finding);
  }

  // Leases.
  if (clusterWhy || !cluster || !settings) {
    findings.push(skipped(OTHER_CLOUD_CONTROLLER, clusterWhy ?? NEEDS_CONFIGURATION));
    findings.push(skipped(LEADER_LEASE, clusterWhy ?? NEEDS_CONFIGURATION));
  } else {
    const lease = (namespace: string, name: string) =>
      cluster.leases[leaseKey(namespace, name)] ??
        failedRead({ kind: "not_read", message: `${namespace}/${name} was not read` });
    findings.push(otherCloudControllerFinding({
      upstream: lease(CLOUD_CONTROLLER_LEASE_NAMESPACE, UPSTREAM_CLOUD_CONTROLLER_LEASE),
      k3s: lease(CLOUD_CONTROLLER_LEASE_NAMESPACE, K3S_CLOUD_CONTROLLER_LEASE),
    }, input.now));
    if (!settings.leaderElect) {
      findings.push(skipped(LEADER_LEASE, "--leader-elect=false: the controller takes no Lease"));
    } else {
      const where = { namespace: settings.leaseNamespace, name: settings.leaseName };
      findings.push(leaderLeaseFinding(lease(where.namespace, where.name), where, input.now));
    }
  }

  // RBAC.
  if (clusterWhy || !cluster?.access) findings.push(skipped(RBAC, clusterWhy ?? "the access reviews were not made"));
  else {
    const identity = cluster.identity?.ok ? cluster.identity.value : undefined;
    findings.push(rbacFinding(cluster.access, identity));
  }
  return findings;
}
