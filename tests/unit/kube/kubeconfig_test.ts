import assert from "node:assert/strict";
import { inClusterConfig, KubeconfigError, parseKubeconfig } from "../../../lib/kube/kubeconfig.ts";

const CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const b64 = (text: string) => btoa(text);

function kubeconfig(user: string, cluster = `    certificate-authority-data: ${b64(CA)}`): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:6443
${cluster}
users:
- name: u
  user:
${user}
contexts:
- name: ctx
  context:
    cluster: c
    user: u
current-context: ctx
`;
}

Deno.test("a k3s-style kubeconfig with client certificate data is read", async () => {
  const config = await parseKubeconfig(
    kubeconfig(`    client-certificate-data: ${b64("CERT")}\n    client-key-data: ${b64("KEY")}`),
    "/etc/rancher/k3s/k3s.yaml",
  );
  assert.equal(config.server, "https://127.0.0.1:6443");
  assert.deepEqual(config.caCerts, [CA]);
  assert.deepEqual(config.clientCert, { cert: "CERT", key: "KEY" });
  assert.deepEqual(config.auth, { kind: "none" });
});

Deno.test("file paths are resolved against the kubeconfig's directory", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/ca.crt`, CA);
  await Deno.writeTextFile(`${dir}/admin.crt`, "CERT");
  await Deno.writeTextFile(`${dir}/admin.key`, "KEY");
  const config = await parseKubeconfig(
    kubeconfig(
      "    client-certificate: admin.crt\n    client-key: admin.key\n    tokenFile: token",
      "    certificate-authority: ca.crt",
    ),
    `${dir}/config`,
  );
  assert.deepEqual(config.caCerts, [CA]);
  assert.deepEqual(config.clientCert, { cert: "CERT", key: "KEY" });
  assert.deepEqual(config.auth, { kind: "tokenFile", path: `${dir}/token` });
  await Deno.remove(dir, { recursive: true });
});

Deno.test("tokens and exec plugins are read", async () => {
  assert.deepEqual((await parseKubeconfig(kubeconfig("    token: abc"), "/k")).auth, { kind: "token", token: "abc" });
  const exec = (await parseKubeconfig(
    kubeconfig(
      "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ./get-token\n      args: [--cluster, c]\n      env:\n      - name: A\n        value: b\n      interactiveMode: Never",
    ),
    "/home/me/.kube/config",
  )).auth;
  assert.deepEqual(exec, {
    kind: "exec",
    exec: {
      command: "./get-token",
      args: ["--cluster", "c"],
      env: { A: "b" },
      apiVersion: "client.authentication.k8s.io/v1",
      baseDir: "/home/me/.kube",
    },
  });
});

Deno.test("unverified TLS, plain http, a missing context or half a certificate are refused by name", async () => {
  await assert.rejects(
    () => parseKubeconfig(kubeconfig("    token: x", "    insecure-skip-tls-verify: true"), "/k"),
    /insecure-skip-tls-verify; this controller always verifies TLS/,
  );
  await assert.rejects(
    () => parseKubeconfig(kubeconfig("    token: x").replace("https://127.0.0.1", "http://kube.example"), "/k"),
    /server http:\/\/kube\.example:6443 is not https: the credentials would travel unencrypted/,
  );
  await assert.rejects(
    () => parseKubeconfig(kubeconfig("    token: x").replace("current-context: ctx", "current-context: other"), "/k"),
    (e: Error) => e instanceof KubeconfigError && /context "other" not found/.test(e.message),
  );
  await assert.rejects(
    () => parseKubeconfig(kubeconfig(`    client-certificate-data: ${b64("C")}`), "/k"),
    /client certificate without its key/,
  );
  await assert.rejects(() => parseKubeconfig("clusters: [oops", "/k"), /\/k: not valid YAML/);
});

Deno.test("plain http is accepted only to a loopback server, such as kubectl proxy", async () => {
  for (const server of ["http://127.0.0.1:8001", "http://[::1]:8001", "http://localhost:8001"]) {
    const config = await parseKubeconfig(kubeconfig("    token: x").replace("https://127.0.0.1:6443", server), "/k");
    assert.equal(config.server, server);
  }
  for (const server of ["http://10.0.0.1:6443", "http://127.0.0.1.example:6443", "http://[::2]:6443"]) {
    await assert.rejects(
      () => parseKubeconfig(kubeconfig("    token: x").replace("https://127.0.0.1:6443", server), "/k"),
      /is not https/,
      server,
    );
  }
});

Deno.test("in-cluster configuration reads the service account and brackets IPv6 hosts", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/ca.crt`, CA);
  await Deno.writeTextFile(`${dir}/token`, "jwt");
  const config = inClusterConfig({ KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" }, dir);
  assert.equal(config.server, "https://[fd00::1]:443");
  assert.deepEqual(config.auth, { kind: "tokenFile", path: `${dir}/token` });
  assert.throws(() => inClusterConfig({}, dir), /pass --kubeconfig/);
  await Deno.remove(dir, { recursive: true });
});
