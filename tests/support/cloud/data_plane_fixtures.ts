// deno-lint-ignore-file no-explicit-any -- API answers are JSON documents read field by field
/**
 * What the data plane tests share: a simulator with the `loopback` data plane on its own loopback ranges (public
 * IPv4 and network, picked at random so a run never meets another's listeners), the customer and control API over
 * HTTP, member servers on loopback that say who they are, and clients that count who answered.
 *
 * @module
 */
import net from "node:net";
import { type RunningSimulator, startSimulator } from "../../../simulator/server.ts";
import { eventually } from "../wait/eventually.ts";
import { TEST_TOKEN, testSeed } from "./simulator.ts";

/** A simulator with the loopback data plane, its network and the lines its data plane logged. */
export interface DataPlaneWorld extends AsyncDisposable {
  /** The simulator. */
  simulator: RunningSimulator;
  /** The network `net-1` (a /16 in 127.0.0.0/8), e.g. `127.42.0.0/16`; hosts are `<prefix>.0.x`. */
  networkPrefix: string;
  /** The data plane's log lines. */
  logLines: string[];
  /** A customer API call with the test token; throws on a status of 400 or more unless `allow` lists it. */
  call(method: string, path: string, body?: unknown, allow?: number[]): Promise<{ status: number; body: any }>;
  /** The control API's state. */
  state(): Promise<any>;
}

/** Starts a simulator whose data plane is `loopback`, with `net-1` inside 127.0.0.0/8 and `extra` merged in. */
export async function startDataPlaneWorld(extra: Record<string, unknown> = {}): Promise<DataPlaneWorld> {
  const octet = 20 + (crypto.getRandomValues(new Uint8Array(1))[0] % 200);
  const networkPrefix = `127.${octet}`;
  const logLines: string[] = [];
  const simulator = await startSimulator({
    seed: testSeed({
      ...extra,
      settings: {
        data_plane: "loopback",
        loopback_ipv4_range: `127.${octet}.113.0/24`,
        ...(extra.settings as object ?? {}),
      },
      networks: [{
        id: "net-1",
        name: "private",
        zone: "de-fsn1",
        cidr: `${networkPrefix}.0.0/16`,
        ula_prefix: "fd64:1:0:1::/64",
      }],
    }),
    dataPlaneLog: (line) => logLines.push(line),
  });
  const call: DataPlaneWorld["call"] = async (method, path, body, allow = []) => {
    const response = await fetch(`${simulator.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_TOKEN}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : {};
    if (response.status >= 400 && !allow.includes(response.status)) {
      throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    }
    return { status: response.status, body: parsed };
  };
  return {
    simulator,
    networkPrefix,
    logLines,
    call,
    async state() {
      return await (await fetch(`${simulator.url}/_simulator/state`)).json();
    },
    async [Symbol.asyncDispose]() {
      await simulator.stop();
    },
  };
}

/** A load balancer with one backend, its members and one frontend, as the API builds it. */
export interface BuiltLoadBalancer {
  /** Load balancer id. */
  id: string;
  /** Backend id. */
  backendId: string;
  /** Frontend id. */
  frontendId: string;
  /** Its public IPv4 (served on loopback). */
  ipv4: string;
}

/** Creates a running single-VM load balancer on `net-1` with one backend and one frontend, and waits until applied. */
export async function buildLoadBalancer(
  world: DataPlaneWorld,
  options: {
    port: number;
    backend: Record<string, unknown>;
    members: Record<string, unknown>[];
    frontend?: Record<string, unknown>;
  },
): Promise<BuiltLoadBalancer> {
  const { body } = await world.call("POST", "/v1/load-balancers", {
    zone: "de-fsn1",
    name: `lb-${options.port}`,
    network_id: "net-1",
    high_availability: false,
    public_ipv4: true,
  });
  const id = body.load_balancer.id as string;
  const backend = await world.call("POST", `/v1/load-balancers/${id}/backends`, { name: "b", ...options.backend });
  const backendId = backend.body.backend.id as string;
  await world.call("PUT", `/v1/load-balancers/${id}/backends/${backendId}/members`, { members: options.members });
  const frontend = await world.call("POST", `/v1/load-balancers/${id}/frontends`, {
    name: "f",
    port: options.port,
    backend_id: backendId,
    ...options.frontend,
  });
  const lb = await waitApplied(world, id);
  return { id, backendId, frontendId: frontend.body.frontend.id, ipv4: lb.public_ipv4 };
}

/** Waits until the load balancer is `running` with its configuration applied; its document. */
export async function waitApplied(world: DataPlaneWorld, id: string): Promise<any> {
  let lb: any;
  await eventually(
    async () => {
      lb = (await world.call("GET", `/v1/load-balancers/${id}`)).body.load_balancer;
      return lb.state === "running" && lb.is_configuration_applied;
    },
    10_000,
    `load balancer ${id} running with its configuration applied`,
  );
  return lb;
}

/** The data plane's state of one member of a load balancer (from `/_simulator/state`). */
export async function memberState(world: DataPlaneWorld, lbId: string, name: string): Promise<any> {
  const state = await world.state();
  const lb = state.load_balancers.find((l: any) => l.id === lbId);
  return lb.backends.flatMap((b: any) => b.members).find((m: any) => m.name === name);
}

/** A TCP member on `address:port` that writes its name to every connection and counts them. */
export interface TcpMember extends AsyncDisposable {
  /** Its name. */
  name: string;
  /** Connections accepted (health checks included). */
  accepted: number;
  /** Connections that sent at least one byte (a tcp health check sends none). */
  served: number;
  /** Connections open now. */
  open: Set<Deno.Conn>;
  /** Peer addresses of the connections, in order. */
  peers: string[];
  /** Stops accepting (connections are refused) and closes the open ones. */
  close(): void;
}

/** Starts a TCP member: it answers `<name>\n` and then echoes what it receives until the client closes. */
export function tcpMember(name: string, address: string, port: number): TcpMember {
  const listener = Deno.listen({ hostname: address, port });
  const member: TcpMember = {
    name,
    accepted: 0,
    served: 0,
    open: new Set(),
    peers: [],
    close() {
      try {
        listener.close();
      } catch { /* closed already */ }
      for (const conn of member.open) conn.close();
      member.open.clear();
    },
    [Symbol.asyncDispose]() {
      member.close();
      return Promise.resolve();
    },
  };
  (async () => {
    for await (const conn of listener) {
      member.accepted++;
      member.open.add(conn);
      member.peers.push((conn.remoteAddr as Deno.NetAddr).hostname);
      (async () => {
        try {
          await conn.write(new TextEncoder().encode(`${name}\n`));
          const buffer = new Uint8Array(16 * 1024);
          let first = true;
          for (let n = await conn.read(buffer); n !== null; n = await conn.read(buffer)) {
            if (first) member.served++;
            first = false;
            await conn.write(buffer.subarray(0, n));
          }
        } catch { /* the peer went away */ }
        if (member.open.delete(conn)) {
          try {
            conn.close();
          } catch { /* closed already */ }
        }
      })();
    }
  })().catch(() => {});
  return member;
}

/**
 * Connects to `address:port` (from `from`, a loopback address, when given), reads the first line (the member's name)
 * and closes; undefined when nothing answers.
 */
export function firstLine(address: string, port: number, from?: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: address, port, ...(from ? { localAddress: from } : {}) });
    let text = "";
    const done = (value: string | undefined) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(5_000, () => done(undefined));
    socket.on("data", (chunk) => {
      text += chunk;
      if (text.includes("\n")) done(text.slice(0, text.indexOf("\n")));
    });
    socket.on("error", () => done(undefined));
    socket.on("close", () => done(text.includes("\n") ? text.slice(0, text.indexOf("\n")) : undefined));
  });
}

/** Connects to `address:port`, says `who?` and reads the member's name; undefined when nothing answers. */
export async function askName(address: string, port: number): Promise<string | undefined> {
  try {
    const conn = await Deno.connect({ hostname: address, port });
    try {
      await conn.write(new TextEncoder().encode("who?\n"));
      let text = "";
      const buffer = new Uint8Array(1024);
      while (!text.includes("\n")) {
        const n = await conn.read(buffer);
        if (n === null) return undefined;
        text += new TextDecoder().decode(buffer.subarray(0, n));
      }
      return text.slice(0, text.indexOf("\n"));
    } finally {
      conn.close();
    }
  } catch {
    return undefined;
  }
}

/** A connection held open: the member that answered it, and a way to talk over it and close it. */
export interface HeldConnection {
  /** The member's name. */
  member: string;
  /** Sends `text` and resolves with what comes back (the member echoes). */
  echo(text: string): Promise<string>;
  /** Closes it. */
  close(): void;
}

/** Opens a connection through `address:port` and keeps it open. */
export async function holdConnection(address: string, port: number): Promise<HeldConnection> {
  const conn = await Deno.connect({ hostname: address, port });
  const reader = conn.readable.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const readUntil = async (predicate: (t: string) => boolean) => {
    while (!predicate(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the connection through ${address}:${port} closed; read so far: ${text}`);
      text += value;
    }
  };
  await readUntil((t) => t.includes("\n"));
  const member = text.slice(0, text.indexOf("\n"));
  text = text.slice(text.indexOf("\n") + 1);
  return {
    member,
    async echo(message) {
      await conn.write(new TextEncoder().encode(message));
      await readUntil((t) => t.length >= message.length);
      const answer = text.slice(0, message.length);
      text = text.slice(message.length);
      return answer;
    },
    close() {
      reader.cancel().catch(() => {});
      try {
        conn.close();
      } catch { /* closed already */ }
    },
  };
}

/** A port that was free on `address` a moment ago. */
export function freePortOn(address: string): number {
  const listener = Deno.listen({ hostname: address, port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** An HTTP member: `answer` decides each reply; it sees each request and who sent it. */
export interface HttpMember extends AsyncDisposable {
  /** Requests it answered, with the headers it received and the peer address. */
  requests: { path: string; headers: Headers; peer: string }[];
}

/**
 * Starts an HTTP member on `address:port`; by default it reads the body and answers 200 with
 * `{"member": name, …what it received}`.
 */
export function httpMember(
  name: string,
  where: { address: string; port: number },
  answer?: (request: Request) => Response,
): HttpMember {
  const requests: HttpMember["requests"] = [];
  const server = Deno.serve(
    { hostname: where.address, port: where.port, onListen: () => {} },
    async (request, info) => {
      const url = new URL(request.url);
      const peer = info.remoteAddr.hostname;
      requests.push({ path: url.pathname, headers: request.headers, peer });
      if (answer) return answer(request);
      const body = await request.text();
      return Response.json({
        member: name,
        path: url.pathname,
        body_length: body.length,
        peer,
        forwarded_for: request.headers.get("x-forwarded-for"),
        forwarded_proto: request.headers.get("x-forwarded-proto"),
        host: request.headers.get("host"),
      });
    },
  );
  return {
    requests,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}
