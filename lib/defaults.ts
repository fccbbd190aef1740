/**
 * Every internal default of the controller's timing and sizes, in one table: what a piece uses when it is not told
 * otherwise (tests and benchmarks pass shorter ones). The defaults a user can change are flags
 * (`lib/config/options.ts`, with their own defaults there); these are the ones only code can change.
 * tests/unit/config/defaults_test.ts checks that no module writes such a number inline instead.
 *
 * @module
 */

/** The internal defaults, milliseconds unless the name says otherwise. */
export const DEFAULTS = {
  /** First retry delay of a work queue after a failed reconcile (doubled up to {@linkcode DEFAULTS.retryMaxMs}). */
  retryBaseMs: 5_000,
  /** Longest retry delay of a work queue. */
  retryMaxMs: 300_000,
  /** Least time between two polls of a load balancer (or edge) that is provisioning or being deleted. */
  provisioningPollMs: 1_000,
  /** Window that gathers a burst of node changes into one member update per Service. */
  nodeBatchMs: 1_000,
  /** Window that gathers endpoint moves of a Local Service into one member update. */
  endpointBatchMs: 1_000,
  /** How long placement facts (networks, zone capabilities, servers' public IPv6) are trusted. */
  placementFactsTtlMs: 600_000,
  /** When a Service whose nodes have no address on its network is looked at again. */
  networkRecheckMs: 30_000,
  /** When a Service with no initialised node yet is looked at again (a node joining wakes it sooner). */
  waitingForNodesRecheckMs: 30_000,
  /** Drift-check period of a served Service when none is configured (`--load-balancer-drift-period` sets it). */
  driftCheckMs: 600_000,
  /** When a Service whose new load balancer is tracked is looked at again if the tracker never reports. */
  provisioningFallbackMs: 60_000,
  /** Window that gathers nodes joining together, so their servers' interfaces are read in one bulk request. */
  nodeJoinWindowMs: 100,
  /** Window that gathers nodes going NotReady together (a zone outage), so their servers are read in one request. */
  notReadyBatchMs: 500,
  /** Period of the shared server list. */
  serverListPeriodMs: 60_000,
  /** Least time between two on-demand server lists (a node whose server is not known yet). */
  serverListMinIntervalMs: 5_000,
  /** Least time between the two server lists that prove a server gone. */
  serverGoneConfirmMs: 10_000,
  /** First retry delay of reading the cluster's UID (doubled up to {@linkcode DEFAULTS.clusterUidRetryMaxMs}). */
  clusterUidRetryBaseMs: 1_000,
  /** Longest retry delay of reading the cluster's UID. */
  clusterUidRetryMaxMs: 30_000,
  /** Timeout of one Ankra Cloud API request (`ANKRA_CLOUD_REQUEST_TIMEOUT` overrides it). */
  cloudRequestTimeoutMs: 30_000,
  /** Wait after a 429 without `Retry-After`. */
  rateLimitedWaitMs: 1_000,
  /** Timeout of one Kubernetes API request (watches excepted). */
  kubeRequestTimeoutMs: 30_000,
  /** Items per page of a Kubernetes list. */
  kubeListPageItems: 500,
  /** Items per page of an informer's list (its store fills while later pages arrive). */
  informerPageItems: 100,
  /** `timeoutSeconds` of a Kubernetes watch (seconds): the Lease's watch, and any other without its own. */
  kubeWatchTimeoutSeconds: 300,
  /** The range an informer's watch `timeoutSeconds` is drawn from, randomised as client-go does (seconds). */
  informerWatchTimeoutSeconds: [300, 600] as [number, number],
  /** How often a token file is checked for a change the directory watch missed. */
  tokenFilePollMs: 10_000,
  /** How long a token file must stay unchanged before it is read (a Secret swap is several renames). */
  tokenFileSettleMs: 100,
  /** Timeout of the doctor's reads, each. */
  doctorReadTimeoutMs: 15_000,
} as const;
