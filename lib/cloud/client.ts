/**
 * The Ankra Cloud API client: one small verb per operation, every answer validated, lists read across all pages. The
 * verbs live by resource — servers (`servers.ts`), zones and networks (`networks.ts`), load balancers with their
 * backends, frontends and members (`load_balancers.ts`), edges and operations (`edges.ts`) — over one shared
 * {@linkcode CloudApi} (`cloud_api.ts`); every request goes through one {@linkcode CloudTransport} (budget, retries,
 * timeouts, metrics). This module puts them together into one {@linkcode AnkraCloudClient}.
 *
 * @module
 */
import type { MetricsRegistry } from "../runtime/metrics.ts";
import { type CloudApi, createCloudApi } from "./cloud_api.ts";
import { type EdgeCalls, edgeCalls } from "./edges.ts";
import { type LoadBalancerCalls, loadBalancerCalls } from "./load_balancers.ts";
import { type NetworkCalls, networkCalls } from "./networks.ts";
import { CloudRequestBudget } from "./request_budget.ts";
import { type ServerCalls, serverCalls } from "./servers.ts";
import { CloudTransport, type CredentialProblem, type RetryPolicy } from "./transport.ts";

/** Where the API is and how to reach it. */
interface ClientConfig {
  /** API token (never logged). */
  token: string;
  /** File the token was read from: read again when it changes (a rotated Secret), so no restart is needed. */
  tokenFile?: string;
  /** Base URL of the API, without a trailing slash. */
  apiUrl: string;
  /** PEM text of extra certificate authorities trusted besides the system roots. */
  caBundle?: string;
  /** Optional upper bound on requests per minute (the API's own limit is followed in any case). */
  maxRequestsPerMinute?: number;
  /** Burst of the upper bound. */
  requestBurst?: number;
  /** Timeout of one HTTP request, in milliseconds (default 30 s). */
  requestTimeoutMs?: number;
}

/** Options of {@linkcode AnkraCloudClient}. */
export interface ClientOptions {
  /** Metrics registry for request metrics. */
  metrics?: MetricsRegistry;
  /** Overrides of `DEFAULTS.cloudRetry` (5 attempts, 0.5 s doubling to 8 s, 60 s in all). */
  retry?: Partial<RetryPolicy>;
  /** A budget to share; a new one from the configuration otherwise. */
  budget?: CloudRequestBudget;
}

/**
 * Every verb of the Ankra Cloud API client, by resource. Merged into the class {@linkcode AnkraCloudClient}, whose
 * constructor supplies them from the resource modules (each checked against its interface there).
 */
export interface AnkraCloudClient extends ServerCalls, NetworkCalls, LoadBalancerCalls, EdgeCalls {}

/** The Ankra Cloud API client. */
export class AnkraCloudClient {
  readonly #transport: CloudTransport;

  /** Makes its own request budget unless `options.budget` shares one; nothing is sent yet. */
  constructor(config: ClientConfig, options: ClientOptions = {}) {
    const budget = options.budget ?? new CloudRequestBudget({
      maxRequestsPerMinute: config.maxRequestsPerMinute,
      burst: config.requestBurst,
    });
    this.#transport = new CloudTransport({
      apiUrl: config.apiUrl,
      token: config.token,
      tokenFile: config.tokenFile,
      caBundle: config.caBundle,
      timeoutMs: config.requestTimeoutMs,
      budget,
      metrics: options.metrics,
      retry: options.retry,
    });
    const api: CloudApi = createCloudApi(this.#transport, options.metrics);
    Object.assign(this, serverCalls(api), networkCalls(api), loadBalancerCalls(api), edgeCalls(api));
    // A new token while the old one is refused: ask the API at once, so readiness does not wait for the next call.
    this.#transport.tokens.onChange(() => {
      if (this.credentialProblem) this.listZones().catch(() => {});
    });
  }

  /**
   * Calls `listener` each time the token file yields a new token (a rotated Secret); the returned function stops
   * that. Work that failed on the old token can be retried at once instead of after its backoff.
   */
  onTokenChange(listener: () => void): () => void {
    return this.#transport.tokens.onChange(listener);
  }

  /** Why the API refuses the token, while it does; undefined otherwise. */
  get credentialProblem(): CredentialProblem | undefined {
    return this.#transport.credentialProblem;
  }

  /** The shared request budget. */
  get budget(): CloudRequestBudget {
    return this.#transport.budget;
  }

  /** Releases the HTTP client. */
  close(): void {
    this.#transport.close();
  }
}

export type { Backend, Edge, Interface, LoadBalancer, Network, Server, ZoneCapabilities } from "./schemas.ts";
