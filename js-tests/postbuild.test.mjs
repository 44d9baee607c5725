// scripts/postbuild.mjs (run by the build on wasm-bindgen's output): the glue it rewrites
// behaves as before, throws a clear error before init(), and compiles at import; a module
// whose imports it renamed still instantiates with the glue renamed the same way; the .d.ts
// declares M where it is used; and the installed package was rewritten so, its boundary
// module in the form build.rs writes for the modules marked @eager.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";
import { PARAM, declareGenerics, glueImports, renameImports, rewriteGlue, shortName, splice } from "./postbuild.mjs";

const load = (source) => import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);

/** A glue of wasm-bindgen's shape; `initSync(exports)` stands for the instance's exports. */
const GLUE = `
let wasmModule, wasmInstance, wasm;

/**
 * @param {number} x
 * @returns {number}
 */
export function twice(x) {
    const ret = wasm.twice(x);
    return ret;
}

/**
 * @returns {Promise<number>}
 */
export function later(x) {
    const ret = wasm.later(x);
    return ret;
}

export function plain(x, y = 1) {
    return x + y;
}

export class Box {
    static __wrap(ptr) {
        const obj = Object.create(Box.prototype);
        obj.ptr = ptr;
        return obj;
    }
    /**
     * @param {number} v
     * @returns {Box}
     */
    static make(v) {
        return Box.__wrap(wasm.make(v));
    }
    constructor(v) {
        this.ptr = wasm.make(v);
        return this;
    }
    get value() {
        return wasm.value(this.ptr);
    }
}

function handleError(f, args) {
    try { return f.apply(this, args); } catch (e) { return "caught: " + e.message; }
}

function __wbg_get_imports() {
    const import0 = {
        __proto__: null,
        __wbg_sum_0123456789abcdef: function(arg0, arg1) {
            return arg0 + arg1;
        },
        __wbg_one_0123456789abcdef: function(arg0) { return arg0; },
        __wbg_risky_0123456789abcdef: function() { return handleError(function (arg0, arg1) {
            if (arg1) throw new Error(arg0);
            return arg0;
        }, arguments); },
    };
    return {
        __proto__: null,
        "./x_bg.js": import0,
    };
}

export function initSync(exports) {
    wasm = exports;
    return __wbg_get_imports();
}
`;

const EXPORTS = { twice: (x) => 2 * x, later: async (x) => x, make: (v) => v, value: (p) => p * 10 };

test("splice: edits at node positions, insertions at one place in order, overlaps refused", () => {
  const at = (k, text) => ({ at: k, end: k, text });
  assert.equal(splice("abcdef", [{ at: 1, end: 3, text: "X" }, at(4, "2"), at(4, "3"), at(0, "<"), at(6, ">")]), "<aXd23ef>");
  assert.throws(() => splice("abcdef", [{ at: 1, end: 3, text: "X" }, { at: 2, end: 4, text: "Y" }]), /overlapping edits at offset 2/);
});

test("guard: an export that calls into wasm says to call init() first; a promise one rejects; the rest as before", async () => {
  const { source, guarded } = rewriteGlue(GLUE, "fixture");
  assert.deepEqual(guarded, ["twice", "later", "Box.make", "Box.constructor"], "what calls into wasm, except instance members");
  assert.match(source, /^export const twice = \(function twice\(x\) \{\n {4}if \(wasm === undefined\) throw notLoadedError\(\);\n {4}const ret/m);
  assert.match(source, /^ {4}if \(wasm === undefined\) return Promise\.reject\(notLoadedError\(\)\);$/m);
  assert.match(source, /^ {8}if \(wasm === undefined\) throw notLoadedError\(\);\n {8}return Box\.__wrap/m, "a static method");
  const m = await load(source);
  const notLoaded = /chat-history-reducer: the WebAssembly module is not loaded yet: call `await init\(\)`/;
  assert.throws(() => m.twice(2), (e) => e instanceof Error && !(e instanceof TypeError) && notLoaded.test(e.message));
  assert.throws(() => new m.Box(1), notLoaded);
  assert.throws(() => m.Box.make(1), notLoaded);
  await assert.rejects(m.later(1), notLoaded);
  assert.equal(m.plain(1), 2, "an export that does not call into wasm works before init()");
  m.initSync(EXPORTS);
  assert.equal(m.twice(2), 4);
  assert.equal(await m.later(3), 3);
  assert.equal(new m.Box(2).value, 20);
  assert.equal(m.Box.make(3).value, 30);
  // The glue's shape is checked: the build fails, saying what it expected.
  assert.throws(() => rewriteGlue(GLUE.replace("let wasmModule, wasmInstance, wasm;", "let wasmModule;"), "fixture"), /fixture: no module variable `wasm`/);
  assert.throws(() => rewriteGlue(source, "fixture"), /already guarded/);
  assert.throws(() => rewriteGlue(GLUE.replaceAll("wasm.", "other."), "fixture"), /no exported function calls into wasm/);
});

test("eager: the glue's functions become parenthesized expressions and keep their names, arities and behaviour", async () => {
  const { source, functions, imports } = rewriteGlue(GLUE, "fixture");
  assert.deepEqual([functions, imports], [6, 3]);
  assert.match(source, /^export const plain = \(function plain\(x, y = 1\) \{$/m);
  assert.match(source, /^const handleError = \(function handleError\(f, args\) \{$/m);
  assert.match(source, /^const __wbg_get_imports = \(function __wbg_get_imports\(\) \{$/m);
  assert.doesNotMatch(source, /^(export )?function /m, "no function declaration is left");
  assert.match(source, /__wbg_sum_0123456789abcdef: \(function\(arg0, arg1\) \{$/m);
  assert.match(source, /__wbg_one_0123456789abcdef: \(function\(arg0\) \{ return arg0; \}\),$/m);
  // A catching import: the inner function parenthesized too, its parameters on the outer one.
  assert.match(source, /__wbg_risky_0123456789abcdef: \(function\(arg0, arg1\) \{ return handleError\(\(function \(arg0, arg1\) \{$/m);
  assert.match(source, /^ {8}\}\), arguments\); \}\),$/m);
  const before = await load(GLUE), after = await load(source);
  assert.deepEqual(["twice", "later", "plain", "initSync"].map((n) => [after[n].name, after[n].length]),
    ["twice", "later", "plain", "initSync"].map((n) => [before[n].name, before[n].length]));
  const was = before.initSync(EXPORTS)["./x_bg.js"], now = after.initSync(EXPORTS)["./x_bg.js"];
  for (const o of [was, now]) {
    assert.equal(o.__wbg_sum_0123456789abcdef(2, 3), 5);
    assert.equal(o.__wbg_one_0123456789abcdef(7), 7);
    assert.equal(o.__wbg_risky_0123456789abcdef("ok", false), "ok");
    assert.equal(o.__wbg_risky_0123456789abcdef("boom", true), "caught: boom");
  }
  assert.equal(was.__wbg_risky_0123456789abcdef.length, 0);
  assert.equal(now.__wbg_risky_0123456789abcdef.length, 2, "as many parameters as the wasm import passes");
});

test("the glue's import objects: its own functions by module, a snippet module's namespace as it is; other shapes fail", () => {
  const SNIPPET = "./snippets/x-0123456789abcdef/src/wasm/generated/boundary.js";
  const glue = `import * as import1 from "${SNIPPET}"\n` + GLUE.replace(`"./x_bg.js": import0,`, `"./x_bg.js": import0,\n        "${SNIPPET}": import1,\n        "${SNIPPET}": import1,`);
  const modules = glueImports(glue, "fixture");
  assert.deepEqual([...modules].map(([m, keys]) => [m, keys && [...keys]]), [
    ["./x_bg.js", ["__wbg_sum_0123456789abcdef", "__wbg_one_0123456789abcdef", "__wbg_risky_0123456789abcdef"]],
    [SNIPPET, null],
  ]);
  assert.throws(() => glueImports(GLUE.replace("function(arg0) { return arg0; }", "(arg0) => arg0"), "fixture"),
    /fixture:\d+: expected an import `name: function \(…\) \{…\}`, not `__wbg_one_0123456789abcdef: \(arg0\) => arg0`/);
  assert.throws(() => glueImports(GLUE.replace("function __wbg_get_imports()", "function imports()"), "fixture"), /no function __wbg_get_imports/);
  assert.throws(() => glueImports(GLUE.replace(`"./x_bg.js": import0`, `"./x_bg.js": other`), "fixture"), /expected `"module": importN`/);
  assert.throws(() => glueImports(GLUE.replace("export function plain(x, y = 1) {", "export function plain(x, y = 1 {"), "fixture"), /^Error: fixture:\d+:\d+: /);
});

test("renamed glue: the import object's keys and the modules, each where wasm-bindgen writes them", () => {
  const modules = new Map([["./x_bg.js", "a"]]);
  const names = new Map([["__wbg_sum_0123456789abcdef", "a"], ["__wbg_one_0123456789abcdef", "b"], ["__wbg_risky_0123456789abcdef", "c"]]);
  const { source } = rewriteGlue(GLUE, "fixture", { modules, names });
  assert.match(source, /^ {8}a: \(function\(arg0, arg1\) \{$/m);
  assert.match(source, /^ {8}b: \(function\(arg0\) \{ return arg0; \}\),$/m);
  assert.match(source, /^ {8}c: \(function\(arg0, arg1\) \{ return handleError/m);
  assert.match(source, /^ {8}a: import0,$/m);
  assert.doesNotMatch(source, /__wbg_(sum|one|risky)|x_bg/);
  // Each side must name what the other has.
  const gone = new Map([...names, ["__wbg_gone_fedcba9876543210", "d"]]);
  assert.throws(() => rewriteGlue(GLUE, "fixture", { modules, names: gone }), /the \.wasm imports what the glue does not define: __wbg_gone/);
  const fewer = new Map([...names].slice(1));
  assert.throws(() => rewriteGlue(GLUE, "fixture", { modules, names: fewer }), /the \.wasm does not import __wbg_sum_0123456789abcdef/);
  assert.throws(() => rewriteGlue(GLUE, "fixture", { modules: new Map([["./y.js", "a"]]), names }), /imports nothing from \.\/x_bg\.js/);
});

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
  assert.throws(() => renameImports(Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8), glueOwn), /not a WebAssembly module/);
});

test("short names are distinct", () => {
  const seen = new Set();
  for (let k = 0; k < 26 * 27; k++) seen.add(shortName(k));
  assert.equal(seen.size, 26 * 27);
  assert.equal(shortName(0), "a");
  assert.equal(shortName(26), "ba");
});

const DTS = `
/** What a config is: \`M\`, the caller's message type. */
export interface ReduceConfig<M = Message> {
    countTokens?: (message: M, index: number) => number;
}
export type Message = { role: string };
/** The messages, M[] (a comment naming M does not count). */
export function reduceSync(messages: readonly M[], config?: ReduceConfig<M>): M[];
export function version(): string;
export class History {
    free(): void;
    static fromJSON(state: readonly M[]): History<M>;
    static version(): string;
    constructor(messages?: readonly M[]);
    readonly messages: M[];
}
export class Plain {
    free(): void;
}
`;

test("generics: M is declared on the functions, static methods and classes whose signatures use it", () => {
  const { dts, named } = declareGenerics(DTS, "fixture");
  assert.deepEqual(named, ["reduceSync", "History.fromJSON", "History"]);
  assert.match(dts, new RegExp(`^export function reduceSync${escape(PARAM)}\\(messages: readonly M\\[\\]`, "m"));
  assert.match(dts, new RegExp(`^export class History${escape(PARAM)} \\{$`, "m"));
  assert.match(dts, new RegExp(`^ {4}static fromJSON${escape(PARAM)}\\(state`, "m"));
  assert.match(dts, /^export function version\(\): string;$/m);
  assert.match(dts, /^ {4}static version\(\): string;$/m);
  assert.match(dts, /^export class Plain \{$/m);
  assert.match(dts, /^export interface ReduceConfig<M = Message> \{$/m, "a declaration with its own M is left as it is");
  assert.equal(dts.length, DTS.length + 3 * PARAM.length, "nothing else changes");
  assert.throws(() => declareGenerics(`${DTS}export const first: M;\n`, "fixture"), /fixture: cannot declare M in `export const first: M;`/);
  assert.throws(() => declareGenerics("export function version(): string;\n", "fixture"), /fixture: no signature uses M/);
});

function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// ---- the installed package ---------------------------------------------------------------

function dist() {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("chat-history-reducer/package.json")), "dist");
}

test("the installed package's glue was rewritten: guarded, eager, short import names", () => {
  const glue = readFileSync(join(dist(), "chat_history_reducer.js"), "utf8");
  assert.match(glue, /^export const reduceSync = \(function reduceSync\(messages, config\) \{\n +if \(wasm === undefined\) throw notLoadedError\(\);$/m);
  assert.match(glue, /^ +if \(wasm === undefined\) return Promise\.reject\(notLoadedError\(\)\);$/m, "reduce returns a promise");
  assert.doesNotMatch(glue, /^(export )?(async )?function /m, "no function declaration is left");
  assert.doesNotMatch(glue, /^ {8}\w+: function\(/m, "every import function is wrapped");
  assert.match(glue, /^ {8}[a-z]{1,2}: \(function\(arg0, [^)]*\) \{ return handleError\(\(function \(arg0, [^)]*\) \{\n +const ret = readMessages\(/m);
  assert.doesNotMatch(glue, /^ +__wb\w+: \(function/m, "no import keeps its wasm-bindgen name");
});

test("the installed package's .wasm imports short names only", () => {
  const imports = WebAssembly.Module.imports(new WebAssembly.Module(readFileSync(join(dist(), "chat_history_reducer_bg.wasm"))));
  assert.ok(imports.length > 50, `${imports.length} imports`);
  for (const { module, name } of imports) {
    assert.match(module, /^[a-z]$/, `module ${module}`);
    assert.ok(name.length <= 2 || /^[a-z][A-Za-z]+$/.test(name), `import ${module}.${name}: short, or a snippet module's export`);
  }
});

test("the installed package's typings declare M", () => {
  const dts = readFileSync(join(dist(), "chat_history_reducer.d.ts"), "utf8");
  for (const name of ["reduceSync", "reduce", "shouldReduce", "estimateTokens", "analyze", "calibrate"]) {
    assert.match(dts, new RegExp(`^export function ${name}${escape(PARAM)}\\(`, "m"), name);
  }
  assert.match(dts, new RegExp(`^export class ChatHistory${escape(PARAM)} \\{$`, "m"));
  assert.match(dts, new RegExp(`^ +static fromJSON${escape(PARAM)}\\(`, "m"));
});

test("the installed package's boundary module: the modules marked @eager compile at import, the others as written", () => {
  const snippets = join(dist(), "snippets");
  const boundary = readFileSync(join(snippets, readdirSync(snippets, { recursive: true }).find((p) => p.endsWith("boundary.js"))), "utf8");
  assert.match(boundary, /^export const readMessages = \(function readMessages\(/m);
  assert.match(boundary, /^(export )?const own = \(function own\(/m);
  assert.match(boundary, /^(export )?const readOpenAI = \(function readOpenAI\(/m);
  assert.match(boundary, /^Object\.defineProperties\(Reading\.prototype, \{\n(  \/\*\*.*\n(   \*.*\n)*)?  \w+: \{ value: \(function \w+\(/m);
  assert.match(boundary, /^Object\.defineProperties\(Stamps\.prototype, \{$/m);
  assert.match(boundary, /^export async function callSummarizer\(/m, "summaries.js is not marked: its functions stay declarations");
});

test("the Node and workerd entries warm up with dist/warm.js, whose reduction succeeds", async () => {
  const require = createRequire(import.meta.url);
  const root = dirname(require.resolve("chat-history-reducer/package.json"));
  for (const entry of ["node.js", "workerd.js"]) {
    const text = readFileSync(join(root, entry), "utf8");
    assert.match(text, /^import \{ warmUp \} from "\.\/dist\/warm\.js";$/m, entry);
    assert.match(text, /^initSync\(.*\);\nwarmUp\(reduceSync\);$/m, `${entry} warms up right after initSync`);
  }
  const { reduceSync } = await import("chat-history-reducer");
  const warm = await import(pathToFileURL(join(root, "dist", "warm.js")).href);
  // The same call, made here (the entries swallow its errors: an error would only go unseen there).
  const messages = warm.warmUpMessages();
  const result = reduceSync(messages, warm.WARM_UP_CONFIG);
  assert.ok(result.dropped.length > 0 && result.kept.length > 0, "the warm-up reduces something: it runs the path of a real call");
  assert.equal(result.messages.at(-1), messages.at(-1));
  assert.notEqual(warm.warmUpMessages()[0], messages[0], "each warm-up has objects of its own");
});
