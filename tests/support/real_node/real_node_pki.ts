/**
 * Certificates of a real single-node cluster (and of the real cluster's control plane), from the test control plane's
 * openssl credentials (`../control_plane/control_plane_credentials.ts`): the control plane's set — a CA;
 * kube-apiserver's serving certificate valid for loopback, the node IP and the `kubernetes` Service (address and DNS
 * names); an admin client (`system:masters`, also kube-apiserver's client to the kubelet); the service-account signing
 * key pair — and the kubelet's client (`system:node:<name>` in `system:nodes`, which the Node authorizer and
 * NodeRestriction require).
 *
 * @module
 */
import {
  CLIENT_EXTENSIONS,
  makeControlPlaneCertificates,
  serverExtensions,
  signWithCa,
} from "../control_plane/control_plane_credentials.ts";
import { KUBERNETES_SERVICE_IP } from "./real_node_files.ts";

/** Writes `ca`, `apiserver`, `admin` and `kubelet` certificates and keys and `sa.key`/`sa.pub` into `dir`. */
export async function makeRealNodeCertificates(dir: string, node: { name: string; ip: string }): Promise<void> {
  await makeControlPlaneCertificates(dir, {
    ca: "real-node-ca",
    admin: "real-node-admin",
    ips: ["127.0.0.1", node.ip, KUBERNETES_SERVICE_IP],
  });
  await signWithClusterCa(dir, "kubelet", { kind: "kubelet", node: node.name });
}

/**
 * Signs one more certificate with the CA in `caDir` (`ca.crt`, `ca.key`, as {@linkcode makeRealNodeCertificates}
 * makes it), written as `<name>.crt`/`<name>.key` into `caDir`: a kubelet's client certificate (`kind: "kubelet"`,
 * `system:node:<subject>`) or a server certificate for the IP addresses `ips` (`kind: "server"`).
 */
export async function signWithClusterCa(
  caDir: string,
  name: string,
  request: { kind: "kubelet"; node: string } | { kind: "server"; ips: string[] },
): Promise<void> {
  if (request.kind === "kubelet") {
    await signWithCa(caDir, name, `/O=system:nodes/CN=system:node:${request.node}`, CLIENT_EXTENSIONS);
  } else {
    await signWithCa(caDir, name, `/CN=${name}`, serverExtensions(request.ips.map((ip) => `IP:${ip}`)));
  }
}
