/**
 * `ankra-cloud-ccm simulator`: runs the local Ankra Cloud API simulator.
 *
 * @module
 */

/** Runs the simulator command line; returns the exit code. */
export function runSimulatorCommand(_args: string[]): Promise<number> {
  console.error("ankra-cloud-ccm: the simulator command is not built yet");
  return Promise.resolve(2);
}
