// Ships the snippet modules as one: `node scripts/bundle.mjs <package dir>` (run by build.sh
// right after wasm-bindgen, before the scripts that rewrite the glue and the snippets).
//
// The boundary's JavaScript is written as modules named after their domain (src/wasm/*.js,
// src/wasm/formats/*.js), which wasm-bindgen copies into dist/snippets/ one file each (every
// one is named by a `module` attribute in src/wasm/js.rs). Shipped so, they cost: Node's
// loader took ~1 ms a module at start-up (importing the glue: 7.5 ms with one module, 23 ms
// with 17), a browser fetches them one import level after another, and V8 loads an imported
// binding from the exporting module at every use instead of folding a constant of the module's
// own into the optimized code (readMessages on 10,000 messages took 5–7% longer). So this
// writes them, in the order of their imports (a module after those it imports), into one
// module in place of reader.js, without their `import` lines, and with `export` left only on
// what the glue and the .wasm import (the other names are the module's own again); it
// removes the other files and points the glue's imports at the one module. The .wasm is
// unchanged (its imports still name each module: the glue hands it the one module under
// each name). The wasm-bindgen test runner imports the modules as they are.
//
// It fails the build when the modules import one another in a cycle, when two declare the
// same top-level name, when an import line is not `import { … } from "./….js";`, or when the
// glue or the .wasm imports a name that no module exports.
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, posix, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const DECLARATION = /^(export )?((?:async )?function\*? |class |const |let )(\w+)/;
const IMPORT = /^import \{([^}]*)\} from "(\.{1,2}\/[\w./-]+\.js)";$/;

/** The module's import lines joined (`import {\n  a, b,\n} from "…";` is one), and its other lines. */
function splitImports(source, file) {
  const lines = source.split("\n"), imports = [], body = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith("import ")) {
      body.push(lines[i]);
      continue;
    }
    let line = lines[i];
    while (!line.endsWith(";") && i + 1 < lines.length) line += ` ${lines[++i].trim()}`;
    const m = IMPORT.exec(line.replace(/\{\s+/, "{ ").replace(/,?\s*\}/, " }"));
    if (!m || / as /.test(m[1])) throw new Error(`${file}: an import this does not bundle: ${line}`);
    imports.push({ names: m[1].split(",").map((n) => n.trim()).filter(Boolean), from: m[2] });
  }
  return { imports, body };
}

/** The names a module's top-level statements declare (`const A = 1, B = 2` declares both). */
function declaredNames(line) {
  const m = DECLARATION.exec(line);
  if (!m) return [];
  if (m[2] === "const " || m[2] === "let ") {
    const more = [...line.matchAll(/, ([A-Za-z_$][\w$]*) = /g)].map((x) => x[1]);
    return [m[3], ...more];
  }
  return [m[3]];
}

/**
 * One module of `modules` (path → source, paths relative to the snippet root, "/"-separated):
 * each in an order where it follows those it imports, its import lines left out, `export`
 * kept only on the statements that declare a name of `exported` (`export const A = 1, B = 2`
 * stays whole). Returns the source and the order.
 */
export function bundle(modules, exported) {
  const parsed = new Map();
  for (const [path, source] of modules) {
    const { imports, body } = splitImports(source, path);
    const deps = imports.map((imp) => {
      const to = posix.normalize(posix.join(posix.dirname(path), imp.from));
      if (!modules.has(to)) throw new Error(`${path}: imports ${imp.from}, not a snippet module`);
      return to;
    });
    parsed.set(path, { body, deps });
  }
  const order = [], state = new Map();
  const visit = (path, chain) => {
    if (state.get(path) === "done") return;
    if (state.get(path) === "visiting") throw new Error(`the snippet modules import one another in a cycle: ${[...chain, path].join(" → ")}`);
    state.set(path, "visiting");
    for (const dep of parsed.get(path).deps) visit(dep, [...chain, path]);
    state.set(path, "done");
    order.push(path);
  };
  for (const path of [...modules.keys()].sort()) visit(path, []);

  const owner = new Map(), out = [];
  for (const path of order) {
    const body = parsed.get(path).body;
    while (body.length && body[0] === "") body.shift();
    while (body.length && body.at(-1) === "") body.pop();
    for (let i = 0; i < body.length; i++) {
      const names = declaredNames(body[i]);
      for (const name of names) {
        if (owner.has(name)) throw new Error(`${path} and ${owner.get(name)} both declare ${name}`);
        owner.set(name, path);
      }
      if (body[i].startsWith("export ") && !names.some((n) => exported.has(n))) body[i] = body[i].slice("export ".length);
    }
    out.push(`// ---- ${path} ----`, ...body, "");
  }
  for (const name of exported) {
    if (!owner.has(name)) throw new Error(`the glue or the .wasm imports ${name}, which no snippet module declares`);
  }
  return { source: out.join("\n"), order };
}

/** Bundles the snippet modules of the package in `pkgDir` into its reader.js, in place. */
function bundlePackage(pkgDir) {
  const dist = join(pkgDir, "dist");
  const gluePath = join(dist, "chat_history_reducer.js");
  const files = readdirSync(join(dist, "snippets"), { recursive: true }).filter((p) => p.endsWith(".js")).map((p) => join(dist, "snippets", p));
  const readerPath = files.find((p) => p.endsWith(join("src", "wasm", "reader.js")));
  if (!readerPath) throw new Error(`no src/wasm/reader.js under ${join(dist, "snippets")}`);
  const root = dirname(readerPath);
  const modules = new Map(files.map((p) => [relative(root, p).split("\\").join("/"), readFileSync(p, "utf8")]));
  // What the glue imports from them (`import { a, b } from '…'`, and the imports of the
  // .wasm, which the glue hands it as their namespaces).
  let glue = readFileSync(gluePath, "utf8");
  const exported = new Set();
  for (const m of glue.matchAll(/^import \{([^}]*)\} from '\.\/snippets\/[^']+';$/gm)) {
    for (const n of m[1].split(",")) exported.add(n.trim().split(/\s+as\s+/)[0]);
  }
  const wasm = new WebAssembly.Module(readFileSync(join(dist, "chat_history_reducer_bg.wasm")));
  for (const { module, name } of WebAssembly.Module.imports(wasm)) if (module.startsWith("./snippets/")) exported.add(name);

  const { source, order } = bundle(modules, exported);
  writeFileSync(readerPath, `// The boundary's JavaScript, src/wasm/*.js and src/wasm/formats/*.js as one module (scripts/bundle.mjs).\n\n${source}`);
  for (const p of files) if (p !== readerPath) rmSync(p);
  for (const dir of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (dir.isDirectory()) rmSync(join(dir.parentPath ?? dir.path, dir.name), { recursive: true, force: true });
  }
  const readerUrl = `./${relative(dist, readerPath).split("\\").join("/")}`;
  glue = glue.replace(/^(import .* from )(['"])\.\/snippets\/[^'"]+\2/gm, (_, head, q) => `${head}${q}${readerUrl}${q}`);
  writeFileSync(gluePath, glue);
  console.log(`[bundle] ${order.length} snippet modules as one (${relative(dist, readerPath)}), ${exported.size} names exported`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) bundlePackage(process.argv[2] ?? "pkg");
