// Declares the message type parameter `M` of the package's functions and of ChatHistory in
// the .d.ts wasm-bindgen wrote: `node scripts/generics.mjs <package dir>` (run by build.sh).
//
// The types of the exports are written once, in src/wasm/*.rs, as wasm-bindgen attributes
// (`unchecked_param_type = "readonly M[]"`, `unchecked_return_type = "ReduceResult<M>"`, …),
// and the types they name in src/wasm/types.d.ts. wasm-bindgen has no attribute for a
// type parameter, so this adds the declaration, `<M extends object = Message>`, and
// nothing else: to every `export function` and `static` method whose signature uses `M`,
// and to every exported class whose instance members do. `M` is the caller's message type
// (their own interfaces, LangChain's BaseMessage, the AI SDK's ModelMessage…), inferred from
// the messages given, and `Message` (the union of the formats of SPEC §2) when none are.
// Throws, failing the build, when a signature that uses `M` cannot be given it.
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

export const PARAM = "<M extends object = Message>";
const USES_M = /\bM\b/;

/** Returns the declarations with `M` declared where it is used, and the names given it. */
export function declareGenerics(dts) {
  const lines = dts.split("\n");
  const named = [];
  let cls = null; // { line, name, uses } of the exported class being read
  const isCode = (line) => !/^\s*(\/\*\*|\*|\/\/)/.test(line);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let m;
    if ((m = /^export (?:declare )?class (\w+) \{$/.exec(line))) {
      cls = { line: i, name: m[1], uses: false };
    } else if (cls && line === "}") {
      if (cls.uses) {
        lines[cls.line] = lines[cls.line].replace(`class ${cls.name} {`, `class ${cls.name}${PARAM} {`);
        named.push(cls.name);
      }
      cls = null;
    } else if ((m = /^export (?:declare )?function (\w+)\(/.exec(line)) && USES_M.test(line)) {
      lines[i] = line.replace(`function ${m[1]}(`, `function ${m[1]}${PARAM}(`);
      named.push(m[1]);
    } else if (cls && (m = /^\s+static (\w+)\(/.exec(line)) && USES_M.test(line)) {
      lines[i] = line.replace(`static ${m[1]}(`, `static ${m[1]}${PARAM}(`);
      named.push(`${cls.name}.${m[1]}`);
    } else if (cls && isCode(line) && USES_M.test(line)) {
      cls.uses = true;
    } else if (!cls && isCode(line) && /^export (?:declare )?(?:function|const|let)\b/.test(line) && USES_M.test(line)) {
      throw new Error(`generics: cannot declare M in: ${line}`);
    }
  }
  if (named.length === 0) throw new Error("generics: no signature uses M (did the attributes in src/wasm change?)");
  return { dts: lines.join("\n"), named };
}

if (import.meta.url === pathToFileURL(resolve(process.argv[1] ?? "")).href) {
  const file = join(process.argv[2] ?? "pkg", "dist", "chat_history_reducer.d.ts");
  const { dts, named } = declareGenerics(readFileSync(file, "utf8"));
  writeFileSync(file, dts);
  console.log(`[generics] ${PARAM} declared on: ${named.join(", ")}`);
}
