/**
 * The hand-written Kubernetes client, informer and patches against the real kube-apiserver (its events:
 * `kube_events_test.ts`).
 */
import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { KubeClient } from "../../lib/kube/client.ts";
import { isKubeError, KubeApiError } from "../../lib/kube/errors.ts";
import { eventually } from "../support/wait/eventually.ts";
import { Informer } from "../../lib/kube/informer.ts";
import { parseKubeconfig } from "../../lib/kube/kubeconfig.ts";
import { type SlimNode, slimNode } from "../../lib/kube/slim.ts";
import { MetricsRegistry } from "../../lib/runtime/metrics.ts";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { kubeletNode, kubeOk } from "../support/http/kube_http.ts";
import { adminConnection, adminKubeClient } from "../support/controller/kube_clients.ts";

/** The admin's client, with the client's default rate limit. */
function adminClient(options: { metrics?: MetricsRegistry } = {}): KubeClient {
  return adminKubeClient(testControlPlane(), options);
}

Deno.test("the client authenticates with a kubeconfig's client certificate (mTLS)", async () => {
  const plane = testControlPlane();
  const cert = await Deno.readTextFile(`${plane.dir}/admin.crt`);
  const key = await Deno.readTextFile(`${plane.dir}/admin.key`);
  const text = `apiVersion: v1
clusters:
- name: t
  cluster:
    server: ${plane.url}
    certificate-authority: ${plane.caFile}
users:
- name: admin
  user:
    client-certificate-data: ${btoa(cert)}
    client-key-data: ${btoa(key)}
contexts:
- name: t
  context: {cluster: t, user: admin}
current-context: t
`;
  const client = new KubeClient(await parseKubeconfig(text, `${plane.dir}/kubeconfig-mtls`));
  try {
    const version = await client.get<{ gitVersion: string }>("/version");
    assert.match(version.gitVersion, /^v1\./);
    const nodes = await client.list("/api/v1/nodes");
    assert.ok(Array.isArray(nodes.items));
  } finally {
    client.close();
  }
});

Deno.test("the client runs an exec credential plugin, and re-reads a rotated token file", async () => {
  const plane = testControlPlane();
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(
    `${dir}/plugin.sh`,
    `#!/bin/sh\ncase "$KUBERNETES_EXEC_INFO" in *ExecCredential*) ;; *) exit 9;; esac\n` +
      `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$TOKEN"\n`,
  );
  await Deno.chmod(`${dir}/plugin.sh`, 0o755);
  const exec = new KubeClient({
    server: plane.url,
    caCerts: [plane.caCert],
    auth: {
      kind: "exec",
      exec: {
        command: "./plugin.sh",
        args: [],
        env: { TOKEN: plane.token },
        apiVersion: "client.authentication.k8s.io/v1",
        baseDir: dir,
      },
    },
    source: "test",
  });
  const file = new KubeClient({
    server: plane.url,
    caCerts: [plane.caCert],
    auth: { kind: "tokenFile", path: `${dir}/token` },
    source: "test",
  });
  try {
    assert.ok((await exec.list("/api/v1/namespaces")).items.length >= 3);
    await Deno.writeTextFile(`${dir}/token`, "expired-token\n");
    await assert.rejects(file.list("/api/v1/namespaces"), (e: KubeApiError) => e.kind === "unauthorized");
    await Deno.writeTextFile(`${dir}/token`, `${plane.token}\n`);
    // After a 401 the file is read again: a rotated token is picked up without a restart.
    assert.ok((await file.list("/api/v1/namespaces")).items.length >= 3);
  } finally {
    exec.close();
    file.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("lists are paginated with limit/continue and errors are typed", async () => {
  const client = adminClient();
  const prefix = uniqueName("page");
  try {
    for (let i = 0; i < 5; i++) {
      await client.request("POST", "/api/v1/nodes", { body: kubeletNode(`${prefix}-${i}`, { images: 0 }) });
    }
    const all = await client.list<V1Node>("/api/v1/nodes", { limit: 2, labelSelector: undefined });
    assert.ok(all.items.filter((n) => n.metadata!.name!.startsWith(prefix)).length === 5);
    assert.match(all.resourceVersion, /^\d+$/);
    await assert.rejects(client.get(`/api/v1/nodes/${prefix}-missing`), (e) => isKubeError(e, "not_found"));
    await assert.rejects(
      client.request("POST", "/api/v1/nodes", { body: kubeletNode(`${prefix}-0`) }),
      (e) => isKubeError(e, "conflict") && (e as KubeApiError).reason === "AlreadyExists",
    );
    const node = await client.get<V1Node>(`/api/v1/nodes/${prefix}-0`);
    await assert.rejects(
      client.request("PUT", `/api/v1/nodes/${prefix}-0`, {
        body: { ...node, metadata: { ...node.metadata, resourceVersion: "1" } },
      }),
      (e) => isKubeError(e, "conflict"),
    );
    await assert.rejects(
      client.request("PATCH", `/api/v1/nodes/${prefix}-0`, { body: { spec: { taints: "x" } } }),
      (e) => e instanceof KubeApiError && (e.kind === "bad_request" || e.kind === "invalid"),
    );
  } finally {
    for (let i = 0; i < 5; i++) await client.request("DELETE", `/api/v1/nodes/${prefix}-${i}`).catch(() => {});
    client.close();
  }
});

Deno.test("a status patch leaves spec alone and status.addresses are replaced, not merged", async () => {
  const client = adminClient();
  const name = uniqueName("patch");
  try {
    await client.request("POST", "/api/v1/nodes", {
      body: kubeletNode(name, {
        addresses: [{ type: "InternalIP", address: "10.0.0.1" }, { type: "Hostname", address: name }],
      }),
    });
    const wanted = [
      { type: "ExternalIP", address: "2001:db8::1" },
      { type: "InternalIP", address: "fd64::1" },
      { type: "InternalIP", address: "10.0.0.2" },
      { type: "Hostname", address: name },
    ];
    await client.request("PATCH", `/api/v1/nodes/${name}/status`, {
      patch: "strategic",
      body: { spec: { providerID: "ankracloud://z/1" }, status: { addresses: [{ $patch: "replace" }, ...wanted] } },
    });
    const node = await client.get<V1Node>(`/api/v1/nodes/${name}`);
    assert.deepEqual(node.status?.addresses, wanted);
    assert.equal(node.spec?.providerID, undefined, "spec is not written through the status subresource");
  } finally {
    await client.request("DELETE", `/api/v1/nodes/${name}`).catch(() => {});
    client.close();
  }
});

Deno.test("the informer syncs, follows changes, ignores heartbeat-only changes and resumes when the stream ends", async () => {
  const metrics = new MetricsRegistry();
  const client = adminClient({ metrics });
  const prefix = uniqueName("inf");
  const informer = new Informer<V1Node, SlimNode>({
    name: "nodes",
    client,
    path: "/api/v1/nodes",
    slim: slimNode,
    keyOf: (n) => n.name,
    metrics,
    watchTimeoutSeconds: [1, 1],
  });
  const changes: string[] = [];
  informer.onChange((c) => {
    if (c.key.startsWith(prefix)) changes.push(`${c.type}:${c.key}`);
  });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  try {
    await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", { body: kubeletNode(`${prefix}-a`) });
    await informer.synced;
    await eventually(() => informer.watched().store.get(`${prefix}-a`) !== undefined);
    // A heartbeat changes only condition times: the slim copy is the same, nobody is told.
    const now = new Date(Date.now() + 5000).toISOString();
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/nodes/${prefix}-a/status`, {
      patch: "strategic",
      body: { status: { conditions: [{ type: "Ready", status: "True", lastHeartbeatTime: now }] } },
    });
    // The 1 s server-side watch timeout ends the stream; the informer resumes it.
    const ended = () =>
      metrics.counter("kubernetes_watch_restarts_total", "").get({ resource: "nodes", cause: "ended" });
    await eventually(() => ended() >= 1);
    await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", { body: kubeletNode(`${prefix}-b`) });
    await eventually(() => informer.watched().store.get(`${prefix}-b`) !== undefined);
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/nodes/${prefix}-b`, {
      body: { metadata: { labels: { x: "y" } } },
    });
    await eventually(() => informer.watched().store.get(`${prefix}-b`)?.labels.x === "y");
    await kubeOk(testControlPlane(), "DELETE", `/api/v1/nodes/${prefix}-b`);
    await eventually(() => informer.watched().store.get(`${prefix}-b`) === undefined);
    assert.deepEqual(changes, [`added:${prefix}-a`, `added:${prefix}-b`, `updated:${prefix}-b`, `deleted:${prefix}-b`]);
    assert.ok(
      metrics.counter("kubernetes_watch_restarts_total", "").get({ resource: "nodes", cause: "ended" }) >= 1,
      "the watch ended at least once and resumed",
    );
    assert.equal(informer.lists, 1, "resuming needs no relist");
  } finally {
    stop.abort();
    await running;
    await kubeOk(testControlPlane(), "DELETE", `/api/v1/nodes/${prefix}-a`).catch(() => {});
    client.close();
  }
});

/** Compacts etcd up to its current revision (as its periodic compaction does) and returns that revision. */
async function compactEtcd(etcdUrl: string): Promise<number> {
  const range = await fetch(`${etcdUrl}/v3/kv/range`, { method: "POST", body: JSON.stringify({ key: btoa("x") }) });
  const revision = Number((await range.json()).header.revision);
  const compaction = await fetch(`${etcdUrl}/v3/kv/compaction`, {
    method: "POST",
    body: JSON.stringify({ revision, physical: true }),
  });
  assert.equal(compaction.status, 200, await compaction.text());
  return revision;
}

/** A client whose first watch starts from a resourceVersion etcd has compacted away. */
class StaleFirstWatch extends KubeClient {
  staleVersion = "";
  override watch<T>(path: string, options: Parameters<KubeClient["watch"]>[1]) {
    if (this.staleVersion) {
      const resourceVersion = this.staleVersion;
      this.staleVersion = "";
      return super.watch<T>(path, { ...options, resourceVersion });
    }
    return super.watch<T>(path, options);
  }
}

Deno.test("a watch from a compacted resourceVersion gets 410 Gone, and the informer relists", async () => {
  const plane = testControlPlane();
  const metrics = new MetricsRegistry();
  const client = new StaleFirstWatch(adminConnection(plane), { metrics });
  const base = "/api/v1/namespaces/default/configmaps";
  const name = uniqueName("gone");
  const old = await kubeOk<{ metadata: { resourceVersion: string } }>(plane, "POST", base, {
    body: { metadata: { name }, data: { v: "1" } },
  });
  await kubeOk(plane, "PATCH", `${base}/${name}`, { body: { data: { v: "2" } } });
  // One more write elsewhere, so the compaction lies strictly after this ConfigMap's last change.
  await kubeOk(plane, "POST", base, { body: { metadata: { name: `${name}-later` } } });
  await compactEtcd(plane.etcdUrl);
  client.staleVersion = old.metadata.resourceVersion;
  type ConfigMap = { metadata: { name: string; resourceVersion: string }; data?: Record<string, string> };
  const informer = new Informer<ConfigMap, { name: string; resourceVersion: string; v?: string }>({
    name: "configmaps",
    client,
    path: base,
    slim: (cm) => ({ name: cm.metadata.name, resourceVersion: cm.metadata.resourceVersion, v: cm.data?.v }),
    keyOf: (cm) => cm.name,
    metrics,
  });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  try {
    await informer.synced;
    await eventually(() => informer.lists === 2);
    assert.equal(
      metrics.counter("kubernetes_watch_restarts_total", "").get({ resource: "configmaps", cause: "gone" }),
      1,
    );
    await kubeOk(plane, "PATCH", `${base}/${name}`, { body: { data: { v: "3" } } });
    await eventually(() => informer.watched().store.get(name)?.v === "3");
  } finally {
    stop.abort();
    await running;
    await kubeOk(plane, "DELETE", `${base}/${name}`).catch(() => {});
    await kubeOk(plane, "DELETE", `${base}/${name}-later`).catch(() => {});
    client.close();
  }
});

Deno.test("watches deliver bookmarks that carry the resourceVersion (1.35+), and end cleanly at their timeout", async () => {
  const client = adminClient();
  try {
    const version = await client.get<{ minor: string }>("/version");
    // From "0" the apiserver sends the current state; 1.35 and later follow it with a bookmark and close the stream
    // with it (measured on 1.37: ADDED ×4, BOOKMARK, closed after 0.04 s, timeoutSeconds 3). 1.33 (the old-version
    // tier) sends none within a watch's first minutes (measured: none in 75 s): the informer does not need one, it
    // resumes from the last object's resourceVersion and relists on 410 Gone. Now and then 1.37 ends such a watch
    // after the state with no bookmark (one full run: five in a row within 184 ms, just after the test before this one
    // compacted etcd), so a watch with no bookmark is tried again after a pause, for up to 30 s.
    const sendsBookmark = Number.parseInt(version.minor, 10) >= 35;
    const timeoutSeconds = 3;
    const seen: string[] = [];
    let bookmarkVersion = "";
    const deadline = performance.now() + 30_000;
    while (!bookmarkVersion && performance.now() < deadline) {
      const types: string[] = [];
      const started = performance.now();
      for await (
        const event of client.watch<{ metadata: { resourceVersion: string } }>("/api/v1/namespaces", {
          resourceVersion: "0",
          timeoutSeconds,
        })
      ) {
        types.push(event.type);
        if (event.type === "BOOKMARK") bookmarkVersion = event.object.metadata.resourceVersion;
      }
      const lastedMs = performance.now() - started;
      assert.ok(types.filter((t) => t === "ADDED").length >= 4, `the current namespaces first: ${types.join(",")}`);
      seen.push(`${types.join(",")} (${(lastedMs / 1000).toFixed(2)} s)`);
      if (!sendsBookmark) break;
      if (!bookmarkVersion) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    if (sendsBookmark) {
      assert.match(
        bookmarkVersion,
        /^\d+$/,
        `a bookmark with a resourceVersion within 30 s of watches: ${seen.join(" | ")}`,
      );
    } else {
      console.log(`kube-apiserver 1.${version.minor} sends no bookmark after the initial state: ${seen.join(",")}`);
    }
  } finally {
    client.close();
  }
});

Deno.test("an aborted watch stops at once", async () => {
  const client = adminClient();
  try {
    const list = await client.list("/api/v1/namespaces");
    const stop = new AbortController();
    let openedAt = Infinity;
    for await (
      const _ of client.watch("/api/v1/namespaces", {
        resourceVersion: list.resourceVersion,
        timeoutSeconds: 60,
        signal: stop.signal,
        onOpen: () => {
          openedAt = performance.now();
          stop.abort(); // the stream is open and quiet: only the abort can end it before the 60 s timeout
        },
      })
    ) { /* nothing */ }
    assert.ok(Number.isFinite(openedAt), "the watch opened");
    assert.ok(performance.now() - openedAt < 2000, "the watch ended within 2 s of the abort");
  } finally {
    client.close();
  }
});
