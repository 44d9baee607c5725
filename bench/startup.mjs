// Start-up of the WebAssembly module in a fresh process: compile the .wasm
// (`new WebAssembly.Module`), instantiate it (`initSync({module})` of the web glue), then the
// first `reduceSync` result. run.mjs starts this file a few times and takes medians; on its
// own: `node bench/startup.mjs [path/to/dist/chat_history_reducer.js]` prints one JSON line;
// with `--entry` after the path, the import of the package's Node entry and the first call.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const glue = resolve(process.argv[2] ?? new URL("../pkg/dist/chat_history_reducer.js", import.meta.url).pathname);
const wasmPath = glue.replace(/\.js$/, "_bg.wasm");

// A small agent conversation: system, user, a tool call with its result, an answer, a user.
const messages = [
  { role: "system", content: "You are a helpful assistant. Use the tools." },
  { role: "user", content: "What is the weather in Lisbon and in Porto?" },
  { role: "assistant", content: null, tool_calls: [
    { id: "call_a", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Lisbon\"}" } },
    { id: "call_b", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Porto\"}" } }] },
  { role: "tool", tool_call_id: "call_a", content: "{\"high\":18,\"low\":11,\"sky\":\"sunny\"}" },
  { role: "tool", tool_call_id: "call_b", content: "{\"high\":16,\"low\":10,\"sky\":\"cloudy\"}" },
  { role: "assistant", content: "Lisbon: sunny, 18 °C. Porto: cloudy, 16 °C." },
  { role: "user", content: "And tomorrow? 🙏" },
];

if (process.argv[3] === "--entry") {
  // The package's Node entry instead, as an app imports it: it runs initSync and a warm-up
  // reduction at import.
  const entry = resolve(glue, "../../node.js");
  const t0 = performance.now();
  const api = await import(pathToFileURL(entry).href);
  const t1 = performance.now();
  const result = api.reduceSync(messages, { maxTokens: 40 });
  const t2 = performance.now();
  if (!result || !Array.isArray(result.messages)) throw new Error("reduceSync returned no result");
  process.stdout.write(JSON.stringify({ entryImportMs: t1 - t0, entryFirstCallMs: t2 - t1, kept: result.kept.length }) + "\n");
  process.exit(0);
}

const t0 = performance.now();
const api = await import(pathToFileURL(glue).href);
const bytes = readFileSync(wasmPath);
const t1 = performance.now();
const module = new WebAssembly.Module(bytes);
const t2 = performance.now();
api.initSync({ module });
const t3 = performance.now();
const result = api.reduceSync(messages, { maxTokens: 40 });
const t4 = performance.now();
if (!result || !Array.isArray(result.messages)) throw new Error("reduceSync returned no result");

process.stdout.write(JSON.stringify({
  importAndReadMs: t1 - t0,
  compileMs: t2 - t1,
  instantiateMs: t3 - t2,
  firstCallMs: t4 - t3,
  initToFirstResultMs: t4 - t1,
  kept: result.kept.length,
}) + "\n");
