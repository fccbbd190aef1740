/**
 * A slim LoadBalancer Service as the Service store keeps it, for unit tests of the pure rules.
 *
 * @module
 */
import type { SlimService } from "../../../lib/kube/slim.ts";
import type { LoadBalancerIntent, ServiceIntent } from "../../../lib/provider/service/service_plan.ts";

/** `shop/web`, type LoadBalancer, one TCP port 80 on node port 30080, IPv4, no annotations; `extra` overrides. */
export function slimService(extra: Partial<SlimService> = {}): SlimService {
  return {
    namespace: "shop",
    name: "web",
    uid: "u1",
    resourceVersion: "1",
    annotations: {},
    finalizers: [],
    type: "LoadBalancer",
    ports: [{ protocol: "TCP", port: 80, nodePort: 30080 }],
    ipFamilies: ["IPv4"],
    loadBalancerSourceRanges: [],
    ingress: [],
    ...extra,
  };
}

/** `intent` as a load balancer's (its members, ports and names), failing the test when it is of node-address mode. */
export function asLoadBalancer(intent: ServiceIntent): LoadBalancerIntent {
  if (intent.mode !== "load-balancer") throw new Error(`the intent is of mode ${intent.mode}, not load-balancer`);
  return intent;
}
