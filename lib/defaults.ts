/**
 * The internal defaults of the controller's timing and sizes, in one table: what a piece uses when it is not told
 * otherwise (tests and benchmarks pass shorter ones). The defaults a user can change are flags
 * (`lib/config/options.ts`, with their own defaults there); these are the ones only code can change.
 * tests/unit/config/defaults_test.ts checks that no module writes such a number inline instead.
 *
 * Not here, on purpose, and kept beside the code they bound: numbers that are facts or limits rather than choices of
 * a default —
 *
 * - limits of the runtime: the longest timer (`runtime/abort.ts`, `MAX_TIMER_MS`);
 * - bounds on what an API may ask of the controller: the longest `Retry-After` followed (`retry_after.ts`) and the
 *   longest rate-limit wait (`cloud/request_budget.ts`, the same bound), and the answer sizes each client reads
 *   (`cloud/answer_bounds.ts`, `kube/answer_limits.ts`);
 * - client-go's own numbers, mirrored as it has them: the event recorder's correlation window and spam filter
 *   (`kube/events.ts`), a token file read again every minute (`kube/credentials.ts`);
 * - tolerances of a comparison, not waits: a drift timer firing a few milliseconds early
 *   (`controllers/service/load_balancer_directory.ts`), the clock difference allowed a Lease's holder
 *   (`doctor/cluster_checks.ts`), and a cache age of 0 that means "read again"
 *   (`controllers/service/load_balancer_placement.ts`).
 *
 * One other record of defaults exists, the delegated authorizer's (`server/delegated_authorizer.ts`,
 * `REVIEW_DEFAULTS`): k8s.io/apiserver's verdict-cache and review timings with the authorizer's own request limits,
 * each overridable per authorizer, read there and by its tests as one record.
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
  /**
   * When an object waiting for the user (`runtime/waiting_for_user.ts`: a problem only the user can fix) is looked at
   * again anyway, without a change.
   */
  userRecheckMs: 300_000,
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
  /**
   * Retries of one Ankra Cloud API call (`lib/cloud/transport.ts`): attempts in all, the first backoff (doubled up to
   * the largest), and the time after the first attempt when it gives up.
   */
  cloudRetry: { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 8_000, maxElapsedMs: 60_000 },
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
  /**
   * How long past its `timeoutSeconds` a silent Kubernetes watch is trusted before it counts as a dead connection and
   * is ended (`kube/answer_limits.ts`).
   */
  watchIdleGraceMs: 30_000,
  /** `timeoutSeconds` of a Kubernetes watch (seconds): the Lease's watch, and any other without its own. */
  kubeWatchTimeoutSeconds: 300,
  /** The range an informer's watch `timeoutSeconds` is drawn from, randomised as client-go does (seconds). */
  informerWatchTimeoutSeconds: [300, 600] as [number, number],
  /** How often a token file is checked for a change the directory watch missed. */
  tokenFilePollMs: 10_000,
  /** How long a token file must stay unchanged before it is read (a Secret swap is several renames). */
  tokenFileSettleMs: 100,
  /** Least time between two log lines of a `/metrics` caller that could not be checked with the API server. */
  authorizationFailureLogMs: 10_000,
  /** Timeout of the doctor's reads, each. */
  doctorReadTimeoutMs: 15_000,
} as const;
