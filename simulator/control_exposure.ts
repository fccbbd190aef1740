/**
 * The warning the simulator prints once at start when its control API (`/_simulator`: no authentication — it mints
 * tokens, resets the world, scripts faults) listens beyond loopback. Loopback is 127.0.0.0/8, `::1` and `localhost`;
 * anything else, `0.0.0.0` and `::` included, is reachable by others. A pure function.
 *
 * @module
 */
import { parseIp } from "../lib/ip_address.ts";
import { isLoopback } from "./data_plane/local_addresses.ts";

/** The one-line warning for listening on `hostname`, or undefined when it is a loopback address. */
export function controlApiExposureWarning(hostname: string): string | undefined {
  const host = hostname.replace(/^\[|\]$/g, "");
  const ip = parseIp(host);
  if (host.toLowerCase() === "localhost" || (ip && isLoopback(ip))) return undefined;
  return `warning: listening on ${hostname}, beyond loopback: the control API under /_simulator has no ` +
    "authentication, so anyone who reaches this address can mint API tokens, reset the world and script faults; " +
    "listen on 127.0.0.1 unless only trusted machines can reach it";
}
