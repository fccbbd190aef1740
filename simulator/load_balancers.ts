/**
 * Load balancers in the simulator: create (quota, billing gates, HA by zone capabilities, `creating` → `running`
 * after a delay with addresses allocated then), update, delete (`deleting` → gone), backends, frontends and members
 * with the API's rules.
 *
 * Where the API document is silent, the simulator decides (see `docs/simulator.md`): sub-resources may be changed
 * while `creating` (stored and applied once running) but not while `deleting` (409); deleting a load balancer that
 * is already `deleting` answers 202 with the running operation; names of load balancers are unique per account on
 * rename (409) but not enforced on create; backend and frontend names and frontend ports are unique per load
 * balancer (409); with seeded `certificates`, a frontend naming an id that is not among them is a 400 naming the field.
 * Without a data plane a change is applied at once; with one, the data plane reports it applied once its listeners
 * follow it ({@linkcode LoadBalancers.markApplied}).
 *
 * The stored shapes and the `LoadBalancer` document are in `load_balancer_state.ts`; the member address rule, shared
 * with edges, in `member_addresses.ts`.
 *
 * @module
 */
import * as v from "valibot";
import { badRequest, conflict, notFound, ProblemError } from "./problem.ts";
import type {
  CreateBackendBody,
  CreateFrontendBody,
  CreateLoadBalancerBody,
  MemberInput,
  UpdateBackendBody,
  UpdateLoadBalancerBody,
} from "./request_schemas.ts";
import type { World } from "./world.ts";
import type { OperationState } from "./world_state.ts";
import { zoneHasLoadBalancerHa } from "./world_documents.ts";
import {
  type BackendState,
  DEFAULT_HEALTH_CHECK,
  type FrontendState,
  type HealthCheckState,
  loadBalancerDocument,
  type LoadBalancerState,
  type MemberState,
} from "./load_balancer_state.ts";
import { checkMemberAddress } from "./member_addresses.ts";

type Input<S extends v.GenericSchema> = v.InferOutput<S>;

/** Options of {@linkcode LoadBalancers}. */
export interface LoadBalancersOptions {
  /**
   * Who applies a configuration: `at_once` (no data plane: every change is applied when it is stored) or
   * `data_plane` (a change stays unapplied until {@linkcode LoadBalancers.markApplied}).
   */
  appliedBy?: "at_once" | "data_plane";
}

/** Load balancer operations on a {@linkcode World}. */
export class LoadBalancers {
  readonly #world: World;
  readonly #appliedAtOnce: boolean;
  readonly items = new Map<string, LoadBalancerState>();

  /** Creates the service over `world`. */
  constructor(world: World, options: LoadBalancersOptions = {}) {
    this.#world = world;
    this.#appliedAtOnce = (options.appliedBy ?? "at_once") === "at_once";
  }

  /** Records that the load balancer's VMs run `generation` (the data plane's listeners follow it). */
  markApplied(loadBalancerId: string, generation: number): void {
    const lb = this.items.get(loadBalancerId);
    if (lb && lb.state === "running" && generation <= lb.configuration_generation) {
      lb.applied_generation = Math.max(lb.applied_generation, generation);
    }
  }

  /** The load balancer or a 404. */
  get(loadBalancerId: string): LoadBalancerState {
    const lb = this.items.get(loadBalancerId);
    if (!lb) throw notFound("load balancer", loadBalancerId);
    return lb;
  }

  /** Load balancers newest first, optionally those carrying every label of `labels`. */
  list(labels: Record<string, string>): LoadBalancerState[] {
    return [...this.items.values()]
      .filter((lb) => Object.entries(labels).every(([k, value]) => lb.labels[k] === value))
      .sort((a, b) => b.seq - a.seq);
  }

  /** `create_load_balancer`. */
  create(body: Input<typeof CreateLoadBalancerBody>): { lb: LoadBalancerState; operation: OperationState } {
    const world = this.#world;
    const settings = world.settings;
    if (!settings.email_verified) {
      throw new ProblemError(403, "verify your email address before creating billable resources", {
        reason: "email_unverified",
      });
    }
    if (settings.payment !== "ok") {
      throw new ProblemError(402, "the account may not create billable resources now", { reason: settings.payment });
    }
    const zone = world.zone(body.zone);
    if (body.network_id === "") throw badRequest("field network_id: must name a private network of the account");
    const network = world.network(body.network_id);
    if (!network.zones.includes(zone.name)) {
      throw conflict(`network ${network.id} does not reach zone ${zone.name} (it spans ${network.zones.join(", ")})`);
    }
    if (body.zone_redundant) {
      const zonesInRegion = [...world.zones.values()].filter((z) => z.region === zone.region).length;
      if (zonesInRegion < 2) throw badRequest(`field zone_redundant: region ${zone.region} has one zone`);
      throw new ProblemError(501, "zone-redundant load balancers are not implemented yet");
    }
    const ha = zoneHasLoadBalancerHa(zone);
    if (body.high_availability === true && !ha) {
      throw conflict(
        `zone ${zone.name} cannot place a load balancer pair: load_balancer_ha is missing ` +
          `(the zone has ${zone.compute_nodes} compute node(s); it needs 2)`,
      );
    }
    if (!zone.compute_nodes) throw conflict(`zone ${zone.name} has no compute node: compute is missing`);
    if (this.items.size >= settings.load_balancer_quota) {
      throw new ProblemError(
        422,
        `the account may have at most ${settings.load_balancer_quota} load balancers`,
        { reason: "quota_exceeded" },
      );
    }
    const { id, seq } = world.newId("lb");
    const lb: LoadBalancerState = {
      id,
      seq,
      zone: zone.name,
      name: body.name,
      network_id: network.id,
      state: "creating",
      labels: { ...body.labels },
      high_availability: body.high_availability ?? ha,
      wants_ipv4: body.public_ipv4 ?? true,
      public_ipv4: null,
      public_ipv6_addresses: [],
      configuration_generation: 1,
      applied_generation: 0,
      frontends: [],
      backends: [],
      active_operation: null,
      created_at: world.isoNow(),
    };
    const operation = world.startOperation("load_balancer.create", {
      delayMs: settings.load_balancer_create_delay_ms,
      loadBalancerId: id,
      onFinish: () => {
        if (lb.state !== "creating") return;
        const vms = lb.high_availability ? 2 : 1;
        lb.public_ipv6_addresses = Array.from({ length: vms }, () => world.allocatePublicIpv6().address);
        if (lb.wants_ipv4) lb.public_ipv4 = world.allocatePublicIpv4();
        lb.state = "running";
        if (this.#appliedAtOnce) lb.applied_generation = lb.configuration_generation;
        lb.active_operation = null;
      },
    });
    lb.active_operation = operation;
    this.items.set(id, lb);
    return { lb, operation };
  }

  /** `update_load_balancer`: name and labels (labels replace all). */
  update(loadBalancerId: string, body: Input<typeof UpdateLoadBalancerBody>): LoadBalancerState {
    const lb = this.get(loadBalancerId);
    if (lb.state === "deleting") throw conflict(`load balancer ${lb.id} is being deleted`);
    if (body.name !== undefined && body.name !== lb.name) {
      const taken = [...this.items.values()].find((other) => other.id !== lb.id && other.name === body.name);
      if (taken) throw conflict(`the name ${body.name} is taken by load balancer ${taken.id}`);
      lb.name = body.name;
    }
    if (body.labels !== undefined) lb.labels = { ...body.labels };
    return lb;
  }

  /** `delete_load_balancer`: `deleting`, then gone after the delay. */
  delete(loadBalancerId: string): OperationState {
    const lb = this.get(loadBalancerId);
    if (lb.state === "deleting" && lb.active_operation) return lb.active_operation;
    lb.state = "deleting";
    const operation = this.#world.startOperation("load_balancer.delete", {
      delayMs: this.#world.settings.load_balancer_delete_delay_ms,
      loadBalancerId: lb.id,
      onFinish: () => this.items.delete(lb.id),
    });
    lb.active_operation = operation;
    return operation;
  }

  #changeable(loadBalancerId: string): LoadBalancerState {
    const lb = this.get(loadBalancerId);
    if (lb.state === "deleting") throw conflict(`load balancer ${lb.id} is being deleted`);
    return lb;
  }

  #changed(lb: LoadBalancerState): void {
    lb.configuration_generation++;
    if (lb.state === "running" && this.#appliedAtOnce) lb.applied_generation = lb.configuration_generation;
  }

  /** The backend of `lb` or a 404. */
  backend(lb: LoadBalancerState, backendId: string): BackendState {
    const backend = lb.backends.find((b) => b.id === backendId);
    if (!backend) throw notFound("backend", backendId);
    return backend;
  }

  /** `create_load_balancer_backend`. */
  createBackend(loadBalancerId: string, body: Input<typeof CreateBackendBody>): BackendState {
    const lb = this.#changeable(loadBalancerId);
    if (lb.backends.some((b) => b.name === body.name)) {
      throw conflict(`load balancer ${lb.id} already has a backend named ${body.name}`);
    }
    const healthCheck: HealthCheckState = { ...DEFAULT_HEALTH_CHECK };
    if (body.health_check_path !== undefined) {
      if (!/^\/[A-Za-z0-9._~/?&=%-]{0,254}$/.test(body.health_check_path)) {
        throw badRequest("field health_check_path: must be a path starting with /");
      }
      Object.assign(healthCheck, { type: "http", path: body.health_check_path });
    }
    Object.assign(healthCheck, body.health_check ?? {});
    const backend: BackendState = {
      id: this.#world.newId("be").id,
      name: body.name,
      mode: body.mode,
      balance: body.balance ?? "roundrobin",
      health_check: healthCheck,
      members: [],
    };
    lb.backends.push(backend);
    this.#changed(lb);
    return backend;
  }

  /** `update_load_balancer_backend`: balance and health check (omitted fields keep their value). */
  updateBackend(loadBalancerId: string, backendId: string, body: Input<typeof UpdateBackendBody>): BackendState {
    const lb = this.#changeable(loadBalancerId);
    const backend = this.backend(lb, backendId);
    if (body.balance !== undefined) backend.balance = body.balance;
    if (body.health_check !== undefined) Object.assign(backend.health_check, body.health_check);
    this.#changed(lb);
    return backend;
  }

  /** `delete_load_balancer_backend`: 409 while a frontend forwards to it. */
  deleteBackend(loadBalancerId: string, backendId: string): void {
    const lb = this.#changeable(loadBalancerId);
    const backend = this.backend(lb, backendId);
    const user = lb.frontends.find((f) => f.backend_id === backend.id);
    if (user) throw conflict(`frontend ${user.name} forwards to backend ${backend.name}; delete it first`);
    lb.backends = lb.backends.filter((b) => b.id !== backend.id);
    this.#changed(lb);
  }

  /** `create_load_balancer_frontend`. */
  createFrontend(loadBalancerId: string, body: Input<typeof CreateFrontendBody>): FrontendState {
    const lb = this.#changeable(loadBalancerId);
    const backend = lb.backends.find((b) => b.id === body.backend_id);
    if (!backend) throw badRequest(`field backend_id: load balancer ${lb.id} has no backend ${body.backend_id}`);
    if (lb.frontends.some((f) => f.name === body.name)) {
      throw conflict(`load balancer ${lb.id} already has a frontend named ${body.name}`);
    }
    const sameport = lb.frontends.find((f) => f.port === body.port);
    if (sameport) throw conflict(`port ${body.port} is already served by frontend ${sameport.name}`);
    const certificates = body.certificate_ids ?? [];
    if (body.tls && certificates.length === 0) {
      throw badRequest("field certificate_ids: a TLS frontend needs at least one certificate");
    }
    if (body.redirect_to_https && (body.tls || backend.mode !== "http")) {
      throw badRequest("field redirect_to_https: only on a plain frontend of an http backend");
    }
    const known = this.#world.certificates;
    certificates.forEach((certificate, index) => {
      if (known && !known.has(certificate)) {
        throw badRequest(`field certificate_ids.${index}: the account has no certificate ${certificate}`);
      }
    });
    const used = new Set(lb.frontends.flatMap((f) => f.certificate_ids));
    for (const certificate of certificates) used.add(certificate);
    if (used.size > 16) throw badRequest("field certificate_ids: a load balancer uses at most 16 certificates");
    const frontend: FrontendState = {
      id: this.#world.newId("fe").id,
      name: body.name,
      port: body.port,
      backend_id: backend.id,
      tls: body.tls ?? false,
      certificate_ids: certificates,
      redirect_to_https: body.redirect_to_https ?? false,
    };
    lb.frontends.push(frontend);
    this.#changed(lb);
    return frontend;
  }

  /** `delete_load_balancer_frontend`. */
  deleteFrontend(loadBalancerId: string, frontendId: string): void {
    const lb = this.#changeable(loadBalancerId);
    if (!lb.frontends.some((f) => f.id === frontendId)) throw notFound("frontend", frontendId);
    lb.frontends = lb.frontends.filter((f) => f.id !== frontendId);
    this.#changed(lb);
  }

  /** `replace_load_balancer_members`: one configuration change; names reappearing keep their ids. */
  replaceMembers(loadBalancerId: string, backendId: string, members: Input<typeof MemberInput>[]): MemberState[] {
    const lb = this.#changeable(loadBalancerId);
    const backend = this.backend(lb, backendId);
    const names = new Set<string>();
    const next = members.map((member, index) => {
      if (names.has(member.name)) throw badRequest(`field members.${index}.name: ${member.name} appears twice`);
      names.add(member.name);
      const address = checkMemberAddress(this.#world, lb, {
        address: member.address,
        where: `field members.${index}.address`,
      });
      const existing = backend.members.find((m) => m.name === member.name);
      return {
        id: existing?.id ?? this.#world.newId("mb").id,
        backend_id: backend.id,
        name: member.name,
        address,
        port: member.port,
        weight: member.weight ?? 100,
        enabled: member.enabled ?? true,
      };
    });
    const same = JSON.stringify(next) === JSON.stringify(backend.members);
    backend.members = next;
    if (!same) this.#changed(lb);
    return backend.members;
  }

  /** `create_load_balancer_member`: adds one member. */
  addMember(loadBalancerId: string, backendId: string, member: Input<typeof MemberInput>): MemberState {
    const lb = this.#changeable(loadBalancerId);
    const backend = this.backend(lb, backendId);
    if (backend.members.some((m) => m.name === member.name)) {
      throw conflict(`backend ${backend.name} already has a member named ${member.name}`);
    }
    if (backend.members.length >= 256) throw badRequest("a backend has at most 256 members");
    const created: MemberState = {
      id: this.#world.newId("mb").id,
      backend_id: backend.id,
      name: member.name,
      address: checkMemberAddress(this.#world, lb, { address: member.address, where: "field address" }),
      port: member.port,
      weight: member.weight ?? 100,
      enabled: member.enabled ?? true,
    };
    backend.members.push(created);
    this.#changed(lb);
    return created;
  }

  /** `update_load_balancer_member`: weight and enabled. */
  updateMember(
    loadBalancerId: string,
    backendId: string,
    memberId: string,
    body: { weight?: number; enabled?: boolean },
  ): MemberState {
    const lb = this.#changeable(loadBalancerId);
    const member = this.backend(lb, backendId).members.find((m) => m.id === memberId);
    if (!member) throw notFound("member", memberId);
    if (body.weight !== undefined) member.weight = body.weight;
    if (body.enabled !== undefined) member.enabled = body.enabled;
    this.#changed(lb);
    return member;
  }

  /** `delete_load_balancer_member`. */
  deleteMember(loadBalancerId: string, backendId: string, memberId: string): void {
    const lb = this.#changeable(loadBalancerId);
    const backend = this.backend(lb, backendId);
    if (!backend.members.some((m) => m.id === memberId)) throw notFound("member", memberId);
    backend.members = backend.members.filter((m) => m.id !== memberId);
    this.#changed(lb);
  }

  /** The `LoadBalancer` document; list items come without nodes, frontends and backends. */
  document(lb: LoadBalancerState, full: boolean): Record<string, unknown> {
    return loadBalancerDocument(lb, { full, zones: this.#world.zones });
  }
}
