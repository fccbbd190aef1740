/**
 * One copy of a string many objects repeat, whatever the number of copies decoded or built: V8 keeps one internalized
 * copy of every property name, weakly (it goes once nothing holds it), so a string used as a name comes back as that
 * copy. A decoded document or a message built afresh holds a copy of its own; a thousand Services told the same
 * thing keep one.
 *
 * @module
 */

/** The one kept copy of `value` (equal to it). */
export function sharedString(value: string): string {
  return Object.keys({ [value]: 0 })[0];
}
