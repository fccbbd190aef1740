/**
 * Writes docs/annotations.md from the annotation table in lib/provider/service/annotations.ts:
 *
 *     deno run --allow-write scripts/annotation_docs.ts
 *
 * @module
 */
import { annotationTable } from "../lib/provider/service/annotations.ts";

/** The whole document. */
export function annotationDocument(): string {
  return [
    "# Service annotations",
    "",
    "Set on a Service of `type: LoadBalancer`. Values are trimmed; an empty value counts as not set. An invalid value",
    "gets a Warning event `InvalidAnnotation` on the Service naming the annotation, the rule and the value, and nothing",
    'is created or changed until it is fixed. Settings marked "when it is created" cannot change an existing load',
    "balancer: a change gets a Warning event `ImmutableSetting` (recreate the Service to apply it).",
    "",
    "Generated from the one table in `lib/provider/service/annotations.ts` (which also parses and validates them) by",
    "`deno run --allow-write scripts/annotation_docs.ts`; a test checks that this page matches the code.",
    "",
    annotationTable(),
    "",
    "`spec.sessionAffinity: ClientIP` selects `balance: source` unless the `balance` annotation says otherwise.",
    "",
    "`spec.externalTrafficPolicy: Local` needs no annotation: the members are the nodes holding a ready endpoint of",
    "the Service (every node while none is ready). `spec.loadBalancerSourceRanges` is not enforced (Warning",
    "`UnsupportedSetting`).",
    "",
  ].join("\n");
}

if (import.meta.main) {
  await Deno.writeTextFile(new URL("../docs/annotations.md", import.meta.url), annotationDocument());
}
