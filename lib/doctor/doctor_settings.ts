/**
 * What the doctor's checks read of the controller's configuration ({@linkcode DoctorSettings}), taken from a
 * validated `Config` once ({@linkcode doctorSettings}), so every check is a function of plain values.
 *
 * @module
 */
import type { Config } from "../config/config.ts";
import type { ServingMode } from "../provider/service/annotations.ts";
import type { ReservedRange } from "../provider/service/reserved_ports.ts";
import type { ServerLabelSelector } from "../provider/node/server_labels.ts";
import type { HighAvailabilityMode } from "../provider/service/service_plan.ts";

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
  /** `--cluster-name`. */
  clusterName: string;
  /** `--default-load-balancer-mode`; undefined: load-balancer. */
  defaultLoadBalancerMode?: ServingMode;
  /** `--load-balancer-class`: which Services the controller serves besides class-less ones. */
  loadBalancerClass?: string;
  /** `--require-load-balancer-class`. */
  requireLoadBalancerClass?: boolean;
  /** `--node-address-reserved-ports`, parsed; undefined: not checked. */
  nodeAddressReservedPorts?: readonly ReservedRange[];
  /** `--node-labels-from-server`; undefined: not set (no server label is copied, the check is left out). */
  nodeLabelsFromServer?: ServerLabelSelector;
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
    clusterName: config.clusterName,
    defaultLoadBalancerMode: config.defaultLoadBalancerMode,
    loadBalancerClass: config.loadBalancerClass,
    requireLoadBalancerClass: config.requireLoadBalancerClass,
    nodeAddressReservedPorts: config.nodeAddressReservedPorts,
    nodeLabelsFromServer: config.nodeLabelsFromServer,
  };
}
