// The package's typings, as a TypeScript user meets them: a scratch project with the
// package installed under node_modules, `tsc --strict --noEmit` on usage.ts (every export,
// its types pinned to SPEC.md), real.ts (LangChain.js, AI SDK and interface-typed messages
// through every function, results of the caller's own type; the peers are linked from the
// dev tree) and misuse.ts (misuses that must not compile), with bundler and nodenext
// resolution; then the same misuses without their `@ts-expect-error` must each fail on their
// own line; and web.ts with node10 resolution (no "exports"). ai-sdk.ts and langchain.ts use
// the adapters (chat-history-reducer/ai-sdk, /langchain) as their users write them: ai-sdk.ts
// against AI SDK 5 there, and against AI SDK 7 in a project of its own.
//
//   CHR_PKG=/path/to/chat-history-reducer node --test js-tests/types/types.test.mjs
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { BIN, REPO, scratchProject, run } from "../e2e/helpers.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const FILES = ["usage.ts", "real.ts", "misuse.ts", "web.ts", "ai-sdk.ts", "langchain.ts", "tsconfig.bundler.json", "tsconfig.nodenext.json", "tsconfig.libcheck.json", "tsconfig.node10.json"];
/** The packages real.ts and the adapters' files import (node_modules name → the dev tree's). */
const PEERS = { "@langchain/core": "@langchain/core", "@langchain/langgraph": "@langchain/langgraph", ai: "ai", langchain: "langchain" };
let project;
let ai7Project;

/** A scratch project with the package, the test's files and `peers` linked from the dev tree. */
function typesProject(name, peers) {
  const dir = scratchProject(name);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "types-check", private: true, type: "module" }, null, 2));
  for (const f of FILES) copyFileSync(join(HERE, f), join(dir, f));
  for (const [peer, from] of Object.entries(peers)) {
    mkdirSync(dirname(join(dir, "node_modules", peer)), { recursive: true });
    symlinkSync(join(REPO, "node_modules", from), join(dir, "node_modules", peer), "dir");
  }
  return dir;
}

before(() => {
  project = typesProject("types", PEERS);
  // AI SDK 7 as `ai` (the dev tree has it as the alias `ai-v7`).
  ai7Project = typesProject("types-ai7", { ai: "ai-v7" });
});

const tsc = (...args) => run(BIN("tsc"), args, { cwd: project });
const tscIn = (dir, ...args) => run(BIN("tsc"), args, { cwd: dir });
const report = (r) => `${r.stdout}${r.stderr}`;

test("usage.ts, real.ts, misuse.ts and the adapters' files type-check with moduleResolution bundler", async () => {
  const r = await tsc("-p", "tsconfig.bundler.json", "--strict", "--noEmit");
  assert.equal(r.code, 0, report(r));
});

test("usage.ts, real.ts, misuse.ts and the adapters' files type-check with moduleResolution nodenext", async () => {
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

test("ai-sdk.ts type-checks against AI SDK 7 too, with bundler and nodenext resolution", async () => {
  for (const base of ["tsconfig.bundler.json", "tsconfig.nodenext.json"]) {
    const config = `tsconfig.ai7.${base.split(".")[1]}.json`;
    writeFileSync(join(ai7Project, config), JSON.stringify({ extends: `./${base}`, files: ["ai-sdk.ts"] }));
    const r = await tscIn(ai7Project, "-p", config, "--strict", "--noEmit", "--listFiles");
    assert.equal(r.code, 0, report(r));
    assert.match(r.stdout, /node_modules\/ai-v7\//, "checked against AI SDK 7's typings");
  }
});

test("the adapters' .d.ts compile without skipLibCheck (what tsc finds in the frameworks' own typings is theirs)", async () => {
  writeFileSync(join(project, "tsconfig.adapters-libcheck.json"), JSON.stringify({ extends: "./tsconfig.libcheck.json", files: ["ai-sdk.ts", "langchain.ts"] }));
  const r = await tsc("-p", "tsconfig.adapters-libcheck.json", "--strict", "--noEmit");
  const ours = r.stdout.split("\n").filter((line) => /chat-history-reducer\/|^(ai-sdk|langchain)\.ts/.test(line));
  assert.deepEqual(ours, [], report(r));
});

test("chat-history-reducer/web resolves with moduleResolution node10 (typesVersions)", async () => {
  const r = await tsc("-p", "tsconfig.node10.json", "--strict", "--noEmit");
  assert.equal(r.code, 0, report(r));
});

test("the package's own .d.ts compiles without skipLibCheck", async () => {
  const r = await tsc("-p", "tsconfig.libcheck.json", "--strict", "--noEmit");
  assert.equal(r.code, 0, report(r));
});
