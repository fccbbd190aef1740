/**
 * Which server a Node is: the one rule the node controller (through its cloud view) and the doctor share.
 */
import assert from "node:assert/strict";
import { matchServer, providerServerId, serverLookup } from "../../../lib/provider/server_match.ts";

const SERVERS = [
  { id: "srv-1", hostname: "worker-1", zone: "de-fsn1" },
  { id: "srv-2", hostname: "twin", zone: "de-fsn1" },
  { id: "srv-3", hostname: "twin", zone: "de-fsn2" },
];
const lookup = serverLookup(SERVERS);

Deno.test("a providerID names the server by id; a missing id is said, not guessed by hostname", () => {
  const byId = matchServer({ name: "anything", providerID: "ankracloud://de-fsn1/srv-1" }, lookup);
  assert.equal(byId.kind === "matched" && byId.by, "providerID");
  const gone = matchServer({ name: "worker-1", providerID: "ankracloud://de-fsn1/srv-9" }, lookup);
  assert.equal(gone.kind, "missing");
  assert.match(gone.kind === "missing" ? gone.why : "", /no server has id srv-9/);
  assert.equal(providerServerId({ providerID: "ankracloud://de-fsn1/srv-1" }), "srv-1");
  assert.equal(providerServerId({ providerID: "aws:///eu-central-1a/i-1" }), undefined);
});

Deno.test("without a providerID: the name, then an FQDN's first label; two servers with it are ambiguous", () => {
  const fqdn = matchServer({ name: "worker-1.cluster.example" }, lookup);
  assert.ok(fqdn.kind === "matched" && fqdn.server.id === "srv-1" && fqdn.by === "hostname");
  const twin = matchServer({ name: "twin" }, lookup);
  assert.ok(twin.kind === "ambiguous" && twin.servers.length === 2);
  assert.equal(matchServer({ name: "nobody" }, lookup).kind, "missing");
});

Deno.test("another provider's Node is left alone; a malformed Ankra providerID matches nothing", () => {
  assert.equal(matchServer({ name: "worker-1", providerID: "hcloud://123" }, lookup).kind, "foreign");
  assert.equal(matchServer({ name: "worker-1", providerID: "ankracloud://srv-1" }, lookup).kind, "malformed");
});
