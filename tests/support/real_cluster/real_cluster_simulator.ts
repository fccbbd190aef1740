/**
 * The real cluster's simulator as the tests reach it from the host: its state document, its request log and its control
 * API (faults, servers, tokens), over HTTPS with the cluster's CA.
 *
 * @module
 */

/** One entry of the simulator's request log (`/_simulator/requests`), the fields read here. */
export interface LoggedRequest {
  /** Starts at 1, never reused. */
  seq: number;
  /** The API operation (`list_servers`, …; `control` for `/_simulator`). */
  operation: string;
  /** HTTP method. */
  method: string;
  /** Request path. */
  path: string;
  /** The answer's status. */
  status: number;
}

/** The simulator's `/_simulator` API. */
export interface SimulatorAccess {
  /** The `/_simulator/state` document. */
  state(): Promise<Record<string, unknown>>;
  /** The request log (`/_simulator/requests`), oldest first. */
  requests(): Promise<LoggedRequest[]>;
  /** A request to `/_simulator<path>`; throws unless it answers 2xx. */
  control(method: string, path: string, body?: unknown): Promise<void>;
}

/** Access to the simulator at `url`, through the HTTP client `client` gives (made once the cluster's CA exists). */
export function simulatorAccess(url: string, client: () => Deno.HttpClient | undefined): SimulatorAccess {
  return {
    async state() {
      const response = await fetch(`${url}/_simulator/state`, { client: client() });
      if (!response.ok) throw new Error(`the simulator's state answered ${response.status}`);
      return await response.json();
    },
    async requests() {
      const response = await fetch(`${url}/_simulator/requests`, { client: client() });
      if (!response.ok) throw new Error(`the simulator's request log answered ${response.status}`);
      return ((await response.json()) as { items: LoggedRequest[] }).items;
    },
    async control(method, path, body) {
      const response = await fetch(`${url}/_simulator${path}`, {
        method,
        client: client(),
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (!response.ok) {
        throw new Error(`the simulator's ${method} /_simulator${path} answered ${response.status}: ${text}`);
      }
    },
  };
}
