/// <reference lib="esnext.disposable" />
// The package's typings: everything wasm-bindgen declares, with the classes and values that
// the boundary's module defines (ReduceError, reloadTool) typed by their own declarations.
export * from "./dist/chat_history_reducer.js";
export { default } from "./dist/chat_history_reducer.js";
export { ReduceError, reloadTool } from "./dist/boundary.js";
