/**
 * The sharing steps of the service controller (`load-balancer.ankra.cloud/share`, rules in
 * `provider/service/load_balancer_sharing.ts`):
 *
 * - **check** a sharing Service against the other Services of its group (from the Service store): a port or a
 *   creation-time setting another one holds makes it wait with a Warning naming that Service (Ready `ShareConflict`),
 *   nothing of it applied; otherwise the other Services' listeners are handed to the plan, which never touches them;
 * - **join**: the group is recorded on the Service (`ccm.ankra.cloud/share`) before anything is sent, and a load
 *   balancer of its own it had before goes (deleted, or released when it asks to preserve it);
 * - **leave** (the Service is deleted, stops being a LoadBalancer, or names another key or none): its listeners come
 *   off the group's load balancer, which stays for the others; the last one to leave retires the load balancer.
 *
 * @module
 */
import { CLUSTER_UID_LABEL } from "../../ankra_names.ts";
import { objectKey } from "../../kube/object_key.ts";
import type { ServiceWriter } from "../../kube/service_writes.ts";
import type { SlimService } from "../../kube/slim.ts";
import type { StoreReader } from "../../kube/store.ts";
import * as log from "../../log.ts";
import {
  listenerName,
  loadBalancerLabels,
  loadBalancerName,
  sharedLoadBalancerLabels,
  sharedLoadBalancerName,
} from "../../provider/service/load_balancer_names.ts";
import { sharedKey } from "../../provider/service/load_balancer_ownership.ts";
import {
  planShareLeave,
  recordedShareOf,
  type ShareCheck,
  shareCheck,
  shareKeyOf,
} from "../../provider/service/load_balancer_sharing.ts";
import {
  type ClassRule,
  FINALIZER,
  portPlan,
  type ServiceIntent,
  wantsLoadBalancer,
} from "../../provider/service/service_plan.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import type { CloudCallSender } from "../cloud_call_executor.ts";
import type { LoadBalancerDirectory } from "./load_balancer_directory.ts";
import type { PassReport } from "./pass_report.ts";
import type { ServiceCleanup } from "./service_cleanup.ts";

/** What the sharing steps use. */
interface ServiceShareOptions {
  /** The Services, read-only: a group's members are found there. */
  services: StoreReader<SlimService>;
  /** Where each load balancer is. */
  directory: LoadBalancerDirectory;
  /** Retires a Service's own load balancer, and a group's when its last Service leaves. */
  cleanup: Pick<ServiceCleanup, "retireDedicated">;
  /** Sends (or, in a dry run, describes) the calls. */
  send: CloudCallSender;
  /** Where the Service's writes go. */
  writes: ServiceWriter;
  /** `--cluster-name`. */
  clusterName: string;
  /** UID of the `kube-system` namespace. */
  clusterUid: string;
  /** `--load-balancer-class`. */
  loadBalancerClass?: string;
  /** `--require-load-balancer-class`. */
  classRule: ClassRule;
}

/** The sharing steps. */
export class ServiceShare {
  readonly #services: ServiceShareOptions["services"];
  readonly #directory: ServiceShareOptions["directory"];
  readonly #cleanup: ServiceShareOptions["cleanup"];
  readonly #send: ServiceShareOptions["send"];
  readonly #writes: ServiceShareOptions["writes"];
  readonly #clusterName: ServiceShareOptions["clusterName"];
  readonly #clusterUid: ServiceShareOptions["clusterUid"];
  readonly #loadBalancerClass: ServiceShareOptions["loadBalancerClass"];
  readonly #classRule: ServiceShareOptions["classRule"];

  /** Keeps only `options`: a group's Services are read from the store each time, never cached. */
  constructor(options: ServiceShareOptions) {
    this.#services = options.services;
    this.#directory = options.directory;
    this.#cleanup = options.cleanup;
    this.#send = options.send;
    this.#writes = options.writes;
    this.#clusterName = options.clusterName;
    this.#clusterUid = options.clusterUid;
    this.#loadBalancerClass = options.loadBalancerClass;
    this.#classRule = options.classRule;
  }

  /** The other Services of the group `key` of `service`'s namespace that are served and not going. */
  sharers(service: Pick<SlimService, "namespace" | "name">, key: string): SlimService[] {
    const self = objectKey(service);
    return this.#services.list().filter((other) =>
      other.namespace === service.namespace && objectKey(other) !== self && shareKeyOf(other) === key &&
      !other.deletionTimestamp && wantsLoadBalancer(other, this.#loadBalancerClass, this.#classRule)
    );
  }

  /** Checks a sharing Service against its group; throws the conflict it has (see the module documentation). */
  check(service: SlimService, intent: ServiceIntent, key: string): ShareCheck {
    const checked = shareCheck(service, intent.settings, this.sharers(service, key));
    if (checked.conflict) {
      throw new WaitingForUser("SyncLoadBalancerFailed", checked.conflict, { condition: "ShareConflict" });
    }
    return checked;
  }

  /** Records the group on the Service and retires a load balancer of its own; before anything is sent. */
  async join(report: PassReport, intent: ServiceIntent, key: string): Promise<void> {
    const service = report.service;
    if (recordedShareOf(service) !== key) await this.#writes.recordShare(service, key);
    if (!service.finalizers.includes(FINALIZER)) await this.#writes.setFinalizer(service, FINALIZER, true);
    if (this.#directory.idOf(intent.key)) {
      await this.#cleanup.retireDedicated(report, {
        key: intent.key,
        labels: loadBalancerLabels(this.#clusterName, service.namespace, service.name),
        name: loadBalancerName(this.#clusterName, service.namespace, service.name),
      });
    }
  }

  /**
   * Takes the Service off group `key`'s load balancer: its listeners go, the load balancer stays for the others; the
   * last Service retires it (deleted, or released when that Service asks to preserve it). True while the load
   * balancer is being deleted (look again).
   */
  async leave(report: PassReport, key: string): Promise<boolean> {
    const service = report.service;
    const loadBalancerKey = sharedKey(service.namespace, key);
    const labels = {
      ...sharedLoadBalancerLabels(this.#clusterName, service.namespace, key),
      [CLUSTER_UID_LABEL]: this.#clusterUid,
    };
    const name = sharedLoadBalancerName(this.#clusterName, service.namespace, key);
    const others = this.sharers(service, key);
    let retiring = false;
    if (others.length === 0) {
      retiring = await this.#cleanup.retireDedicated(report, { key: loadBalancerKey, labels, name });
    } else {
      const found = await this.#directory.find(loadBalancerKey, { labels, name, mayExist: true });
      if (found && !found.foreign && found.lb.state !== "deleting") {
        const claimed = new Set(others.flatMap((other) => portPlan(other).tcp.map((p) => listenerName(p.port))));
        const calls = planShareLeave(found.lb, claimed);
        if (calls.length > 0) {
          const result = await this.#send(objectKey(service), calls, { current: found.lb });
          if (result.loadBalancer && !this.#writes.dryRun) {
            this.#directory.remember(loadBalancerKey, result.loadBalancer, { document: "written" });
          }
          if (!this.#writes.dryRun) {
            log.info(1, "took the Service's listeners off its shared load balancer", {
              service: objectKey(service),
              loadBalancer: found.lb.id,
            });
          }
        }
      }
    }
    if (!retiring && !service.deletionTimestamp) await this.#writes.recordShare(service, null);
    return retiring;
  }
}
