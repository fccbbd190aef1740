/**
 * The real cluster's simulator as the tests reach it from the host: its state document and its control API (faults,
 * servers), over HTTPS with the cluster's CA.
 *
 * @module
 */

/** The simulator's `/_simulator` API. */
export interface SimulatorAccess {
  /** The `/_simulator/state` document. */
  state(): Promise<Record<string, unknown>>;
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
