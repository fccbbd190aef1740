/**
 * A member's health as HAProxy counts it, for the API's `rise` and `fall`: a counter from 0 to `rise + fall - 1`,
 * the member up from `rise`. A check that passes adds one (reaching `rise` brings a down member up, at the top); a
 * check that fails takes one off while above `rise`, and at `rise` takes the member down (to 0). So a member that is
 * up leaves after `fall` failed checks in a row and, once down, returns after `rise` passed checks in a row.
 *
 * A new member starts up at `rise` — available at once, as HAProxy's default `init-state up` — so its first failed
 * check takes it out. With check type `none` a member is never checked and always up.
 *
 * Also the `expected_status` rule of `http` checks (`200` or a range `200-399`). Pure functions.
 *
 * @module
 */

/** The thresholds of a check. */
export interface RiseFall {
  /** Passed checks in a row that bring a down member back (1–10). */
  rise: number;
  /** Failed checks in a row that take an up member out (1–10). */
  fall: number;
}

/** A member's health. */
export interface Health {
  /** HAProxy's counter, 0 to rise + fall - 1. */
  counter: number;
  /** True while the member takes new connections (if enabled). */
  up: boolean;
}

/** The health of a new member: up, one failed check from down. */
export function initialHealth(check: RiseFall): Health {
  return { counter: check.rise, up: true };
}

/** The health after one check. Thresholds changed since the last check are applied (the counter is clamped). */
export function afterCheck(health: Health, passed: boolean, check: RiseFall): Health {
  const top = check.rise + check.fall - 1;
  let counter = Math.min(health.counter, top);
  if (passed) {
    if (counter < top) counter = counter + 1 >= check.rise ? top : counter + 1;
  } else if (counter > 0) {
    counter = counter - 1 < check.rise ? 0 : counter - 1;
  }
  return { counter, up: counter >= check.rise };
}

/** True when HTTP status `status` is what `expected` (`200` or `200-399`) asks for. */
export function statusExpected(status: number, expected: string): boolean {
  const match = /^([1-5][0-9]{2})(?:-([1-5][0-9]{2}))?$/.exec(expected);
  if (!match) return false;
  const low = Number(match[1]);
  const high = match[2] ? Number(match[2]) : low;
  return status >= low && status <= high;
}
