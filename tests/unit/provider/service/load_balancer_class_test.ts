/**
 * `--require-load-balancer-class`: which Services this controller serves, and what the command line accepts.
 */
import assert from "node:assert/strict";
import { resolveCommand } from "../../../../lib/config/command.ts";
import type { Config } from "../../../../lib/config/config.ts";
import { ConfigError } from "../../../../lib/config_error.ts";
import type { SlimService } from "../../../../lib/kube/slim.ts";
import { FINALIZER, needsCleanup, wantsLoadBalancer } from "../../../../lib/provider/service/service_plan.ts";

const CLASS = "ankra.cloud/load-balancer";
const TOKEN = "act_c2VjcmV0LXRva2VuLXZhbHVlLWZvci10ZXN0cw";

function service(overrides: Partial<SlimService> = {}): SlimService {
  return {
    uid: "u-1",
    namespace: "shop",
    name: "web",
    type: "LoadBalancer",
    annotations: {},
    finalizers: [],
    ports: [{ port: 80, protocol: "TCP", nodePort: 30080 }],
    ipFamilies: [],
    loadBalancerSourceRanges: [],
    ingress: [],
    ...overrides,
  } as SlimService;
}

function parse(args: string[]): Config {
  const command = resolveCommand(args, { env: { ANKRA_CLOUD_TOKEN: TOKEN }, readFile: () => "" });
  assert.equal(command.kind, "run");
  return (command as { config: Config }).config;
}

Deno.test("with the class required, only Services of that class are served; class-less ones are another's", () => {
  const rule = { requireClass: true };
  assert.ok(wantsLoadBalancer(service({ loadBalancerClass: CLASS }), CLASS, rule));
  assert.ok(!wantsLoadBalancer(service(), CLASS, rule), "a class-less Service is left alone");
  assert.ok(!wantsLoadBalancer(service({ loadBalancerClass: "other.io/lb" }), CLASS, rule));
  assert.ok(!wantsLoadBalancer(service({ type: "ClusterIP", loadBalancerClass: CLASS }), CLASS, rule));
  assert.ok(!needsCleanup(service(), CLASS, rule), "a class-less Service without the finalizer: nothing to clean up");
  assert.ok(
    needsCleanup(service({ finalizers: [FINALIZER] }), CLASS, rule),
    "one this controller served before the class was required gives its load balancer up",
  );
});

Deno.test("without the flag, class-less Services are served as before", () => {
  assert.ok(wantsLoadBalancer(service(), CLASS));
  assert.ok(wantsLoadBalancer(service(), CLASS, { requireClass: false }));
  assert.ok(wantsLoadBalancer(service({ loadBalancerClass: CLASS }), CLASS));
  assert.ok(wantsLoadBalancer(service(), undefined, { requireClass: true }), "no class configured: nothing to require");
});

Deno.test("--require-load-balancer-class is read with --load-balancer-class and refused without it", () => {
  assert.equal(parse([]).requireLoadBalancerClass, false);
  const config = parse([`--load-balancer-class=${CLASS}`, "--require-load-balancer-class"]);
  assert.equal(config.requireLoadBalancerClass, true);
  assert.equal(config.loadBalancerClass, CLASS);
  assert.throws(
    () => resolveCommand(["--require-load-balancer-class"], { env: { ANKRA_CLOUD_TOKEN: TOKEN }, readFile: () => "" }),
    (cause: unknown) =>
      cause instanceof ConfigError &&
      /^--require-load-balancer-class needs --load-balancer-class: name the class/.test(cause.message),
  );
});
