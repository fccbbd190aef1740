/**
 * The credentials of a test control plane, made with openssl in its directory: a CA, kube-apiserver's serving
 * certificate, the admin's client certificate (group `system:masters`), the service-account key pair, the admin
 * bearer token and a kubeconfig that uses it.
 *
 * @module
 */

async function run(cmd: string, args: string[], cwd: string): Promise<void> {
  const output = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  if (!output.success) {
    throw new Error(`${cmd} ${args.join(" ")} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
}

/** Generates a CA, serving and admin certificates and a service-account key pair in `dir` with openssl. */
export async function makeCertificates(dir: string): Promise<void> {
  const o = (args: string[]) => run("openssl", args, dir);
  await o([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "3650",
    "-subj",
    "/CN=test-control-plane-ca",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
  ]);
  await Deno.writeTextFile(
    `${dir}/serving.ext`,
    [
      "basicConstraints=CA:FALSE",
      "keyUsage=digitalSignature,keyEncipherment",
      "extendedKeyUsage=serverAuth",
      "subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default," +
      "DNS:kubernetes.default.svc",
    ].join("\n") + "\n",
  );
  await Deno.writeTextFile(
    `${dir}/client.ext`,
    ["basicConstraints=CA:FALSE", "keyUsage=digitalSignature,keyEncipherment", "extendedKeyUsage=clientAuth"]
      .join("\n") + "\n",
  );
  await o([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=kube-apiserver",
    "-keyout",
    "apiserver.key",
    "-out",
    "apiserver.csr",
  ]);
  await o([
    "x509",
    "-req",
    "-in",
    "apiserver.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "3650",
    "-extfile",
    "serving.ext",
    "-out",
    "apiserver.crt",
  ]);
  await o([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/O=system:masters/CN=test-admin",
    "-keyout",
    "admin.key",
    "-out",
    "admin.csr",
  ]);
  await o([
    "x509",
    "-req",
    "-in",
    "admin.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "3650",
    "-extfile",
    "client.ext",
    "-out",
    "admin.crt",
  ]);
  await o(["genrsa", "-out", "sa.key", "2048"]);
  await o(["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"]);
}

/** A random 48-hex-digit bearer token for the admin identity. */
export function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Writes a kubeconfig for `url` that trusts the CA and authenticates with `token`. */
export function kubeconfigText(url: string, caPem: string, token: string): string {
  const ca = btoa(caPem);
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: test",
    "  cluster:",
    `    server: ${url}`,
    `    certificate-authority-data: ${ca}`,
    "users:",
    "- name: test-admin",
    "  user:",
    `    token: ${token}`,
    "contexts:",
    "- name: test",
    "  context:",
    "    cluster: test",
    "    user: test-admin",
    "current-context: test",
    "",
  ].join("\n");
}
