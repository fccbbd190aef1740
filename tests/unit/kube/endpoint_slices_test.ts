import assert from "node:assert/strict";
import type { V1EndpointSlice } from "@kubernetes/client-node";
import {
  ReadyEndpoints,
  SLICES_BY_SERVICE,
  type SlimEndpointSlice,
  slimEndpointSlice,
} from "../../../lib/kube/endpoint_slices.ts";
import { Store, type StoreChange } from "../../../lib/kube/store.ts";

function slice(name: string, service: string, endpoints: { node?: string; ready?: boolean }[]): V1EndpointSlice {
  return {
    addressType: "IPv4",
    metadata: {
      namespace: "shop",
      name,
      resourceVersion: "1",
      labels: { "kubernetes.io/service-name": service },
    },
    endpoints: endpoints.map((e, i) => ({
      addresses: [`10.244.0.${i + 1}`],
      nodeName: e.node,
      conditions: e.ready === undefined ? {} : { ready: e.ready },
    })),
  };
}

/** A store fed by hand, standing in for the informer's list and watch. */
class FedStore {
  readonly #store = new Store<SlimEndpointSlice>();
  readonly store = this.#store.reader();
  hasSynced = true;
  synced = Promise.resolve();
  readonly #handlers: ((change: StoreChange<SlimEndpointSlice>) => void)[] = [];
  constructor() {
    this.#store.addIndex(SLICES_BY_SERVICE);
  }
  onChange(handler: (change: StoreChange<SlimEndpointSlice>) => void) {
    this.#handlers.push(handler);
  }
  put(raw: V1EndpointSlice) {
    const object = slimEndpointSlice(raw);
    const key = `${object.namespace}/${object.name}`;
    const old = this.#store.set(key, object);
    const change: StoreChange<SlimEndpointSlice> = old
      ? { type: "updated", key, object, old }
      : { type: "added", key, object };
    for (const h of this.#handlers) h(change);
  }
  remove(name: string) {
    const key = `shop/${name}`;
    const old = this.#store.delete(key)!;
    for (const h of this.#handlers) h({ type: "deleted", key, old });
  }
}

Deno.test("the slim slice keeps its Service and the nodes of ready endpoints only", () => {
  const slim = slimEndpointSlice(
    slice("web-abc", "web", [
      { node: "n2", ready: true },
      { node: "n1" },
      { node: "n3", ready: false },
      { ready: true },
      { node: "n2", ready: true },
    ]),
  );
  assert.deepEqual(slim, {
    namespace: "shop",
    name: "web-abc",
    resourceVersion: "1",
    service: "shop/web",
    readyNodes: ["n1", "n2"],
  });
});

Deno.test("a Service's ready nodes are the union over its slices", () => {
  const fed = new FedStore();
  const endpoints = new ReadyEndpoints(fed);
  fed.put(slice("web-1", "web", [{ node: "n1", ready: true }]));
  fed.put(slice("web-2", "web", [{ node: "n2", ready: true }, { node: "n3", ready: false }]));
  fed.put(slice("api-1", "api", [{ node: "n9", ready: true }]));
  assert.deepEqual([...endpoints.readyNodes("shop/web")!].sort(), ["n1", "n2"]);
  assert.deepEqual([...endpoints.readyNodes("shop/api")!], ["n9"]);
  assert.deepEqual([...endpoints.readyNodes("shop/none")!], []);
  fed.remove("web-2");
  assert.deepEqual([...endpoints.readyNodes("shop/web")!], ["n1"]);
});

Deno.test("listeners hear of a Service only when its set of ready nodes changes", () => {
  const fed = new FedStore();
  const endpoints = new ReadyEndpoints(fed);
  const heard: string[] = [];
  endpoints.onChange((service) => heard.push(service));
  fed.put(slice("web-1", "web", [{ node: "n1", ready: true }]));
  assert.deepEqual(heard, ["shop/web"]);
  // A pod replaced on the same node: a new endpoint, same node set.
  fed.put(slice("web-1", "web", [{ node: "n1", ready: false }, { node: "n1", ready: true }]));
  assert.deepEqual(heard, ["shop/web"]);
  fed.put(slice("web-1", "web", [{ node: "n1", ready: true }, { node: "n2", ready: true }]));
  assert.deepEqual(heard, ["shop/web", "shop/web"]);
  fed.remove("web-1");
  assert.deepEqual(heard, ["shop/web", "shop/web", "shop/web"], "losing every ready endpoint is a change");
});

Deno.test("before the first list nothing is known: no ready nodes are claimed", () => {
  const fed = new FedStore();
  fed.hasSynced = false;
  const endpoints = new ReadyEndpoints(fed);
  assert.equal(endpoints.readyNodes("shop/web"), undefined);
});
