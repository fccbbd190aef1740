/**
 * An in-memory serving certificate, as kube components make one when no `--tls-cert-file` is given: a throw-away
 * CA (`<host>-ca@<unix time>`) and a certificate it signs for `localhost`, `127.0.0.1`, `::1` and the host name,
 * ECDSA P-256 with SHA-256, valid one year. Built with WebCrypto and a small DER encoder; nothing touches disk.
 *
 * @module
 */
import { parseIp } from "../ip_address.ts";

type Bytes = Uint8Array<ArrayBuffer>;

function concat(...parts: Bytes[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function length(n: number): Bytes {
  if (n < 0x80) return Uint8Array.of(n);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

function tlv(tag: number, content: Bytes): Bytes {
  return concat(Uint8Array.of(tag), length(content.length), content);
}

const sequence = (...items: Bytes[]) => tlv(0x30, concat(...items));
const set = (...items: Bytes[]) => tlv(0x31, concat(...items));
const explicit = (n: number, content: Bytes) => tlv(0xa0 + n, content);
const octetString = (content: Bytes) => tlv(0x04, content);
const bitString = (content: Bytes) => tlv(0x03, concat(Uint8Array.of(0), content));
const utf8 = (text: string) => tlv(0x0c, new TextEncoder().encode(text));
const boolean = (value: boolean) => tlv(0x01, Uint8Array.of(value ? 0xff : 0));

function integer(bytes: Bytes): Bytes {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0 && bytes[start + 1] < 0x80) start++;
  const trimmed = bytes.slice(start);
  return tlv(0x02, trimmed[0] >= 0x80 ? concat(Uint8Array.of(0), trimmed) : trimmed);
}

function oid(text: string): Bytes {
  const parts = text.split(".").map(Number);
  const bytes = [40 * parts[0] + parts[1]];
  for (const part of parts.slice(2)) {
    const chunk: number[] = [];
    let v = part;
    do {
      chunk.unshift(v & 0x7f);
      v = Math.floor(v / 128);
    } while (v > 0);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i] |= 0x80;
    bytes.push(...chunk);
  }
  return tlv(0x06, Uint8Array.from(bytes));
}

function time(date: Date): Bytes {
  const iso = date.toISOString().replace(/[-:T]/g, "").replace(/\.\d+Z$/, "Z");
  return date.getUTCFullYear() < 2050
    ? tlv(0x17, new TextEncoder().encode(iso.slice(2)))
    : tlv(0x18, new TextEncoder().encode(iso));
}

const ECDSA_SHA256 = sequence(oid("1.2.840.10045.4.3.2"));
const name = (commonName: string) => sequence(set(sequence(oid("2.5.4.3"), utf8(commonName))));

function extension(id: string, critical: boolean, value: Bytes): Bytes {
  return sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));
}

/** Converts a WebCrypto ECDSA signature (r‖s) to DER `ECDSA-Sig-Value`. */
function derSignature(raw: Bytes): Bytes {
  const half = raw.length / 2;
  return sequence(integer(raw.slice(0, half)), integer(raw.slice(half)));
}

function pem(label: string, der: Bytes): string {
  let binary = "";
  for (const byte of der) binary += String.fromCharCode(byte);
  const base64 = btoa(binary).match(/.{1,64}/g)!.join("\n");
  return `-----BEGIN ${label}-----\n${base64}\n-----END ${label}-----\n`;
}

async function certificate(options: {
  subject: string;
  issuer: string;
  publicKey: CryptoKey;
  signingKey: CryptoKey;
  isCa: boolean;
  dnsNames?: string[];
  ipAddresses?: string[];
}): Promise<Bytes> {
  const now = Date.now();
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", options.publicKey));
  const extensions: Bytes[] = [
    extension("2.5.29.19", true, options.isCa ? sequence(boolean(true)) : sequence()),
    // keyUsage: digitalSignature (+ keyCertSign for the CA).
    extension("2.5.29.15", true, tlv(0x03, options.isCa ? Uint8Array.of(2, 0x84) : Uint8Array.of(7, 0x80))),
  ];
  if (!options.isCa) {
    extensions.push(extension("2.5.29.37", false, sequence(oid("1.3.6.1.5.5.7.3.1"))));
    const names: Bytes[] = [];
    for (const dns of options.dnsNames ?? []) names.push(tlv(0x82, new TextEncoder().encode(dns)));
    for (const address of options.ipAddresses ?? []) {
      const ip = parseIp(address)!;
      const bytes = ip.family === 4 ? 4 : 16;
      const raw = new Uint8Array(bytes);
      for (let i = 0; i < bytes; i++) raw[i] = Number((ip.value >> BigInt((bytes - 1 - i) * 8)) & 0xffn);
      names.push(tlv(0x87, raw));
    }
    extensions.push(extension("2.5.29.17", false, sequence(...names)));
  }
  const tbs = sequence(
    explicit(0, integer(Uint8Array.of(2))),
    integer(crypto.getRandomValues(new Uint8Array(16))),
    ECDSA_SHA256,
    name(options.issuer),
    sequence(time(new Date(now - 60_000)), time(new Date(now + 365 * 86_400_000))),
    name(options.subject),
    spki,
    explicit(3, sequence(...extensions)),
  );
  const signature = new Uint8Array(
    await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, options.signingKey, tbs),
  );
  return sequence(tbs, ECDSA_SHA256, bitString(derSignature(signature)));
}

/** A serving certificate chain and key, PEM. */
interface ServingCertificate {
  /** Serving certificate followed by the CA certificate. */
  cert: string;
  /** The serving key (PKCS#8). */
  key: string;
  /** The CA certificate, for clients that want to verify. */
  ca: string;
}

/** Makes a throw-away CA and a serving certificate for `localhost`, loopback and `hostname`. */
export async function selfSignedServingCertificate(hostname: string): Promise<ServingCertificate> {
  const algorithm = { name: "ECDSA", namedCurve: "P-256" };
  const caKeys = await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"]);
  const serverKeys = await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"]);
  const caName = `${hostname}-ca@${Math.floor(Date.now() / 1000)}`;
  const ca = await certificate({
    subject: caName,
    issuer: caName,
    publicKey: caKeys.publicKey,
    signingKey: caKeys.privateKey,
    isCa: true,
  });
  const serving = await certificate({
    subject: `${hostname}@${Math.floor(Date.now() / 1000)}`,
    issuer: caName,
    publicKey: serverKeys.publicKey,
    signingKey: caKeys.privateKey,
    isCa: false,
    dnsNames: [...new Set(["localhost", hostname])],
    ipAddresses: ["127.0.0.1", "::1"],
  });
  const key = new Uint8Array(await crypto.subtle.exportKey("pkcs8", serverKeys.privateKey));
  return {
    cert: pem("CERTIFICATE", serving) + pem("CERTIFICATE", ca),
    key: pem("PRIVATE KEY", key),
    ca: pem("CERTIFICATE", ca),
  };
}
