/**
 * What the service controller is given: the stores it reads, where its writes go, the Ankra client, the cluster's
 * identity and the settings of its passes.
 *
 * @module
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import type { AnkraCloudClient } from "../cloud/client.ts";
import type { EventRecorder } from "../kube/events.ts";
import type { Informer } from "../kube/informer.ts";
import type { KubeWriteTarget } from "../kube/object_writes.ts";
import type { SlimNode, SlimService } from "../kube/slim.ts";
import type { AllowedResources } from "../provider/allowed_resources.ts";
import type { LoadBalancerDefaults } from "../provider/service_plan.ts";
import type { DryRunReport } from "../runtime/dry_run.ts";
import type { MetricsRegistry } from "../runtime/metrics.ts";
import type { ReadyEndpoints } from "../kube/endpoint_slices.ts";

/** The drift-check period when none is configured (10 minutes). */
export const DEFAULT_DRIFT_CHECK_MS = 600_000;

/** Options of {@linkcode ServiceController}. */
export interface ServiceControllerOptions {
  /** Where Kubernetes writes go (in a dry run: the report). */
  writes: KubeWriteTarget;
  /** Ankra Cloud client. */
  cloud: AnkraCloudClient;
  /** Services. */
  services: Informer<V1Service, SlimService>;
  /** Nodes. */
  nodes: Informer<V1Node, SlimNode>;
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
  /** Events with source `service-controller`. */
  serviceEvents: EventRecorder;
  /** Events with source `ankra-cloud-ccm`. */
  providerEvents: EventRecorder;
  /** Workers (`--concurrent-service-syncs`). */
  workers: number;
  /** Set in a dry run: cloud calls are described there and never sent. */
  dryRun?: DryRunReport;
  /** Least time between polls of provisioning load balancers (default 1 s). */
  provisioningPollMs?: number;
  /** Drift check period in steady state (`--load-balancer-drift-period`, default 10 min). */
  driftCheckMs?: number;
  /** How long a member the load balancer loses drains with weight 0 (`--member-drain-period`; default 0: at once). */
  memberDrainMs?: number;
  /** Window that gathers a burst of node changes into one update (default 1 s). */
  nodeBatchMs?: number;
  /** Error backoff base (default 5 s). */
  retryBaseMs?: number;
  /** Metrics. */
  metrics?: MetricsRegistry;
  /** Nodes holding ready endpoints of each Service, for `externalTrafficPolicy: Local` (all nodes without it). */
  endpoints?: ReadyEndpoints;
  /** Window that gathers endpoint moves of a Local Service into one member update (default 1 s). */
  endpointBatchMs?: number;
}
