// Type-checked with `tsc --strict --noEmit` in a scratch project where the package is
// installed: every export used as SPEC.md describes it, with its types pinned exactly.
import init, {
  initSync,
  reduce,
  reduceSync,
  shouldReduce,
  estimateTokens,
  analyze,
  ChatHistory,
  ReduceError,
  reloadTool,
} from "chat-history-reducer";
import type {
  Analysis,
  AnthropicMessage,
  ChatHistoryState,
  CompressionEvent,
  ErrorCode,
  Format,
  GeminiContent,
  InitOutput,
  Message,
  MessageAnalysis,
  OpenAIMessage,
  ReduceConfig,
  ReduceEvent,
  ReduceResult,
  SummarizeRequest,
  Summarizer,
  Tokenizer,
  VercelMessage,
} from "chat-history-reducer";

// ---- exact-type assertions -------------------------------------------------------------
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<T extends true>(): T | void {}

// §1: the functions' signatures, generic over the caller's message type M (`Message`, the
// union of the formats, when none is given; real.ts has LangChain's, the AI SDK's and an
// interface)
expectType<Equals<typeof reduce, <M extends object = Message>(messages: readonly M[], config?: ReduceConfig<M>) => Promise<ReduceResult<M>>>>();
expectType<Equals<typeof reduceSync, <M extends object = Message>(messages: readonly M[], config?: ReduceConfig<M>) => ReduceResult<M>>>();
expectType<Equals<typeof shouldReduce, <M extends object = Message>(messages: readonly M[], config?: ReduceConfig<M>) => boolean>>();
expectType<Equals<typeof estimateTokens, <M extends object = Message>(messages: M | readonly M[], config?: ReduceConfig<M>) => number>>();
expectType<Equals<typeof analyze, <M extends object = Message>(messages: readonly M[], config?: ReduceConfig<M>) => Analysis>>();
expectType<Equals<ReturnType<typeof reduceSync<OpenAIMessage>>, ReduceResult<OpenAIMessage>>>();
expectType<Equals<NonNullable<ReduceConfig<GeminiContent>["countTokens"]>, (message: GeminiContent, index: number) => number>>();
expectType<Equals<SummarizeRequest<AnthropicMessage>["messages"], AnthropicMessage[]>>();

// §10: the error codes
expectType<Equals<ErrorCode,
  | "INVALID_MESSAGES" | "INVALID_MESSAGE" | "INVALID_CONFIG" | "SUMMARIZER_REQUIRED" | "SUMMARIZER_REQUIRES_ASYNC"
  | "SUMMARIZER_FAILED" | "SUMMARY_TOO_LARGE" | "BUDGET_UNREACHABLE" | "ABORTED">>();
expectType<Equals<ReduceError["code"], ErrorCode>>();
expectType<Equals<ReduceError["index"], number | undefined>>();
expectType<Equals<ReduceError["field"], string | undefined>>();

// §2 and §4: formats and options
expectType<Equals<Format, "openai" | "openai-responses" | "anthropic" | "vercel" | "vercel-ui" | "gemini" | "langchain">>();
expectType<Equals<NonNullable<ReduceConfig["strategy"]>, "truncate" | "priority" | "summarize" | "progressive">>();
expectType<Equals<NonNullable<ReduceConfig["format"]>, "auto" | Format>>();
expectType<Equals<NonNullable<ReduceConfig["startOn"]>, "user" | "any">>();
expectType<Equals<NonNullable<ReduceConfig["summaryMode"]>, "single" | "layered">>();
expectType<Equals<NonNullable<ReduceConfig["summaryRole"]>, "user" | "system" | "assistant">>();
expectType<Equals<NonNullable<ReduceConfig["onSummarizerError"]>, "fallback" | "throw">>();
expectType<Equals<NonNullable<ReduceConfig["onOverBudget"]>, "bestEffort" | "error">>();
expectType<Equals<NonNullable<ReduceConfig["estimator"]>, "classes" | "length">>();

// §6: the summarizer's request
expectType<Equals<SummarizeRequest["kind"], "history" | "toolRun" | "round" | "largeMessage" | "currentRound">>();
expectType<Equals<SummarizeRequest["messages"], Message[]>>();
expectType<Equals<SummarizeRequest["previousSummary"], string | undefined>>();
expectType<Equals<SummarizeRequest["targetTokens"], number>>();
expectType<Equals<SummarizeRequest["signal"], AbortSignal | undefined>>();

// §8: the result
expectType<Equals<ReduceResult["messages"], Message[]>>();
expectType<Equals<ReduceResult["reduced"], boolean>>();
expectType<Equals<ReduceResult["removedCount"], number>>();
expectType<Equals<ReduceResult["kept"], number[]>>();
expectType<Equals<ReduceResult["dropped"], number[]>>();
expectType<Equals<ReduceResult["summarized"], number[]>>();
expectType<Equals<ReduceResult["offloaded"], Record<string, Message[]>>>();
expectType<Equals<ReduceResult["summary"], Message | undefined>>();
expectType<Equals<ReduceResult["tokensBefore"], number>>();
expectType<Equals<ReduceResult["tokensAfter"], number>>();
expectType<Equals<ReduceResult["overBudget"], boolean>>();
expectType<Equals<ReduceResult["events"], CompressionEvent[]>>();

// §1: what analyze says about each message
expectType<Equals<Analysis["messages"], MessageAnalysis[]>>();
expectType<Equals<Analysis["format"], Format>>();
expectType<Equals<Analysis["tokenizer"], Tokenizer | undefined>>();
expectType<Equals<ReduceConfig["tokenizer"], "auto" | "o200k" | "cl100k" | "gemma" | "llama3" | undefined>>();
expectType<Equals<Pick<MessageAnalysis, "index" | "tokens" | "group" | "round">, { index: number; tokens: number; group: number; round: number }>>();
expectType<Equals<MessageAnalysis["protected"], boolean>>();

// §7: ChatHistory
expectType<Equals<ConstructorParameters<typeof ChatHistory<Message>>, [config: ReduceConfig, messages?: readonly Message[]]>>();
expectType<Equals<ChatHistory<VercelMessage>["messages"], VercelMessage[]>>();
expectType<Equals<ChatHistory["messages"], Message[]>>();
expectType<Equals<ChatHistory["original"], Message[]>>();
// (SPEC's prepare(), with an optional signal for that call's summarizer.)
expectType<Equals<ChatHistory["prepare"], (options?: { signal?: AbortSignal }) => Promise<Message[]>>>();
expectType<Equals<ChatHistory["push"], (...messages: Message[]) => void>>();
expectType<Equals<ChatHistory["reload"], (id: string) => Message[] | undefined>>();
expectType<Equals<ChatHistory["events"], CompressionEvent[]>>();
expectType<Equals<ReturnType<ChatHistory["stats"]>, { reductions: number; summarizerCalls: number; tokensSaved: number; compressionRatio: number; overBudget: boolean; edits: number; undone: number }>>();
expectType<Equals<typeof ChatHistory.fromJSON, <M extends object = Message>(state: ChatHistoryState<M>, config: ReduceConfig<M>, options?: { original?: readonly M[] }) => ChatHistory<M>>>();
expectType<Equals<ChatHistory["toJSON"], (options?: { original?: "omit" | "include" }) => ChatHistoryState<Message>>>();
expectType<Equals<ChatHistory["rewind"], (index: number) => void>>();
expectType<Equals<ChatHistory["remove"], (index: number) => void>>();
expectType<Equals<ChatHistory["clear"], () => void>>();

// §1: the context_reload tool definition
expectType<Equals<typeof reloadTool.name, "context_reload">>();
expectType<Equals<typeof reloadTool.description, string>>();
expectType<Equals<typeof reloadTool.parameters.type, "object">>();
expectType<Equals<typeof reloadTool.parameters.required, ["id"]>>();
// Handed to each provider as docs/api.md shows, without a cast. Anthropic's `input_schema`
// is its SDK's `Tool.InputSchema` (@anthropic-ai/sdk 1.14, resources/messages), which
// requires `type: "object"`; OpenAI's `parameters` is `{ [key: string]: unknown }`.
interface AnthropicInputSchema { type: "object"; properties?: unknown | null; required?: Array<string> | null; [k: string]: unknown }
const anthropicTool: { name: string; description?: string; input_schema: AnthropicInputSchema } =
  { name: reloadTool.name, description: reloadTool.description, input_schema: reloadTool.parameters };
const openaiTool: { type: "function"; function: { name: string; description?: string; parameters?: { [key: string]: unknown } } } =
  { type: "function", function: reloadTool };
console.log(anthropicTool, openaiTool);

// web-target loading
expectType<Equals<ReturnType<typeof init>, Promise<InitOutput>>>();

// ---- real use, as an app would write it -------------------------------------------------

const openai: OpenAIMessage[] = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "Weather in Paris?" },
  { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } }] },
  { role: "tool", tool_call_id: "c1", content: '{"c":12}' },
  { role: "assistant", content: "12 °C.", cache_control: { type: "ephemeral" } }, // unknown fields are fine
];
const anthropic: AnthropicMessage[] = [
  { role: "user", content: "Hi" },
  { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "lookup", input: { q: 1 } }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "found" }] },
];
const vercel: VercelMessage[] = [
  { role: "user", content: [{ type: "text", text: "Hi" }] },
  { role: "assistant", content: [{ type: "tool-call", toolCallId: "x", toolName: "t", input: {} }] },
  { role: "tool", content: [{ type: "tool-result", toolCallId: "x", toolName: "t", output: { type: "text", value: "ok" } }] },
];
const gemini: GeminiContent[] = [
  { role: "user", parts: [{ text: "Hi" }] },
  { role: "model", parts: [{ functionCall: { name: "f", args: {} } }] },
  { role: "user", parts: [{ functionResponse: { name: "f", response: { ok: true } } }] },
];

const summarizer: Summarizer = async (request: SummarizeRequest) => {
  request.signal?.throwIfAborted();
  const text = `${request.kind}: ${request.messages.length} messages${request.previousSummary ? " (and before)" : ""}`;
  return request.targetTokens > 50 ? { text, usage: { inputTokens: 10, outputTokens: 5 } } : text;
};

const events: ReduceEvent[] = [];
const config: ReduceConfig = {
  strategy: "summarize",
  format: "auto",
  maxTokens: 8000,
  targetTokens: 6000,
  targetMessages: 40,
  thresholdMessages: 5,
  keepSystem: true,
  keepLast: 2,
  startOn: "user",
  keepRecentPairs: 2,
  tokenCounts: [12, null, undefined, 40],
  countTokens: (message: Message, index: number) => JSON.stringify(message).length / 4 + index * 0,
  estimator: "classes",
  estimatorWeights: { letter: 0.1, digit: 0.73, han: 0.86 },
  charsPerToken: 4,
  messageOverhead: 3,
  imageTokens: 1000,
  summarizer,
  summaryMode: "layered",
  summaryRole: "user",
  summaryTag: "conversation-summary",
  summaryMaxTokens: 500,
  onSummarizerError: "fallback",
  timeoutMs: 5000,
  signal: new AbortController().signal,
  largeMessageTokens: 1250,
  previewChars: 200,
  minToolRun: 6,
  keepToolResults: 3,
  currentRoundRatio: 0.3,
  toolIndexRatio: 0.1,
  onOverBudget: "bestEffort",
  onEvent: (e: ReduceEvent) => void events.push(e),
  summarizerInputTokens: 32_000,
  cacheBreakpoints: true,
};

export async function main(wasmBytes: Uint8Array): Promise<void> {
  const loaded: InitOutput = await init();
  initSync({ module: wasmBytes });
  void loaded;

  const sync: ReduceResult = reduceSync(openai, { maxTokens: 4000, keepLast: 1 });
  const keptObjects: Message[] = sync.kept.map((i) => openai[i]);
  const total: number = sync.tokensAfter + sync.removedCount + sync.dropped.length + sync.summarized.length;
  for (const [id, originals] of Object.entries(sync.offloaded)) console.log(id, originals.length);
  if (sync.summary) console.log(sync.summary);
  if (sync.overBudget) console.log(sync.events.map((e: CompressionEvent) => `${e.type} ${e.messages} ${e.tokensBefore}→${e.tokensAfter}`));

  const asyncResult: ReduceResult = await reduce(anthropic, config);
  const needed: boolean = shouldReduce(vercel, { targetMessages: 10 });
  const one: number = estimateTokens(gemini[0]);
  const all: number = estimateTokens(gemini, { estimator: "length", charsPerToken: 3.5 });
  const analysis: Analysis = analyze(openai, { maxTokens: 100 });
  for (const m of analysis.messages) {
    const why: string = m.protected ? `${m.index} ${m.role} (${m.protectedBy ?? "?"})` : `${m.tokens} tokens, group ${m.group}, round ${m.round}`;
    console.log(why);
  }
  console.log(analysis.totalTokens, analysis.totalMessages, analysis.format satisfies Format, keptObjects, total, asyncResult, needed, one, all);

  try {
    reduceSync(openai, { maxTokens: -1 });
  } catch (e) {
    if (e instanceof ReduceError) {
      const code: ErrorCode = e.code;
      const err: Error = e;
      if (code === "INVALID_CONFIG") console.log(e.field?.toUpperCase(), err.message);
      if (code === "INVALID_MESSAGE") console.log(e.index?.toFixed(0));
    }
  }

  const history = new ChatHistory({ maxTokens: 2000, strategy: "summarize", summarizer }, openai);
  history.push({ role: "user", content: "And tomorrow?" }, { role: "assistant", content: "Sunny." });
  const toSend: Message[] = await history.prepare();
  history.recordUsage({ inputTokens: 1234 });
  history.recordUsage({ inputTokens: 1300, outputTokens: 20 });
  const reloaded: Message[] | undefined = history.reload("ctx_0123456789abcdef");
  const stats = history.stats();
  const ratio: number = stats.compressionRatio + stats.reductions + stats.summarizerCalls + stats.tokensSaved;
  const everything: Message[] = history.original;
  const working: Message[] = history.messages;
  const log: CompressionEvent[] = history.events;
  const state: ChatHistoryState = history.toJSON();
  const stored: string = JSON.stringify(history);
  const again: ChatHistory = ChatHistory.fromJSON(JSON.parse(stored) as ChatHistoryState, { maxTokens: 2000 });
  const tool = { type: "function" as const, function: { name: reloadTool.name, description: reloadTool.description, parameters: reloadTool.parameters } };
  console.log(tool, toSend, reloaded, ratio, everything, working, log, state.version, again.messages.length);
  again.free();
}
