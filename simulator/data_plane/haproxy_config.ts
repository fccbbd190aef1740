/**
 * The HAProxy configuration of one plan (`haproxy_plan.ts`) and the files beside it in the owner's folder (a crt-list
 * per TLS frontend, a PEM per certificate), as docs/simulator.md describes it ("The HAProxy of a load balancer"). The
 * stats socket is also a listener, so a load balancer without frontends still runs its checks; the server-state file
 * is the one `HaproxyProcess.reload` dumps; `option log-health-checks` makes HAProxy report the checks whose time
 * `/_simulator/state` shows. A pure function: text in, text out.
 *
 * @module
 */
import type { SeedCertificate } from "../seed.ts";
import type { BackendPlan, FrontendPlan, ProxyPlan, ServerPlan } from "./haproxy_plan.ts";

/** A configuration (`haproxy.cfg`) and the other files it names, by path: crt-lists and certificate PEMs. */
export interface RenderedConfig {
  config: string;
  files: Map<string, string>;
}

/**
 * Where and how an owner's HAProxy runs: its folder (no spaces); `hard-stop-after` in milliseconds (absent: old
 * processes live until their connections close); the seed's certificates (a plan names only seeded ones).
 */
export interface RenderOptions {
  dir: string;
  hardStopAfterMs?: number;
  certificates?: ReadonlyMap<string, SeedCertificate>;
}

/** The HAProxy configuration of `plan`. */
export function renderHaproxyConfig(plan: ProxyPlan, options: RenderOptions): RenderedConfig {
  const files = new Map<string, string>();
  const lines = [
    `# ${plan.owner}: rendered by the Ankra Cloud simulator's data plane`,
    "global",
    `  stats socket ${options.dir}/stats.sock mode 600 level admin`,
    `  server-state-file ${options.dir}/server-state`,
    // HAProxy reads 0 as "never": 1 ms is the closest it has to "at once".
    ...(options.hardStopAfterMs === undefined ? [] : [`  hard-stop-after ${Math.max(1, options.hardStopAfterMs)}ms`]),
    "",
    "defaults",
    "  timeout connect 5s",
    "  timeout client 1h",
    "  timeout server 1h",
    "  timeout tunnel 1h",
    "  retries 3",
    "  option redispatch 1",
    "  option log-health-checks",
    "  load-server-state-from-file global",
  ];
  for (const frontend of plan.frontends) {
    let crtList: string | undefined;
    if (frontend.certificateIds) {
      crtList = `${options.dir}/${frontend.name}.crtlist`;
      const pems = frontend.certificateIds.map((id) => `${options.dir}/certificate-${id}.pem`);
      frontend.certificateIds.forEach((id, i) => {
        const seeded = options.certificates?.get(id);
        if (seeded) files.set(pems[i], `${seeded.certificate_pem.trim()}\n${seeded.private_key_pem.trim()}\n`);
      });
      files.set(crtList, pems.join("\n") + "\n");
    }
    lines.push("", ...frontendSection(frontend, crtList));
  }
  for (const backend of plan.backends) lines.push("", ...backendSection(backend));
  return { config: lines.join("\n") + "\n", files };
}

/** `address:port` as HAProxy reads it (IPv6 in brackets). */
function haproxyAddress(address: string, port?: number): string {
  const host = address.includes(":") ? `[${address}]` : address;
  return port === undefined ? host : `${host}:${port}`;
}

/** The bind name of a listener, as `show stat` lists it with `option socket-stats`. */
export function bindName(listener: { address: string; port: number }): string {
  return `${listener.address}_${listener.port}`;
}

function frontendSection(frontend: FrontendPlan, crtList: string | undefined): string[] {
  const tls = crtList ? ` ssl crt-list ${crtList}` : "";
  return [
    `frontend ${frontend.name}`,
    `  mode ${frontend.mode}`,
    "  option socket-stats",
    ...frontend.binds.map((b) => `  bind ${haproxyAddress(b.address, b.port)} name ${bindName(b)}${tls}`),
    ...(frontend.mode === "http"
      ? [
        "  option forwardfor",
        `  http-request set-header X-Forwarded-Proto ${crtList ? "https" : "http"}`,
        ...(frontend.redirectToHttps ? ["  http-request redirect scheme https code 301"] : []),
      ]
      : []),
    `  default_backend ${frontend.backend}`,
  ];
}

function backendSection(backend: BackendPlan): string[] {
  const check = backend.check;
  return [
    `backend ${backend.name}`,
    `  mode ${backend.mode}`,
    `  balance ${backend.balance}`,
    ...(check.type === "http"
      ? [`  option httpchk GET ${check.path}`, `  http-check expect status ${check.expected_status}`]
      : []),
    ...backend.servers.map((server) => serverLine(server, backend)),
  ];
}

function serverLine(server: ServerPlan, backend: BackendPlan): string {
  const check = backend.check;
  const words = [`  server ${server.name} ${haproxyAddress(server.address, server.port)} weight ${server.weight}`];
  if (server.source) words.push(`source ${haproxyAddress(server.source)}`);
  if (server.track) words.push(`track ${server.track}`);
  else if (check.type !== "none" && !server.unreachable) {
    words.push(`check inter ${check.interval_seconds}s rise ${check.rise} fall ${check.fall}`);
  }
  if (!server.enabled || server.unreachable) words.push("disabled");
  return words.join(" ");
}
