/**
 * The sharing steps of the service controller (`load-balancer.ankra.cloud/share`, rules in
 * `provider/service/load_balancer_sharing.ts`; groups across namespaces, `share-namespaces`, in
 * `provider/service/share_groups.ts`):
 *
 * - **group**: which group a Service is in, from the Service store (its namespace's, or the one across namespaces of
 *   its key when its namespace opened to others), and that group's load balancer key, name and labels;
 * - **check** a sharing Service against the other Services of its group, before it leaves or joins anything: across namespaces, consent first (a
 *   refusal names the side that did not consent: Ready `ShareNotAllowed`); then a port or a creation-time setting
 *   another one holds makes it wait with a Warning naming that Service (Ready `ShareConflict`), nothing of it applied;
 *   otherwise the other Services' listeners are handed to the plan, which never touches them;
 * - **join**: the group is recorded on the Service (`ccm.ankra.cloud/share`: the key, or `*.<key>` across namespaces)
 *   before anything is sent, and a load balancer of its own it had before goes (deleted, or released when it asks to
 *   preserve it);
 * - **adopt**: when the Services of a group become another group of the same key (a namespace opens to others, or
 *   the group across namespaces is back to one namespace) and the new group has no load balancer yet, the old one is
 *   renamed and relabelled for it (`RelabelledLoadBalancer`), by whichever of its Services passes first: no second
 *   load balancer, the address kept;
 * - **leave** (the Service is deleted, stops being a LoadBalancer, or names another key or none): its listeners come
 *   off the group's load balancer, which stays for the others; the last one to leave retires the load balancer.
 *
 * @module
 */
import { ANNOTATION_PREFIX, CLUSTER_UID_LABEL, SHARED_LABEL, SHARED_NAMESPACES_LABEL } from "../../ankra_names.ts";
import type { LoadBalancer } from "../../cloud/client.ts";
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
import { ACROSS_NAMESPACES, type LoadBalancerKey, sharedKey } from "../../provider/service/load_balancer_ownership.ts";
import {
  earlier,
  planGroupMove,
  planNamespacesLabel,
  planShareLeave,
  type ShareCheck,
  shareCheck,
} from "../../provider/service/load_balancer_sharing.ts";
import {
  acrossOrder,
  consentCheck,
  groupMembers,
  namespacesLabelValue,
  namespacesOnIt,
  recordedGroupOf,
  recordValue,
  sameGroup,
  type ShareGroup,
  shareGroupOf,
} from "../../provider/service/share_groups.ts";
import {
  type ClassRule,
  FINALIZER,
  type LoadBalancerIntent,
  portPlan,
  wantsLoadBalancer,
} from "../../provider/service/service_plan.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import type { CloudCallSender } from "../cloud_call_executor.ts";
import type { LoadBalancerDirectory } from "./load_balancer_directory.ts";
import type { PassReport } from "./pass_report.ts";
import type { ServiceCleanup } from "./service_cleanup.ts";

const SHARE_ANNOTATION = `${ANNOTATION_PREFIX}share`;

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

  /** The Services that share: with a share annotation, served and not going (the Service store, read now). */
  #sharing(): SlimService[] {
    return this.#services.list().filter((service) =>
      service.annotations[SHARE_ANNOTATION] !== undefined && !service.deletionTimestamp &&
      wantsLoadBalancer(service, this.#loadBalancerClass, this.#classRule)
    );
  }

  /** The group `service` is in now (its namespace's, or the one across namespaces of its key); undefined: none. */
  groupOf(service: SlimService): ShareGroup | undefined {
    return shareGroupOf(service, this.#sharing());
  }

  /** The directory key, name and labels (with this cluster's UID) of `group`'s load balancer. */
  loadBalancerOf(group: ShareGroup): { key: LoadBalancerKey; name: string; labels: Record<string, string> } {
    return {
      key: sharedKey(group.namespace, group.key),
      name: sharedLoadBalancerName(this.#clusterName, group.namespace, group.key),
      labels: {
        ...sharedLoadBalancerLabels(this.#clusterName, group.namespace, group.key),
        [CLUSTER_UID_LABEL]: this.#clusterUid,
      },
    };
  }

  /** The other Services of `group` that are served and not going. */
  sharers(service: Pick<SlimService, "namespace" | "name">, group: ShareGroup): SlimService[] {
    const self = objectKey(service);
    return groupMembers(group, this.#sharing()).filter((other) => objectKey(other) !== self);
  }

  /**
   * Checks a sharing Service against its group; throws the refusal or conflict it has (module documentation). Across
   * namespaces, the group's load balancer says which namespaces are on it (they come first) and is told the admitted
   * ones when they changed; `labels` are what a new one gets.
   */
  async check(
    service: SlimService,
    intent: LoadBalancerIntent,
    group: ShareGroup,
  ): Promise<ShareCheck & { namespaces: string[]; labels?: Record<string, string> }> {
    const across = group.namespace === ACROSS_NAMESPACES;
    let current: LoadBalancer | undefined;
    if (across) {
      const target = this.loadBalancerOf(group);
      const found = await this.#directory.find(target.key, {
        labels: target.labels,
        name: target.name,
        mayExist: true,
      });
      if (found && !found.foreign && !found.unlabelled && found.lb.state !== "deleting") current = found.lb;
    }
    const onIt = namespacesOnIt(current?.labels);
    const consent = consentCheck(service, this.#sharing(), onIt);
    if (!consent.ok) {
      throw new WaitingForUser("SyncLoadBalancerFailed", consent.message, { condition: "ShareNotAllowed" });
    }
    const order = across ? acrossOrder(onIt) : earlier;
    const checked = shareCheck(service, intent.settings, this.sharers(service, group), order);
    if (checked.conflict) {
      throw new WaitingForUser("SyncLoadBalancerFailed", checked.conflict, { condition: "ShareConflict" });
    }
    if (!across) return { ...checked, namespaces: consent.namespaces };
    const labels = { [SHARED_NAMESPACES_LABEL]: namespacesLabelValue(consent.namespaces) };
    const call = current ? planNamespacesLabel(current, consent.namespaces) : undefined;
    if (current && call) {
      const result = await this.#send(objectKey(service), [call], { current });
      if (!this.#writes.dryRun) {
        const { key } = this.loadBalancerOf(group);
        this.#directory.remember(key, result.loadBalancer ?? { ...current, labels: { ...current.labels, ...labels } }, {
          document: "written",
        });
      }
    }
    return { ...checked, namespaces: consent.namespaces, labels };
  }

  /** Records the group on the Service and retires a load balancer of its own; before anything is sent. */
  async join(report: PassReport, intent: LoadBalancerIntent, group: ShareGroup): Promise<void> {
    const service = report.service;
    if (!sameGroup(recordedGroupOf(service), group)) await this.#writes.recordShare(service, recordValue(group));
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
   * Gives group `to` the load balancer its Services' earlier group had, when `to` has none: the groups of the same key
   * its Services were in before (across namespaces: the admitted `namespaces`' own groups, in order, that a Service
   * there last joined and none is in any more; within a namespace: the group across namespaces it last joined, which
   * no Service is in any more and whose label lists the namespace). The first such load balancer found is renamed and
   * relabelled for `to` (`RelabelledLoadBalancer`): the same load balancer, the same address, no second one.
   */
  async adopt(report: PassReport, to: ShareGroup, namespaces: readonly string[]): Promise<void> {
    const service = report.service;
    const target = this.loadBalancerOf(to);
    const sharing = this.#sharing();
    const across = to.namespace === ACROSS_NAMESPACES;
    const before = (from: ShareGroup) =>
      this.#services.list().some((other) =>
        (across ? other.namespace === from.namespace : objectKey(other) === objectKey(service)) &&
        sameGroup(recordedGroupOf(other), from)
      );
    const candidates =
      (across
        ? namespaces.map((namespace) => ({ namespace, key: to.key }))
        : [{ namespace: ACROSS_NAMESPACES, key: to.key }])
        .filter((from) => before(from) && groupMembers(from, sharing).length === 0);
    if (candidates.length === 0) return;
    if (await this.#directory.find(target.key, { labels: target.labels, name: target.name, mayExist: true })) return;
    for (const from of candidates) {
      const source = this.loadBalancerOf(from);
      const found = await this.#directory.find(source.key, {
        labels: source.labels,
        name: source.name,
        mayExist: true,
      });
      if (!found || found.foreign || found.unlabelled || found.lb.state === "deleting") continue;
      // Back within one namespace: only one the load balancer says is on it (a record on a Service is no proof).
      if (!across && !namespacesOnIt(found.lb.labels).has(to.namespace)) continue;
      await this.#move(report, found.lb, { from, to, source: source.key, namespaces });
      return;
    }
  }

  /** Renames and relabels `lb` from group `from` to group `to` (see {@linkcode ServiceShare.adopt}). */
  async #move(
    report: PassReport,
    lb: LoadBalancer,
    move: { from: ShareGroup; to: ShareGroup; source: LoadBalancerKey; namespaces: readonly string[] },
  ): Promise<void> {
    const service = report.service;
    const { from, to } = move;
    const target = this.loadBalancerOf(to);
    if (to.namespace === ACROSS_NAMESPACES) {
      target.labels[SHARED_NAMESPACES_LABEL] = namespacesLabelValue(move.namespaces);
    }
    const call = planGroupMove(lb, target);
    const result = await this.#send(objectKey(service), [call], { current: lb });
    // Also in a dry run: the rest of its pass is planned against the relabelled load balancer it describes, not a
    // new one (a later read of the real one, still with the old labels, forgets it again).
    this.#directory.forget(move.source);
    this.#directory.remember(
      target.key,
      result.loadBalancer ?? { ...lb, name: target.name, labels: call.body.labels },
      {
        document: "written",
      },
    );
    const what = to.namespace === ACROSS_NAMESPACES
      ? `share group ${to.key} across namespaces`
      : `share group ${to.key} of namespace ${to.namespace}`;
    report.event(
      "service",
      "Normal",
      "RelabelledLoadBalancer",
      `load balancer ${lb.id} now serves the ${what}: renamed ${target.name} and labelled ` +
        `${SHARED_LABEL}=${target.labels[SHARED_LABEL]}; its address and listeners are kept`,
    );
    if (!this.#writes.dryRun) {
      log.info(1, "handed a shared load balancer to its group's new name", {
        service: objectKey(service),
        loadBalancer: lb.id,
        from: recordValue(from),
        to: recordValue(to),
      });
    }
  }

  /**
   * Takes the Service off group `group`'s load balancer: its listeners go, the load balancer stays for the others;
   * the last Service retires it (deleted, or released when that Service asks to preserve it). True while the load
   * balancer is being deleted (look again).
   */
  async leave(report: PassReport, group: ShareGroup): Promise<boolean> {
    const service = report.service;
    const { key: loadBalancerKey, labels, name } = this.loadBalancerOf(group);
    const others = this.sharers(service, group);
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
