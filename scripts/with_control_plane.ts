/**
 * Runs any command against one freshly started test control plane:
 *
 *     deno run -A scripts/with_control_plane.ts -- deno test -A tests/integration/node_smoke_test.ts
 *
 * The command sees TEST_KUBE_URL, TEST_KUBE_TOKEN, TEST_KUBE_CA_FILE, TEST_KUBECONFIG and KUBEBUILDER_ASSETS.
 *
 * @module
 */
import { runWithControlPlane } from "./control_plane_session.ts";

if (import.meta.main) {
  const separator = Deno.args.indexOf("--");
  const cmd = separator >= 0 ? Deno.args.slice(separator + 1) : Deno.args;
  if (cmd.length === 0) {
    console.error("usage: deno run -A scripts/with_control_plane.ts -- <command> [args…]");
    Deno.exit(2);
  }
  Deno.exit(await runWithControlPlane(cmd));
}
