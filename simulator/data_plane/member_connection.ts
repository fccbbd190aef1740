/**
 * The one way the data plane opens a connection to a member — for forwarded connections and health checks alike:
 * refused without a packet when the mode may not reach the address (`local_addresses.ts`), else a TCP connection
 * from the VM's leg on the load balancer's network (when that address is local here) with a timeout.
 *
 * @module
 */
import net from "node:net";
import { type ActiveDataPlaneMode, unreachableReason } from "./local_addresses.ts";

/** Where to connect, and from where. */
export interface MemberTarget {
  /** IPv4 or IPv6 address of the member. */
  address: string;
  /** Port on the member (a node port, for the controller's members). */
  port: number;
  /** The VM leg's address the connection leaves from, when it may be bound here. */
  source?: string;
}

/** Options of {@linkcode connectMember}. */
export interface ConnectOptions {
  /** The data plane's mode (decides what may be reached). */
  mode: ActiveDataPlaneMode;
  /** Give up after this long (milliseconds). */
  timeoutMs: number;
  /** Gives up when aborted (the data plane stops). */
  signal?: AbortSignal;
}

/** A refused or failed connection to a member, with a message naming it. */
export class MemberConnectError extends Error {}

/** A connected socket to the member (half-open allowed), or a {@linkcode MemberConnectError}. */
export function connectMember(target: MemberTarget, options: ConnectOptions): Promise<net.Socket> {
  const refused = unreachableReason(target.address, options.mode);
  if (refused) return Promise.reject(new MemberConnectError(refused));
  return new Promise((resolve, reject) => {
    const socket = net.connect({
      host: target.address,
      port: target.port,
      allowHalfOpen: true,
      ...(target.source ? { localAddress: target.source } : {}),
    });
    const fail = (message: string) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      socket.destroy();
      reject(new MemberConnectError(message));
    };
    const onAbort = () => fail(`the connection to ${where(target)} was abandoned: the data plane stops`);
    const timer = setTimeout(
      () => fail(`no connection to ${where(target)} within ${options.timeoutMs} ms`),
      options.timeoutMs,
    );
    options.signal?.addEventListener("abort", onAbort, { once: true });
    socket.once("connect", () => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      socket.removeAllListeners("error");
      socket.on("error", () => socket.destroy()); // whoever takes the socket adds its own handling
      resolve(socket);
    });
    socket.once(
      "error",
      (error: Error & { code?: string }) => fail(`${where(target)}: ${error.code ?? error.message}`),
    );
    if (options.signal?.aborted) onAbort();
  });
}

function where(target: MemberTarget): string {
  const host = target.address.includes(":") ? `[${target.address}]` : target.address;
  return `${host}:${target.port}`;
}
