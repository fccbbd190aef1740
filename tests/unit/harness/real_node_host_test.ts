import assert from "node:assert/strict";
import {
  crashCleanupScript,
  describeLeftovers,
  REAL_NODE_COMMANDS,
  realNodeBlockers,
} from "../../support/real_node/real_node_host.ts";
import {
  containerdConfig,
  kubeletArgs,
  type RealNodeLayout,
  registryHosts,
} from "../../support/real_node/real_node_files.ts";

const capable = {
  uid: 0,
  filesystems: ["ext4", "overlay"],
  commands: Object.keys(REAL_NODE_COMMANDS),
  cgroupsWritable: true,
};

Deno.test("a root machine with overlayfs, the commands and writable cgroups can run a real node", () => {
  assert.deepEqual(realNodeBlockers(capable), []);
});

Deno.test("the real-node gate names each missing piece and the Debian package to install", () => {
  const reasons = realNodeBlockers({
    uid: 1000,
    filesystems: ["ext4"],
    commands: capable.commands.filter((c) => c !== "iptables" && c !== "ip6tables"),
    cgroupsWritable: false,
  });
  assert.equal(reasons.length, 4);
  assert.match(reasons[0], /not root/);
  assert.match(reasons[1], /overlayfs/);
  assert.match(reasons[2], /missing iptables, ip6tables: install the Debian packages iptables$/);
  assert.match(reasons[3], /cgroup/);
});

Deno.test("leftovers on the host are listed one per line, nothing for a clean host", () => {
  assert.deepEqual(describeLeftovers({ mounts: [], netfilter: [], cgroups: [], loAddress: false }), []);
  assert.deepEqual(
    describeLeftovers({
      mounts: ["/tmp/x/kubelet/pods/a"],
      netfilter: ["iptables -t filter -N KUBE-FIREWALL"],
      cgroups: ["/sys/fs/cgroup/memory/kubepods"],
      loAddress: true,
    }),
    [
      "mount /tmp/x/kubelet/pods/a",
      "iptables -t filter -N KUBE-FIREWALL",
      "cgroup /sys/fs/cgroup/memory/kubepods",
      "the node IP on lo",
    ],
  );
});

const layout: RealNodeLayout = {
  dir: "/tmp/rn",
  nodeName: "n1",
  nodeIp: "10.99.0.2",
  apiPort: 1,
  etcdPort: 2,
  kubeletPort: 3,
  kubeletHealthzPort: 4,
  controllerManagerPort: 5,
  schedulerPort: 6,
  proxyHealthzPort: 7,
  proxyMetricsPort: 8,
  registry: "127.0.0.1:5000",
  mirroredRegistries: ["share.ankra.cloud"],
  runc: "/usr/sbin/runc",
};

Deno.test("containerd pulls mirrored registries and the pause image from the local registry over plain HTTP", () => {
  const hosts = registryHosts(layout);
  assert.deepEqual(Object.keys(hosts), ["127.0.0.1:5000/hosts.toml", "share.ankra.cloud/hosts.toml"]);
  assert.match(
    hosts["share.ankra.cloud/hosts.toml"],
    /^server = "https:\/\/share\.ankra\.cloud"\n\[host\."http:\/\/127\.0\.0\.1:5000"\]/,
  );
  const config = containerdConfig(layout);
  assert.match(config, /sandbox = '127\.0\.0\.1:5000\/pause:3\.10'/);
  assert.match(config, /restrict_oom_score_adj = true/);
});

Deno.test("the kubelet starts for an external cloud provider with the node IP given, as k3s starts it", () => {
  const args = kubeletArgs(layout);
  assert.ok(args.includes("--cloud-provider=external"));
  assert.ok(args.includes("--node-ip=10.99.0.2"));
  assert.ok(args.includes("--hostname-override=n1"));
});

Deno.test("after a crashed test process the watchdog stops the cluster, then undoes its host changes", () => {
  const script = crashCleanupScript({
    parent: 42,
    pids: [7, 8],
    dir: "/tmp/rn",
    nodeIp: "10.99.0.2",
    kubeProxy: "/bin/kube-proxy",
    runc: "/usr/sbin/runc",
    otherDirs: ["/tmp/registry"],
  }).split("\n");
  assert.equal(script[0], "while kill -0 42 2>/dev/null; do sleep 1; done");
  const at = (text: string) => script.findIndex((line) => line.includes(text));
  assert.ok(at("kill -TERM 7 8") < at("runc --root /tmp/rn/run/runc/k8s.io"), "processes first, then containers");
  assert.ok(at("/bin/kube-proxy --cleanup") > 0);
  assert.ok(at("KUBE-FIREWALL") > 0, "the kubelet's own chains, which kube-proxy's cleanup leaves");
  assert.ok(at("ip addr del 10.99.0.2/32 dev lo") > at("umount"));
  assert.equal(script.at(-2), "rm -rf /tmp/rn /tmp/registry");
});
