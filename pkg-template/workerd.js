// Cloudflare Workers / workerd entry: the runtime hands the .wasm over as a compiled
// WebAssembly.Module, instantiated once at import.
import wasmModule from "./dist/chat_history_reducer_bg.wasm";
import { initSync } from "./dist/chat_history_reducer.js";

initSync({ module: wasmModule });

export * from "./dist/chat_history_reducer.js";
export { default } from "./dist/chat_history_reducer.js";
