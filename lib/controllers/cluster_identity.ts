/**
 * The cluster's identity for ownership of load balancers: the UID of its `kube-system` namespace, read once per term
 * of leadership (`GET /api/v1/namespaces/kube-system`; RBAC: `get` on that namespace). It tells two clusters apart
 * that share an Ankra account and a `--cluster-name`. Until it is read no load balancer is created, changed, adopted
 * or deleted: a failed read is retried with backoff (one WARN line naming the cause and the fix, then quiet).
 *
 * @module
 */
import * as v from "valibot";
import type { KubeClient } from "../kube/client.ts";
import { isKubeError } from "../kube/errors.ts";
import * as log from "../log.ts";
import { abortableSleep } from "../runtime/abort.ts";
import { DEFAULTS } from "../defaults.ts";

/** The path of the namespace whose UID identifies the cluster. */
const KUBE_SYSTEM_PATH = "/api/v1/namespaces/kube-system";

const NamespaceSchema = v.object({
  metadata: v.object({ uid: v.pipe(v.string(), v.minLength(1)) }),
});

/** Reads the UID of the `kube-system` namespace once. @throws the Kubernetes API error, or a malformed answer. */
export async function readClusterUid(kube: Pick<KubeClient, "get">, signal?: AbortSignal): Promise<string> {
  const answer = v.safeParse(NamespaceSchema, await kube.get<unknown>(KUBE_SYSTEM_PATH, signal));
  if (!answer.success) {
    throw new Error("the kube-system namespace has no metadata.uid in the API server's answer; check the API server");
  }
  return answer.output.metadata.uid;
}

/** Options of {@linkcode ClusterUid}. */
interface ClusterUidOptions {
  /** First retry delay (default 1 s), doubled up to `maxDelayMs`. */
  retryBaseMs?: number;
  /** Longest retry delay (default 30 s). */
  maxDelayMs?: number;
}

/** The UID of one term: read on first use, retried until it is known, then kept for the term. */
export class ClusterUid {
  readonly #kube: Pick<KubeClient, "get">;
  readonly #retryBaseMs: number;
  readonly #maxDelayMs: number;
  #uid?: Promise<string>;

  /** Creates the source; nothing is read before {@linkcode ClusterUid.get}. */
  constructor(kube: Pick<KubeClient, "get">, options: ClusterUidOptions = {}) {
    this.#kube = kube;
    const { retryBaseMs = DEFAULTS.clusterUidRetryBaseMs, maxDelayMs = DEFAULTS.clusterUidRetryMaxMs } = options;
    this.#retryBaseMs = retryBaseMs;
    this.#maxDelayMs = maxDelayMs;
  }

  /** The UID; rejects only when `signal` aborts. */
  get(signal: AbortSignal): Promise<string> {
    this.#uid ??= this.#read(signal);
    return this.#uid;
  }

  async #read(signal: AbortSignal): Promise<string> {
    let delay = this.#retryBaseMs;
    let warned = false;
    for (;;) {
      try {
        const uid = await readClusterUid(this.#kube, signal);
        log.info(1, "read the cluster's identity", { kubeSystemUid: uid });
        return uid;
      } catch (cause) {
        if (signal.aborted) throw signal.reason;
        if (!warned) {
          const hint = isKubeError(cause, "forbidden")
            ? "grant get on namespaces/kube-system (the chart's and deploy/'s RBAC do)"
            : "the next attempt follows with backoff";
          log.warn(
            `could not read the kube-system namespace's UID, which tells this cluster's load balancers from ` +
              `another cluster's; no load balancer is created, changed or deleted until it is read: ${hint}`,
            { error: cause },
          );
          warned = true;
        }
        await abortableSleep(delay, signal);
        delay = Math.min(delay * 2, this.#maxDelayMs);
      }
    }
  }
}
