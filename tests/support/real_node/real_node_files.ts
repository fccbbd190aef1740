/**
 * The configuration files and command lines of a real single-node cluster (tests/support/real_node/real_node.ts), as
 * pure functions of its {@linkcode RealNodeLayout}: nothing here touches the machine.
 *
 * The settings that are not a stock kubeadm node's, and why:
 * - kube-apiserver binds every address and advertises the node IP: the `kubernetes` Service's endpoint is the
 *   advertised address (loopback is refused there), and pods reach the API server only through that Service.
 * - containerd has `restrict_oom_score_adj = true`: without CAP_SYS_RESOURCE (as in containers and some VMs) nothing
 *   may lower `oom_score_adj`, and runc fails every sandbox containerd gives -998. A real host keeps the default.
 * - the kubelet has `failCgroupV1: false`: kubelet 1.35 and later refuse cgroup v1 hosts by default; on a cgroup v2
 *   host the setting changes nothing.
 * - no CNI configuration at all: the node stays NotReady, as every node is before its CNI runs.
 *
 * @module
 */

/** Where everything of one cluster lives, and its addresses and ports. */
export interface RealNodeLayout {
  /** The cluster's directory (certificates, configuration, data, logs). */
  dir: string;
  /** The Node's name (kubelet `--hostname-override`). */
  nodeName: string;
  /** The node IP (kubelet `--node-ip`, kube-apiserver `--advertise-address`). */
  nodeIp: string;
  /**
   * The kubelet's `--node-ip` when it is not {@linkcode RealNodeLayout.nodeIp} alone: both families' node IPs
   * (`<v4>,<v6>`, k3s's `--kubelet-arg=node-ip=…`), with which kube-proxy's node IPs never change.
   */
  kubeletNodeIps?: string[];
  /** kube-apiserver's secure port. */
  apiPort: number;
  /** etcd's client port. */
  etcdPort: number;
  /** The kubelet's API port. */
  kubeletPort: number;
  /** The kubelet's healthz port (loopback). */
  kubeletHealthzPort: number;
  /** kube-controller-manager's secure port (loopback). */
  controllerManagerPort: number;
  /** kube-scheduler's secure port (loopback). */
  schedulerPort: number;
  /** kube-proxy's healthz port (loopback). */
  proxyHealthzPort: number;
  /** kube-proxy's metrics port (loopback). */
  proxyMetricsPort: number;
  /** `127.0.0.1:<port>` of the local registry containerd pulls from. */
  registry: string;
  /** Registry hosts whose images containerd pulls from {@linkcode RealNodeLayout.registry} instead. */
  mirroredRegistries: string[];
  /** The runc binary. */
  runc: string;
  /** The address the node's kubeconfigs reach kube-apiserver at (default `127.0.0.1`). */
  apiHost?: string;
  /** Where the kubelet's and kube-proxy's healthz and metrics listen (default `127.0.0.1`; a node in its own network
   * namespace binds its node IP, so the host can reach them). */
  localAddress?: string;
  /** The kubelet's `cgroupRoot` (default none: `/kubepods`); two kubelets on one host need one each. */
  cgroupRoot?: string;
  /** kube-proxy's `clusterCIDR` (the pod ranges), when there is a pod network. */
  clusterCidr?: string;
  /** The kubelet's `clusterDNS`, when the cluster runs a DNS service. */
  clusterDns?: string;
  /** containerd keeps pod network namespaces under its state directory (not the host's /var/run/netns). */
  podNetnsUnderState?: boolean;
}

/** The options that make the node lifecycle controller and eviction fast enough to test. */
export interface RealNodeTimings {
  /** kube-controller-manager `--node-monitor-grace-period`, seconds. */
  nodeMonitorGracePeriodSeconds: number;
  /** kube-apiserver `--default-not-ready-toleration-seconds` and `--default-unreachable-toleration-seconds`. */
  defaultTolerationSeconds: number;
}

/** The pause image's tag in the local registry (what scripts/node_binaries.sh builds). */
export const PAUSE_IMAGE_TAG = "3.10";
/** The `kubernetes` Service's cluster IP. */
export const KUBERNETES_SERVICE_IP = "10.96.0.1";

/** Paths inside the cluster's directory. */
export function realNodePaths(dir: string) {
  return {
    pki: `${dir}/pki`,
    logs: `${dir}/logs`,
    containerdConfig: `${dir}/containerd/config.toml`,
    containerdCerts: `${dir}/containerd/certs.d`,
    containerdRoot: `${dir}/containerd/root`,
    containerdState: `${dir}/run/containerd`,
    containerdSocket: `${dir}/run/containerd/containerd.sock`,
    runcRoot: `${dir}/run/runc`,
    cniConf: `${dir}/cni/net.d`,
    cniBin: `${dir}/cni/bin`,
    kubeletRoot: `${dir}/kubelet`,
    kubeletConfig: `${dir}/kubelet.yaml`,
    kubeletCerts: `${dir}/kubelet-pki`,
    podLogs: `${dir}/pod-logs`,
    proxyConfig: `${dir}/kube-proxy.yaml`,
    adminKubeconfig: `${dir}/admin.kubeconfig`,
    kubeletKubeconfig: `${dir}/kubelet.kubeconfig`,
    tokens: `${dir}/tokens.csv`,
    etcdData: `${dir}/etcd-data`,
  };
}

/**
 * containerd 2.x configuration: private root/state/socket, Debian's runc, the local pause image, no CNI. NRI is off:
 * its socket (`/var/run/nri/nri.sock`) is one per host, so two nodes' containerds on one host would fight for it (the
 * second one fails to start) and a killed one would leave it behind for the next.
 */
export function containerdConfig(layout: RealNodeLayout): string {
  const p = realNodePaths(layout.dir);
  return `version = 3
root = "${p.containerdRoot}"
state = "${p.containerdState}"

[grpc]
  address = "${p.containerdSocket}"

[plugins.'io.containerd.nri.v1.nri']
  disable = true

[plugins.'io.containerd.cri.v1.images']
  snapshotter = 'overlayfs'
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = '${layout.registry}/pause:${PAUSE_IMAGE_TAG}'
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = '${p.containerdCerts}'

[plugins.'io.containerd.cri.v1.runtime']
  # No CAP_SYS_RESOURCE here: oom_score_adj may not go below containerd's own.
  restrict_oom_score_adj = true
${
    layout.podNetnsUnderState
      ? "  netns_mounts_under_state_dir = true\n"
      : ""
  }  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = 'runc'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = 'io.containerd.runc.v2'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = '${layout.runc}'
        Root = '${p.runcRoot}'
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ['${p.cniBin}']
    conf_dir = '${p.cniConf}'
`;
}

/**
 * containerd's `hosts.toml` files: the local registry over plain HTTP, and each mirrored registry served from it
 * (path → content, relative to the `certs.d` directory).
 */
export function registryHosts(layout: RealNodeLayout): Record<string, string> {
  const local = `http://${layout.registry}`;
  const hostBlock = `[host."${local}"]\n  capabilities = ["pull", "resolve"]\n  skip_verify = true\n`;
  const files: Record<string, string> = { [`${layout.registry}/hosts.toml`]: `server = "${local}"\n${hostBlock}` };
  for (const upstream of layout.mirroredRegistries) {
    files[`${upstream}/hosts.toml`] = `server = "https://${upstream}"\n${hostBlock}`;
  }
  return files;
}

/** The kubelet's configuration file. */
export function kubeletConfig(layout: RealNodeLayout): string {
  const p = realNodePaths(layout.dir);
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://${p.containerdSocket}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
podLogsDir: ${p.podLogs}
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${p.pki}/ca.crt}
authorization: {mode: Webhook}
address: ${layout.nodeIp}
port: ${layout.kubeletPort}
readOnlyPort: 0
healthzBindAddress: ${layout.localAddress ?? "127.0.0.1"}
healthzPort: ${layout.kubeletHealthzPort}
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
rotateCertificates: false
serializeImagePulls: false
nodeStatusUpdateFrequency: 5s
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
${layout.cgroupRoot ? `cgroupRoot: ${layout.cgroupRoot}\n` : ""}${
    layout.clusterDns ? `clusterDNS: [${layout.clusterDns}]\n` : ""
  }`;
}

/**
 * The kubelet's command line, as k3s starts its embedded kubelet with `--kubelet-arg=cloud-provider=external`:
 * `--cloud-provider=external` and the node IP given explicitly (k3s passes `--node-ip` from its own `--node-ip`, else
 * the address of the default route's interface; both families' with `--kubelet-arg=node-ip=<v4>,<v6>`).
 */
export function kubeletArgs(layout: RealNodeLayout): string[] {
  const p = realNodePaths(layout.dir);
  return [
    `--config=${p.kubeletConfig}`,
    `--kubeconfig=${p.kubeletKubeconfig}`,
    `--hostname-override=${layout.nodeName}`,
    `--node-ip=${(layout.kubeletNodeIps ?? [layout.nodeIp]).join(",")}`,
    "--cloud-provider=external",
    `--root-dir=${p.kubeletRoot}`,
    `--cert-dir=${p.kubeletCerts}`,
    "--v=2",
  ];
}

/** kube-proxy's configuration (iptables mode; conntrack left as the host has it). */
export function kubeProxyConfig(layout: RealNodeLayout): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: ${realNodePaths(layout.dir).adminKubeconfig}}
mode: iptables
hostnameOverride: ${layout.nodeName}
healthzBindAddress: ${layout.localAddress ?? "127.0.0.1"}:${layout.proxyHealthzPort}
metricsBindAddress: ${layout.localAddress ?? "127.0.0.1"}:${layout.proxyMetricsPort}
conntrack: {maxPerCore: 0}
${layout.clusterCidr ? `clusterCIDR: ${layout.clusterCidr}\n` : ""}`;
}

/** etcd's command line. */
export function etcdArgs(layout: RealNodeLayout): string[] {
  return [
    `--data-dir=${realNodePaths(layout.dir).etcdData}`,
    `--listen-client-urls=http://127.0.0.1:${layout.etcdPort}`,
    `--advertise-client-urls=http://127.0.0.1:${layout.etcdPort}`,
    "--listen-peer-urls=http://127.0.0.1:0",
    "--unsafe-no-fsync=true",
    "--log-level=warn",
  ];
}

/** kube-apiserver's command line: the Node authorizer, ServiceAccount admission, the node IP advertised. */
export function apiserverArgs(layout: RealNodeLayout, timings: RealNodeTimings): string[] {
  const p = realNodePaths(layout.dir);
  return [
    `--etcd-servers=http://127.0.0.1:${layout.etcdPort}`,
    "--bind-address=0.0.0.0",
    `--advertise-address=${layout.nodeIp}`,
    `--secure-port=${layout.apiPort}`,
    `--tls-cert-file=${p.pki}/apiserver.crt`,
    `--tls-private-key-file=${p.pki}/apiserver.key`,
    `--client-ca-file=${p.pki}/ca.crt`,
    `--token-auth-file=${p.tokens}`,
    "--authorization-mode=Node,RBAC",
    "--enable-admission-plugins=NodeRestriction",
    "--service-cluster-ip-range=10.96.0.0/16",
    "--service-account-issuer=https://kubernetes.default.svc",
    `--service-account-key-file=${p.pki}/sa.pub`,
    `--service-account-signing-key-file=${p.pki}/sa.key`,
    `--kubelet-client-certificate=${p.pki}/admin.crt`,
    `--kubelet-client-key=${p.pki}/admin.key`,
    "--kubelet-preferred-address-types=InternalIP,Hostname",
    `--default-not-ready-toleration-seconds=${timings.defaultTolerationSeconds}`,
    `--default-unreachable-toleration-seconds=${timings.defaultTolerationSeconds}`,
    "--profiling=false",
    `--cert-dir=${layout.dir}/apiserver-certs`,
  ];
}

/** kube-controller-manager's command line: no cloud loops of its own, a short node monitor grace period. */
export function controllerManagerArgs(layout: RealNodeLayout, timings: RealNodeTimings): string[] {
  const p = realNodePaths(layout.dir);
  return [
    `--kubeconfig=${p.adminKubeconfig}`,
    `--authentication-kubeconfig=${p.adminKubeconfig}`,
    `--authorization-kubeconfig=${p.adminKubeconfig}`,
    "--bind-address=127.0.0.1",
    `--secure-port=${layout.controllerManagerPort}`,
    "--leader-elect=false",
    "--cloud-provider=external",
    "--use-service-account-credentials=false",
    `--root-ca-file=${p.pki}/ca.crt`,
    `--service-account-private-key-file=${p.pki}/sa.key`,
    "--allocate-node-cidrs=false",
    "--configure-cloud-routes=false",
    `--node-monitor-grace-period=${timings.nodeMonitorGracePeriodSeconds}s`,
    "--node-monitor-period=1s",
  ];
}

/** kube-scheduler's command line. */
export function schedulerArgs(layout: RealNodeLayout): string[] {
  const p = realNodePaths(layout.dir);
  return [
    `--kubeconfig=${p.adminKubeconfig}`,
    `--authentication-kubeconfig=${p.adminKubeconfig}`,
    `--authorization-kubeconfig=${p.adminKubeconfig}`,
    "--bind-address=127.0.0.1",
    `--secure-port=${layout.schedulerPort}`,
    "--leader-elect=false",
  ];
}

/** A kubeconfig for `https://<apiHost>:<apiPort>` authenticating with a client certificate from the `pki` dir. */
export function clientCertKubeconfig(layout: RealNodeLayout, certName: string): string {
  const p = realNodePaths(layout.dir);
  return `apiVersion: v1
kind: Config
clusters:
- name: real-node
  cluster: {server: "https://${
    layout.apiHost ?? "127.0.0.1"
  }:${layout.apiPort}", certificate-authority: "${p.pki}/ca.crt"}
users:
- name: ${certName}
  user: {client-certificate: "${p.pki}/${certName}.crt", client-key: "${p.pki}/${certName}.key"}
contexts:
- name: real-node
  context: {cluster: real-node, user: ${certName}}
current-context: real-node
`;
}
