// Node entry: loads the .wasm from disk at import, so every function is ready to call.
import { readFileSync } from "node:fs";
import { initSync } from "./dist/chat_history_reducer.js";

initSync({ module: readFileSync(new URL("./dist/chat_history_reducer_bg.wasm", import.meta.url)) });

export * from "./dist/chat_history_reducer.js";
export { default } from "./dist/chat_history_reducer.js";
