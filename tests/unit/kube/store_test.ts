import assert from "node:assert/strict";
import { Store } from "../../../lib/kube/store.ts";

interface Item {
  name: string;
  providerID?: string;
}

Deno.test("the store looks objects up by key and by index, and keeps indexes right through changes", () => {
  const store = new Store<Item>();
  store.set("a", { name: "a", providerID: "ankracloud://z/1" });
  store.addIndex({ name: "providerID", valuesOf: (item) => item.providerID ? [item.providerID] : [] });
  store.set("b", { name: "b", providerID: "ankracloud://z/2" });
  assert.deepEqual(store.byIndex("providerID", "ankracloud://z/1").map((i) => i.name), ["a"]);
  store.set("a", { name: "a", providerID: "ankracloud://z/3" });
  assert.deepEqual(store.byIndex("providerID", "ankracloud://z/1"), []);
  assert.deepEqual(store.byIndex("providerID", "ankracloud://z/3").map((i) => i.name), ["a"]);
  store.delete("b");
  assert.deepEqual(store.byIndex("providerID", "ankracloud://z/2"), []);
  assert.equal(store.size, 1);
  assert.equal(store.get("a")?.providerID, "ankracloud://z/3");
});
