/**
 * Step 3 of a pass over a Service's dedicated load balancer: find it. Usually through the
 * {@linkcode LoadBalancerDirectory} (by the Service's labels; the real one when the Service changed). A Service that
 * names a load balancer in `load-balancer.ankra.cloud/load-balancer-id` uses that one: it must exist and be the
 * Service's own, released by this cluster or unlabelled (`namedLoadBalancerUse`), else the Service waits with a Warning
 * saying why and nothing is changed; a load balancer the Service had before goes first (deleted, or released when the
 * Service asks to preserve it).
 *
 * @module
 */
import { ANNOTATION_PREFIX } from "../../ankra_names.ts";
import { FINALIZER, type LoadBalancerIntent } from "../../provider/service/service_plan.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import type { FoundLoadBalancer, LoadBalancerDirectory } from "./load_balancer_directory.ts";
import type { PassReport } from "./pass_report.ts";
import type { ServiceCleanup } from "./service_cleanup.ts";

/** What the lookup uses. */
interface ServiceLookupOptions {
  /** Where each Service's load balancer is. */
  directory: LoadBalancerDirectory;
  /** Retires a load balancer the Service had before it named another. */
  cleanup: Pick<ServiceCleanup, "retireDedicated">;
  /** When a Service naming a load balancer it may not use is looked at again (the drift period). */
  recheckAfterMs: number;
}

/** Finds each Service's load balancer. */
export class ServiceLookup {
  readonly #directory: ServiceLookupOptions["directory"];
  readonly #cleanup: ServiceLookupOptions["cleanup"];
  readonly #recheckAfterMs: ServiceLookupOptions["recheckAfterMs"];

  /** Keeps only `options`: what a lookup finds is cached in the shared `directory`, not here. */
  constructor(options: ServiceLookupOptions) {
    this.#directory = options.directory;
    this.#cleanup = options.cleanup;
    this.#recheckAfterMs = options.recheckAfterMs;
  }

  /** The Service's load balancer, or undefined when it has none yet (`fresh`: read the real one). */
  find(report: PassReport, intent: LoadBalancerIntent, fresh: boolean): Promise<FoundLoadBalancer | undefined> {
    const service = report.service;
    const named = intent.settings.loadBalancerId;
    if (named) return this.#findNamed(report, intent, named, fresh);
    return this.#directory.find(intent.loadBalancerKey, {
      labels: intent.labels,
      name: intent.loadBalancerName,
      mayExist: service.finalizers.includes(FINALIZER),
      fresh,
      addresses: service.ingress.flatMap((ingress) => ingress.ip ? [ingress.ip] : []),
    });
  }

  async #findNamed(
    report: PassReport,
    intent: LoadBalancerIntent,
    id: string,
    fresh: boolean,
  ): Promise<FoundLoadBalancer> {
    const named = await this.#directory.findNamed(intent.key, id, { fresh });
    if (!named) {
      throw new WaitingForUser(
        "SyncLoadBalancerFailed",
        `load balancer ${id} (${ANNOTATION_PREFIX}load-balancer-id) does not exist in the account; nothing is ` +
          "created: name an existing load balancer, or remove the annotation to get a new one",
        { recheckAfterMs: this.#recheckAfterMs, condition: "LoadBalancerNotFound" },
      );
    }
    if (!named.use.ok) {
      throw new WaitingForUser("SyncLoadBalancerFailed", named.use.reason, {
        recheckAfterMs: this.#recheckAfterMs,
        condition: "LoadBalancerNotAllowed",
      });
    }
    const earlier = this.#directory.idOf(intent.key);
    if (earlier && earlier !== id) {
      await this.#cleanup.retireDedicated(report, {
        key: intent.key,
        labels: intent.labels,
        name: intent.loadBalancerName,
      });
    }
    return { lb: named.lb, unlabelled: named.use.adopt };
  }
}
