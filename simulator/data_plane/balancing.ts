/**
 * Which member a new connection goes to, per backend `balance`, over the members that may take it (enabled, up,
 * weight above 0 — the caller filters):
 *
 * - `roundrobin`: smooth weighted round robin — over any run of connections each member's share follows its weight,
 *   interleaved (weights 3 and 1 give a, a, b, a, …), as HAProxy's weighted round robin does;
 * - `leastconn`: the fewest active connections per unit of weight; ties go to the member picked longest ago;
 * - `source`: a hash of the client address over the members' weights — the same address reaches the same member
 *   while the set of members that may take connections stays the same (HAProxy's map-based hashing).
 *
 * The memory of a backend (round-robin credits, pick order) is kept by the caller between picks. Pure functions.
 *
 * @module
 */

/** A member that may take a new connection. */
export interface Candidate {
  /** The member's data-plane `key` (`owner|backend|member|address|port`), which the memory is keyed by. */
  id: string;
  /** Weight, 1–256. */
  weight: number;
  /** Connections open to it now. */
  active: number;
}

/** What a backend remembers between picks. */
export interface BalancerMemory {
  /** Smooth round-robin credit per member. */
  credit: Map<string, number>;
  /** The pick number at which each member was last picked. */
  lastPicked: Map<string, number>;
  /** Picks so far. */
  picks: number;
}

/** A backend's fresh memory. */
export function newBalancerMemory(): BalancerMemory {
  return { credit: new Map(), lastPicked: new Map(), picks: 0 };
}

/** The member for a new connection from `clientAddress`, or undefined when no candidate may take it. */
export function pickMember(
  balance: "roundrobin" | "leastconn" | "source",
  candidates: Candidate[],
  options: { memory: BalancerMemory; clientAddress: string },
): string | undefined {
  const usable = candidates.filter((c) => c.weight > 0);
  if (usable.length === 0) return undefined;
  const { memory } = options;
  let chosen: Candidate;
  if (balance === "source") chosen = bySource(usable, options.clientAddress);
  else if (balance === "leastconn") chosen = byLeastConnections(usable, memory);
  else chosen = byRoundRobin(usable, memory);
  memory.picks++;
  memory.lastPicked.set(chosen.id, memory.picks);
  return chosen.id;
}

function byRoundRobin(candidates: Candidate[], memory: BalancerMemory): Candidate {
  const ids = new Set(candidates.map((c) => c.id));
  for (const id of memory.credit.keys()) if (!ids.has(id)) memory.credit.delete(id);
  let total = 0;
  let best: Candidate | undefined;
  let bestCredit = -Infinity;
  for (const candidate of candidates) {
    const credit = (memory.credit.get(candidate.id) ?? 0) + candidate.weight;
    memory.credit.set(candidate.id, credit);
    total += candidate.weight;
    if (credit > bestCredit) {
      best = candidate;
      bestCredit = credit;
    }
  }
  memory.credit.set(best!.id, bestCredit - total);
  return best!;
}

function byLeastConnections(candidates: Candidate[], memory: BalancerMemory): Candidate {
  let best = candidates[0];
  for (const candidate of candidates.slice(1)) {
    const load = candidate.active / candidate.weight;
    const bestLoad = best.active / best.weight;
    const older = (memory.lastPicked.get(candidate.id) ?? 0) < (memory.lastPicked.get(best.id) ?? 0);
    if (load < bestLoad || (load === bestLoad && older)) best = candidate;
  }
  return best;
}

function bySource(candidates: Candidate[], clientAddress: string): Candidate {
  const sorted = [...candidates].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const total = sorted.reduce((sum, c) => sum + c.weight, 0);
  let slot = fnv1a(clientAddress) % total;
  for (const candidate of sorted) {
    if (slot < candidate.weight) return candidate;
    slot -= candidate.weight;
  }
  return sorted[sorted.length - 1];
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
