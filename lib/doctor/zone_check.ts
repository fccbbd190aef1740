/**
 * What each zone a load balancer may land in can hold: the zones of the matched nodes' servers and
 * ANKRA_CLOUD_ZONE. A zone with two compute nodes places an HA pair; with one, only a single VM (the API's
 * `reasons.load_balancer_ha` says why); with none, no load balancer at all. ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY
 * decides what is asked for: `auto` takes what the zone offers (a single VM is a warning: it has no failover),
 * `false` asks for single VMs (fine anywhere with compute), `true` asks for pairs (refused with 409 where the zone
 * cannot place one).
 *
 * @module
 */
import type { ZoneCapabilities } from "../cloud/client.ts";
import type { HighAvailabilityMode } from "../provider/service_plan.ts";
import type { Fetched } from "./facts.ts";
import { type CheckName, fail, type Finding, type FindingStatus, pass, skip, warn } from "./finding.ts";

/** The check of zone capabilities. */
export const ZONE_CAPABILITIES: CheckName = {
  id: "zone-capabilities",
  title: "Zones can hold load balancers (HA pair or single VM)",
};

/** A zone to check and why. */
export interface ZoneToCheck {
  /** Zone name. */
  name: string;
  /** Where it comes from. */
  source: "nodes" | "ANKRA_CLOUD_ZONE";
}

/** The zones to check: ANKRA_CLOUD_ZONE first, then the nodes' zones by name. */
export function zonesToCheck(nodeZones: Iterable<string>, configuredZone?: string): ZoneToCheck[] {
  const zones: ZoneToCheck[] = configuredZone ? [{ name: configuredZone, source: "ANKRA_CLOUD_ZONE" }] : [];
  for (const name of [...new Set(nodeZones)].sort()) {
    if (name && name !== configuredZone) zones.push({ name, source: "nodes" });
  }
  return zones;
}

interface ZoneVerdict {
  status: FindingStatus;
  text: string;
  fix?: string;
}

const RANK: Record<FindingStatus, number> = { pass: 0, skip: 1, warn: 2, fail: 3 };

function verdict(zone: ZoneToCheck, answer: Fetched<ZoneCapabilities> | undefined, mode: HighAvailabilityMode) {
  const name = zone.name;
  if (!answer) return { status: "skip", text: `${name}: not read` } satisfies ZoneVerdict;
  if (!answer.ok) {
    if (answer.failure.kind === "not_found" && zone.source === "ANKRA_CLOUD_ZONE") {
      return {
        status: "fail",
        text: `ANKRA_CLOUD_ZONE ${name} is not a zone of the account`,
        fix: "set ANKRA_CLOUD_ZONE to one of the account's zones (e.g. de-fsn1), or unset it to use the zone " +
          "most of a Service's nodes are in",
      } satisfies ZoneVerdict;
    }
    return {
      status: "warn",
      text: `${name}: capabilities unknown (${answer.failure.message}); the controller then assumes an HA pair`,
      fix: "run the doctor again; if it persists, set ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY=false to ask " +
        "for single VMs explicitly",
    } satisfies ZoneVerdict;
  }
  const capabilities = answer.value;
  const reasons = capabilities.reasons ?? {};
  if (!capabilities.features.compute) {
    return {
      status: "fail",
      text: `${name}: no load balancer can be placed (${reasons.compute ?? "the zone has no compute node"})`,
      fix: zone.source === "ANKRA_CLOUD_ZONE"
        ? "set ANKRA_CLOUD_ZONE to a zone with compute nodes"
        : `set ANKRA_CLOUD_ZONE (or the load-balancer.ankra.cloud/zone annotation) to a zone with compute nodes`,
    } satisfies ZoneVerdict;
  }
  if (capabilities.features.load_balancer_ha) {
    return {
      status: "pass",
      text: mode === "false" ? `${name}: single VM (as configured; a pair is possible)` : `${name}: HA pair`,
    } satisfies ZoneVerdict;
  }
  const why = reasons.load_balancer_ha ?? "the zone cannot place a pair";
  if (mode === "false") return { status: "pass", text: `${name}: single VM (as configured)` } satisfies ZoneVerdict;
  if (mode === "true") {
    return {
      status: "fail",
      text: `${name}: ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY=true asks for a pair, which the zone cannot ` +
        `place (${why}): creates there are refused`,
      fix: "set ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY=auto (a single VM where a pair is impossible) or " +
        "false, or place the load balancers in a zone with two compute nodes",
    } satisfies ZoneVerdict;
  }
  return {
    status: "warn",
    text: `${name}: single VM only, no failover (${why})`,
    fix: "a single-VM load balancer has no failover; for a pair the zone needs two compute nodes. To accept " +
      "single VMs, set ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY=false (this check then passes)",
  } satisfies ZoneVerdict;
}

/** The finding of zone capabilities: the worst zone decides the status; every zone is named. */
export function zoneCapabilitiesFinding(
  zones: ZoneToCheck[],
  capabilities: Record<string, Fetched<ZoneCapabilities>>,
  mode: HighAvailabilityMode,
): Finding {
  if (zones.length === 0) {
    return skip(ZONE_CAPABILITIES, "skipped: no zone is known (no node is matched and ANKRA_CLOUD_ZONE is unset)");
  }
  const verdicts: ZoneVerdict[] = zones.map((zone) => verdict(zone, capabilities[zone.name], mode));
  const worst = verdicts.reduce((a, b) => (RANK[b.status] > RANK[a.status] ? b : a));
  const result = verdicts.map((v) => v.text).join("; ");
  const fixes = [...new Set(verdicts.filter((v) => v.status === worst.status && v.fix).map((v) => v.fix!))];
  switch (worst.status) {
    case "fail":
      return fail(ZONE_CAPABILITIES, result, fixes.join("\n"));
    case "warn":
      return warn(ZONE_CAPABILITIES, result, fixes.join("\n"));
    case "skip":
      return skip(ZONE_CAPABILITIES, `skipped: ${result}`);
    default:
      return pass(ZONE_CAPABILITIES, result);
  }
}
