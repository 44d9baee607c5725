// scripts/bundle.mjs (run by the build on the snippet modules): one module that behaves as the
// modules did, each after those it imports, exporting only what the glue imports; what it
// cannot bundle fails the build; the installed package ships one snippet module.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { bundle } from "./bundle.mjs";

const load = (source) => import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);

const MODULES = new Map([
  ["reader.js", [
    "// The boundary.",
    "",
    'import { CODES, twice } from "./common.js";',
    "import {",
    "  READERS,",
    '} from "./formats/index.js";',
    "",
    "export function read(name) {",
    "  return twice(READERS[name](CODES.length));",
    "}",
  ].join("\n")],
  ["formats/index.js", [
    'import { CODES } from "../common.js";',
    'import { readOne } from "./one.js";',
    "",
    "/** Built while the module is evaluated: after what it imports. */",
    "export const READERS = { one: readOne, size: () => CODES.length };",
  ].join("\n")],
  ["formats/one.js", [
    'import { twice } from "../common.js";',
    "",
    "export function readOne(n) {",
    "  return twice(n) + 1;",
    "}",
  ].join("\n")],
  ["common.js", [
    "export const CODES = [1, 2, 3], NONE = 0;",
    "export function twice(x) {",
    "  return 2 * x;",
    "}",
  ].join("\n")],
]);

test("the modules as one: each after those it imports, their imports left out, `export` on what is asked only", async () => {
  const { source, order } = bundle(MODULES, new Set(["read", "CODES"]));
  assert.deepEqual(order, ["common.js", "formats/one.js", "formats/index.js", "reader.js"]);
  assert.doesNotMatch(source, /^import /m);
  assert.match(source, /^export const CODES = \[1, 2, 3\], NONE = 0;$/m);
  assert.match(source, /^export function read\(name\) \{$/m);
  assert.match(source, /^function twice\(x\) \{$/m, "a name the glue does not import is the module's own");
  assert.match(source, /^const READERS = /m);
  assert.match(source, /^\/\/ ---- formats\/index\.js ----\n\/\*\* Built while/m, "each module under a banner, its comments kept");
  const m = await load(source);
  // (A statement keeps its `export` whole: NONE is declared with CODES.)
  assert.deepEqual(Object.keys(m).sort(), ["CODES", "NONE", "read"]);
  assert.equal(m.read("one"), 14);
  assert.equal(m.read("size"), 6);
});

test("what it cannot bundle fails the build", () => {
  const with_ = (path, source) => new Map([...MODULES, [path, source]]);
  assert.throws(() => bundle(with_("common.js", 'import { read } from "./reader.js";\nexport const CODES = [], NONE = 0;\nexport function twice(x) {\n  return x;\n}'), new Set()),
    /in a cycle: common\.js → reader\.js → common\.js/);
  assert.throws(() => bundle(with_("formats/one.js", "export function readOne() {}\nexport function twice() {}"), new Set()),
    /formats\/one\.js and common\.js both declare twice|common\.js and formats\/one\.js both declare twice/);
  assert.throws(() => bundle(with_("formats/one.js", 'import { x } from "./gone.js";\nexport function readOne() {}'), new Set()),
    /formats\/one\.js: imports \.\/gone\.js, not a snippet module/);
  assert.throws(() => bundle(with_("formats/one.js", 'import * as common from "../common.js";\nexport function readOne() {}'), new Set()),
    /formats\/one\.js: an import this does not bundle/);
  assert.throws(() => bundle(MODULES, new Set(["read", "gone"])), /imports gone, which no snippet module declares/);
});

test("the installed package ships one snippet module, which the glue imports from", () => {
  const require = createRequire(import.meta.url);
  const dist = join(dirname(require.resolve("chat-history-reducer/package.json")), "dist");
  const snippets = readdirSync(join(dist, "snippets"), { recursive: true }).filter((p) => p.endsWith(".js"));
  assert.equal(snippets.length, 1, snippets.join(", "));
  assert.match(snippets[0], /src[\\/]wasm[\\/]reader\.js$/);
  const glue = readFileSync(join(dist, "chat_history_reducer.js"), "utf8");
  const from = new Set([...glue.matchAll(/^import .* from (['"])(\.\/snippets\/[^'"]+)\1/gm)].map((m) => m[2]));
  assert.deepEqual([...from], [`./snippets/${snippets[0].split("\\").join("/")}`]);
});
