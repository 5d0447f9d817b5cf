/**
 * quote(): how messages show user values — quoted, escaped, bounded.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { quote, QUOTE_MAX_CHARS } from "../kit/util/quote.ts";
import { spawnProgram } from "../kit/_runtime/spawn.ts";

describe("quote()", () => {
  it("quotes a plain value as it is", () => {
    assert.equal(quote("reverse-text"), '"reverse-text"');
    assert.equal(quote(""), '""');
    assert.equal(quote("héllo wörld ✓"), '"héllo wörld ✓"');
  });

  it("escapes quotes, backslashes and control characters", () => {
    assert.equal(quote('a"b\\c'), '"a\\"b\\\\c"');
    assert.equal(quote("a\u0000b\x1b[31mc\n\t\x7f"), '"a\\u0000b\\u001b[31mc\\n\\t\\u007f"');
    assert.equal(quote("\u0085\u009f"), '"\\u0085\\u009f"');
  });

  it("escapes invisible and direction-changing characters and lone surrogates", () => {
    assert.equal(quote("a\u202eb\u200bc\u2028d\ufeff"), '"a\\u202eb\\u200bc\\u2028d\\ufeff"');
    assert.equal(quote("x\ud800y\udc00"), '"x\\ud800y\\udc00"');
    assert.equal(quote("😀"), '"😀"', "a surrogate pair is one character, shown as is");
  });

  it("cuts a long value after the cap and gives its length", () => {
    const shown = quote("x".repeat(5_000_000));
    assert.equal(shown, `"${"x".repeat(QUOTE_MAX_CHARS)}…" (5000000 characters)`);
    assert.equal(quote("abcdef", { maxChars: 3 }), '"abc…" (6 characters)');
    assert.equal(quote("abc", { maxChars: 3 }), '"abc"');
  });

  it("never cuts inside a surrogate pair", () => {
    assert.equal(quote("a😀b", { maxChars: 2 }), '"a…" (4 characters)');
  });

  it("bare: no quotes, quotes and backslashes kept, control characters escaped", () => {
    assert.equal(quote('C:\\a "b"\u0007', { bare: true }), 'C:\\a "b"\\u0007');
    assert.equal(quote("pppp", { bare: true, maxChars: 2 }), "pp… (4 characters)");
  });
});

describe("messages that echo a user value through quote()", () => {
  it("spawnProgram(): a program name with a control character is shown escaped", async () => {
    const r = await spawnProgram(["no-such-\u0007program\u001b[2J"], {
      cwd: tmpdir(),
      env: {},
    });
    assert.equal(r.exitCode, 127);
    assert.equal(r.stderr, 'Cannot run "no-such-\\u0007program\\u001b[2J": command not found\n');
  });

  it("spawnProgram(): a missing working directory is named bounded", async () => {
    const cwd = join(tmpdir(), ...Array.from({ length: 20 }, () => "d".repeat(20)));
    const r = await spawnProgram(["true"], { cwd, env: {} });
    assert.equal(r.exitCode, 127);
    assert.match(
      r.stderr,
      /^Cannot run "true": working directory ".*…" \(\d+ characters\) does not exist\n$/,
    );
    assert.ok(r.stderr.length < 400, r.stderr);
  });
});
