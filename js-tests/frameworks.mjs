// The frameworks the adapter tests run with, at the versions the dev tree pins: AI SDK 5
// (`ai`) and AI SDK 7 (`ai-v7`, an npm alias), LangChain v1. scripts/test.sh links them
// into the scratch consumer from the dev tree's node_modules.
import { cpSync, existsSync, mkdirSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * chat-history-reducer/ai-sdk as a user of AI SDK 7 gets it. The adapter imports "ai" from
 * where the package is installed, which here is AI SDK 5; so a project of its own gets a copy
 * of the installed package beside an `ai` that is AI SDK 7 (the `ai-v7` alias's files).
 */
export async function aiSdk7Adapter() {
  const project = join(HERE, "ai-v7-project");
  const modules = join(project, "node_modules");
  rmSync(project, { recursive: true, force: true });
  mkdirSync(modules, { recursive: true });
  const installed = join(HERE, "node_modules", "chat-history-reducer");
  const v7 = join(HERE, "node_modules", "ai-v7");
  if (!existsSync(installed) || !existsSync(v7)) {
    throw new Error(`the AI SDK 7 tests need ${installed} and ${v7} (scripts/test.sh package links ai-v7 from the dev tree)`);
  }
  cpSync(installed, join(modules, "chat-history-reducer"), { recursive: true, dereference: true });
  symlinkSync(realpathSync(v7), join(modules, "ai"), "dir");
  return import(pathToFileURL(join(modules, "chat-history-reducer", "ai-sdk.js")).href);
}

/** A large tool result (about 3,300 tokens) ending in a marker that its preview, the
 * head of the text, does not show. */
export function report(k) {
  return `report ${k}: ` + "lorem ipsum dolor sit amet ".repeat(600) + ` END-OF-REPORT-${k}`;
}

/** The offload ids a text shows (`ctx_` and 16 hex digits), in order. */
export function offloadIds(text) {
  return [...new Set(text.match(/ctx_[0-9a-f]{16}/g) ?? [])];
}
