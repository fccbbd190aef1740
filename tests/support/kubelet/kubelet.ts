/**
 * What a kubelet would do with a Deployment's pod, for a control plane that has no kubelet: read the pod template from
 * the API server, fetch the Secrets its volumes and environment name, mint a ServiceAccount token (TokenRequest) for
 * the projected `kube-api-access` volume, lay every volume out as files, and run the container's command line and
 * environment in the image (tests/support/image/test_image.ts) with those files bound read-only at their mount paths,
 * `KUBERNETES_SERVICE_HOST`/`_PORT` pointing at the test API server and the host's network (the chart uses
 * `hostNetwork: true`).
 *
 * Only what the chart uses is supported (env `value` and `secretKeyRef`, `secret` volumes with or without `items`);
 * anything else throws, so a chart change that needs more is noticed.
 *
 * @module
 */
import type { BindMount } from "../../../scripts/image/unpack_image.ts";
import type { SharedControlPlane } from "../control_plane/control_plane.ts";
import { type RunningContainer, startInImage } from "../image/image_runtime.ts";
import { kubeOk } from "../http/kube_http.ts";
import type { UnpackedTestImage } from "../image/test_image.ts";

/** Where a kubelet mounts the ServiceAccount token, CA and namespace. */
export const SERVICE_ACCOUNT_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount";

/** The parts of a container spec this module reads. */
export interface ContainerSpec {
  /** Name. */
  name: string;
  /** Image reference. */
  image: string;
  /** Replaces the image's entrypoint. */
  command?: string[];
  /** Replaces the image's Cmd. */
  args?: string[];
  /** Environment. */
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } & Record<string, unknown>;
  }[];
  /** Volume mounts. */
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[];
  /** The container's security context. */
  securityContext?: { readOnlyRootFilesystem?: boolean; runAsUser?: number };
}

/** The parts of a Deployment this module reads. */
export interface DeploymentDoc {
  /** Name and namespace. */
  metadata: { name: string; namespace: string };
  /** The pod template. */
  spec: {
    replicas?: number;
    template: {
      spec: {
        serviceAccountName?: string;
        automountServiceAccountToken?: boolean;
        hostNetwork?: boolean;
        securityContext?: { runAsUser?: number; runAsGroup?: number; runAsNonRoot?: boolean };
        containers: ContainerSpec[];
        volumes?: {
          name: string;
          secret?: { secretName: string; items?: { key: string; path: string }[]; optional?: boolean };
        }[];
      };
    };
  };
}

/** A pod laid out on disk, ready to run. */
export interface PreparedPod {
  /** The Deployment it came from, as the API server stored it. */
  deployment: DeploymentDoc;
  /** Its one container. */
  container: ContainerSpec;
  /** The container's environment as the kubelet builds it (without the image's), service variables included. */
  env: Record<string, string>;
  /** Host directories bound at the container's mount paths (the ServiceAccount mount included). */
  mounts: BindMount[];
  /** The host file behind a path inside the container, when a mount covers it. */
  hostPath(containerPath: string): string | undefined;
}

type SecretDoc = { data?: Record<string, string> };

function decodeBase64(data: string): string {
  return new TextDecoder().decode(Uint8Array.from(atob(data), (c) => c.charCodeAt(0)));
}

async function writeReadable(path: string, text: string): Promise<void> {
  await Deno.writeTextFile(path, text);
  await Deno.chmod(path, 0o644);
}

/** Reads the Deployment `namespace/name` from the API server. */
export function getDeployment(plane: SharedControlPlane, namespace: string, name: string): Promise<DeploymentDoc> {
  return kubeOk<DeploymentDoc>(plane, "GET", `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`);
}

/**
 * Lays out the pod of `deployment` under `dir` as a kubelet would before starting it: Secret volumes, the
 * ServiceAccount token (one hour), CA and namespace, and the container's environment.
 *
 * @throws on a setting this module does not support, or a Secret or key that is missing (the kubelet would not
 * start the pod either).
 */
export async function preparePod(
  plane: SharedControlPlane,
  deployment: DeploymentDoc,
  dir: string,
): Promise<PreparedPod> {
  const pod = deployment.spec.template.spec;
  const namespace = deployment.metadata.namespace;
  if (pod.containers.length !== 1) throw new Error(`expected one container, found ${pod.containers.length}`);
  const container = pod.containers[0];
  await Deno.chmod(dir, 0o755);
  const secrets = new Map<string, SecretDoc>();
  const secret = async (name: string): Promise<SecretDoc> => {
    if (!secrets.has(name)) {
      secrets.set(name, await kubeOk<SecretDoc>(plane, "GET", `/api/v1/namespaces/${namespace}/secrets/${name}`));
    }
    return secrets.get(name)!;
  };

  const volumeDirs = new Map<string, string>();
  for (const volume of pod.volumes ?? []) {
    if (!volume.secret) throw new Error(`volume ${volume.name}: only secret volumes are supported here`);
    const data = (await secret(volume.secret.secretName)).data ?? {};
    const volumeDir = `${dir}/volumes/${volume.name}`;
    await Deno.mkdir(volumeDir, { recursive: true, mode: 0o755 });
    const items = volume.secret.items ?? Object.keys(data).map((key) => ({ key, path: key }));
    for (const item of items) {
      if (data[item.key] === undefined) {
        throw new Error(`volume ${volume.name}: Secret ${volume.secret.secretName} has no key ${item.key}`);
      }
      await writeReadable(`${volumeDir}/${item.path}`, decodeBase64(data[item.key]));
    }
    volumeDirs.set(volume.name, volumeDir);
  }

  const mounts: BindMount[] = [];
  for (const mount of container.volumeMounts ?? []) {
    if (mount.subPath) throw new Error(`volumeMount ${mount.name}: subPath is not supported here`);
    const source = volumeDirs.get(mount.name);
    if (!source) throw new Error(`volumeMount ${mount.name} names no volume of the pod`);
    mounts.push({ source, destination: mount.mountPath });
  }

  if (pod.automountServiceAccountToken !== false) {
    const account = pod.serviceAccountName ?? "default";
    const token = (await kubeOk<{ status: { token: string } }>(
      plane,
      "POST",
      `/api/v1/namespaces/${namespace}/serviceaccounts/${account}/token`,
      { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } } },
    )).status.token;
    const saDir = `${dir}/serviceaccount`;
    await Deno.mkdir(saDir, { mode: 0o755 });
    await writeReadable(`${saDir}/token`, token);
    await writeReadable(`${saDir}/ca.crt`, plane.caCert);
    await writeReadable(`${saDir}/namespace`, namespace);
    mounts.push({ source: saDir, destination: SERVICE_ACCOUNT_MOUNT });
  }

  const apiServer = new URL(plane.url);
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    if (variable.valueFrom && !ref) throw new Error(`env ${variable.name}: only secretKeyRef is supported here`);
    if (ref) {
      const value = (await secret(ref.name)).data?.[ref.key];
      if (value === undefined) throw new Error(`env ${variable.name}: Secret ${ref.name} has no key ${ref.key}`);
      env[variable.name] = decodeBase64(value);
    } else {
      env[variable.name] = variable.value ?? "";
    }
  }
  // The service variables every pod gets for the `kubernetes` Service; here it is the test API server itself.
  env.KUBERNETES_SERVICE_HOST = apiServer.hostname;
  env.KUBERNETES_SERVICE_PORT = apiServer.port;

  return {
    deployment,
    container,
    env,
    mounts,
    hostPath(containerPath) {
      const mount = mounts.find((m) => containerPath.startsWith(`${m.destination}/`));
      return mount && `${mount.source}${containerPath.slice(mount.destination.length)}`;
    },
  };
}

/**
 * The environment the container's process sees: the image's (`Env` of its configuration), then the pod's over it,
 * as container runtimes merge them.
 */
export function containerEnv(imageEnv: readonly string[], pod: PreparedPod): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of imageEnv) {
    const equals = entry.indexOf("=");
    env[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  return { ...env, ...pod.env };
}

/**
 * Starts the pod's container in `image`: the container's `command` (else the image's entrypoint) and `args`, the
 * merged environment with `overrides` on top, the mounts read-only, the image's user, a read-only root.
 */
export function runPod(
  image: UnpackedTestImage,
  pod: PreparedPod,
  overrides: Record<string, string> = {},
): Promise<RunningContainer> {
  const env = { ...containerEnv(image.config.config.Env ?? [], pod), ...overrides };
  const config = {
    ...image.config,
    config: { ...image.config.config, Env: Object.entries(env).map(([k, v]) => `${k}=${v}`) },
  };
  return startInImage(image.runtime, image.bundle, config, {
    entrypoint: pod.container.command,
    args: pod.container.args ?? image.config.config.Cmd ?? [],
    mounts: pod.mounts,
  });
}
