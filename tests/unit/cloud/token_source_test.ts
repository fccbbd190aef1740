/**
 * The API token file read again while the controller runs: a Secret rotated the way the kubelet rotates it is picked
 * up from the directory watch or the period, a 401 for the old token sends the request again with the new one, an
 * unusable file keeps the token in use, and no log line carries a token.
 */
import assert from "node:assert/strict";
import { decideTokenRead, TokenFile, tokenFingerprint } from "../../../lib/cloud/token_source.ts";
import { CloudTransport } from "../../../lib/cloud/transport.ts";
import { CloudRequestBudget } from "../../../lib/cloud/request_budget.ts";
import { CloudApiError } from "../../../lib/cloud/errors.ts";
import { configureLogging } from "../../../lib/log.ts";
import { startSimulator } from "../../../simulator/server.ts";
import { TEST_TOKEN, testSeed } from "../../support/cloud/simulator.ts";
import { writeSecretVolume } from "../../support/kubelet/secret_volume.ts";

const NEW_TOKEN = "act_cm90YXRlZC10b2tlbi1mb3ItdGhlLXRlc3RzLXh4eHg";

function captureLog(): { lines: string[]; restore(): void } {
  const lines: string[] = [];
  configureLogging({ verbosity: 4, sink: (line) => lines.push(line) });
  return { lines, restore: () => configureLogging({ verbosity: 2, sink: () => {} }) };
}

/** The next change of `source`; fails after 5 s (the timer also keeps the event loop alive while waiting). */
function nextChange(source: TokenFile): Promise<void> {
  return new Promise((resolve, reject) => {
    const timeout = setTimeout(() => reject(new Error("the token file change was not noticed in 5 s")), 5_000);
    source.onChange(() => {
      clearTimeout(timeout);
      resolve();
    });
  });
}

Deno.test("a read of the token file switches only to a different, usable token", () => {
  assert.deepEqual(decideTokenRead("act_a", { text: "act_a\n" }), { kind: "unchanged" });
  assert.deepEqual(decideTokenRead("act_a", { text: " act_b\n" }), { kind: "changed", token: "act_b" });
  assert.deepEqual(decideTokenRead("act_a", { text: "\n" }), { kind: "unusable", problem: "it is empty" });
  assert.equal(decideTokenRead("act_a", { text: "act_b act_c" }).kind, "unusable");
  assert.deepEqual(decideTokenRead("act_a", { error: new Deno.errors.NotFound("gone") }), {
    kind: "unusable",
    problem: "it does not exist",
  });
  assert.match(
    (decideTokenRead("act_a", { error: new Deno.errors.PermissionDenied("no") }) as { problem: string }).problem,
    /cannot be read \(PermissionDenied\)/,
  );
});

Deno.test("a Secret rotated on disk as the kubelet does it is used at once, logged by fingerprint only", async () => {
  const dir = await Deno.makeTempDir();
  const log = captureLog();
  await writeSecretVolume(dir, { token: TEST_TOKEN });
  const source = new TokenFile(`${dir}/token`, TEST_TOKEN, { pollIntervalMs: 0 });
  try {
    const changed = nextChange(source);
    await writeSecretVolume(dir, { token: NEW_TOKEN + "\n" });
    await changed;
    assert.equal(source.current, NEW_TOKEN);
    const lines = log.lines.filter((l) => l.includes("API token changed"));
    assert.equal(lines.length, 1, log.lines.join("\n"));
    assert.ok(lines[0].includes(`file ${dir}/token`), lines[0]);
    assert.ok(lines[0].includes(await tokenFingerprint(NEW_TOKEN)), lines[0]);
    assert.ok(!lines[0].includes(NEW_TOKEN) && !lines[0].includes("REDACTED"), "the token is never put in the line");
  } finally {
    source.close();
    log.restore();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("without a directory watch, the period picks the new token up", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/token`, TEST_TOKEN);
  const source = new TokenFile(`${dir}/token`, TEST_TOKEN, { watch: false, pollIntervalMs: 20 });
  try {
    const changed = nextChange(source);
    await Deno.writeTextFile(`${dir}/token`, NEW_TOKEN);
    await changed;
    assert.equal(source.current, NEW_TOKEN);
  } finally {
    source.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an emptied or deleted token file keeps the token in use, with one warning per problem", async () => {
  const dir = await Deno.makeTempDir();
  const log = captureLog();
  await Deno.writeTextFile(`${dir}/token`, TEST_TOKEN);
  const source = new TokenFile(`${dir}/token`, TEST_TOKEN, { watch: false, pollIntervalMs: 0 });
  try {
    await Deno.writeTextFile(`${dir}/token`, "");
    assert.equal(await source.refresh(), false);
    assert.equal(await source.refresh(), false);
    await Deno.remove(`${dir}/token`);
    assert.equal(await source.refresh(), false);
    assert.equal(source.current, TEST_TOKEN);
    const warnings = log.lines.filter((l) => l.includes("cannot be used"));
    assert.equal(warnings.length, 2, warnings.join("\n"));
    assert.match(warnings[0], /it is empty; the controller keeps the token it has/);
    assert.match(warnings[1], /it does not exist/);
  } finally {
    source.close();
    log.restore();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a 401 for a revoked token reads the file again and the call succeeds with the new token", async () => {
  const dir = await Deno.makeTempDir();
  const seed = testSeed();
  seed.tokens.push({ token: NEW_TOKEN, scope: "read_write" });
  const simulator = await startSimulator({ seed });
  await Deno.writeTextFile(`${dir}/token`, TEST_TOKEN);
  // No watch and no period: only the 401 can make the transport look at the file.
  const tokens = new TokenFile(`${dir}/token`, TEST_TOKEN, { watch: false, pollIntervalMs: 0 });
  const transport = new CloudTransport({
    apiUrl: simulator.url,
    token: TEST_TOKEN,
    tokens,
    budget: new CloudRequestBudget({}),
    retry: { baseDelayMs: 10, maxDelayMs: 20 },
  });
  const listZones = { operation: "list_zones", method: "GET", path: "/v1/zones", schema: undefined } as const;
  try {
    await transport.call(listZones);
    await Deno.writeTextFile(`${dir}/token`, NEW_TOKEN);
    simulator.sim.world.tokens.delete(TEST_TOKEN);
    await transport.call(listZones);
    assert.equal(tokens.current, NEW_TOKEN);
    assert.equal(transport.credentialProblem, undefined, "the refused old token is never reported");
    const statuses = simulator.sim.log.filter((r) => r.operation === "list_zones").map((r) => r.status);
    assert.deepEqual(statuses, [200, 401, 200]);

    // Revoked and no new token in the file: the 401 is reported, once per call, with what to do.
    simulator.sim.world.tokens.delete(NEW_TOKEN);
    const refused = await transport.call(listZones).then(() => undefined, (e) => e);
    assert.ok(refused instanceof CloudApiError && refused.kind === "unauthorized", String(refused));
    const problem = transport.credentialProblem as { message: string } | undefined;
    assert.match(problem?.message ?? "", /refuses the token as invalid or expired/);
  } finally {
    transport.close();
    await simulator.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
