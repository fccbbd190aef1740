/**
 * Where each Service's ready endpoints run: EndpointSlices (`discovery.k8s.io/v1`) watched into a slim store that
 * keeps, per slice, only its Service and the node names of its ready endpoints — no addresses, ports, hints or
 * topology — and an index from Service to its slices. {@linkcode ReadyEndpoints} answers "which nodes hold a ready
 * endpoint of this Service" and tells its listeners only when that node set changed, so a pod replaced on the same
 * node wakes nobody.
 *
 * @module
 */
import type { V1EndpointSlice } from "@kubernetes/client-node";
import type { KubeClient } from "./client.ts";
import type { ClusterInformerOptions } from "./cluster_informers.ts";
import { Informer } from "./informer.ts";
import type { IndexedSyncedStore, StoreIndex } from "./store.ts";
import * as log from "../log.ts";
import { objectKey } from "./object_key.ts";

/** The label linking an EndpointSlice to its Service. */
const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/** The fields of an EndpointSlice the controllers read. */
export interface SlimEndpointSlice {
  /** The namespace of the slice, and so of its Service. */
  namespace: string;
  /** Usually `<service>-<suffix>`, made by Kubernetes; a Service may have several slices. */
  name: string;
  /** `metadata.resourceVersion` (`""` when absent); the informer resumes its watch from the last one. */
  resourceVersion: string;
  /** `<namespace>/<name>` of its Service; undefined for a slice without the Service label. */
  service?: string;
  /** Node names of its ready endpoints, sorted, without duplicates. */
  readyNodes: string[];
}

/**
 * The slim copy of an EndpointSlice. An endpoint counts as ready unless its `ready` condition is `false` (the API
 * asks consumers to read an unknown state as ready); an endpoint without a node name is not counted.
 */
export function slimEndpointSlice(slice: V1EndpointSlice): SlimEndpointSlice {
  const namespace = slice.metadata!.namespace!;
  const serviceName = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
  const nodes = new Set<string>();
  for (const endpoint of slice.endpoints ?? []) {
    if (endpoint.nodeName && endpoint.conditions?.ready !== false) nodes.add(endpoint.nodeName);
  }
  return {
    namespace,
    name: slice.metadata!.name!,
    resourceVersion: slice.metadata!.resourceVersion ?? "",
    service: serviceName ? `${namespace}/${serviceName}` : undefined,
    readyNodes: [...nodes].sort(),
  };
}

/** The index of EndpointSlices by their Service (`<namespace>/<name>`), which {@linkcode ReadyEndpoints} reads. */
export const SLICES_BY_SERVICE: StoreIndex<SlimEndpointSlice> = {
  name: "service",
  valuesOf: (slice) => slice.service ? [slice.service] : [],
};

/** An informer of all EndpointSlices, indexed by their Service ({@linkcode SLICES_BY_SERVICE}). */
export function endpointSliceInformer(
  client: KubeClient,
  options: ClusterInformerOptions = {},
): Informer<V1EndpointSlice, SlimEndpointSlice> {
  const informer = new Informer<V1EndpointSlice, SlimEndpointSlice>({
    name: "endpointslices",
    client,
    path: "/apis/discovery.k8s.io/v1/endpointslices",
    slim: slimEndpointSlice,
    keyOf: objectKey,
    ...options,
  });
  informer.addIndex(SLICES_BY_SERVICE);
  return informer;
}

function sameNodes(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((node) => b.has(node));
}

/** The nodes holding ready endpoints of each Service, from an EndpointSlice informer. */
export class ReadyEndpoints {
  readonly #slices: IndexedSyncedStore<SlimEndpointSlice>;
  /** Last node set told to listeners, by Service. */
  readonly #told = new Map<string, ReadonlySet<string>>();
  readonly #listeners: ((service: string) => void)[] = [];

  /** Listens to the changes of `slices`, a store indexed by {@linkcode SLICES_BY_SERVICE}. */
  constructor(slices: IndexedSyncedStore<SlimEndpointSlice>) {
    this.#slices = slices;
    slices.onChange((change) => {
      const services = new Set<string>();
      if (change.type !== "added" && change.old.service) services.add(change.old.service);
      if (change.type !== "deleted" && change.object.service) services.add(change.object.service);
      for (const service of services) this.#changed(service);
    });
  }

  /** True once the first list of EndpointSlices is in. */
  get hasSynced(): boolean {
    return this.#slices.hasSynced;
  }

  /** Resolves after the first list of EndpointSlices. */
  get synced(): Promise<void> {
    return this.#slices.synced;
  }

  /** Calls `listener` with the Service key whenever the nodes holding its ready endpoints change. */
  onChange(listener: (service: string) => void): void {
    this.#listeners.push(listener);
  }

  /** The nodes holding a ready endpoint of the Service `<namespace>/<name>`; undefined before the first list. */
  readyNodes(service: string): ReadonlySet<string> | undefined {
    if (!this.#slices.hasSynced) return undefined;
    const nodes = new Set<string>();
    for (const slice of this.#slices.store.byIndex(SLICES_BY_SERVICE.name, service)) {
      for (const node of slice.readyNodes) nodes.add(node);
    }
    return nodes;
  }

  #changed(service: string): void {
    const nodes = this.readyNodes(service) ?? new Set<string>();
    const told = this.#told.get(service);
    if (told && sameNodes(told, nodes)) return;
    if (nodes.size === 0) this.#told.delete(service);
    else this.#told.set(service, nodes);
    if (!told && nodes.size === 0) return;
    for (const listener of this.#listeners) listener(service);
  }
}

/**
 * Waits until the EndpointSlices are listed, at most `timeoutMs` (default 10 s) or until `signal` aborts; when they
 * are not, logs a warning (Local Services are then served by every node until they are) and returns.
 */
export async function waitForEndpoints(
  endpoints: Pick<ReadyEndpoints, "synced" | "hasSynced">,
  signal: AbortSignal,
  timeoutMs = 10_000,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => timer = setTimeout(resolve, timeoutMs));
  const aborted = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  try {
    await Promise.race([endpoints.synced, timeout, aborted]);
  } finally {
    clearTimeout(timer);
  }
  if (!endpoints.hasSynced && !signal.aborted) {
    log.warn(
      "EndpointSlices are not listed yet; Services with externalTrafficPolicy: Local are served by every node until " +
        "they are (does the controller's ClusterRole allow list and watch endpointslices in discovery.k8s.io?)",
      { waitedSeconds: timeoutMs / 1000 },
    );
  }
}
