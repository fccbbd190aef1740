/**
 * What the ankra-cloud-ccm image is, in one place: where the runtime and the bundle live, the entrypoint, the
 * environment, the user, the port and the labels. `build_image.ts` writes it; the `Containerfile` says the same in
 * its own words (tests/integration/image_test.ts checks both).
 *
 * The entrypoint is the release launcher's `exec` line (scripts/build.sh) with the launcher's variables set in the
 * image instead: the image has no shell.
 *
 * @module
 */
import { PERMISSION_FLAGS, V8_FLAGS_ARGUMENT } from "../../lib/runtime_permissions.ts";

/** Directory of the Deno runtime, the bundle and the empty DENO_DIR: the release tarball's `lib/ankra-cloud-ccm`. */
export const INSTALL_DIR = "/usr/local/lib/ankra-cloud-ccm";

/** The Deno runtime in the image. */
export const DENO_PATH = `${INSTALL_DIR}/deno`;

/** The controller bundle in the image. */
export const BUNDLE_PATH = `${INSTALL_DIR}/ankra-cloud-ccm.js`;

/**
 * DENO_DIR: an empty directory nobody can write (0555, root's). Deno refuses to start when it cannot name a cache
 * directory (no HOME, no DENO_DIR) but runs with one it cannot write; with `--no-code-cache` it has nothing to
 * store there anyway.
 */
export const DENO_DIR = `${INSTALL_DIR}/deno-dir`;

/**
 * The image's entrypoint: the bundle on the Deno runtime with the controller's permissions and V8 flags
 * (lib/runtime_permissions.ts: the chart's credentials directory and the service account are readable; with no shell
 * in the image, no directory is added at run time); the chart's `args` follow it.
 */
export const ENTRYPOINT: readonly string[] = [
  DENO_PATH,
  "run",
  ...PERMISSION_FLAGS,
  V8_FLAGS_ARGUMENT,
  "--cached-only",
  "--no-code-cache",
  "--no-config",
  "--no-prompt",
  BUNDLE_PATH,
];

/** The image's environment, in this order. */
export const ENV: readonly string[] = [
  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
  "MALLOC_ARENA_MAX=1",
  "DENO_DIR=" + DENO_DIR,
  "DENO_NO_UPDATE_CHECK=1",
  "DENO_NO_PROMPT=1",
];

/** The user and group the image runs as (`nonroot` in its /etc/passwd). */
export const USER = "65532:65532";

/** The health and metrics port. */
export const EXPOSED_PORT = "10258/tcp";

/** Facts the labels carry. */
export interface ImageFacts {
  /** Release version, e.g. `v0.2.0`. */
  version: string;
  /** Git commit of the sources, or `unknown`. */
  revision: string;
  /** SOURCE_DATE_EPOCH, seconds. */
  sourceDateEpoch: number;
  /** `name=version …` of the Debian packages in the base. */
  debianPackages: string;
  /** Version of the Deno runtime, e.g. `2.9.6`. */
  denoVersion: string;
}

/** RFC 3339 (UTC, no fraction) of `epochSeconds`. */
export function rfc3339(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The image's labels: the OCI ones plus the base's Debian packages and the Deno version. */
export function imageLabels(facts: ImageFacts): Record<string, string> {
  return {
    "org.opencontainers.image.title": "ankra-cloud-ccm",
    "org.opencontainers.image.description":
      "Kubernetes cloud controller manager for Ankra Cloud (nodes and LoadBalancer Services)",
    "org.opencontainers.image.version": facts.version,
    "org.opencontainers.image.revision": facts.revision,
    "org.opencontainers.image.source": "https://github.com/ankraio/ankra-cloud-ccm",
    "org.opencontainers.image.licenses": "Apache-2.0",
    "org.opencontainers.image.created": rfc3339(facts.sourceDateEpoch),
    "cloud.ankra.image.debian-packages": facts.debianPackages,
    "cloud.ankra.image.deno-version": facts.denoVersion,
  };
}
