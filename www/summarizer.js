// The demo's stand-in for a model call: async like one, and deterministic (the same request
// gets the same summary), so that a history restored after a reload and one that never
// stopped can be compared. Plain JavaScript: the page and the Node tests import it alike.
import { preview } from "./generators.js";

const clip = (s, n) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The summary of a SummarizeRequest: who asked what, which tools answered. */
export function summaryText(request) {
  const lines = request.messages.map(preview);
  const questions = request.messages.filter((m, i) => m.role === "user" && !lines[i].startsWith("←"));
  const tools = [...new Set(lines.flatMap((l) => [...l.matchAll(/→ ([\w.-]+)\(/g)].map((x) => x[1])))];
  const first = questions.length ? clip(preview(questions[0]), 60) : "";
  const last = questions.length > 1 ? clip(preview(questions.at(-1)), 60) : "";
  let text = `Earlier (${request.messages.length} messages): the user asked ${questions.length} question${questions.length === 1 ? "" : "s"}`;
  if (first) text += `, starting with "${first}"`;
  if (last) text += ` and ending with "${last}"`;
  text += tools.length ? `; the assistant used ${tools.join(", ")} and answered each.` : "; the assistant answered each.";
  if (request.previousSummary) text = `${clip(request.previousSummary.replace(/<\/?[\w-]+>/g, "").trim(), 160)} Then: ${text}`;
  return text;
}

/**
 * A summarizer that answers after `delayMs` with [`summaryText`]; `onCall` hears each call
 * (`{ kind, messages, targetTokens, ms }`) as it is answered.
 */
export function stubSummarizer({ delayMs = 300, onCall } = {}) {
  return async function summarizer(request) {
    const started = performance.now();
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const text = summaryText(request);
    onCall?.({
      kind: request.kind,
      messages: request.messages.length,
      targetTokens: request.targetTokens,
      ms: Math.round(performance.now() - started),
    });
    return text;
  };
}
