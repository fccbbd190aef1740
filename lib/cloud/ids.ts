/**
 * The shapes of the Ankra Cloud ids and zone names that this controller puts into URL paths. The API declares every
 * path parameter only as a string. These shapes are the controller's own contract: letters, digits, `.`, `_` and `-`,
 * starting with a letter or a digit (the shape `ANKRA_CLOUD_NETWORK_ID` and `certificate-ids` always had). They fit the
 * simulator's ids (`lb-00000a`), UUIDs and zone names (`de-fsn1`), and they can never be `.`, `..`, empty, or hold a
 * `/`, `%`, `?` or `#`. So a value
 * that matches is always exactly one path segment, and `new URL` cannot fold it into another resource's path.
 *
 * Annotations (`lib/provider/service/annotations.ts`), settings (`lib/config/options.ts`) and `pathId` (the last line of
 * defence, in `cloud_api.ts`) all check against these declarations.
 *
 * @module
 */

/** An Ankra Cloud id (server, network, edge, load balancer, certificate, …): 1–128 characters. */
export const ANKRA_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** {@linkcode ANKRA_ID} in words, for messages and documentation. */
export const ANKRA_ID_WORDS = "1-128 letters, digits, '.', '_' or '-', starting with a letter or digit";

/** A zone name such as `de-fsn1`: lower-case letters, digits and inner `-`, 1–64 characters. */
export const ZONE_NAME = /^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/;

/** True when `value` has the shape of an Ankra Cloud id ({@linkcode ANKRA_ID}). */
export function isAnkraId(value: string): boolean {
  return ANKRA_ID.test(value);
}
