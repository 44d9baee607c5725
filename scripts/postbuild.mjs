// The one step after wasm-bindgen and wasm-opt: `node scripts/postbuild.mjs <package dir>` (run
// by build.sh). It changes wasm-bindgen's output where none of its attributes reaches, on the
// TypeScript compiler's syntax trees (text is spliced at node positions), by the kind of each
// node, never by a list of names:
// - guard: the web glue's exported functions, and its exported classes' constructors and
//   static methods, that call into wasm first check that `init()` has loaded it, and throw an
//   Error that says so (an `@returns {Promise<…>}` function returns a rejected promise): an
//   export called before `init()` threw "Cannot read properties of undefined";
// - eager: every top-level function of the glue and every function of its import object
//   becomes a parenthesized function expression, which V8 compiles when the module is
//   imported rather than on its first call (build.rs writes the boundary's modules so);
// - short imports: the .wasm's imports of the glue's own functions get short names (`a`, `b`,
//   … `ba`; wasm-bindgen's carry 16 hex digits each, which do not compress) and each module a
//   one-letter one, in the .wasm's import section (binary editing) and in the glue's import
//   object; a snippet module's imports are its export names and keep them;
// - generics: the .d.ts declares `<M extends object = Message>` on each function, static
//   method and class whose signature uses `M`, the caller's message type, which the
//   attributes in src/wasm/*.rs write (wasm-bindgen has none for a type parameter).
// Input of another shape than this expects fails the build with a message saying what was
// expected; so does a glue that does not then load and instantiate the .wasm.
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";

/** The type parameter of the functions that take the caller's messages. */
export const PARAM = "<M extends object = Message>";

/** The function the guards call: it makes the error. */
const NOT_LOADED = "notLoadedError";

const NOT_LOADED_DEFINITION = `
/** The error of a function called before \`init()\` or \`initSync()\` loaded the WebAssembly
 * module (added by scripts/postbuild.mjs). */
const ${NOT_LOADED} = () => new Error("chat-history-reducer: the WebAssembly module is not loaded yet: " +
    "call \`await init()\` (or \`initSync({ module })\`) once before any other function");
`;

// ---- text at node positions ------------------------------------------------------------

/** `source` parsed (`kind`: ts.ScriptKind.JS or TS); fails on a syntax error. */
function parse(file, source, kind) {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, kind);
  const [error] = sf.parseDiagnostics ?? [];
  if (error) {
    const { line, character } = sf.getLineAndCharacterOfPosition(error.start);
    throw new Error(`${file}:${line + 1}:${character + 1}: ${ts.flattenDiagnosticMessageText(error.messageText, " ")}`);
  }
  return sf;
}

/** `source` with each edit `{ at, end, text }` (the text replacing `source[at, end)`) applied;
 * insertions at one position keep their order. Overlapping edits fail. */
export function splice(source, edits) {
  const sorted = edits.map((e, k) => ({ ...e, k })).sort((a, b) => a.at - b.at || a.end - b.end || a.k - b.k);
  let out = "", at = 0;
  for (const e of sorted) {
    if (e.at < at) throw new Error(`overlapping edits at offset ${e.at}`);
    out += source.slice(at, e.at) + e.text;
    at = e.end;
  }
  return out + source.slice(at);
}

const insert = (at, text) => ({ at, end: at, text });
const hasModifier = (node, kind) => (ts.canHaveModifiers(node) && ts.getModifiers(node)?.some((m) => m.kind === kind)) ?? false;

/** Whether `node` reads a property of the module variable `wasm` (calls into wasm). */
function callsWasm(node) {
  if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "wasm") return true;
  return ts.forEachChild(node, callsWasm) ?? false;
}

/** The indentation of the line `pos` is on. */
function indentAt(sf, pos) {
  const start = sf.getLineStarts()[sf.getLineAndCharacterOfPosition(pos).line];
  return /^[ \t]*/.exec(sf.text.slice(start, pos))[0];
}

// ---- the glue ----------------------------------------------------------------------------

/**
 * The modules the glue's `__wbg_get_imports` hands the .wasm: specifier → the keys of the
 * glue's own import object for it (its functions), or null for a module whose namespace is
 * handed as it is (a snippet module: the .wasm imports its exports by their names).
 */
export function glueImports(source, file = "glue") {
  return readImports(parse(file, source, ts.ScriptKind.JS), file).modules;
}

/** `__wbg_get_imports`'s import objects: `modules` (as glueImports) and `functions`, the
 * properties of the glue's own import objects. */
function readImports(sf, file) {
  const fn = sf.statements.find((s) => ts.isFunctionDeclaration(s) && s.name?.text === "__wbg_get_imports" && s.body);
  if (!fn) throw new Error(`${file}: no function __wbg_get_imports (wasm-bindgen's import object)`);
  const where = (node) => `${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
  const own = new Map(); // local name → its properties
  const namespaces = new Set(sf.statements.flatMap((s) =>
    ts.isImportDeclaration(s) && s.importClause?.namedBindings && ts.isNamespaceImport(s.importClause.namedBindings)
      ? [s.importClause.namedBindings.name.text] : []));
  const functions = [];
  let returned = null;
  for (const s of fn.body.statements) {
    if (ts.isVariableStatement(s)) {
      for (const d of s.declarationList.declarations) {
        if (!ts.isIdentifier(d.name) || !d.initializer || !ts.isObjectLiteralExpression(d.initializer)) {
          throw new Error(`${where(d)}: expected \`const importN = { … }\` in __wbg_get_imports`);
        }
        const keys = new Set();
        for (const p of d.initializer.properties) {
          if (isProtoNull(p)) continue;
          if (!ts.isPropertyAssignment(p) || !ts.isIdentifier(p.name) || !ts.isFunctionExpression(p.initializer)) {
            throw new Error(`${where(p)}: expected an import \`name: function (…) {…}\`, not \`${p.getText(sf).split("\n")[0]}\``);
          }
          keys.add(p.name.text);
          functions.push(p);
        }
        own.set(d.name.text, keys);
      }
    } else if (ts.isReturnStatement(s) && s.expression && ts.isObjectLiteralExpression(s.expression)) {
      returned = s.expression;
    } else {
      throw new Error(`${where(s)}: expected only import objects and \`return { "module": importN, … }\` in __wbg_get_imports`);
    }
  }
  if (!returned) throw new Error(`${where(fn)}: __wbg_get_imports returns no object`);
  const modules = new Map(), moduleKeys = [];
  for (const p of returned.properties) {
    if (isProtoNull(p)) continue;
    if (!ts.isPropertyAssignment(p) || !ts.isStringLiteral(p.name) || !ts.isIdentifier(p.initializer)
      || !(own.has(p.initializer.text) || namespaces.has(p.initializer.text))) {
      throw new Error(`${where(p)}: expected \`"module": importN\` (an import object or a namespace import), not \`${p.getText(sf)}\``);
    }
    const keys = own.get(p.initializer.text) ?? null;
    if (modules.has(p.name.text) && (modules.get(p.name.text) !== null || keys !== null)) {
      throw new Error(`${where(p)}: module ${p.name.text} has two import objects`);
    }
    modules.set(p.name.text, keys);
    moduleKeys.push(p.name);
  }
  return { modules, moduleKeys, functions };
}

const isProtoNull = (p) => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === "__proto__";

/**
 * The glue `source` rewritten: guarded, eager, and its import object renamed by `renaming`
 * (`modules`: specifier → short name, `names`: import key → short name; empty maps rename
 * nothing, else every key and module must have a new name). Returns the source and what was
 * done: `guarded` (names), `functions` and `imports` (counts of functions made eager).
 */
export function rewriteGlue(source, file = "glue", renaming = { modules: new Map(), names: new Map() }) {
  const sf = parse(file, source, ts.ScriptKind.JS);
  const wasmVariable = sf.statements.some((s) => ts.isVariableStatement(s) && (s.declarationList.flags & ts.NodeFlags.Let)
    && s.declarationList.declarations.some((d) => ts.isIdentifier(d.name) && d.name.text === "wasm"));
  if (!wasmVariable) throw new Error(`${file}: no module variable \`wasm\` (\`let wasmModule, wasmInstance, wasm;\`)`);
  const taken = (function find(node) {
    return (ts.isIdentifier(node) && node.text === NOT_LOADED) || (ts.forEachChild(node, find) ?? false);
  })(sf);
  if (taken) throw new Error(`${file}: already guarded (or uses the name ${NOT_LOADED})`);

  const edits = [];
  const guarded = [];
  /** The check at the top of `fn`'s body; `promise`: return a rejected promise instead. */
  const guard = (fn, name) => {
    if (!fn.body || !callsWasm(fn.body)) return;
    const returns = ts.getJSDocReturnType(fn);
    const promise = returns && ts.isTypeReferenceNode(returns) && returns.typeName.getText(sf) === "Promise";
    const first = fn.body.statements[0];
    const indent = first ? indentAt(sf, first.getStart(sf)) : `${indentAt(sf, fn.getStart(sf))}    `;
    const check = promise ? `return Promise.reject(${NOT_LOADED}())` : `throw ${NOT_LOADED}()`;
    edits.push(insert(fn.body.getStart(sf) + 1, `\n${indent}if (wasm === undefined) ${check};`));
    guarded.push(name);
  };

  let functions = 0;
  for (const s of sf.statements) {
    if (ts.isFunctionDeclaration(s) && s.body) {
      if (!s.name || hasModifier(s, ts.SyntaxKind.DefaultKeyword)) {
        throw new Error(`${file}: \`${s.getText(sf).split("\n")[0]}\`: expected named functions, not a default export`);
      }
      if (hasModifier(s, ts.SyntaxKind.ExportKeyword)) guard(s, s.name.text);
      // `[export ]const f = ([async ]function f(…) {…});`
      const keyword = s.getChildren(sf).find((c) => c.kind === ts.SyntaxKind.FunctionKeyword);
      const head = ts.getModifiers(s)?.find((m) => m.kind !== ts.SyntaxKind.ExportKeyword) ?? keyword;
      edits.push(insert(head.getStart(sf), `const ${s.name.text} = (`), insert(s.end, ");"));
      functions++;
    } else if (ts.isClassDeclaration(s) && s.name && hasModifier(s, ts.SyntaxKind.ExportKeyword)) {
      for (const m of s.members) {
        if (ts.isConstructorDeclaration(m)) guard(m, `${s.name.text}.constructor`);
        else if (ts.isMethodDeclaration(m) && hasModifier(m, ts.SyntaxKind.StaticKeyword)) guard(m, `${s.name.text}.${m.name.getText(sf)}`);
      }
    }
  }
  if (!guarded.length) throw new Error(`${file}: no exported function calls into wasm`);

  const { modules, moduleKeys, functions: imports } = readImports(sf, file);
  const renames = renaming.names.size > 0 || renaming.modules.size > 0;
  for (const p of imports) {
    const fn = p.initializer;
    edits.push(...eagerImport(sf, fn));
    if (!renames) continue;
    const short = renaming.names.get(p.name.text);
    if (short === undefined) throw new Error(`${file}: the .wasm does not import ${p.name.text}, which the glue defines`);
    edits.push({ at: p.name.getStart(sf), end: p.name.end, text: short });
  }
  if (renames) {
    for (const key of moduleKeys) {
      const short = renaming.modules.get(key.text);
      if (short === undefined) throw new Error(`${file}: the .wasm imports nothing from ${key.text}`);
      edits.push({ at: key.getStart(sf), end: key.end, text: short });
    }
    const defined = new Set(imports.map((p) => p.name.text));
    const missing = [...renaming.names.keys()].filter((n) => !defined.has(n));
    if (missing.length) throw new Error(`${file}: the .wasm imports what the glue does not define: ${missing.join(", ")}`);
    const unknown = [...renaming.modules.keys()].filter((m) => !modules.has(m));
    if (unknown.length) throw new Error(`${file}: the .wasm imports modules the glue does not hand it: ${unknown.join(", ")}`);
  }
  edits.push(insert(source.length, NOT_LOADED_DEFINITION));
  return { source: splice(source, edits), guarded, functions, imports: imports.length };
}

/**
 * An import function as a parenthesized expression. wasm-bindgen wraps one that may throw as
 * `function() { return handleError(function (a, b) {…}, arguments); }`: the inner function is
 * what runs, parenthesized too, and the outer one gets its parameters, so that it takes as
 * many as the wasm import passes (V8 compiles a wrapper per signature and whether the arities
 * match: a parameterless outer function costs one more for each signature it shares).
 */
function eagerImport(sf, fn) {
  const edits = [insert(fn.getStart(sf), "("), insert(fn.end, ")")];
  const [only] = fn.body.statements;
  const call = fn.parameters.length === 0 && fn.body.statements.length === 1 && ts.isReturnStatement(only)
    && only.expression && ts.isCallExpression(only.expression) ? only.expression : null;
  const [inner, rest] = call?.arguments ?? [];
  if (call && call.arguments.length === 2 && ts.isFunctionExpression(inner) && ts.isIdentifier(rest) && rest.text === "arguments") {
    const params = inner.parameters.map((p) => p.getText(sf));
    if (!params.includes(call.expression.getText(sf))) {
      edits.push(insert(fn.parameters.pos, params.join(", ")));
      edits.push(insert(inner.getStart(sf), "("), insert(inner.end, ")"));
    }
  }
  return edits;
}

// ---- the .wasm's import section ----------------------------------------------------------

/** Reads an unsigned LEB128 at `bytes[at]`: [value, next offset]. */
function readU32(bytes, at) {
  let value = 0, shift = 0, byte;
  do {
    if (at >= bytes.length) throw new Error("the .wasm ends inside a number");
    byte = bytes[at++];
    value |= (byte & 0x7f) << shift;
    shift += 7;
  } while (byte & 0x80);
  return [value >>> 0, at];
}

function u32(value) {
  const out = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value) byte |= 0x80;
    out.push(byte);
  } while (value);
  return Uint8Array.from(out);
}

const utf8 = new TextEncoder(), text = new TextDecoder();
const name = (s) => {
  const b = utf8.encode(s);
  return concat([u32(b.length), b]);
};

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The k-th short name: a … z, ba, bb, … (an object key: a keyword such as `do` is fine). */
export function shortName(k) {
  let s = "";
  do {
    s = String.fromCharCode(97 + (k % 26)) + s;
    k = Math.floor(k / 26);
  } while (k > 0);
  return s;
}

/**
 * Renames the imports of `wasm` (the bytes of a module): each module to a short name, and each
 * import whose name `rename(module, name)` accepts to the next short name. Returns the new
 * bytes and the renaming: `modules` (old → new) and `names` (old → new, of the renamed ones).
 */
export function renameImports(wasm, rename) {
  const bytes = wasm instanceof Uint8Array ? wasm : new Uint8Array(wasm);
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new Error("not a WebAssembly module");
  }
  const parts = [bytes.subarray(0, 8)];
  const modules = new Map(), names = new Map();
  let at = 8, found = false;
  while (at < bytes.length) {
    const sectionStart = at;
    const id = bytes[at++];
    let size;
    [size, at] = readU32(bytes, at);
    const end = at + size;
    if (id !== 2) {
      parts.push(bytes.subarray(sectionStart, end));
      at = end;
      continue;
    }
    found = true;
    let count;
    [count, at] = readU32(bytes, at);
    const body = [u32(count)];
    for (let i = 0; i < count; i++) {
      let length;
      [length, at] = readU32(bytes, at);
      const module = text.decode(bytes.subarray(at, at + length));
      at += length;
      [length, at] = readU32(bytes, at);
      const field = text.decode(bytes.subarray(at, at + length));
      at += length;
      const descriptor = at;
      at = skipImportDescriptor(bytes, at);
      if (!modules.has(module)) modules.set(module, shortName(modules.size));
      let renamed = field;
      if (rename(module, field)) {
        if (names.has(field)) throw new Error(`import ${field} twice`);
        renamed = shortName(names.size);
        names.set(field, renamed);
      }
      body.push(name(modules.get(module)), name(renamed), bytes.subarray(descriptor, at));
    }
    if (at !== end) throw new Error("the import section does not end where its size says");
    const section = concat(body);
    parts.push(Uint8Array.of(2), u32(section.length), section);
  }
  if (!found) throw new Error("the module has no import section");
  return { wasm: concat(parts), modules, names };
}

/** Past the descriptor of an import at `bytes[at]` (its kind and type). */
function skipImportDescriptor(bytes, at) {
  const kind = bytes[at++];
  let flags;
  switch (kind) {
    case 0: // function: a type index
      return readU32(bytes, at)[1];
    case 1: // table: a reference type, then limits
      at++;
    // falls through
    case 2: // memory: limits
      [flags, at] = readU32(bytes, at);
      at = readU32(bytes, at)[1];
      return flags & 1 ? readU32(bytes, at)[1] : at;
    case 3: // global: a value type and mutability
      return at + 2;
    case 4: // tag: an attribute and a type index
      return readU32(bytes, at + 1)[1];
    default:
      throw new Error(`an import of unknown kind ${kind}`);
  }
}

// ---- the .d.ts ---------------------------------------------------------------------------

/** Whether `node` refers to a type `M` that it does not declare itself. */
function usesM(node) {
  if (node.typeParameters?.some((p) => p.name.text === "M")) return false;
  if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName) && node.typeName.text === "M") return true;
  return ts.forEachChild(node, usesM) ?? false;
}

/** The declarations `dts` with `M` declared where it is used; returns them and the names given it. */
export function declareGenerics(dts, file = "d.ts") {
  const sf = parse(file, dts, ts.ScriptKind.TS);
  const edits = [], named = [];
  const declare = (node, label) => {
    edits.push(insert(node.name.end, PARAM));
    named.push(label);
  };
  for (const s of sf.statements) {
    if (!usesM(s)) continue;
    if (ts.isFunctionDeclaration(s) && s.name && !s.typeParameters) {
      declare(s, s.name.text);
    } else if (ts.isClassDeclaration(s) && s.name && !s.typeParameters) {
      let instance = false;
      for (const m of s.members) {
        if (!usesM(m)) continue;
        if (!hasModifier(m, ts.SyntaxKind.StaticKeyword)) instance = true;
        else if (ts.isMethodDeclaration(m) && !m.typeParameters) declare(m, `${s.name.text}.${m.name.getText(sf)}`);
        else throw new Error(`${file}: cannot declare M on the static member \`${m.getText(sf)}\``);
      }
      if (instance) declare(s, s.name.text);
    } else {
      throw new Error(`${file}: cannot declare M in \`${s.getText(sf).split("\n")[0]}\` (a function, a static method or a class can have it)`);
    }
  }
  if (named.length === 0) throw new Error(`${file}: no signature uses M (did the attributes in src/wasm change?)`);
  const out = splice(dts, edits);
  parse(file, out, ts.ScriptKind.TS);
  return { dts: out, named };
}

// ---- the package -------------------------------------------------------------------------

/** Rewrites the package in `pkgDir` in place: its glue, .wasm and .d.ts. */
export async function postbuild(pkgDir) {
  const dist = join(pkgDir, "dist");
  const gluePath = join(dist, "chat_history_reducer.js");
  const wasmPath = join(dist, "chat_history_reducer_bg.wasm");
  const dtsPath = join(dist, "chat_history_reducer.d.ts");
  const glue = readFileSync(gluePath, "utf8");

  const modules = glueImports(glue, gluePath);
  const before = readFileSync(wasmPath);
  const renamed = renameImports(before, (module, field) => {
    if (!modules.has(module)) throw new Error(`${wasmPath}: imports module ${module}, which the glue does not hand it`);
    const own = modules.get(module);
    if (own && !own.has(field)) throw new Error(`${wasmPath}: imports ${field} from ${module}, which the glue does not define`);
    return own !== null;
  });
  const rewritten = rewriteGlue(glue, gluePath, renamed);
  const { dts, named } = declareGenerics(readFileSync(dtsPath, "utf8"), dtsPath);
  writeFileSync(gluePath, rewritten.source);
  writeFileSync(wasmPath, renamed.wasm);
  writeFileSync(dtsPath, dts);

  // The rewritten glue loads (with the boundary's module) and instantiates the rewritten
  // .wasm: a syntax error, a function called at load before its definition, or an import
  // renamed on one side only fails the build here.
  try {
    const api = await import(`${pathToFileURL(resolve(gluePath)).href}?postbuild`);
    api.initSync({ module: renamed.wasm });
  } catch (e) {
    throw new Error(`${gluePath}: the rewritten glue does not load and instantiate the .wasm: ${e.stack ?? e}`);
  }
  const snippets = [...renamed.modules.keys()].filter((m) => modules.get(m) === null).length;
  console.log(`[postbuild] guarded (a clear error before init()): ${rewritten.guarded.join(", ")}`);
  console.log(`[postbuild] compiled at import: the glue's ${rewritten.functions} functions and ${rewritten.imports} imports`);
  console.log(`[postbuild] short names: ${renamed.names.size} imports and ${renamed.modules.size} modules (${snippets} snippet); the .wasm ${before.length} → ${renamed.wasm.length} bytes`);
  console.log(`[postbuild] ${PARAM} declared on: ${named.join(", ")}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await postbuild(process.argv[2] ?? "pkg");
