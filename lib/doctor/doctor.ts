/**
 * `ankra-cloud-ccm doctor`: the preflight checklist (being built; see the README for its state).
 *
 * @module
 */
import type { Command } from "../config.ts";

/** Runs the doctor; returns the exit code. */
export function runDoctor(_command: Extract<Command, { kind: "doctor" }>): Promise<number> {
  console.error("ankra-cloud-ccm doctor: not available in this build yet");
  return Promise.resolve(1);
}
