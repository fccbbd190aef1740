/**
 * `ankra-cloud-ccm doctor`: the preflight checklist a user runs before installing the controller and whenever
 * something is wrong. It reads the configuration, the Ankra Cloud API and the Kubernetes API (`gather_facts.ts`),
 * turns what it read into findings (`checklist.ts`) and prints them as a checklist or, with `--output=json`, as one
 * JSON document (`report.ts`). It changes nothing in Kubernetes or Ankra Cloud; its only write-shaped request is the
 * operate probe the API must refuse (`operate_probe.ts`), sent only when the setup needs a token that may operate
 * (`setup_needs.ts`: a setup that serves every Service on node addresses does not). See docs/doctor.md.
 *
 * A good configuration is used whole. A bad one (`command.problem`, e.g. no token) is the first finding, and the
 * doctor then still runs the Kubernetes checks when the configuration is good without the Ankra Cloud settings: it
 * resolves the command line again with every `ANKRA_CLOUD_*` variable and `--ankra-cloud-token-file` removed (and a
 * placeholder token, never sent anywhere), and skips only the checks that need the Ankra Cloud API.
 *
 * Exit codes: 0 when nothing failed (warnings and skips do not fail), 1 when a check failed or the doctor itself
 * broke; a bad command line exits 2 before the doctor runs.
 *
 * @module
 */
import { AnkraCloudClient } from "../cloud/client.ts";
import { type Command, resolveCommand } from "../config/command.ts";
import type { Config } from "../config/config.ts";
import { kubeConnection } from "../kube/kubeconfig.ts";
import { causeChain } from "../error_text.ts";
import { KubeClient } from "../kube/client.ts";
import type { KubeConnectionConfig } from "../kube/kubeconfig.ts";
import { configureLogging, redact } from "../log.ts";
import { PROGRAM, VERSION } from "../version.ts";
import { checklist } from "./checklist.ts";
import { doctorSettings } from "./doctor_settings.ts";
import { gatherFacts } from "./gather_facts.ts";
import { type DoctorReport, doctorReport, exitCode, formatJson, formatText } from "./report.ts";

/** What the doctor works with. */
interface DoctorSetup {
  /** The configuration, when there is one (whole, or without the Ankra Cloud settings). */
  config?: Config;
  /** True when `config` holds usable Ankra Cloud settings (false for the fallback). */
  cloudUsable: boolean;
  /** The configuration problem, when there is one. */
  problem?: string;
  /** The configuration's remarks. */
  warnings: string[];
}

/** The placeholder token of the fallback configuration; it is never sent (no Ankra Cloud check runs then). */
const PLACEHOLDER_TOKEN = "act_doctor-placeholder-never-sent";

/** The command line without `--ankra-cloud-token-file` (in any of its spellings, with its value). */
export function withoutTokenFileFlag(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const match = /^--?ankra[-_]cloud[-_]token[-_]file(=.*)?$/.exec(args[i]);
    if (!match) {
      out.push(args[i]);
      continue;
    }
    if (match[1] === undefined) i++;
  }
  return out;
}

/** The configuration of `args` with every Ankra Cloud setting removed; undefined when it is still bad. */
export function configWithoutCloudSettings(
  args: string[],
  env: Record<string, string | undefined>,
): Config | undefined {
  const cleanEnv: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(env)) if (!key.startsWith("ANKRA_CLOUD_")) cleanEnv[key] = value;
  cleanEnv.ANKRA_CLOUD_TOKEN = PLACEHOLDER_TOKEN;
  try {
    const command = resolveCommand(withoutTokenFileFlag(args), { env: cleanEnv });
    return command.kind === "doctor" ? command.config : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The doctor's setup from its command; `sources` (the whole command line and the environment) allow the fallback
 * when the configuration is bad.
 */
function doctorSetup(
  command: Extract<Command, { kind: "doctor" }>,
  sources?: { args: string[]; env: Record<string, string | undefined> },
): DoctorSetup {
  if (command.config) return { config: command.config, cloudUsable: true, warnings: command.config.warnings };
  const fallback = sources ? configWithoutCloudSettings(sources.args, sources.env) : undefined;
  return { config: fallback, cloudUsable: false, problem: command.problem, warnings: [] };
}

/** Options of {@linkcode runDoctor} and {@linkcode diagnose}. */
interface DoctorOptions {
  /** The whole command line (`doctor …`), to run the Kubernetes checks when the Ankra Cloud settings are bad. */
  args?: string[];
  /** The environment, with `args`. */
  env?: Record<string, string | undefined>;
  /** The current time (Lease renewals are compared with it). */
  now?: () => Date;
  /** Where the output goes (default standard output). */
  write?: (text: string) => void;
}

/** The doctor's report and the line naming what it checked. */
interface Diagnosis {
  /** The report. */
  report: DoctorReport;
  /** `ankra-cloud-ccm <version> doctor: …` naming the API and the cluster. */
  heading: string;
}

/** Retries of the doctor's Ankra Cloud requests: one more attempt, at most 10 s in all. */
const DOCTOR_RETRY = { maxAttempts: 2, baseDelayMs: 500, maxDelayMs: 2_000, maxElapsedMs: 10_000 };

/** Runs every check and returns the report (nothing is printed). */
export async function diagnose(
  command: Extract<Command, { kind: "doctor" }>,
  options: DoctorOptions = {},
): Promise<Diagnosis> {
  const setup = doctorSetup(command, options.args ? { args: options.args, env: options.env ?? {} } : undefined);
  const config = setup.config;
  const settings = config ? doctorSettings(config) : undefined;
  let connection: KubeConnectionConfig | undefined;
  let clusterProblem: string | undefined;
  if (config) {
    try {
      connection = await kubeConnection(config);
    } catch (cause) {
      clusterProblem = redact(cause instanceof Error ? cause.message : String(cause));
    }
  }
  let cloudClient: AnkraCloudClient | undefined;
  let cloudSetupProblem: string | undefined;
  if (config && setup.cloudUsable) {
    try {
      cloudClient = new AnkraCloudClient(config.cloud, { retry: DOCTOR_RETRY });
    } catch (cause) {
      cloudSetupProblem = `the TLS settings cannot be used: ${redact(causeChain(cause))}`;
    }
  }
  let kubeClient: KubeClient | undefined;
  if (config && connection) {
    try {
      kubeClient = new KubeClient(connection, { qps: config.kubeApiQps, burst: config.kubeApiBurst });
    } catch (cause) {
      clusterProblem = `${connection.source}: the certificates cannot be used: ${redact(causeChain(cause))}`;
      connection = undefined;
    }
  }
  try {
    const facts = settings
      ? await gatherFacts(settings, {
        cloud: cloudClient
          ? { client: cloudClient, caBundle: config!.cloud.caBundle, timeoutMs: config!.cloud.requestTimeoutMs }
          : undefined,
        cluster: kubeClient && connection ? { client: kubeClient, connection } : undefined,
      })
      : {};
    if (cloudSetupProblem && settings) {
      const url = settings.apiUrl;
      facts.cloud = { reachability: { ok: false, url, kind: "tls", message: cloudSetupProblem }, capabilities: {} };
    }
    const findings = checklist({
      problem: setup.problem,
      warnings: setup.warnings,
      settings,
      cloud: facts.cloud,
      cloudSkipped: config && !setup.cloudUsable ? "the Ankra Cloud settings are not usable (see above)" : undefined,
      cluster: facts.cluster,
      clusterProblem,
      now: options.now?.() ?? new Date(),
    });
    const where = [
      setup.cloudUsable && settings ? `Ankra Cloud API ${settings.apiUrl}` : undefined,
      connection ? `Kubernetes ${connection.server}` : undefined,
    ].filter(Boolean);
    return {
      report: doctorReport(VERSION, findings),
      heading: `${PROGRAM} ${VERSION} doctor${where.length > 0 ? `: ${where.join(", ")}` : ""}`,
    };
  } finally {
    cloudClient?.close();
    kubeClient?.close();
  }
}

function writeStdout(text: string): void {
  const bytes = new TextEncoder().encode(text);
  for (let written = 0; written < bytes.length;) written += Deno.stdout.writeSync(bytes.subarray(written));
}

/**
 * Runs the doctor, prints the checklist (or JSON) and returns the exit code: 0 when nothing failed, 1 otherwise.
 * Log lines are silenced: everything the doctor has to say is in its findings.
 */
export async function runDoctor(
  command: Extract<Command, { kind: "doctor" }>,
  options: DoctorOptions = {},
): Promise<number> {
  const write = options.write ?? writeStdout;
  configureLogging({ sink: () => {} });
  try {
    const { report, heading } = await diagnose(command, options);
    write(command.output === "json" ? formatJson(report) : formatText(report, heading));
    return exitCode(report);
  } catch (cause) {
    const message = cause instanceof Error ? (cause.stack ?? cause.message) : String(cause);
    console.error(`${PROGRAM} doctor: the doctor itself failed: ${redact(message)}`);
    return 1;
  }
}
