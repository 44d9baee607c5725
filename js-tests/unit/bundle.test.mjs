// src/wasm/generated/boundary.js, the modules as build.rs bundles them (any cargo build
// writes it): it loads, exports what the modules export, and the modules marked `// @eager`
// are in the form V8 compiles at import (functions as parenthesized expressions, class
// methods moved out of the class body), with the same names, arities and descriptors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("../../src/wasm/js/", import.meta.url));
const BUNDLE = fileURLToPath(new URL("../../src/wasm/generated/boundary.js", import.meta.url));
const MODULES = readdirSync(ROOT, { recursive: true }).filter((p) => p.endsWith(".js")).sort();
const eager = (path) => readFileSync(ROOT + path, "utf8").startsWith("// @eager");
const bundle = await import(pathToFileURL(BUNDLE).href);

/** The bundle's top-level statements, each with the module (its `// src/wasm/js/…` header) it came from. */
function sections() {
  const text = readFileSync(BUNDLE, "utf8");
  const sf = ts.createSourceFile(BUNDLE, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  let module = null;
  return sf.statements.map((s) => {
    for (const c of ts.getLeadingCommentRanges(text, s.pos) ?? []) {
      const header = /^\/\/ src\/wasm\/js\/(\S+\.js)$/.exec(text.slice(c.pos, c.end));
      if (header) module = header[1];
    }
    return { module, statement: s, sf };
  });
}

test("most modules are marked @eager, and those only some calls run are not", () => {
  const marked = MODULES.filter(eager);
  assert.ok(marked.includes("read.js") && marked.includes("formats/openai.js"), marked.join(", "));
  for (const lazy of ["summaries.js", "offload.js", "history.js"]) assert.ok(!marked.includes(lazy), lazy);
});

test("the bundle exports what the modules export, with the same names and arities", async () => {
  for (const path of MODULES) {
    const source = await import(pathToFileURL(ROOT + path).href);
    for (const [name, value] of Object.entries(source)) {
      assert.ok(name in bundle, `${path}: ${name}`);
      assert.equal(typeof bundle[name], typeof value, `${path}: ${name}`);
      if (typeof value === "function") {
        assert.deepEqual([bundle[name].name, bundle[name].length], [value.name, value.length], `${path}: ${name}`);
      }
    }
  }
});

test("an @eager module has no function declarations and no methods in its class bodies; the others are as written", () => {
  const seen = new Set();
  for (const { module, statement, sf } of sections()) {
    assert.ok(module, "every statement comes after a module's header");
    seen.add(module);
    const where = `${module}: ${statement.getText(sf).split("\n")[0]}`;
    if (eager(module)) {
      assert.ok(!ts.isFunctionDeclaration(statement), where);
      if (ts.isClassDeclaration(statement)) {
        assert.deepEqual(statement.members.filter((m) => !ts.isConstructorDeclaration(m)).map((m) => m.name.getText(sf)), [], where);
      }
      if (ts.isVariableStatement(statement)) {
        for (const d of statement.declarationList.declarations) {
          // `const f = (function f(…) {…});`: the parentheses are what makes V8 compile it at load.
          const init = d.initializer;
          if (init && ts.isFunctionExpression(init)) assert.fail(`${where}: not in parentheses`);
          if (init && ts.isParenthesizedExpression(init) && ts.isFunctionExpression(init.expression)) {
            assert.equal(init.expression.name?.text, d.name.text, where);
            assert.equal(statement.declarationList.flags & ts.NodeFlags.Const, ts.NodeFlags.Const, where);
          }
        }
      }
    } else {
      assert.ok(!(ts.isExpressionStatement(statement) && /^Object\.defineProperties\(/.test(statement.getText(sf))), where);
    }
  }
  assert.deepEqual([...seen].sort(), [...MODULES].sort());
  assert.ok(sections().some(({ module, statement }) => module === "summaries.js" && ts.isFunctionDeclaration(statement)), "summaries.js stays lazy");
});

test("methods moved out of an @eager module's classes have the descriptors the class gave them", async () => {
  let classes = 0;
  for (const path of MODULES.filter(eager)) {
    const source = await import(pathToFileURL(ROOT + path).href);
    for (const [name, value] of Object.entries(source)) {
      if (typeof value !== "function" || !/^class\b/.test(Function.prototype.toString.call(value))) continue;
      classes++;
      const before = Object.getOwnPropertyDescriptors(value.prototype), after = Object.getOwnPropertyDescriptors(bundle[name].prototype);
      assert.deepEqual(Object.keys(after).sort(), Object.keys(before).sort(), name);
      for (const [key, d] of Object.entries(before)) {
        const e = after[key];
        for (const flag of ["enumerable", "writable", "configurable"]) assert.equal(e[flag], d[flag], `${name}.${key}.${flag}`);
        for (const part of ["value", "get", "set"]) {
          assert.equal(typeof e[part], typeof d[part], `${name}.${key}.${part}`);
          if (typeof d[part] === "function" && key !== "constructor") {
            // (A getter moved out is named `x`, not `get x`: only its stack frames show it.)
            const named = part === "value" ? e[part].name : `${part} ${e[part].name}`;
            assert.deepEqual([named, e[part].length], [d[part].name, d[part].length], `${name}.${key}.${part}`);
          }
        }
      }
    }
  }
  assert.ok(classes >= 3, `${classes} classes`);
});
