// The first steps a user takes, run as written against the server under test (on whatever port
// it has): the README's "Try it" block as one bash script with ADDR exported, and the call and
// demo page that `make dev`'s banner (scripts/dev-banner.sh) prints for that address.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { url } from "../helpers.mjs";

const root = fileURLToPath(new URL("../../../..", import.meta.url));
const addr = new URL(url).host;

/** bash runs script with `set -euo pipefail` in the repository's root, ADDR exported. */
function bash(script) {
  try {
    return { code: 0, out: execFileSync("bash", ["-c", `set -euo pipefail\n${script}`], { cwd: root, encoding: "utf8", env: { ...process.env, ADDR: addr }, stdio: ["ignore", "pipe", "pipe"] }) };
  } catch (err) {
    return { code: err.status, out: String(err.stdout), err: String(err.stderr) };
  }
}

/** tryIt is the README's "Try it" section's sh blocks, in order, as one script. */
function tryIt() {
  const readme = readFileSync(`${root}/README.md`, "utf8");
  const section = /^## Try it\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? "";
  const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  assert.ok(blocks.length > 0, 'README.md has no "## Try it" section with a ```sh block');
  return blocks.join("\n");
}

test("README: the \"Try it\" block runs as written on another port, in the order shown", () => {
  const block = tryIt();
  assert.doesNotMatch(block, /127\.0\.0\.1:9000["\/]|localhost:9000/, "an address that does not follow ADDR");
  // The block, then what the examples after it read: the session still has its messages, and
  // call fails loudly on an error.
  const { code, out, err } = bash(`${block}
echo "after: $(call get-context '{"session_id": "'$SESSION'", "agent": "demo", "format": "raw"}')"
if call recall '{"query": ""}' >/dev/null 2>&1; then echo "call succeeded on a 400" >&2; exit 1; fi
echo done`);
  assert.equal(code, 0, `the block failed:\n${err}\n${out}`);
  const lines = out.trim().split("\n");
  assert.equal(lines.at(-1), "done");
  const after = JSON.parse(lines.find((l) => l.startsWith("after: ")).slice("after: ".length));
  const contents = after.messages.map((m) => (typeof m.content === "string" ? m.content : m.content[0].text));
  for (const want of ["My name is Ada and I prefer metric units.", "What is on this receipt?", "A coffee for 3.20 EUR."]) {
    assert.ok(contents.includes(want), `the session has no "${want}" after the block: ${JSON.stringify(contents)}`);
  }
  // Every call answered JSON (an error would have stopped the script).
  assert.ok(lines.some((l) => l.includes('"merged"')), "memories create answered");
});

test("make dev's banner: its call and its demo page on the address it serves", async () => {
  const { code, out } = bash(`scripts/dev-banner.sh "$ADDR"`);
  assert.equal(code, 0);
  assert.doesNotMatch(out, /:9000\b/, "the banner names port 9000 while serving elsewhere");
  const demo = /demo chat page: (\S+)/.exec(out)?.[1];
  assert.equal(demo, `${url}/demo/`);
  const page = await fetch(demo);
  assert.equal(page.status, 200);
  assert.match(page.headers.get("content-type"), /text\/html/);
  // The call, from "TOKEN=" to its last continued line.
  const call = /^ *(TOKEN=[^\n]*\n(?:[^\n]*\\\n)*[^\n]*)$/m.exec(out)?.[1];
  assert.ok(call, `no call in the banner:\n${out}`);
  const res = bash(call);
  assert.equal(res.code, 0, res.err);
  assert.equal(JSON.parse(res.out).agent, "demo");
});
