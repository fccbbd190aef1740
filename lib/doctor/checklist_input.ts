/**
 * What the checklist is made from: its input (what the doctor read, or why it could not), the world worked out from it
 * once for every check (the managed Nodes, each Node's server, the Services and Pods, the setup's needs from
 * `setup_needs.ts`), and what a check may need ({@linkcode Need}) with the reason it is not met — a fact that could not
 * be read, or a part of the setup that is not in use. Pure.
 *
 * @module
 */
import type { Server } from "../cloud/client.ts";
import type { SlimNode } from "../kube/slim.ts";
import { isUnmanagedNode } from "../provider/node_management.ts";
import type { DoctorSettings } from "./doctor_settings.ts";
import type { CloudFacts, ClusterFacts, HostPortPod, ServiceFacts } from "./facts.ts";
import type { Fetched } from "./fetched.ts";
import { matchNodes, type NodeMatch } from "./placement_checks.ts";
import { needsFromFacts, type SetupNeeds } from "./setup_needs.ts";

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

/**
 * What a check needs before it can say anything. Facts: `settings` (a configuration), `ankra-api` (the Ankra Cloud
 * API was asked), `api-answers` (it answered, and the token was tried), `token` (it takes the token), `kubernetes`
 * (the Kubernetes API answers and takes the credentials), `nodes`, `servers` (each Node matched against the server
 * list), `services`, `pods`. What the setup uses: `load-balancer`, `node-addresses`, `operate` ({@linkcode SetupNeeds}).
 */
export type Need =
  | "settings"
  | "ankra-api"
  | "api-answers"
  | "token"
  | "kubernetes"
  | "nodes"
  | "servers"
  | "services"
  | "pods"
  | "load-balancer"
  | "node-addresses"
  | "operate";

/** What the checks are made from: the input, and what follows from it, worked out once. */
export interface World {
  /** What the doctor read. */
  input: ChecklistInput;
  /** The setup's needs; undefined without settings. */
  needs?: SetupNeeds;
  /** Why the Ankra Cloud checks after reachability cannot run. */
  cloudWhy?: string;
  /** Why the Kubernetes checks cannot run. */
  clusterWhy?: string;
  /** The managed Nodes (not labelled node.ankra.cloud/managed=false), when listed … */
  nodes?: SlimNode[];
  /** … else why not. */
  nodesWhy: string;
  /** The servers, when listed … */
  servers?: Server[];
  /** … else why not. */
  serversWhy: string;
  /** Each Node's server, when both are known. */
  matches?: NodeMatch[];
  /** The Services, when listed … */
  services?: ServiceFacts[];
  /** … else why not. */
  servicesWhy: string;
  /** The pods taking ports on their nodes, when listed … */
  pods?: HostPortPod[];
  /** … else why not. */
  podsWhy: string;
}

export const NEEDS_CONFIGURATION = "needs a valid configuration (see above)";

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

/**
 * A read's value or, when it has none, why: `blocked` (its side cannot be asked), not made (`<what> were not
 * listed`), or failed (`<failed>: <the failure><hint>`).
 */
function readOf<T>(read: Fetched<T> | undefined, blocked: string | undefined, what: string, failed: string, hint = "") {
  if (blocked) return { why: blocked };
  if (!read) return { why: `${what} were not listed` };
  if (!read.ok) return { why: `${failed}: ${read.failure.message}${hint}` };
  return { value: read.value, why: "" };
}

/** Works out once what every check reads. */
export function worldOf(input: ChecklistInput): World {
  const cloudWhy = cloudBlocked(input);
  const clusterWhy = clusterBlocked(input);
  const cluster = clusterWhy ? undefined : input.cluster;
  const listedNodes = readOf(cluster?.nodes, clusterWhy, "the Nodes", "the Nodes cannot be listed");
  // Nodes labelled node.ankra.cloud/managed=false are not Ankra servers: the controller leaves them alone, so does this.
  const nodes = listedNodes.value?.filter((node) => !isUnmanagedNode(node));
  const servers = readOf(cloudWhy ? undefined : input.cloud?.servers, cloudWhy, "the servers", "list_servers failed");
  const services = readOf(cluster?.services, clusterWhy, "the Services", "the Services cannot be listed");
  const pods = readOf(
    cluster?.pods,
    clusterWhy,
    "the Pods",
    "the Pods cannot be listed",
    " (the controller's own identity may not list them: run the doctor with an administrator's kubeconfig to check " +
      "this)",
  );
  return {
    input,
    needs: input.settings
      ? needsFromFacts(input.settings, { cloud: cloudWhy ? undefined : input.cloud, cluster })
      : undefined,
    cloudWhy,
    clusterWhy,
    nodes,
    nodesWhy: listedNodes.why,
    servers: servers.value,
    serversWhy: servers.why,
    matches: nodes && servers.value ? matchNodes(nodes, servers.value) : undefined,
    services: services.value,
    servicesWhy: services.why,
    pods: pods.value,
    podsWhy: pods.why,
  };
}

/** Why `need` is not met in `world`, or undefined when it is. */
export function unmet(world: World, need: Need): string | undefined {
  const { input, needs } = world;
  switch (need) {
    case "settings":
      return input.settings ? undefined : NEEDS_CONFIGURATION;
    case "ankra-api":
      return input.settings && input.cloud ? undefined : (input.cloudSkipped ?? NEEDS_CONFIGURATION);
    case "api-answers":
      return input.cloud?.reachability.ok && input.cloud.zones ? undefined : world.cloudWhy;
    case "token":
      return world.cloudWhy;
    case "kubernetes":
      return world.clusterWhy;
    case "nodes":
      return world.nodes ? undefined : world.nodesWhy;
    case "servers":
      return world.matches ? undefined : world.nodes ? world.serversWhy : world.nodesWhy;
    case "services":
      return world.services ? undefined : world.servicesWhy;
    case "pods":
      return world.pods ? undefined : world.podsWhy;
    case "load-balancer":
      if (!needs) return NEEDS_CONFIGURATION;
      return needs.loadBalancer.needed ? undefined : `no Ankra load balancer is needed: ${needs.loadBalancer.why}`;
    case "node-addresses":
      if (!needs) return NEEDS_CONFIGURATION;
      return needs.nodeAddresses.needed ? undefined : `node-address mode is not in use: ${needs.nodeAddresses.why}`;
    case "operate":
      if (!needs) return NEEDS_CONFIGURATION;
      return needs.operate.needed ? undefined : `the token need not make changes: ${needs.operate.why}`;
  }
}
