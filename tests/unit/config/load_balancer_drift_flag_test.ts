/** `--load-balancer-drift-period`: how often a load balancer is read again without a change. */
import assert from "node:assert/strict";
import { resolveCommand } from "../../../lib/config/command.ts";
import type { Config } from "../../../lib/config/config.ts";
import { ConfigError } from "../../../lib/config_error.ts";

function resolve(args: string[]): Config {
  const command = resolveCommand(args, {
    env: { ANKRA_CLOUD_TOKEN: "act_c2VjcmV0LXRva2VuLXZhbHVlLWZvci10ZXN0cw" },
    readFile: (path) => {
      throw new Deno.errors.NotFound(path);
    },
  });
  assert.equal(command.kind, "run");
  return (command as { config: Config }).config;
}

Deno.test("the drift period is 10 minutes unless --load-balancer-drift-period says otherwise", () => {
  assert.equal(resolve([]).loadBalancerDriftPeriodMs, 600_000);
  assert.equal(resolve(["--load-balancer-drift-period=30s"]).loadBalancerDriftPeriodMs, 30_000);
  assert.equal(resolve(["--load-balancer-drift-period", "1h"]).loadBalancerDriftPeriodMs, 3_600_000);
});

Deno.test("a drift period that is not a duration, or shorter than a second, is refused naming the flag", () => {
  for (const value of ["soon", "0s", "500ms"]) {
    assert.throws(
      () => resolve([`--load-balancer-drift-period=${value}`]),
      (error: unknown) => error instanceof ConfigError && /--load-balancer-drift-period/.test(error.message),
      value,
    );
  }
});
