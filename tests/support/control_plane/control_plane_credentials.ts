/**
 * The credentials of a test control plane — the test run's, a real node's and the real cluster's — made with openssl
 * in its directory: a CA, kube-apiserver's serving certificate, the admin's client certificate (group
 * `system:masters`), the service-account key pair, more certificates signed by that CA, the admin bearer token and a
 * kubeconfig that uses it.
 *
 * @module
 */

/** The extensions of a client certificate. */
export const CLIENT_EXTENSIONS = [
  "basicConstraints=CA:FALSE",
  "keyUsage=digitalSignature,keyEncipherment",
  "extendedKeyUsage=clientAuth",
];

/** The extensions of a server certificate valid for `names` (`IP:…` and `DNS:…` entries). */
export function serverExtensions(names: string[]): string[] {
  return [
    "basicConstraints=CA:FALSE",
    "keyUsage=digitalSignature,keyEncipherment",
    "extendedKeyUsage=serverAuth",
    `subjectAltName=${names.join(",")}`,
  ];
}

const DAYS = "3650";

async function openssl(dir: string, args: string[]): Promise<void> {
  const output = await new Deno.Command("openssl", { args, cwd: dir, stdout: "piped", stderr: "piped" }).output();
  if (!output.success) {
    throw new Error(`openssl ${args.join(" ")} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
}

/** A positive 63-bit serial in hex (RFC 5280: unique per CA, at most 20 octets). */
function randomSerial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  bytes[0] &= 0x7f;
  return `0x${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * A key and a certificate for `subject` signed by the CA in `dir` (`ca.crt`, `ca.key`), written as
 * `<name>.key`/`<name>.crt` into `dir`.
 */
export async function signWithCa(dir: string, name: string, subject: string, extensions: string[]): Promise<void> {
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
    // A random serial per certificate, not -CAcreateserial: two nodes signing side by side raced on ca.srl and one
    // failed ("a2i_ASN1_INTEGER:short line", about 1 start in 10), which lost a fresh machine's first cluster.
    "-set_serial",
    randomSerial(),
    "-days",
    DAYS,
    "-extfile",
    `${name}.ext`,
    "-out",
    `${name}.crt`,
  ]);
}

/**
 * Writes into `dir` a CA (`ca`, common name `names.ca`), kube-apiserver's serving certificate (`apiserver`) valid for
 * `localhost`, the `kubernetes` Service's DNS names and the addresses `ips`, the admin's client certificate (`admin`,
 * `system:masters`, common name `names.admin`) and the service-account key pair (`sa.key`, `sa.pub`).
 */
export async function makeControlPlaneCertificates(
  dir: string,
  names: { ca: string; admin: string; ips: string[] },
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await openssl(dir, [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    DAYS,
    "-subj",
    `/CN=${names.ca}`,
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
  ]);
  const dns = [
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
  ];
  await signWithCa(
    dir,
    "apiserver",
    "/CN=kube-apiserver",
    serverExtensions([
      ...names.ips.map((ip) => `IP:${ip}`),
      ...dns.map((name) => `DNS:${name}`),
    ]),
  );
  await signWithCa(dir, "admin", `/O=system:masters/CN=${names.admin}`, CLIENT_EXTENSIONS);
  await openssl(dir, ["genrsa", "-out", "sa.key", "2048"]);
  await openssl(dir, ["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"]);
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
