// Misuses the typings must reject. Each `@ts-expect-error` fails the check if its line
// type-checks (TS2578 "Unused '@ts-expect-error' directive").
import { reduce, reduceSync, shouldReduce, analyze, ChatHistory, ReduceError } from "chat-history-reducer";
import type { Message, ReduceConfig, Summarizer } from "chat-history-reducer";

const messages: Message[] = [{ role: "user", content: "hi" }];

// @ts-expect-error: "fifo" is not a strategy
reduceSync(messages, { maxTokens: 100, strategy: "fifo" });

// @ts-expect-error: not a format name
shouldReduce(messages, { maxTokens: 100, format: "claude" });

// @ts-expect-error: budgets are numbers
analyze(messages, { maxTokens: "8000" });

// @ts-expect-error: messages are an array, not a string
reduceSync("hello", { maxTokens: 100 });

// @ts-expect-error: reduce is async: its result is a Promise
const kept: number[] = reduce(messages, { maxTokens: 100 }).kept;

const config: ReduceConfig = {
  maxTokens: 100,
  // @ts-expect-error: a summarizer resolves to text, not a number
  summarizer: async () => 42,
};

// @ts-expect-error: an unknown option is a typo, not a setting
reduceSync(messages, { maxTokens: 100, keepLastt: 2 });

// @ts-expect-error: messages are objects
reduceSync([1, 2, 3], { maxTokens: 100 });

interface Mine { role: "user" | "assistant"; text: string }
declare const mine: Mine[];
// @ts-expect-error: a callback gets the caller's own messages: one for another type does not fit
reduceSync(mine, { maxTokens: 100, countTokens: (m: { content: string }) => m.content.length });

// @ts-expect-error: the result is of the input's type, not another
const wrong: Array<{ content: string }> = reduceSync(mine).messages;

// @ts-expect-error: ChatHistory needs a config
new ChatHistory();

// @ts-expect-error: prepare() resolves later; it is not the array itself
const now: Message[] = new ChatHistory({ maxTokens: 10 }).prepare();

const bad: Summarizer = async () => "ok";
try {
  reduceSync(messages, { maxTokens: 1, summarizer: bad });
} catch (e) {
  // @ts-expect-error: "NOT_A_CODE" is not an ErrorCode
  if (e instanceof ReduceError && e.code === "NOT_A_CODE") console.log(e);
}

console.log(kept, config, now, wrong);
