/** The codes of `ReduceError.code` (SPEC §10). */
export type ErrorCode =
  | "INVALID_MESSAGES"
  | "INVALID_MESSAGE"
  | "INVALID_CONFIG"
  | "SUMMARIZER_REQUIRED"
  | "SUMMARIZER_REQUIRES_ASYNC"
  | "SUMMARIZER_FAILED"
  | "SUMMARY_TOO_LARGE"
  | "BUDGET_UNREACHABLE"
  | "ABORTED";

// ---- Message formats (SPEC §2). Unknown fields are kept: every shape is open. ----------

/** OpenAI Chat Completions. */
export interface OpenAIToolCall {
  id: string;
  type?: "function";
  function: { name: string; arguments: string };
  [key: string]: unknown;
}
export interface OpenAIContentPart {
  type: "text" | "image_url" | "input_audio" | "file" | "refusal" | (string & {});
  text?: string;
  [key: string]: unknown;
}
export interface OpenAIMessage {
  role: "system" | "developer" | "user" | "assistant" | "tool" | "function";
  content?: string | OpenAIContentPart[] | null;
  name?: string;
  tool_calls?: OpenAIToolCall[];
  tool_call_id?: string;
  function_call?: { name: string; arguments: string };
  refusal?: string | null;
  [key: string]: unknown;
}

/** OpenAI Responses API input/output items. */
export type OpenAIResponsesItem =
  | {
      type?: "message";
      role: "system" | "developer" | "user" | "assistant";
      content: string | Array<{ type: "input_text" | "output_text" | "input_image" | "input_file" | (string & {}); text?: string; [key: string]: unknown }>;
      [key: string]: unknown;
    }
  | { type: "reasoning"; summary?: unknown[]; [key: string]: unknown }
  | { type: "function_call"; call_id: string; name: string; arguments: string; [key: string]: unknown }
  | { type: "function_call_output"; call_id: string; output: unknown; [key: string]: unknown };

/** Anthropic Messages API. */
export type AnthropicBlock =
  | { type: "text"; text: string; [key: string]: unknown }
  | { type: "image" | "document"; source: unknown; [key: string]: unknown }
  | { type: "tool_use"; id: string; name: string; input: unknown; [key: string]: unknown }
  | { type: "tool_result"; tool_use_id: string; content?: string | unknown[]; is_error?: boolean; [key: string]: unknown }
  | { type: "thinking" | "redacted_thinking"; [key: string]: unknown }
  | { type: string & {}; [key: string]: unknown };
export interface AnthropicMessage {
  role: "user" | "assistant" | "system";
  content: string | AnthropicBlock[];
  [key: string]: unknown;
}

/** Vercel AI SDK `ModelMessage`. */
export type VercelPart =
  | { type: "text"; text: string; [key: string]: unknown }
  | { type: "image" | "file"; [key: string]: unknown }
  | { type: "reasoning"; text: string; [key: string]: unknown }
  | { type: "tool-call"; toolCallId: string; toolName: string; input: unknown; [key: string]: unknown }
  | { type: "tool-result"; toolCallId: string; toolName: string; output: unknown; [key: string]: unknown }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string; [key: string]: unknown }
  | { type: "tool-approval-response"; approvalId: string; approved: boolean; [key: string]: unknown };
export interface VercelMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | VercelPart[];
  [key: string]: unknown;
}

/** Vercel AI SDK `UIMessage`. */
export interface VercelUIMessage {
  id: string;
  role: "system" | "user" | "assistant";
  parts: Array<{ type: string; text?: string; toolCallId?: string; input?: unknown; output?: unknown; [key: string]: unknown }>;
  [key: string]: unknown;
}

/** Google Gemini `Content`. */
export interface GeminiContent {
  role: "user" | "model" | "function";
  parts: Array<{
    text?: string;
    functionCall?: { id?: string; name: string; args?: unknown };
    functionResponse?: { id?: string; name: string; response?: unknown };
    inlineData?: { mimeType: string; data: string };
    fileData?: unknown;
    thought?: boolean;
    [key: string]: unknown;
  }>;
  [key: string]: unknown;
}

/** LangChain.js messages: instances, plain objects, or the `toDict()` form. */
export type LangChainMessage =
  | { getType(): string; content: unknown; [key: string]: unknown }
  | { _getType(): string; content: unknown; [key: string]: unknown }
  | {
      type: "system" | "developer" | "human" | "ai" | "tool" | "generic" | "function" | "remove";
      content: unknown;
      tool_calls?: Array<{ id?: string; name: string; args: unknown }>;
      tool_call_id?: string;
      [key: string]: unknown;
    }
  | { type: string; data: { content: unknown; [key: string]: unknown } };

/**
 * Any message of a supported format: the default of the message type `M` of the functions,
 * `ChatHistory` and the results. They take any array of objects (`M extends object`: your
 * own interfaces, LangChain's `BaseMessage`, the AI SDK's `ModelMessage` and `UIMessage`)
 * and give back the same type: `reduceSync(messages).messages` is an `M[]`.
 */
export type Message =
  | OpenAIMessage
  | OpenAIResponsesItem
  | AnthropicMessage
  | VercelMessage
  | VercelUIMessage
  | GeminiContent
  | LangChainMessage;

export type Format =
  | "openai"
  | "openai-responses"
  | "anthropic"
  | "vercel"
  | "vercel-ui"
  | "gemini"
  | "langchain";

// ---- Configuration (SPEC §4) -----------------------------------------------------------

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  [key: string]: unknown;
}

/** What the summarizer is asked to summarise (SPEC §6). `M`: the caller's message type. */
export interface SummarizeRequest<M = Message> {
  kind: "history" | "toolRun" | "round" | "largeMessage" | "currentRound";
  /** The originals to summarise, in order; a message too large for one call
   * (`summarizerInputTokens`) as a copy with its texts cut to head and tail around
   * `"[… N characters omitted …]"`. */
  messages: M[];
  /** Single mode (`"history"` and `"round"`): the text of the summaries being replaced. A
   * summary made in several calls: the summary so far, to be carried on with `messages`. */
  previousSummary?: string;
  /** Aim for at most this many tokens (for the text: the tag, role and overhead of the
   * summary message are already taken off `summaryMaxTokens`). */
  targetTokens: number;
  signal?: AbortSignal;
}

export type Summarizer<M = Message> = (request: SummarizeRequest<M>) => Promise<string | { text: string; usage?: Usage }> | string | { text: string; usage?: Usage };

/** A tokenizer family the built-in estimator has class weights fitted for: OpenAI's o200k
 * (GPT-4o and later) and cl100k (GPT-4, GPT-3.5), Gemma's (for Gemini) and Llama 3's. */
export type Tokenizer = "o200k" | "cl100k" | "gemma" | "llama3";

/** Tokens per code point by character class, for `estimator: "classes"`. */
export interface EstimatorWeights {
  letter?: number;
  digit?: number;
  /** Whitespace that starts a run. */
  whitespace?: number;
  /** Whitespace that continues a run. */
  whitespaceRun?: number;
  punctuation?: number;
  han?: number;
  kana?: number;
  hangul?: number;
  cjkPunctuation?: number;
  emoji?: number;
  other?: number;
  /** A letter of another alphabet: Greek, Cyrillic, Armenian, Hebrew, Arabic, the Indic
   * scripts, Thai, Georgian… */
  otherLetter?: number;
}

/**
 * The options (SPEC §4). `M` is the type of the messages the callbacks get: the functions
 * infer it from the messages they are given, so write `ReduceConfig<BaseMessage>` (or your
 * own message type) for a config declared on its own with callbacks that take the messages.
 */
export interface ReduceConfig<M = Message> {
  /** How to reduce. Default `"truncate"`. */
  strategy?: "truncate" | "priority" | "summarize" | "progressive";
  /** Default `"auto"`: detected from the messages' shape. */
  format?: "auto" | Format;
  /** Token trigger: reduce when the total exceeds it. */
  maxTokens?: number;
  /** Token target after reducing; default `floor(0.8 * maxTokens)`. */
  targetTokens?: number;
  /** Message target after reducing (non-system, non-summary messages). */
  targetMessages?: number;
  /** Message trigger: reduce when the messages since the newest summary exceed `targetMessages + thresholdMessages`. Default 5. */
  thresholdMessages?: number;
  /** Never remove system messages. Default true. */
  keepSystem?: boolean;
  /** The newest groups that are never removed. Default 1. (Counts are whole numbers up to
   * `Number.MAX_SAFE_INTEGER`; `Number.MAX_SAFE_INTEGER` keeps every group.) */
  keepLast?: number;
  /** `"user"` (default): the kept history starts on a real user input. */
  startOn?: "user" | "any";
  /** `priority`: newest user/assistant pairs always kept. Default 2. */
  keepRecentPairs?: number;
  /** Provider-reported token counts by message index (finite numbers ≥ 0 win over everything
   * else; one above `Number.MAX_SAFE_INTEGER` is `INVALID_CONFIG` with its index). */
  tokenCounts?: ArrayLike<number | null | undefined>;
  /** A synchronous exact counter, e.g. from gpt-tokenizer: a number from 0 to
   * `Number.MAX_SAFE_INTEGER`, else `INVALID_CONFIG` (a Promise too: count first and pass
   * `tokenCounts`). */
  countTokens?: (message: M, index: number) => number;
  /** Built-in estimator: `"classes"` (default) or `"length"`. */
  estimator?: "classes" | "length";
  /** Weights over the profile's (`tokenizer`), by class. */
  estimatorWeights?: EstimatorWeights;
  /** The class weights fitted for this tokenizer family. `"auto"` (default): by the detected
   * format, `"gemma"` for `gemini`, `"o200k"` for the others (`analyze().tokenizer` shows it).
   * Claude's tokenizer is not public: keep the default and calibrate (`recordUsage`, `calibrate()`). */
  tokenizer?: "auto" | Tokenizer;
  /** A correction factor for built-in estimates, from `calibrate()` (0.5–2). */
  calibration?: number;
  /** `estimator: "length"`: characters per token. Default 4. */
  charsPerToken?: number;
  /** Tokens added per message. Default 3. */
  messageOverhead?: number;
  /** Tokens per image or file part. Default 1000. */
  imageTokens?: number;
  summarizer?: Summarizer<M>;
  /** `"single"` (default): a new summary (of `summarize`, or of `progressive`'s stage 4)
   * replaces the earlier ones, sent as `previousSummary`; `"layered"`: they stay. */
  summaryMode?: "single" | "layered";
  summaryRole?: "user" | "system" | "assistant";
  /** The summary text is wrapped in `<tag>…</tag>`. Default `"conversation-summary"`. */
  summaryTag?: string;
  /** The most tokens the summary's text may have, its tag, role and overhead beside it (a
   * longer one is `SUMMARY_TOO_LARGE`). Default `floor(0.25 * targetTokens)`; without a
   * token target, 1000 for `summarize`. */
  summaryMaxTokens?: number;
  onSummarizerError?: "fallback" | "throw";
  timeoutMs?: number;
  /** Aborts the summarizer (`ABORTED`). An AbortSignal of any runtime: an object without a
   * boolean `aborted`, `addEventListener` and `removeEventListener` is `INVALID_CONFIG`. */
  signal?: AbortSignal;
  /** `progressive`: a message above this is large. Default a twentieth of `targetTokens`,
   * at most 1250. */
  largeMessageTokens?: number;
  previewChars?: number;
  /** `progressive`: the shortest run of tool messages compressed into one. Default one per
   * 4,000 tokens of `targetTokens`, from 3 to 6. */
  minToolRun?: number;
  /** `progressive`: the newest tool results that stage `clearToolResults` leaves whole (the
   * older ones become `[cleared N tokens as ctx_…]`, their calls kept). Default 3. */
  keepToolResults?: number;
  currentRoundRatio?: number;
  /** `progressive`: the share of `targetTokens` (0–1) that its index of dropped tool calls
   * may take. When groups must go, each dropped call with its results leaves a line there —
   * the call and an offload id that `context_reload` fetches them by — the newest first kept.
   * 0: no index. Default 0.1. */
  toolIndexRatio?: number;
  /** When protected messages alone exceed a target. Default `"bestEffort"`. */
  onOverBudget?: "bestEffort" | "error";
  onEvent?: (event: ReduceEvent) => void;
  /** Tokens the request spends outside the messages (instructions, tool schemas): they come
   * off `maxTokens` and `targetTokens`, which then bound the messages. Default 0. */
  reservedTokens?: number;
  /** Where every offload is written (`set(id, originals)`) before the result is returned,
   * so a later step or request can reload it: a `Map`, Durable Object storage, KV… */
  store?: OffloadStore<M>;
  /** The most tokens one summarizer call is handed, its `previousSummary` included: a larger
   * input is summarized in several calls, oldest first, each given the summary so far; a
   * message too large for a call goes as a head-and-tail excerpt. Default 32,000. */
  summarizerInputTokens?: number;
  /** `summarize`: summaries kept by the content of the messages they cover (a `Map`, KV,
   * Durable Object storage, IndexedDB; `get`/`set` may return promises), so that a stateless
   * `reduce` over the same oldest messages reuses one instead of asking the summarizer, as
   * `ChatHistory` keeps its own. A `get` or `set` that throws or rejects is a miss. */
  summaryCache?: SummaryCache;
  /** Anthropic prompt caching: the output marks the end of the stable prefix (the system
   * messages and summary that open it) and the newest message with a cache breakpoint, as
   * copies (`rewritten`): `cache_control` on a content block (`anthropic`, LangChain),
   * `providerOptions.anthropic.cacheControl` (AI SDK `ModelMessage`), a text part's
   * `providerMetadata.anthropic.cacheControl` (`UIMessage`). At most 4 with the caller's
   * own. Ignored in the formats of providers that cache without marks (OpenAI, Gemini).
   * Default false. */
  cacheBreakpoints?: boolean;
}

/** Where `summaryCache` keeps summaries: any object with these two methods. */
export interface SummaryCache {
  get(key: string): unknown;
  set(key: string, value: unknown): unknown;
}

/** Keeps offloaded originals by id, synchronously or not: a `Map` works. */
export interface OffloadStore<M = Message> {
  get(id: string): M[] | undefined | Promise<M[] | undefined>;
  set(id: string, messages: M[]): unknown;
}

// ---- Results (SPEC §8) -----------------------------------------------------------------

/** One step of a reduction. */
export interface CompressionEvent {
  /** The step: `"truncate"`, `"priority"`, … `"orphans"`: messages that carried tool results
   * whose call is not in the input, or calls that no result answers before the latest turn
   * (dropped, or output without them); `"currentTurn"`: the current turn's oldest tool
   * steps, replaced by one note that names their calls (their originals in `offloaded`);
   * `"indexToolCalls"`: `progressive`'s tool groups that went, each a line of its index of
   * dropped calls (their originals in `offloaded`). */
  type: string;
  /** Input messages the step removed or rewrote (0 for a `"summarizeFailed"` entry: a step
   * that changed nothing, its `tokensBefore` and `tokensAfter` the same). */
  messages: number;
  /** A step that asked the summarizer (`"summarize"`, a `progressive` stage's summaries, a
   * `"summarizeFailed"`): how many calls it took (a summary in chunks takes several). */
  summarizerCalls?: number;
  /** A `"summarize"` step that reused a summary from `summaryCache` (no summarizer call). */
  cached?: boolean;
  tokensBefore: number;
  tokensAfter: number;
  [key: string]: unknown;
}

/** Progress reported through `onEvent` as it happens. */
export interface ReduceEvent {
  type: string;
  [key: string]: unknown;
}

export interface ReduceResult<M = Message> {
  /** The reduced history; untouched messages are the input objects. */
  messages: M[];
  reduced: boolean;
  /** Input messages not in `messages` verbatim. */
  removedCount: number;
  /** Input indices kept verbatim, in order. */
  kept: number[];
  /** Input indices removed without a trace (among them every message that carried only
   * tool results whose call is not in the input). */
  dropped: number[];
  /** Input indices covered by the new summary (`summary`: of `summarize`, or of `progressive`'s
   * previous rounds). Kept, dropped, summarized and rewritten hold each input index once. */
  summarized: number[];
  /** Input indices whose message is in `messages` as a rewritten copy (an offloaded preview,
   * a compressed text, or a message without the tool results whose call is not in the input),
   * or in a compressed tool run (SPEC §2: a rewritten message); `offloaded` holds the
   * originals of all but the copies without orphans. */
  rewritten: number[];
  /** The originals of everything offloaded or compressed (previews, compressed texts, tool
   * runs), by offload id (`context_reload`); not what a summary covers (`summarized`). */
  offloaded: Record<string, M[]>;
  /** The new summary message, if any. */
  summary?: M;
  /**
   * The input's tokens. After a `truncate`, the removed oldest messages may be estimated
   * only when this is first read (a getter; reading it once is as cheap as reading it twice).
   */
  tokensBefore: number;
  /** The output's tokens (a copy without orphan tool results or calls counted as it stands by the
   * estimator; at its original's size with `countTokens` or `tokenCounts`). */
  tokensAfter: number;
  /** A target could not be met because of protected messages. */
  overBudget: boolean;
  events: CompressionEvent[];
  /** `reduceSync` with a `store` whose `set` returns promises: the writes, to await. */
  stored?: Promise<unknown>;
}

export interface MessageAnalysis {
  index: number;
  role: "system" | "user" | "assistant" | "tool" | "other";
  tokens: number;
  /** Messages of one group are kept or removed together. */
  group: number;
  /** 0 before the first real user input, then 1, 2, … */
  round: number;
  /** Whether no reduction may remove it. */
  protected: boolean;
  /** Why it is protected. */
  protectedBy?: "system" | "summary" | "keepLast" | "latestUserInput" | "startOnUser" | "keepRecentPairs" | "currentTurn";
  summary: boolean;
  /** A real user input (not only tool results). */
  realUser: boolean;
}

export interface Analysis {
  format: Format;
  /** The profile that estimated messages without a count (`tokenizer`, `"auto"` decided by
   * `format`); absent with `estimator: "length"`. */
  tokenizer?: Tokenizer;
  messages: MessageAnalysis[];
  totalTokens: number;
  totalMessages: number;
  groups: number;
  rounds: number;
  shouldReduce: boolean;
}

/** What `ChatHistory.toJSON()` returns: plain JSON, versioned. */
export interface ChatHistoryState<M = Message> {
  kind: "chat-history-reducer/ChatHistory";
  /** `fromJSON` reads version 1 too (whose `offloaded` holds every original itself). */
  version: 2;
  messages: M[];
  /** Every message ever pushed; left out by `toJSON({ original: "omit" })`. */
  original?: M[];
  /** `toJSON({ original: "omit" })`: the count of `original` and a hash of its JSON, which
   * `fromJSON(state, config, { original })` checks. */
  originalDigest?: { count: number; hash: string };
  /** The index in `original` of each of `messages` that is one of its objects (-1 for a
   * message a reduction wrote): `fromJSON` gives them back as one object. */
  origins?: number[];
  /** Exact token counts (from recordUsage) aligned with `messages`, or null. */
  counts: Array<number | null>;
  /** The originals each of `messages` stands for, as flattened `[start, end, …]` ranges of
   * indices into `original` (a summary: all it replaced): what `rewind` / `remove` undo.
   * Without it, any edit undoes every message a reduction wrote. */
  covers?: number[][];
  events: CompressionEvent[];
  /** The originals of each offload id; one that is a message of `original` is its index
   * there (a number), not a second copy. */
  offloaded: Record<string, Array<M | number>>;
  stats: { reductions: number; summarizerCalls: number; tokensSaved: number; overBudget?: boolean; edits?: number; undone?: number };
  promptLength: number | null;
  pendingOutputTokens: number | null;
  /** The correction factor learned from recordUsage. */
  calibration: number | null;
}

/** A JSON Schema object. */
export type JSONSchema = { [key: string]: unknown };
