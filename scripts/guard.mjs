// Has the web glue's functions say what is wrong when they are called before `init()` /
// `initSync()`: `node scripts/guard.mjs <package dir>` (run by build.sh on the built package,
// before scripts/eager.mjs).
//
// wasm-bindgen's glue keeps the instance's exports in a module variable, `wasm`, that `init`
// sets: an export called before it threw "TypeError: Cannot read properties of undefined
// (reading 'reduceSync')". This inserts, at the top of every exported function that calls
// into wasm and of the exported classes' constructors and static methods, one check of that
// variable, which throws an Error saying to call `init()` first (a function that returns a
// promise returns a rejected one instead). The Node and workerd entries load the module when
// they are imported: there the check never fails. Instance methods need an instance, which
// only a loaded module makes: they are left as they are. (Not a ReduceError: SPEC §10 has no
// code for a caller's set-up.)
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** The name of the function the checks call: it makes the error. */
const NOT_LOADED = "notLoadedError";

const DEFINITION = `
/** The error of a function called before \`init()\` or \`initSync()\` loaded the WebAssembly
 * module (added by scripts/guard.mjs). */
const ${NOT_LOADED} = () => new Error("chat-history-reducer: the WebAssembly module is not loaded yet: " +
    "call \`await init()\` (or \`initSync({ module })\`) once before any other function");
`;

/**
 * Inserts the checks into glue `source`; returns the new source and the names guarded.
 * Throws when the glue does not have the shape this expects (the build then fails).
 */
export function guardExports(source, file = "glue") {
  if (source.includes(NOT_LOADED)) throw new Error(`${file}: already guarded (or uses the name ${NOT_LOADED})`);
  if (!/^let wasmModule, wasmInstance, wasm;$/m.test(source)) throw new Error(`${file}: no module variable \`wasm\``);
  const lines = source.split("\n");
  const out = [];
  const guarded = [];
  let inClass = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    out.push(line);
    const cls = /^export class (\w+) \{$/.exec(line);
    if (cls) { inClass = cls[1]; continue; }
    if (inClass && line === "}") { inClass = null; continue; }
    const fn = /^export function (\w+)\(.*\) \{$/.exec(line);
    const member = inClass && /^ {4}(?:static (\w+)|(constructor))\(.*\) \{$/.exec(line);
    let name, indent;
    if (fn) [name, indent] = [fn[1], "    "];
    else if (member && member[1] !== "__wrap") [name, indent] = [`${inClass}.${member[1] ?? member[2]}`, "        "];
    else continue;
    const end = lines.findIndex((l, k) => k > i && (l === "}" || l === `${indent.slice(4)}}`));
    if (end < 0) throw new Error(`${file}: ${name} has no end`);
    if (!lines.slice(i + 1, end).some((l) => /\bwasm\./.test(l))) continue;
    // A function documented as returning a promise rejects, as it does for any other error.
    let doc = out.length - 2;
    while (doc >= 0 && /^\s*(\/\*\*|\*)/.test(out[doc]) && !/@returns \{/.test(out[doc])) doc--;
    const promise = doc >= 0 && /@returns \{Promise</.test(out[doc]);
    out.push(`${indent}if (wasm === undefined) ${promise ? "return Promise.reject(" : "throw "}${NOT_LOADED}()${promise ? ")" : ""};`);
    guarded.push(name);
  }
  if (!guarded.length) throw new Error(`${file}: no exported function calls into wasm`);
  return { source: out.join("\n") + DEFINITION, guarded };
}

/** Guards the glue of the package in `pkgDir` in place. */
function guardPackage(pkgDir) {
  const glue = join(pkgDir, "dist", "chat_history_reducer.js");
  const { source, guarded } = guardExports(readFileSync(glue, "utf8"), glue);
  writeFileSync(glue, source);
  console.log(`[guard] called before init(), these throw a clear error: ${guarded.join(", ")}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) guardPackage(process.argv[2] ?? "pkg");
