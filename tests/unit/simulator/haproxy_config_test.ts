/**
 * What each owner's HAProxy is told: the plan of a load balancer pair (a frontend per VM holding a served address, a
 * backend per VM whose servers leave from that VM's leg, `.vm1` tracking `.vm0`'s checks, a member the mode may not
 * contact disabled and unchecked, a TLS frontend without its certificate left out) and of a combined edge, and the
 * configuration text rendered from them.
 */
import assert from "node:assert/strict";
import { renderHaproxyConfig } from "../../../simulator/data_plane/haproxy_config.ts";
import { planHaproxies } from "../../../simulator/data_plane/haproxy_plan.ts";
import type { EdgeState } from "../../../simulator/edges.ts";
import type { LoadBalancerState } from "../../../simulator/load_balancer_state.ts";
import { World } from "../../../simulator/world.ts";
import { testSeed } from "../../support/cloud/simulator.ts";

const PEM = { certificate_pem: "-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----", private_key_pem: "K" };

function pair(): LoadBalancerState {
  return {
    id: "lb-1",
    seq: 0,
    zone: "de-fsn1",
    name: "web",
    network_id: "net-1",
    state: "running",
    labels: {},
    high_availability: true,
    wants_ipv4: true,
    public_ipv4: "203.0.113.1",
    public_ipv6_addresses: ["2001:db8:0:1::1", "2001:db8:0:2::1"],
    configuration_generation: 5,
    applied_generation: 4,
    frontends: [
      {
        id: "fe-1",
        name: "http",
        port: 80,
        backend_id: "be-1",
        tls: false,
        certificate_ids: [],
        redirect_to_https: true,
      },
      {
        id: "fe-2",
        name: "https",
        port: 443,
        backend_id: "be-1",
        tls: true,
        certificate_ids: ["c"],
        redirect_to_https: false,
      },
    ],
    backends: [{
      id: "be-1",
      name: "web",
      mode: "http",
      balance: "leastconn",
      health_check: {
        type: "http",
        path: "/healthz",
        expected_status: "200-399",
        interval_seconds: 2,
        rise: 2,
        fall: 3,
      },
      members: [
        { id: "mb-1", backend_id: "be-1", name: "a", address: "10.0.0.11", port: 30080, weight: 100, enabled: true },
        {
          id: "mb-2",
          backend_id: "be-1",
          name: "b",
          address: "fd64:1:0:1::a00:c",
          port: 30080,
          weight: 0,
          enabled: false,
        },
      ],
    }],
    active_operation: null,
    created_at: "2026-01-01T00:00:00Z",
  };
}

function planOf(
  lb: LoadBalancerState,
  mode: "loopback" | "netns",
  certificates?: Map<string, typeof PEM & { id: string }>,
) {
  const networks = [new World(testSeed()).network("net-1")];
  return planHaproxies({ loadBalancers: [lb], edges: [], networks, mode, certificates })[0];
}

Deno.test("a load balancer pair renders a frontend and backend per VM, each VM's servers leaving from its own leg", () => {
  const plan = planOf(pair(), "netns", new Map([["c", { id: "c", ...PEM }]]));
  const rendered = renderHaproxyConfig(plan, {
    dir: "/run/lb-1",
    hardStopAfterMs: 1500,
    certificates: new Map([["c", { id: "c", ...PEM }]]),
  });
  assert.equal(
    rendered.config,
    `# lb-1: rendered by the Ankra Cloud simulator's data plane
global
  stats socket /run/lb-1/stats.sock mode 600 level admin
  server-state-file /run/lb-1/server-state
  hard-stop-after 1500ms

defaults
  timeout connect 5s
  timeout client 1h
  timeout server 1h
  timeout tunnel 1h
  retries 3
  option redispatch 1
  option log-health-checks
  load-server-state-from-file global

frontend fe-1.vm0
  mode http
  option socket-stats
  bind [2001:db8:0:1::1]:80 name 2001:db8:0:1::1_80
  bind 203.0.113.1:80 name 203.0.113.1_80
  option forwardfor
  http-request set-header X-Forwarded-Proto http
  http-request redirect scheme https code 301
  default_backend be-1.vm0

frontend fe-1.vm1
  mode http
  option socket-stats
  bind [2001:db8:0:2::1]:80 name 2001:db8:0:2::1_80
  option forwardfor
  http-request set-header X-Forwarded-Proto http
  http-request redirect scheme https code 301
  default_backend be-1.vm1

frontend fe-2.vm0
  mode http
  option socket-stats
  bind [2001:db8:0:1::1]:443 name 2001:db8:0:1::1_443 ssl crt-list /run/lb-1/fe-2.vm0.crtlist
  bind 203.0.113.1:443 name 203.0.113.1_443 ssl crt-list /run/lb-1/fe-2.vm0.crtlist
  option forwardfor
  http-request set-header X-Forwarded-Proto https
  default_backend be-1.vm0

frontend fe-2.vm1
  mode http
  option socket-stats
  bind [2001:db8:0:2::1]:443 name 2001:db8:0:2::1_443 ssl crt-list /run/lb-1/fe-2.vm1.crtlist
  option forwardfor
  http-request set-header X-Forwarded-Proto https
  default_backend be-1.vm1

backend be-1.vm0
  mode http
  balance leastconn
  option httpchk GET /healthz
  http-check expect status 200-399
  server mb-1_10.0.0.11_30080 10.0.0.11:30080 weight 100 source 10.0.255.254 check inter 2s rise 2 fall 3
  server mb-2_fd64:1:0:1::a00:c_30080 [fd64:1:0:1::a00:c]:30080 weight 0 source [fd64:1:0:1::a00:fffe] check inter 2s rise 2 fall 3 disabled

backend be-1.vm1
  mode http
  balance leastconn
  option httpchk GET /healthz
  http-check expect status 200-399
  server mb-1_10.0.0.11_30080 10.0.0.11:30080 weight 100 source 10.0.255.253 track be-1.vm0/mb-1_10.0.0.11_30080
  server mb-2_fd64:1:0:1::a00:c_30080 [fd64:1:0:1::a00:c]:30080 weight 0 source [fd64:1:0:1::a00:fffd] track be-1.vm0/mb-2_fd64:1:0:1::a00:c_30080 disabled
`,
  );
  assert.equal(rendered.files.get("/run/lb-1/fe-2.vm0.crtlist"), "/run/lb-1/certificate-c.pem\n");
  assert.equal(rendered.files.get("/run/lb-1/certificate-c.pem"), `${PEM.certificate_pem}\nK\n`);
});

Deno.test("loopback: only VM 0 serves (IPv6 is not served), a member outside loopback is disabled and never checked", () => {
  const lb = pair();
  lb.public_ipv4 = "127.203.113.1";
  lb.backends[0].members[0].address = "127.0.0.11";
  lb.backends[0].health_check = { ...lb.backends[0].health_check, type: "tcp" };
  const plan = planOf(lb, "loopback");
  assert.deepEqual(plan.frontends.map((f) => [f.name, f.binds.map((b) => b.key)]), [["fe-1.vm0", [
    "127.203.113.1|80",
  ]]]);
  assert.deepEqual([...plan.problems], [[
    "127.203.113.1|443",
    `certificate c is not in the simulator's seed: add it to "certificates" with its PEM and key`,
  ]]);
  const text = renderHaproxyConfig(plan, { dir: "/d" }).config;
  assert.doesNotMatch(text, /hard-stop-after/, "no hard stop unless the seed sets one");
  const atOnce = renderHaproxyConfig(plan, { dir: "/d", hardStopAfterMs: 0 }).config;
  assert.match(atOnce, /\n {2}hard-stop-after 1ms\n/, "0 ms is at once (HAProxy would read 0 as never)");
  assert.doesNotMatch(text, /vm1|httpchk/);
  assert.ok(
    text.includes("\n  server mb-1_127.0.0.11_30080 127.0.0.11:30080 weight 100 check inter 2s rise 2 fall 3\n"),
  );
  assert.ok(text.includes("\n  server mb-2_fd64:1:0:1::a00:c_30080 [fd64:1:0:1::a00:c]:30080 weight 0 disabled\n"));
  assert.match(plan.backends[0].servers[1].unreachable!, /not a loopback address/);
});

Deno.test("a combined edge: a tcp frontend and roundrobin backend per frontend_port, checked with the API's defaults", () => {
  const edge = {
    id: "edge-1",
    state: "running",
    placement: "combined",
    roles: ["load_balancer"],
    machines: [{
      public_ipv4: "203.0.113.9",
      public_ipv6: "2001:db8:0:9::1",
      private_ipv4: "10.0.0.2",
      private_ipv6: "fd64:1:0:1::a00:2",
    }],
  } as unknown as EdgeState;
  const members = [
    { id: "em-1", name: "a", frontend_port: 30080, address: "10.0.0.11", port: 31000, weight: 100, enabled: true },
    {
      id: "em-2",
      name: "b",
      frontend_port: 30080,
      address: "fd64:1:0:1::a00:c",
      port: 31000,
      weight: 50,
      enabled: true,
    },
  ];
  const [plan] = planHaproxies({
    loadBalancers: [],
    edges: [{ edge, members }],
    networks: [],
    mode: "netns",
    certificates: undefined,
  });
  const text = renderHaproxyConfig(plan, { dir: "/d" }).config;
  assert.ok(
    text.endsWith(`
frontend port-30080
  mode tcp
  option socket-stats
  bind [2001:db8:0:9::1]:30080 name 2001:db8:0:9::1_30080
  bind 203.0.113.9:30080 name 203.0.113.9_30080
  default_backend port-30080

backend port-30080
  mode tcp
  balance roundrobin
  server a_10.0.0.11_31000 10.0.0.11:31000 weight 100 source 10.0.0.2 check inter 2s rise 2 fall 3
  server b_fd64:1:0:1::a00:c_31000 [fd64:1:0:1::a00:c]:31000 weight 50 source [fd64:1:0:1::a00:2] check inter 2s rise 2 fall 3
`),
    text,
  );
});
