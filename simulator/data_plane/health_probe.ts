/**
 * One health check of one member, as the API documents the types: `tcp` passes when a connection opens; `http` sends
 * `GET <path> HTTP/1.0` and passes when the status line's code is within `expected_status`. The whole check must
 * finish within the timeout (the check interval, as HAProxy uses `inter` when no `timeout check` is set).
 *
 * @module
 */
import type { Socket } from "node:net";
import type { HealthCheckState } from "../load_balancer_state.ts";
import { statusExpected } from "./health_rule.ts";
import { type ActiveDataPlaneMode, unreachableReason } from "./local_addresses.ts";
import { connectMember, type MemberTarget } from "./member_connection.ts";

/** The outcome of one check. */
export interface ProbeResult {
  /** True when the check passed. */
  passed: boolean;
  /** What happened, e.g. `http GET /healthz answered 503, expected 200-399`. */
  detail: string;
}

/** Checks `target` once with `check` (type `tcp` or `http`). */
export async function probeMember(
  target: MemberTarget,
  options: { check: HealthCheckState; mode: ActiveDataPlaneMode; timeoutMs: number; signal?: AbortSignal },
): Promise<ProbeResult> {
  const { check, mode, timeoutMs, signal } = options;
  const refused = unreachableReason(target.address, mode);
  if (refused) return { passed: false, detail: `not checked: ${refused}` };
  const deadline = Date.now() + timeoutMs;
  let socket: Socket;
  try {
    socket = await connectMember(target, { mode, timeoutMs, signal });
  } catch (cause) {
    return { passed: false, detail: `${check.type} connect failed: ${(cause as Error).message}` };
  }
  if (check.type !== "http") {
    socket.destroy();
    return { passed: true, detail: "tcp connect passed" };
  }
  const what = `http GET ${check.path}`;
  try {
    const status = await statusLine(socket, {
      path: check.path,
      timeoutMs: Math.max(1, deadline - Date.now()),
      signal,
    });
    const code = /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(status)?.[1];
    if (!code) return { passed: false, detail: `${what}: not an HTTP answer: "${status.slice(0, 40)}"` };
    const passed = statusExpected(Number(code), check.expected_status);
    return {
      passed,
      detail: `${what} answered ${code}${passed ? "" : `, expected ${check.expected_status}`}`,
    };
  } catch (cause) {
    return { passed: false, detail: `${what}: ${(cause as Error).message}` };
  } finally {
    socket.destroy();
  }
}

function statusLine(
  socket: Socket,
  options: { path: string; timeoutMs: number; signal?: AbortSignal },
): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(
      () => done(() => reject(new Error(`no answer within ${options.timeoutMs} ms`))),
      options.timeoutMs,
    );
    const onAbort = () => done(() => reject(new Error("abandoned: the data plane stops")));
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const done = (settle: () => void) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      socket.removeAllListeners("data");
      settle();
    };
    socket.on("data", (chunk: Uint8Array) => {
      text += new TextDecoder("latin1").decode(chunk);
      const end = text.indexOf("\r\n");
      if (end >= 0 || text.length > 1024) done(() => resolve(end >= 0 ? text.slice(0, end) : text));
    });
    socket.once("end", () => done(() => text ? resolve(text) : reject(new Error("closed without an answer"))));
    socket.once(
      "error",
      (error: Error & { code?: string }) => done(() => reject(new Error(error.code ?? error.message))),
    );
    socket.write(
      `GET ${options.path} HTTP/1.0\r\nUser-Agent: ankra-cloud-simulator-health-check\r\nConnection: close\r\n\r\n`,
    );
  });
}
