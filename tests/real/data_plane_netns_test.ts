/**
 * The `netns` data plane, as root, inside a network namespace this test makes (`unshare --net`, blackhole default
 * routes: nothing can leave it): the simulator program serves the documentation ranges it allocates — the IPv4
 * 203.0.113.x and both IPv6 2001:db8:… addresses of a pair, on the privileged port 80 — and a member on the network
 * 10.0.0.0/16 answers, seeing the connection come from the load balancer's leg on that network. Ignored, saying why,
 * without root, `unshare`, `nsenter` or `ip`.
 */
import assert from "node:assert/strict";

const SIMULATOR = new URL("../../simulator/main.ts", import.meta.url).pathname;
const TOKEN = "act_bmV0bnMtZGF0YS1wbGFuZS10ZXN0LXRva2VuLXh4";

function missing(): string | undefined {
  if (Deno.uid() !== 0) return "it needs root (a network namespace and local routes)";
  for (const tool of ["unshare", "nsenter", "ip"]) {
    const found = (Deno.env.get("PATH") ?? "").split(":").some((dir) => {
      try {
        return Deno.statSync(`${dir}/${tool}`).isFile;
      } catch {
        return false;
      }
    });
    if (!found) return `${tool} is not installed`;
  }
  return undefined;
}

const blocker = missing();
if (blocker) console.log(`netns data plane test ignored: ${blocker}`);

/** What the client inside the namespace does: build a load balancer over the API, then request each address. */
const CLIENT = `
const api = "http://127.0.0.1:18787";
const headers = { authorization: "Bearer ${TOKEN}", "content-type": "application/json" };
const call = async (method, path, body) => {
  const r = await fetch(api + path, { method, headers, body: body && JSON.stringify(body) });
  const text = await r.text();
  if (r.status >= 400) throw new Error(method + " " + path + ": " + r.status + " " + text);
  return text ? JSON.parse(text) : {};
};
const lb = (await call("POST", "/v1/load-balancers", { zone: "de-fsn1", name: "web", network_id: "net-1", public_ipv4: true })).load_balancer;
const backend = (await call("POST", "/v1/load-balancers/" + lb.id + "/backends", { name: "http-80", mode: "http" })).backend;
await call("PUT", "/v1/load-balancers/" + lb.id + "/backends/" + backend.id + "/members", { members: [{ name: "m", address: "10.0.0.11", port: 30080 }] });
await call("POST", "/v1/load-balancers/" + lb.id + "/frontends", { name: "http-80", port: 80, backend_id: backend.id });
let doc;
for (let i = 0; i < 200; i++) {
  doc = (await call("GET", "/v1/load-balancers/" + lb.id)).load_balancer;
  if (doc.state === "running" && doc.is_configuration_applied) break;
  await new Promise((r) => setTimeout(r, 50));
}
const answers = [];
for (const address of [...doc.public_ipv6_addresses, doc.public_ipv4]) {
  const host = address.includes(":") ? "[" + address + "]" : address;
  answers.push({ address, answer: await (await fetch("http://" + host + "/")).json() });
}
console.log(JSON.stringify(answers));
`;

const MEMBER = `Deno.serve({ hostname: "10.0.0.11", port: 30080, onListen: () => console.log("member listening") },
  (request, info) => Response.json({ peer: info.remoteAddr.hostname, forwarded_for: request.headers.get("x-forwarded-for") }));`;

Deno.test({
  name: "inside its own namespace the netns data plane serves 203.0.113.x and 2001:db8:: on port 80 to a member",
  ignore: blocker !== undefined,
  async fn() {
    const holder = new Deno.Command("unshare", { args: ["--net", "sleep", "600"], stdin: "null" }).spawn();
    const inside = (
      command: string,
      args: string[],
    ) => ["--net=/proc/" + holder.pid + "/ns/net", "--", command, ...args];
    const children: Deno.ChildProcess[] = [];
    const seed = await Deno.makeTempFile({ suffix: ".json" });
    try {
      // Wait for the namespace, then cut every route out of it.
      for (let i = 0; i < 100; i++) {
        const own = await Deno.readLink(`/proc/${holder.pid}/ns/net`).catch(() => "");
        if (own && own !== await Deno.readLink("/proc/self/ns/net")) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      for (
        const args of [["link", "set", "lo", "up"], ["route", "add", "blackhole", "default"], [
          "-6",
          "route",
          "add",
          "blackhole",
          "default",
        ]]
      ) {
        const result = await new Deno.Command("nsenter", { args: inside("ip", args) }).output();
        assert.ok(result.success, `ip ${args.join(" ")}: ${new TextDecoder().decode(result.stderr)}`);
      }
      await Deno.writeTextFile(
        seed,
        JSON.stringify({
          settings: { load_balancer_create_delay_ms: 200 },
          zones: [{ name: "de-fsn1", region: "eu-central", compute_nodes: 2 }],
          networks: [{
            id: "net-1",
            name: "private",
            zone: "de-fsn1",
            cidr: "10.0.0.0/16",
            ula_prefix: "fd64:1:0:1::/64",
          }],
        }),
      );
      const simulator = new Deno.Command("nsenter", {
        args: inside(Deno.execPath(), [
          "run",
          "--allow-all",
          SIMULATOR,
          "--listen=127.0.0.1:18787",
          "--data-plane=netns",
          `--seed=${seed}`,
          "--token-from-env",
        ]),
        env: { ANKRA_CLOUD_TOKEN: TOKEN },
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      children.push(simulator);
      const simulatorErr = new Response(simulator.stderr).text();
      const started = await readUntil(simulator.stdout, /data plane: netns/);
      if (!/data plane: netns/.test(started)) {
        simulator.kill("SIGTERM");
        assert.fail(`the simulator did not start its netns data plane: ${started}${await simulatorErr}`);
      }
      const member = new Deno.Command("nsenter", {
        args: inside(Deno.execPath(), ["eval", MEMBER]),
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      children.push(member);
      assert.match(
        await readUntil(member.stdout, /member listening/),
        /member listening/,
        "the member binds 10.0.0.11",
      );
      const client = await new Deno.Command("nsenter", { args: inside(Deno.execPath(), ["eval", CLIENT]) }).output();
      const out = new TextDecoder().decode(client.stdout);
      assert.ok(client.success, new TextDecoder().decode(client.stderr));
      const answers = JSON.parse(out.trim().split("\n").at(-1)!) as {
        address: string;
        answer: { peer: string; forwarded_for: string };
      }[];
      assert.deepEqual(answers.map((a) => a.address.slice(0, 9)), ["2001:db8:", "2001:db8:", "203.0.113"]);
      for (const { address, answer } of answers) {
        assert.match(answer.peer, /^10\.0\.255\.\d+$/, `${address}: the member sees a VM's leg, not ${answer.peer}`);
        assert.ok(answer.forwarded_for, `${address}: X-Forwarded-For is set`);
      }
      assert.notEqual(answers[0].answer.peer, answers[1].answer.peer, "each IPv6 address is its own VM's");
      assert.equal(answers[2].answer.peer, answers[0].answer.peer, "the IPv4 address is held by the first VM");
    } finally {
      for (const child of children) {
        try {
          child.kill("SIGTERM");
        } catch { /* gone */ }
        await child.status;
      }
      holder.kill("SIGKILL");
      await holder.status;
      await Deno.remove(seed);
    }
  },
});

async function readUntil(stream: ReadableStream<Uint8Array>, until: RegExp): Promise<string> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const deadline = Date.now() + 30_000;
  while (!until.test(text) && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  // Keep draining, so the child never blocks on a full pipe.
  (async () => {
    while (!(await reader.read()).done) { /* drained */ }
  })().catch(() => {});
  return text;
}
