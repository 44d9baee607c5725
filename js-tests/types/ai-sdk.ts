// chat-history-reducer/ai-sdk as an AI SDK user writes it, without casts: type-checked with
// `tsc --strict` against AI SDK 5 and against AI SDK 7 (the same file: the adapter's types
// follow the `ai` package installed).
import { generateText, streamText, stepCountIs, wrapLanguageModel, type LanguageModelMiddleware, type ModelMessage, type Tool } from "ai";
import { contextReloadTool, contextWindowMiddleware, contextWindowStep, type PromptMessage } from "chat-history-reducer/ai-sdk";
import type { OffloadStore } from "chat-history-reducer";

declare const baseModel: Parameters<typeof wrapLanguageModel>[0]["model"];
declare const messages: ModelMessage[];

// One store for the middleware's offloads and the reload tool: a Map, or any get/set store.
const store = new Map<string, PromptMessage[]>();
const kv: OffloadStore<PromptMessage> = { get: async (id) => store.get(id), set: async (id, m) => void store.set(id, m) };

const middleware: LanguageModelMiddleware = contextWindowMiddleware({ strategy: "progressive", maxTokens: 100_000, store });
const model = wrapLanguageModel({ model: baseModel, middleware: [middleware, contextWindowMiddleware({ maxTokens: 8000, store: kv, reservedTokens: 500 })] });
const reload: Tool<{ id: string }, PromptMessage[] | string> = contextReloadTool(store);

export async function generate(): Promise<string> {
  const result = await generateText({ model, messages, tools: { context_reload: reload }, stopWhen: stepCountIs(5) });
  return result.text;
}

export async function stream(): Promise<string> {
  const result = streamText({ model, messages, tools: { context_reload: contextReloadTool(kv) }, stopWhen: stepCountIs(5) });
  return await result.text;
}

export async function steps(): Promise<string> {
  const result = await generateText({
    model: baseModel,
    messages,
    tools: { context_reload: contextReloadTool(new Map()) },
    prepareStep: contextWindowStep({ strategy: "progressive", maxTokens: 100_000, store: new Map<string, ModelMessage[]>() }),
    stopWhen: stepCountIs(5),
  });
  return result.text;
}

// The config is the package's: a misspelt option or the LangChain adapter's `mode` is an error.
// @ts-expect-error keepLats is not an option
contextWindowMiddleware({ maxTokens: 1000, keepLats: 2 });
// @ts-expect-error mode belongs to the LangChain adapter
contextWindowStep({ maxTokens: 1000, mode: "call" });
