/**
 * The steps of one long real-node or real-cluster test, each building on the ones before: each prints how long it took;
 * the first that fails has its diagnostics printed (`onFailure`), and the steps after it are ignored with a printed
 * reason instead of failing on their own.
 *
 * @module
 */

/** Runs one step named `name`; resolves with whether it passed, as `t.step` does. */
export type OrderedStep = (name: string, body: () => Promise<void>) => Promise<boolean>;

/**
 * Steps of test `t` in order. `onFailure` runs once, with the failed step's name, before its error is thrown on: it
 * prints what a reader needs to see the cause (objects, logs). Should it throw, that is printed too, and the step still
 * fails with its own error.
 */
export function stepsInOrder(t: Deno.TestContext, onFailure: (step: string) => Promise<void>): OrderedStep {
  let failedStep: string | undefined;
  return (name, body) => {
    if (failedStep !== undefined) console.log(`ignored: "${name}", because the step "${failedStep}" failed`);
    return t.step({
      name,
      ignore: failedStep !== undefined,
      fn: async () => {
        const started = performance.now();
        try {
          await body();
        } catch (cause) {
          failedStep = name;
          await onFailure(name).catch((error) => console.error(`the diagnostics of "${name}" failed: ${error}`));
          throw cause;
        } finally {
          console.log(`${name}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
        }
      },
    });
  };
}
