/**
 * What HAProxy says, read: `show stat` and `show proc` answers and standard error lines as HAProxy 2.6 writes them
 * (captured from a run), and what a server's status and last check mean for the API's `health` and `last_check`;
 * and the error that names the Debian package when HAProxy is missing.
 */
import assert from "node:assert/strict";
import { lastCheckOf, serverHealth } from "../../../simulator/data_plane/data_plane_state.ts";
import {
  alertText,
  locateHaproxyTools,
  readHaproxyLine,
  refusalOf,
} from "../../../simulator/data_plane/haproxy_process.ts";
import { parseShowProc, parseShowStat } from "../../../simulator/data_plane/haproxy_runtime.ts";

/** `@!<pid> show stat` of a worker: an http frontend with a listener, a backend of three servers. */
const SHOW_STAT =
  `# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,weight,act,bck,chkfail,chkdown,lastchg,downtime,qlimit,pid,iid,sid,throttle,lbtot,tracked,type,rate,rate_lim,rate_max,check_status,check_code,check_duration,hrsp_1xx,hrsp_2xx,hrsp_3xx,hrsp_4xx,hrsp_5xx,hrsp_other,hanafail,req_rate,req_rate_max,req_tot,cli_abrt,srv_abrt,comp_in,comp_out,comp_byp,comp_rsp,lastsess,last_chk,last_agt,qtime,ctime,rtime,ttime,agent_status,agent_code,agent_duration,check_desc,agent_desc,check_rise,check_fall,check_health,agent_rise,agent_fall,agent_health,addr,cookie,mode,algo,conn_rate,conn_rate_max,conn_tot,intercepted,dcon,dses,wrew,connect,reuse,cache_lookups,cache_hits,srv_icur,src_ilim,qtime_max,ctime_max,rtime_max,ttime_max,eint,idle_conn_cur,safe_conn_cur,used_conn_cur,need_conn_est,uweight,agg_server_status,agg_server_check_status,agg_check_status,-,ssl_sess,ssl_reused_sess,ssl_failed_handshake,h2_headers_rcvd,h2_data_rcvd,h2_settings_rcvd,h2_rst_stream_rcvd,h2_goaway_rcvd,h2_detected_conn_protocol_errors,h2_detected_strm_protocol_errors,h2_rst_stream_resp,h2_goaway_resp,h2_open_connections,h2_backend_open_streams,h2_total_connections,h2_backend_total_streams,h1_open_connections,h1_open_streams,h1_total_connections,h1_total_streams,h1_bytes_in,h1_bytes_out,h1_spliced_bytes_in,h1_spliced_bytes_out,
fe-1.vm0,FRONTEND,,,0,0,9979,0,0,0,0,0,0,,,,,OPEN,,,,,,,,,1,2,0,,,,0,0,0,0,,,,0,0,0,0,0,0,,0,0,0,,,0,0,0,0,,,,,,,,,,,,,,,,,,,,,http,,0,0,0,0,0,0,0,,,0,0,,,,,,,0,,,,,,,,,-,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
fe-1.vm0,127.9.0.1_18006,,,0,0,0,0,0,0,0,0,0,,,,,OPEN,,,,,,,,,1,2,1,,,,3,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,127.9.0.1:18006,,http,,,,,,0,0,0,,,,,,,,,,,0,,,,,,,,,-,0,0,0,,,,,,,,,,,,,,,,,,,,,,
be-1.vm0,mb-1_127.9.0.12_18012,0,0,0,0,,0,0,0,,0,,0,0,0,0,DOWN,100,1,0,1,1,4,4,,1,3,1,,0,,2,0,,0,L7STS,503,0,0,0,0,0,0,0,,,,0,0,0,,,,,-1,Service Unavailable,,0,0,0,0,,,,Layer7 wrong status,,2,3,0,,,,127.9.0.12:18012,,http,,,,,,,,0,0,0,,,0,,0,0,0,0,0,0,0,0,1,100,,,,-,0,0,0,,,,,,,,,,,,,,,,,,,,,,
be-1.vm0,mb-2_127.9.0.11_18011,0,0,0,0,,0,0,0,,0,,0,0,0,0,DOWN,100,1,0,1,1,3,3,,1,3,2,,0,,2,0,,0,L4CON,,0,0,0,0,0,0,0,,,,0,0,0,,,,,-1,Connection refused,,0,0,0,0,,,,Layer4 connection problem,,2,3,0,,,,127.9.0.11:18011,,http,,,,,,,,0,0,0,,,0,,0,0,0,0,0,0,0,0,1,100,,,,-,0,0,0,,,,,,,,,,,,,,,,,,,,,,
be-1.vm0,mb-3_127.9.0.13_18013,0,0,0,0,,0,0,0,,0,,0,0,0,0,MAINT,100,1,0,,,4,,,1,3,3,,0,,2,0,,0,,,,0,0,0,0,0,0,,,,0,0,0,,,,,-1,,,0,0,0,0,,,,,,,,,,,,127.9.0.13:18013,,http,,,,,,,,0,0,0,,,0,,0,0,0,0,0,0,0,0,0,100,,,,-,0,0,0,,,,,,,,,,,,,,,,,,,,,,
be-1.vm0,BACKEND,0,0,0,0,998,0,0,0,0,0,,0,0,0,0,DOWN,0,0,0,,1,3,3,,1,3,0,,0,,1,0,,0,,,,0,0,0,0,0,0,,,,0,0,0,0,0,0,0,-1,,,0,0,0,0,,,,,,,,,,,,,,http,roundrobin,,,,,,,0,0,0,0,0,,,0,0,0,0,0,,,,,0,0,0,0,-,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,8,8,331,75,0,0,
`;

Deno.test("show stat: the servers' status, check and counters, the frontend's and listener's rows", () => {
  const rows = parseShowStat(SHOW_STAT);
  assert.deepEqual(rows.map((r) => [r.pxname, r.svname, r.type]), [
    ["fe-1.vm0", "FRONTEND", "0"],
    ["fe-1.vm0", "127.9.0.1_18006", "3"],
    ["be-1.vm0", "mb-1_127.9.0.12_18012", "2"],
    ["be-1.vm0", "mb-2_127.9.0.11_18011", "2"],
    ["be-1.vm0", "mb-3_127.9.0.13_18013", "2"],
    ["be-1.vm0", "BACKEND", "1"],
  ]);
  const [sick, refused, disabled] = rows.slice(2, 5);
  assert.deepEqual(lastCheckOf(sick), {
    result: "failed",
    detail: "L7STS Layer7 wrong status, code 503, Service Unavailable",
  });
  assert.deepEqual(lastCheckOf(refused), {
    result: "failed",
    detail: "L4CON Layer4 connection problem, Connection refused",
  });
  assert.equal(lastCheckOf(disabled), undefined, "never checked");
  assert.deepEqual([sick, refused, disabled].map((r) => serverHealth(r.status)), ["down", "down", "down"]);
  assert.equal(parseShowStat("Unknown command\n").length, 0);
});

Deno.test("a server is up when UP (also while falling, at weight 0, or with no check), down otherwise", () => {
  for (const status of ["UP", "UP 1/3", "NOLB", "DRAIN", "no check"]) assert.equal(serverHealth(status), "up", status);
  for (const status of ["DOWN", "DOWN 1/2", "MAINT", "MAINT (via be-1.vm0/a)"]) {
    assert.equal(serverHealth(status), "down", status);
  }
  const row = parseShowStat(SHOW_STAT)[2];
  assert.equal(
    lastCheckOf({
      ...row,
      check_status: "* L4OK",
      check_code: "",
      last_chk: "",
      check_desc: "Layer4 check passed",
    })?.result,
    "passed",
    "a check under way shows the last one",
  );
  assert.equal(lastCheckOf({ ...row, check_status: "INI" }), undefined);
});

Deno.test("show proc: the current worker and the old ones still finishing connections; reloads and failures", () => {
  assert.deepEqual(
    parseShowProc(`#<PID>          <type>          <reloads>       <uptime>        <version>
1162            master          5 [failed: 1]   0d00h02m07s     2.6.12-1+deb12u4
# workers
1271            worker          1               0d00h00m00s     2.6.12-1+deb12u4
# old workers
1233            worker          3               0d00h00m43s     2.6.12-1+deb12u4
1240            worker          2               0d00h00m40s     2.6.12-1+deb12u4
# programs
`),
    { reloads: 5, failedReloads: 1, current: 1271, old: [1233, 1240] },
  );
  assert.deepEqual(parseShowProc("#<PID> <type>\n1 master 0 [failed: 0] 0d 2.6\n# workers\n# programs\n"), {
    reloads: 0,
    failedReloads: 0,
    old: [],
  });
});

Deno.test("standard error: a load's outcome, a bind refused, a check reported, an alert's words", () => {
  assert.deepEqual(readHaproxyLine("[NOTICE]   (19704) : Loading success."), { kind: "loaded", success: true });
  assert.deepEqual(readHaproxyLine("[WARNING]  (29734) : Loading failure!"), { kind: "loaded", success: false });
  const bind = "[ALERT]    (29734) : Binding [h.cfg:16] for frontend f1: cannot bind socket (Address already in use) " +
    "for [127.9.0.1:18002]";
  assert.deepEqual(readHaproxyLine(bind), {
    kind: "bind_failed",
    address: "127.9.0.1",
    port: 18002,
    detail: "Address already in use",
  });
  assert.equal(
    alertText(bind),
    "Binding [h.cfg:16] for frontend f1: cannot bind socket (Address already in use) for [127.9.0.1:18002]",
  );
  assert.equal(alertText("[WARNING]  (1) : Proxy f1 stopped"), undefined);
  assert.deepEqual(
    readHaproxyLine(
      "[WARNING]  (25439) : Health check for server be-1.vm0/mb-1_127.9.0.12_18012 failed, reason: Layer7 wrong " +
        'status, code: 503, info: "Service Unavailable", check duration: 0ms, status: 0/2 DOWN.',
    ),
    { kind: "check", server: "be-1.vm0/mb-1_127.9.0.12_18012", passed: false },
  );
  assert.deepEqual(
    readHaproxyLine(
      "[WARNING]  (19896) : Health check for server b1/s2 succeeded, reason: Layer4 check passed, check duration: " +
        "0ms, status: 3/3 UP.",
    ),
    { kind: "check", server: "b1/s2", passed: true },
  );
});

Deno.test("without haproxy the data plane says which Debian package to install", () => {
  assert.throws(
    () => locateHaproxyTools(["/nonexistent-ankra-test"]),
    /haproxy is not installed .*install Debian's package haproxy \(apt-get install haproxy\), or run without --data-plane/,
  );
});

Deno.test("a refused bind names the listener and says what to do, in HAProxy's words too; other refusals as they are", () => {
  const alert = "Binding [/d/haproxy.cfg:19] for frontend fe-6.vm0: cannot bind socket (Address already in use) for " +
    "[127.24.113.1:39443]";
  assert.deepEqual(refusalOf(["[haproxy.main()] Some protocols failed to start their listeners! Exiting.", alert]), {
    error: `cannot listen on 127.24.113.1:39443: the address is in use; stop what listens there or free the port ` +
      `(haproxy: ${alert})`,
    key: "127.24.113.1|39443",
  });
  const v6 = refusalOf(["Binding [c:9] for frontend f: cannot bind socket (Permission denied) for [2001:db8::1:80]"]);
  assert.equal(v6.key, "2001:db8::1|80");
  assert.match(v6.error, /^cannot listen on \[2001:db8::1\]:80: permission denied; ports below 1024 need root/);
  assert.deepEqual(refusalOf(["parsing [c:3]: unknown keyword 'x'"]), {
    error: "haproxy refused the configuration: parsing [c:3]: unknown keyword 'x'",
  });
});
