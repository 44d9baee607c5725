// Has V8 compile the package's JavaScript that every call runs when the module loads, instead
// of on a call: `node scripts/eager.mjs <package dir>` (run by build.sh on the built package).
//
// V8 compiles a function lazily, on its first call, unless it is a function expression in
// parentheses: `(function f() {…})` is compiled with the script around it (the "PIFE"
// heuristic, the same in Chromium and in workerd). A first `reduceSync` ran ~120 functions of
// the glue and of the boundary's module (src/wasm/js/, under dist/snippets/ as one
// boundary.js: build.rs writes it), each compiled on the spot: 2–3 ms of a
// ~7 ms first call. This rewrites `function f(…) {…}` at the top level into
// `const f = (function f(…) {…});` for the functions below, wraps the glue's import functions
// the same way, and moves the methods of the classes below out of the class body into
// `Object.defineProperties(C.prototype, …)` as such expressions (a method cannot be one): the
// compiling moves to the `import`, which an app does at load, before its first message.
//
// Only the functions a call runs are listed: the summarizer's, the analysis's and the error
// paths stay lazy (compiling them at load would cost the load more than it saves). Each
// listed name is looked for in every snippet module (there is one), and must be
// declared by exactly one: a name no module declares (renamed, removed) or two declare fails
// the build. A function called while its module is evaluated (`table`, `sameByStamp`) must
// stay a declaration, hoisted, and one a top-level statement refers to (`READERS` holds the
// readers) must be defined above it (build.rs writes a module after those it imports): the
// rewritten modules are imported at the end, so a wrong order fails the build, as does a
// glue without the import functions this expects.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const EAGER = [
  // reading the options and the messages, every format
  "readOptions", "readMessages", "messageList", "checkObjects", "detect", "fitMask",
  "own", "jsonText", "plainJson", "plainJsonItem", "partsFit", "linkId", "payload", "mediaPart", "firstText",
  "openaiContent", "openaiRole", "readOpenAI", "readOpenAIFields", "looksOpenAI", "contentFlags", "noted", "openingText",
  "readResponses", "looksResponses", "readAnthropic", "looksAnthropic", "readVercel", "looksVercel",
  "readVercelUI", "looksVercelUI", "readGemini", "looksGemini", "langchainShape", "readLangChain",
  "looksLangChain", "readFresh", "readOne", "remember", "slot", "stampWith", "partsStamp", "partMark",
  // the next call on the same or a grown history (the take-over)
  "previousReading", "madeWith", "keepReading", "staleKeys", "givenCounts", "align", "sameRun",
  "allUnchanged", "sameOpenAI", "extras", "sameExtras", "sameWith", "sameInside", "sameParts", "sameStamp",
  // the default estimator's texts, the result
  "pieceAt", "textUnits", "encodeUtf8", "plainArray", "makeEvent", "buildResult", "setCompleter",
  "completeLater", "completeReading",
];
/** Classes whose methods every call runs: what a call read (`Reading`, reading.js), its texts
 * (`TextChunks`, texts.js) and stamps (`Stamps`, formats/stamps.js). */
const CLASSES = ["Reading", "Stamps", "TextChunks"];

const FUNCTION = /^(export )?(async )?function(\*?) (\w+)\((.*)$/;
const CLASS = /^(export )?class (\w+) \{$/;

/**
 * Which of `sources` (file → source) declares each name of `names` at the top level (`kind`:
 * "function" or "class"): file → its names. A name that no file declares, or that several
 * do, fails.
 */
function placeNames(sources, names, kind) {
  const pattern = kind === "class" ? CLASS : FUNCTION, at = kind === "class" ? 2 : 4;
  const owners = new Map(names.map((n) => [n, []]));
  for (const [file, source] of sources) {
    for (const line of source.split("\n")) {
      const m = pattern.exec(line);
      if (m && owners.has(m[at])) owners.get(m[at]).push(file);
    }
  }
  const byFile = new Map();
  const none = [], twice = [];
  for (const [name, files] of owners) {
    if (files.length === 0) none.push(name);
    else if (files.length > 1) twice.push(`${name} (${files.join(", ")})`);
    else byFile.set(files[0], (byFile.get(files[0]) ?? new Set()).add(name));
  }
  if (none.length) throw new Error(`no snippet module declares the top-level ${kind} ${none.join(", ")}`);
  if (twice.length) throw new Error(`a top-level ${kind} declared by several snippet modules: ${twice.join("; ")}`);
  return byFile;
}

/** Rewrites the top-level `function` declarations named by `wanted` (all when `null`) of `source`. */
function wrapDeclarations(source, wanted, file) {
  const lines = source.split("\n");
  const found = new Set();
  for (let i = 0; i < lines.length; i++) {
    const m = FUNCTION.exec(lines[i]);
    if (!m || (wanted && !wanted.has(m[4]))) continue;
    let end = i;
    if (!lines[i].endsWith("}")) {
      end = lines.findIndex((l, k) => k > i && /^\S/.test(l));
      if (end < 0 || lines[end] !== "}") throw new Error(`${file}: ${m[4]} does not end with a "}" line`);
    }
    lines[i] = `${m[1] ?? ""}const ${m[4]} = (${m[2] ?? ""}function${m[3]} ${m[4]}(${m[5]}`;
    lines[end] = `${lines[end]});`;
    found.add(m[4]);
  }
  const missing = wanted ? [...wanted].filter((n) => !found.has(n)) : [];
  if (missing.length) throw new Error(`${file}: no top-level function ${missing.join(", ")}`);
  return { source: lines.join("\n"), count: found.size };
}

/** Moves the methods and getters of each class of `wanted` out of its body into
 * `Object.defineProperties(Class.prototype, {…})` as parenthesized function expressions, with
 * the descriptors a class gives them (not enumerable); the constructor stays in the class. */
function wrapClassMethods(source, wanted, file) {
  const lines = source.split("\n");
  const out = [];
  const found = new Set();
  for (let i = 0; i < lines.length; i++) {
    const head = CLASS.exec(lines[i]);
    if (!head || !wanted.has(head[2])) { out.push(lines[i]); continue; }
    const name = head[2];
    const end = lines.findIndex((l, k) => k > i && /^\S/.test(l));
    if (end < 0 || lines[end] !== "}") throw new Error(`${file}: class ${name} does not end with a "}" line`);
    const body = [], props = [];
    let comment = [];
    for (let k = i + 1; k < end; k++) {
      const m = /^  (get )?(\w+)\((.*)\) \{$/.exec(lines[k]);
      if (!m || m[2] === "constructor") {
        if (/^  (\/\*\*|\/\/|\*)/.test(lines[k]) || /^   \*/.test(lines[k])) comment.push(lines[k]);
        else { body.push(...comment, lines[k]); comment = []; }
        continue;
      }
      const close = lines.findIndex((l, j) => j > k && /^  \S/.test(l));
      if (close < 0 || lines[close] !== "  }") throw new Error(`${file}: ${name}.${m[2]} does not end with a "  }" line`);
      const inner = lines.slice(k + 1, close);
      // A named function expression binds its name inside it, a method does not.
      if (new RegExp(`(^|[^.\\w$])${m[2]}\\b`).test([m[3], ...inner].join("\n"))) {
        throw new Error(`${file}: ${name}.${m[2]} uses the name ${m[2]} (rename it: moved out, the method would see itself)`);
      }
      const fn = `(function ${m[2]}(${m[3]}) {`;
      const kind = m[1] ? "get" : "value";
      props.push(...comment, `  ${m[2]}: { ${kind}: ${fn}`, ...inner,
        `  }),${kind === "value" ? " writable: true," : ""} configurable: true },`);
      comment = [];
      k = close;
    }
    while (body.at(-1) === "") body.pop();
    if (!props.length) throw new Error(`${file}: class ${name} has no methods to move`);
    out.push(lines[i], ...body, ...comment, "}", `Object.defineProperties(${name}.prototype, {`, ...props, "});");
    found.add(name);
    i = end;
  }
  const missing = [...wanted].filter((n) => !found.has(n));
  if (missing.length) throw new Error(`${file}: no class ${missing.join(", ")}`);
  return { source: out.join("\n"), count: found.size };
}

/** Wraps the import functions of the glue's `__wbg_get_imports` (`name: function(…) {…},`). */
function wrapImports(source, file) {
  const lines = source.split("\n");
  let count = 0;
  for (let i = 0; i < lines.length; i++) {
    const m = /^( +)(__wb\w+): function\((.*)$/.exec(lines[i]);
    if (!m) continue;
    const [, indent, name, rest] = m;
    // `function() { return handleError(function (a, b) {…}, arguments); }`: the inner one is
    // what runs; the outer one gets its parameters too, so that it takes as many as the wasm
    // import passes (V8 compiles a wrapper per signature and whether the arities match: the
    // outer `function()` cost one more for each signature it shares with another import).
    const guarded = /^\) \{ return handleError\(function \(([\w, ]*)\) (.*)$/.exec(rest);
    lines[i] = guarded
      ? `${indent}${name}: (function(${guarded[1]}) { return handleError((function (${guarded[1]}) ${guarded[2]}`
      : `${indent}${name}: (function(${rest}`;
    const close = guarded ? `${indent}}, arguments); },` : `${indent}},`;
    let end = i;
    if (!(lines[i].endsWith("},") && !guarded)) {
      end = lines.findIndex((l, k) => k > i && l.startsWith(indent) && !l.startsWith(`${indent} `));
      if (end < 0 || lines[end] !== close) throw new Error(`${file}: import ${name} does not end with "${close}"`);
    }
    lines[end] = guarded ? `${indent}}), arguments); }),` : lines[end].replace(/\},$/, "}),");
    count++;
  }
  const left = lines.find((l) => /^ +__wb\w+: function\(/.test(l));
  if (count === 0 || left) throw new Error(`${file}: ${left ? `an import left as it was: ${left.trim()}` : "no import functions"}`);
  return { source: lines.join("\n"), count };
}

/** Rewrites the package in `pkgDir` (its glue and its snippet modules) in place. */
async function rewritePackage(pkgDir) {
  const dir = join(pkgDir, "dist");
  const glue = join(dir, "chat_history_reducer.js");
  const snippets = join(dir, "snippets");
  const files = readdirSync(snippets, { recursive: true }).filter((p) => p.endsWith(".js")).sort().map((p) => join(snippets, p));
  if (!files.some((p) => p.endsWith("boundary.js"))) throw new Error(`no boundary.js under ${snippets}`);

  const g1 = wrapDeclarations(readFileSync(glue, "utf8"), null, glue);
  const g2 = wrapImports(g1.source, glue);
  writeFileSync(glue, g2.source);
  const sources = new Map(files.map((p) => [p, readFileSync(p, "utf8")]));
  const functions = placeNames(sources, EAGER, "function"), classes = placeNames(sources, CLASSES, "class");
  let rewritten = 0, methods = 0;
  for (const [file, source] of sources) {
    let out = source;
    if (functions.has(file)) {
      const r = wrapDeclarations(out, functions.get(file), file);
      out = r.source;
      rewritten += r.count;
    }
    if (classes.has(file)) {
      const c = wrapClassMethods(out, classes.get(file), file);
      out = c.source;
      methods += c.count;
    }
    if (out !== source) writeFileSync(file, out);
  }
  // Parsed and evaluated, the snippet modules with the glue (no wasm needed): a syntax error,
  // or a function used at the top level before its definition, fails the build.
  await import(pathToFileURL(resolve(glue)).href);
  console.log(`[eager] compiled at load: the glue's ${g1.count} functions and ${g2.count} imports, ${rewritten} functions and the methods of ${methods} classes of ${files.length} snippet modules`);
}

// The rewriting functions are tested on their own (js-tests/eager.test.mjs).
export { placeNames, wrapClassMethods, wrapDeclarations, wrapImports };

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await rewritePackage(process.argv[2] ?? "pkg");
