/**
 * The one control plane of a test run, shared with the test processes through environment variables: started once
 * by `scripts/run_tests.ts` (or `scripts/with_control_plane.ts`), read by every integration test with
 * {@linkcode testControlPlane}.
 *
 * @module
 */

/** Environment variables through which one control plane is shared with a test run. */
export const CONTROL_PLANE_ENV = {
  url: "TEST_KUBE_URL",
  token: "TEST_KUBE_TOKEN",
  caFile: "TEST_KUBE_CA_FILE",
  kubeconfig: "TEST_KUBECONFIG",
  dir: "TEST_KUBE_DIR",
  etcdUrl: "TEST_ETCD_URL",
} as const;

/** Connection details of a control plane shared through the environment (see {@linkcode CONTROL_PLANE_ENV}). */
export interface SharedControlPlane {
  /** API server URL. */
  url: string;
  /** Admin bearer token. */
  token: string;
  /** CA PEM. */
  caCert: string;
  /** CA file path. */
  caFile: string;
  /** Admin kubeconfig path. */
  kubeconfigPath: string;
  /** Directory of the control plane (holds the CA key for tests that mint certificates). */
  dir: string;
  /** etcd's client URL. */
  etcdUrl: string;
}

/** The environment variables that hand `plane` to child processes (the test runner sets them). */
export function controlPlaneEnv(plane: SharedControlPlane): Record<string, string> {
  return {
    [CONTROL_PLANE_ENV.url]: plane.url,
    [CONTROL_PLANE_ENV.token]: plane.token,
    [CONTROL_PLANE_ENV.caFile]: plane.caFile,
    [CONTROL_PLANE_ENV.kubeconfig]: plane.kubeconfigPath,
    [CONTROL_PLANE_ENV.dir]: plane.dir,
    [CONTROL_PLANE_ENV.etcdUrl]: plane.etcdUrl,
  };
}

let shared: SharedControlPlane | undefined;

/**
 * The control plane of this test run, started once by `scripts/run_tests.ts` (or `scripts/with_control_plane.ts`)
 * and handed over through the environment.
 *
 * @throws when the test runs outside those scripts, saying how to run it.
 */
export function testControlPlane(): SharedControlPlane {
  if (shared) return shared;
  const url = Deno.env.get(CONTROL_PLANE_ENV.url);
  if (!url) {
    throw new Error(
      "no test control plane: run integration tests with `deno task test`, or " +
        "`deno run -A scripts/with_control_plane.ts -- deno test -A <files>`",
    );
  }
  const caFile = Deno.env.get(CONTROL_PLANE_ENV.caFile)!;
  shared = {
    url,
    token: Deno.env.get(CONTROL_PLANE_ENV.token)!,
    caCert: Deno.readTextFileSync(caFile),
    caFile,
    kubeconfigPath: Deno.env.get(CONTROL_PLANE_ENV.kubeconfig)!,
    dir: Deno.env.get(CONTROL_PLANE_ENV.dir)!,
    etcdUrl: Deno.env.get(CONTROL_PLANE_ENV.etcdUrl)!,
  };
  return shared;
}

/** A name unique to this test run, for objects that must not collide across tests. */
export function uniqueName(prefix: string): string {
  const suffix = crypto.getRandomValues(new Uint32Array(1))[0].toString(36);
  return `${prefix}-${suffix}`.toLowerCase().slice(0, 63).replace(/-+$/, "");
}
