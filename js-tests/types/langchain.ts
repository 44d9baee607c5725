// chat-history-reducer/langchain as a LangChain v1 user writes it, without casts:
// type-checked with `tsc --strict`.
import { createAgent } from "langchain";
import { fakeModel } from "@langchain/core/testing";
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { StructuredTool } from "@langchain/core/tools";
import { contextReloadTool, contextWindowMiddleware, type ContextWindowMiddlewareConfig } from "chat-history-reducer/langchain";

const store = new Map<string, BaseMessage[]>();
const config: ContextWindowMiddlewareConfig = { mode: "call", strategy: "progressive", maxTokens: 100_000, store };

export const agent = createAgent({
  model: fakeModel(),
  tools: [],
  systemPrompt: "Be brief.",
  middleware: [contextWindowMiddleware({ maxTokens: 100_000, strategy: "progressive", store }), contextWindowMiddleware(config)],
});

export async function run(): Promise<BaseMessage[]> {
  const out = await agent.invoke({ messages: [new HumanMessage("hi")] });
  return out.messages;
}

export const reload: StructuredTool = contextReloadTool(store);
export const withOwnTool = createAgent({ model: fakeModel(), tools: [contextReloadTool(store)], middleware: [contextWindowMiddleware({ maxTokens: 8000, mode: "state" })] });

// @ts-expect-error mode is "state" or "call"
contextWindowMiddleware({ maxTokens: 1000, mode: "both" });
