/**
 * What the service controller is handed, in one record: read-only views of the stores it reads, the one interface
 * its Service writes go through, where its events go, the Ankra operations it calls, the cluster's identity and the
 * settings of its passes. `controllers.ts` builds it over the informers, the API server and the Ankra client; the fast
 * tier's tests build it from plain objects and the in-process simulator. {@linkcode serviceControllerSettings} fills
 * in every default once, in the controller's constructor: the controller and its steps read only the complete record.
 *
 * @module
 */
import type { AnkraCloudClient } from "../../cloud/client.ts";
import type { CloudCallTarget } from "../cloud_call_executor.ts";
import type { CloudView } from "../node/cloud_view.ts";
import type { ReadyEndpoints } from "../../kube/endpoint_slices.ts";
import type { EventSink } from "../../kube/events.ts";
import type { ServiceWriter } from "../../kube/service_writes.ts";
import type { WatchedStore } from "../../kube/store.ts";
import type { SlimNode, SlimService } from "../../kube/slim.ts";
import type { AllowedResources } from "../../provider/service/allowed_resources.ts";
import type { LoadBalancerDefaults } from "../../provider/service/service_plan.ts";
import type { DryRunReport } from "../../runtime/dry_run.ts";
import type { MetricsRegistry } from "../../runtime/metrics.ts";
import { DEFAULTS } from "../../defaults.ts";
import {
  DEFAULT_RESERVED_PORTS,
  parseReservedPorts,
  type ReservedRange,
} from "../../provider/service/reserved_ports.ts";

/**
 * The Ankra Cloud operations the service controller and its steps call: the calls a plan sends
 * ({@linkcode CloudCallTarget}), the reads of load balancers, placement and edges, the request budget the tracker
 * paces by, and token changes.
 */
type ServiceCloud =
  & CloudCallTarget
  & Pick<
    AnkraCloudClient,
    | "listLoadBalancers"
    | "getLoadBalancer"
    | "getEdge"
    | "getZoneCapabilities"
    | "listNetworks"
    | "getNetwork"
    | "listServers"
    | "budget"
    | "onTokenChange"
  >;

/**
 * The account's servers as the shared cloud view knows them (`lib/controllers/node/cloud_view.ts`, listed every
 * `--server-list-period`): node-address mode reads their public addresses there, and follows their changes.
 */
export type ServerView = Pick<
  CloudView,
  "server" | "refresh" | "synced" | "onRefresh" | "plannedChange" | "leaving"
>;

/** The nodes holding ready endpoints of each Service (`externalTrafficPolicy: Local`), as the controller reads them. */
type EndpointsReader = Pick<ReadyEndpoints, "readyNodes" | "onChange" | "synced" | "hasSynced">;

/** Options of {@linkcode ServiceController}. */
export interface ServiceControllerOptions {
  /** Every write to Services (in a dry run: described in the report). */
  writes: ServiceWriter;
  /** The API server's `gitVersion` (whether it keeps an ingress `ipMode`), undefined when it cannot be read. */
  serverVersion: () => Promise<string | undefined>;
  /** The Ankra Cloud operations it calls. */
  cloud: ServiceCloud;
  /** The servers' public addresses (node-address mode), shared with the node controllers. */
  servers: ServerView;
  /** The Services, read-only, and their changes. */
  services: WatchedStore<SlimService>;
  /** The Nodes, read-only, and their changes. */
  nodes: WatchedStore<SlimNode>;
  /** `--cluster-name`. */
  clusterName: string;
  /** UID of the `kube-system` namespace: this cluster's load balancers carry it (`ccm.ankra.cloud/cluster-uid`). */
  clusterUid: string;
  /** `--load-balancer-class`: also handle Services of this class. */
  loadBalancerClass?: string;
  /** `--require-load-balancer-class`: handle only Services of that class (class-less ones are another's). */
  requireLoadBalancerClass?: boolean;
  /** Defaults for new load balancers. */
  defaults: LoadBalancerDefaults;
  /** What a Service may name (`ANKRA_CLOUD_ALLOWED_*`); absent: anything of the account. */
  allowedResources?: AllowedResources;
  /** Where events with source `service-controller` go (the framework's reasons). */
  serviceEvents: EventSink;
  /** Where events with source `ankra-cloud-ccm` go (this provider's notices). */
  providerEvents: EventSink;
  /** Workers (`--concurrent-service-syncs`). */
  workers: number;
  /** Set in a dry run: cloud calls are described there and never sent. */
  dryRun?: DryRunReport;
  /** Least time between polls of provisioning load balancers (default `DEFAULTS.provisioningPollMs`). */
  provisioningPollMs?: number;
  /** Drift check period in steady state (`--load-balancer-drift-period`, default `DEFAULTS.driftCheckMs`). */
  driftCheckMs?: number;
  /** How long a member the load balancer loses drains with weight 0 (`--member-drain-period`; default 0: at once). */
  memberDrainMs?: number;
  /** Window that gathers a burst of node changes into one update (default `DEFAULTS.nodeBatchMs`). */
  nodeBatchMs?: number;
  /** Error backoff base (default `DEFAULTS.retryBaseMs`). */
  retryBaseMs?: number;
  /** Where the controller's gauges and the work queue's metrics go. */
  metrics?: MetricsRegistry;
  /** Nodes holding ready endpoints of each Service, for `externalTrafficPolicy: Local` (all nodes without it). */
  endpoints?: EndpointsReader;
  /** Window that gathers endpoint moves of a Local Service into one member update (default `DEFAULTS.endpointBatchMs`). */
  endpointBatchMs?: number;
  /** Ports a node-address Service may not claim (`--node-address-reserved-ports`; default its default list). */
  reservedPorts?: ReservedRange[];
}

/** The options with every default filled in: what the controller and its steps read. */
export type ServiceControllerSettings =
  & Omit<ServiceControllerOptions, "requireLoadBalancerClass" | "allowedResources" | "reservedPorts" | TimingOption>
  & Required<
    Pick<ServiceControllerOptions, "requireLoadBalancerClass" | "allowedResources" | "reservedPorts" | TimingOption>
  >;

type TimingOption =
  | "provisioningPollMs"
  | "driftCheckMs"
  | "memberDrainMs"
  | "nodeBatchMs"
  | "retryBaseMs"
  | "endpointBatchMs";

/**
 * `options` with every default filled in from {@linkcode DEFAULTS} (a member drain of 0, no allow-lists, class-less
 * Services served, the default reserved ports), once.
 */
export function serviceControllerSettings(options: ServiceControllerOptions): ServiceControllerSettings {
  const {
    requireLoadBalancerClass = false,
    allowedResources = {},
    provisioningPollMs = DEFAULTS.provisioningPollMs,
    driftCheckMs = DEFAULTS.driftCheckMs,
    memberDrainMs = 0,
    nodeBatchMs = DEFAULTS.nodeBatchMs,
    retryBaseMs = DEFAULTS.retryBaseMs,
    endpointBatchMs = DEFAULTS.endpointBatchMs,
    reservedPorts = defaultReservedPorts(),
  } = options;
  return {
    ...options,
    requireLoadBalancerClass,
    allowedResources,
    provisioningPollMs,
    driftCheckMs,
    memberDrainMs,
    nodeBatchMs,
    retryBaseMs,
    endpointBatchMs,
    reservedPorts,
  };
}

function defaultReservedPorts(): ReservedRange[] {
  const parsed = parseReservedPorts(DEFAULT_RESERVED_PORTS);
  if (!parsed.ok) throw new Error(`the default reserved ports do not parse: ${parsed.rule}`);
  return parsed.ranges;
}
