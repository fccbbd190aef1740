/**
 * How a Service is served: by an Ankra load balancer (or an edge), or on its nodes' own public addresses
 * (`node_address_plan.ts`). The class {@linkcode NODE_ADDRESSES_CLASS} decides first, then the Service's
 * `load-balancer.ankra.cloud/mode` annotation, then `--default-load-balancer-mode` (`load-balancer` when unset). The
 * one rule: the service controller's pass, its node-address step and the doctor all ask {@linkcode servingModeOf}
 * (or, with annotations already parsed, {@linkcode servingMode}). Pure.
 *
 * @module
 */
import { NODE_ADDRESSES_CLASS } from "../../ankra_names.ts";
import type { SlimService } from "../../kube/slim.ts";
import { parseAnnotations, type ServingMode } from "./annotations.ts";

/** The mode of a Service that neither has the node-address class nor says: `--default-load-balancer-mode`'s default. */
const DEFAULT_SERVING_MODE: ServingMode = "load-balancer";

/**
 * The Service's mode: the node-address class, else its `mode` annotation (`annotated`, already parsed), else
 * `defaultMode` (`--default-load-balancer-mode`; undefined: `load-balancer`).
 */
export function servingMode(
  service: Pick<SlimService, "loadBalancerClass">,
  annotated: ServingMode | undefined,
  defaultMode: ServingMode | undefined,
): ServingMode {
  if (service.loadBalancerClass === NODE_ADDRESSES_CLASS) return "node-addresses";
  return annotated ?? defaultMode ?? DEFAULT_SERVING_MODE;
}

/**
 * The Service's mode from the Service alone (its annotations parsed here; invalid annotations say nothing about the
 * mode, so the class or the default decides), under `--default-load-balancer-mode` `defaultMode`.
 */
export function servingModeOf(
  service: Pick<SlimService, "loadBalancerClass" | "annotations" | "sessionAffinity">,
  defaultMode: ServingMode | undefined,
): ServingMode {
  const parsed = parseAnnotations(service.annotations, { sessionAffinity: service.sessionAffinity });
  return servingMode(service, parsed.ok ? parsed.settings.mode : undefined, defaultMode);
}
