/**
 * The version of this build, printed by `--version` and sent in the `User-Agent` of every Ankra Cloud request.
 * Kept equal to `version` in `deno.json` (a unit test checks it).
 */
export const VERSION = "0.1.0";

/** The program name, used in `--version`, the `User-Agent` and as the event source component. */
export const PROGRAM = "ankra-cloud-ccm";

/** The `User-Agent` header value sent to the Ankra Cloud API: `ankra-cloud-ccm/<version>`. */
export const USER_AGENT = `${PROGRAM}/${VERSION}`;
