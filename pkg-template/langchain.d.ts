// Typings of chat-history-reducer/langchain (langchain.js), written against the `langchain`
// and `@langchain/core` packages the app has installed.
import type { BaseMessage } from "@langchain/core/messages";
import type { StructuredTool } from "@langchain/core/tools";
import type { AgentMiddleware } from "langchain";
import type { OffloadStore, ReduceConfig } from "chat-history-reducer";

export interface ContextWindowMiddlewareConfig extends ReduceConfig<BaseMessage> {
  /**
   * `"state"` (default): before each model call, reduce the agent's stored messages when a
   * trigger fires and write them back. `"call"`: reduce each call's messages, the state
   * untouched. (The adapter's own option: the core never sees it.)
   */
  mode?: "state" | "call";
}

/**
 * An agent middleware (`createMiddleware`) that keeps the conversation within the budget.
 * With `config.store` it registers `contextReloadTool(store)` as the agent's tool.
 *
 * ```ts
 * createAgent({ model, tools, middleware: [contextWindowMiddleware({ maxTokens: 100_000, strategy: "progressive", store })] });
 * ```
 */
export function contextWindowMiddleware(config: ContextWindowMiddlewareConfig): AgentMiddleware;

/**
 * The `context_reload` tool: answers with the originals that `store.get(id)` holds for an
 * offload id, as JSON text, or a sentence saying the id is unknown.
 */
export function contextReloadTool(store: Pick<OffloadStore<unknown>, "get">): StructuredTool;
