/**
 * The service controller, rebuilt for Ankra load balancers (dedicated mode): a Service of `type: LoadBalancer`
 * without a `loadBalancerClass` (or with the configured one) gets the finalizer before any cloud create, then one
 * Ankra load balancer named, labelled and shaped as the Go controller does it; the Service's status lists every public
 * IPv6 address of the load balancer, then its IPv4. Node changes that matter update the members within about a second
 * (one replace per backend for a burst). Deleting the Service deletes the load balancer, waits until it is gone, then
 * removes the finalizer.
 *
 * Better than the reference: the load balancer is found by the API's label filter and remembered (no listing of the
 * whole account per pass); steady state makes no writes and only a periodic drift check; while a load balancer is
 * `creating` it is looked at every two seconds, not on the error backoff; provider events are recorded when the
 * situation appears or changes, not on every pass; an invalid annotation is reported once and nothing is changed;
 * a missing `network_id` is taken from the network every node shares, or reported clearly.
 *
 * Edge mode (`load-balancer.ankra.cloud/edge`): the Service's members live on a combined edge's `load_balancer` role,
 * named by the Service's prefix; other members are never touched; a port another member already serves is refused
 * with a clear event. The edge in use is recorded in the Service annotation `ccm.ankra.cloud/edge`, so leaving edge
 * mode (annotation removed or changed, or the Service deleted) removes the Service's members from the old edge — the
 * Go controller leaves them behind. An edge without an address yet is not reported as ready.
 *
 * @module
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import type { AnkraCloudClient, LoadBalancer, Network } from "../cloud/client.ts";
import { CloudApiError, isNotFound } from "../cloud/errors.ts";
import type { KubeClient } from "../kube/client.ts";
import type { EventRecorder, EventType, ObjectReference } from "../kube/events.ts";
import type { Informer } from "../kube/informer.ts";
import { updateObject } from "../kube/object_writes.ts";
import { EDGE_IN_USE_ANNOTATION, type SlimNode, type SlimService } from "../kube/slim.ts";
import { edgeIngress, edgeMembersPlan, edgeMembersWithout, isCombinedLoadBalancerEdge } from "../provider/edge_plan.ts";
import { parseIp, parsePrefix, prefixContains } from "../ip_address.ts";
import * as log from "../log.ts";
import { describeProblems, type LoadBalancerSettings, parseAnnotations } from "../provider/annotations.ts";
import {
  CLUSTER_LABEL,
  edgeMemberName,
  edgeMemberPrefix,
  loadBalancerLabels,
  loadBalancerName,
  memberName,
  SERVICE_LABEL,
} from "../provider/load_balancer_names.ts";
import {
  chooseZone,
  eligibleNodes,
  frontendSettings,
  listenerSteps,
  loadBalancerIngress,
  memberAddresses,
  membersDiffer,
  type NamedMember,
  portPlan,
  sameIngress,
  serviceFamilies,
} from "../provider/load_balancer_plan.ts";
import type { MetricsRegistry } from "../runtime/metrics.ts";
import { whenAborted } from "../runtime/abort.ts";
import { type ReconcileResult, WorkQueue } from "../runtime/work_queue.ts";
import type { HighAvailabilityMode } from "../config.ts";

/** Members a backend may hold (`replace_load_balancer_members` maxItems). */
export const MAX_MEMBERS = 256;

/** The finalizer the framework's service controller uses. */
export const FINALIZER = "service.kubernetes.io/load-balancer-cleanup";

/** Options of {@linkcode ServiceController}. */
export interface ServiceControllerOptions {
  kube: KubeClient;
  cloud: AnkraCloudClient;
  services: Informer<V1Service, SlimService>;
  nodes: Informer<V1Node, SlimNode>;
  /** `--cluster-name`. */
  clusterName: string;
  /** `--load-balancer-class`: also handle Services of this class. */
  loadBalancerClass?: string;
  /** `ANKRA_CLOUD_NETWORK_ID`, `ANKRA_CLOUD_ZONE`, `ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY`. */
  defaults: { networkId?: string; zone?: string; highAvailability: HighAvailabilityMode };
  /** Events with source `service-controller`. */
  serviceEvents: EventRecorder;
  /** Events with source `ankra-cloud-ccm`. */
  providerEvents: EventRecorder;
  /** Workers (`--concurrent-service-syncs`). */
  workers: number;
  /** Look again this often while a load balancer provisions or is deleted (default 2 s). */
  provisioningPollMs?: number;
  /** Drift check period in steady state (default 10 min). */
  driftCheckMs?: number;
  /** Window that gathers a burst of node changes into one update (default 1 s). */
  nodeBatchMs?: number;
  /** Error backoff base (default 5 s). */
  retryBaseMs?: number;
  /** Metrics. */
  metrics?: MetricsRegistry;
}

class ServiceProblem extends Error {}

function reference(service: SlimService): ObjectReference {
  return { kind: "Service", apiVersion: "v1", name: service.name, namespace: service.namespace, uid: service.uid };
}

function servicePath(service: { namespace: string; name: string }, status = false): string {
  return `/api/v1/namespaces/${encodeURIComponent(service.namespace)}/services/${encodeURIComponent(service.name)}${
    status ? "/status" : ""
  }`;
}

/** The service load balancer controller. */
export class ServiceController {
  /** Name for logs. */
  readonly name = "service";
  readonly #o: ServiceControllerOptions;
  readonly #queue: WorkQueue;
  readonly #lbIds = new Map<string, string>();
  readonly #reported = new Map<string, Map<string, string>>();
  #networks?: { at: number; list: Network[] };

  /** Creates the controller. */
  constructor(options: ServiceControllerOptions) {
    this.#o = options;
    this.#queue = new WorkQueue({
      name: "service",
      concurrency: options.workers,
      baseDelayMs: options.retryBaseMs ?? 5_000,
      metrics: options.metrics,
    });
  }

  #wants(service: SlimService): boolean {
    return service.type === "LoadBalancer" &&
      (!service.loadBalancerClass || service.loadBalancerClass === this.#o.loadBalancerClass);
  }

  #relevant(service: SlimService): boolean {
    return this.#wants(service) || service.finalizers.includes(FINALIZER);
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { services, nodes } = this.#o;
    const key = (s: SlimService) => `${s.namespace}/${s.name}`;
    services.onChange((change) => {
      if (signal.aborted || change.type === "deleted") return;
      if (this.#relevant(change.object)) this.#queue.add(change.key);
    });
    nodes.onChange((change) => {
      if (signal.aborted) return;
      if (change.type === "updated" && !nodeChangeMatters(change.old, change.object)) return;
      for (const service of services.store.list()) {
        if (this.#wants(service)) this.#queue.addAfter(key(service), this.#o.nodeBatchMs ?? 1_000);
      }
    });
    for (const service of services.store.list()) if (this.#relevant(service)) this.#queue.add(key(service));
    this.#queue.start((k) => this.reconcile(k));
    await whenAborted(signal);
    await this.#queue.shutdown();
  }

  /** Records an event once per situation: repeated only when the message changes. */
  #reportOnce(
    service: SlimService,
    topic: string,
    events: EventRecorder,
    type: EventType,
    reason: string,
    message?: string,
  ) {
    const seen = this.#reported.get(service.uid) ?? new Map<string, string>();
    this.#reported.set(service.uid, seen);
    if (message === undefined) {
      seen.delete(topic);
      return;
    }
    if (seen.get(topic) === message) return;
    seen.set(topic, message);
    events.event(reference(service), type, reason, message);
  }

  /** Reconciles one Service. */
  async reconcile(key: string): Promise<ReconcileResult> {
    const service = this.#o.services.store.get(key);
    if (!service) return;
    try {
      if (service.deletionTimestamp || !this.#wants(service)) {
        if (service.finalizers.includes(FINALIZER)) return await this.#cleanup(service);
        return;
      }
      return await this.#ensure(service);
    } catch (cause) {
      const message = cause instanceof Error ? cause.message : String(cause);
      this.#o.serviceEvents.event(
        reference(service),
        "Warning",
        "SyncLoadBalancerFailed",
        `Error syncing load balancer: ${message}`,
      );
      if (cause instanceof ServiceProblem) return; // waits for the user: the Service's next change wakes it
      throw cause;
    }
  }

  async #ensure(service: SlimService): Promise<ReconcileResult> {
    const o = this.#o;
    const parsed = parseAnnotations(service.annotations, { sessionAffinity: service.sessionAffinity });
    if (!parsed.ok) {
      this.#reportOnce(
        service,
        "annotations",
        o.providerEvents,
        "Warning",
        "InvalidAnnotation",
        `${describeProblems(parsed.problems)}; nothing is created or changed until it is fixed`,
      );
      return;
    }
    this.#reportOnce(service, "annotations", o.providerEvents, "Warning", "InvalidAnnotation", undefined);
    const settings = parsed.settings;
    const ports = portPlan(service);
    this.#reportOnce(
      service,
      "ports",
      o.providerEvents,
      "Warning",
      "UnsupportedPort",
      ports.unsupported.length
        ? `Ankra load balancers forward TCP only; not forwarding ${ports.unsupported.join(", ")}`
        : undefined,
    );
    const unsupported: string[] = [];
    if (service.loadBalancerSourceRanges.length > 0) {
      unsupported.push(
        `spec.loadBalancerSourceRanges (${service.loadBalancerSourceRanges.join(", ")}) is not enforced: Ankra load ` +
          "balancers accept every source; filter on the nodes (NetworkPolicy or firewall) instead",
      );
    }
    if (service.externalTrafficPolicy === "Local") {
      unsupported.push(
        "externalTrafficPolicy: Local is not honoured: every eligible node is a member and client addresses are not " +
          "preserved",
      );
    }
    this.#reportOnce(
      service,
      "settings",
      o.providerEvents,
      "Warning",
      "UnsupportedSetting",
      unsupported.length ? unsupported.join("; ") : undefined,
    );
    if (ports.withoutNodePort.length) {
      throw new ServiceProblem(
        `port ${ports.withoutNodePort.join(", ")} has no NodePort; the load balancer forwards to NodePorts, so ` +
          "spec.allocateLoadBalancerNodePorts must not be false",
      );
    }
    await this.#addFinalizer(service);
    const nodes = eligibleNodes(o.nodes.store.list());
    if (nodes.length === 0) {
      o.serviceEvents.event(
        reference(service),
        "Warning",
        "UnAvailableLoadBalancer",
        "There are no available nodes for LoadBalancer",
      );
    }
    const recordedEdge = service.annotations[EDGE_IN_USE_ANNOTATION];
    if (recordedEdge && recordedEdge !== settings.edgeId) await this.#leaveEdge(service, recordedEdge);
    if (settings.edgeId) return await this.#ensureEdge(service, settings.edgeId, ports.tcp, nodes);
    let found = await this.#find(service, { adopt: true });
    let wrote = false;
    if (!found) {
      o.serviceEvents.event(reference(service), "Normal", "EnsuringLoadBalancer", "Ensuring load balancer");
      found = { lb: await this.#create(service, settings, nodes), full: false };
      wrote = true;
    }
    const lb = found.full ? found.lb : await o.cloud.getLoadBalancer(found.lb.id);
    if (lb.state === "deleting") {
      throw new Error(`load balancer ${lb.id} is being deleted; a new one is created once it is gone`);
    }
    this.#reportImmutable(service, lb, settings);
    const created = wrote;
    const listeners = await this.#applyListeners(service, lb, settings, ports.tcp, nodes);
    wrote = listeners.wrote || wrote;
    if (listeners.membersReplaced && !created) {
      o.serviceEvents.event(
        reference(service),
        "Normal",
        "UpdatedLoadBalancer",
        "Updated load balancer with new hosts",
      );
    }
    const ingress = loadBalancerIngress(lb);
    if (ingress.length === 0) {
      log.info(2, "load balancer has no address yet", {
        service: `${service.namespace}/${service.name}`,
        state: lb.state,
      });
      return { requeueAfterMs: o.provisioningPollMs ?? 2_000 };
    }
    if (await this.#writeIngress(service, ingress)) wrote = true;
    if (wrote) o.serviceEvents.event(reference(service), "Normal", "EnsuredLoadBalancer", "Ensured load balancer");
    return { requeueAfterMs: lb.state === "running" ? (o.driftCheckMs ?? 600_000) : (o.provisioningPollMs ?? 2_000) };
  }

  #reportImmutable(service: SlimService, lb: LoadBalancer, settings: LoadBalancerSettings): void {
    const o = this.#o;
    const wantedNetwork = settings.networkId ?? o.defaults.networkId;
    const problems: string[] = [];
    if (wantedNetwork && lb.network_id && wantedNetwork !== lb.network_id) {
      problems.push(
        `load balancer ${lb.id} is on network ${lb.network_id}, not the requested ${wantedNetwork}; the network is ` +
          "chosen at creation: recreate the Service to move it",
      );
    }
    if (settings.ipv4 && !lb.public_ipv4 && lb.state === "running") {
      problems.push(
        `load balancer ${lb.id} has no public IPv4 although load-balancer.ankra.cloud/ipv4 asks for one; IPv4 is ` +
          "honoured at creation: recreate the Service to add it",
      );
    }
    this.#reportOnce(
      service,
      "immutable",
      o.providerEvents,
      "Warning",
      "ImmutableSetting",
      problems.length ? problems.join("; ") : undefined,
    );
  }

  async #applyListeners(
    service: SlimService,
    lb: LoadBalancer,
    settings: LoadBalancerSettings,
    ports: { port: number; nodePort: number }[],
    nodes: SlimNode[],
  ): Promise<{ wrote: boolean; membersReplaced: boolean }> {
    const { cloud } = this.#o;
    const backends = new Map(lb.backends.map((b) => [b.name, b]));
    const families = serviceFamilies(service);
    const all = memberAddresses(nodes, families);
    // A backend holds at most 256 members (the API's limit): keep the first 256 and say so.
    const addresses = all.slice(0, MAX_MEMBERS);
    this.#reportOnce(
      service,
      "members",
      this.#o.providerEvents,
      "Warning",
      "TooManyMembers",
      all.length > MAX_MEMBERS
        ? `a load balancer backend holds at most ${MAX_MEMBERS} members; ${all.length - MAX_MEMBERS} of ` +
          `${all.length} node addresses are left out: label nodes with ` +
          "node.kubernetes.io/exclude-from-external-load-balancers=true to choose which serve"
        : undefined,
    );
    let wrote = false;
    let membersReplaced = false;
    for (const step of listenerSteps(lb, ports, settings)) {
      switch (step.kind) {
        case "delete-frontend":
          await cloud.deleteFrontend(lb.id, step.frontendId).catch(ignoreNotFound);
          break;
        case "create-backend": {
          const backend = await cloud.createBackend(lb.id, {
            name: step.name,
            mode: settings.protocol,
            balance: settings.balance,
            health_check: settings.healthCheck,
          });
          backends.set(backend.name, backend);
          break;
        }
        case "update-backend": {
          const backend = await cloud.updateBackend(lb.id, step.backendId, {
            balance: settings.balance,
            health_check: settings.healthCheck,
          });
          backends.set(backend.name, backend);
          break;
        }
        case "replace-members": {
          const backend = backends.get(step.backendName)!;
          const desired: NamedMember[] = await Promise.all(
            addresses.map(async (m) => ({
              name: await memberName(m.node, m.address),
              address: m.address,
              port: step.port,
            })),
          );
          if (!membersDiffer(backend.members, desired)) continue;
          await cloud.replaceMembers(lb.id, backend.id, desired);
          membersReplaced = true;
          log.info(1, "replaced load balancer members", {
            loadBalancer: lb.id,
            backend: backend.name,
            members: desired.length,
          });
          break;
        }
        case "create-frontend":
          await cloud.createFrontend(lb.id, {
            name: step.name,
            port: step.port,
            backend_id: backends.get(step.name)!.id,
            ...frontendSettings(step.port, settings),
          });
          break;
        case "delete-backend":
          await cloud.deleteBackend(lb.id, step.backendId).catch(ignoreNotFound);
          break;
      }
      wrote = true;
    }
    return { wrote, membersReplaced };
  }

  async #addFinalizer(service: SlimService): Promise<void> {
    if (service.finalizers.includes(FINALIZER)) return;
    await updateObject<V1Service>(this.#o.kube, servicePath(service), (current) => {
      const finalizers = current.metadata?.finalizers ?? [];
      return finalizers.includes(FINALIZER) ? undefined : { metadata: { finalizers: [...finalizers, FINALIZER] } };
    });
  }

  /**
   * The Service's load balancer: remembered id, then the label filter, then (unless `byName` is false) an unlabelled
   * one with the Service's name, adopted when `adopt`. Only the last step lists every load balancer of the account,
   * so it runs before a create and on deletion, never in steady state.
   */
  async #find(
    service: SlimService,
    options: { adopt: boolean; byName?: boolean },
  ): Promise<{ lb: LoadBalancer; full: boolean } | undefined> {
    const { cloud, clusterName } = this.#o;
    const key = `${service.namespace}/${service.name}`;
    const labels = loadBalancerLabels(clusterName, service.namespace, service.name);
    const remembered = this.#lbIds.get(key);
    if (remembered) {
      try {
        const lb = await cloud.getLoadBalancer(remembered);
        if (lb.labels[SERVICE_LABEL] === key && lb.labels[CLUSTER_LABEL] === clusterName) return { lb, full: true };
      } catch (cause) {
        if (!isNotFound(cause)) throw cause;
      }
      this.#lbIds.delete(key);
    }
    const labelled = await cloud.listLoadBalancers({ labels });
    if (labelled.length > 0) {
      this.#lbIds.set(key, labelled[0].id);
      return { lb: labelled[0], full: false };
    }
    if (options.byName === false) return undefined;
    const name = await loadBalancerName(clusterName, service.namespace, service.name);
    const orphan = (await cloud.listLoadBalancers()).find((lb) => lb.name === name && !lb.labels[SERVICE_LABEL]);
    if (!orphan) return undefined;
    if (options.adopt) {
      await cloud.updateLoadBalancer(orphan.id, { labels: { ...orphan.labels, ...labels } });
      log.info(1, "adopted load balancer", { service: key, loadBalancer: orphan.id });
    }
    this.#lbIds.set(key, orphan.id);
    return { lb: orphan, full: false };
  }

  async #networkFor(settings: LoadBalancerSettings, nodes: SlimNode[]): Promise<string> {
    const explicit = settings.networkId ?? this.#o.defaults.networkId;
    if (explicit) return explicit;
    if (!this.#networks || performance.now() - this.#networks.at > 600_000) {
      this.#networks = { at: performance.now(), list: await this.#o.cloud.listNetworks() };
    }
    const ids = new Set<string>();
    for (const node of nodes) {
      const internal = node.addresses.filter((a) => a.type === "InternalIP").map((a) => parseIp(a.address))
        .filter((ip) => ip?.family === 4);
      const network = this.#networks.list.find((n) => {
        const prefix = parsePrefix(n.cidr);
        return prefix && internal.some((ip) => prefixContains(prefix, ip!));
      });
      ids.add(network?.id ?? "");
    }
    if (ids.size === 1 && !ids.has("")) return [...ids][0];
    throw new ServiceProblem(
      "no private network for the load balancer: the nodes do not share one Ankra private network; set the " +
        "load-balancer.ankra.cloud/network-id annotation or ANKRA_CLOUD_NETWORK_ID",
    );
  }

  async #create(service: SlimService, settings: LoadBalancerSettings, nodes: SlimNode[]): Promise<LoadBalancer> {
    const o = this.#o;
    const key = `${service.namespace}/${service.name}`;
    const zone = chooseZone(settings, o.defaults.zone, nodes);
    if (!zone) {
      throw new ServiceProblem(
        "no zone for the load balancer: set the load-balancer.ankra.cloud/zone annotation or ANKRA_CLOUD_ZONE, or " +
          "label the nodes with topology.kubernetes.io/zone",
      );
    }
    const networkId = await this.#networkFor(settings, nodes);
    let highAvailability = true;
    let singleReason = "";
    if (o.defaults.highAvailability === "false") {
      highAvailability = false;
      singleReason = "ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY is false";
    } else if (o.defaults.highAvailability === "auto") {
      try {
        const capabilities = await o.cloud.getZoneCapabilities(zone);
        if (!capabilities.features.load_balancer_ha) {
          highAvailability = false;
          singleReason = `zone ${zone} is at growth stage ${capabilities.stage} with ` +
            `${capabilities.compute_nodes ?? capabilities.servers} compute node(s) and cannot place a pair on ` +
            "different compute nodes";
        }
      } catch (cause) {
        const unknown = cause instanceof CloudApiError && [401, 403, 404, 405].includes(cause.status ?? 0);
        if (!unknown) throw new Error(`get the capabilities of zone ${zone}: ${(cause as Error).message}`);
      }
    }
    const name = await loadBalancerName(o.clusterName, service.namespace, service.name);
    const labels = loadBalancerLabels(o.clusterName, service.namespace, service.name);
    let created: LoadBalancer;
    try {
      created = (await o.cloud.createLoadBalancer({
        zone,
        name,
        network_id: networkId,
        labels,
        ...(highAvailability ? {} : { high_availability: false }),
        public_ipv4: settings.ipv4,
      })).loadBalancer;
    } catch (cause) {
      if (cause instanceof CloudApiError && cause.reason?.startsWith("idempotency_key_")) {
        const found = await this.#find(service, { adopt: true });
        if (found) return found.lb;
      }
      throw new Error(`create load balancer ${name}: ${(cause as Error).message}`);
    }
    if (!Object.entries(labels).every(([k, v]) => created.labels[k] === v)) {
      await o.cloud.updateLoadBalancer(created.id, { labels: { ...created.labels, ...labels } });
    }
    this.#lbIds.set(key, created.id);
    log.info(0, "created load balancer", {
      service: key,
      loadBalancer: created.id,
      zone,
      highAvailability,
      publicIPv4: settings.ipv4,
    });
    if (!highAvailability) {
      o.providerEvents.event(
        reference(service),
        "Normal",
        "SingleNodeLoadBalancer",
        `load balancer ${created.id} runs as a single VM without failover (high_availability: false): ${singleReason}. ` +
          "It stays single when the zone grows; recreate the Service to get a pair.",
      );
    }
    return created;
  }

  /** Writes `status.loadBalancer.ingress` when it differs; true when it wrote. */
  async #writeIngress(service: SlimService, ingress: { ip: string }[]): Promise<boolean> {
    if (sameIngress(service.ingress, ingress)) return false;
    await this.#o.kube.request("PATCH", servicePath(service, true), {
      patch: "merge",
      body: { status: { loadBalancer: { ingress } } },
    });
    return true;
  }

  async #recordEdge(service: SlimService, edgeId: string | null): Promise<void> {
    await this.#o.kube.request("PATCH", servicePath(service), {
      patch: "merge",
      body: { metadata: { annotations: { [EDGE_IN_USE_ANNOTATION]: edgeId } } },
    });
  }

  /** Removes the Service's members from an edge it no longer uses, then forgets that edge. */
  async #leaveEdge(service: SlimService, edgeId: string): Promise<void> {
    const { cloud, clusterName } = this.#o;
    const prefix = await edgeMemberPrefix(clusterName, service.namespace, service.name);
    try {
      const edge = await cloud.getEdge(edgeId);
      const rest = edgeMembersWithout(edge, prefix);
      if (rest) {
        await cloud.updateEdge(edgeId, { members: rest }).catch(ignoreNotFound);
        log.info(1, "removed the Service's members from its former edge", {
          service: `${service.namespace}/${service.name}`,
          edge: edgeId,
        });
      }
    } catch (cause) {
      if (!isNotFound(cause)) throw cause;
    }
    if (!service.deletionTimestamp) await this.#recordEdge(service, null);
  }

  async #ensureEdge(
    service: SlimService,
    edgeId: string,
    ports: { port: number; nodePort: number }[],
    nodes: SlimNode[],
  ): Promise<ReconcileResult> {
    const o = this.#o;
    let edge;
    try {
      edge = await o.cloud.getEdge(edgeId);
    } catch (cause) {
      if (isNotFound(cause)) {
        throw new ServiceProblem(`edge ${edgeId} (load-balancer.ankra.cloud/edge) does not exist in the account`);
      }
      throw cause;
    }
    if (!isCombinedLoadBalancerEdge(edge)) {
      throw new ServiceProblem(
        `edge ${edgeId} is not a combined edge with the load_balancer role; drop the edge annotation to use a ` +
          "dedicated load balancer",
      );
    }
    const prefix = await edgeMemberPrefix(o.clusterName, service.namespace, service.name);
    const addresses = memberAddresses(nodes, serviceFamilies(service));
    const wanted = [];
    for (const port of ports) {
      for (const member of addresses) {
        wanted.push({
          name: await edgeMemberName(prefix, port.port, member.address, port.nodePort),
          frontend_port: port.port,
          address: member.address,
          port: port.nodePort,
          weight: 100,
          enabled: true,
        });
      }
    }
    const plan = edgeMembersPlan(edge, prefix, wanted);
    if (!plan.ok) throw new ServiceProblem(plan.conflict);
    let wrote = false;
    if (service.annotations[EDGE_IN_USE_ANNOTATION] !== edgeId) {
      await this.#recordEdge(service, edgeId);
      wrote = true;
    }
    if (plan.changed) {
      edge = (await o.cloud.updateEdge(edgeId, { members: plan.members })).edge;
      log.info(1, "updated edge members", {
        edge: edgeId,
        service: `${service.namespace}/${service.name}`,
        members: wanted.length,
      });
      wrote = true;
    }
    // A dedicated load balancer the Service had before (labelled, as every one this controller makes) is retired.
    const dedicated = (await this.#find(service, { adopt: false, byName: false }))?.lb;
    if (dedicated && dedicated.state !== "deleting") {
      o.serviceEvents.event(reference(service), "Normal", "DeletingLoadBalancer", "Deleting load balancer");
      await o.cloud.deleteLoadBalancer(dedicated.id).catch(ignoreNotFound);
      this.#lbIds.delete(`${service.namespace}/${service.name}`);
      wrote = true;
    }
    const ingress = edgeIngress(edge);
    if (ingress.length === 0) return { requeueAfterMs: o.provisioningPollMs ?? 2_000 };
    if (await this.#writeIngress(service, ingress)) wrote = true;
    if (wrote) o.serviceEvents.event(reference(service), "Normal", "EnsuredLoadBalancer", "Ensured load balancer");
    return { requeueAfterMs: o.driftCheckMs ?? 600_000 };
  }

  async #cleanup(service: SlimService): Promise<ReconcileResult> {
    const o = this.#o;
    const recordedEdge = service.annotations[EDGE_IN_USE_ANNOTATION];
    if (recordedEdge) await this.#leaveEdge(service, recordedEdge);
    const lb = (await this.#find(service, { adopt: false }))?.lb;
    if (lb) {
      if (lb.state !== "deleting") {
        o.serviceEvents.event(reference(service), "Normal", "DeletingLoadBalancer", "Deleting load balancer");
        await o.cloud.deleteLoadBalancer(lb.id).catch(ignoreNotFound);
        log.info(1, "deleting load balancer", { service: `${service.namespace}/${service.name}`, loadBalancer: lb.id });
      }
      return { requeueAfterMs: o.provisioningPollMs ?? 2_000 };
    }
    await updateObject<V1Service>(o.kube, servicePath(service), (current) => {
      const finalizers = current.metadata?.finalizers ?? [];
      return finalizers.includes(FINALIZER)
        ? { metadata: { finalizers: finalizers.filter((f) => f !== FINALIZER) } }
        : undefined;
    });
    if (!service.deletionTimestamp && service.ingress.length > 0) {
      await o.kube.request("PATCH", servicePath(service, true), {
        patch: "merge",
        body: { status: { loadBalancer: { ingress: null } } },
      }).catch(() => {});
    }
    this.#lbIds.delete(`${service.namespace}/${service.name}`);
    this.#reported.delete(service.uid);
    o.serviceEvents.event(reference(service), "Normal", "DeletedLoadBalancer", "Deleted load balancer");
  }
}

function ignoreNotFound(cause: unknown): void {
  if (!isNotFound(cause)) throw cause;
}

/** True when a node change can change a load balancer's members. */
export function nodeChangeMatters(old: SlimNode, node: SlimNode): boolean {
  return old.providerID !== node.providerID ||
    Boolean(old.deletionTimestamp) !== Boolean(node.deletionTimestamp) ||
    old.labels["node.kubernetes.io/exclude-from-external-load-balancers"] !==
      node.labels["node.kubernetes.io/exclude-from-external-load-balancers"] ||
    old.taints.some((t) => t.key === "ToBeDeletedByClusterAutoscaler") !==
      node.taints.some((t) => t.key === "ToBeDeletedByClusterAutoscaler") ||
    JSON.stringify(old.addresses) !== JSON.stringify(node.addresses);
}
