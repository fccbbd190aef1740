/**
 * `ankra-cloud-simulator`: the local Ankra Cloud API simulator as its own program, for tests, demos and users' CI.
 * It is never part of the controller's bundle or image (a test checks the bundle).
 *
 *     deno task simulator --token=act_local-token [--listen=127.0.0.1:8787] [--seed=world.json]
 *
 * @module
 */
import { runSimulatorCommand } from "./command.ts";

if (import.meta.main) Deno.exit(await runSimulatorCommand(Deno.args));
