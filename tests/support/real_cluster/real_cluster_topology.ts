/**
 * The network plan of the real two-node cluster (tests/support/real_cluster/real_cluster.ts), as pure functions: the
 * namespaces, veths, addresses and routes, the commands that make and remove them, the bridge CNI configuration of each
 * node and the blackhole backstops that keep every range of the plan from ever leaving the machine.
 *
 *     host netns    test runner, control plane, e2e.test   ccm-h0 10.98.0.1/30 fd98::1/64
 *                   routes to the cloud (10.98.0.2) for the node network, the pod ranges and the public ranges, each
 *                   with a `blackhole … metric 4000` backstop underneath
 *     ccm-cloud     the simulator (API and data plane)    c0 10.98.0.2/30 fd98::2/64; bridge br0 10.97.0.1/24 holding
 *                   one veth per node; routes to each node's pod range and public IPv4 via its node; NO default
 *                   route
 *     ccm-node-<x>  containerd, kubelet, kube-proxy, pods   eth0 10.97.0.<n>/24, default via 10.97.0.1; the other
 *                   nodes' pod ranges via their nodes; cni0 = the bridge plugin's gateway of its pod range
 *
 * Every address a test contacts is in a namespace this plan made, or routed into one (and blackholed behind it).
 *
 * @module
 */
import { addressInPrefix, parseIp, parsePrefix } from "../../../lib/ip_address.ts";

/** One node of the plan. */
export interface NodePlan {
  /** The Node's name (and the Ankra server's hostname). */
  name: string;
  /** Its network namespace. */
  netns: string;
  /** The node IP on the private network. */
  ip: string;
  /** Its ULA on the private network (the simulator's leg address6: the network's /64 with `ip` in the low bits). */
  ip6: string;
  /**
   * Its server's public IPv6 (seeded, outside the simulator's load balancer pool `2001:db8:0:<n>::/64`), on the
   * node's `eth0`: a kubelet given both families' node IPs names it, as k3s's `--kubelet-arg=node-ip=<v4>,<v6>` does.
   */
  publicIp6: string;
  /**
   * Its server's public IPv4 (seeded, in {@linkcode SERVER_PUBLIC_IPV4_RANGE}), on the node's `eth0` as a /32 and
   * routed to the node by the cloud: what node-address mode publishes for an IPv4 Service.
   */
  publicIp4: string;
  /** The pod range its bridge plugin allocates from (a /24). */
  podCidr: string;
  /** The bridge port in the cloud namespace (the peer of the node's `eth0`). */
  cloudPort: string;
}

/** The whole plan. */
export interface ClusterTopology {
  /** The cloud namespace (the simulator). */
  cloudNetns: string;
  /** The host's end of the host–cloud veth. */
  hostVeth: string;
  /** The host's addresses on it (the control plane's advertise address). */
  hostIp: string;
  hostIp6: string;
  /** The cloud's addresses on it. */
  cloudIp: string;
  cloudIp6: string;
  /** The private network (the simulator's network CIDR). */
  nodeNetwork: string;
  /** The network's ULA /64 (in the simulator's seed; no node uses it). */
  nodeNetwork6: string;
  /** The cloud's address on the node network (the nodes' gateway, where they reach the simulator). */
  gatewayIp: string;
  /** All pod ranges (kube-proxy's clusterCIDR). */
  clusterCidr: string;
  /** The public ranges the simulator allocates load balancer addresses from. */
  publicRanges: string[];
  /** The nodes. */
  nodes: NodePlan[];
}

/**
 * The public IPv4 range the simulator allocates from (its seed's `public_ipv4_ranges`). Not 203.0.113.0/24: on these
 * machines the package mirrors and the Go module proxy resolve into it (203.0.113.80), and routing it into the cloud
 * namespace would cut the host off from them while a cluster runs.
 */
export const PUBLIC_IPV4_RANGES = ["198.51.100.0/24"];

/**
 * The range of the servers' public IPv4 addresses: outside the simulator's load balancer range (whose addresses its
 * data plane makes local in the cloud namespace) and outside 192.0.2.0/24, which some of these machines use for their
 * own uplink.
 */
export const SERVER_PUBLIC_IPV4_RANGE = "198.18.0.0/24";

/** The private network's ULA /64. */
const NODE_NETWORK6 = "fd97:0:0:1::/64";

/** The host–cloud link's prefix. */
const HOST_LINK = "10.98.0.0/30";
const HOST_LINK6 = "fd98::/64";

/** The plan for `nodeNames` (at most 200): nodes at 10.97.0.2, .3, …, pod ranges 10.244.1.0/24, .2.0/24, …. */
export function clusterTopology(nodeNames: string[], prefix = "ccm"): ClusterTopology {
  if (nodeNames.length === 0 || nodeNames.length > 200) {
    throw new Error(`a real cluster has 1 to 200 nodes, not ${nodeNames.length}: pass the node names`);
  }
  return {
    cloudNetns: `${prefix}-cloud`,
    hostVeth: `${prefix}-h0`,
    hostIp: "10.98.0.1",
    hostIp6: "fd98::1",
    cloudIp: "10.98.0.2",
    cloudIp6: "fd98::2",
    nodeNetwork: "10.97.0.0/24",
    nodeNetwork6: NODE_NETWORK6,
    gatewayIp: "10.97.0.1",
    clusterCidr: "10.244.0.0/16",
    publicRanges: [...PUBLIC_IPV4_RANGES, SERVER_PUBLIC_IPV4_RANGE, "2001:db8::/32"],
    nodes: nodeNames.map((name, i) => ({
      name,
      netns: `${prefix}-node-${i}`,
      ip: `10.97.0.${i + 2}`,
      ip6: addressInPrefix(parsePrefix(NODE_NETWORK6)!, parseIp(`10.97.0.${i + 2}`)!.value).text,
      publicIp6: `2001:db8:ff:${i.toString(16)}::1`,
      publicIp4: `198.18.0.${i + 10}`,
      podCidr: `10.244.${i + 1}.0/24`,
      cloudPort: `${prefix.slice(0, 4)}-n${i}`,
    })),
  };
}

/** The ranges the host routes into the cloud namespace (each with a blackhole backstop). */
export function hostRoutedRanges(t: ClusterTopology): string[] {
  return [t.nodeNetwork, t.clusterCidr, ...t.publicRanges];
}

/** The host's blackhole backstops: every range of the plan, below the real routes (metric 4000). */
export function backstopRoutes(t: ClusterTopology): string[][] {
  return [HOST_LINK, HOST_LINK6, ...hostRoutedRanges(t)].map((range) => [
    ...(range.includes(":") ? ["-6"] : []),
    "route",
    "replace",
    "blackhole",
    range,
    "metric",
    "4000",
  ]);
}

/**
 * The first `ip` commands (argv after `ip`): the backstops (a range is never routed by the host's default route,
 * even while the plan is half made) and the cloud namespace with only `lo` up. The simulator starts there before
 * anything else is added: `--data-plane=netns` refuses, where PID 1's namespace cannot be read (as here), a namespace
 * that has interfaces besides `lo` — it cannot otherwise tell it is not the host's.
 */
export function cloudNamespaceCommands(t: ClusterTopology): string[][] {
  return [...backstopRoutes(t), ["netns", "add", t.cloudNetns], ["-n", t.cloudNetns, "link", "set", "lo", "up"]];
}

/** The `ip` commands that build the rest of the plan after {@linkcode cloudNamespaceCommands}, in order. */
export function setupCommands(t: ClusterTopology): string[][] {
  const inCloud = (...args: string[]) => ["-n", t.cloudNetns, ...args];
  const cmds: string[][] = [];
  cmds.push(["link", "add", t.hostVeth, "type", "veth", "peer", "name", "c0", "netns", t.cloudNetns]);
  cmds.push(["addr", "add", `${t.hostIp}/30`, "dev", t.hostVeth]);
  cmds.push(["-6", "addr", "add", `${t.hostIp6}/64`, "dev", t.hostVeth, "nodad"]);
  cmds.push(["link", "set", t.hostVeth, "up"]);
  cmds.push(inCloud("addr", "add", `${t.cloudIp}/30`, "dev", "c0"));
  cmds.push(inCloud("-6", "addr", "add", `${t.cloudIp6}/64`, "dev", "c0", "nodad"));
  cmds.push(inCloud("link", "set", "c0", "up"));
  cmds.push(inCloud("link", "add", "br0", "type", "bridge"));
  cmds.push(inCloud("addr", "add", `${t.gatewayIp}/24`, "dev", "br0"));
  cmds.push(inCloud("link", "set", "br0", "up"));
  for (const node of t.nodes) {
    const inNode = (...args: string[]) => ["-n", node.netns, ...args];
    cmds.push(["netns", "add", node.netns]);
    cmds.push(inCloud("link", "add", node.cloudPort, "type", "veth", "peer", "name", "eth0", "netns", node.netns));
    cmds.push(inCloud("link", "set", node.cloudPort, "master", "br0"));
    cmds.push(inCloud("link", "set", node.cloudPort, "up"));
    cmds.push(inNode("link", "set", "lo", "up"));
    cmds.push(inNode("addr", "add", `${node.ip}/24`, "dev", "eth0"));
    // The server's public IPv6 too, as on an Ankra server: a kubelet given both families' node IPs must find both.
    cmds.push(inNode("-6", "addr", "add", `${node.publicIp6}/128`, "dev", "eth0", "nodad"));
    cmds.push(inNode("addr", "add", `${node.publicIp4}/32`, "dev", "eth0"));
    cmds.push(inNode("link", "set", "eth0", "up"));
    cmds.push(inNode("route", "add", "default", "via", t.gatewayIp));
    for (const other of t.nodes) {
      if (other !== node) cmds.push(inNode("route", "add", other.podCidr, "via", other.ip));
    }
    cmds.push(inCloud("route", "add", node.podCidr, "via", node.ip));
    cmds.push(inCloud("route", "add", `${node.publicIp4}/32`, "via", node.ip));
  }
  for (const range of hostRoutedRanges(t)) {
    cmds.push(
      range.includes(":")
        ? ["-6", "route", "replace", range, "via", t.cloudIp6, "dev", t.hostVeth]
        : ["route", "replace", range, "via", t.cloudIp, "dev", t.hostVeth],
    );
  }
  return cmds;
}

/** The sysctls (path under /proc/sys, value) each namespace needs, by namespace. */
export function namespaceSysctls(t: ClusterTopology): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {
    [t.cloudNetns]: { "net/ipv4/ip_forward": "1", "net/ipv6/conf/all/forwarding": "1" },
  };
  for (const node of t.nodes) {
    out[node.netns] = {
      "net/ipv4/ip_forward": "1",
      "net/bridge/bridge-nf-call-iptables": "1",
      "net/ipv4/conf/all/rp_filter": "0",
    };
  }
  return out;
}

/**
 * What the simulator's `--data-plane=netns` made local that must not be: it routes the whole node network to its own
 * `lo`, which would swallow the connections to the nodes. The harness keeps only the upper half local (where the
 * simulator's load balancer VMs take their legs, `simulator/data_plane/local_addresses.ts` `vmLegAddress`) so the
 * lower half (the nodes) is reached over the bridge. `ip` argv, run in the cloud namespace.
 */
export function simulatorRouteFixes(t: ClusterTopology): string[][] {
  const [base] = t.nodeNetwork.split("/");
  const upper = base.replace(/\.0$/, ".128");
  return [
    ["-n", t.cloudNetns, "route", "del", "local", t.nodeNetwork, "dev", "lo", "table", "local"],
    ["-n", t.cloudNetns, "route", "replace", "local", `${upper}/25`, "dev", "lo", "table", "local"],
  ];
}

/** The `ip` commands that remove the plan (each may fail harmlessly when its object is already gone). */
export function teardownCommands(t: ClusterTopology): string[][] {
  const cmds: string[][] = [];
  for (const node of t.nodes) cmds.push(["netns", "del", node.netns]);
  cmds.push(["netns", "del", t.cloudNetns]);
  cmds.push(["link", "del", t.hostVeth]);
  for (const range of hostRoutedRanges(t)) {
    cmds.push([
      ...(range.includes(":") ? ["-6"] : []),
      "route",
      "del",
      range,
      "via",
      range.includes(":") ? t.cloudIp6 : t.cloudIp,
    ]);
  }
  for (const range of [HOST_LINK, HOST_LINK6, ...hostRoutedRanges(t)]) {
    cmds.push([...(range.includes(":") ? ["-6"] : []), "route", "del", "blackhole", range, "metric", "4000"]);
  }
  return cmds;
}

/**
 * The bridge CNI configuration list of `node`: a `cni0` bridge as its pod range's gateway, hairpin on (a pod reaching
 * itself through a Service), no masquerade (the harness routes the pod ranges, so pods see each other's addresses),
 * host-local IPAM with its state in `ipamDir` (not the host's /var/lib/cni), and the loopback and portmap plugins.
 */
export function bridgeConflist(node: NodePlan, ipamDir: string): string {
  const gateway = node.podCidr.replace(/\.0\/24$/, ".1");
  return JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "ccm-pods",
      plugins: [
        {
          type: "bridge",
          bridge: "cni0",
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: "host-local",
            dataDir: ipamDir,
            ranges: [[{ subnet: node.podCidr, gateway }]],
            routes: [{ dst: "0.0.0.0/0" }],
          },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

/** Lines of `ip -o link` / `ip netns list` / `ip route` output that belong to the plan (what teardown leaves). */
export function topologyLeftovers(
  t: ClusterTopology,
  listed: { netns: string; links: string; routes4: string; routes6: string },
): string[] {
  const names = [t.cloudNetns, ...t.nodes.map((n) => n.netns)];
  const left: string[] = [];
  for (const line of listed.netns.split("\n")) {
    const name = line.trim().split(/\s+/)[0];
    if (name && names.includes(name)) left.push(`network namespace ${name}`);
  }
  for (const line of listed.links.split("\n")) {
    if (new RegExp(`^\\d+: ${t.hostVeth}[@:]`).test(line.trim())) left.push(`link ${t.hostVeth}`);
  }
  const ranges = [HOST_LINK, HOST_LINK6, ...hostRoutedRanges(t)];
  for (const line of `${listed.routes4}\n${listed.routes6}`.split("\n")) {
    const words = line.trim().split(/\s+/);
    const dst = words[0] === "blackhole" ? words[1] : words[0];
    if (dst && ranges.includes(dst)) left.push(`route ${line.trim()}`);
  }
  return left;
}
