// Cloudflare Workers / workerd entry: the runtime hands the .wasm over as a compiled
// WebAssembly.Module, instantiated once at import and warmed up (dist/warm.js).
import wasmModule from "./dist/chat_history_reducer_bg.wasm";
import { initSync, reduceSync } from "./dist/chat_history_reducer.js";
import { warmUp } from "./dist/warm.js";

initSync({ module: wasmModule });
warmUp(reduceSync);

export * from "./dist/chat_history_reducer.js";
export { default } from "./dist/chat_history_reducer.js";
