/**
 * The settings the doctor checks with. A good configuration is used whole. A bad one (`command.problem`, e.g. no
 * token) is the first finding, and the doctor then still runs the Kubernetes checks when the configuration is
 * good without the Ankra Cloud settings: it resolves the command line again with every `ANKRA_CLOUD_*` variable
 * and `--ankra-cloud-token-file` removed (and a placeholder token, never sent anywhere), and skips only the checks
 * that need the Ankra Cloud API.
 *
 * @module
 */
import { type Command, type Config, resolveCommand } from "../config.ts";
import type { HighAvailabilityMode } from "../provider/service_plan.ts";

/** What the checks need from the configuration. */
export interface DoctorSettings {
  /** Ankra Cloud API base URL. */
  apiUrl: string;
  /** ANKRA_CLOUD_CA_BUNDLE, when set. */
  caBundlePath?: string;
  /** ANKRA_CLOUD_NETWORK_ID. */
  networkId?: string;
  /** ANKRA_CLOUD_ZONE. */
  zone?: string;
  /** ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY. */
  highAvailability: HighAvailabilityMode;
  /** `--leader-elect`. */
  leaderElect: boolean;
  /** `--leader-elect-resource-name`. */
  leaseName: string;
  /** `--leader-elect-resource-namespace`. */
  leaseNamespace: string;
  /** `--metrics-authorization=delegated`. */
  delegatedAuthorization: boolean;
}

/** The checks' settings from a configuration. */
export function doctorSettings(config: Config): DoctorSettings {
  return {
    apiUrl: config.cloud.apiUrl,
    caBundlePath: config.cloud.caBundlePath,
    networkId: config.cloud.networkId,
    zone: config.cloud.zone,
    highAvailability: config.cloud.loadBalancerHighAvailability,
    leaderElect: config.leaderElect,
    leaseName: config.leaderElectResourceName,
    leaseNamespace: config.leaderElectResourceNamespace,
    delegatedAuthorization: config.metricsAuthorization === "delegated",
  };
}

/** What the doctor works with. */
export interface DoctorSetup {
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
export function doctorSetup(
  command: Extract<Command, { kind: "doctor" }>,
  sources?: { args: string[]; env: Record<string, string | undefined> },
): DoctorSetup {
  if (command.config) return { config: command.config, cloudUsable: true, warnings: command.config.warnings };
  const fallback = sources ? configWithoutCloudSettings(sources.args, sources.env) : undefined;
  return { config: fallback, cloudUsable: false, problem: command.problem, warnings: [] };
}
