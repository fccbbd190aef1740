/**
 * The Kubernetes clients of the in-process controllers' tests, both the controller's own `KubeClient` with a high
 * rate limit (200 qps, burst 200) so the tests never wait on it: the admin the test acts as, and the chart's identity
 * the controllers run as (`controller_identity.ts`), so a controller doing what the chart's role does not allow fails
 * the way it would in a user's cluster.
 *
 * @module
 */
import { KubeClient } from "../../../lib/kube/client.ts";
import type { KubeConnectionConfig } from "../../../lib/kube/kubeconfig.ts";
import type { SharedControlPlane } from "../control_plane/control_plane.ts";
import { controllerToken } from "./controller_identity.ts";

/** How the control plane's admin connects: its bearer token, trusting the plane's CA. */
export function adminConnection(plane: SharedControlPlane): KubeConnectionConfig {
  return { server: plane.url, caCerts: [plane.caCert], auth: { kind: "token", token: plane.token }, source: "test" };
}

/** A client of the control plane's admin with the client's own defaults (rate limit included) unless `options` says. */
export function adminKubeClient(
  plane: SharedControlPlane,
  options: ConstructorParameters<typeof KubeClient>[1] = {},
): KubeClient {
  return new KubeClient(adminConnection(plane), options);
}

/** The two clients of a test; {@linkcode TestKubeClients.close} closes both. */
export interface TestKubeClients {
  /** The control plane's admin: what the test itself reads and writes. */
  kube: KubeClient;
  /** The chart's identity: what the controllers under test read and write. */
  controllerKube: KubeClient;
  /** Releases both clients' HTTP connections. */
  close(): void;
}

/** The admin's and the controller identity's clients against `plane`. */
export async function testKubeClients(plane: SharedControlPlane): Promise<TestKubeClients> {
  const client = (token: string, source: string) =>
    new KubeClient(
      { server: plane.url, caCerts: [plane.caCert], auth: { kind: "token", token }, source },
      { qps: 200, burst: 200 },
    );
  const kube = client(plane.token, "test");
  const controllerKube = client(await controllerToken(plane), "controller identity");
  return {
    kube,
    controllerKube,
    close() {
      kube.close();
      controllerKube.close();
    },
  };
}
