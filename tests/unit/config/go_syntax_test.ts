import assert from "node:assert/strict";
import { parseDuration, parseGoBoolean } from "../../../lib/go_syntax.ts";

Deno.test("Go-style durations parse to milliseconds", () => {
  assert.equal(parseDuration("500ms"), 500);
  assert.equal(parseDuration("15s"), 15_000);
  assert.equal(parseDuration("1h2m3s"), 3_723_000);
  assert.equal(parseDuration("1.5s"), 1_500);
  assert.equal(parseDuration(" 2m "), 120_000);
  assert.equal(parseDuration("0"), 0);
  assert.equal(parseDuration("15"), undefined);
  assert.equal(parseDuration("s"), undefined);
  assert.equal(parseDuration("5m junk"), undefined);
  assert.equal(parseDuration("5d"), undefined);
  assert.equal(parseDuration(""), undefined);
});

Deno.test("Go-style booleans take the spellings strconv.ParseBool takes, and nothing else", () => {
  for (const yes of ["1", "t", "T", "TRUE", "true", "True"]) assert.equal(parseGoBoolean(yes), true, yes);
  for (const no of ["0", "f", "F", "FALSE", "false", "False"]) assert.equal(parseGoBoolean(no), false, no);
  for (const neither of ["yes", "on", "tRUE", " true", "", "2"]) {
    assert.equal(parseGoBoolean(neither), undefined, neither);
  }
});
