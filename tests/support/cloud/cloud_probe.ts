/**
 * A separate process with the real Ankra Cloud client, so a test can measure what one answer costs it (its resident
 * memory, its CPU time, what it prints) without the test's own work in the numbers. Prints one JSON line.
 *
 *     deno run -A tests/support/cloud/cloud_probe.ts answer <api-url> <token>       # get_server: error, memory
 *     deno run -A tests/support/cloud/cloud_probe.ts retry-after <api-url> <token>  # list_servers meets a 429
 *
 * @module
 */
import { AnkraCloudClient } from "../../../lib/cloud/client.ts";
import { CloudApiError } from "../../../lib/cloud/errors.ts";

/** What the probe prints. */
export interface ProbeResult {
  /** The first call's error kind and message. */
  kind?: string;
  message?: string;
  /** `answer`: peak resident memory during the call minus the resident memory before it, MiB. */
  growthMiB?: number;
  /** `retry-after`: what the first error asked for, and the pause every other caller is held for, milliseconds. */
  retryAfterMs?: number;
  pausedForMs?: number;
  /** `retry-after`: CPU time of the process (user + system) over the window the callers stay parked, seconds. */
  windowCpuSeconds?: number;
  /** `retry-after`: how long that window was, seconds. */
  windowSeconds?: number;
  /** `retry-after`: callers still parked at the window's end. */
  parked?: number;
}

function statusKiB(field: "VmRSS" | "VmHWM"): number {
  const line = Deno.readTextFileSync("/proc/self/status").split("\n").find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? NaN);
}

function cpuSeconds(): number {
  // Fields 14 and 15 of /proc/self/stat (after the parenthesised name): user and system time in clock ticks.
  const stat = Deno.readTextFileSync("/proc/self/stat");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function answer(client: AnkraCloudClient): Promise<ProbeResult> {
  // A first, small answer (the server's 404 for it) loads and warms everything a call needs, so the growth measured
  // below is the large answer's alone.
  await client.getServer("warm-up").catch(() => {});
  // Resets the peak (VmHWM) to the current resident size, so the peak after the call is the call's own.
  Deno.writeTextFileSync("/proc/self/clear_refs", "5");
  const before = statusKiB("VmRSS");
  let error: unknown;
  try {
    await client.getServer("srv-1");
  } catch (cause) {
    error = cause;
  }
  const growthMiB = (statusKiB("VmHWM") - before) / 1024;
  return { ...describe(error), growthMiB: Number(growthMiB.toFixed(1)) };
}

async function retryAfter(client: AnkraCloudClient): Promise<ProbeResult> {
  let error: unknown;
  try {
    await client.listServers();
  } catch (cause) {
    error = cause;
  }
  let parked = 0;
  for (let i = 0; i < 5; i++) {
    parked++;
    client.listServers().catch(() => {}).finally(() => parked--);
  }
  const startedCpu = cpuSeconds();
  const started = performance.now();
  // The window in which the parked callers must neither send nor spin: a negative check ("nothing happens for
  // 3 s"), so a fixed time is the point — there is no signal to wait for. The test reads the CPU time and the
  // simulator's request log over it.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  return {
    ...describe(error),
    retryAfterMs: error instanceof CloudApiError ? error.retryAfterMs : undefined,
    pausedForMs: client.budget.pausedForMs,
    windowCpuSeconds: Number((cpuSeconds() - startedCpu).toFixed(2)),
    windowSeconds: Number(((performance.now() - started) / 1000).toFixed(2)),
    parked,
  };
}

function describe(error: unknown): ProbeResult {
  return error instanceof CloudApiError ? { kind: error.kind, message: error.message } : { message: String(error) };
}

if (import.meta.main) {
  const [mode, apiUrl, token] = Deno.args;
  const client = new AnkraCloudClient({ apiUrl, token, requestTimeoutMs: 60_000 }, {
    retry: { maxAttempts: mode === "answer" ? 1 : 5 },
  });
  const result = mode === "answer" ? await answer(client) : await retryAfter(client);
  console.log(JSON.stringify(result));
  // Parked callers would wait out their pause: the probe is done.
  Deno.exit(0);
}
