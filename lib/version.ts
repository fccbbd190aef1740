/**
 * The release version of this project, from its one source: `version` in `deno.json`. The binary's `--version`, the
 * `User-Agent`, the chart's `version`/`appVersion`, the image tag and the release artifact names all take it (a test
 * checks that they agree).
 *
 * @module
 */
import denoJson from "../deno.json" with { type: "json" };

/** The release version as tags and `--version` show it: `v` + the semantic version in `deno.json`, e.g. `v0.2.0`. */
export const VERSION = `v${denoJson.version}`;

/** The program name, used in `--version`, the `User-Agent` and as the event source component. */
export const PROGRAM = "ankra-cloud-ccm";

/** The `User-Agent` header value sent to the Ankra Cloud API: `ankra-cloud-ccm/<version>`. */
export const USER_AGENT = `${PROGRAM}/${VERSION}`;
