/**
 * IP addresses: parsing, canonical text (lower-case, compressed IPv6 as RFC 5952), families and prefix membership.
 * An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) counts as IPv4, as Go's `net.IP.To4` does. What people write
 * (annotations, flags) is read strictly ({@linkcode parseIp}: leading zeros refused); what the Ankra API answers is
 * read as Kubernetes' `ParseIPSloppy` reads it ({@linkcode parseIpSloppy}: leading zeros are decimal), and both give
 * the canonical text Kubernetes 1.36's strict validation asks of Node and Service addresses.
 *
 * @module
 */

/** A parsed address. */
export interface IpAddress {
  /** 4 or 6. */
  family: 4 | 6;
  /** The address as a number (IPv4 in the low 32 bits). */
  value: bigint;
  /** Dotted quad, or RFC 5952 IPv6; an IPv4-mapped IPv6 is given as IPv4. */
  text: string;
}

const OCTET = /^(0|[1-9]\d{0,2})$/;
const SLOPPY_OCTET = /^\d{1,3}$/;

/**
 * Parses dotted-quad IPv4 into a number, or undefined. Leading zeros are refused (ambiguous octal) unless `sloppy`,
 * which reads them as decimal (`010` is 10), as Kubernetes' `ParseIPSloppy` does.
 */
function parseIpv4(text: string, sloppy = false): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!(sloppy ? SLOPPY_OCTET : OCTET).test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    value = (value << 8n) | BigInt(n);
  }
  return value;
}

/**
 * Parses IPv6 text (with `::` and an optional trailing dotted IPv4, read `sloppy` as {@linkcode parseIpv4} does; no
 * zone) into a 128-bit number, or undefined.
 */
function parseIpv6(text: string, sloppy = false): bigint | undefined {
  if (!text.includes(":") || text.includes("%")) return undefined;
  let normalised = text;
  const lastColon = text.lastIndexOf(":");
  const tail = text.slice(lastColon + 1);
  if (tail.includes(".")) {
    // A dotted IPv4 tail stands for the last two words.
    const v4 = parseIpv4(tail, sloppy);
    if (v4 === undefined) return undefined;
    normalised = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = normalised.split("::");
  if (halves.length > 2) return undefined;
  const words = (part: string): number[] | undefined => {
    if (part === "") return [];
    const out: number[] = [];
    for (const word of part.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(word)) return undefined;
      out.push(parseInt(word, 16));
    }
    return out;
  };
  const left = words(halves[0]);
  const right = halves.length === 2 ? words(halves[1]) : [];
  if (!left || !right) return undefined;
  const given = left.length + right.length;
  let all: number[];
  if (halves.length === 2) {
    if (given > 7) return undefined;
    all = [...left, ...Array(8 - given).fill(0), ...right];
  } else {
    if (given !== 8) return undefined;
    all = left;
  }
  return all.reduce((acc, word) => (acc << 16n) | BigInt(word), 0n);
}

/** Formats an IPv4 number as dotted quad. */
export function formatIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join(".");
}

/** Formats a 128-bit number as canonical IPv6 text (RFC 5952). */
function formatIpv6(value: bigint): string {
  const words = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt((7 - i) * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLength && j - i >= 2) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = words.map((w) => w.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}

const MAPPED_PREFIX = 0xffffn << 32n;

/** Parses an address (trimmed); IPv4-mapped IPv6 becomes IPv4. Undefined when it is not an IP address. */
export function parseIp(text: string): IpAddress | undefined {
  return parseAddress(text, false);
}

/**
 * Parses an address the Ankra API answered, as Kubernetes' `ParseIPSloppy` does: like {@linkcode parseIp}, but IPv4
 * octets with leading zeros are read as decimal (`078.046.001.002` is `78.46.1.2`). Its `text` is canonical: no
 * leading zeros, IPv4-mapped IPv6 as IPv4, IPv6 as RFC 5952.
 */
export function parseIpSloppy(text: string): IpAddress | undefined {
  return parseAddress(text, true);
}

function parseAddress(text: string, sloppy: boolean): IpAddress | undefined {
  const trimmed = text.trim();
  const v4 = parseIpv4(trimmed, sloppy);
  if (v4 !== undefined) return { family: 4, value: v4, text: formatIpv4(v4) };
  const v6 = parseIpv6(trimmed, sloppy);
  if (v6 === undefined) return undefined;
  if (v6 >> 32n === MAPPED_PREFIX >> 32n) {
    const mapped = v6 & 0xffffffffn;
    return { family: 4, value: mapped, text: formatIpv4(mapped) };
  }
  return { family: 6, value: v6, text: formatIpv6(v6) };
}

/** A parsed prefix such as `10.0.0.0/24` or `fd64:1::/64`. */
export interface IpPrefix {
  /** 4 or 6. */
  family: 4 | 6;
  /** The address with its host bits cleared (`parsePrefix` clears them). */
  network: bigint;
  /** Leading network bits: 0–32 for IPv4, 0–128 for IPv6. */
  length: number;
}

/** Parses `address/length`; undefined when malformed. */
export function parsePrefix(text: string): IpPrefix | undefined {
  const [address, lengthText] = text.trim().split("/");
  if (!lengthText || !/^\d{1,3}$/.test(lengthText)) return undefined;
  const ip = parseIp(address);
  if (!ip) return undefined;
  const length = Number(lengthText);
  const bits = ip.family === 4 ? 32 : 128;
  if (length > bits) return undefined;
  const mask = ((1n << BigInt(length)) - 1n) << BigInt(bits - length);
  return { family: ip.family, network: ip.value & mask, length };
}

/** True when `ip` lies inside `prefix`. */
export function prefixContains(prefix: IpPrefix, ip: IpAddress): boolean {
  if (prefix.family !== ip.family) return false;
  const bits = prefix.family === 4 ? 32 : 128;
  const mask = ((1n << BigInt(prefix.length)) - 1n) << BigInt(bits - prefix.length);
  return (ip.value & mask) === prefix.network;
}

/** The address `offset` hosts after the prefix's network address. */
export function addressInPrefix(prefix: IpPrefix, offset: bigint): IpAddress {
  const value = prefix.network + offset;
  return prefix.family === 4
    ? { family: 4, value, text: formatIpv4(value) }
    : { family: 6, value, text: formatIpv6(value) };
}

/** True for a global unicast IPv6 address (2000::/3). */
export function isGlobalIpv6(ip: IpAddress): boolean {
  return ip.family === 6 && (ip.value >> 125n) === 1n;
}

/** True for an IPv6 unique local address (fc00::/7). */
export function isUniqueLocalIpv6(ip: IpAddress): boolean {
  return ip.family === 6 && (ip.value >> 121n) === 0x7en;
}
