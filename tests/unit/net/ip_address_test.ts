import assert from "node:assert/strict";
import {
  isGlobalIpv6,
  isUniqueLocalIpv6,
  parseIp,
  parseIpSloppy,
  parsePrefix,
  prefixContains,
} from "../../../lib/ip_address.ts";

Deno.test("IPv6 addresses are canonicalised: lower-case, longest zero run compressed", () => {
  assert.equal(parseIp("2001:DB8:0:0:0:0:0:1")?.text, "2001:db8::1");
  assert.equal(parseIp("fd64:1:0:2a::1")?.text, "fd64:1:0:2a::1");
  assert.equal(parseIp("2001:db8:0:0:1:0:0:1")?.text, "2001:db8::1:0:0:1");
  assert.equal(parseIp("2001:db8:0:1:1:1:1:1")?.text, "2001:db8:0:1:1:1:1:1");
  assert.equal(parseIp("::")?.text, "::");
  assert.equal(parseIp("::1")?.text, "::1");
  assert.equal(parseIp(" fe80::1 ")?.text, "fe80::1");
  assert.equal(parseIp("64:ff9b::192.0.2.33")?.text, "64:ff9b::c000:221");
});

Deno.test("IPv4 parses strictly and IPv4-mapped IPv6 counts as IPv4", () => {
  assert.deepEqual(parseIp("203.0.113.7")?.family, 4);
  assert.equal(parseIp("::ffff:203.0.113.7")?.text, "203.0.113.7");
  assert.equal(parseIp("::ffff:203.0.113.7")?.family, 4);
  for (const bad of ["256.1.1.1", "1.2.3", "01.2.3.4", "1.2.3.4.5", "", "host", "1::2::3", "12345::", "fe80::1%eth0"]) {
    assert.equal(parseIp(bad), undefined, bad);
  }
});

Deno.test("addresses the API answers are read as ParseIPSloppy reads them and given canonical", () => {
  assert.equal(parseIpSloppy("078.046.001.002")?.text, "78.46.1.2", "leading zeros are decimal, not octal");
  assert.equal(parseIpSloppy("010.000.000.005")?.text, "10.0.0.5");
  assert.equal(parseIpSloppy("::ffff:203.000.113.007")?.text, "203.0.113.7", "IPv4-mapped IPv6 is the IPv4");
  assert.equal(parseIpSloppy("::FFFF:CB00:7107")?.family, 4);
  assert.equal(parseIpSloppy("2001:0DB8:0000:0000:0000:0000:0000:0001")?.text, "2001:db8::1");
  for (const bad of ["0256.1.1.1", "1.2.3", "1234.1.1.1", "", "host", "1::2::3"]) {
    assert.equal(parseIpSloppy(bad), undefined, bad);
  }
  assert.equal(parseIp("078.046.001.002"), undefined, "what people write stays strict");
});

Deno.test("prefixes contain exactly their addresses", () => {
  const v4 = parsePrefix("10.0.0.0/24")!;
  assert.ok(prefixContains(v4, parseIp("10.0.0.200")!));
  assert.ok(!prefixContains(v4, parseIp("10.0.1.1")!));
  const ula = parsePrefix("fd64:1:0:2a::/64")!;
  assert.ok(prefixContains(ula, parseIp("fd64:1:0:2a::5")!));
  assert.ok(!prefixContains(ula, parseIp("fd64:1:0:2b::5")!));
  assert.ok(!prefixContains(ula, parseIp("10.0.0.1")!));
  assert.equal(parsePrefix("10.0.0.0/33"), undefined);
});

Deno.test("global and unique-local IPv6 are told apart", () => {
  assert.ok(isGlobalIpv6(parseIp("2001:db8::1")!));
  assert.ok(!isGlobalIpv6(parseIp("fd00::1")!));
  assert.ok(isUniqueLocalIpv6(parseIp("fd00::1")!));
  assert.ok(!isUniqueLocalIpv6(parseIp("fe80::1")!));
});
