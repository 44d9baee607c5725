// Node entry: loads the .wasm from disk at import, so every function is ready to call, and
// warms it up (dist/warm.js).
import { readFileSync } from "node:fs";
import { initSync, reduceSync } from "./dist/chat_history_reducer.js";
import { warmUp } from "./dist/warm.js";

initSync({ module: readFileSync(new URL("./dist/chat_history_reducer_bg.wasm", import.meta.url)) });
warmUp(reduceSync);

export * from "./dist/chat_history_reducer.js";
export { default } from "./dist/chat_history_reducer.js";
