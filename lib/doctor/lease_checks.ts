/**
 * Other controllers, seen through their leader-election Leases in `kube-system`:
 *
 * - `cloud-controller-manager`: the upstream cloud-controller-manager's default Lease (most providers' controllers);
 * - `k3s-cloud-controller-manager`: k3s's embedded cloud controller manager (k3s starts it with
 *   `--leader-elect-resource-name=k3s-cloud-controller-manager`; it runs while ServiceLB or k3s's cloud controller is
 *   enabled);
 * - this controller's own Lease (`--leader-elect-resource-name`, default `ankra-cloud-ccm`, in
 *   `--leader-elect-resource-namespace`): a holder renewing now means a controller already runs — fine while
 *   upgrading it, not when a second one is being installed.
 *
 * A Lease counts as held when it names a holder and its last renewal is newer than its duration (default 15 s)
 * plus {@linkcode CLOCK_SKEW_MS} for the difference between the holder's clock and this host's.
 *
 * @module
 */
import type { Fetched, LeaseFacts } from "./facts.ts";
import { type CheckName, type Finding, nameList, pass, skip, warn } from "./finding.ts";

/** The check of other cloud controllers. */
export const OTHER_CLOUD_CONTROLLER: CheckName = {
  id: "other-cloud-controller",
  title: "No other cloud controller holds a Lease",
};
/** The check of this controller's own Lease. */
export const LEADER_LEASE: CheckName = { id: "leader-lease", title: "Leader-election Lease not held" };

/** Namespace of the other cloud controllers' Leases. */
export const CLOUD_CONTROLLER_LEASE_NAMESPACE = "kube-system";
/** The upstream cloud-controller-manager's default Lease name. */
export const UPSTREAM_CLOUD_CONTROLLER_LEASE = "cloud-controller-manager";
/** k3s's embedded cloud controller manager's Lease name. */
export const K3S_CLOUD_CONTROLLER_LEASE = "k3s-cloud-controller-manager";

/** Allowance for the difference between the holder's clock and this host's, milliseconds. */
export const CLOCK_SKEW_MS = 10_000;

/** How long ago the Lease was last renewed (or acquired), milliseconds; undefined without a time. */
export function leaseAgeMs(lease: LeaseFacts, now: Date): number | undefined {
  const time = lease.renewTime ?? lease.acquireTime;
  if (!time) return undefined;
  const parsed = Date.parse(time);
  return Number.isNaN(parsed) ? undefined : now.getTime() - parsed;
}

/** True when the Lease has a holder renewing it (last renewal newer than its duration plus the clock skew). */
export function leaseHeld(lease: LeaseFacts, now: Date): boolean {
  if (!lease.holder) return false;
  const age = leaseAgeMs(lease, now);
  if (age === undefined) return false;
  return age <= (lease.durationSeconds ?? 15) * 1000 + CLOCK_SKEW_MS;
}

function heldText(lease: LeaseFacts, now: Date): string {
  const seconds = Math.max(0, Math.round((leaseAgeMs(lease, now) ?? 0) / 1000));
  return `${lease.namespace}/${lease.name} is held by ${lease.holder} (renewed ${seconds} s ago)`;
}

/** The finding of other cloud controllers, from the upstream and the k3s Leases (`null`: no such Lease). */
export function otherCloudControllerFinding(
  leases: { upstream: Fetched<LeaseFacts | null>; k3s: Fetched<LeaseFacts | null> },
  now: Date,
): Finding {
  const unreadable = [leases.upstream, leases.k3s].filter((l) => !l.ok);
  const held = [leases.upstream, leases.k3s].flatMap((
    l,
  ) => (l.ok && l.value && leaseHeld(l.value, now) ? [l.value] : []));
  if (held.length > 0) {
    const fixes = held.map((lease) =>
      lease.name === K3S_CLOUD_CONTROLLER_LEASE
        ? "k3s's cloud controller manager runs (ServiceLB or its node controllers): restart every k3s server with " +
          "--disable-cloud-controller and --disable=servicelb"
        : "another cloud controller runs: remove it (its Deployment or DaemonSet in kube-system) before installing " +
          "this one; fine only while it is an older ankra-cloud-ccm being replaced"
    );
    return warn(
      OTHER_CLOUD_CONTROLLER,
      `${nameList(held.map((lease) => heldText(lease, now)))}: two cloud controllers would both initialise nodes ` +
        "and answer LoadBalancer Services",
      fixes.join("\n"),
    );
  }
  if (unreadable.length > 0) {
    const failure = (unreadable[0] as { ok: false; failure: { message: string } }).failure;
    return skip(OTHER_CLOUD_CONTROLLER, `skipped: the Leases in kube-system cannot be read: ${failure.message}`);
  }
  return pass(
    OTHER_CLOUD_CONTROLLER,
    `neither ${CLOUD_CONTROLLER_LEASE_NAMESPACE}/${UPSTREAM_CLOUD_CONTROLLER_LEASE} nor ` +
      `${CLOUD_CONTROLLER_LEASE_NAMESPACE}/${K3S_CLOUD_CONTROLLER_LEASE} is held`,
  );
}

/** The finding of this controller's own Lease `namespace/name`. */
export function leaderLeaseFinding(
  lease: Fetched<LeaseFacts | null>,
  where: { namespace: string; name: string },
  now: Date,
): Finding {
  const name = `${where.namespace}/${where.name}`;
  if (!lease.ok) return skip(LEADER_LEASE, `skipped: Lease ${name} cannot be read: ${lease.failure.message}`);
  if (!lease.value) return pass(LEADER_LEASE, `Lease ${name} does not exist yet`);
  if (!leaseHeld(lease.value, now)) {
    return pass(
      LEADER_LEASE,
      `Lease ${name} is not held now${lease.value.holder ? ` (last holder ${lease.value.holder})` : ""}`,
    );
  }
  return warn(
    LEADER_LEASE,
    `${heldText(lease.value, now)}: a controller with this Lease already runs`,
    "fine while upgrading or replacing that controller (the new one takes over when it stops); for a second, " +
      "separate installation in this cluster, remove one of them: two controllers must not manage the same nodes " +
      "and Services",
  );
}
