/**
 * The Service annotations this controller reads (prefix `load-balancer.ankra.cloud/`), their rules and defaults,
 * as one table: the parser below and `docs/annotations.md` (checked by a test) both come from it. Values are
 * trimmed; an empty value counts as not set. Every problem names the annotation, the rule and the value.
 *
 * @module
 */

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
}

/** A rejected annotation. */
export interface AnnotationProblem {
  /** Full annotation name. */
  annotation: string;
  /** The rule it breaks. */
  rule: string;
  /** The value given. */
  value: string;
}

/** One row of the annotation table. */
export interface AnnotationSpec {
  /** Name after the prefix. */
  name: string;
  /** Accepted values. */
  values: string;
  /** Default. */
  default: string;
  /** What it does. */
  meaning: string;
}

/** The annotation prefix. */
export const PREFIX = "load-balancer.ankra.cloud/";

const BOOLEAN_TRUE = ["1", "t", "T", "TRUE", "true", "True"];
const BOOLEAN_FALSE = ["0", "f", "F", "FALSE", "false", "False"];

/** Every annotation, in the order they are checked. */
export const ANNOTATIONS: readonly AnnotationSpec[] = [
  {
    name: "ipv4",
    values: "true or false (1, t, T, TRUE, True, 0, f, …)",
    default: "false",
    meaning: "give the load balancer the paid public IPv4 address; honoured when it is created",
  },
  {
    name: "network-id",
    values: "an Ankra private network id",
    default: "ANKRA_CLOUD_NETWORK_ID, else the network all nodes share",
    meaning: "private network of a new load balancer; honoured when it is created",
  },
  {
    name: "zone",
    values: "a zone name",
    default: "ANKRA_CLOUD_ZONE, else the first node's zone",
    meaning: "zone of a new load balancer; honoured when it is created",
  },
  {
    name: "edge",
    values: "an edge id",
    default: "none",
    meaning: "serve the Service from a combined edge's load_balancer role instead of a dedicated load balancer",
  },
  { name: "health-check-type", values: "tcp, http or none", default: "tcp", meaning: "backend health check kind" },
  {
    name: "health-check-path",
    values: "/ followed by up to 254 of A-Z a-z 0-9 . _ ~ / ? & = % -",
    default: "/",
    meaning: "path of an http health check",
  },
  {
    name: "health-check-expected-status",
    values: "a status such as 200 or a range such as 200-399",
    default: "200-399",
    meaning: "statuses an http health check accepts",
  },
  {
    name: "health-check-interval",
    values: "whole seconds from 1 to 300",
    default: "2",
    meaning: "seconds between checks",
  },
  {
    name: "health-check-rise",
    values: "a whole number from 1 to 10",
    default: "2",
    meaning: "successes to bring a member back",
  },
  {
    name: "health-check-fall",
    values: "a whole number from 1 to 10",
    default: "3",
    meaning: "failures to take a member out",
  },
  {
    name: "balance",
    values: "roundrobin, leastconn or source",
    default: "roundrobin (source with sessionAffinity: ClientIP)",
    meaning: "how connections are spread over members",
  },
  {
    name: "protocol",
    values: "tcp or http",
    default: "tcp",
    meaning: "backend mode: tcp passes connections through, http understands HTTP (needed for the redirect)",
  },
  {
    name: "tls-ports",
    values: "comma-separated Service ports, e.g. 443",
    default: "none",
    meaning: "frontends that terminate TLS with the certificates below",
  },
  {
    name: "certificate-ids",
    values: "comma-separated Ankra certificate ids, at most 16",
    default: "none",
    meaning: "certificates of the TLS frontends; the first answers clients without SNI",
  },
  {
    name: "redirect-http-to-https",
    values: "true or false",
    default: "false",
    meaning: "plain frontends answer with a redirect to HTTPS; needs protocol http",
  },
];

function integer(text: string, min: number, max: number): number | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= min && value <= max ? value : undefined;
}

/** Parses a Service's annotations; every problem is reported, nothing is half-applied. */
export function parseAnnotations(
  annotations: Record<string, string>,
  options: { sessionAffinity?: string } = {},
): { ok: true; settings: LoadBalancerSettings } | { ok: false; problems: AnnotationProblem[] } {
  const problems: AnnotationProblem[] = [];
  const read = (name: string) => {
    const value = annotations[PREFIX + name]?.trim();
    return value ? value : undefined;
  };
  const problem = (name: string, rule: string) =>
    problems.push({ annotation: PREFIX + name, rule, value: annotations[PREFIX + name].trim() });
  const settings: LoadBalancerSettings = {
    ipv4: false,
    networkId: read("network-id"),
    zone: read("zone"),
    edgeId: read("edge"),
    healthCheck: { type: "tcp", path: "/", expected_status: "200-399", interval_seconds: 2, rise: 2, fall: 3 },
    balance: options.sessionAffinity === "ClientIP" ? "source" : "roundrobin",
    protocol: "tcp",
    tlsPorts: [],
    certificateIds: [],
    redirectHttpToHttps: false,
  };
  const ipv4 = read("ipv4");
  if (ipv4 !== undefined) {
    if (BOOLEAN_TRUE.includes(ipv4)) settings.ipv4 = true;
    else if (!BOOLEAN_FALSE.includes(ipv4)) problem("ipv4", "must be true or false");
  }
  const type = read("health-check-type");
  if (type !== undefined) {
    if (type === "tcp" || type === "http" || type === "none") settings.healthCheck.type = type;
    else problem("health-check-type", "must be tcp, http or none");
  }
  const path = read("health-check-path");
  if (path !== undefined) {
    if (/^\/[A-Za-z0-9._~/?&=%-]{0,254}$/.test(path)) settings.healthCheck.path = path;
    else problem("health-check-path", "must be a path starting with /");
  }
  const expected = read("health-check-expected-status");
  if (expected !== undefined) {
    if (/^[1-5][0-9]{2}(-[1-5][0-9]{2})?$/.test(expected)) settings.healthCheck.expected_status = expected;
    else problem("health-check-expected-status", "must be a status such as 200 or a range such as 200-399");
  }
  const ranges: [string, "interval_seconds" | "rise" | "fall", number, number][] = [
    ["health-check-interval", "interval_seconds", 1, 300],
    ["health-check-rise", "rise", 1, 10],
    ["health-check-fall", "fall", 1, 10],
  ];
  for (const [name, field, min, max] of ranges) {
    const text = read(name);
    if (text === undefined) continue;
    const value = integer(text, min, max);
    if (value === undefined) problem(name, `must be an integer from ${min} to ${max}`);
    else settings.healthCheck[field] = value;
  }
  const balance = read("balance");
  if (balance !== undefined) {
    if (balance === "roundrobin" || balance === "leastconn" || balance === "source") settings.balance = balance;
    else problem("balance", "must be roundrobin, leastconn or source");
  }
  const protocol = read("protocol");
  if (protocol !== undefined) {
    if (protocol === "tcp" || protocol === "http") settings.protocol = protocol;
    else problem("protocol", "must be tcp or http");
  }
  const tlsPorts = read("tls-ports");
  if (tlsPorts !== undefined) {
    const ports = tlsPorts.split(",").map((p) => integer(p.trim(), 1, 65535));
    if (ports.some((p) => p === undefined)) problem("tls-ports", "must be comma-separated ports from 1 to 65535");
    else settings.tlsPorts = ports as number[];
  }
  const certificates = read("certificate-ids");
  if (certificates !== undefined) {
    const ids = certificates.split(",").map((c) => c.trim()).filter(Boolean);
    if (ids.length > 16 || ids.some((id) => !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id))) {
      problem("certificate-ids", "must be at most 16 comma-separated certificate ids");
    } else settings.certificateIds = ids;
  }
  if (settings.tlsPorts.length > 0 && settings.certificateIds.length === 0 && certificates === undefined) {
    problems.push({
      annotation: PREFIX + "tls-ports",
      rule: `needs ${PREFIX}certificate-ids`,
      value: annotations[PREFIX + "tls-ports"].trim(),
    });
  }
  const redirect = read("redirect-http-to-https");
  if (redirect !== undefined) {
    if (BOOLEAN_TRUE.includes(redirect)) {
      if (settings.protocol !== "http") problem("redirect-http-to-https", `needs ${PREFIX}protocol: http`);
      else settings.redirectHttpToHttps = true;
    } else if (!BOOLEAN_FALSE.includes(redirect)) problem("redirect-http-to-https", "must be true or false");
  }
  return problems.length ? { ok: false, problems } : { ok: true, settings };
}

/** One line per problem: `<annotation> <rule>, not "<value>"`. */
export function describeProblems(problems: AnnotationProblem[]): string {
  return problems.map((p) => `${p.annotation} ${p.rule}, not "${p.value}"`).join("; ");
}

/** The annotation table as Markdown (`docs/annotations.md` holds exactly this; a test checks it). */
export function annotationTable(): string {
  const rows = ANNOTATIONS.map((a) => `| \`${PREFIX}${a.name}\` | ${a.values} | ${a.default} | ${a.meaning} |`);
  return ["| Annotation | Values | Default | Meaning |", "| --- | --- | --- | --- |", ...rows].join("\n");
}
