/**
 * The Ankra Cloud API calls a plan asks for, as data: operation, target and the exact request body. Plans are lists
 * of these; the controller's executor sends them in order (or, in a dry run, only describes them). A call may refer
 * to a load balancer or backend made by an earlier call of the same plan, by name, since its id is not known yet.
 *
 * @module
 */
import type { EdgeMemberInput } from "../../cloud/edges.ts";
import type {
  CreateBackendInput,
  CreateFrontendInput,
  CreateLoadBalancerInput,
  MemberInput,
  UpdateBackendInput,
} from "../../cloud/load_balancers.ts";

/** A load balancer: its id, or the one the plan's `create_load_balancer` makes. */
export type LoadBalancerRef = { id: string } | { created: true };

/** A backend: its id, or the one of this name the plan creates. */
export type BackendRef = { id: string } | { createdName: string };

/** One API call with its body. */
export type CloudCall =
  | { operation: "create_load_balancer"; body: CreateLoadBalancerInput }
  | {
    operation: "update_load_balancer";
    loadBalancer: LoadBalancerRef;
    body: { labels: Record<string, string>; name?: string };
  }
  | { operation: "delete_load_balancer"; loadBalancer: LoadBalancerRef }
  | { operation: "create_load_balancer_backend"; loadBalancer: LoadBalancerRef; body: CreateBackendInput }
  | {
    operation: "update_load_balancer_backend";
    loadBalancer: LoadBalancerRef;
    backend: BackendRef;
    name: string;
    body: UpdateBackendInput;
  }
  | { operation: "delete_load_balancer_backend"; loadBalancer: LoadBalancerRef; backend: BackendRef; name: string }
  | {
    operation: "replace_load_balancer_members";
    loadBalancer: LoadBalancerRef;
    backend: BackendRef;
    name: string;
    body: { members: MemberInput[] };
  }
  | {
    operation: "create_load_balancer_frontend";
    loadBalancer: LoadBalancerRef;
    backend: BackendRef;
    body: Omit<CreateFrontendInput, "backend_id">;
  }
  | { operation: "delete_load_balancer_frontend"; loadBalancer: LoadBalancerRef; frontendId: string; name: string }
  | { operation: "update_edge"; edgeId: string; body: { members: EdgeMemberInput[] } };

function refText(ref: LoadBalancerRef): string {
  return "id" in ref ? ref.id : "(new)";
}

/** One line saying what a call does, for logs and the dry run: `create backend tcp-80 on lb-1 (mode tcp)`. */
export function describeCall(call: CloudCall): string {
  switch (call.operation) {
    case "create_load_balancer":
      return `create load balancer ${call.body.name} in zone ${call.body.zone} on network ${call.body.network_id} ` +
        `(${call.body.high_availability === false ? "single VM" : "HA pair"}, public IPv4 ${call.body.public_ipv4})`;
    case "update_load_balancer":
      return `${call.body.name ? `rename load balancer ${refText(call.loadBalancer)} to ${call.body.name} and ` : ""}` +
        `label ${call.body.name ? "it" : `load balancer ${refText(call.loadBalancer)}`} ${
          JSON.stringify(call.body.labels)
        }`;
    case "delete_load_balancer":
      return `delete load balancer ${refText(call.loadBalancer)}`;
    case "create_load_balancer_backend":
      return `create backend ${call.body.name} on load balancer ${refText(call.loadBalancer)} (mode ` +
        `${call.body.mode}, balance ${call.body.balance ?? "default"}, health check ${
          call.body.health_check?.type ?? "default"
        })`;
    case "update_load_balancer_backend":
      return `update backend ${call.name} of load balancer ${refText(call.loadBalancer)} to ${
        JSON.stringify(call.body)
      }`;
    case "delete_load_balancer_backend":
      return `delete backend ${call.name} of load balancer ${refText(call.loadBalancer)}`;
    case "replace_load_balancer_members":
      return `set the members of backend ${call.name} of load balancer ${refText(call.loadBalancer)} to ${
        call.body.members.length ? call.body.members.map((m) => `${m.address}:${m.port}`).join(", ") : "none"
      }`;
    case "create_load_balancer_frontend":
      return `create frontend ${call.body.name} on port ${call.body.port} of load balancer ${
        refText(call.loadBalancer)
      }${call.body.tls ? " (TLS)" : ""}${call.body.redirect_to_https ? " (redirect to HTTPS)" : ""}`;
    case "delete_load_balancer_frontend":
      return `delete frontend ${call.name} of load balancer ${refText(call.loadBalancer)}`;
    case "update_edge":
      return `set the members of edge ${call.edgeId} to ${call.body.members.length} member(s)`;
  }
}
