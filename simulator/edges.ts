/**
 * Edges in the simulator. A `combined` edge runs every role on one VM `edge-<id>` whose `load_balancer` role has
 * a member list; a `separate` edge has one VM per role (its load balancer role is a managed load balancer not listed
 * here). Every change is an `edge.sync` operation finishing after a delay; the stored configuration changes at once.
 * A new edge is `creating` without addresses until its first sync finishes.
 *
 * Decisions where the API is silent: `members` sent to a `separate` edge is a 409; member names are unique within
 * the list (400); several members may share a `frontend_port` (they form one pool).
 *
 * @module
 */
import type * as v from "valibot";
import { parseIp } from "../lib/ip_address.ts";
import { badRequest, conflict, notFound, ProblemError } from "./problem.ts";
import type { CreateEdgeBody, EdgeMemberInput, UpdateEdgeBody } from "./request_schemas.ts";
import { memberAddressAllowed } from "./member_addresses.ts";
import type { World } from "./world.ts";
import type { OperationState } from "./world_state.ts";
import { operationDocument, zoneHasSeparateEdges } from "./world_documents.ts";

/** An edge member as stored. */
export interface EdgeMemberState {
  id: string;
  name: string;
  frontend_port: number;
  address: string;
  port: number;
  weight: number;
  enabled: boolean;
}

/** An edge VM. */
export interface EdgeMachineState {
  id: string;
  name: string;
  roles: string[];
  public_ipv4: string | null;
  public_ipv6: string | null;
  public_ipv6_prefix: string | null;
  private_ipv4: string | null;
  private_ipv6: string | null;
}

/** An edge as stored. */
export interface EdgeState {
  id: string;
  seq: number;
  zone: string;
  name: string;
  network_id: string;
  roles: string[];
  placement: "separate" | "combined";
  plan: string;
  state: "creating" | "running" | "error" | "deleting";
  ssh_key_ids: string[];
  configuration_generation: number;
  machines: EdgeMachineState[];
  members: EdgeMemberState[];
  active_operation: OperationState | null;
  created_at: string;
}

type Input<S extends v.GenericSchema> = v.InferOutput<S>;

/** Edge operations on a {@linkcode World}. */
export class Edges {
  readonly #world: World;
  readonly items = new Map<string, EdgeState>();

  /** Creates the service; member addresses follow the load balancers' address rule (`member_addresses.ts`). */
  constructor(world: World) {
    this.#world = world;
  }

  /** The edge or a 404. */
  get(edgeId: string): EdgeState {
    const edge = this.items.get(edgeId);
    if (!edge) throw notFound("edge", edgeId);
    return edge;
  }

  /** Edges newest first. */
  list(): EdgeState[] {
    return [...this.items.values()].sort((a, b) => b.seq - a.seq);
  }

  #members(networkId: string, members: Input<typeof EdgeMemberInput>[]): EdgeMemberState[] {
    const names = new Set<string>();
    return members.map((member, index) => {
      if (names.has(member.name)) throw badRequest(`field members.${index}.name: ${member.name} appears twice`);
      names.add(member.name);
      const ip = parseIp(member.address);
      if (!ip || !memberAddressAllowed(this.#world, { networkId, ip })) {
        throw badRequest(
          `field members.${index}.address: ${member.address} is not a host of the edge's network, an address in ` +
            "its ULA prefix, nor a global IPv6 address",
        );
      }
      return {
        id: `${member.name}`,
        name: member.name,
        frontend_port: member.frontend_port,
        address: ip.text,
        port: member.port,
        weight: member.weight ?? 100,
        enabled: member.enabled ?? true,
      };
    });
  }

  #sync(edge: EdgeState, kind = "edge.sync"): OperationState {
    edge.configuration_generation++;
    const operation = this.#world.startOperation(kind, {
      delayMs: this.#world.settings.edge_sync_delay_ms,
      edgeId: edge.id,
      onFinish: () => {
        if (edge.state === "creating") {
          for (const machine of edge.machines) this.#address(edge, machine);
          edge.state = "running";
        }
        if (edge.active_operation === operation) edge.active_operation = null;
      },
    });
    edge.active_operation = operation;
    return operation;
  }

  #address(edge: EdgeState, machine: EdgeMachineState): void {
    const world = this.#world;
    const network = world.network(edge.network_id);
    const v6 = world.allocatePublicIpv6();
    machine.public_ipv6 = v6.address;
    machine.public_ipv6_prefix = v6.prefix;
    machine.public_ipv4 = world.allocatePublicIpv4();
    const offset = 2 + edge.machines.indexOf(machine);
    const host = `${network.gateway.split(".").slice(0, 3).join(".")}.${offset}`;
    machine.private_ipv4 = host;
    machine.private_ipv6 = world.address6For(network, host);
  }

  /** `create_edge`; `running` (with addresses) at once when `ready`, as seeded edges are. */
  create(body: Input<typeof CreateEdgeBody>, options: { id?: string; ready?: boolean } = {}) {
    const world = this.#world;
    if (!world.settings.email_verified) {
      throw new ProblemError(403, "verify your email address before creating billable resources", {
        reason: "email_unverified",
      });
    }
    if (world.settings.payment !== "ok") {
      throw new ProblemError(402, "the account may not create billable resources now", {
        reason: world.settings.payment,
      });
    }
    const network = world.network(body.network_id);
    const zone = world.zone(network.zone);
    const separateAllowed = zoneHasSeparateEdges(zone);
    if (body.placement === "separate" && !separateAllowed) {
      throw conflict(`zone ${zone.name} cannot place edges on separate VMs: separate_edges is missing`);
    }
    const placement = body.placement ?? (separateAllowed ? "separate" : "combined");
    if (body.members?.length && (placement !== "combined" || !body.roles.includes("load_balancer"))) {
      throw conflict("members belong to the load_balancer role of a combined edge");
    }
    const { id: generated, seq } = world.newId("edge");
    const id = options.id ?? generated;
    if (this.items.has(id)) throw conflict(`edge ${id} already exists`);
    const machineFor = (name: string, roles: string[]): EdgeMachineState => ({
      id: `${id}-${name}`,
      name,
      roles,
      public_ipv4: null,
      public_ipv6: null,
      public_ipv6_prefix: null,
      private_ipv4: null,
      private_ipv6: null,
    });
    const roles = [...body.roles];
    const machines = placement === "combined"
      ? [machineFor(`edge-${id}`, roles)]
      : roles.filter((r) => r !== "load_balancer").map((role) => machineFor(`edge-${id}-${role}`, [role]));
    const edge: EdgeState = {
      id,
      seq,
      zone: zone.name,
      name: body.name ?? `${network.name} edge`,
      network_id: network.id,
      roles,
      placement,
      plan: body.plan ?? "starter-1c-1g",
      state: "creating",
      ssh_key_ids: body.ssh_key_ids ?? [],
      configuration_generation: 0,
      machines,
      members: this.#members(network.id, body.members ?? []),
      active_operation: null,
      created_at: world.isoNow(),
    };
    this.items.set(id, edge);
    const operation = this.#sync(edge);
    if (options.ready) {
      operation.finishAt = world.now();
      world.tick();
    }
    return { edge, operation };
  }

  /** `update_edge`: every change is one `edge.sync`; `members` replaces the whole list. */
  update(edgeId: string, body: Input<typeof UpdateEdgeBody>): { edge: EdgeState; operation: OperationState } {
    const edge = this.get(edgeId);
    if (edge.state === "deleting") throw conflict(`edge ${edge.id} is being deleted`);
    if (body.roles !== undefined) {
      if (edge.placement !== "combined") throw conflict("roles can be changed only on a combined edge");
      edge.roles = [...body.roles];
      edge.machines[0].roles = [...body.roles];
    }
    if (body.members !== undefined) {
      if (edge.placement !== "combined") {
        throw conflict(
          "a separate edge's load_balancer role is a managed load balancer: configure it through /v1/load-balancers",
        );
      }
      if (!edge.roles.includes("load_balancer")) throw conflict(`edge ${edge.id} has no load_balancer role`);
      edge.members = this.#members(edge.network_id, body.members);
    }
    if (body.name !== undefined) edge.name = body.name;
    if (body.ssh_key_ids !== undefined) edge.ssh_key_ids = [...body.ssh_key_ids];
    return { edge, operation: this.#sync(edge) };
  }

  /** `delete_edge`. */
  delete(edgeId: string): OperationState {
    const edge = this.get(edgeId);
    if (edge.state === "deleting" && edge.active_operation) return edge.active_operation;
    edge.state = "deleting";
    const operation = this.#world.startOperation("edge.delete", {
      delayMs: this.#world.settings.edge_sync_delay_ms,
      edgeId: edge.id,
      onFinish: () => this.items.delete(edge.id),
    });
    edge.active_operation = operation;
    return operation;
  }

  /** The `Edge` document; list items come without machines and members. */
  document(edge: EdgeState, full: boolean): Record<string, unknown> {
    const lbMachine = edge.machines.find((m) => m.roles.includes("load_balancer"));
    const doc: Record<string, unknown> = {
      id: edge.id,
      zone: edge.zone,
      name: edge.name,
      network_id: edge.network_id,
      roles: edge.roles,
      placement: edge.placement,
      plan: edge.plan,
      state: edge.state,
      production_recommended: edge.placement === "separate",
      production_recommendation_reason: edge.placement === "combined"
        ? "every role shares one VM: one failure domain"
        : null,
      public_ipv4: edge.placement === "combined" ? (edge.machines[0]?.public_ipv4 ?? null) : null,
      bastion_jump_host: edge.roles.includes("bastion") && edge.machines[0]?.public_ipv4
        ? `admin@${edge.machines[0].public_ipv4}`
        : null,
      dns64_address: edge.roles.includes("nat_gateway") ? (lbMachine?.private_ipv6 ?? null) : null,
      load_balancer_id: edge.placement === "separate" && edge.roles.includes("load_balancer")
        ? `lb-managed-${edge.id}`
        : null,
      ssh_key_count: edge.ssh_key_ids.length,
      configuration_generation: edge.configuration_generation,
      active_operation: edge.active_operation && edge.active_operation.status === "running"
        ? operationDocument(edge.active_operation)
        : null,
      created_at: edge.created_at,
    };
    if (full) {
      doc.machines = edge.machines.map((m) => ({
        ...m,
        state: edge.state === "running" ? "running" : edge.state,
        is_healthy: edge.state === "running",
        health_detail: "",
      }));
      doc.members = edge.members.map((m) => ({ ...m }));
    }
    return doc;
  }
}
