/**
 * How a Service is served: by an Ankra load balancer (or an edge), or on its nodes' own public addresses
 * (`node_address_plan.ts`). The class {@linkcode NODE_ADDRESSES_CLASS} decides first, then the Service's
 * `load-balancer.ankra.cloud/mode` annotation, then `--default-load-balancer-mode`. Pure.
 *
 * @module
 */
import { NODE_ADDRESSES_CLASS } from "../../ankra_names.ts";
import type { SlimService } from "../../kube/slim.ts";
import type { ServingMode } from "./annotations.ts";

/** The Service's mode: the node-address class, else its `mode` annotation, else `defaultMode`. */
export function servingMode(
  service: Pick<SlimService, "loadBalancerClass">,
  annotated: ServingMode | undefined,
  defaultMode: ServingMode,
): ServingMode {
  if (service.loadBalancerClass === NODE_ADDRESSES_CLASS) return "node-addresses";
  return annotated ?? defaultMode;
}
