// Summaries: written in the input's own format, recognised later by their tag.
// The summarizer's call too (`callSummarizer`), and why a summary failed, in words.

import { ReduceError, describe, reason } from "./common.js";
import { contentOf } from "./formats/index.js";
import { handedOrphans, withoutOrphans } from "./results.js";

/** Whether the input writes content as an array of parts/blocks rather than a string. */
function usesParts(items) {
  for (const m of items) {
    // (A system message tells nothing: the AI SDK's model-level prompt keeps it a string
    // while every other message has parts.)
    if (m.role === "system" || m.role === "developer") continue;
    const c = m.content !== undefined ? m.content : m.data && m.data.content;
    if (typeof c === "string") return false;
    if (Array.isArray(c)) return true;
  }
  return false;
}

const LANGCHAIN_SUMMARY_TYPES = { user: "human", system: "system", assistant: "ai" };

/** The class a serialized LangChain message of each summary type names. */
const LANGCHAIN_SUMMARY_CLASSES = { human: "HumanMessage", system: "SystemMessage", ai: "AIMessage" };

/** The summary message: of `reading.format`, with `role` (summaryRole: "user" | "system" |
 * "assistant") and `text`. */
export function summaryMessage(reading, role, text) {
  // (It opens the history, after the system messages: in Anthropic and Gemini a user turn,
  // whatever summaryRole says — their APIs refuse a history that opens on the model's.)
  const opens = role === "assistant" && (reading.format === "anthropic" || reading.format === "gemini");
  return makeMessage(reading, opens ? "user" : role, text);
}

/** A new message of `reading.format` with `role` ("user" | "system" | "assistant") and `text`. */
export function makeMessage(reading, role, text) {
  const items = reading.items;
  switch (reading.format) {
    case "openai-responses":
      return { type: "message", role, content: [{ type: role === "assistant" ? "output_text" : "input_text", text }] };
    case "vercel-ui": {
      // (An id of its own: a UIMessage's id is its key, and an earlier summary of the same
      // text, kept in layered mode, has this one's.)
      let id = `summary-${hashText(text)}`;
      for (let k = 2, base = id; items.some((m) => m.id === id); k++) id = `${base}-${k}`;
      return { id, role, parts: [{ type: "text", text }] };
    }
    case "gemini":
      return { role: role === "assistant" ? "model" : "user", parts: [{ text }] };
    case "langchain": {
      const type = LANGCHAIN_SUMMARY_TYPES[role];
      // A real LangChain class when the input has an instance of it.
      for (const m of items) {
        if (typeof m.getType === "function" && typeof m.constructor === "function") {
          try {
            if (m.getType() === type) return new m.constructor({ content: text });
          } catch {
            // Not constructible this way: fall through to the plain form.
          }
        }
      }
      if (items.some((m) => m.data !== null && typeof m.data === "object" && m.content === undefined)) {
        return { type, data: { content: text } };
      }
      // The serialized form (`JSON.stringify` of instances, what `load()` revives) for input
      // in that form.
      if (items.some((m) => m.lc === 1 && Array.isArray(m.id) && m.kwargs !== null && typeof m.kwargs === "object")) {
        return { lc: 1, type: "constructor", id: ["langchain_core", "messages", LANGCHAIN_SUMMARY_CLASSES[type]], kwargs: { content: text } };
      }
      return { type, content: text };
    }
    default: // openai, anthropic, vercel
      // (A system message's content is a string, as the AI SDK requires it.)
      return { role, content: role !== "system" && usesParts(items) ? [{ type: "text", text }] : text };
  }
}

/** The texts of the summary messages at `indices` (between their tags), for
 * `previousSummary`. */
export function summaryText(reading, indices, tag) {
  return Array.from(indices, (i) => textOfSummary(reading.format, reading.items[i], tag)).join("\n\n");
}

function textOfSummary(format, m, tag) {
  let text = "";
  // (Where its format keeps it: LangChain's toDict and serialized forms nest it.)
  const c = contentOf(format, m);
  if (typeof c === "string") text = c;
  else if (Array.isArray(c)) text = c.map((p) => (p && typeof p.text === "string" ? p.text : "")).join("");
  const open = `<${tag}>`, close = `</${tag}>`;
  const start = text.indexOf(open);
  const end = text.lastIndexOf(close);
  return start >= 0 && end > start ? text.slice(start + open.length, end).trim() : text.trim();
}

/** `<tag>text</tag>` (SPEC §4), with tags the summarizer may have written itself removed. (A
 * summary written as `<tag>\ntext\n</tag>`, as before session 15, is recognised all the same.) */
export function wrapSummary(text, tag) {
  const open = `<${tag}>`, close = `</${tag}>`;
  let body = text.trim();
  if (body.startsWith(open)) body = body.slice(open.length);
  if (body.endsWith(close)) body = body.slice(0, -close.length);
  return `${open}${body.trim()}${close}`;
}

function hashText(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16);
}

/** The originals at `indices`, for a summarize request or `result.offloaded`: each as a
 * reduction outputs it, without its orphan results (`withoutOrphans`: the summarizer may
 * hand them to a model, which refuses a tool result without its call). */
export function pick(reading, indices) {
  // (Most histories have no orphans: their messages are handed over as they are.)
  if (handedOrphans(reading).size === 0) return Array.from(indices, (i) => reading.items[i]);
  return Array.from(indices, (i) => withoutOrphans(reading, i));
}

/** The longest delay `setTimeout` takes as it is. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls the user's summarizer and settles, whatever it does: `{status: "ok", text, usage}`,
 * or `{status: "rejected" | "timeout" | "aborted" | "invalid", error}`, with `durationMs`.
 * The request's `signal` aborts on timeout and when the caller's signal aborts.
 */
export async function callSummarizer(summarizer, request, timeoutMs, signal) {
  const started = Date.now();
  if (signal && signal.aborted) return { status: "aborted", error: signal.reason, durationMs: 0 };
  const controller = typeof AbortController === "function" ? new AbortController() : undefined;
  request.signal = controller ? controller.signal : signal;
  let timer;
  let onAbort;
  const stop = new Promise((resolve) => {
    // (A timer longer than 2^31 - 1 ms, about 24.8 days, fires at once in every runtime:
    // such a bound is that long.)
    if (typeof timeoutMs === "number") timer = setTimeout(() => resolve({ status: "timeout" }), Math.min(timeoutMs, MAX_TIMER_MS));
    if (signal && typeof signal.addEventListener === "function") {
      onAbort = () => resolve({ status: "aborted", error: signal.reason });
      signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  const run = (async () => {
    try {
      return { status: "ok", value: await summarizer(request) };
    } catch (error) {
      return { status: "rejected", error };
    }
  })();
  const outcome = await Promise.race([run, stop]);
  clearTimeout(timer);
  if (onAbort) signal.removeEventListener("abort", onAbort);
  if (outcome.status !== "ok" && controller) {
    controller.abort(outcome.status === "timeout" ? new Error(`summarizer timed out after ${timeoutMs} ms`) : outcome.error);
  }
  outcome.durationMs = Date.now() - started;
  if (outcome.status === "ok") {
    const v = outcome.value;
    let text, usage;
    try {
      text = typeof v === "string" ? v : v !== null && typeof v === "object" ? v.text : undefined;
      usage = v !== null && typeof v === "object" ? plainUsage(v.usage, 0) : undefined;
    } catch (error) {
      // (An answer whose `text` or `usage` getter throws is a failed one, as a rejection is:
      // it escaped the reduction as the getter's own error.)
      return { status: "invalid", error: new Error(`reading the summarizer's answer threw: ${reason(error)}`, { cause: error }), durationMs: outcome.durationMs };
    }
    if (typeof text !== "string" || text.trim() === "") {
      return { status: "invalid", error: new Error(`the summarizer returned ${describe(v)}; it must return a non-empty string or { text }`), durationMs: outcome.durationMs };
    }
    outcome.text = text;
    outcome.usage = usage;
  }
  return outcome;
}

/**
 * The summarizer's `usage` as plain JSON, for events and `ChatHistory` state: its fields
 * that are finite numbers, and objects of them one level down (OpenAI's
 * `prompt_tokens_details`); undefined when none. (A provider's usage object may point back at
 * its response, or hold a BigInt: `toJSON()` would throw.)
 */
function plainUsage(value, depth) {
  if (value === null || typeof value !== "object") return undefined;
  const out = {};
  for (const key of Object.keys(value)) {
    let x = value[key];
    if (typeof x === "number" && Number.isFinite(x)) out[key] = x;
    else if (depth === 0 && (x = plainUsage(x, 1)) !== undefined) out[key] = x;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The usage of a summary made in several calls (chunks): `a` and `b` (each as `plainUsage`
 * keeps it, or undefined) added field by field. */
export function addUsage(a, b) {
  if (a === undefined) return b;
  if (b === undefined) return a;
  const out = { ...a };
  for (const [key, x] of Object.entries(b)) {
    const y = out[key];
    out[key] = typeof x === "number" && typeof y === "number" ? x + y
      : x !== null && typeof x === "object" && y !== null && typeof y === "object" ? addUsage(y, x) : x;
  }
  return out;
}

/**
 * Why a summary was not used, in words: `reason` as the event's; `cause` what the
 * summarizer threw (or the error of an invalid answer); `a` the timeout (`"timeout"`) or
 * the summary's tokens and `b` its limit (`"tooLarge"`).
 */
export function failureMessage(reason, cause, a, b) {
  if (reason === "timeout") return `the summarizer did not answer within timeoutMs (${a} ms)`;
  if (reason === "tooLarge") {
    return `the summary has ${a} tokens (its tag and role included), over its limit (${b}: summaryMaxTokens and its tag, what targetTokens leaves beside the messages that stay, or the tokens of what it replaces); ask the summarizer for less, or raise summaryMaxTokens or targetTokens`;
  }
  const text = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : "a value that is not an Error";
  return reason === "rejected" ? `the summarizer rejected: ${text}` : text;
}

/** A `ReduceError` for a failed summarizer, with what it threw as `cause`. */
export function summarizerError(code, message, cause) {
  const e = new ReduceError(code, message);
  if (cause !== undefined) e.cause = cause;
  return e;
}
