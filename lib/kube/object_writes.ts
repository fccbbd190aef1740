/**
 * What every write module shares: where writes go (the API server, or in a dry run the report), and
 * optimistic-concurrency writes: read the object, compute a change, send it as a merge patch carrying the
 * resourceVersion, and on a conflict read again and retry (5 tries, growing jittered pauses).
 *
 * @module
 */
import { abortableSleep } from "../runtime/abort.ts";
import type { DryRunReport, PlannedAction } from "../runtime/dry_run.ts";
import type { KubeClient } from "./client.ts";
import { isKubeError } from "./errors.ts";

/** Where writes go: the API server, or (in a dry run) the report. */
export interface KubeWriteTarget {
  /** Writes go to it only outside a dry run; reads (such as `/version`) always do. */
  kube: KubeClient;
  /** Set in a dry run: writes are described there and never sent. */
  dryRun?: DryRunReport;
}

/** In a dry run, describes `action` in the report and returns true (the caller sends nothing); false otherwise. */
export function describedInDryRun(target: KubeWriteTarget, action: PlannedAction): boolean {
  if (!target.dryRun) return false;
  target.dryRun.would(action);
  return true;
}

/** Computes a merge patch (without metadata.resourceVersion) from the current object, or nothing to do. */
export type ObjectChange<T> = (current: T) => Record<string, unknown> | undefined;

/**
 * Applies `change` at `path`; false when there was nothing to change or the object is gone. `known` is the object as
 * the caller's cache has it (with its resourceVersion): the first attempt uses it instead of a read, and a conflict
 * (the cache was behind) falls back to reading.
 */
export async function updateObject<T extends { metadata?: { resourceVersion?: string } }>(
  kube: KubeClient,
  path: string,
  change: ObjectChange<T>,
  known?: T,
): Promise<boolean> {
  for (let attempt = 1;; attempt++) {
    let current: T;
    if (attempt === 1 && known?.metadata?.resourceVersion) current = known;
    else {
      try {
        current = await kube.get<T>(path);
      } catch (cause) {
        if (isKubeError(cause, "not_found")) return false;
        throw cause;
      }
    }
    const patch = change(current);
    if (!patch) return false;
    const metadata = {
      ...(patch.metadata as Record<string, unknown> ?? {}),
      resourceVersion: current.metadata?.resourceVersion,
    };
    try {
      await kube.send("PATCH", path, { patch: "merge", body: { ...patch, metadata } });
      return true;
    } catch (cause) {
      if (isKubeError(cause, "conflict") && attempt < 5) {
        await abortableSleep(50 * attempt * (1 + Math.random()));
        continue;
      }
      if (isKubeError(cause, "not_found")) return false;
      throw cause;
    }
  }
}
