/**
 * The end of a Service's load balancer: retiring its dedicated load balancer (when the Service is deleted, stops
 * being served, or moves onto an edge) — one `DeletingLoadBalancer` and one delete, then the real load balancer is
 * read again until it is gone — and, once nothing is left, the finalizer and status removed and `DeletedLoadBalancer`.
 * Only this cluster's load balancer is deleted (its UID label, or none from an older maker); one of another cluster
 * with the same name is left alone. A Service with `load-balancer.ankra.cloud/preserve-on-delete` has its load balancer
 * released instead ({@linkcode planRelease}: its listeners removed, renamed, labelled `ccm.ankra.cloud/released`) and
 * gets a `PreservedLoadBalancer` event naming it and its addresses.
 *
 * @module
 */
import { ANNOTATION_PREFIX, EDGE_IN_USE_ANNOTATION, RELEASED_LABEL } from "../../ankra_names.ts";
import { objectKey } from "../../kube/object_key.ts";
import type { ServiceWriter } from "../../kube/service_writes.ts";
import * as log from "../../log.ts";
import { preservesOnDelete } from "../../provider/service/annotations.ts";
import { loadBalancerLabels, loadBalancerName } from "../../provider/service/load_balancer_names.ts";
import { planRelease, releasedLabelValue } from "../../provider/service/load_balancer_release.ts";
import { loadBalancerIngress } from "../../provider/service/service_ingress.ts";
import { FINALIZER } from "../../provider/service/service_plan.ts";
import type { ReconcileResult } from "../../runtime/work_queue.ts";
import type { CloudCallSender } from "../cloud_call_executor.ts";
import type { EdgeMembership } from "./edge_membership.ts";
import type { LoadBalancerDirectory } from "./load_balancer_directory.ts";
import type { ProvisioningTracker } from "./provisioning_tracker.ts";
import type { PassReport } from "./pass_report.ts";

/** The dedicated load balancer of a Service: its key, labels and name. */
interface DedicatedLoadBalancer {
  /** `<namespace>/<name>` of the Service. */
  key: string;
  /** The cluster and Service labels (and the UID one when known) the load balancer is looked up by. */
  labels: Record<string, string>;
  /** `k8s-<cluster>-<namespace>-<name>` (at most 64 bytes): how one that lost its labels is still found. */
  name: string;
}

/** What the cleanup uses. */
interface ServiceCleanupOptions {
  /** Where each Service's load balancer is. */
  directory: LoadBalancerDirectory;
  /** Stops waiting for a load balancer that goes. */
  tracker: Pick<ProvisioningTracker, "untrack">;
  /** Sends (or, in a dry run, describes) the calls. */
  send: CloudCallSender;
  /** Where the Service's writes go. */
  writes: ServiceWriter;
  /** `--cluster-name`. */
  clusterName: string;
  /** UID of the `kube-system` namespace: a released load balancer keeps it. */
  clusterUid: string;
  /** Removes the Service's members from an edge it used. */
  edges: Pick<EdgeMembership, "leave">;
  /** Look again after this long while the load balancer is being deleted. */
  deletePollMs: number;
}

/** What a cleanup pass left: when to look again, and whether everything of the Service's load balancer is gone. */
interface CleanupOutcome {
  /** The next look (none once gone). */
  result: ReconcileResult;
  /** True once the load balancer is gone and the finalizer removed: what is kept about the Service can go. */
  gone: boolean;
}

/** The cleanup steps. */
export class ServiceCleanup {
  readonly #directory: ServiceCleanupOptions["directory"];
  readonly #tracker: ServiceCleanupOptions["tracker"];
  readonly #send: ServiceCleanupOptions["send"];
  readonly #writes: ServiceCleanupOptions["writes"];
  readonly #clusterName: ServiceCleanupOptions["clusterName"];
  readonly #clusterUid: ServiceCleanupOptions["clusterUid"];
  readonly #edges: ServiceCleanupOptions["edges"];
  readonly #deletePollMs: ServiceCleanupOptions["deletePollMs"];

  /** Keeps only `options`; the lookup, edge and share steps retire load balancers through this one instance. */
  constructor(options: ServiceCleanupOptions) {
    this.#directory = options.directory;
    this.#tracker = options.tracker;
    this.#send = options.send;
    this.#writes = options.writes;
    this.#clusterName = options.clusterName;
    this.#clusterUid = options.clusterUid;
    this.#edges = options.edges;
    this.#deletePollMs = options.deletePollMs;
  }

  /**
   * Retires the Service's dedicated load balancer — deleted, or released when the Service asks to preserve it; true
   * while one exists (being deleted). What the user is told goes into the pass's `report`.
   */
  async retireDedicated(report: PassReport, wanted: DedicatedLoadBalancer): Promise<boolean> {
    const service = report.service;
    const found = await this.#directory.find(wanted.key, {
      labels: wanted.labels,
      name: wanted.name,
      mayExist: service.finalizers.includes(FINALIZER),
    });
    // Never another cluster's, never an unlabelled one; a legacy one (no UID label) is this cluster's by the old rule.
    if (!found || found.foreign || (found.unlabelled && !found.legacy)) return false;
    this.#tracker.untrack(wanted.key);
    if (found.lb.state !== "deleting" && preservesOnDelete(service.annotations)) {
      await this.#send(wanted.key, planRelease(found.lb, service, this.#clusterUid));
      this.#directory.forget(wanted.key);
      const addresses = loadBalancerIngress(found.lb).map((i) => i.ip).join(", ") || "none yet";
      report.event(
        "provider",
        "Normal",
        "PreservedLoadBalancer",
        `Kept load balancer ${found.lb.id} (addresses ${addresses}) as ${ANNOTATION_PREFIX}preserve-on-delete ` +
          `asks: its listeners are removed and it is labelled ${RELEASED_LABEL}=${releasedLabelValue(service)}; a ` +
          `Service with ${ANNOTATION_PREFIX}load-balancer-id: ${found.lb.id} takes it back, or delete it in ` +
          "the Ankra Cloud console",
      );
      if (!this.#writes.dryRun) {
        log.info(0, "released load balancer", { service: wanted.key, loadBalancer: found.lb.id });
      }
      return false;
    }
    if (found.lb.state !== "deleting") {
      report.event("service", "Normal", "DeletingLoadBalancer", "Deleting load balancer");
      await this.#send(wanted.key, [{ operation: "delete_load_balancer", loadBalancer: { id: found.lb.id } }]);
      if (!this.#writes.dryRun) {
        log.info(1, "deleting load balancer", { service: wanted.key, loadBalancer: found.lb.id });
      }
    }
    this.#directory.invalidate(wanted.key);
    return true;
  }

  /** One pass over a Service whose load balancer must go; what the user is told goes into `report`. */
  async cleanup(report: PassReport): Promise<CleanupOutcome> {
    const service = report.service;
    const key = objectKey(service);
    try {
      const recordedEdge = service.annotations[EDGE_IN_USE_ANNOTATION];
      if (recordedEdge) await this.#edges.leave(service, recordedEdge);
      const retiring = await this.retireDedicated(report, {
        key,
        labels: loadBalancerLabels(this.#clusterName, service.namespace, service.name),
        name: loadBalancerName(this.#clusterName, service.namespace, service.name),
      });
      if (retiring) {
        return { result: this.#writes.dryRun ? undefined : { requeueAfterMs: this.#deletePollMs }, gone: false };
      }
      await this.#writes.setFinalizer(service, FINALIZER, false);
      if (!service.deletionTimestamp && service.ingress.length > 0) await this.#writes.writeIngress(service, null);
    } catch (cause) {
      throw report.failed("delete", cause);
    }
    this.#directory.forget(key);
    report.forget();
    report.event("service", "Normal", "DeletedLoadBalancer", "Deleted load balancer");
    return { result: undefined, gone: true };
  }
}
