// The message types users have (LangChain.js's BaseMessage and its classes, the AI SDK's
// ModelMessage and UIMessage, an app's own interface), through every function: each is
// accepted as it is, and what comes back is of the caller's own type (`M[]`, not
// `Message[]`). Type-checked with `tsc --strict --noEmit` beside usage.ts.
import { reduce, reduceSync, shouldReduce, estimateTokens, analyze, calibrate, ChatHistory, reloadTool } from "chat-history-reducer";
import type { Analysis, ChatHistoryState, ReduceConfig, ReduceResult, SummarizeRequest, Summarizer } from "chat-history-reducer";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { jsonSchema, tool, type ModelMessage, type UIMessage } from "ai";

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<T extends true>(): T | void {}

/** Every function and ChatHistory on `messages` of type `M`, the results kept as `M`. */
async function everyFunction<M extends object>(messages: M[], one: M, config: ReduceConfig<M>): Promise<void> {
  const r: ReduceResult<M> = reduceSync(messages, config);
  const back: M[] = r.messages;
  const summary: M | undefined = r.summary;
  const offloaded: Record<string, M[]> = r.offloaded;
  const later: M[] = (await reduce(messages, config)).messages;
  const needed: boolean = shouldReduce(messages, config);
  const tokens: number = estimateTokens(messages, config) + estimateTokens(one, config) + calibrate(messages, 100, config);
  const analysis: Analysis = analyze(messages, config);
  const history = new ChatHistory(config, messages);
  history.push(one, one);
  const sent: M[] = await history.prepare();
  const all: M[] = history.original.concat(history.messages, history.reload("ctx_0") ?? []);
  const state: ChatHistoryState<M> = history.toJSON();
  const again: ChatHistory<M> = ChatHistory.fromJSON(state, config);
  console.log(back, summary, offloaded, later, needed, tokens, analysis, sent, all, again);
}

// ---- LangChain.js -----------------------------------------------------------------------
const lc: BaseMessage[] = [new SystemMessage("Be brief."), new HumanMessage("Hi"), new AIMessage("Hello"), new ToolMessage({ content: "ok", tool_call_id: "c1" })];
const lcConfig: ReduceConfig<BaseMessage> = {
  maxTokens: 100,
  countTokens: (m: BaseMessage, i: number) => String(m.content).length + i * 0,
  summarizer: async (request: SummarizeRequest<BaseMessage>) => request.messages.map((m) => m.text).join("\n"),
};

export async function langchain(): Promise<void> {
  const r = reduceSync(lc, { maxTokens: 100 });
  expectType<Equals<typeof r, ReduceResult<BaseMessage>>>();
  const back: BaseMessage[] = r.messages;
  const later: BaseMessage[] = (await reduce(lc, lcConfig)).messages;
  const needed: boolean = shouldReduce(lc, { maxTokens: 100, countTokens: (m) => m.text.length });
  const one: number = estimateTokens(new HumanMessage("x")) + estimateTokens(lc);
  const a: Analysis = analyze(lc, { maxTokens: 100 });
  const history = new ChatHistory({ maxTokens: 100 }, lc);
  history.push(new HumanMessage("x"), new AIMessage("y"));
  const sent: BaseMessage[] = await history.prepare();
  const humans: HumanMessage[] = reduceSync([new HumanMessage("a"), new HumanMessage("b")]).messages;
  // inline callbacks see the caller's messages
  reduce(lc, { strategy: "summarize", maxTokens: 100, summarizer: ({ messages }) => messages.map((m) => m.getType()).join() });
  console.log(back, later, needed, one, a, sent, humans);
  await everyFunction(lc, lc[1], lcConfig);
}

// ---- AI SDK -----------------------------------------------------------------------------
declare const model: ModelMessage[];
declare const ui: UIMessage[];

export async function aiSdk(): Promise<void> {
  const r = reduceSync(model, { maxTokens: 100 });
  expectType<Equals<typeof r.messages, ModelMessage[]>>();
  const back: ModelMessage[] = r.messages;
  const later: ModelMessage[] = (await reduce(model, { maxTokens: 100, countTokens: (m) => (typeof m.content === "string" ? m.content.length : 1) })).messages;
  const uiBack: UIMessage[] = reduceSync(ui, { targetMessages: 10 }).messages;
  const uiLater: UIMessage[] = (await reduce(ui, { strategy: "summarize", summarizer: (req) => `${req.messages[0]?.parts.length}` })).messages;
  const needed: boolean = shouldReduce(model) || shouldReduce(ui);
  const tokens: number = estimateTokens(model[0]!) + estimateTokens(ui) + estimateTokens(ui[0]!);
  const a: Analysis = analyze(model);
  const history = new ChatHistory<UIMessage>({ maxTokens: 100 });
  history.push(...ui);
  const sent: UIMessage[] = await history.prepare();
  const modelHistory = new ChatHistory({ maxTokens: 100 }, model);
  modelHistory.push({ role: "user", content: "Hi" });
  const modelSent: ModelMessage[] = modelHistory.messages;
  // The reload tool as docs/api.md registers it (JSON Schema 7 for jsonSchema, no cast).
  const reload = tool({
    description: reloadTool.description,
    inputSchema: jsonSchema<{ id: string }>(reloadTool.parameters),
    execute: async ({ id }) => modelHistory.reload(id) ?? [],
  });
  console.log(back, later, uiBack, uiLater, needed, tokens, a, sent, modelSent, reload);
  await everyFunction(model, model[0]!, { maxTokens: 100 });
  await everyFunction(ui, ui[0]!, { maxTokens: 100 });
}

// ---- an app's own message type: an interface (no index signature) ----------------------
interface ChatMessage {
  id: string;
  role: "user" | "assistant" | "system";
  content: string;
}
declare const mine: ChatMessage[];

export async function ownInterface(): Promise<void> {
  const r = reduceSync(mine, { maxTokens: 100 });
  expectType<Equals<typeof r, ReduceResult<ChatMessage>>>();
  const back: ChatMessage[] = r.messages;
  const later: ChatMessage[] = (await reduce(mine, { maxTokens: 100, countTokens: (m) => m.content.length })).messages;
  const needed: boolean = shouldReduce(mine, { maxTokens: 100 });
  const tokens: number = estimateTokens(mine[0]!) + estimateTokens(mine);
  const a: Analysis = analyze(mine);
  const history = new ChatHistory({ maxTokens: 100 }, mine);
  history.push({ id: "2", role: "user", content: "more" });
  const sent: ChatMessage[] = await history.prepare();
  const summarizer: Summarizer<ChatMessage> = (req) => req.messages.map((m) => m.content).join(" ");
  console.log(back, later, needed, tokens, a, sent, summarizer);
  await everyFunction(mine, mine[0]!, { maxTokens: 100, summarizer });
}

// ---- readonly arrays in, mutable arrays of the same type out ----------------------------
declare const frozen: readonly ChatMessage[];
const fromFrozen: ChatMessage[] = reduceSync(frozen).messages;
console.log(fromFrozen);
