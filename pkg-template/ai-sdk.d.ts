// Typings of chat-history-reducer/ai-sdk (ai-sdk.js), written against the `ai` package the
// app has installed: AI SDK 5 and 7 name these types alike.
import type { LanguageModelMiddleware, ModelMessage, Tool } from "ai";
import type { OffloadStore, ReduceConfig } from "chat-history-reducer";

/**
 * A message of the prompt that a model call gets and the middleware reduces (the
 * model-level prompt: `LanguageModelV2Prompt` in AI SDK 5, `LanguageModelV4Prompt` in 7).
 */
export type PromptMessage = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0]["params"]["prompt"][number];

/**
 * A middleware that reduces every call's prompt, generate and stream alike, before the
 * model sees it. System messages stay; the tools' schemas (and a JSON response schema) are
 * counted into `reservedTokens` unless the config sets it. Offloads go to `config.store`.
 *
 * ```ts
 * const model = wrapLanguageModel({ model: openai("gpt-4.1"), middleware: contextWindowMiddleware({ maxTokens: 100_000, strategy: "progressive", store }) });
 * ```
 */
export function contextWindowMiddleware(config: ReduceConfig<PromptMessage>): LanguageModelMiddleware;

/** What `generateText` / `streamText` hand a `prepareStep` function that the step reads. */
export interface StepOptions {
  messages: ModelMessage[];
  /** AI SDK 7: the instructions sent beside the messages (counted into `reservedTokens`). */
  instructions?: unknown;
}

/**
 * A `prepareStep` function: the reduced `messages` when a trigger fires, `undefined`
 * otherwise (the step then sends its messages as they are).
 *
 * ```ts
 * streamText({ model, tools, messages, prepareStep: contextWindowStep({ maxTokens: 100_000 }) });
 * ```
 */
export function contextWindowStep(config: ReduceConfig<ModelMessage>): (options: StepOptions) => Promise<{ messages: ModelMessage[] } | undefined>;

/**
 * The `context_reload` tool: returns the originals that `store.get(id)` holds for an offload
 * id, or a sentence saying the id is unknown.
 *
 * ```ts
 * tools: { context_reload: contextReloadTool(store), ...tools }
 * ```
 */
export function contextReloadTool<M = unknown>(store: Pick<OffloadStore<M>, "get">): Tool<{ id: string }, M[] | string>;
