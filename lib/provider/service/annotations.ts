/**
 * The Service annotations this controller reads (prefix `load-balancer.ankra.cloud/`), each declared once in
 * {@linkcode ANNOTATIONS}: its documentation row, how its value is read into the settings, and the rule a wrong value
 * breaks. The parser, the validation messages and `docs/annotations.md` (generated, checked by a test) all come from
 * that one table, so adding an annotation means adding one entry here and using its setting in the plan.
 *
 * Values are trimmed; an empty value counts as not set. Every problem names the annotation, the rule and the value;
 * nothing is half-applied. Every id and zone a value names is checked against the shapes of `lib/cloud/ids.ts`, so no
 * annotation can become another API path (`edge: ".."` is an {@linkcode AnnotationProblem}, and no request is sent).
 * Whether the account resources named are allowed (`ANKRA_CLOUD_ALLOWED_*`) is decided in `allowed_resources.ts`.
 *
 * @module
 */
import { ANNOTATION_PREFIX, RELEASED_LABEL } from "../../ankra_names.ts";
import { ANKRA_ID, ANKRA_ID_WORDS, ZONE_NAME } from "../../cloud/ids.ts";
import { parseGoBoolean } from "../../go_syntax.ts";
import { type LabelRequirement, parseLabelSelector } from "./label_selector.ts";

/** The settings a Service asks for. */
export interface LoadBalancerSettings {
  /** The paid IPv4 frontend (creation time only). */
  ipv4: boolean;
  /** Private network (creation time only). */
  networkId?: string;
  /** Zone (creation time only). */
  zone?: string;
  /** Combined edge to use instead of a dedicated load balancer. */
  edgeId?: string;
  /** Backend health check, all six fields. */
  healthCheck: {
    type: "tcp" | "http" | "none";
    path: string;
    expected_status: string;
    interval_seconds: number;
    rise: number;
    fall: number;
  };
  /** Balance algorithm (`spec.sessionAffinity: ClientIP` → `source`). */
  balance: "roundrobin" | "leastconn" | "source";
  /** Backend mode: `tcp` passes connections through, `http` understands HTTP. */
  protocol: "tcp" | "http";
  /** Service ports whose frontends terminate TLS. */
  tlsPorts: number[];
  /** Certificates of the TLS frontends (the first answers clients without SNI). */
  certificateIds: string[];
  /** Plain frontends of an http load balancer redirect to HTTPS. */
  redirectHttpToHttps: boolean;
  /** The ingress `ipMode` asked for; undefined: chosen from what the load balancer does (`ingressIpMode`). */
  ipMode?: "Proxy" | "VIP";
  /** Only nodes whose labels match may be members (the selector's text and its requirements). */
  nodeSelector?: { text: string; requirements: LabelRequirement[] };
  /** Keep the load balancer (and its address) when the Service goes: released, not deleted. */
  preserveOnDelete: boolean;
  /** Use this existing load balancer (released by this cluster, unlabelled, or already this Service's). */
  loadBalancerId?: string;
  /** Share one load balancer with the Services of the namespace that name the same key. */
  share?: string;
  /**
   * The other namespaces whose Services this one lets into its share group (`*`: every namespace); undefined: its
   * group stays within its namespace.
   */
  shareNamespaces?: { all: boolean; names: string[] };
  /** How the Service is served (`mode`); undefined: the controller's `--default-load-balancer-mode`. */
  mode?: ServingMode;
  /** An HA pair (true) or a single VM (false) for a new load balancer; undefined: the zone rule and the default. */
  highAvailability?: boolean;
}

/**
 * How a Service is served: `load-balancer`, an Ankra load balancer (or an edge) in front of the nodes; or
 * `node-addresses`, the nodes' own public addresses in its status, no Ankra load balancer.
 */
export type ServingMode = "load-balancer" | "node-addresses";

/** A rejected annotation. */
interface AnnotationProblem {
  /** Full annotation name. */
  annotation: string;
  /** The rule it breaks. */
  rule: string;
  /** The value given. */
  value: string;
}

/** One annotation: its documentation and how it is read. */
interface AnnotationSpec {
  /** Name after the prefix. */
  name: string;
  /** Accepted values (documentation). */
  values: string;
  /** Default (documentation). */
  default: string;
  /** What it does (documentation). */
  meaning: string;
  /** Reads the trimmed, non-empty value into `settings`; returns the rule the value breaks (and changes nothing). */
  read(value: string, settings: LoadBalancerSettings): string | undefined;
  /** A rule involving other annotations, checked once all were read: the rule broken, or undefined. */
  check?(settings: LoadBalancerSettings, given: ReadonlySet<string>): string | undefined;
}

function integer(text: string, min: number, max: number): number | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= min && value <= max ? value : undefined;
}

function oneOf<T extends string>(value: string, allowed: readonly T[]): value is T {
  return (allowed as readonly string[]).includes(value);
}

function healthCheckInteger(
  name: string,
  field: "interval_seconds" | "rise" | "fall",
  [min, max]: [number, number],
  doc: Pick<AnnotationSpec, "values" | "default" | "meaning">,
): AnnotationSpec {
  return {
    name,
    ...doc,
    read(value, settings) {
      const parsed = integer(value, min, max);
      if (parsed === undefined) return `must be an integer from ${min} to ${max}`;
      settings.healthCheck[field] = parsed;
    },
  };
}

/** Every annotation, in the order they are read. */
export const ANNOTATIONS: readonly AnnotationSpec[] = [
  {
    name: "ipv4",
    values: "true or false (1, t, T, TRUE, True, 0, f, …)",
    default: "false",
    meaning: "give the load balancer the paid public IPv4 address; honoured when it is created",
    read(value, settings) {
      const parsed = parseGoBoolean(value);
      if (parsed === undefined) return "must be true or false";
      settings.ipv4 = parsed;
    },
  },
  {
    name: "network-id",
    values: `an Ankra private network id (${ANKRA_ID_WORDS}); one of ANKRA_CLOUD_ALLOWED_NETWORK_IDS when that is set`,
    default: "ANKRA_CLOUD_NETWORK_ID, else the network all nodes share",
    meaning: "private network of a new load balancer; honoured when it is created",
    read(value, settings) {
      if (!ANKRA_ID.test(value)) return `must be an Ankra Cloud network id (${ANKRA_ID_WORDS})`;
      settings.networkId = value;
    },
  },
  {
    name: "zone",
    values: "a zone name such as de-fsn1 (lower-case letters, digits and inner '-', at most 64)",
    default: "ANKRA_CLOUD_ZONE, else the zone most nodes are in",
    meaning: "zone of a new load balancer; honoured when it is created",
    read(value, settings) {
      if (!ZONE_NAME.test(value)) return "must be a zone name such as de-fsn1";
      settings.zone = value;
    },
  },
  {
    name: "load-balancer-id",
    values: `a load balancer id (${ANKRA_ID_WORDS})`,
    default: "none: the Service gets a load balancer of its own",
    meaning: "use this existing load balancer and keep its address: one released by this cluster " +
      "(preserve-on-delete), one without labels, or this Service's own; another cluster's or Service's is refused. " +
      "Frontends and backends it did not make (names other than tcp-<port>) are left alone",
    read(value, settings) {
      if (!ANKRA_ID.test(value)) return `must be an Ankra Cloud load balancer id (${ANKRA_ID_WORDS})`;
      settings.loadBalancerId = value;
    },
    check(settings) {
      if (settings.edgeId) return `cannot be combined with ${ANNOTATION_PREFIX}edge`;
    },
  },
  {
    name: "share",
    values: "a key: 1-32 lower-case letters, digits and inner '-'",
    default: "none: the Service has a load balancer of its own",
    meaning:
      "Services of one namespace with the same key share one load balancer (one address; across namespaces with " +
      "share-namespaces), each Service's ports " +
      "its own frontends and backends (health checks and externalTrafficPolicy stay per Service); a port another " +
      "sharing Service already uses, or an ipv4, network-id or zone that disagrees with the earliest sharing " +
      "Service's, is refused with a Warning naming it. The last Service to go deletes the load balancer",
    read(value, settings) {
      if (!/^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/.test(value)) {
        return "must be 1-32 lower-case letters, digits and inner '-'";
      }
      settings.share = value;
    },
    check(settings) {
      if (settings.edgeId) return `cannot be combined with ${ANNOTATION_PREFIX}edge`;
      if (settings.loadBalancerId) return `cannot be combined with ${ANNOTATION_PREFIX}load-balancer-id`;
    },
  },
  {
    name: "share-namespaces",
    values: "comma-separated namespace names, or * for every namespace",
    default: "none: the share group stays within the namespace",
    meaning: "lets the Services of these namespaces with the same share key into this Service's share group: a " +
      "Service joins a group across namespaces only when every Service of the group allows its namespace and it " +
      "allows theirs (else a Warning names the side that did not), on one load balancer named " +
      "k8s-<cluster>-shared-<key>, labelled ccm.ankra.cloud/shared=*.<key> (an existing group's load balancer is " +
      "relabelled, its address kept); one such group per share key in the cluster. Ports, settings and the last " +
      "Service deleting it as for share",
    read(value, settings) {
      const names = value.split(",").map((name) => name.trim());
      if (names.length === 1 && names[0] === "*") {
        settings.shareNamespaces = { all: true, names: [] };
        return;
      }
      if (names.some((name) => !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(name))) {
        return "must be comma-separated namespace names (lower-case letters, digits and inner '-'), or *";
      }
      settings.shareNamespaces = { all: false, names };
    },
    check(_settings, given) {
      if (!given.has("share")) return `needs ${ANNOTATION_PREFIX}share`;
    },
  },
  {
    name: "preserve-on-delete",
    values: "true or false",
    default: "false",
    meaning: "when the Service is deleted or stops being a LoadBalancer, keep its load balancer and address: its " +
      `listeners are removed and it is labelled ${RELEASED_LABEL}=<namespace>.<name> (never swept); ` +
      "load-balancer-id takes it back",
    read(value, settings) {
      const parsed = parseGoBoolean(value);
      if (parsed === undefined) return "must be true or false";
      settings.preserveOnDelete = parsed;
    },
  },
  {
    name: "edge",
    values: `an edge id (${ANKRA_ID_WORDS}); one of ANKRA_CLOUD_ALLOWED_EDGES when that is set`,
    default: "none",
    meaning: "serve the Service from a combined edge's load_balancer role instead of a dedicated load balancer",
    read(value, settings) {
      if (!ANKRA_ID.test(value)) return `must be an Ankra Cloud edge id (${ANKRA_ID_WORDS})`;
      settings.edgeId = value;
    },
  },
  {
    name: "health-check-type",
    values: "tcp, http or none",
    default: "tcp",
    meaning: "backend health check kind",
    read(value, settings) {
      if (!oneOf(value, ["tcp", "http", "none"] as const)) return "must be tcp, http or none";
      settings.healthCheck.type = value;
    },
  },
  {
    name: "health-check-path",
    values: "/ followed by up to 254 of A-Z a-z 0-9 . _ ~ / ? & = % -",
    default: "/",
    meaning: "path of an http health check",
    read(value, settings) {
      if (!/^\/[A-Za-z0-9._~/?&=%-]{0,254}$/.test(value)) return "must be a path starting with /";
      settings.healthCheck.path = value;
    },
  },
  {
    name: "health-check-expected-status",
    values: "a status such as 200 or a range such as 200-399",
    default: "200-399",
    meaning: "statuses an http health check accepts",
    read(value, settings) {
      if (!/^[1-5][0-9]{2}(-[1-5][0-9]{2})?$/.test(value)) {
        return "must be a status such as 200 or a range such as 200-399";
      }
      settings.healthCheck.expected_status = value;
    },
  },
  healthCheckInteger("health-check-interval", "interval_seconds", [1, 300], {
    values: "whole seconds from 1 to 300",
    default: "2",
    meaning: "seconds between checks",
  }),
  healthCheckInteger("health-check-rise", "rise", [1, 10], {
    values: "a whole number from 1 to 10",
    default: "2",
    meaning: "successes to bring a member back",
  }),
  healthCheckInteger("health-check-fall", "fall", [1, 10], {
    values: "a whole number from 1 to 10",
    default: "3",
    meaning: "failures to take a member out",
  }),
  {
    name: "balance",
    values: "roundrobin, leastconn or source",
    default: "roundrobin (source with sessionAffinity: ClientIP)",
    meaning: "how connections are spread over members",
    read(value, settings) {
      if (!oneOf(value, ["roundrobin", "leastconn", "source"] as const)) {
        return "must be roundrobin, leastconn or source";
      }
      settings.balance = value;
    },
  },
  {
    name: "protocol",
    values: "tcp or http",
    default: "tcp",
    meaning: "backend mode: tcp passes connections through, http understands HTTP (needed for the redirect)",
    read(value, settings) {
      if (!oneOf(value, ["tcp", "http"] as const)) return "must be tcp or http";
      settings.protocol = value;
    },
  },
  {
    name: "tls-ports",
    values: "comma-separated Service ports, e.g. 443",
    default: "none",
    meaning: "frontends that terminate TLS with the certificates below",
    read(value, settings) {
      const ports = value.split(",").map((p) => integer(p.trim(), 1, 65535));
      if (ports.some((p) => p === undefined)) return "must be comma-separated ports from 1 to 65535";
      settings.tlsPorts = ports as number[];
    },
    check(settings, given) {
      if (settings.tlsPorts.length > 0 && !given.has("certificate-ids")) {
        return `needs ${ANNOTATION_PREFIX}certificate-ids`;
      }
    },
  },
  {
    name: "certificate-ids",
    values: `comma-separated Ankra certificate ids (${ANKRA_ID_WORDS}), at most 16; each one of ` +
      "ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS when that is set",
    default: "none",
    meaning: "certificates of the TLS frontends; the first answers clients without SNI",
    read(value, settings) {
      const ids = value.split(",").map((c) => c.trim()).filter(Boolean);
      if (ids.length > 16) return "must be at most 16 comma-separated certificate ids";
      if (ids.some((id) => !ANKRA_ID.test(id))) {
        return `must be comma-separated Ankra Cloud certificate ids (${ANKRA_ID_WORDS})`;
      }
      settings.certificateIds = ids;
    },
  },
  {
    name: "redirect-http-to-https",
    values: "true or false",
    default: "false",
    meaning: "plain frontends answer with a redirect to HTTPS; needs protocol http",
    read(value, settings) {
      const parsed = parseGoBoolean(value);
      if (parsed === undefined) return "must be true or false";
      settings.redirectHttpToHttps = parsed;
    },
    check(settings) {
      if (settings.redirectHttpToHttps && settings.protocol !== "http") {
        return `needs ${ANNOTATION_PREFIX}protocol: http`;
      }
    },
  },
  {
    name: "node-selector",
    values: "a label selector, e.g. pool=edge,topology.kubernetes.io/zone!=de-fsn2",
    default: "every eligible node",
    meaning: "only the eligible nodes whose labels match are members; none matching keeps the load balancer as it is",
    read(value, settings) {
      const parsed = parseLabelSelector(value);
      if (!parsed.ok) return parsed.rule;
      settings.nodeSelector = { text: value, requirements: parsed.requirements };
    },
  },
  {
    name: "mode",
    values: "load-balancer or node-addresses",
    default: "--default-load-balancer-mode (load-balancer)",
    meaning: "load-balancer: an Ankra load balancer serves the Service; node-addresses: the public addresses of the " +
      "nodes that serve it are its ingress, no Ankra load balancer (also spec.loadBalancerClass " +
      "ankra.cloud/node-addresses); see docs/node-addresses.md",
    read(value, settings) {
      if (!oneOf(value, ["load-balancer", "node-addresses"] as const)) return "must be load-balancer or node-addresses";
      settings.mode = value;
    },
  },
  {
    name: "high-availability",
    values: "true or false (1, t, T, TRUE, True, 0, f, …)",
    default: "ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY (auto: a pair where the zone can place one)",
    meaning: "true asks for an HA pair, false for a single VM (half the cost, no failover); honoured when the load " +
      "balancer is created",
    read(value, settings) {
      const parsed = parseGoBoolean(value);
      if (parsed === undefined) return "must be true or false";
      settings.highAvailability = parsed;
    },
  },
  {
    name: "ip-mode",
    values: "proxy or vip",
    default: "proxy with a TLS port or protocol http, else vip",
    meaning: "the ingress ipMode: proxy makes pods in the cluster reach the address through the load balancer " +
      "(TLS, http mode, the redirect), vip lets kube-proxy take in-cluster traffic straight to the Service",
    read(value, settings) {
      if (!oneOf(value, ["proxy", "vip"] as const)) return "must be proxy or vip";
      settings.ipMode = value === "proxy" ? "Proxy" : "VIP";
    },
  },
];

/** The settings of a Service without annotations: the API's health check, no IPv4, tcp, round robin. */
export function defaultSettings(options: { sessionAffinity?: string } = {}): LoadBalancerSettings {
  return {
    ipv4: false,
    networkId: undefined,
    zone: undefined,
    edgeId: undefined,
    healthCheck: { type: "tcp", path: "/", expected_status: "200-399", interval_seconds: 2, rise: 2, fall: 3 },
    balance: options.sessionAffinity === "ClientIP" ? "source" : "roundrobin",
    protocol: "tcp",
    tlsPorts: [],
    certificateIds: [],
    redirectHttpToHttps: false,
    preserveOnDelete: false,
  };
}

/**
 * True when the Service asks to keep its load balancer when it goes: read alone, so a Service whose other annotations
 * became invalid still keeps it.
 */
export function preservesOnDelete(annotations: Record<string, string>): boolean {
  return parseGoBoolean(annotations[ANNOTATION_PREFIX + "preserve-on-delete"]?.trim() ?? "") === true;
}

/**
 * The load balancer id the Service names in `load-balancer.ankra.cloud/load-balancer-id` (pinned by the user), read
 * alone and unchecked, so a Service whose annotations became invalid still protects the one it names.
 */
export function pinnedLoadBalancerId(annotations: Record<string, string>): string | undefined {
  return annotations[ANNOTATION_PREFIX + "load-balancer-id"]?.trim() || undefined;
}

/** Parses a Service's annotations with {@linkcode ANNOTATIONS}; every problem is reported, nothing is half-applied. */
export function parseAnnotations(
  annotations: Record<string, string>,
  options: { sessionAffinity?: string } = {},
): { ok: true; settings: LoadBalancerSettings } | { ok: false; problems: AnnotationProblem[] } {
  const problems: AnnotationProblem[] = [];
  const settings = defaultSettings(options);
  const given = new Set<string>();
  const valueOf = (spec: AnnotationSpec) => annotations[ANNOTATION_PREFIX + spec.name]?.trim() ?? "";
  for (const spec of ANNOTATIONS) {
    const value = valueOf(spec);
    if (!value) continue;
    given.add(spec.name);
    const rule = spec.read(value, settings);
    if (rule) problems.push({ annotation: ANNOTATION_PREFIX + spec.name, rule, value });
  }
  for (const spec of ANNOTATIONS) {
    const rule = given.has(spec.name) ? spec.check?.(settings, given) : undefined;
    if (rule) problems.push({ annotation: ANNOTATION_PREFIX + spec.name, rule, value: valueOf(spec) });
  }
  return problems.length ? { ok: false, problems } : { ok: true, settings };
}

/** One line for all problems: `<annotation> <rule>, not "<value>"; …`. */
export function describeProblems(problems: AnnotationProblem[]): string {
  return problems.map((p) => `${p.annotation} ${p.rule}, not "${p.value}"`).join("; ");
}

/** The annotation table as Markdown (`docs/annotations.md` holds exactly this; a test checks it). */
export function annotationTable(): string {
  const rows = ANNOTATIONS.map((a) =>
    `| \`${ANNOTATION_PREFIX}${a.name}\` | ${a.values} | ${a.default} | ${a.meaning} |`
  );
  return ["| Annotation | Values | Default | Meaning |", "| --- | --- | --- | --- |", ...rows].join("\n");
}
