// The js blocks of docs/sdk/typescript.md, run as written against the live
// server (localhost:8080 meaning it, the package name meaning this build).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { baseUrl, env } from "./helpers.mjs";

const page = readFileSync(new URL("../../../docs/sdk/typescript.md", import.meta.url), "utf8");
const blocks = [...page.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
const dist = new URL("../dist/index.js", import.meta.url).href;

test("docs/sdk/typescript.md has its snippets", () => assert.ok(blocks.length >= 5));

for (const [i, code] of blocks.entries()) {
  test(`docs/sdk/typescript.md js block ${i + 1}`, () => {
    const dir = mkdtempSync(path.join(tmpdir(), "sdk-doc-"));
    const file = path.join(dir, `block${i + 1}.mjs`);
    writeFileSync(file, code.replaceAll('"@cryptointel/client"', JSON.stringify(dist)).replaceAll("http://localhost:8080", baseUrl()));
    const out = execFileSync(process.execPath, [file], { env: { ...process.env, KEY: env("KEY_PAGES") }, encoding: "utf8", timeout: 30_000 });
    assert.ok(out.trim().length > 0, "the block printed something");
  });
}
