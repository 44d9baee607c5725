// `cacheBreakpoints` (SPEC §4): what each output message carries already and whether a
// cache breakpoint can go on it (`breakpointSpots`), and the marked copies written where
// the core placed them (`markBreakpoints`; the placement is `src/breakpoints.rs`).
// Anthropic: `cache_control` on a content block. The AI SDK: `providerOptions.anthropic
// .cacheControl` on a ModelMessage (its provider puts it on the message's last part), on a
// UIMessage text part's `providerMetadata` (which `convertToModelMessages` hands on).
// LangChain: `cache_control` on a content block, which @langchain/anthropic passes on.

import { SPOT_MARKABLE, SPOT_MARKS, SPOT_SUMMARY, SUMMARY } from "./contract.js";
import { contentFlags, isUiTool, visible } from "./formats/content.js";
import { contentOf, withFields } from "./formats/index.js";
import { langchainCalls, langchainShape } from "./formats/langchain.js";

/** A new mark each time: the caller may change what it is handed. */
function ephemeral() {
  return { type: "ephemeral" };
}

function isObject(x) {
  return x !== null && typeof x === "object";
}

/** Anthropic's own field, or the AI SDK's under `anthropic` (it reads both spellings). */
function blockMarked(b) {
  return isObject(b) && b.cache_control != null;
}

function optionsMarked(options) {
  const a = isObject(options) ? options.anthropic : undefined;
  return isObject(a) && (a.cacheControl != null || a.cache_control != null);
}

/** Blocks Anthropic refuses a mark on: reasoning, and a text of nothing but white space. */
function takesMark(b) {
  if (!isObject(b) || b.type === "thinking" || b.type === "redacted_thinking") return false;
  return b.type !== "text" || visible(b.text);
}

/** Where a mark goes in an Anthropic or LangChain content: the last block that takes one
 * (-1 for a string of text, undefined for none). */
function markedBlock(content) {
  if (typeof content === "string") return visible(content) ? -1 : undefined;
  if (!Array.isArray(content)) return undefined;
  for (let k = content.length - 1; k >= 0; k--) if (takesMark(content[k])) return k;
  return undefined;
}

/** The content with the mark: a string becomes one text block. */
function withMarkedBlock(content, k) {
  if (k === -1) return [{ type: "text", text: content, cache_control: ephemeral() }];
  const blocks = content.slice();
  blocks[k] = { ...content[k], cache_control: ephemeral() };
  return blocks;
}

/** The marks a content carries, those inside a `tool_result`'s blocks too: Anthropic counts
 * every `cache_control` of the request toward its four. */
function countBlocks(content) {
  let n = 0;
  if (!Array.isArray(content)) return n;
  for (const b of content) {
    if (blockMarked(b)) n++;
    if (isObject(b) && Array.isArray(b.content)) n += countBlocks(b.content);
  }
  return n;
}

/** The AI SDK `ModelMessage`'s last part, which its Anthropic provider gives the message's
 * mark: none on reasoning, an approval or an empty text. */
function vercelMarkable(m) {
  const content = m.content;
  if (typeof content === "string") return visible(content);
  if (!Array.isArray(content) || content.length === 0) return false;
  const last = content[content.length - 1];
  if (!isObject(last) || last.type === "reasoning" || String(last.type).startsWith("tool-approval")) return false;
  return last.type !== "text" || visible(last.text);
}

/** The last UIMessage text part with text. */
function uiTextPart(parts) {
  if (!Array.isArray(parts)) return -1;
  for (let k = parts.length - 1; k >= 0; k--) {
    const p = parts[k];
    if (isObject(p) && p.type === "text" && visible(p.text)) return k;
  }
  return -1;
}

/** A LangChain message's content, where a mark can go: not a tool message's (it becomes a
 * tool_result's content, where Anthropic refuses marks), not an AI message's text with
 * calls (@langchain/anthropic sends `tool_calls` only beside a string content). */
function langchainBlock(m) {
  const [type, d] = langchainShape(m);
  if (type === "tool" || type === "function" || type === "remove") return undefined;
  if (type === "ai" && typeof d.content === "string" && langchainCalls(d)[0].length > 0) return undefined;
  return markedBlock(d.content);
}

const SPOTS = {
  anthropic: (m) => [countBlocks(m.content), markedBlock(m.content) !== undefined],
  langchain: (m) => [countBlocks(langchainShape(m)[1].content), langchainBlock(m) !== undefined],
  vercel: (m) => {
    // The provider takes a part's own mark, else the message's on its last part only: one
    // breakpoint there when both are set.
    let n = 0, lastMarked = false;
    const parts = Array.isArray(m.content) ? m.content : [];
    parts.forEach((p, k) => {
      if (isObject(p) && optionsMarked(p.providerOptions)) {
        n++;
        lastMarked = k === parts.length - 1;
      }
    });
    if (optionsMarked(m.providerOptions) && !lastMarked) n++;
    return [n, vercelMarkable(m)];
  },
  "vercel-ui": (m) => {
    let n = 0;
    if (Array.isArray(m.parts)) {
      for (const p of m.parts) {
        if (!isObject(p)) continue;
        if (optionsMarked(p.providerMetadata)) n++;
        if (isUiTool(p) && (optionsMarked(p.callProviderMetadata) || optionsMarked(p.resultProviderMetadata))) n++;
      }
    }
    return [n, uiTextPart(m.parts) >= 0];
  },
};

/**
 * Into `out`, per output message of a reduction of `reading` (`messages`): the breakpoints
 * it carries (SPOT_MARKS), whether one can go on it (SPOT_MARKABLE), and whether it opens
 * with a summary (SPOT_SUMMARY, as the reader tells one).
 */
export function breakpointSpots(reading, messages, out) {
  const format = reading.format, spot = SPOTS[format];
  if (spot === undefined) return;
  for (let p = 0; p < messages.length && p < out.length; p++) {
    const m = messages[p];
    if (!isObject(m)) continue;
    const [marks, markable] = spot(m);
    const summary = (contentFlags(reading, contentOf(format, m), 0, true) & SUMMARY) !== 0;
    out[p] = Math.min(marks, SPOT_MARKS) | (markable ? SPOT_MARKABLE : 0) | (summary ? SPOT_SUMMARY : 0);
  }
}

/** Message m with a breakpoint, a shallow copy in its format. */
export function withBreakpoint(format, m) {
  switch (format) {
    case "anthropic":
      return withFields(format, m, { content: withMarkedBlock(m.content, markedBlock(m.content)) });
    case "langchain":
      return withFields(format, m, { content: withMarkedBlock(langchainShape(m)[1].content, langchainBlock(m)) });
    case "vercel": {
      const options = isObject(m.providerOptions) ? m.providerOptions : {};
      const anthropic = isObject(options.anthropic) ? options.anthropic : {};
      return withFields(format, m, { providerOptions: { ...options, anthropic: { ...anthropic, cacheControl: ephemeral() } } });
    }
    case "vercel-ui": {
      const k = uiTextPart(m.parts), part = m.parts[k];
      const meta = isObject(part.providerMetadata) ? part.providerMetadata : {};
      const anthropic = isObject(meta.anthropic) ? meta.anthropic : {};
      const parts = m.parts.slice();
      parts[k] = { ...part, providerMetadata: { ...meta, anthropic: { ...anthropic, cacheControl: ephemeral() } } };
      return withFields(format, m, { parts });
    }
    default:
      throw new Error(`chat-history-reducer: a bug: no cache breakpoints in ${format}`);
  }
}

/** What `inputs` holds for a position whose message is no input as it was (a written one). */
const NO_INPUT = 0xffffffff;

/**
 * Marks `result`'s messages at `positions` (the core's placement), each a copy
 * (`withBreakpoint`); `inputs[k]` is the input index position k held as it was, which is
 * then rewritten rather than kept (SPEC §8). Returns the messages replaced, in order.
 */
export function markBreakpoints(reading, result, positions, inputs) {
  const messages = result.messages, replaced = new Array(positions.length);
  for (let k = 0; k < positions.length; k++) {
    const p = positions[k];
    replaced[k] = messages[p];
    messages[p] = withBreakpoint(reading.format, messages[p]);
    const i = inputs[k];
    if (i === NO_INPUT) continue;
    const at = result.kept.indexOf(i);
    if (at < 0) continue;
    result.kept.splice(at, 1);
    let to = result.rewritten.length;
    while (to > 0 && result.rewritten[to - 1] > i) to--;
    result.rewritten.splice(to, 0, i);
    result.removedCount++;
  }
  return replaced;
}
