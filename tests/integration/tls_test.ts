import assert from "node:assert/strict";
import { encryptedOrLoopback, kubeTrustedCertificates } from "../../lib/tls.ts";
import { resolveCommand } from "../../lib/config/command.ts";
import { ConfigError } from "../../lib/config_error.ts";

const CLUSTER_CA = "-----BEGIN CERTIFICATE-----\nCLUSTER\n-----END CERTIFICATE-----\n";
const SYSTEM_CA = "-----BEGIN CERTIFICATE-----\nSYSTEM\n-----END CERTIFICATE-----\n";

Deno.test("a Kubernetes client with the cluster's CA trusts that CA alone, not the system store", () => {
  let systemRead = false;
  const trusted = kubeTrustedCertificates([CLUSTER_CA], () => {
    systemRead = true;
    return [SYSTEM_CA];
  });
  assert.deepEqual(trusted, [CLUSTER_CA]);
  assert.equal(systemRead, false, "the system store is not even read");
});

Deno.test("a Kubernetes client without a cluster CA trusts the system store", () => {
  assert.deepEqual(kubeTrustedCertificates([], () => [SYSTEM_CA]), [SYSTEM_CA]);
});

Deno.test("plain http may reach only a loopback host: 127.0.0.0/8, ::1 or localhost", () => {
  for (
    const url of [
      "https://cloud.ankra.app",
      "http://127.0.0.1:8080",
      "http://127.1.2.3",
      "http://[::1]:1",
      "http://localhost:9",
    ]
  ) {
    assert.ok(encryptedOrLoopback(new URL(url)), url);
  }
  for (
    const url of [
      "http://cloud.ankra.app",
      "http://10.0.0.1",
      "http://[::2]",
      "http://127.0.0.1.nip.io",
      "http://0.0.0.0",
    ]
  ) {
    assert.ok(!encryptedOrLoopback(new URL(url)), url);
  }
});

function configProblem(args: string[], env: Record<string, string>): string | undefined {
  try {
    resolveCommand(args, { env: { ANKRA_CLOUD_TOKEN: "act_dGxzLXRlc3QtdG9rZW4", ...env } });
    return undefined;
  } catch (cause) {
    assert.ok(cause instanceof ConfigError, String(cause));
    return cause.message;
  }
}

Deno.test("plain http to the Ankra Cloud API or to --master is refused unless it goes to a loopback address", () => {
  assert.match(
    configProblem([], { ANKRA_CLOUD_API_URL: "http://cloud.ankra.app" })!,
    /^ANKRA_CLOUD_API_URL http:\/\/cloud\.ankra\.app is plain http to a host that is not loopback: the token would /,
  );
  assert.equal(configProblem([], { ANKRA_CLOUD_API_URL: "http://127.0.0.1:8080" }), undefined, "the simulator");
  assert.match(
    configProblem(["--master=http://kube.example:8080"], {})!,
    /^--master http:\/\/kube\.example:8080 is plain http to a host that is not loopback/,
  );
  assert.equal(configProblem(["--master=http://127.0.0.1:8001"], {}), undefined, "kubectl proxy");
  assert.equal(configProblem(["--master=https://kube.example:6443"], {}), undefined);
});

Deno.test("the controller exits 2 naming ANKRA_CLOUD_API_URL when it is plain http to another host", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL("../../main.ts", import.meta.url).pathname],
    env: { ANKRA_CLOUD_TOKEN: "act_dGxzLXRlc3QtdG9rZW4", ANKRA_CLOUD_API_URL: "http://example.com" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 2);
  assert.match(new TextDecoder().decode(output.stderr), /^ankra-cloud-ccm: ANKRA_CLOUD_API_URL http:\/\/example\.com /);
});
