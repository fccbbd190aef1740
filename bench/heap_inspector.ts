/**
 * Asks a Deno process started with `--inspect=127.0.0.1:<port>` about its JavaScript heap over the DevTools protocol:
 * a full collection, the heap used after it, and a heap snapshot. Bench-only: the controller never runs with an
 * inspector in production.
 *
 * @module
 */

/** The heap of the inspected process after a forced full collection, and its snapshot. */
export interface InspectedHeap {
  /** `Runtime.getHeapUsage` after `HeapProfiler.collectGarbage`: bytes used and committed. */
  usedBytes: number;
  /** Bytes V8 holds for the heap (its spaces' committed size). */
  totalBytes: number;
  /** The `.heapsnapshot` JSON text. */
  snapshot: string;
}

/** The inspector's WebSocket address of the one target a Deno process serves, once it listens. */
async function debuggerUrl(port: number, deadline: number): Promise<string> {
  for (;;) {
    try {
      const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as {
        webSocketDebuggerUrl: string;
      }[];
      if (targets[0]) return targets[0].webSocketDebuggerUrl;
    } catch (cause) {
      if (performance.now() > deadline) throw new Error(`no inspector on 127.0.0.1:${port}`, { cause });
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Collects garbage in the process inspected on `port`, reads the heap used, and takes a heap snapshot. */
export async function inspectHeap(port: number): Promise<InspectedHeap> {
  const socket = new WebSocket(await debuggerUrl(port, performance.now() + 30_000));
  const open = Promise.withResolvers<void>();
  socket.onopen = () => open.resolve();
  socket.onerror = () => open.reject(new Error(`cannot connect to the inspector on 127.0.0.1:${port}`));
  await open.promise;
  const answers = new Map<number, PromiseWithResolvers<Record<string, unknown>>>();
  const chunks: string[] = [];
  socket.onmessage = (message) => {
    const parsed = JSON.parse(message.data as string);
    if (parsed.id !== undefined) {
      const waiting = answers.get(parsed.id);
      if (parsed.error) waiting?.reject(new Error(`inspector: ${JSON.stringify(parsed.error)}`));
      else waiting?.resolve(parsed.result ?? {});
    } else if (parsed.method === "HeapProfiler.addHeapSnapshotChunk") chunks.push(parsed.params.chunk);
  };
  let sequence = 0;
  const call = (method: string, params: Record<string, unknown> = {}) => {
    const id = ++sequence;
    const answer = Promise.withResolvers<Record<string, unknown>>();
    answers.set(id, answer);
    socket.send(JSON.stringify({ id, method, params }));
    return answer.promise;
  };
  try {
    await call("HeapProfiler.enable");
    await call("HeapProfiler.collectGarbage");
    const usage = await call("Runtime.getHeapUsage") as { usedSize: number; totalSize: number };
    await call("HeapProfiler.takeHeapSnapshot", { reportProgress: false, captureNumericValue: false });
    return { usedBytes: usage.usedSize, totalBytes: usage.totalSize, snapshot: chunks.join("") };
  } finally {
    const closed = Promise.withResolvers<void>();
    socket.onclose = () => closed.resolve();
    socket.close();
    await closed.promise;
  }
}
