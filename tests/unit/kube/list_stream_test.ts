import assert from "node:assert/strict";
import { decodeListStream } from "../../../lib/kube/list_stream.ts";

function streamOf(text: string, chunkSize: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + chunkSize));
      at += chunkSize;
    },
  });
}

const items = [
  { metadata: { name: "a", annotations: { tricky: 'braces } { and ] [ and "quotes" \\\\ inside' } } },
  { metadata: { name: "b" }, spec: { list: [1, { nested: [] }] } },
  { metadata: { name: "ü-ñ-中" } },
];
const list = {
  kind: "NodeList",
  apiVersion: "v1",
  metadata: { resourceVersion: "4711", continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ" },
  items,
};

Deno.test("list items are decoded one by one whatever the chunking, with the list's metadata", async () => {
  for (const size of [1, 2, 7, 64, 100_000]) {
    const seen: unknown[] = [];
    const metadata = await decodeListStream(streamOf(JSON.stringify(list), size), (item) => seen.push(item));
    assert.deepEqual(seen, items, `chunks of ${size}`);
    assert.deepEqual(metadata, { resourceVersion: "4711", continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ" });
  }
});

Deno.test("an empty list and a list without continue decode too", async () => {
  const seen: unknown[] = [];
  const metadata = await decodeListStream(
    streamOf(JSON.stringify({ kind: "NodeList", metadata: { resourceVersion: "9" }, items: [] }), 3),
    (item) => seen.push(item),
  );
  assert.deepEqual(seen, []);
  assert.deepEqual(metadata, { resourceVersion: "9", continue: undefined });
});
