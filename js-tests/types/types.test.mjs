// The package's typings, as a TypeScript user meets them: a scratch project with the
// package installed under node_modules, `tsc --strict --noEmit` on usage.ts (every export,
// its types pinned to SPEC.md), real.ts (LangChain.js, AI SDK and interface-typed messages
// through every function, results of the caller's own type; the peers are linked from the
// dev tree) and misuse.ts (misuses that must not compile), with bundler and nodenext
// resolution; then the same misuses without their `@ts-expect-error` must each fail on their
// own line; and web.ts with node10 resolution (no "exports").
//
//   CHR_PKG=/path/to/chat-history-reducer node --test js-tests/types/types.test.mjs
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { BIN, REPO, scratchProject, run } from "../e2e/helpers.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const FILES = ["usage.ts", "real.ts", "misuse.ts", "web.ts", "tsconfig.bundler.json", "tsconfig.nodenext.json", "tsconfig.libcheck.json", "tsconfig.node10.json"];
/** The message types' packages real.ts imports, linked from the dev tree's node_modules. */
const PEERS = ["@langchain/core", "ai"];
let project;

before(() => {
  project = scratchProject("types");
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "types-check", private: true, type: "module" }, null, 2));
  for (const f of FILES) copyFileSync(join(HERE, f), join(project, f));
  for (const peer of PEERS) {
    mkdirSync(dirname(join(project, "node_modules", peer)), { recursive: true });
    symlinkSync(join(REPO, "node_modules", peer), join(project, "node_modules", peer), "dir");
  }
});

const tsc = (...args) => run(BIN("tsc"), args, { cwd: project });
const report = (r) => `${r.stdout}${r.stderr}`;

test("usage.ts, real.ts and misuse.ts type-check with moduleResolution bundler", async () => {
  const r = await tsc("-p", "tsconfig.bundler.json", "--strict", "--noEmit");
  assert.equal(r.code, 0, report(r));
});

test("usage.ts, real.ts and misuse.ts type-check with moduleResolution nodenext", async () => {
  const r = await tsc("-p", "tsconfig.nodenext.json", "--strict", "--noEmit");
  assert.equal(r.code, 0, report(r));
});

test("each misuse is a type error on its own line once its @ts-expect-error is gone", async () => {
  const lines = readFileSync(join(HERE, "misuse.ts"), "utf8").split("\n");
  const expected = [];
  const stripped = lines.map((line, i) => {
    if (!line.trim().startsWith("// @ts-expect-error")) return line;
    expected.push(i + 2); // the 1-based number of the line after the directive
    return "//";
  });
  assert.ok(expected.length >= 8, "misuse.ts has its directives");
  writeFileSync(join(project, "unmarked.ts"), stripped.join("\n"));
  writeFileSync(join(project, "tsconfig.unmarked.json"), JSON.stringify({
    extends: "./tsconfig.bundler.json",
    files: ["unmarked.ts"],
  }));
  const r = await tsc("-p", "tsconfig.unmarked.json", "--strict", "--noEmit");
  assert.notEqual(r.code, 0, "the misuses compile without their directives");
  const errorLines = [...new Set([...r.stdout.matchAll(/^unmarked\.ts\((\d+),\d+\): error TS\d+/gm)].map((m) => Number(m[1])))];
  assert.deepEqual(errorLines.sort((a, b) => a - b), expected, report(r));
  assert.match(r.stdout, /error TS2322: Type '"fifo"' is not assignable to type '"truncate" \| "priority" \| "summarize" \| "progressive"/);
});

test("chat-history-reducer/web resolves with moduleResolution node10 (typesVersions)", async () => {
  const r = await tsc("-p", "tsconfig.node10.json", "--strict", "--noEmit");
  assert.equal(r.code, 0, report(r));
});

test("the package's own .d.ts compiles without skipLibCheck", async () => {
  const r = await tsc("-p", "tsconfig.libcheck.json", "--strict", "--noEmit");
  assert.equal(r.code, 0, report(r));
});
