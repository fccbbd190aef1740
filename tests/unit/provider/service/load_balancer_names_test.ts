import assert from "node:assert/strict";
import {
  edgeClusterPrefix,
  edgeMemberName,
  edgeMemberPrefix,
  loadBalancerName,
  memberName,
  shortHash,
} from "../../../../lib/provider/service/load_balancer_names.ts";
import { sha256Hex } from "../../../../lib/provider/sha256.ts";

Deno.test("the synchronous SHA-256 matches the platform's for short and multi-block inputs", async () => {
  for (const text of ["", "abc", "k8s\u0000default\u0000web", "x".repeat(55), "y".repeat(56), "z".repeat(200), "ü€"]) {
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
    const expected = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
    assert.equal(sha256Hex(text), expected, `sha256 of ${JSON.stringify(text.slice(0, 20))}`);
  }
});

Deno.test("load balancer names follow the 64-byte hash rule exactly", () => {
  assert.equal(loadBalancerName("production", "shop", "web"), "k8s-production-shop-web");
  const long = loadBalancerName("production", "a-very-long-namespace-name", "and-an-even-longer-service-name-here");
  assert.equal(long.length, 64);
  assert.equal(long.slice(0, 55), "k8s-production-a-very-long-namespace-name-and-an-even-l");
  assert.equal(
    long.slice(55),
    `-${shortHash("production", "a-very-long-namespace-name", "and-an-even-longer-service-name-here")}`,
  );
  assert.match(shortHash("a", "b"), /^[0-9a-f]{8}$/);
  assert.notEqual(shortHash("a", "b"), shortHash("ab", ""), "parts are separated by NUL");
});

Deno.test("member names are cleaned node names with a hash, valid for the API", () => {
  const pattern = /^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/;
  for (
    const name of [
      "worker-1",
      "Worker_1.Example.COM",
      "a".repeat(60),
      "---",
      "ip-10-0-0-5.eu-central-1.compute.internal",
    ]
  ) {
    const member = memberName(name, "10.0.0.5");
    assert.match(member, pattern, member);
    assert.ok(member.length <= 32);
  }
  assert.equal(memberName("---", "10.0.0.5"), shortHash("---", "10.0.0.5"), "empty prefix: just the hash");
  assert.ok(memberName("Worker_1.Example", "10.0.0.5").startsWith("worker-1-example-"));
});

Deno.test("edge member names carry the Service's prefix and a hash of port, address and node port", () => {
  const prefix = edgeMemberPrefix("prod", "shop", "web");
  assert.match(prefix, /^k[0-9a-f]{8}-$/);
  const name = edgeMemberName(prefix, 443, "10.0.0.5", 30443);
  assert.equal(name, prefix + shortHash("443", "10.0.0.5", "30443"));
  assert.equal(name.length, 18);
  const withUid = edgeMemberPrefix("prod", "shop", "web", "uid-a");
  assert.match(withUid, /^k[0-9a-f]{6}-[0-9a-f]{8}-$/);
  assert.ok(withUid.startsWith(edgeClusterPrefix("uid-a")), "every member of the cluster shares its prefix");
  assert.notEqual(edgeClusterPrefix("uid-a"), edgeClusterPrefix("uid-b"));
  assert.equal(edgeMemberName(withUid, 443, "10.0.0.5", 30443).length, 25, "within the API's 32");
  assert.ok(!edgeMemberName(withUid, 443, "10.0.0.5", 30443).startsWith(prefix), "never mistaken for a legacy name");
});
