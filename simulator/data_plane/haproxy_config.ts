/**
 * The HAProxy configuration of one owner's plan (`proxy_plan.ts`), and the files beside it (a crt-list per TLS
 * frontend, a PEM per certificate), all under the owner's directory:
 *
 * - `global`: a stats socket (also a listener, so a load balancer without frontends still runs its checks), the
 *   server-state file the data plane dumps before each reload (`load-server-state-from-file`: members keep their
 *   health across reloads), `hard-stop-after` from the seed's `reload_hard_stop_after_ms`;
 * - `defaults`: `timeout connect 5s`, `client`/`server`/`tunnel` 1 h, `retries 3` with `option redispatch 1` (a
 *   member refusing a connection hands it to the next), `option log-health-checks` (HAProxy reports each check that
 *   moves a member's health);
 * - a frontend per plan frontend: `mode`, its binds (with `ssl crt-list` on a TLS frontend), `option socket-stats`;
 *   in `http` mode `option forwardfor`, `X-Forwarded-Proto` set, and `redirect scheme https code 301` where asked;
 * - a backend per plan backend: `balance`, `option httpchk GET <path>` with `http-check expect status <expected>`
 *   for an `http` check, and a server per member with `weight`, `source`, `check inter <interval>s rise fall` (or
 *   `track`), `disabled` when not enabled or never to be contacted.
 *
 * A pure function: text in, text out.
 *
 * @module
 */
import type { SeedCertificate } from "../seed.ts";
import type { BackendPlan, FrontendPlan, ProxyPlan, ServerPlan } from "./proxy_plan.ts";

/** A configuration and the files it names. */
export interface RenderedConfig {
  /** `haproxy.cfg`. */
  config: string;
  /** Other files, by path: crt-lists and certificate PEMs. */
  files: Map<string, string>;
}

/** Where and how an owner's HAProxy runs. */
export interface RenderOptions {
  /** The owner's directory (no spaces). */
  dir: string;
  /** `hard-stop-after` in milliseconds; absent: old processes live until their connections close. */
  hardStopAfterMs?: number;
  /** The seed's certificates (a plan names only seeded ones). */
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
export function haproxyAddress(address: string, port?: number): string {
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
