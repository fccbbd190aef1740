/**
 * `ankra-cloud-ccm cleanup --cluster-name=<name>`: removes a cluster from the Ankra Cloud account — every load balancer
 * of the cluster and its members on combined edges ({@linkcode planCleanup} decides) — so a cluster torn down without
 * deleting its Services leaves nothing billed behind.
 *
 * - **With the cluster** (`--kubeconfig`, or run inside it): the cluster's UID is read from its `kube-system`
 *   namespace, its Services' edge records give the Go controller's member prefixes, and every Service whose load
 *   balancer or edge members were removed loses the cleanup finalizer and its status (so it can be deleted later
 *   without a controller). A cluster that cannot be reached stops the command: nothing is deleted on a guess.
 * - **By name alone** (no kubeconfig, not in a cluster), saying so: the UID is `--cluster-uid`, or the one UID the
 *   load balancers with that name carry; several clusters with the name make it stop and name them.
 *
 * `--dry-run` prints the plan and changes nothing. Load balancers released with `preserve-on-delete` are kept unless
 * `--include-released`. Deletions are started, not awaited (the account shows them `deleting`). Exit codes: 0 done
 * (or nothing to do), 1 a request failed or the cluster could not be read, 2 a bad command line.
 *
 * @module
 */
import { CLUSTER_LABEL, EDGE_IN_USE_ANNOTATION } from "../ankra_names.ts";
import { AnkraCloudClient } from "../cloud/client.ts";
import type { Edge } from "../cloud/schemas.ts";
import type { Command } from "../config/command.ts";
import { readClusterUid } from "../controllers/cluster_identity.ts";
import { applyCloudCalls } from "../controllers/cloud_call_executor.ts";
import { causeChain } from "../error_text.ts";
import { KubeClient } from "../kube/client.ts";
import { kubeConnection } from "../kube/kubeconfig.ts";
import { objectKey } from "../kube/object_key.ts";
import { serviceWriter } from "../kube/service_writes.ts";
import { type SlimService, slimService } from "../kube/slim.ts";
import { configureLogging, redact } from "../log.ts";
import { type CleanupPlan, clusterUidByName, planCleanup } from "../provider/service/cluster_cleanup.ts";
import { edgeMemberPrefix } from "../provider/service/load_balancer_names.ts";
import { FINALIZER } from "../provider/service/service_plan.ts";
import { PROGRAM, VERSION } from "../version.ts";

/** The cleanup command as `resolveCommand` reads it. */
type CleanupCommand = Extract<Command, { kind: "cleanup" }>;

/** Where the command's lines go, and the environment it runs in. */
interface CleanupOptions {
  /** Prints one line (default: standard output). */
  print?: (line: string) => void;
  /** The environment the configuration was read from: `KUBERNETES_SERVICE_HOST` says it runs inside a cluster. */
  env: Record<string, string | undefined>;
}

/** What the cluster says, when it is at hand. */
interface ClusterFacts {
  uid: string;
  services: SlimService[];
  client: KubeClient;
}

async function readCluster(command: CleanupCommand): Promise<ClusterFacts> {
  const connection = await kubeConnection(command.config);
  const client = new KubeClient(connection, { qps: command.config.kubeApiQps, burst: command.config.kubeApiBurst });
  try {
    const uid = await readClusterUid(client);
    const services: SlimService[] = [];
    await client.listEach("/api/v1/services", {}, (raw) => {
      const service = slimService(raw as Parameters<typeof slimService>[0]);
      if (service.finalizers.includes(FINALIZER) || service.annotations[EDGE_IN_USE_ANNOTATION]) services.push(service);
    });
    return { uid, services, client };
  } catch (cause) {
    client.close();
    throw cause;
  }
}

/** Runs the cleanup and returns the exit code. */
export async function runCleanup(command: CleanupCommand, options: CleanupOptions): Promise<number> {
  const print = options.print ?? ((line: string) => console.log(line));
  const env = options.env;
  configureLogging({ sink: () => {} });
  const { config } = command;
  const name = config.clusterName;
  const dry = config.dryRun;
  const withCluster = Boolean(config.kubeconfig || config.master || env.KUBERNETES_SERVICE_HOST);
  const cloud = new AnkraCloudClient(config.cloud);
  let cluster: ClusterFacts | undefined;
  try {
    if (withCluster) {
      try {
        cluster = await readCluster(command);
      } catch (cause) {
        print(
          `${PROGRAM} cleanup: cannot read the cluster (${redact(causeChain(cause))}); nothing was changed. To clean ` +
            "up a cluster that no longer exists, run without --kubeconfig (by --cluster-name alone)",
        );
        return 1;
      }
      if (command.clusterUid && command.clusterUid !== cluster.uid) {
        print(
          `${PROGRAM} cleanup: --cluster-uid ${command.clusterUid} is not this cluster's (kube-system has UID ` +
            `${cluster.uid}); nothing was changed`,
        );
        return 1;
      }
    }
    const listed = await cloud.listLoadBalancers({ labels: { [CLUSTER_LABEL]: name } });
    let uid = cluster?.uid ?? command.clusterUid;
    if (!cluster) {
      print(
        `${PROGRAM} cleanup: no cluster to ask (no --kubeconfig, not in a cluster): by --cluster-name ${name} alone`,
      );
      if (!uid) {
        const byName = clusterUidByName(listed.items, name);
        if (!byName.ok) {
          print(`${PROGRAM} cleanup: ${byName.problem}; nothing was changed`);
          return 1;
        }
        uid = byName.uid;
      }
    }
    const edges = await readEdges(cloud);
    const legacyEdgePrefixes = (cluster?.services ?? []).filter((s) => s.annotations[EDGE_IN_USE_ANNOTATION])
      .map((s) => edgeMemberPrefix(name, s.namespace, s.name));
    const plan = planCleanup(listed.items, edges, {
      name,
      uid,
      legacyEdgePrefixes,
      includeReleased: command.includeReleased,
    });
    print(
      `${PROGRAM} ${VERSION} cleanup${dry ? " (dry run: nothing is changed)" : ""}: cluster ${name}` +
        `${uid ? ` (${uid})` : " (no UID label: the Go controller's load balancers)"} in ${config.cloud.apiUrl}`,
    );
    if (listed.skipped.length > 0) {
      print(`! ${listed.skipped.length} load balancer(s) of the list could not be read; run cleanup again later`);
    }
    for (const item of plan.items) print(`${dry ? "would " : ""}${item.text}`);
    if (plan.otherClusters > 0) {
      print(`left alone: ${plan.otherClusters} load balancer(s) of another cluster with --cluster-name ${name}`);
    }
    if (plan.items.length === 0) print("nothing of this cluster is left in the account");
    if (dry) return 0;
    await applyCloudCalls(cloud, plan.calls);
    if (cluster) await releaseServices(cluster, plan, print);
    const deleted = plan.items.filter((i) => i.action === "delete").length;
    const updated = plan.items.filter((i) => i.action === "update-edge").length;
    print(`done: ${deleted} load balancer(s) deleting, ${updated} edge(s) updated`);
    return listed.skipped.length > 0 ? 1 : 0;
  } catch (cause) {
    print(`${PROGRAM} cleanup failed: ${redact(causeChain(cause))}; run it again (what is done stays done)`);
    return 1;
  } finally {
    cloud.close();
    cluster?.client.close();
  }
}

/** Every edge of the account with its members. */
async function readEdges(cloud: AnkraCloudClient): Promise<Edge[]> {
  const listed = await cloud.listEdges();
  return await Promise.all(listed.items.map((edge) => cloud.getEdge(edge.id)));
}

/**
 * The Services whose load balancer or edge members were removed lose the cleanup finalizer and their status: with
 * no controller left they could otherwise never be deleted.
 */
async function releaseServices(cluster: ClusterFacts, plan: CleanupPlan, print: (line: string) => void) {
  const deletedFor = new Set(plan.items.filter((i) => i.action === "delete").map((i) => i.service));
  const updatedEdges = new Set(plan.items.filter((i) => i.action === "update-edge").map((i) => i.id));
  const writes = serviceWriter({ kube: cluster.client });
  for (const service of cluster.services) {
    const key = objectKey(service);
    const edge = service.annotations[EDGE_IN_USE_ANNOTATION];
    if (!deletedFor.has(key) && !(edge && updatedEdges.has(edge))) continue;
    await writes.setFinalizer(service, FINALIZER, false);
    if (!service.deletionTimestamp && service.ingress.length > 0) await writes.writeIngress(service, null);
    print(`released Service ${key}: finalizer ${FINALIZER} removed, status cleared`);
  }
}
