/**
 * Data plane benchmark: what the simulator's loopback data plane — HAProxy — carries through one frontend, so a test
 * never blames the controller for the simulator's limits:
 *
 *     source scripts/env.sh && deno task bench:data-plane
 *
 * For each placement of the simulator — its own process (`ankra-cloud-simulator --data-plane=loopback`, as users run
 * it) and in the process that also runs the clients and members (as the tests run it) — and, as the baseline, the
 * members reached directly:
 *
 * - `tcp` connections per second: clients that connect, read the member's first line and close, one at a time and
 *   `BENCH_CONCURRENCY` (default 32) at once, for `BENCH_SECONDS` (default 5);
 * - `tcp` MiB/s: `BENCH_MIB` (default 256) MiB sent through one connection, and a quarter of it through each of 4
 *   at once, until the member has counted every byte;
 * - `http` requests per second over kept-alive connections (`fetch`), one client and `BENCH_CONCURRENCY` at once.
 *
 * Members are raw TCP (a name line, then a byte sink) and `Deno.serve` HTTP servers on the network's addresses in
 * 127.0.0.0/8; the frontend is a single-VM load balancer's IPv4. Writes bench/data_plane_report.md
 * (`BENCH_REPORT` for another path).
 *
 * @module
 */
import { type RunningSimulator, startSimulator } from "../simulator/server.ts";
import { parseSeed } from "../simulator/seed.ts";
import { locateHaproxyTools } from "../simulator/data_plane/haproxy_process.ts";

const SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? 5);
const CONCURRENCY = Number(Deno.env.get("BENCH_CONCURRENCY") ?? 32);
const MIB = Number(Deno.env.get("BENCH_MIB") ?? 256);
const REPORT = Deno.env.get("BENCH_REPORT") ?? new URL("./data_plane_report.md", import.meta.url).pathname;
const TOKEN = "act_ZGF0YS1wbGFuZS1iZW5jaG1hcmstdG9rZW4teHh4";
const NETWORK = "127.61";
const SEED = {
  settings: { data_plane: "loopback", loopback_ipv4_range: `${NETWORK}.113.0/24`, load_balancer_create_delay_ms: 100 },
  tokens: [{ token: TOKEN, scope: "read_write" }],
  zones: [{ name: "de-fsn1", region: "eu-central", compute_nodes: 1 }],
  networks: [{ id: "net-1", name: "bench", zone: "de-fsn1", cidr: `${NETWORK}.0.0/16`, ula_prefix: "fd64:b:0:1::/64" }],
};

/** Where the benchmark sends traffic: `address:port` of a tcp and an http frontend (or the members themselves). */
interface Target {
  tcp: { address: string; port: number };
  http: string;
}

/** A raw TCP member: a name line, then it counts bytes and answers `<count>\n` when the client shuts its side. */
function sinkMember(address: string, port: number): Deno.Listener {
  const listener = Deno.listen({ hostname: address, port });
  (async () => {
    for await (const conn of listener) {
      (async () => {
        try {
          await conn.write(new TextEncoder().encode("member\n"));
          const buffer = new Uint8Array(256 * 1024);
          let count = 0;
          for (let n = await conn.read(buffer); n !== null; n = await conn.read(buffer)) count += n;
          await conn.write(new TextEncoder().encode(`${count}\n`));
        } catch { /* the client went away */ }
        try {
          conn.close();
        } catch { /* closed */ }
      })();
    }
  })().catch(() => {});
  return listener;
}

async function readLine(conn: Deno.Conn, buffer: Uint8Array): Promise<string> {
  let text = "";
  while (!text.includes("\n")) {
    const n = await conn.read(buffer);
    if (n === null) throw new Error(`closed after "${text}"`);
    text += new TextDecoder().decode(buffer.subarray(0, n));
  }
  return text;
}

async function connectionsPerSecond(target: Target, concurrency: number): Promise<number> {
  const deadline = performance.now() + SECONDS * 1000;
  let done = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    const buffer = new Uint8Array(64);
    while (performance.now() < deadline) {
      const conn = await Deno.connect({ hostname: target.tcp.address, port: target.tcp.port });
      await readLine(conn, buffer);
      conn.close();
      done++;
    }
  }));
  return done / SECONDS;
}

async function mibPerSecond(target: Target, streams: number): Promise<number> {
  const chunk = new Uint8Array(256 * 1024).fill(120);
  const each = (MIB * 1024 * 1024) / streams;
  const started = performance.now();
  await Promise.all(Array.from({ length: streams }, async () => {
    const conn = await Deno.connect({ hostname: target.tcp.address, port: target.tcp.port });
    const buffer = new Uint8Array(64);
    await readLine(conn, buffer);
    for (let sent = 0; sent < each; sent += chunk.length) {
      for (let written = 0; written < chunk.length;) written += await conn.write(chunk.subarray(written));
    }
    await conn.closeWrite();
    const counted = Number((await readLine(conn, buffer)).trim());
    conn.close();
    if (counted !== each) throw new Error(`the member counted ${counted} bytes of ${each}`);
  }));
  return MIB / ((performance.now() - started) / 1000);
}

async function requestsPerSecond(target: Target, concurrency: number): Promise<number> {
  const deadline = performance.now() + SECONDS * 1000;
  let done = 0;
  const client = Deno.createHttpClient({ poolMaxIdlePerHost: concurrency });
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < deadline) {
      const response = await fetch(target.http, { client });
      await response.arrayBuffer();
      done++;
    }
  }));
  client.close();
  return done / SECONDS;
}

async function call(api: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

/** Builds a single-VM load balancer with a tcp and an http frontend over the members; its targets. */
async function loadBalancerTargets(api: string, members: { tcp: number; http: number }): Promise<Target> {
  const lb = (await call(api, "POST", "/v1/load-balancers", {
    zone: "de-fsn1",
    name: "bench",
    network_id: "net-1",
    high_availability: false,
    public_ipv4: true,
  })).load_balancer;
  for (const [mode, port, frontendPort] of [["tcp", members.tcp, 9000], ["http", members.http, 9080]] as const) {
    const backend = (await call(api, "POST", `/v1/load-balancers/${lb.id}/backends`, { name: mode, mode })).backend;
    await call(api, "PUT", `/v1/load-balancers/${lb.id}/backends/${backend.id}/members`, {
      members: [{ name: "m", address: `${NETWORK}.0.11`, port }],
    });
    await call(api, "POST", `/v1/load-balancers/${lb.id}/frontends`, {
      name: mode,
      port: frontendPort,
      backend_id: backend.id,
    });
  }
  for (let i = 0; i < 200; i++) {
    const doc = (await call(api, "GET", `/v1/load-balancers/${lb.id}`)).load_balancer;
    if (doc.state === "running" && doc.is_configuration_applied) {
      return { tcp: { address: doc.public_ipv4, port: 9000 }, http: `http://${doc.public_ipv4}:9080/` };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the load balancer did not become running with its configuration applied");
}

async function measure(label: string, target: Target): Promise<Record<string, string>> {
  const row: Record<string, string> = { placement: label };
  row["tcp conn/s, 1"] = (await connectionsPerSecond(target, 1)).toFixed(0);
  row[`tcp conn/s, ${CONCURRENCY}`] = (await connectionsPerSecond(target, CONCURRENCY)).toFixed(0);
  row["tcp MiB/s, 1 stream"] = (await mibPerSecond(target, 1)).toFixed(0);
  row["tcp MiB/s, 4 streams"] = (await mibPerSecond(target, 4)).toFixed(0);
  row["http req/s, 1"] = (await requestsPerSecond(target, 1)).toFixed(0);
  row[`http req/s, ${CONCURRENCY}`] = (await requestsPerSecond(target, CONCURRENCY)).toFixed(0);
  console.log(JSON.stringify(row));
  return row;
}

const memberAddress = `${NETWORK}.0.11`;
const tcpMember = sinkMember(memberAddress, 0);
const tcpPort = (tcpMember.addr as Deno.NetAddr).port;
const httpMember = Deno.serve({ hostname: memberAddress, port: 0, onListen: () => {} }, () => new Response("member\n"));
const httpPort = httpMember.addr.port;
const rows: Record<string, string>[] = [];
const started = new Date();
const loadBefore = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");

rows.push(
  await measure("members directly (baseline)", {
    tcp: { address: memberAddress, port: tcpPort },
    http: `http://${memberAddress}:${httpPort}/`,
  }),
);

const seedFile = await Deno.makeTempFile({ suffix: ".json" });
await Deno.writeTextFile(seedFile, JSON.stringify(SEED));
const program = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "--allow-net",
    "--allow-read",
    "--allow-env",
    "--allow-run",
    "--allow-write",
    new URL("../simulator/main.ts", import.meta.url).pathname,
    "--listen=127.0.0.1:0",
    `--seed=${seedFile}`,
  ],
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const reader = program.stdout.pipeThrough(new TextDecoderStream()).getReader();
let out = "";
while (!/listening on (\S+) /.test(out)) {
  const { value, done } = await reader.read();
  if (done) throw new Error(`the simulator program ended: ${out}`);
  out += value;
}
(async () => {
  while (!(await reader.read()).done) { /* drained */ }
})();
const programUrl = /listening on (\S+) /.exec(out)![1];
rows.push(
  await measure(
    "simulator in its own process",
    await loadBalancerTargets(programUrl, { tcp: tcpPort, http: httpPort }),
  ),
);
program.kill("SIGTERM");
await program.status;
await Deno.remove(seedFile);

const inProcess: RunningSimulator = await startSimulator({
  seed: parseSeed({ ...SEED, settings: { ...SEED.settings, loopback_ipv4_range: `${NETWORK}.114.0/24` } }),
});
rows.push(
  await measure(
    "simulator in the clients' process (as tests run it)",
    await loadBalancerTargets(inProcess.url, {
      tcp: tcpPort,
      http: httpPort,
    }),
  ),
);
await inProcess.stop();
tcpMember.close();
await httpMember.shutdown();

const columns = Object.keys(rows[0]);
const haproxyVersion = new TextDecoder().decode(
  (await new Deno.Command(locateHaproxyTools().haproxy, { args: ["-v"], stdout: "piped" }).output()).stdout,
).split("\n")[0].replace(/ - https.*$/, "").trim();
const TYPESCRIPT_TABLE =
  `| placement | tcp conn/s, 1 | tcp conn/s, 32 | tcp MiB/s, 1 stream | tcp MiB/s, 4 streams | http req/s, 1 | http req/s, 32 |
| --- | --- | --- | --- | --- | --- | --- |
| members directly (baseline) | 4618 | 4806 | 1930 | 2472 | 9454 | 13168 |
| simulator in its own process | 1329 | 666 | 618 | 742 | 4270 | 11772 |
| simulator in the clients' process (as tests run it) | 521 | 467 | 869 | 971 | 9422 | 7950 |`;
const typescriptBaseline = [4618, 4806, 1930, 2472, 9454, 13168];
const typescriptOwnProcess = [1329, 666, 618, 742, 4270, 11772];
const [baseline, ownProcess] = rows;
const share = (value: number, of: number) => `${Math.round((100 * value) / of)} %`;
const sideBySide = [
  "| figure | TypeScript data plane | its share of that run's baseline | HAProxy | its share of this run's baseline |",
  "| --- | --- | --- | --- | --- |",
  ...columns.slice(1).map((c, i) =>
    `| ${c} | ${typescriptOwnProcess[i]} | ${share(typescriptOwnProcess[i], typescriptBaseline[i])} | ${
      ownProcess[c]
    } | ` +
    `${share(Number(ownProcess[c]), Number(baseline[c]))} |`
  ),
].join("\n");
const table = [
  `| ${columns.join(" | ")} |`,
  `| ${columns.map(() => "---").join(" | ")} |`,
  ...rows.map((row) => `| ${columns.map((c) => row[c]).join(" | ")} |`),
].join("\n");
const cpu = (await Deno.readTextFile("/proc/cpuinfo")).match(/model name\s*:\s*(.+)/)?.[1] ?? "unknown CPU";
const loadAfter = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
const report = `# Data plane benchmark

Run ${started.toISOString()} with Deno ${Deno.version.deno} and ${haproxyVersion} on ${navigator.hardwareConcurrency} ×
${cpu} (load average ${loadBefore} before, ${loadAfter} after; other work shared the machine):

\`\`\`sh
source scripts/env.sh && deno task bench:data-plane
\`\`\`

One frontend of a single-VM load balancer on the loopback data plane (its public IPv4 in 127.0.0.0/8), one member on
the network's address in 127.0.0.0/8; ${SECONDS} s per rate, ${MIB} MiB per throughput run, ${CONCURRENCY} clients for
the concurrent columns. \`tcp conn/s\`: connect, read the member's first line, close. \`tcp MiB/s\`: bytes sent until
the member counted them all. \`http req/s\`: \`fetch\` over kept-alive connections, a 7-byte answer. The baseline row
reaches the members without the load balancer. The clients and members run in the benchmark's process; the load
balancer is the simulator's HAProxy (its own process either way; in the last row the simulator's API runs in the
benchmark's process, as in the tests).

## HAProxy (this run)

${table}

## The TypeScript data plane it replaced (its last run, kept for comparison)

Run 2026-12-01T23:36:25Z with Deno 2.9.6 on 2 × Intel(R) Xeon(R) Processor (load average 2.51 before, 2.17 after), same
command and settings; the data plane was TypeScript in the simulator's process.

${TYPESCRIPT_TABLE}

## Side by side (the simulator in its own process, as users run it)

${sideBySide}

Reading it: the two runs had different machines and loads (see their baselines), so compare each figure as a share of
its own run's baseline. Every figure is bounded by the benchmark's own clients and members (one Deno process) sharing
2 cores with the load balancer (HAProxy's two threads, or the TypeScript data plane's one), as the baseline row shows.
On this shared 2-core machine repeated runs of the same commit varied by up to 3×: compare rows of one run, not runs.
`;
await Deno.writeTextFile(REPORT, report);
console.log(`\n${table}\n\nwritten to ${REPORT}`);
