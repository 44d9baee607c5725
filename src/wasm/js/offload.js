// Offloading and rewriting (progressive): a rewritten message is a shallow copy of the
// original with only its text changed, in the same format; the original is kept under a
// content-derived id for the context_reload tool.

import { jsonText } from "./common.js";
import { TOOL } from "./contract.js";
import { CLEARED_NOTE, COMPRESSED_NOTE, MEDIA_OUTPUTS, PREVIEW_NOTE, isUiTool, noted, openingText, textOfPart } from "./formats/content.js";
import { contentOf, copyOf, withContent } from "./formats/index.js";
import { langchainShape } from "./formats/langchain.js";
import { withoutOrphans } from "./results.js";
import { makeMessage, pick } from "./summaries.js";

/** A stable id from a message's content (FNV-1a over its JSON, cycles skipped). */
export function offloadId(messages) {
  const seen = new WeakSet();
  let json;
  try {
    json = JSON.stringify(messages, (key, value) => {
      if (typeof value === "bigint") return value.toString();
      if (value !== null && typeof value === "object") {
        if (seen.has(value)) return undefined;
        seen.add(value);
      }
      return value;
    });
  } catch {
    json = String(messages.length);
  }
  let h1 = 0x811c9dc5, h2 = 0x01000193 ^ json.length;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) ^ (h2 >>> 15);
  }
  return `ctx_${(h1 >>> 0).toString(16).padStart(8, "0")}${(h2 >>> 0).toString(16).padStart(8, "0")}`;
}

/**
 * A copy of message `m` whose texts are replaced by `replace(oldText)`: the first text part
 * takes the replacement of all text parts, every tool result keeps its place (so it still
 * answers its call) with its own text replaced; calls, images and thinking are untouched.
 *
 * Undefined when that saves nothing: a message with no text to carry the note, or whose
 * size is elsewhere (a tool call's arguments, an image) — it is left as it is, not counted
 * as offloaded, and `progressive` moves on. A call's arguments stay as the model wrote
 * them: they are what it sees of its own earlier calls, and a note inside them would be
 * imitated — written into a file, say — by the calls it makes next. With `sized`, a copy
 * that saves nothing is returned too: the caller weighs it (a summary's rewrite is counted,
 * and one that does not shrink the message is a summary over its limit). With
 * `resultsOnly`, only the tool results' texts are replaced: the message's own text (a user's
 * words beside Anthropic tool results, a UIMessage's answer beside its tool parts) stays.
 */
function rewriteTexts(format, m, replace, sized, resultsOnly = false) {
  let before = 0, after = 0;
  const swap = (text) => {
    const written = replace(text);
    before += text.length;
    after += written.length;
    return written;
  };
  const copy = format === "openai-responses" && m.type !== undefined && m.type !== "message"
    ? rewriteItem(m, swap)
    : rewriteContent(format, m, swap, resultsOnly);
  return copy !== undefined && (sized || after < before) ? copy : undefined;
}

/**
 * `rewriteTexts` of a Responses item other than a message: a tool result's `output` in its
 * own shape (a string stays a string; parts keep their places, the texts joined into the
 * first; a shell's output its entries, with their stdout and stderr replaced). Calls (their
 * arguments or input), approvals, screenshots and the items of tools the API runs itself
 * have no text to cut: undefined.
 */
function rewriteItem(m, replace) {
  const type = m.type, out = m.output;
  if (typeof type !== "string" || !type.endsWith("_call_output") || out === undefined || out === null) return undefined;
  let output;
  if (typeof out === "string") output = replace(out);
  else if (Array.isArray(out)) output = rewriteParts(out, replace);
  else if (typeof out !== "object" || !MEDIA_OUTPUTS.has(out.type)) output = replace(jsonText(out));
  if (output === undefined) return undefined;
  const copy = copyOf(m);
  copy.output = output;
  return copy;
}

/** `rewriteTexts` of a message's content (see there). */
function rewriteContent(format, m, replace, resultsOnly) {
  const content = contentOf(format, m);
  if (!Array.isArray(content) && resultsOnly) return undefined;
  if (typeof content === "string") return withContent(format, m, replace(content));
  if (!Array.isArray(content)) return withContent(format, m, replace(""));
  const parts = rewriteParts(content, replace, resultsOnly);
  return parts !== undefined ? withContent(format, m, parts) : undefined;
}

/**
 * `parts` with their texts replaced (see `rewriteTexts`; with `resultsOnly`, only the tool
 * results'), or undefined when none of them could take the rewritten text (only a tool
 * call, say).
 */
function rewriteParts(content, replace, resultsOnly = false) {
  const texts = content.map(textOfPart).filter((t) => t !== undefined);
  let joined;
  // Whether a part took the rewritten text (`wrote`): parts without one (only a tool
  // call, say) cannot carry the note (undefined). The text parts' texts go, joined, into
  // the first of them (`placed`).
  let placed = false, wrote = false;
  const parts = [];
  for (const p of content) {
    if (p === null || typeof p !== "object") { parts.push(p); continue; }
    // (Each payload keeps its shape where it can: what is written is text, where the
    // original's text was.)
    if (p.type === "tool_result") {
      wrote = true;
      // A string stays a string; blocks become one text block.
      const content = p.content;
      const written = Array.isArray(content) ? [{ type: "text", text: replace(content.map((b) => (b && b.text) || "").join("\n")) }]
        : replace(typeof content === "string" ? content : jsonText(content));
      parts.push({ ...p, content: written });
    } else if (p.type === "tool-result") {
      wrote = true;
      // The output's type stays, but for content parts (a JSON value may be a string).
      const type = p.output !== null && typeof p.output === "object" && TEXT_OUTPUTS.has(p.output.type) ? p.output.type : "text";
      parts.push({ ...p, output: { type, value: replace(payloadText(p.output)) } });
    } else if (p.functionResponse) {
      wrote = true;
      // Gemini's response is an object: the text under its first key (`result`, `output`,
      // …), else under `content`.
      const response = p.functionResponse.response;
      const key = (response !== null && typeof response === "object" && !Array.isArray(response) && Object.keys(response)[0]) || "content";
      parts.push({ ...p, functionResponse: { ...p.functionResponse, response: { [key]: replace(jsonText(response)) } } });
    } else if (isUiTool(p) && "output" in p) {
      wrote = true;
      parts.push({ ...p, output: replace(jsonText(p.output)) });
    } else if (textOfPart(p) !== undefined && !resultsOnly) {
      if (joined === undefined) joined = replace(texts.join("\n"));
      if (!placed) parts.push({ ...p, text: joined });
      placed = wrote = true;
    } else if (typeof p.stdout === "string" && p.type === undefined) {
      // An entry of a Responses shell_call_output: `{stdout, stderr, outcome}`.
      const entry = { ...p };
      for (const key of ["stdout", "stderr"]) {
        if (typeof p[key] === "string" && p[key].length > 0) {
          entry[key] = replace(p[key]);
          wrote = true;
        }
      }
      parts.push(entry);
    } else {
      parts.push(p);
    }
  }
  return wrote ? parts : undefined;
}

/** The AI SDK tool-result output types whose value may be a string. */
const TEXT_OUTPUTS = new Set(["text", "json", "error-text", "error-json"]);

function payloadText(out) {
  if (out !== null && typeof out === "object" && "value" in out) return jsonText(out.value);
  return jsonText(out);
}

export function previewOf(text, chars) {
  // Whitespace runs collapsed, trimmed, cut to `chars` (with "…" when cut): from a prefix of
  // the text, as long as a prefix that long is enough to know (a long text is not
  // flattened whole).
  for (let window = 2 * chars + 16; ; window *= 2) {
    if (window >= text.length) {
      const flat = text.replace(/\s+/g, " ").trim();
      return flat.length <= chars ? flat : `${cutAt(flat, chars)}…`;
    }
    const flat = text.slice(0, window).replace(/\s+/g, " ").trimStart();
    if (flat.length > chars) return `${cutAt(flat, chars)}…`;
  }
}

/** The first `chars` code units of `text`, one fewer where the cut would split a surrogate
 * pair (an emoji): half of one is not text a model's API takes. */
function cutAt(text, chars) {
  const last = text.charCodeAt(chars - 1);
  const next = text.charCodeAt(chars);
  return text.slice(0, last >= 0xD800 && last <= 0xDBFF && next >= 0xDC00 && next <= 0xDFFF ? chars - 1 : chars);
}

/** The name `reloadTool` has: a result of a call of it is what the model asked back. */
const RELOAD = "context_reload";

/** Records in `latest` the name of each call message `m` of `format` makes, by its id (a
 * LangChain message by its plain shape). */
function callNames(format, m, latest) {
  const d = format === "langchain" ? langchainShape(m)[1] : m;
  if (d === null || typeof d !== "object") return;
  for (const c of Array.isArray(d.tool_calls) ? d.tool_calls : []) {
    if (c) latest.set(c.id, c.function ? c.function.name : c.name);
  }
  if (format === "openai-responses" && d.type === "function_call") latest.set(d.call_id, d.name);
  const content = contentOf(format, m);
  for (const p of Array.isArray(content) ? content : []) if (p && p.type === "tool_use") latest.set(p.id, p.name);
}

/** The ids of the calls message `m` of `format` answers, where a result names no tool. */
function answeredIds(format, m) {
  const answered = [];
  const d = format === "langchain" ? langchainShape(m)[1] : m;
  if (d === null || typeof d !== "object") return answered;
  if (typeof d.tool_call_id === "string") answered.push(d.tool_call_id);
  if (format === "openai-responses" && d.type === "function_call_output") answered.push(d.call_id);
  const content = contentOf(format, m);
  for (const p of Array.isArray(content) ? content : []) if (p && p.type === "tool_result") answered.push(p.tool_use_id);
  return answered;
}

/**
 * Whether message `index` answers a `context_reload` call: its result is what the model
 * asked back, so it is never offloaded or rewritten again (the step after a reload is over
 * budget by construction; a preview of it would send the model reloading in a loop).
 */
function answersReload(reading, index) {
  const format = reading.format, m = reading.items[index];
  if (m === null || typeof m !== "object") return false;
  // (Where a result names its tool itself.)
  if (format === "vercel" || format === "vercel-ui" || format === "gemini") {
    const content = contentOf(format, m);
    return (Array.isArray(content) ? content : []).some((p) => p && (p.type === "tool-result" ? p.toolName === RELOAD
      : p.functionResponse ? p.functionResponse.name === RELOAD : p.type === `tool-${RELOAD}`));
  }
  return reloadAnswers(reading).has(index);
}

/** The messages of a reading that answer a `context_reload` call, found once a reading
 * (every cleared result and listed call asks): a result answers the latest call of its id
 * before it, as the core pairs them (ids some servers number per response repeat). */
const RELOAD_ANSWERS = new WeakMap();

function reloadAnswers(reading) {
  let found = RELOAD_ANSWERS.get(reading);
  if (found === undefined || found.n !== reading.items.length) {
    const latest = new Map(), answers = new Set();
    reading.items.forEach((m, i) => {
      if (m === null || typeof m !== "object") return;
      for (const id of answeredIds(reading.format, m)) if (latest.get(id) === RELOAD) answers.add(i);
      callNames(reading.format, m, latest);
    });
    found = { answers, n: reading.items.length };
    RELOAD_ANSWERS.set(reading, found);
  }
  return found.answers;
}

/** Whether one of the messages at `indices` answers a `context_reload` call: a tool run that
 * holds one is not compressed (stage 1), as the result is not offloaded or cleared. */
export function holdsReload(reading, indices) {
  return indices.some((i) => answersReload(reading, i));
}

/** Stages 2–3: `{message, id}`, the message at `index` with its texts cut to previews (and
 * without its orphan results, as every copy written for it); none for a reload's result. */
export function offloadMessage(reading, index, previewChars, tokens) {
  if (answersReload(reading, index)) return { message: undefined, id: "" };
  const original = withoutOrphans(reading, index), id = offloadId([original]);
  const note = `[offloaded ${Math.round(tokens)} tokens as ${id}; call context_reload with {"id":"${id}"} for the full text]`;
  const message = rewriteTexts(reading.format, original, (text) => `${note}\n${previewOf(text, previewChars)}`);
  return { message, id };
}

/**
 * Stage 5: `{message, id}`, the message at `index` (`tokens` of it) with its tool results
 * cleared: each result's text becomes a placeholder naming the offload id, as Anthropic's
 * context editing and LangChain's `ClearToolUsesEdit` leave one, with the id to reload it.
 * No preview: every old result gets one, and a head of even 40 characters cost more than
 * the facts it showed (docs/performance.md, the retention benchmark). A message that is
 * more than tool results (a user's text beside Anthropic results, a UIMessage's answer
 * beside its tool parts) keeps the rest as it is; a result a reduction wrote already
 * stays too. None for a reload's result.
 */
export function clearToolResult(reading, index, tokens) {
  if (answersReload(reading, index)) return { message: undefined, id: "" };
  const original = withoutOrphans(reading, index), id = offloadId([original]);
  const note = `[cleared ${Math.round(tokens)} tokens as ${id}]`;
  const message = rewriteTexts(reading.format, original, (text) => (noted(0, text) !== 0 ? text : note), false, reading.roles[index] !== TOOL);
  return { message, id };
}

/**
 * What the summarizer is handed of the message at `index` when it is too large for one call
 * (`summarizerInputTokens`): a copy in its format (without its orphan results) with each
 * text cut to its head and tail, `keep` (0–1) of its length. Undefined when cutting its texts
 * saves nothing (its size is in a call's arguments or an image): it is handed as it is. The
 * original stays where it is (the input, `offloaded`, a history's `original`).
 */
export function excerptMessage(reading, index, keep) {
  return rewriteTexts(reading.format, withoutOrphans(reading, index), (text) => headAndTail(text, keep));
}

/** `text` as its head and tail, `keep` (0–1) of its length in all, and between them how many
 * characters were left out. */
export function headAndTail(text, keep) {
  const kept = Math.max(0, Math.floor(text.length * keep));
  if (kept >= text.length) return text;
  let head = Math.ceil(kept / 2), tail = text.length - (kept - head);
  // (Not between the halves of a surrogate pair: half of one is not text a model's API takes.)
  if (head > 0 && isHighSurrogate(text.charCodeAt(head - 1))) head--;
  if (tail < text.length && isLowSurrogate(text.charCodeAt(tail))) tail++;
  return `${text.slice(0, head)}\n[… ${tail - head} characters omitted …]\n${text.slice(tail)}`;
}

const isHighSurrogate = (c) => c >= 0xD800 && c <= 0xDBFF;
const isLowSurrogate = (c) => c >= 0xDC00 && c <= 0xDFFF;

/** Stages 6–7: `{message, id}`, the message at `index` with its texts replaced by `summary`. */
export function rewriteWithSummary(reading, index, summary) {
  if (answersReload(reading, index)) return { message: undefined, id: "" };
  const original = withoutOrphans(reading, index), id = offloadId([original]);
  const note = `[compressed; the original is ${id}, restored by context_reload]`;
  let first = true;
  const message = rewriteTexts(reading.format, original, () => {
    const text = first ? `${note}\n${summary}` : note;
    first = false;
    return text;
  }, true);
  return { message, id };
}

/** A call as a tool run's digest lists it: `name(args)`, the arguments' JSON cut short. */
const digestCall = (name, args) => `${name ?? "tool"}(${previewOf(jsonText(args), 80)})`;

/** The tool calls of a message as strings, `show(name, args)` each (`name(args)` unless
 * given), in any format. */
export function callsOf(format, m, show = digestCall) {
  const out = [];
  const add = (name, args) => out.push(show(name, args));
  if (format === "openai" || format === "langchain") {
    const d = format === "langchain" ? langchainShape(m)[1] : m;
    for (const c of Array.isArray(d.tool_calls) ? d.tool_calls : []) {
      if (c && c.function) add(c.function.name, c.function.arguments);
      else if (c) add(c.name, c.args);
    }
    if (m.function_call) add(m.function_call.name, m.function_call.arguments);
  } else if (format === "openai-responses") {
    if (typeof m.type === "string" && m.type.endsWith("_call")) add(m.name ?? m.type, m.arguments ?? m.input ?? m.action);
  } else {
    const content = contentOf(format, m);
    for (const p of Array.isArray(content) ? content : []) {
      if (!p || typeof p !== "object") continue;
      if (p.type === "tool_use") add(p.name, p.input);
      else if (p.type === "tool-call") add(p.toolName, p.input ?? p.args);
      else if (format === "vercel-ui" && isUiTool(p)) add(p.toolName ?? p.type.slice(5), p.input);
      else if (p.functionCall) add(p.functionCall.name, p.functionCall.args);
    }
  }
  return out;
}

/** The result text of a tool message, in any format. */
function resultOf(format, m) {
  if (format === "openai-responses") return jsonText(m.output);
  const content = contentOf(format, m);
  if (typeof content === "string") return content;
  const texts = [];
  for (const p of Array.isArray(content) ? content : []) {
    if (!p || typeof p !== "object") continue;
    if (p.type === "tool_result") texts.push(typeof p.content === "string" ? p.content : jsonText(p.content));
    else if (p.type === "tool-result") texts.push(payloadText(p.output));
    else if (format === "vercel-ui" && isUiTool(p)) texts.push(p.output !== undefined ? payloadText(p.output) : String(p.errorText ?? ""));
    else if (p.functionResponse) texts.push(jsonText(p.functionResponse.response));
    else if (typeof p.text === "string") texts.push(p.text);
  }
  return texts.join("\n");
}

/**
 * Stage 1: `{message, id}`, one message standing for the tool run at `indices`: the
 * summarizer's `summary`, or (without one) a digest of the calls and result previews. An
 * assistant message; in Gemini a user turn, as the function responses it stands for are:
 * a run ends before a model turn — often a `functionCall` turn, which must follow a user
 * or `functionResponse` turn (SPEC §9.4). Read back, it is no user input (`noted`).
 */
export function compressRun(reading, indices, previewChars, summary) {
  const run = pick(reading, indices);
  const id = offloadId(run);
  const lines = [`[compressed tool run: ${run.length} messages, stored as ${id}; call context_reload with {"id":"${id}"} to restore them]`];
  if (typeof summary === "string") {
    lines.push(summary);
  } else {
    run.forEach((m, k) => {
      for (const call of callsOf(reading.format, m)) lines.push(`- called ${call}`);
      // A digest line per result: short, the originals are one reload away.
      // (An AI SDK UIMessage holds its calls' results itself.)
      if (reading.roles[indices[k]] === TOOL || reading.format === "vercel-ui") lines.push(`  → ${previewOf(resultOf(reading.format, m), Math.min(previewChars, 100))}`);
    });
  }
  const role = reading.format === "gemini" ? "user" : "assistant";
  const message = makeMessage(reading, role, lines.join("\n"));
  // A run of one message whose calls and results are all in its content (a UIMessage's tool
  // parts; server and provider-run tools) is that message with its content changed, its id
  // and other fields kept (SPEC §2), not a new message.
  if (run.length === 1 && ONE_MESSAGE_RUNS.has(reading.format)) {
    return { message: withContent(reading.format, run[0], contentOf(reading.format, message)), id };
  }
  return { message, id };
}

/** The formats whose calls and results are parts of a message's content, so that a copy
 * with other content holds none of them. */
const ONE_MESSAGE_RUNS = new Set(["vercel-ui", "vercel", "anthropic"]);

/** The id in the note opening an earlier preview, cleared result or compressed text
 * (`offloadMessage`, `clearToolResult`, `rewriteWithSummary`), in any format, or undefined. */
function noteId(m) {
  if (m === null || typeof m !== "object") return undefined;
  let text;
  try {
    const content = m.parts !== undefined ? m.parts : m.content !== undefined ? m.content
      : typeof m.type === "string" && m.type.endsWith("_call_output") ? m.output : langchainShape(m)[1].content;
    text = typeof content === "string" ? content : Array.isArray(content) ? openingText(content) : undefined;
  } catch {
    return undefined;
  }
  if (typeof text !== "string") return undefined;
  const match = PREVIEW_NOTE.exec(text) ?? CLEARED_NOTE.exec(text) ?? COMPRESSED_NOTE.exec(text);
  return match === null ? undefined : match[1];
}

/**
 * The offloads of a reduction, `added`, as a store that already holds `known` keeps them:
 * an original that is itself an earlier preview or compressed text (a tool run compressed
 * over previews) is replaced by the originals stored under its id, so that reloading the
 * digest gives the messages as they were, not their previews. A new object; ids whose
 * originals are not stored stay as they are.
 */
export function resolveOffloads(known, added) {
  const stored = (id) => (Object.hasOwn(added, id) ? added[id] : known !== null && typeof known === "object" && Object.hasOwn(known, id) ? known[id] : undefined);
  const out = {};
  for (const [id, originals] of Object.entries(added)) {
    const value = !Array.isArray(originals) ? originals : originals.flatMap((m) => {
      const earlier = noteId(m);
      const found = earlier !== undefined && earlier !== id ? stored(earlier) : undefined;
      return Array.isArray(found) ? found : [m];
    });
    // (`defineProperty`: an id "__proto__" is an id like any other.)
    Object.defineProperty(out, id, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * The `context_reload` tool: give it to the model so that it can ask for an offloaded
 * message back (`ChatHistory.reload(id)` or `result.offloaded[id]` answer it).
 */
export const reloadTool = Object.freeze({
  name: "context_reload",
  description:
    "Restore the full content of earlier conversation messages that were shortened to save context. " +
    "Call it with the id shown in a message that says it was offloaded, cleared or compressed (ids look like ctx_0123456789abcdef).",
  parameters: Object.freeze({
    type: "object",
    properties: Object.freeze({
      id: Object.freeze({ type: "string", description: "The offload id, e.g. ctx_0123456789abcdef." }),
    }),
    required: Object.freeze(["id"]),
    additionalProperties: false,
  }),
});

/**
 * Writes a reduction's offloads into the app's store, each id's originals by `set`, so that
 * a later step or request can reload them. A promise when the store's `set` returns one
 * (Durable Object storage, KV): `reduce` waits for it. What the store throws reaches the
 * caller as itself.
 */
export function storeOffloads(store, offloaded) {
  // An original that is itself an earlier placeholder (a reduced history sent back, a
  // history's working messages) is stored as what the store holds under its id, as
  // `resolveOffloads` does for a history: a reload gives the result, not the placeholder.
  const inner = new Set();
  for (const originals of Object.values(offloaded)) {
    for (const m of Array.isArray(originals) ? originals : []) {
      const id = noteId(m);
      if (id !== undefined && !Object.hasOwn(offloaded, id)) inner.add(id);
    }
  }
  const known = {}, reading = [];
  for (const id of inner) {
    const got = store.get(id);
    if (isThenable(got)) reading.push(got.then((value) => { known[id] = value; }));
    else known[id] = got;
  }
  const write = () => {
    const resolved = inner.size === 0 ? offloaded : resolveOffloads(known, offloaded);
    const pending = [];
    for (const id of Object.keys(resolved)) {
      const written = store.set(id, resolved[id]);
      if (isThenable(written)) pending.push(written);
    }
    return pending.length === 0 ? undefined : Promise.all(pending);
  };
  return reading.length === 0 ? write() : Promise.all(reading).then(write);
}

const isThenable = (x) => x !== null && typeof x === "object" && typeof x.then === "function";
