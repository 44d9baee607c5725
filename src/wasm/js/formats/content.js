// @eager: every call runs this module, so it is compiled at import (see build.rs).
// What the formats' readers share: the part types that tell formats apart, payloads and
// media, the notes a reduction writes, a message's opening text.

import { bad, table } from "../common.js";
import { COMPRESSED, PREVIEW, REAL_USER } from "../contract.js";

// Formats (SPEC §2). Each has `looks(m)`: could m be a message of this format (used by
// "auto" detection), and `read(r, i, m)`: report its role, flags, texts, images and
// tool-call links to the Reading; it may return `STAMPED` when it wrote the message's stamp
// itself, from the fields it loaded (else `stamp(m, s, k, stampWith)` writes it after).
// `stamp(m, s, k, w)` hands a message's stamp fields to `w`; a format whose `read` always
// stamps may have `same(m, s, k)` instead: whether m still has the fields stamped at `s[k]`.
// A format may also have `readChecked(r, i, m)`: `looks` and `read` in one, `MISFIT` when m
// does not fit.

/** What `read` returns when it wrote message i's stamp. */
export const STAMPED = 1;

/** What a checked read returns for a message not of its format (nothing was read). */
export const MISFIT = 2;

/** Part and block types that only some formats use; other types do not discriminate. */
const PART_FORMATS = table({
  image_url: ["openai", "langchain"],
  input_audio: ["openai"],
  refusal: ["openai", "openai-responses"],
  input_text: ["openai-responses"],
  output_text: ["openai-responses"],
  input_image: ["openai-responses"],
  input_file: ["openai-responses"],
  document: ["anthropic", "langchain"],
  tool_use: ["anthropic", "langchain"],
  tool_result: ["anthropic", "langchain"],
  thinking: ["anthropic", "langchain"],
  redacted_thinking: ["anthropic", "langchain"],
  server_tool_use: ["anthropic", "langchain"],
  web_search_tool_result: ["anthropic", "langchain"],
  web_fetch_tool_result: ["anthropic", "langchain"],
  code_execution_tool_result: ["anthropic", "langchain"],
  bash_code_execution_tool_result: ["anthropic", "langchain"],
  text_editor_code_execution_tool_result: ["anthropic", "langchain"],
  tool_search_tool_result: ["anthropic", "langchain"],
  mcp_tool_use: ["anthropic", "langchain"],
  mcp_tool_result: ["anthropic", "langchain"],
  container_upload: ["anthropic", "langchain"],
  "tool-call": ["vercel"],
  "tool-result": ["vercel"],
  "tool-approval-request": ["vercel"],
  "tool-approval-response": ["vercel"],
  "reasoning-file": ["vercel"],
  // Types several formats use, each in a shape of its own: by that shape (a shape none of
  // them has tells nothing).
  image: (p) => (p.source !== undefined ? ANTHROPIC_PART : p.image !== undefined ? VERCEL_PART : undefined),
  file: (p) => (p.file !== undefined ? OPENAI_PART : p.data !== undefined && (p.mediaType ?? p.mimeType) !== undefined ? VERCEL_PART : undefined),
  reasoning: (p) => (typeof p.text === "string" ? VERCEL_PART : undefined),
});

const OPENAI_PART = ["openai", "langchain"], ANTHROPIC_PART = ["anthropic", "langchain"], VERCEL_PART = ["vercel", "langchain"];

/** The only formats whose messages have `part` (`PART_FORMATS`), or undefined: any. */
function partOnly(part) {
  const only = PART_FORMATS.get(part.type);
  return typeof only === "function" ? only(part) : only;
}

/**
 * Throws when `part`, a part of message i that `format`'s reader does not know, is one that
 * only other formats use (`PART_FORMATS`): a history read under a wrong `config.format` (an
 * Anthropic `tool_use` read as an OpenAI part would be text, its result unlinked). Called
 * only for parts without a text, which a reader's known parts and text parts are not.
 */
export function foreignPart(i, part, format) {
  const only = partOnly(part);
  if (only !== undefined && !only.includes(format)) {
    throw bad(i, `has a ${JSON.stringify(part.type)} part, as ${only.join(" and ")} messages do, not ${format} ones: set config.format to "${only[0]}" (or "auto")`);
  }
}

/** Whether every typed part of `content` may belong to `format`. */
export function partsFit(content, format) {
  if (!Array.isArray(content)) return true;
  for (const part of content) {
    if (part === null || typeof part !== "object") continue;
    const only = partOnly(part);
    if (only !== undefined && !only.includes(format)) return false;
  }
  return true;
}

export function linkId(value) {
  // (A string as it is: `String(value)` is a call, on every call id and result.)
  return typeof value === "string" ? value : typeof value === "number" ? String(value) : undefined;
}

/** The link id of an AI SDK approval, its request's and its response's: `approval:` and its
 * `approvalId` (apart from the tool calls' ids). */
export const APPROVAL = "approval:";

/** Whether a result of link id `id` stands alone when its call is not before it, instead of
 * being an orphan: an AI SDK approval response (see `Reading.answer`). */
export function standsAlone(format, id) {
  return format === "vercel" && id.startsWith(APPROVAL);
}

/** Whether part `p` is an AI SDK UIMessage tool part (`tool-NAME` or `dynamic-tool`): a
 * call, and its output when it has one. */
export function isUiTool(p) {
  return typeof p.type === "string" && (p.type === "dynamic-tool" || p.type.startsWith("tool-"));
}

/**
 * An Anthropic `document` block: its text when its source is plain text (`{type: "text",
 * data}`) or content blocks (`{type: "content", content}`), with its title and context;
 * else (a PDF, a file, a URL) `imageTokens`, as an image.
 */
export function documentBlock(r, b) {
  const source = b.source;
  if (source !== null && typeof source === "object" && (source.type === "text" || source.type === "content")) {
    r.text(b.title);
    r.text(b.context);
    if (source.type === "text") r.text(source.data);
    else payload(r, source.content);
  } else {
    r.image();
  }
}

/** Texts and images of a nested result payload (tool results hold text or parts). */
export function payload(r, value) {
  if (typeof value === "string") {
    r.text(value);
  } else if (Array.isArray(value)) {
    for (const part of value) payloadPart(r, part);
  } else if (value !== null && typeof value === "object" && MEDIA_OUTPUTS.has(value.type)) {
    r.image();
  } else if (value !== undefined && value !== null) {
    r.json(value);
  }
}

/** One part of a payload of parts: a document, media (`imageTokens`), a text, else its JSON. */
export function payloadPart(r, part) {
  if (part !== null && typeof part === "object" && part.type === "document") {
    documentBlock(r, part);
  } else if (mediaPart(part)) {
    r.image();
  } else if (part !== null && typeof part === "object" && typeof part.text === "string") {
    r.text(part.text);
  } else {
    r.json(part);
  }
}

/** Whether a payload's part is an image, a file or other media (`imageTokens` each, not
 * its data as text): one of `MEDIA_PARTS`, matched exactly (a tool's JSON result may be an
 * array of objects with a `type` of their own, such as "social_media_post"). */
function mediaPart(part) {
  return part !== null && typeof part === "object" && MEDIA_PARTS.has(part.type);
}

/** The media part types of tool results: Anthropic's `image` and `document`, the AI SDK's
 * `media` (v5), `image-data`, `file-url`… (v6) and `file-reference`, `image-file-reference`
 * (v7, whose `file` item, a type of many tools' own JSON, the vercel reader weighs), OpenAI's. */
const MEDIA_PARTS = new Set([
  "image", "document", "media", "image-data", "image-url", "file-data", "file-url", "file-id",
  "image-file-id", "file-reference", "image-file-reference", "image_url", "input_image", "input_file",
  "input_audio", "computer_screenshot",
]);

/** Whole payloads that are one image: the Responses API's (`computer_call_output`'s
 * `computer_screenshot`, and its input parts). Any other single object is a tool's JSON. */
export const MEDIA_OUTPUTS = new Set(["computer_screenshot", "input_image", "input_file"]);

/**
 * `flags` with what the note opening a message's text says when a reduction wrote it
 * (`offloadMessage`, `clearToolResult`, `rewriteWithSummary`, `compressRun`): PREVIEW, or COMPRESSED —
 * which is no user input. `text`: the message's opening text (`openingText`).
 */
export function noted(flags, text) {
  // (Most texts do not start with "[", and those that do — JSON arrays, links — seldom go
  // on as a note does.)
  if (typeof text !== "string" || text.charCodeAt(0) !== 0x5b || !(text.startsWith("[offloaded ") || text.startsWith("[cleared ") || text.startsWith("[compressed"))) return flags;
  if (PREVIEW_NOTE.test(text) || CLEARED_NOTE.test(text)) return flags | PREVIEW;
  if (COMPRESSED_NOTE.test(text)) return flags | COMPRESSED;
  // A compressed tool run in Gemini is a user turn (`compressRun`), and no user input.
  if (RUN_NOTE.test(text)) return (flags & ~REAL_USER) | COMPRESSED;
  return flags;
}

/**
 * A message's flags from its content: `flags` (its role's), SUMMARY in their place when it
 * opens with a summary (`summary`: whether its role may hold one), and what a note opening
 * it says (`noted`). A string whose first unit is none of "<", "[" and white space opens
 * with neither: most messages are told so without a look at more of their content.
 */
export function contentFlags(r, content, flags, summary) {
  if (typeof content === "string") {
    const c = content.charCodeAt(0);
    if (c > 32 && c !== 60 && c !== 91) return flags;
  } else if (content === null || content === undefined) {
    return flags;
  }
  const summaryFlags = summary ? r.summaryFlags(firstText(content)) : 0;
  return noted(summaryFlags !== 0 ? summaryFlags : flags, openingText(content));
}

/**
 * The text where a rewritten message's note stands (see `rewriteTexts`): a string content,
 * else the first tool result or text part that is not reasoning.
 */
export function openingText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  for (const p of content) {
    if (p === null || typeof p !== "object") continue;
    if (p.type === "tool_result") return Array.isArray(p.content) ? firstText(p.content) : p.content;
    if (p.type === "tool-result") return p.output !== null && typeof p.output === "object" ? p.output.value : undefined;
    if (p.functionResponse) {
      // (Under its first key: see `rewriteParts`.)
      const response = p.functionResponse.response;
      if (response !== null && typeof response === "object") for (const key in response) return response[key];
      return undefined;
    }
    if (isUiTool(p) && "output" in p) return p.output;
    const text = textOfPart(p);
    if (text !== undefined) return text;
    // An entry of a Responses shell_call_output.
    if (typeof p.stdout === "string" && p.type === undefined) return p.stdout || p.stderr;
  }
  return undefined;
}

function firstText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    for (const part of content) {
      if (typeof part === "string") return part;
      if (part && typeof part.text === "string") return part.text;
    }
  }
  return undefined;
}

export function roleError(i, role, names) {
  return bad(i, role === undefined
    ? `has no role; expected one of ${names}`
    : `has an unknown role ${JSON.stringify(String(role))}; expected one of ${names}`);
}

/** Whether `text` is a string of more than white space (which Anthropic refuses as a text
 * block of its own). */
export function visible(text) {
  return typeof text === "string" && /\S/.test(text);
}

/** Blocks that carry calls or reasoning, not something shown (see `shows`). */
const CALL_OR_REASONING = new Set(["tool_use", "tool_call", "tool_call_chunk", "server_tool_use", "thinking", "redacted_thinking", "reasoning"]);

/**
 * Whether OpenAI or LangChain content shows something beside the message's calls: a text of
 * more than white space, an image, a file, a block of a kind not known here. A message whose
 * content shows nothing carries its calls alone (see `CALLS_ONLY`).
 */
export function shows(content) {
  if (typeof content === "string") return visible(content);
  if (!Array.isArray(content)) return false;
  for (const b of content) {
    if (b === null || typeof b !== "object") {
      if (visible(b)) return true;
    } else if (CALL_OR_REASONING.has(b.type) ? false : typeof b.text === "string" ? visible(b.text) : true) {
      return true;
    }
  }
  return false;
}

/** Reasoning is never edited (SPEC §9.4): these parts keep their text. */
const REASONING_PARTS = new Set(["reasoning", "thinking", "redacted_thinking"]);

export function textOfPart(p) {
  if (p === null || typeof p !== "object" || typeof p.text !== "string") return undefined;
  return p.thought || REASONING_PARTS.has(p.type) ? undefined : p.text;
}

// The notes that open what a reduction wrote: a later reduction reads them (`noted`) and
// leaves the message as it is — a preview is not previewed again, nor a digest or a
// compressed text compressed again (SPEC §9.9).
// (The two notes of one message's original capture its id: see `resolveOffloads`.)
export const PREVIEW_NOTE = /^\[offloaded \d+ tokens as (ctx_[0-9a-f]{16}); /;

/** A tool result `progressive` cleared (`clearToolResult`): a preview as any other. */
export const CLEARED_NOTE = /^\[cleared \d+ tokens as (ctx_[0-9a-f]{16})\]/;

export const COMPRESSED_NOTE = /^\[compressed; the original is (ctx_[0-9a-f]{16}), /;

/** A tool run's digest (`compressRun`): how many messages it stands for, and its id. */
export const RUN_NOTE = /^\[compressed tool run: (\d+) messages, stored as (ctx_[0-9a-f]{16}); /;
