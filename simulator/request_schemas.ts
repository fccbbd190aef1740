/**
 * The API's request body rules as strict valibot schemas (`additionalProperties: false`: unknown fields are a
 * 400). A failed parse becomes one problem detail naming the field and the rule.
 *
 * @module
 */
import * as v from "valibot";
import { badRequest, type ProblemError } from "./problem.ts";

/** Sub-resource name rule: 1–32 characters, lower-case letters, digits and inner dashes. */
export const RESOURCE_NAME = /^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/;
const LABEL_KEY = /^[A-Za-z0-9]([A-Za-z0-9._/-]{0,61}[A-Za-z0-9])?$/;
const PRINTABLE = /^[\x20-\x7e\u00a0-\uffff]*$/;

const resourceName = v.pipe(v.string(), v.regex(RESOURCE_NAME, "must match ^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$"));
const port = v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1), v.maxValue(65535));
const weight = v.pipe(v.number(), v.integer("must be an integer"), v.minValue(0), v.maxValue(256));

/** `Labels`: at most 32; keys 1–63 characters; values at most 255 printable characters. */
export const LabelsInput = v.pipe(
  v.record(
    v.pipe(v.string(), v.regex(LABEL_KEY, "label keys are 1-63 letters, digits, '.', '_', '/', '-'")),
    v.pipe(v.string(), v.maxLength(255), v.regex(PRINTABLE, "label values must be printable")),
  ),
  v.check((labels) => Object.keys(labels).length <= 32, "at most 32 labels"),
);

/** `LoadBalancerHealthCheckInput`. */
export const HealthCheckInput = v.strictObject({
  type: v.optional(v.picklist(["tcp", "http", "none"])),
  path: v.optional(v.pipe(v.string(), v.regex(/^\/[A-Za-z0-9._~/?&=%-]{0,254}$/, "must be a path starting with /"))),
  expected_status: v.optional(
    v.pipe(v.string(), v.regex(/^[1-5][0-9]{2}(-[1-5][0-9]{2})?$/, "must be like 200 or 200-399")),
  ),
  interval_seconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(300))),
  rise: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10))),
  fall: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10))),
});

const balance = v.picklist(["roundrobin", "leastconn", "source"]);

/** `create_load_balancer` body. */
export const CreateLoadBalancerBody = v.strictObject({
  zone: v.pipe(v.string(), v.minLength(1)),
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  network_id: v.string(),
  labels: v.optional(LabelsInput),
  high_availability: v.optional(v.boolean()),
  public_ipv4: v.optional(v.boolean()),
  zone_redundant: v.optional(v.boolean()),
});

/** `update_load_balancer` body. */
export const UpdateLoadBalancerBody = v.strictObject({
  name: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
  labels: v.optional(LabelsInput),
});

/** `create_load_balancer_backend` body. */
export const CreateBackendBody = v.strictObject({
  name: resourceName,
  mode: v.picklist(["tcp", "http"]),
  balance: v.optional(balance),
  health_check_path: v.optional(v.string()),
  health_check: v.optional(HealthCheckInput),
});

/** `update_load_balancer_backend` body. */
export const UpdateBackendBody = v.strictObject({
  balance: v.optional(balance),
  health_check: v.optional(HealthCheckInput),
});

/** `create_load_balancer_frontend` body. */
export const CreateFrontendBody = v.strictObject({
  name: resourceName,
  port,
  backend_id: v.pipe(v.string(), v.minLength(1)),
  tls: v.optional(v.boolean()),
  certificate_ids: v.optional(v.pipe(v.array(v.string()), v.maxLength(16))),
  redirect_to_https: v.optional(v.boolean()),
});

/** One member of a backend. */
export const MemberInput = v.strictObject({
  name: resourceName,
  address: v.pipe(v.string(), v.minLength(1)),
  port,
  weight: v.optional(weight),
  enabled: v.optional(v.boolean()),
});

/** `replace_load_balancer_members` body. */
export const ReplaceMembersBody = v.strictObject({
  members: v.pipe(v.array(MemberInput), v.maxLength(256, "at most 256 members")),
});

/** `update_load_balancer_member` body. */
export const UpdateMemberBody = v.strictObject({
  weight: v.optional(weight),
  enabled: v.optional(v.boolean()),
});

/** `EdgeMemberInput`. */
export const EdgeMemberInput = v.strictObject({
  name: resourceName,
  frontend_port: port,
  address: v.pipe(v.string(), v.minLength(1)),
  port,
  weight: v.optional(weight),
  enabled: v.optional(v.boolean()),
});

const edgeRoles = v.pipe(
  v.array(v.picklist(["bastion", "nat_gateway", "load_balancer"])),
  v.minLength(1, "at least one role"),
  v.maxLength(3),
  v.check((roles) => new Set(roles).size === roles.length, "roles must not repeat"),
);

/** `create_edge` body. */
export const CreateEdgeBody = v.strictObject({
  network_id: v.pipe(v.string(), v.minLength(1)),
  name: v.optional(v.pipe(v.string(), v.maxLength(64))),
  roles: edgeRoles,
  placement: v.optional(v.picklist(["separate", "combined"])),
  plan: v.optional(v.string()),
  ssh_key_ids: v.optional(v.array(v.string())),
  members: v.optional(v.array(EdgeMemberInput)),
});

/** `update_edge` body. */
export const UpdateEdgeBody = v.strictObject({
  name: v.optional(v.pipe(v.string(), v.maxLength(64))),
  roles: v.optional(edgeRoles),
  ssh_key_ids: v.optional(v.array(v.string())),
  members: v.optional(v.array(EdgeMemberInput)),
});

/** Parses `body` with `schema` or returns a 400 naming the first offending field. */
export function parseBody<S extends v.GenericSchema>(
  schema: S,
  body: unknown,
): { ok: true; value: v.InferOutput<S> } | { ok: false; error: ProblemError } {
  if (body === undefined) return { ok: false, error: badRequest("a JSON request body is required") };
  const parsed = v.safeParse(schema, body);
  if (parsed.success) return { ok: true, value: parsed.output };
  const issue = parsed.issues[0];
  const path = v.getDotPath(issue);
  const where = path ? `field ${path}` : "the body";
  let rule = issue.message;
  if (issue.type === "strict_object" && issue.expected === "never") rule = "is not a known field";
  else if (issue.received === "undefined" && path) rule = "is required";
  return { ok: false, error: badRequest(`${where}: ${rule}`) };
}
