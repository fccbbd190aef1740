/**
 * The `netns` data plane's setup: refuse to run outside a network namespace of its own (it changes routes, and the
 * host's must never change: its namespace must differ from PID 1's or, where PID 1's cannot be read, hold no interface
 * but `lo`, as one fresh from `unshare --net` does), then make every address of the simulated cloud local there —
 * `local` routes on `lo` (AnyIP) for the public ranges (the seed's `public_ipv4_ranges`, 2001:db8::/32) and each
 * network's CIDR and ULA /64, and `ip_nonlocal_bind`. Needs root in the namespace and `ip` (iproute2).
 *
 * @module
 */
import type { NetworkState } from "../world_state.ts";

/** The public IPv6 range the simulator allocates from (each server and load balancer a /64 of it). */
const PUBLIC_IPV6_RANGE = "2001:db8::/32";

/** The prefixes to make local for `networks`: each one's CIDR and ULA prefix. */
function networkPrefixes(networks: Iterable<Pick<NetworkState, "cidr" | "ula_prefix">>): string[] {
  return [...networks].flatMap((n) => [n.cidr, n.ula_prefix]);
}

const OWN_NAMESPACE_ONLY = "--data-plane=netns changes routes and runs only inside a network namespace of its own, " +
  "never the host's: start it with `unshare --net …` or `ip netns exec <name> …`, or use --data-plane=loopback";

/**
 * Why this process may not change routes, or undefined when its network namespace is its own: `own` and `init` are
 * the namespace links of this process and of PID 1 (an `Error` when unreadable), `interfaces` the names in
 * `/proc/self/net/dev`.
 */
export function namespaceProblem(
  own: string | Error,
  init: string | Error,
  interfaces: string[] | Error,
): string | undefined {
  if (own instanceof Error) {
    return `--data-plane=netns cannot tell its network namespace (${own.message}): it needs root and /proc`;
  }
  if (!(init instanceof Error)) return own === init ? OWN_NAMESPACE_ONLY : undefined;
  if (interfaces instanceof Error) {
    return `--data-plane=netns cannot list its interfaces (${interfaces.message}): it needs /proc/self/net/dev`;
  }
  const others = interfaces.filter((name) => name !== "lo");
  return others.length === 0 ? undefined : `${OWN_NAMESPACE_ONLY} (PID 1's namespace cannot be read here, and this ` +
    `one has interfaces besides lo: ${others.join(", ")})`;
}

/** The interface names of `/proc/self/net/dev`. */
export function interfaceNames(netDev: string): string[] {
  return netDev.split("\n").slice(2).map((line) => line.split(":")[0].trim()).filter(Boolean);
}

/** The local routes of one `netns` data plane. */
export class NetnsRoutes {
  readonly #covered = new Set<string>();

  /** Checks the namespace, brings `lo` up, allows non-local binds and makes the public ranges local. */
  async prepare(publicIpv4Ranges: readonly string[]): Promise<void> {
    const tried = <T>(read: () => T): T | Error => {
      try {
        return read();
      } catch (cause) {
        return cause as Error;
      }
    };
    const problem = namespaceProblem(
      tried(() => Deno.readLinkSync("/proc/self/ns/net")),
      tried(() => Deno.readLinkSync("/proc/1/ns/net")),
      tried(() => interfaceNames(Deno.readTextFileSync("/proc/self/net/dev"))),
    );
    if (problem) throw new Error(problem);
    await ip(["link", "set", "lo", "up"]);
    for (const family of ["ipv4", "ipv6"]) {
      await Deno.writeTextFile(`/proc/sys/net/${family}/ip_nonlocal_bind`, "1").catch((cause) => {
        throw new Error(
          `--data-plane=netns could not set net.${family}.ip_nonlocal_bind (${(cause as Error).message}): ` +
            "run it as root with permission to write /proc/sys/net",
        );
      });
    }
    await this.#local([...publicIpv4Ranges, PUBLIC_IPV6_RANGE]);
  }

  /** Makes the prefixes of `networks` local (once each). */
  async cover(networks: Iterable<NetworkState>): Promise<void> {
    await this.#local(networkPrefixes(networks));
  }

  async #local(prefixes: string[]): Promise<void> {
    for (const prefix of prefixes) {
      if (this.#covered.has(prefix)) continue;
      await ip([...(prefix.includes(":") ? ["-6"] : []), "route", "replace", "local", prefix, "dev", "lo"]);
      this.#covered.add(prefix);
    }
  }
}

async function ip(args: string[]): Promise<void> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("ip", { args, stdout: "null", stderr: "piped" }).output();
  } catch (cause) {
    throw new Error(
      `--data-plane=netns could not run \`ip ${args.join(" ")}\` (${(cause as Error).message}): it needs iproute2 ` +
        "and permission to run it (--allow-run=ip)",
    );
  }
  if (!output.success) {
    throw new Error(`\`ip ${args.join(" ")}\` failed: ${new TextDecoder().decode(output.stderr).trim()}`);
  }
}
