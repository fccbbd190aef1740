/**
 * One pass over a Service, as a table of contents of named steps ({@linkcode ServicePass.ensure}):
 *
 * 1. **decide** what the Service asks for (`decideService`: how it is served — an Ankra load balancer or its nodes'
 *    own addresses —, its settings, notices, serving nodes, within what it may name; nodes whose servers are about to
 *    go down leave, told once per operation with a `DrainingNode` event) — pure, one value typed by mode — and stop
 *    where the user must act;
 * 2.–5. hand it to the way it is served, chosen once by that mode ({@linkcode ServingStrategy}):
 *    `LoadBalancerServing` (move into its share group, find its load balancer or edge, plan the calls, apply) or
 *    `NodeAddressServing` (move off what it left, publish its nodes' public addresses, no Ankra write); each owns
 *    what it keeps between passes, and the other forgets the Service;
 * 6. **tell**, once, at the end: the notices, the events the plan and the steps decided, the failure the pass ended
 *    with (`ServiceReporter`), then the Ready condition (`ServiceReadiness`).
 *
 * And the pass over a Service whose load balancer must go ({@linkcode ServicePass.cleanup}: off its share group, then
 * its edge and its own load balancer, `ServiceCleanup`), and the one that writes an address the tracker saw
 * ({@linkcode ServicePass.served}). Every pass records what it will tell in a {@linkcode PassReport}.
 *
 * @module
 */
import type { LoadBalancer } from "../../cloud/client.ts";
import { objectKey } from "../../kube/object_key.ts";
import { type SlimService } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { type LoadBalancerSettings, parseAnnotations, type ServingMode } from "../../provider/service/annotations.ts";
import { recordedGroupOf } from "../../provider/service/share_groups.ts";
import { waitingState } from "../../provider/service/ready_condition.ts";
import { decideService } from "../../provider/service/service_decision.ts";
import { ingressIpMode, type IngressStyle, ingressStyle } from "../../provider/service/service_ingress.ts";
import { MEMBERS_NOTICE_TOPIC, type ServiceIntent } from "../../provider/service/service_plan.ts";
import { type NodeFacts, nodeFacts } from "../../provider/service/service_nodes.ts";
import { servingModeOf } from "../../provider/service/serving_mode.ts";
import { describePlannedChange, type SeenPlannedChange } from "../../provider/node/planned_change.ts";
import type { ReconcileResult } from "../../runtime/work_queue.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import { PassReport } from "./pass_report.ts";
import type { ServiceControllerSettings } from "./service_controller_options.ts";
import { failedState } from "./service_readiness.ts";
import type { PassSteps } from "./service_steps.ts";

/** The passes over Services, and what they keep between passes. */
export class ServicePass {
  readonly #settings: ServiceControllerSettings;
  readonly #steps: PassSteps;
  /** False when the API server strips an ingress `ipMode` (before 1.30): none is published then. */
  ipModes = true;
  /** The facts of the nodes as the node store's `version` last had them. */
  #facts?: { version: number; facts: NodeFacts };
  /** The nodes whose servers are about to go down (a planned stop or delete), as the last server list had them. */
  #leaving = new Map<string, SeenPlannedChange>();
  /** Their names, as the decision reads them. */
  #leavingNames: ReadonlySet<string> = new Set();
  /** The announcing operations each Service was already told of, by Service key. */
  readonly #told = new Map<string, Set<string>>();

  /** Creates the passes over `steps`. */
  constructor(settings: ServiceControllerSettings, steps: PassSteps) {
    this.#settings = settings;
    this.#steps = steps;
  }

  /** How `service` is served (the mode rule, with `--default-load-balancer-mode`; invalid annotations count as unset). */
  modeOf(service: SlimService): ServingMode {
    return servingModeOf(service, this.#settings.defaults.mode);
  }

  /** Services whose next pass reads the real load balancer (the Service changed since its last read). */
  get readNext(): Set<string> {
    return this.#steps.loadBalancers.readNext;
  }

  /** Both ways of serving forget what they keep of the Service `key` (it is gone). */
  forget(key: string): void {
    this.#steps.loadBalancers.forget(key);
    this.#steps.nodeAddresses.forget(key);
    this.#told.delete(key);
  }

  /**
   * After a server list: which nodes' servers are about to go down (their active operation is a pending or running
   * `server.stop` or `server.delete`) or are down (`stopping`, `stopped`, `deleting`): from the list itself, no call
   * of its own. True when that changed: every Service looks again, so such a node drains from its load balancer or
   * ingress before the server goes down, and stays out while it is down.
   */
  serversListed(): boolean {
    // Every node whose server leaves by the one rule — also one already down (its stop done, announced or not), or a
    // node drained for an announced stop would come back as a member once its operation is gone from the list —; the
    // announced ones with their operation, for the Services' events.
    const leaving = new Map<string, SeenPlannedChange>();
    const names = new Set<string>();
    for (const node of this.#settings.nodes.store.list()) {
      if (!this.#settings.servers.leaving(node)) continue;
      names.add(node.name);
      const change = this.#settings.servers.plannedChange(node);
      if (change?.kind === "leaving") leaving.set(node.name, change);
    }
    const changed = leaving.size !== this.#leaving.size ||
      [...leaving].some(([name, change]) => this.#leaving.get(name)?.operationId !== change.operationId) ||
      names.size !== this.#leavingNames.size || [...names].some((name) => !this.#leavingNames.has(name));
    this.#leaving = leaving;
    this.#leavingNames = names;
    if (changed) {
      // What each Service was told of stays only for the operations still announced.
      const current = new Set([...leaving.values()].map((change) => change.operationId));
      for (const [key, told] of this.#told) {
        for (const id of told) if (!current.has(id)) told.delete(id);
        if (told.size === 0) this.#told.delete(key);
      }
    }
    return changed;
  }

  /**
   * How `service`'s ingress is written in `mode`: its primary family first; `ipMode` VIP on node addresses, and on a
   * load balancer the one its `settings` ask for — when the API server keeps the field ({@linkcode ServicePass.ipModes})
   * and the settings are valid.
   */
  ingressStyle(service: SlimService, settings: LoadBalancerSettings | undefined, mode: ServingMode): IngressStyle {
    if (!this.ipModes || !settings) return ingressStyle(service, undefined);
    return ingressStyle(service, mode === "node-addresses" ? "VIP" : ingressIpMode(settings));
  }

  /** A pass over a Service that wants a load balancer (see the module documentation); the next look. */
  async ensure(service: SlimService): Promise<ReconcileResult> {
    const report = new PassReport(service);
    let failure: { cause: unknown } | undefined;
    try {
      return await this.#ensure(report);
    } catch (cause) {
      failure = { cause };
      throw cause;
    } finally {
      await this.#tell(report, failure);
    }
  }

  async #ensure(report: PassReport): Promise<ReconcileResult> {
    const { service } = report;
    // 1. Decide what the Service asks for; stop where the user must act.
    const intent = this.#decide(service);
    // The members' notice waits for the members: on a network they are the servers' addresses there (step 3).
    report.notices(intent.notices.filter((n) => n.topic !== MEMBERS_NOTICE_TOPIC));
    if (intent.waitFor) {
      report.state = waitingState(intent);
      if (!intent.waitFor.reported) report.failed("ensure", intent.waitFor.message);
      throw new WaitingForUser("SyncLoadBalancerFailed", intent.waitFor.message);
    }
    if (intent.noNodes) {
      report.event("service", "Warning", "UnAvailableLoadBalancer", "There are no available nodes for LoadBalancer");
    }
    this.#tellLeaving(report, intent);
    // 2.–5. The way it is served, chosen by its mode; the other way forgets it.
    const style = this.ingressStyle(service, intent.settings, intent.mode);
    try {
      if (intent.mode === "node-addresses") {
        this.#steps.loadBalancers.forget(intent.key);
        return await this.#steps.nodeAddresses.ensure(report, intent, style);
      }
      this.#steps.nodeAddresses.forget(intent.key);
      return await this.#steps.loadBalancers.ensure(report, intent, style);
    } catch (cause) {
      throw report.failed("ensure", cause);
    }
  }

  /** The nodes' facts every decision reads, derived again only once the node store changed. */
  #nodeFacts(): NodeFacts {
    const store = this.#settings.nodes.store;
    if (this.#facts?.version !== store.version) {
      this.#facts = { version: store.version, facts: nodeFacts(store.list()) };
    }
    return this.#facts.facts;
  }

  /** Tells the Service, once per operation, which of its nodes leave because their servers are about to go down. */
  #tellLeaving(report: PassReport, intent: ServiceIntent): void {
    for (const name of intent.leaving ?? []) {
      const change = this.#leaving.get(name);
      if (!change) continue;
      const told = this.#told.get(intent.key) ?? new Set<string>();
      if (told.has(change.operationId)) continue;
      told.add(change.operationId);
      this.#told.set(intent.key, told);
      const from = intent.mode === "node-addresses" ? "its ingress" : "its load balancer";
      const drain = this.#settings.memberDrainMs;
      report.event(
        "provider",
        "Normal",
        "DrainingNode",
        `node ${name} leaves ${from} before its server ${change.serverId} goes down (${
          describePlannedChange(change)
        })` +
          (drain > 0 ? `: it drains for ${Math.round(drain / 1000)} s, taking no new connections` : ""),
      );
    }
  }

  /** Step 1: what the Service asks for, within what it may name. */
  #decide(service: SlimService): ServiceIntent {
    const settings = this.#settings;
    return decideService(service, this.#nodeFacts(), {
      clusterName: settings.clusterName,
      clusterUid: settings.clusterUid,
      loadBalancerClass: settings.loadBalancerClass,
      defaults: settings.defaults,
      readyNodes: settings.endpoints?.readyNodes(objectKey(service)),
      allowed: settings.allowedResources,
      leaving: this.#leavingNames,
    });
  }

  /** A pass over a Service whose load balancer must go; the next look. */
  async cleanup(service: SlimService): Promise<ReconcileResult> {
    const report = new PassReport(service);
    const key = objectKey(service);
    this.forget(key);
    let outcome;
    try {
      const recordedShare = recordedGroupOf(service);
      if (recordedShare) {
        try {
          if (await this.#steps.share.leave(report, recordedShare)) {
            return { requeueAfterMs: this.#settings.provisioningPollMs };
          }
        } catch (cause) {
          throw report.failed("delete", cause);
        }
      }
      outcome = await this.#steps.cleanup.cleanup(report);
    } finally {
      this.#steps.reporter.tell(report);
    }
    if (outcome.gone) this.readNext.delete(key);
    await this.#steps.readiness.clear(service);
    return outcome.result;
  }

  /**
   * The tracker saw `service`'s load balancer get its address (`summary`): the address is written now, outside the
   * queue, and told. A failed write is logged and thrown (the caller looks at the Service again).
   */
  async served(service: SlimService, summary: LoadBalancer): Promise<void> {
    const report = new PassReport(service);
    const parsed = parseAnnotations(service.annotations, { sessionAffinity: service.sessionAffinity });
    try {
      await this.#steps.apply.served(report, summary, {
        ensuringOpen: this.#steps.reporter.ensuringOpen(service),
        ingressStyle: this.ingressStyle(service, parsed.ok ? parsed.settings : undefined, "load-balancer"),
      });
    } catch (cause) {
      log.warn("could not write the Service's address; the next pass retries", {
        service: objectKey(service),
        error: cause,
      });
      throw cause;
    }
    this.#steps.reporter.tell(report);
    void this.#steps.readiness.report(service, report.state!);
    log.info(1, "load balancer is serving", { service: objectKey(service), loadBalancer: summary.id });
  }

  /** Step 6: tells what the pass gathered, starts tracking what it created, and writes the Ready condition. */
  async #tell(report: PassReport, failure?: { cause: unknown }): Promise<void> {
    this.#steps.reporter.tell(report);
    if (report.track) this.#steps.tracker.track(report.track, objectKey(report.service));
    const state = failure ? report.state ?? failedState(failure.cause) : report.state;
    if (state) await this.#steps.readiness.report(report.service, state);
  }
}
