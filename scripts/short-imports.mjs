// Gives the .wasm's imports short names: `node scripts/short-imports.mjs <package dir>` (run by
// build.sh on the built package, after eager.mjs).
//
// wasm-bindgen names each function its glue hands the module `__wbg_<name>_<16 hex digits>`
// and each module by its path ("./chat_history_reducer_bg.js", "./snippets/<crate>-<hash>/
// src/wasm/results.js", one for each JavaScript module of src/wasm/ it imports from). Those
// names are part of the .wasm, about 100 of them, and the hex digits do not compress:
// renaming them `a`, `b`, … `ba`, … (and the modules `a`, `b`, …) in the import section and,
// the same way, in the glue's `__wbg_get_imports` takes 2.4 KB off the gzipped .wasm. The
// imports of a snippet module are its own export names (the glue hands the module's
// namespace; there is one, src/wasm/generated/boundary.js): their names stay,
// only their module is renamed.
//
// The glue is rewritten only where wasm-bindgen writes these names: the keys of the import
// object (`        __wbg_…: (function…`, one line each) and the module keys of the object
// `__wbg_get_imports` returns. A name that is not found exactly once, or a module not found,
// fails the build; so does a rewritten glue whose imports do not instantiate the module.
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** Reads an unsigned LEB128 at `bytes[at]`: [value, next offset]. */
function readU32(bytes, at) {
  let value = 0, shift = 0, byte;
  do {
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
function name(s) {
  const b = utf8.encode(s);
  return concat([u32(b.length), b]);
}

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

/**
 * Renames, in the glue `source`, the import object's keys (`names`: old → new) and the module
 * keys of the object `__wbg_get_imports` returns (`modules`: old → new).
 */
export function renameGlue(source, modules, names) {
  const lines = source.split("\n");
  const seen = new Map();
  for (let i = 0; i < lines.length; i++) {
    const key = /^( +)(\w+): \(?function\b/.exec(lines[i]);
    if (key && names.has(key[2])) {
      if (seen.has(key[2])) throw new Error(`glue: import ${key[2]} defined twice`);
      seen.set(key[2], i);
      lines[i] = `${key[1]}${names.get(key[2])}${lines[i].slice(key[1].length + key[2].length)}`;
      continue;
    }
    const module = /^( +)"([^"]+)": (import\d+),$/.exec(lines[i]);
    if (module) {
      if (!modules.has(module[2])) throw new Error(`glue: a module the .wasm does not import: ${module[2]}`);
      lines[i] = `${module[1]}${modules.get(module[2])}: ${module[3]},`;
      seen.set(module[2], i);
    }
  }
  const missing = [...names.keys(), ...modules.keys()].filter((n) => !seen.has(n));
  if (missing.length) throw new Error(`glue: not found: ${missing.join(", ")}`);
  return lines.join("\n");
}

/** Shortens the imports of the package in `pkgDir` (its .wasm and its glue) in place. */
async function shortenPackage(pkgDir) {
  const dir = join(pkgDir, "dist");
  const glue = join(dir, "chat_history_reducer.js");
  const wasmPath = join(dir, "chat_history_reducer_bg.wasm");
  const source = readFileSync(glue, "utf8");
  // The glue's own imports: the keys of its import object (hashed names).
  const own = new Set([...source.matchAll(/^ +(__wb\w+_[0-9a-f]{16}|__wbindgen_\w+): \(?function\b/gm)].map((m) => m[1]));
  const before = readFileSync(wasmPath);
  const { wasm, modules, names } = renameImports(before, (_module, field) => own.has(field));
  writeFileSync(glue, renameGlue(source, modules, names));
  writeFileSync(wasmPath, wasm);
  // The rewritten glue instantiates the rewritten module (a name missed on either side fails).
  const glueModule = await import(`${pathToFileURL(resolve(glue)).href}?short-imports`);
  glueModule.initSync({ module: wasm });
  const snippets = [...modules.keys()].filter((m) => m.includes("/snippets/")).length;
  console.log(`[short-imports] ${names.size} imports and ${modules.size} modules renamed (${snippets} snippet); the .wasm ${before.length} → ${wasm.length} bytes`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await shortenPackage(process.argv[2] ?? "pkg");
}

export { shortenPackage };
