// scripts/short-imports.mjs (run by the build on the package's .wasm and glue): a module whose
// imports it renamed still instantiates with the glue it renamed the same way, and the
// installed package's .wasm imports short names only.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { renameGlue, renameImports, shortName } from "./short-imports.mjs";

const GLUE_MODULE = "./x_bg.js";
const SNIPPET = "./snippets/x-0123456789abcdef/src/wasm/generated/boundary.js";
/** A second snippet module: as a crate with more JavaScript modules has. */
const SNIPPET2 = "./snippets/x-0123456789abcdef/src/wasm/results.js";

/** A module importing four functions (from the glue and two snippet modules) and a memory,
 * whose export `run` calls the four. */
function tinyModule() {
  const str = (s) => [s.length, ...Buffer.from(s)];
  const leb = (n) => (n < 0x80 ? [n] : [(n & 0x7f) | 0x80, ...leb(n >>> 7)]);
  const section = (id, body) => [id, ...leb(body.length), ...body];
  const imports = [
    [GLUE_MODULE, "__wbg_log_0123456789abcdef", [0x00, 0]],
    [SNIPPET, "readMessages", [0x00, 0]],
    [GLUE_MODULE, "__wbindgen_init_externref_table", [0x00, 0]],
    [SNIPPET2, "now", [0x00, 0]],
    [GLUE_MODULE, "memory", [0x02, 0x00, 1]],
  ];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 0, 0]),
    ...section(2, [imports.length, ...imports.flatMap(([m, n, d]) => [...str(m), ...str(n), ...d])]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...str("run"), 0x00, 4]),
    ...section(10, [1, 10, 0, 0x10, 0, 0x10, 1, 0x10, 2, 0x10, 3, 0x0b]),
  ]);
}

test("renamed imports: short names and modules, the snippet modules' names kept, the module still runs", async () => {
  const glueOwn = (module, name) => module === GLUE_MODULE && name.startsWith("__wb");
  const { wasm, modules, names } = renameImports(tinyModule(), glueOwn);
  assert.deepEqual([...modules], [[GLUE_MODULE, "a"], [SNIPPET, "b"], [SNIPPET2, "c"]]);
  assert.deepEqual([...names], [["__wbg_log_0123456789abcdef", "a"], ["__wbindgen_init_externref_table", "b"]]);
  const module = new WebAssembly.Module(wasm);
  assert.deepEqual(WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}:${i.kind}`),
    ["a.a:function", "b.readMessages:function", "a.b:function", "c.now:function", "a.memory:memory"]);
  const calls = [];
  const { exports } = await WebAssembly.instantiate(module, {
    a: { a: () => calls.push("log"), b: () => calls.push("init"), memory: new WebAssembly.Memory({ initial: 1 }) },
    b: { readMessages: () => calls.push("read") },
    c: { now: () => calls.push("now") },
  });
  exports.run();
  assert.deepEqual(calls, ["log", "read", "init", "now"]);
  assert.ok(wasm.length < tinyModule().length);
});

test("renamed glue: the import object's keys and the modules, each exactly where wasm-bindgen writes them", () => {
  const glue = [
    "function __wbg_get_imports() {",
    "    const import0 = {",
    "        __proto__: null,",
    "        __wbg_log_0123456789abcdef: (function(arg0) {",
    "            console.log(arg0);",
    "        }),",
    "        __wbindgen_init_externref_table: (function() { return 1; }),",
    "    };",
    "    return {",
    "        __proto__: null,",
    `        "${GLUE_MODULE}": import0,`,
    `        "${SNIPPET}": import1,`,
    `        "${SNIPPET2}": import2,`,
    `        "${SNIPPET}": import3,`,
    "    };",
    "}",
  ].join("\n");
  const modules = new Map([[GLUE_MODULE, "a"], [SNIPPET, "b"], [SNIPPET2, "c"]]);
  const names = new Map([["__wbg_log_0123456789abcdef", "a"], ["__wbindgen_init_externref_table", "b"]]);
  const out = renameGlue(glue, modules, names);
  assert.match(out, /^ {8}a: \(function\(arg0\) \{$/m);
  assert.match(out, /^ {8}b: \(function\(\) \{ return 1; \}\),$/m);
  // (wasm-bindgen may name a module several times, one import namespace each.)
  assert.match(out, /^ {8}a: import0,\n {8}b: import1,\n {8}c: import2,\n {8}b: import3,$/m);
  assert.doesNotMatch(out, /__wbg_log|__wbindgen_init|snippets/);
  // A name the glue does not define, or defines twice, fails the build.
  assert.throws(() => renameGlue(glue, modules, new Map([...names, ["__wbg_gone_fedcba9876543210", "c"]])), /not found: __wbg_gone/);
  const twice = glue.replace("    };", "        __wbindgen_init_externref_table: (function() { return 2; }),\n    };");
  assert.throws(() => renameGlue(twice, modules, names), /defined twice/);
});

test("short names are distinct", () => {
  const seen = new Set();
  for (let k = 0; k < 26 * 27; k++) seen.add(shortName(k));
  assert.equal(seen.size, 26 * 27);
  assert.equal(shortName(0), "a");
  assert.equal(shortName(26), "ba");
});

test("the installed package's .wasm imports short names only", () => {
  const require = createRequire(import.meta.url);
  const dist = join(dirname(require.resolve("chat-history-reducer/package.json")), "dist");
  const imports = WebAssembly.Module.imports(new WebAssembly.Module(readFileSync(join(dist, "chat_history_reducer_bg.wasm"))));
  assert.ok(imports.length > 50, `${imports.length} imports`);
  for (const { module, name } of imports) {
    assert.match(module, /^[a-z]$/, `module ${module}`);
    assert.ok(name.length <= 2 || /^[a-z][A-Za-z]+$/.test(name), `import ${module}.${name}: short, or a snippet module's export`);
  }
  const glue = readFileSync(join(dist, "chat_history_reducer.js"), "utf8");
  assert.doesNotMatch(glue, /^ +__wb\w+: \(function/m, "no import keeps its wasm-bindgen name");
});
