/**
 * Certificates of a real single-node cluster, made with openssl: a CA; kube-apiserver's serving certificate valid
 * for loopback, the node IP and the `kubernetes` Service (address and DNS names); an admin client (`system:masters`,
 * also kube-apiserver's client to the kubelet); the kubelet's client (`system:node:<name>` in `system:nodes`, which
 * the Node authorizer and NodeRestriction require); the service-account signing key pair.
 *
 * @module
 */
import { KUBERNETES_SERVICE_IP } from "./real_node_files.ts";

const CLIENT_EXTENSIONS = [
  "basicConstraints=CA:FALSE",
  "keyUsage=digitalSignature,keyEncipherment",
  "extendedKeyUsage=clientAuth",
];

async function openssl(dir: string, args: string[]): Promise<void> {
  const output = await new Deno.Command("openssl", { args, cwd: dir, stdout: "piped", stderr: "piped" }).output();
  if (!output.success) {
    throw new Error(`openssl ${args.join(" ")} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
}

async function sign(dir: string, name: string, subject: string, extensions: string[]): Promise<void> {
  await Deno.writeTextFile(`${dir}/${name}.ext`, extensions.join("\n") + "\n");
  await openssl(dir, [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    subject,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
  ]);
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "30",
    "-extfile",
    `${name}.ext`,
    "-out",
    `${name}.crt`,
  ]);
}

/** Writes `ca`, `apiserver`, `admin` and `kubelet` certificates and keys and `sa.key`/`sa.pub` into `dir`. */
export async function makeRealNodeCertificates(dir: string, node: { name: string; ip: string }): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await openssl(dir, [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "30",
    "-subj",
    "/CN=real-node-ca",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
  ]);
  const names = ["kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"];
  await sign(dir, "apiserver", "/CN=kube-apiserver", [
    "basicConstraints=CA:FALSE",
    "keyUsage=digitalSignature,keyEncipherment",
    "extendedKeyUsage=serverAuth",
    `subjectAltName=IP:127.0.0.1,IP:${node.ip},IP:${KUBERNETES_SERVICE_IP},DNS:localhost,` +
    names.map((n) => `DNS:${n}`).join(","),
  ]);
  await sign(dir, "admin", "/O=system:masters/CN=real-node-admin", CLIENT_EXTENSIONS);
  await sign(dir, "kubelet", `/O=system:nodes/CN=system:node:${node.name}`, CLIENT_EXTENSIONS);
  await openssl(dir, ["genrsa", "-out", "sa.key", "2048"]);
  await openssl(dir, ["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"]);
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
    await sign(caDir, name, `/O=system:nodes/CN=system:node:${request.node}`, CLIENT_EXTENSIONS);
  } else {
    await sign(caDir, name, `/CN=${name}`, [
      "basicConstraints=CA:FALSE",
      "keyUsage=digitalSignature,keyEncipherment",
      "extendedKeyUsage=serverAuth",
      `subjectAltName=${request.ips.map((ip) => `IP:${ip}`).join(",")}`,
    ]);
  }
}
