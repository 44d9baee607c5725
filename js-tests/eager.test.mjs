// scripts/eager.mjs (run by the build on the package's JavaScript): what it rewrites behaves
// as before, with the descriptors a class gives its methods, each listed name is found in
// exactly one snippet module, and the installed package was rewritten.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";
import { placeNames, wrapClassMethods, wrapDeclarations, wrapImports } from "./eager.mjs";

const load = (source) => import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);

const DECLARATIONS = `
export function twice(x) {
  return add(x, x);
}
function add(a, b = 1) { return a + b; }
export function* count(n) {
  for (let i = 0; i < n; i++) yield i;
}
export async function later(x) {
  return twice(await x);
}
export function lazy(x) {
  return x;
}
export { add };
`;

test("rewritten top-level functions keep their names, defaults, generators and async", async () => {
  const { source, count } = wrapDeclarations(DECLARATIONS, new Set(["twice", "add", "count", "later"]), "fixture");
  assert.equal(count, 4);
  assert.match(source, /^export const twice = \(function twice\(x\) \{$/m);
  assert.match(source, /^const add = \(function add\(a, b = 1\) \{ return a \+ b; \}\);$/m);
  assert.match(source, /^export function lazy\(x\) \{$/m, "a function not listed stays a declaration");
  const before = await load(DECLARATIONS), after = await load(source);
  for (const m of [before, after]) {
    assert.equal(m.twice(4), 8);
    assert.equal(m.add(2), 3);
    assert.deepEqual([...m.count(3)], [0, 1, 2]);
    assert.equal(await m.later(Promise.resolve(5)), 10);
  }
  assert.deepEqual(["twice", "add", "count", "later"].map((n) => [after[n].name, after[n].length]),
    ["twice", "add", "count", "later"].map((n) => [before[n].name, before[n].length]));
  assert.throws(() => wrapDeclarations(DECLARATIONS, new Set(["twice", "gone"]), "fixture"), /fixture: no top-level function gone/);
});

const CLASS = `
export class Box {
  /** A box. */
  constructor(v) {
    this.v = v;
  }

  /** The value, plus \`d\`. */
  plus(d = this.v) {
    return this.v + d;
  }

  get doubled() {
    return this.plus();
  }
}
`;

test("methods moved out of a class body keep their descriptors' flags and this", async () => {
  const { source, count } = wrapClassMethods(CLASS, new Set(["Box"]), "fixture");
  assert.equal(count, 1);
  assert.match(source, /^Object\.defineProperties\(Box\.prototype, \{$/m);
  // Parenthesized function expressions, which V8 compiles with the module.
  assert.match(source, /^  plus: \{ value: \(function plus\(d = this\.v\) \{$/m);
  assert.match(source, /^  doubled: \{ get: \(function doubled\(\) \{$/m);
  const { Box: Before } = await load(CLASS), { Box: After } = await load(source);
  const b = new After(3);
  assert.equal(b.plus(1), 4);
  assert.equal(b.plus(), 6);
  assert.equal(b.doubled, 6);
  assert.ok(b instanceof After);
  assert.deepEqual(Object.keys(b), ["v"], "no method becomes an own or enumerable property");
  for (const name of ["plus", "doubled"]) {
    const d = Object.getOwnPropertyDescriptor(After.prototype, name), e = Object.getOwnPropertyDescriptor(Before.prototype, name);
    assert.deepEqual(Object.keys(d).sort(), Object.keys(e).sort(), name);
    for (const k of ["enumerable", "writable", "configurable"]) assert.equal(d[k], e[k], `${name}.${k}`);
    assert.equal(typeof d.get, typeof e.get, `${name}.get`);
  }
  assert.equal(After.prototype.plus.name, "plus");
  assert.throws(() => wrapClassMethods(CLASS, new Set(["Missing"]), "fixture"), /fixture: no class Missing/);
  const selfNamed = CLASS.replace("return this.v + d;", "const plus = this.v + d;\n    return plus;");
  assert.throws(() => wrapClassMethods(selfNamed, new Set(["Box"]), "fixture"), /Box\.plus uses the name plus/);
  const selfDefault = CLASS.replace("plus(d = this.v) {", "plus(d = plus) {");
  assert.throws(() => wrapClassMethods(selfDefault, new Set(["Box"]), "fixture"), /Box\.plus uses the name plus/);
});

test("each listed name is declared by exactly one snippet module, else the build fails", () => {
  const sources = new Map([
    ["a.js", "export function one() {}\nfunction two(x) {\n  return x;\n}\nexport class Box {\n}\n"],
    ["b.js", "export async function three() {}\nconst four = () => 4;\n  function nested() {}\n"],
  ]);
  const byFile = placeNames(sources, ["one", "two", "three"], "function");
  assert.deepEqual([...byFile].map(([f, names]) => [f, [...names]]), [["a.js", ["one", "two"]], ["b.js", ["three"]]]);
  assert.deepEqual([...placeNames(sources, ["Box"], "class")].map(([f, names]) => [f, [...names]]), [["a.js", ["Box"]]]);
  // A name no module declares at the top level (a const, a nested function), or two modules do.
  assert.throws(() => placeNames(sources, ["one", "four"], "function"), /no snippet module declares the top-level function four/);
  assert.throws(() => placeNames(sources, ["nested"], "function"), /no snippet module declares the top-level function nested/);
  assert.throws(() => placeNames(sources, ["one"], "class"), /no snippet module declares the top-level class one/);
  const twice = new Map([...sources, ["c.js", "function one() {}\n"]]);
  assert.throws(() => placeNames(twice, ["one"], "function"), /declared by several snippet modules: one \(a\.js, c\.js\)/);
});

const IMPORTS = `
function handleError(f, args) {
  try { return f.apply(this, args); } catch (e) { return "caught: " + e.message; }
}
export function imports() {
  const o = {
    __wbg_sum_0123: function(arg0, arg1) {
      return arg0 + arg1;
    },
    __wbg_one_4567: function(arg0) { return arg0; },
    __wbg_risky_89ab: function() { return handleError(function (arg0, arg1) {
      if (arg1) throw new Error(arg0);
      return arg0;
    }, arguments); },
  };
  return o;
}
`;

test("the glue's imports keep their behaviour, and a catching one takes its parameters", async () => {
  const { source, count } = wrapImports(IMPORTS, "fixture");
  assert.equal(count, 3);
  assert.match(source, /__wbg_sum_0123: \(function\(arg0, arg1\) \{$/m);
  assert.match(source, /__wbg_one_4567: \(function\(arg0\) \{ return arg0; \}\),$/m);
  assert.match(source, /__wbg_risky_89ab: \(function\(arg0, arg1\) \{ return handleError\(\(function \(arg0, arg1\) \{$/m);
  assert.match(source, /^    \}\), arguments\); \}\),$/m);
  assert.throws(() => wrapImports("export const none = 1;\n", "fixture"), /fixture: no import functions/);
  const before = (await load(IMPORTS)).imports(), after = (await load(source)).imports();
  for (const o of [before, after]) {
    assert.equal(o.__wbg_sum_0123(2, 3), 5);
    assert.equal(o.__wbg_one_4567(7), 7);
    assert.equal(o.__wbg_risky_89ab("ok", false), "ok");
    assert.equal(o.__wbg_risky_89ab("boom", true), "caught: boom");
  }
  assert.equal(before.__wbg_risky_89ab.length, 0);
  assert.equal(after.__wbg_risky_89ab.length, 2, "as many parameters as the wasm import passes");
});

test("the installed package was rewritten", () => {
  const require = createRequire(import.meta.url);
  const dist = join(dirname(require.resolve("chat-history-reducer/package.json")), "dist");
  const glue = readFileSync(join(dist, "chat_history_reducer.js"), "utf8");
  const snippets = join(dist, "snippets");
  const reader = readFileSync(join(snippets, readdirSync(snippets, { recursive: true }).find((p) => p.endsWith("boundary.js"))), "utf8");
  assert.match(glue, /^export const reduceSync = \(function reduceSync\(/m);
  // (The import functions' keys are short names since scripts/short-imports.mjs.)
  assert.doesNotMatch(glue, /^ {8}\w+: function\(/m, "every import function is wrapped");
  assert.match(glue, /^ +\w+: \(function\(arg0, [^)]*\) \{ return handleError\(\(function \(arg0, [^)]*\) \{\n +const ret = readMessages\(/m);
  assert.match(reader, /^export const readMessages = \(function readMessages\(/m);
  assert.match(reader, /^Object\.defineProperties\(Reading\.prototype, \{\n(  \/\*\*.*\n(   \*.*\n)*)?  \w+: \{ value: \(function \w+\(/m);
  // The listed functions and classes of every module of src/wasm/js/ (one module since build.rs).
  assert.match(reader, /^(export )?const own = \(function own\(/m);
  assert.match(reader, /^(export )?const readOpenAI = \(function readOpenAI\(/m);
  assert.match(reader, /^Object\.defineProperties\(Stamps\.prototype, \{$/m);
  assert.match(reader, /^export async function callSummarizer\(/m, "a function not listed stays a declaration");
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
