/**
 * The controller's trust, as its process has it: a Kubernetes API server whose certificate comes from a CA in the
 * runtime's default trust store — one this test controls, through `DENO_TLS_CA_STORE=system` and `SSL_CERT_FILE` —
 * is refused when the kubeconfig names another cluster CA, while the Ankra Cloud client still trusts its extra CA
 * bundle. The controller runs as `main.ts` with the launcher's permissions; the servers are on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { selfSignedServingCertificate } from "../../lib/server/self_signed_certificate.ts";
import { kubeconfigText } from "../support/control_plane/control_plane.ts";
import { MAIN } from "../support/controller/controller_process.ts";
import { ENVIRONMENT_VARIABLES, permissionFlagsFor } from "../../lib/runtime_permissions.ts";
import { eventually } from "../support/wait/eventually.ts";

/** An HTTPS server on 127.0.0.1 with `tls`, counting the requests that reach it. */
function countingServer(tls: { cert: string; key: string }) {
  const seen: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: tls.cert, key: tls.key, onListen() {} },
    (request) => {
      seen.push(new URL(request.url).pathname);
      return Response.json({ kind: "Status", code: 404, message: "nothing here" }, { status: 404 });
    },
  );
  return Object.assign(server, { url: `https://127.0.0.1:${server.addr.port}`, seen });
}

/** Starts `main.ts` with `args` and `env` (nothing inherited), returning its output as it comes. */
function controller(args: string[], env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissionFlagsFor(args, env), "--no-prompt", MAIN, ...args],
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const pump = (stream: ReadableStream<Uint8Array>) =>
    stream.pipeThrough(new TextDecoderStream()).pipeTo(new WritableStream({ write: (text) => void (output += text) }));
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  return {
    get output() {
      return output;
    },
    async stop() {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
      await child.status;
      await pumps.catch(() => {});
    },
  };
}

Deno.test("the Kubernetes client trusts the cluster CA alone, not a CA of the runtime's default store", async () => {
  const dir = await Deno.makeTempDir();
  const publicLike = await selfSignedServingCertificate("localhost"); // "X": in the default store
  const cluster = await selfSignedServingCertificate("localhost"); // "Y": the kubeconfig's cluster CA
  await using server = countingServer(publicLike);
  await Deno.writeTextFile(`${dir}/default-store.pem`, publicLike.ca);
  await Deno.writeTextFile(`${dir}/bundle.pem`, publicLike.ca);
  const kubeconfig = (ca: string) => kubeconfigText(server.url, ca, "test-token");
  await Deno.writeTextFile(`${dir}/wrong-ca.kubeconfig`, kubeconfig(cluster.ca));
  await Deno.writeTextFile(`${dir}/right-ca.kubeconfig`, kubeconfig(publicLike.ca));
  const env = {
    DENO_TLS_CA_STORE: "system",
    SSL_CERT_FILE: `${dir}/default-store.pem`,
    ANKRA_CLOUD_TOKEN: "act_not-used-by-this-test",
    ANKRA_CLOUD_API_URL: server.url,
    PATH: Deno.env.get("PATH") ?? "",
  };
  const args = (file: string) => [`--kubeconfig=${dir}/${file}`, "--leader-elect=false", "--secure-port=0", "--v=4"];
  try {
    // The kubeconfig names Y: the server's X certificate is refused although X is in the default store. The Ankra
    // client, without the bundle, does not trust X either (its roots are the system's files and the bundle).
    const refused = controller(args("wrong-ca.kubeconfig"), env);
    try {
      await eventually(
        () => (refused.output.match(/list\/watch failed; retrying/g) ?? []).length >= 2,
        30_000,
        "the controller's list retried",
      );
      assert.match(refused.output, /certificate|UnknownIssuer|invalid peer/i);
      assert.deepEqual(server.seen, [], "no request reached the server through an untrusted TLS connection");
    } finally {
      await refused.stop();
    }
    // The kubeconfig names X, and ANKRA_CLOUD_CA_BUNDLE holds X: both clients reach the server.
    const trusted = controller(args("right-ca.kubeconfig"), { ...env, ANKRA_CLOUD_CA_BUNDLE: `${dir}/bundle.pem` });
    try {
      await eventually(() => server.seen.some((path) => path.startsWith("/api/")), 30_000, "a Kubernetes request");
      await eventually(() => server.seen.some((path) => path.startsWith("/v1/")), 30_000, "an Ankra Cloud request");
    } finally {
      await trusted.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the runtime may not set DENO_TLS_CA_STORE: the controller refuses to start, exit 2, naming it", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      `--allow-env=${ENVIRONMENT_VARIABLES.filter((name) => name !== "DENO_TLS_CA_STORE").join(",")}`,
      "--allow-read",
      "--no-prompt",
      MAIN,
      "--kubeconfig=/nonexistent",
    ],
    env: { ANKRA_CLOUD_TOKEN: "act_not-used-by-this-test" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 2, stderr);
  assert.match(stderr, /^ankra-cloud-ccm: the runtime may not set DENO_TLS_CA_STORE/m);
});
