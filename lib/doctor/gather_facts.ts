/**
 * Every request the doctor makes, in one place. All are reads except two kinds of review objects the API server
 * answers without storing (SelfSubjectReview, SelfSubjectAccessReview) and the operate probe (`operate_probe.ts`), a
 * `create_load_balancer` the API must refuse. Reads that depend on an earlier one (e.g. everything after a refused
 * token) are not made, and neither are those the setup does not need (`setup_needs.ts`).
 *
 * First, side by side. Ankra Cloud: an unauthenticated `GET /v1/zones` (reachability, TLS), `list_zones` (token), then
 * side by side `list_servers` and `list_load_balancers`. Kubernetes: an unauthenticated `GET /version` (reachability,
 * TLS), a SelfSubjectReview (who; 401 when the credentials are refused), `GET /version`, `list nodes`, `list
 * services`, `get` of the `kube-system` namespace (its UID), `get` of three Leases, and one SelfSubjectAccessReview per
 * permission the controller needs.
 *
 * Then, from what the Services and the load balancers say the setup needs: the operate probe only when the token must
 * operate; `list_networks` + `get_network` of each (or `get_network` of ANKRA_CLOUD_NETWORK_ID) and
 * `get_zone_capabilities` of each zone of the matched nodes and of ANKRA_CLOUD_ZONE only when an Ankra load balancer
 * is needed; `list pods` (every namespace) only when node-address mode is in use. A setup that serves every Service on
 * node addresses therefore sends Ankra Cloud nothing but reads.
 *
 * `list services` is in the controller's ClusterRole; `list pods` is not (the doctor run with the controller's own
 * identity skips the check that needs it, saying so; run with an administrator's kubeconfig it reads them). MetalLB is
 * recognised by the annotation it writes on the Services it serves, not by its Deployment in `metallb-system`.
 *
 * Reachability is one unauthenticated GET whose answer (any HTTP status) proves the name resolves, the port is open
 * and TLS is trusted; without an answer, the error's whole cause chain is kept and classified, so a certificate
 * problem is told apart from DNS, a refused connection or a timeout (the API clients keep only the outer "fetch
 * failed"). No credential is sent with it, so nothing can be refused or counted against a rate limit.
 *
 * @module
 */
import type { V1Node, V1Pod, V1Service } from "@kubernetes/client-node";
import type { AnkraCloudClient, Network } from "../cloud/client.ts";
import { CloudApiError } from "../cloud/errors.ts";
import { causeChain } from "../error_text.ts";
import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import type { KubeConnectionConfig } from "../kube/kubeconfig.ts";
import { slimNode, slimService } from "../kube/slim.ts";
import { redact } from "../log.ts";
import { kubeTrustedCertificates, systemCaCertificates } from "../tls.ts";
import { USER_AGENT } from "../version.ts";
import type { DoctorSettings } from "./doctor_settings.ts";
import {
  CLOUD_CONTROLLER_LEASE_NAMESPACE,
  type CloudFacts,
  type ClusterFacts,
  type HostPortPod,
  K3S_CLOUD_CONTROLLER_LEASE,
  type LeaseFacts,
  leaseKey,
  METALLB_ALLOCATION_ANNOTATIONS,
  type ServiceFacts,
  UPSTREAM_CLOUD_CONTROLLER_LEASE,
} from "./facts.ts";
import {
  failedRead,
  type Fetched,
  fetched,
  type Reachability,
  type ReadFailure,
  type UnreachableKind,
} from "./fetched.ts";
import { OPERATE_PROBE, type ProbeOutcome } from "./operate_probe.ts";
import { type AccessAnswer, accessChecks, selfSubjectAccessReview } from "./required_permissions.ts";
import { matchedServers, matchNodes, zonesToCheck } from "./placement_checks.ts";
import { needsFromFacts } from "./setup_needs.ts";
import { DEFAULTS } from "../defaults.ts";

/** Classifies a failed request by its cause chain's text. */
export function classifyUnreachable(text: string, timedOut: boolean): UnreachableKind {
  if (timedOut) return "timeout";
  if (/dns error|failed to lookup|name or service not known|no such host|nodename nor servname/i.test(text)) {
    return "dns";
  }
  if (/certificate|UnknownIssuer|NotValidForName|\btls\b|\bssl\b|handshake|BadSignature/i.test(text)) return "tls";
  if (/connection refused|ECONNREFUSED|os error 111/i.test(text)) return "refused";
  return "network";
}

/** Options of {@linkcode checkReachable}. */
interface ReachabilityOptions {
  /** Extra PEM certificate authorities, trusted besides the system roots (unless `onlyGivenCa`). */
  caCerts?: string[];
  /**
   * Trust `caCerts` alone when there are any, as the Kubernetes client does with the cluster's CA (the system roots
   * only when none is given).
   */
  onlyGivenCa?: boolean;
  /** Client certificate and key, for API servers that want one at the handshake. */
  clientCert?: { cert: string; key: string };
  /** Timeout, milliseconds (default 15 s). */
  timeoutMs?: number;
}

/** Sends one unauthenticated `GET url` and reports whether (and how) it was answered. */
async function checkReachable(url: string, options: ReachabilityOptions = {}): Promise<Reachability> {
  let client: Deno.HttpClient;
  try {
    client = Deno.createHttpClient({
      caCerts: options.onlyGivenCa
        ? kubeTrustedCertificates(options.caCerts ?? [])
        : [...systemCaCertificates(), ...(options.caCerts ?? [])],
      ...(options.clientCert ? { cert: options.clientCert.cert, key: options.clientCert.key } : {}),
    });
  } catch (cause) {
    return { ok: false, url, kind: "tls", message: `the certificates cannot be used: ${redact(causeChain(cause))}` };
  }
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULTS.doctorReadTimeoutMs);
  try {
    const response = await fetch(url, {
      headers: { accept: "application/json", "user-agent": USER_AGENT },
      client,
      signal: timeout,
    });
    const body = await response.text();
    return { ok: true, url, status: response.status, body: body.slice(0, 2_000) };
  } catch (cause) {
    const text = redact(causeChain(cause));
    return { ok: false, url, kind: classifyUnreachable(text, timeout.aborted), message: text };
  } finally {
    client.close();
  }
}

/** A failure as the checks see it, from whatever a client threw. */
function readFailure(error: unknown): ReadFailure {
  if (error instanceof CloudApiError || error instanceof KubeApiError) {
    return {
      kind: error.kind,
      status: error.status || undefined,
      reason: error.reason,
      message: redact(error.message),
    };
  }
  return { kind: "error", message: redact(error instanceof Error ? error.message : String(error)) };
}

async function read<T>(request: () => Promise<T>): Promise<Fetched<T>> {
  try {
    return fetched(await request());
  } catch (cause) {
    return failedRead(readFailure(cause));
  }
}

/** How to reach the Ankra Cloud API. */
interface CloudAccess {
  /** The client (with the token). */
  client: AnkraCloudClient;
  /** PEM of ANKRA_CLOUD_CA_BUNDLE, for the reachability request. */
  caBundle?: string;
  /** Timeout of the reachability request, milliseconds. */
  timeoutMs: number;
}

/** How to reach the Kubernetes API. */
interface ClusterAccess {
  /** The client (with the credentials). */
  client: KubeClient;
  /** The connection settings, for the reachability request. */
  connection: KubeConnectionConfig;
}

/** What the Ankra Cloud API says before the nodes are known (zone capabilities come later). */
async function gatherCloudBase(access: CloudAccess, settings: DoctorSettings): Promise<CloudFacts> {
  const { client } = access;
  const reachability = await checkReachable(`${settings.apiUrl}/v1/zones`, {
    caCerts: access.caBundle ? [access.caBundle] : [],
    timeoutMs: access.timeoutMs,
  });
  const facts: CloudFacts = { reachability, capabilities: {} };
  if (!reachability.ok) return facts;
  facts.zones = await read(() => client.listZones());
  if (!facts.zones.ok) {
    const failure = facts.zones.failure;
    if (failure.status === 401 || failure.status === 403 || failure.kind === "invalid_answer") return facts;
  }
  const [servers, loadBalancers] = await Promise.all([
    read(async () => (await client.listServers()).items),
    read(async () =>
      (await client.listLoadBalancers()).items.map((lb) => ({
        id: lb.id,
        labels: lb.labels,
        name: lb.name,
        state: lb.state,
        created_at: lb.created_at,
        public_ipv4: lb.public_ipv4,
        public_ipv6: lb.public_ipv6,
        public_ipv6_addresses: lb.public_ipv6_addresses,
      }))
    ),
  ]);
  Object.assign(facts, { servers, loadBalancers });
  return facts;
}

/** The private networks new load balancers may sit on: every one with its members, or ANKRA_CLOUD_NETWORK_ID's. */
async function gatherNetworks(client: AnkraCloudClient, settings: DoctorSettings, facts: CloudFacts): Promise<void> {
  if (settings.networkId) {
    facts.configuredNetwork = await read(() => client.getNetwork(settings.networkId!));
    return;
  }
  facts.networks = await read(async () => {
    const listed = (await client.listNetworks()).items;
    return await Promise.all(listed.map((network): Promise<Network> => client.getNetwork(network.id)));
  });
}

/** Sends the operate probe; its refusal is the expected outcome. */
async function sendOperateProbe(client: AnkraCloudClient): Promise<ProbeOutcome> {
  try {
    const { loadBalancer } = await client.createLoadBalancer(OPERATE_PROBE);
    return { created: true, loadBalancerId: loadBalancer.id };
  } catch (cause) {
    return { created: false, failure: readFailure(cause) };
  }
}

interface LeaseDocument {
  metadata?: { name?: string; namespace?: string };
  spec?: {
    holderIdentity?: string;
    renewTime?: string;
    acquireTime?: string;
    leaseDurationSeconds?: number;
  };
}

async function getLease(kube: KubeClient, namespace: string, name: string): Promise<Fetched<LeaseFacts | null>> {
  try {
    const lease = await kube.get<LeaseDocument>(`/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`);
    return fetched({
      namespace,
      name,
      holder: lease.spec?.holderIdentity || undefined,
      renewTime: lease.spec?.renewTime,
      acquireTime: lease.spec?.acquireTime,
      durationSeconds: lease.spec?.leaseDurationSeconds,
    });
  } catch (cause) {
    if (cause instanceof KubeApiError && cause.kind === "not_found") return fetched(null);
    return failedRead(readFailure(cause));
  }
}

/**
 * A Service as the doctor keeps it: the controller's slim view (which drops other controllers' annotations),
 * MetalLB's allocation annotation, if it has one, and its pod selector.
 */
export function serviceFacts(service: V1Service): ServiceFacts {
  const facts: ServiceFacts = slimService(service);
  const annotations = service.metadata?.annotations ?? {};
  const key = METALLB_ALLOCATION_ANNOTATIONS.find((name) => annotations[name] !== undefined);
  if (key) facts.metalLbAllocation = `${key}=${annotations[key]}`;
  const selector = service.spec?.selector;
  if (selector && Object.keys(selector).length > 0) facts.selector = { ...selector };
  return facts;
}

/**
 * A pod as the doctor keeps it when it takes ports on its node's addresses (hostNetwork: every container port;
 * otherwise each hostPort; init containers that keep running, sidecars, count too); undefined for any other pod, for
 * one not scheduled yet and for one that has ended.
 */
export function hostPortPod(pod: V1Pod): HostPortPod | undefined {
  const nodeName = pod.spec?.nodeName;
  const phase = pod.status?.phase;
  if (!nodeName || phase === "Succeeded" || phase === "Failed") return undefined;
  const hostNetwork = pod.spec?.hostNetwork === true;
  const containers = [
    ...(pod.spec?.containers ?? []),
    ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === "Always"),
  ];
  const ports = containers.flatMap((c) => c.ports ?? []).flatMap((p) => {
    const port = hostNetwork ? (p.hostPort ?? p.containerPort) : p.hostPort;
    return port ? [{ port, protocol: (p.protocol || "TCP").toUpperCase() }] : [];
  });
  if (ports.length === 0) return undefined;
  return {
    namespace: pod.metadata?.namespace ?? "",
    name: pod.metadata?.name ?? "",
    nodeName,
    hostNetwork,
    labels: pod.metadata?.labels ?? {},
    ports,
  };
}

/** Everything the doctor reads from the Kubernetes API. */
async function gatherClusterFacts(access: ClusterAccess, settings: DoctorSettings): Promise<ClusterFacts> {
  const { client, connection } = access;
  const reachability = await checkReachable(`${connection.server}/version`, {
    caCerts: connection.caCerts,
    onlyGivenCa: true,
    clientCert: connection.clientCert,
  });
  const facts: ClusterFacts = { server: connection.server, source: connection.source, reachability, leases: {} };
  if (!reachability.ok) return facts;
  facts.identity = await read(async () => {
    try {
      const review = await client.request<{ status?: { userInfo?: { username?: string } } }>(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        { body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } },
      );
      return review.status?.userInfo?.username;
    } catch (cause) {
      // API servers before 1.28 do not serve SelfSubjectReview: the identity stays unknown.
      if (cause instanceof KubeApiError && cause.kind === "not_found") return undefined;
      throw cause;
    }
  });
  if (!facts.identity.ok && facts.identity.failure.status === 401) return facts;
  const leaseNames: [string, string][] = [
    [CLOUD_CONTROLLER_LEASE_NAMESPACE, UPSTREAM_CLOUD_CONTROLLER_LEASE],
    [CLOUD_CONTROLLER_LEASE_NAMESPACE, K3S_CLOUD_CONTROLLER_LEASE],
    [settings.leaseNamespace, settings.leaseName],
  ];
  const checks = accessChecks(settings);
  const [version, nodes, services, leases, reviews, clusterUid] = await Promise.all([
    read(async () => (await client.get<{ gitVersion?: string }>("/version")).gitVersion ?? "unknown"),
    read(async () => (await client.list<V1Node>("/api/v1/nodes")).items.map(slimNode)),
    read(async () => (await client.list<V1Service>("/api/v1/services")).items.map(serviceFacts)),
    Promise.all(
      leaseNames.map(async ([namespace, name]) => [namespace, name, await getLease(client, namespace, name)]),
    ),
    read(() =>
      Promise.all(checks.map(async (check): Promise<AccessAnswer> => {
        const review = await client.request<{ status?: { allowed?: boolean } }>(
          "POST",
          "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
          { body: selfSubjectAccessReview(check) },
        );
        return { check, allowed: review.status?.allowed === true };
      }))
    ),
    read(async () => {
      const uid = (await client.get<{ metadata?: { uid?: string } }>("/api/v1/namespaces/kube-system")).metadata?.uid;
      if (!uid) throw new Error("the kube-system namespace has no metadata.uid");
      return uid;
    }),
  ]);
  facts.version = version;
  facts.nodes = nodes;
  facts.services = services;
  facts.access = reviews;
  facts.clusterUid = clusterUid;
  for (const [namespace, name, lease] of leases as [string, string, Fetched<LeaseFacts | null>][]) {
    facts.leases[leaseKey(namespace, name)] = lease;
  }
  return facts;
}

/** Asks each zone's capabilities (once per zone). */
async function gatherCapabilities(client: AnkraCloudClient, zones: string[], facts: CloudFacts): Promise<void> {
  const answers = await Promise.all(zones.map((zone) => read(() => client.getZoneCapabilities(zone))));
  zones.forEach((zone, i) => facts.capabilities[zone] = answers[i]);
}

/**
 * Everything the doctor reads; `cloud`/`cluster` undefined when that side cannot be asked. The reads of the second
 * round depend on what the first says the setup needs (see the module documentation).
 */
export async function gatherFacts(
  settings: DoctorSettings,
  access: { cloud?: CloudAccess; cluster?: ClusterAccess },
): Promise<{ cloud?: CloudFacts; cluster?: ClusterFacts }> {
  const [cloud, cluster] = await Promise.all([
    access.cloud ? gatherCloudBase(access.cloud, settings) : undefined,
    access.cluster ? gatherClusterFacts(access.cluster, settings) : undefined,
  ]);
  const needs = needsFromFacts(settings, { cloud, cluster });
  const reads: Promise<unknown>[] = [];
  if (access.cloud && cloud?.servers) {
    const { client } = access.cloud;
    if (needs.operate.needed) reads.push(sendOperateProbe(client).then((probe) => (cloud.probe = probe)));
    if (needs.loadBalancer.needed) {
      const nodes = cluster?.nodes?.ok ? cluster.nodes.value : [];
      const servers = cloud.servers.ok ? cloud.servers.value : [];
      const zones = zonesToCheck(matchedServers(matchNodes(nodes, servers)).map((s) => s.zone), settings.zone);
      reads.push(gatherNetworks(client, settings, cloud), gatherCapabilities(client, zones.map((z) => z.name), cloud));
    }
  }
  if (access.cluster && cluster?.nodes && needs.nodeAddresses.needed) {
    const { client } = access.cluster;
    reads.push(
      read(async () => (await client.list<V1Pod>("/api/v1/pods")).items.flatMap((pod) => hostPortPod(pod) ?? []))
        .then((pods) => (cluster.pods = pods)),
    );
  }
  await Promise.all(reads);
  return { cloud, cluster };
}
