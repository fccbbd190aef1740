/**
 * The versions the tests build and run, read from scripts/versions.sh (the one place they are written, for the shell
 * scripts that build them and for the TypeScript that names them).
 *
 * @module
 */

/** The Kubernetes versions of the tiers. */
export interface KubernetesVersions {
  /** `KUBERNETES_VERSION`: every tier. */
  current: string;
  /** `KUBERNETES_OLDEST_VERSION`: the old-version tier. */
  oldest: string;
  /** `CONTAINERD_VERSION`. */
  containerd: string;
}

/** Reads scripts/versions.sh. */
export async function kubernetesVersions(): Promise<KubernetesVersions> {
  const text = await Deno.readTextFile(new URL("../../../scripts/versions.sh", import.meta.url));
  const read = (name: string) => {
    const value = new RegExp(`^${name}=(v\\d+\\.\\d+\\.\\d+)\\s*$`, "m").exec(text)?.[1];
    if (!value) throw new Error(`scripts/versions.sh sets no ${name}=v<major>.<minor>.<patch>`);
    return value;
  };
  return {
    current: read("KUBERNETES_VERSION"),
    oldest: read("KUBERNETES_OLDEST_VERSION"),
    containerd: read("CONTAINERD_VERSION"),
  };
}
