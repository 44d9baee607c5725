// Imports the package by name, as an app does; Vite resolves its "browser" export and
// emits the .wasm as an asset that `init()` fetches.
import init, { reduce, reduceSync, shouldReduce, estimateTokens, analyze, ChatHistory, ReduceError } from "chat-history-reducer";
import { conversation } from "./conversation.js";

const status = document.getElementById("status");

try {
  await init();
  const messages = conversation(12);
  const config = { maxTokens: 500 };
  const truncated = reduceSync(messages, config);
  const summarized = await reduce(messages, {
    ...config,
    strategy: "summarize",
    summarizer: async (request) => {
      await new Promise((r) => setTimeout(r, 50));
      return `The user asked ${request.messages.filter((m) => m.role === "user").length} unit conversions.`;
    },
  });
  const history = new ChatHistory({ targetMessages: 6, thresholdMessages: 2 }, messages.slice(0, 5));
  history.push(...messages.slice(5, 21));
  const prepared = await history.prepare();
  let errorCode = null;
  try {
    reduceSync(messages, { maxTokens: -1 });
  } catch (e) {
    errorCode = e instanceof ReduceError ? e.code : String(e);
  }
  const result = {
    inputMessages: messages.length,
    tokensBefore: estimateTokens(messages),
    format: analyze(messages, config).format,
    shouldReduce: shouldReduce(messages, config),
    truncate: {
      kept: truncated.kept.length,
      dropped: truncated.dropped.length,
      tokensAfter: truncated.tokensAfter,
      sameObjects: truncated.messages.every((m, k) => m === messages[truncated.kept[k]]),
    },
    summarize: {
      kept: summarized.kept.length,
      summarized: summarized.summarized.length,
      tokensAfter: summarized.tokensAfter,
      summary: summarized.summary?.content ?? null,
    },
    history: { messages: prepared.length, original: history.original.length, reductions: history.stats().reductions },
    errorCode,
  };
  document.getElementById("result").textContent = JSON.stringify(result, null, 2);
  status.textContent = `Reduced ${result.inputMessages} messages: kept ${result.truncate.kept}, dropped ${result.truncate.dropped}, ${result.tokensBefore} → ${result.truncate.tokensAfter} tokens.`;
  document.body.dataset.state = "done";
} catch (e) {
  status.textContent = `Failed: ${e?.stack ?? e}`;
  document.body.dataset.state = "error";
}
