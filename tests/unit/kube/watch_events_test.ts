import assert from "node:assert/strict";
import { isKubeError } from "../../../lib/kube/errors.ts";
import { type WatchEvent, watchEvents } from "../../../lib/kube/watch_events.ts";

function streamOf(chunks: string[]): ReadableStreamDefaultReader<string> {
  return new ReadableStream<string>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  }).getReader();
}

async function collect(reader: ReadableStreamDefaultReader<string>, signal?: AbortSignal) {
  const events: WatchEvent<{ name: string }>[] = [];
  for await (const event of watchEvents<{ name: string }>(reader, { path: "/api/v1/nodes", signal })) {
    events.push(event);
  }
  return events;
}

Deno.test("watch events split across chunks, or several in one chunk, each arrive once and whole", async () => {
  const events = await collect(streamOf([
    '{"type":"ADDED","object":{"name":"a"}}\n{"type":"MOD',
    'IFIED","object":{"name":"a"}}\n\n',
    '{"type":"BOOKMARK","object":{"name":""}}\n{"type":"DELETED","object":{"name":"a"}}\n',
  ]));
  assert.deepEqual(events.map((e) => `${e.type} ${e.object.name}`), [
    "ADDED a",
    "MODIFIED a",
    "BOOKMARK ",
    "DELETED a",
  ]);
});

Deno.test("an ERROR event with code 410 ends the watch as gone, so the caller lists again", async () => {
  const reader = streamOf([
    '{"type":"ADDED","object":{"name":"a"}}\n',
    '{"type":"ERROR","object":{"code":410,"reason":"Expired","message":"too old resource version: 1 (2)"}}\n',
    '{"type":"ADDED","object":{"name":"never"}}\n',
  ]);
  const seen: string[] = [];
  await assert.rejects(
    async () => {
      for await (const event of watchEvents<{ name: string }>(reader, { path: "/api/v1/nodes" })) {
        seen.push(event.object.name);
      }
    },
    (error) => {
      assert.ok(isKubeError(error, "gone"));
      assert.equal(error.reason, "Expired");
      assert.match(error.message, /^WATCH \/api\/v1\/nodes: too old resource version/);
      return true;
    },
  );
  assert.deepEqual(seen, ["a"]);
});

Deno.test("an aborted watch stops after the event in hand, without an error", async () => {
  const abort = new AbortController();
  const reader = streamOf(['{"type":"ADDED","object":{"name":"a"}}\n{"type":"ADDED","object":{"name":"b"}}\n']);
  const names: string[] = [];
  for await (const event of watchEvents<{ name: string }>(reader, { path: "/api/v1/nodes", signal: abort.signal })) {
    names.push(event.object.name);
    abort.abort();
  }
  assert.deepEqual(names, ["a"]);
});

Deno.test("a stream that breaks without an abort is a network error naming the watch", async () => {
  const reader = new ReadableStream<string>({
    pull(controller) {
      controller.error(new Error("connection reset"));
    },
  }).getReader();
  await assert.rejects(collect(reader), (error) => {
    assert.ok(isKubeError(error, "network"));
    assert.match(error.message, /^WATCH \/api\/v1\/nodes: stream broke: .*connection reset/);
    return true;
  });
});
