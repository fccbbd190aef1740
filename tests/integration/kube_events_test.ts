/**
 * The controller's events against the real kube-apiserver: repeats folded into one Event with a count, and bursts of
 * distinct events from several recorders all written on their object, as `kubectl describe` shows them.
 */
import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { EventRecorder } from "../../lib/kube/events.ts";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { adminKubeClient } from "../support/controller/kube_clients.ts";
import { eventsFor, kubeletNode, kubeOk } from "../support/http/kube_http.ts";
import { kubectl } from "../support/chart/helm.ts";

Deno.test("repeated events aggregate into one Event with a count", async () => {
  const plane = testControlPlane();
  const client = adminKubeClient(plane);
  const name = uniqueName("ev");
  const node = await kubeOk<V1Node>(plane, "POST", "/api/v1/nodes", { body: kubeletNode(name) });
  const recorder = new EventRecorder(client, { component: "cloud-node-controller", host: "test-host" });
  const ref = { kind: "Node", apiVersion: "v1", name, uid: node.metadata!.uid! };
  try {
    for (let i = 0; i < 5; i++) recorder.event(ref, "Warning", "InstanceNotFound", "no server named " + name);
    recorder.event(ref, "Normal", "Synced", "Node synced successfully");
    await recorder.flush();
    const events = await kubeOk<
      {
        items: {
          reason: string;
          count: number;
          type: string;
          source: { component: string };
          involvedObject: { name: string };
        }[];
      }
    >(
      plane,
      "GET",
      `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${name}`,
    );
    const byReason = Object.fromEntries(events.items.map((e) => [e.reason, e]));
    assert.equal(events.items.length, 2);
    assert.equal(byReason.InstanceNotFound.count, 5);
    assert.equal(byReason.InstanceNotFound.type, "Warning");
    assert.equal(byReason.InstanceNotFound.source.component, "cloud-node-controller");
    assert.equal(byReason.Synced.count, 1);
  } finally {
    await kubeOk(plane, "DELETE", `/api/v1/nodes/${name}`).catch(() => {});
    client.close();
  }
});

Deno.test("a burst of distinct events about one Service from two recorders in one millisecond is all on the Service", async () => {
  const plane = testControlPlane();
  const client = adminKubeClient(plane);
  const name = uniqueName("evburst");
  const service = await kubeOk<{ metadata: { uid: string } }>(plane, "POST", "/api/v1/namespaces/default/services", {
    body: { metadata: { name }, spec: { type: "ClusterIP", ports: [{ port: 80 }] } },
  });
  const sameMillisecond = () => 1_764_000_000_123;
  const recorders = ["service-controller", "cloud-node-controller"].map((component) =>
    new EventRecorder(client, { component, host: "test-host", now: sameMillisecond })
  );
  const ref = { kind: "Service", apiVersion: "v1", name, namespace: "default", uid: service.metadata.uid };
  const perRecorder = 20; // under the per-object spam burst (25), so every one is meant to be written
  try {
    for (let i = 0; i < perRecorder; i++) {
      recorders.forEach((recorder, r) =>
        recorder.event(ref, "Warning", `Burst${r}x${i}`, `event ${i} of recorder ${r}`)
      );
    }
    await Promise.all(recorders.map((r) => r.flush()));
    const written = await eventsFor(plane, name);
    assert.equal(written.length, 2 * perRecorder, `${written.length} of ${2 * perRecorder} events written`);
    const described = await kubectl(["describe", "service", name, "--namespace=default"]);
    assert.equal(described.code, 0, described.text);
    for (let r = 0; r < 2; r++) {
      for (let i = 0; i < perRecorder; i++) assert.match(described.text, new RegExp(`Burst${r}x${i}\\b`));
    }
  } finally {
    await kubeOk(plane, "DELETE", `/api/v1/namespaces/default/services/${name}`).catch(() => {});
    client.close();
  }
});
