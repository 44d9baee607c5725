// Cloudflare Workers / workerd entry: the runtime hands the .wasm over as a compiled
// WebAssembly.Module, instantiated once at import and warmed up.
import wasmModule from "./dist/chat_history_reducer_bg.wasm";
import { initSync, reduceSync } from "./dist/chat_history_reducer.js";

initSync({ module: wasmModule });
// One small reduction right after initSync: V8 compiles then the wasm and JavaScript functions
// every call runs (~3 ms), rather than during the app's first call (which then takes well
// under a millisecond). Its messages are objects of its own, too few to be kept: nothing an
// app passes later meets what it left behind. An error is swallowed on purpose (the import
// must not fail for it; the first call would compile what it runs); the package tests make
// the same call and check it succeeds.
try {
  reduceSync([
    { role: "system", content: "Answer briefly." },
    { role: "user", content: "What is the weather in Lisbon?" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_w", type: "function", function: { name: "weather", arguments: "{\"city\":\"Lisbon\"}" } }] },
    { role: "tool", tool_call_id: "call_w", content: "{\"sky\":\"sunny\",\"high\":18}" },
    { role: "assistant", content: "Sunny, 18 °C. ☀️" },
    { role: "user", content: "And tomorrow?" },
  ], { maxTokens: 24 });
} catch {
  // a warm-up only
}

export * from "./dist/chat_history_reducer.js";
export { default } from "./dist/chat_history_reducer.js";
