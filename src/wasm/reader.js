// ---- common.js ----
// What all of the boundary's JavaScript uses: the error it throws, the role codes and flags
// it shares with the core, and small helpers (own keys, values in words, JSON text).
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).

/**
 * The error every function of this package throws for bad input or a failed reduction.
 * `code` is one of SPEC §10's codes; `index` names the message at fault, `field` the
 * config option.
 */
export class ReduceError extends Error {
  constructor(code, message, index, field) {
    super(message);
    this.name = "ReduceError";
    this.code = code;
    if (index !== undefined && index !== null) this.index = index;
    if (field !== undefined && field !== null) this.field = field;
  }
}

// Role codes and flags: the same numbers as `Role::code` and `flags` in transcript.rs.
export const SYSTEM = 0, USER = 1, ASSISTANT = 2, TOOL = 3, OTHER = 4;

export const REAL_USER = 1, SUMMARY = 2, ATTACH_NEXT = 4, PREVIEW = 8, COMPRESSED = 16, CALLS_ONLY = 32;

export const CALL = 0, RESULT = 1;

/** `map[key]` for own keys only: "toString" is not a role. */
export function own(map, key) {
  return typeof key === "string" && Object.hasOwn(map, key) ? map[key] : undefined;
}

/** A lookup table that knows only its own keys. */
export function table(entries) {
  return new Map(Object.entries(entries));
}

export function describe(value) {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "object": return "an object";
    case "function": return "a function";
    case "symbol": return "a symbol";
    case "string": return value.length === 0 ? "an empty string" : `the string ${JSON.stringify(value.slice(0, 40))}`;
    default: return `the ${typeof value} ${String(value)}`;
  }
}

export function bad(index, what) {
  return new ReduceError("INVALID_MESSAGE", `message ${index}: ${what}`, index);
}

export function jsonText(value) {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  const text = JSON.stringify(value);
  return text === undefined ? "" : text;
}

/** Nesting past this is left to `JSON.stringify` (which reports a cycle). */
const MAX_JSON_DEPTH = 64;

/**
 * Whether `JSON.stringify(value)` of an object or array writes plain data only (objects
 * with Object's prototype or none, arrays, strings, finite or other numbers, booleans, null,
 * and what it skips) and so cannot throw: no `toJSON`, no other prototype, no bigint, no
 * nesting past MAX_JSON_DEPTH (a cycle). A walk over the structure, not the text. Property
 * getters run, as they do for `JSON.stringify`.
 */
export function plainJson(value, depth) {
  if (depth > MAX_JSON_DEPTH || value.toJSON !== undefined) return false;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let k = 0; k < value.length; k++) if (!plainJsonItem(value[k], depth)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key of Object.keys(value)) if (!plainJsonItem(value[key], depth)) return false;
  return true;
}

function plainJsonItem(item, depth) {
  if (item === null || typeof item !== "object") return typeof item !== "bigint";
  return plainJson(item, depth + 1);
}

/** The most messages one call takes: far above any context window, far below memory. */
export const MAX_MESSAGES = 10_000_000;

/** An exception's message, whatever was thrown. */
export function reason(e) {
  try {
    return String(e !== null && typeof e === "object" && "message" in e ? e.message : e);
  } catch {
    return "an unprintable exception";
  }
}

// ---- formats/content.js ----
// What the formats' readers share: the part types that tell formats apart, payloads and
// media, the notes a reduction writes, a message's opening text.
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).


// ---------------------------------------------------------------------------------------
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
    for (const part of value) {
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
  } else if (value !== null && typeof value === "object" && MEDIA_OUTPUTS.has(value.type)) {
    r.image();
  } else if (value !== undefined && value !== null) {
    r.json(value);
  }
}

/** Whether a payload's part is an image, a file or other media (`imageTokens` each, not
 * its data as text): one of `MEDIA_PARTS`, matched exactly (a tool's JSON result may be an
 * array of objects with a `type` of their own, such as "social_media_post"). */
function mediaPart(part) {
  return part !== null && typeof part === "object" && MEDIA_PARTS.has(part.type);
}

/** The media part types of tool results: Anthropic's `image` and `document`, the AI SDK's
 * `media` (v5) and `image-data`, `file-url`… (v6), OpenAI's. */
const MEDIA_PARTS = new Set([
  "image", "document", "media", "image-data", "image-url", "file-data", "file-url", "file-id",
  "image-file-id", "image_url", "input_image", "input_file", "input_audio", "computer_screenshot",
]);

/** Whole payloads that are one image: the Responses API's (`computer_call_output`'s
 * `computer_screenshot`, and its input parts). Any other single object is a tool's JSON. */
export const MEDIA_OUTPUTS = new Set(["computer_screenshot", "input_image", "input_file"]);

/**
 * `flags` with what the note opening a message's text says when a reduction wrote it
 * (`offloadMessage`, `rewriteWithSummary`, `compressRun` below): PREVIEW, or COMPRESSED —
 * which is no user input. `text`: the message's opening text (`openingText`).
 */
export function noted(flags, text) {
  // (Most texts do not start with "[", and those that do — JSON arrays, links — seldom go
  // on as a note does.)
  if (typeof text !== "string" || text.charCodeAt(0) !== 0x5b || !(text.startsWith("[offloaded ") || text.startsWith("[compressed"))) return flags;
  if (PREVIEW_NOTE.test(text)) return flags | PREVIEW;
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
  return noted(summary && r.isSummaryText(firstText(content)) ? SUMMARY : flags, openingText(content));
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
const PREVIEW_NOTE = /^\[offloaded \d+ tokens as ctx_[0-9a-f]{16}; /;

const COMPRESSED_NOTE = /^\[compressed; the original is ctx_[0-9a-f]{16}, /;

const RUN_NOTE = /^\[compressed tool run: \d+ messages, stored as ctx_[0-9a-f]{16}; /;

// ---- formats/anthropic.js ----
// ---- anthropic: Messages API -----------------------------------------------------------
// One format's reader (what each has: the head of formats/content.js).
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).


const ANTHROPIC_ROLES = table({ system: SYSTEM, user: USER, assistant: ASSISTANT });

export function readAnthropic(r, i, m) {
  const role = ANTHROPIC_ROLES.get(m.role);
  if (role === undefined) throw roleError(i, m.role, "user, assistant");
  const content = m.content;
  let realUser = role === USER;
  if (Array.isArray(content) && role === USER) {
    realUser = content.length === 0 || content.some((b) => !(b && b.type === "tool_result"));
  }
  const flags = contentFlags(r, content, realUser ? REAL_USER : 0, true);
  r.begin(i, realUser || role !== USER ? role : TOOL, flags);
  r.roleText(m.role);
  if (typeof content === "string") {
    r.text(content);
    return;
  }
  if (!Array.isArray(content)) {
    if (role === SYSTEM && content === undefined) return;
    throw bad(i, `content must be a string or an array of content blocks, got ${describe(content)}`);
  }
  // Whether it has blocks besides its calls and reasoning (and texts of white space).
  let more = false;
  for (const b of content) {
    if (b === null || typeof b !== "object") continue;
    switch (b.type) {
      case "document":
        more = true;
        documentBlock(r, b);
        break;
      case "image": case "container_upload":
        more = true;
        r.image();
        break;
      case "tool_use": case "server_tool_use": case "mcp_tool_use": {
        const id = linkId(b.id);
        if (id === undefined) throw bad(i, `a ${b.type} block needs an id`);
        r.call(id);
        r.text(id);
        r.text(b.name);
        r.json(b.input);
        break;
      }
      case "tool_result": case "web_search_tool_result": case "mcp_tool_result": {
        more = true;
        const id = linkId(b.tool_use_id);
        if (id === undefined) throw bad(i, `a ${b.type} block needs tool_use_id, the id of its tool_use`);
        r.result(id);
        r.text(id);
        payload(r, b.content);
        break;
      }
      case "thinking":
        r.text(b.thinking);
        break;
      case "redacted_thinking":
        r.text(b.data);
        break;
      default:
        // (Anthropic refuses a text block of white space alone.)
        more = more || typeof b.text !== "string" || visible(b.text);
        if (typeof b.text === "string") r.text(b.text);
        else if (b.type && b.type.endsWith("_tool_result")) {
          const id = linkId(b.tool_use_id);
          if (id !== undefined) r.result(id);
          payload(r, b.content);
        } else {
          foreignPart(i, b, "anthropic");
        }
    }
  }
  if (!more && role === ASSISTANT && r.linkLength > r.linkStart[i]) r.callsOnly();
}

export function looksAnthropic(m) {
  return ANTHROPIC_ROLES.get(m.role) !== undefined && m.type === undefined && m.parts === undefined && m.tool_calls === undefined &&
    (typeof m.content === "string" || Array.isArray(m.content) || (m.role === "system" && m.content === undefined)) &&
    partsFit(m.content, "anthropic");
}

// ---- formats/gemini.js ----
// ---- gemini: Content -------------------------------------------------------------------
// One format's reader (what each has: the head of formats/content.js).
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).


const GEMINI_ROLES = table({ user: USER, model: ASSISTANT, function: TOOL, tool: TOOL, system: SYSTEM });

export function readGemini(r, i, m) {
  const role = m.role === undefined ? USER : GEMINI_ROLES.get(m.role);
  if (role === undefined) throw roleError(i, m.role, "user, model");
  const parts = m.parts;
  if (!Array.isArray(parts)) throw bad(i, `parts must be an array, got ${describe(parts)}`);
  const responsesOnly = parts.length > 0 && parts.every((p) => p && p.functionResponse);
  const realUser = role === USER && !responsesOnly;
  const flags = contentFlags(r, parts, realUser ? REAL_USER : 0, true);
  r.begin(i, role === USER && responsesOnly ? TOOL : role, flags);
  r.roleText(ROLE_TEXTS.get(m.role) ?? m.role);
  // Whether it has parts besides its calls and thoughts (and empty texts).
  let more = false;
  for (const p of parts) {
    if (p === null || typeof p !== "object") continue;
    more = more || Boolean(p.functionResponse || p.inlineData || p.fileData || p.executableCode || p.codeExecutionResult ||
      (visible(p.text) && !p.thought));
    if (p.functionCall) {
      const fc = p.functionCall;
      // Matched by id when there is one, else by name and order.
      r.call(linkId(fc.id) ?? `name:${fc.name}`);
      r.text(fc.id);
      r.text(fc.name);
      r.json(fc.args);
    } else if (p.functionResponse) {
      const fr = p.functionResponse;
      r.namedResult(linkId(fr.id), fr.name);
      r.text(fr.id);
      r.text(fr.name);
      r.json(fr.response);
      // (A multimodal response: its media, in parts of its own.)
      if (Array.isArray(fr.parts)) for (const q of fr.parts) if (q && (q.inlineData || q.fileData)) r.image();
    } else if (p.inlineData || p.fileData) {
      r.image();
    } else {
      r.text(p.text);
      if (p.executableCode) r.text(p.executableCode.code);
      if (p.codeExecutionResult) r.text(p.codeExecutionResult.output);
    }
  }
  if (!more && role === ASSISTANT && r.linkLength > r.linkStart[i]) r.callsOnly();
}

export function looksGemini(m) {
  return (m.role === undefined || GEMINI_ROLES.get(m.role) !== undefined) && Array.isArray(m.parts) && m.content === undefined &&
    m.parts.every((p) => p !== null && typeof p === "object" && p.type === undefined);
}

// ---- formats/stamps.js ----
// Stamps: the fields of each message that its reading depends on, which the next call
// compares by identity to take that reading over.
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).

/**
 * A message's stamp: the fields its reading depends on most, compared by identity: `a` its
 * content (or parts), `b` its role (or type), `c` its calls (an array, when the format has
 * one), `d` another field; `stampWith` writes them at `s[k]` (from each format's `stamp`, or
 * from what its `read` loaded), with the length of `c` and, for parts, what they were
 * (`partsStamp`); `sameWith` (or a format's `same`) checks them. A message read before is
 * taken over only while its stamp is the same, so replacing a message's content, calls or
 * role (or the message) is always seen, and so is a call pushed onto its calls, and a part
 * pushed, removed or replaced or its text replaced. The slots:
 */
export const STAMP = 6;

/** log2 of the messages whose stamps a chunk of `Stamps` holds. */
export const STAMP_SHIFT = 10;

/** Where message i's stamp starts in its chunk of `Stamps`. */
export function slot(i) {
  return (i & ((1 << STAMP_SHIFT) - 1)) * STAMP;
}

/**
 * The stamps of a reading's messages, in chunks of 1 << STAMP_SHIFT messages: message i's
 * are `chunks[i >> STAMP_SHIFT][slot(i) …]`. Chunks are small enough to stay out of V8's
 * large-object space (see `TextChunks`), and a reading that goes on from another shares
 * its chunks.
 */
export class Stamps {
  /** `n`: the messages of the reading that makes it. (Its first chunk is made for them
   * only: a chunk for 1 << STAMP_SHIFT messages, 48 KB, was most of what a call on a short
   * history allocated, and so of its time collecting garbage. Written in order, it grows as
   * an array does when the history grows.) */
  constructor(n) {
    this.chunks = [];
    this.first = Math.max(1, Math.min(n, 1 << STAMP_SHIFT)) * STAMP;
  }

  /** The chunk for message i, made when it is the first of its chunk to be written
   * (messages are written in order). */
  writable(i) {
    const c = i >> STAMP_SHIFT;
    const chunks = this.chunks;
    while (c >= chunks.length) chunks.push(new Array(chunks.length === 0 ? this.first : STAMP << STAMP_SHIFT));
    return chunks[c];
  }

  /** Keeps the chunks of the first n messages (what is written after them is let go). */
  truncate(n) {
    this.chunks.length = (n + (1 << STAMP_SHIFT) - 1) >> STAMP_SHIFT;
  }
}

export function stampWith(s, k, a, b, c, d) {
  s[k] = a;
  s[k + 1] = b;
  s[k + 2] = c;
  s[k + 3] = d;
  s[k + 4] = Array.isArray(a) ? partsStamp(a) : -1;
  s[k + 5] = Array.isArray(c) ? c.length : -1;
}

/**
 * Whether `stampWith(s, k, a, b, c, d)` would write what `s[k …]` holds. `a` and `c` are
 * the objects stamped (or the test fails before), so each is an array exactly when its
 * count slot is not -1: a string is not touched again (a content string is far away in
 * memory, on a long history one cache miss each).
 */
export function sameWith(s, k, a, b, c, d) {
  // (`Object.is`, not `!==`: both compare a string by identity first, but `!==` looks at its
  // type before, and a message's text is far from it in memory: a cache miss per message,
  // measured as a quarter of a turn on a 10,000-message history.)
  return Object.is(a, s[k]) && Object.is(b, s[k + 1]) && Object.is(c, s[k + 2]) && Object.is(d, s[k + 3]) &&
    sameInside(s, k, a, c);
}

/** For a stamp whose fields `a` and `c` are the same objects: what is inside them (the
 * number of calls of `c`; the parts of `a`, by `sameParts`). */
export function sameInside(s, k, a, c) {
  const parts = s[k + 4], calls = s[k + 5];
  return (parts === -1 || sameParts(a, parts)) && (calls === -1 || c.length === calls);
}

/**
 * What a message's parts were, for its stamp: each part's text (a string part is its own),
 * or the part itself when it has none. Compared by identity (`sameParts`), so a part
 * pushed, removed or replaced, or its text replaced, is seen, with no text looked at.
 */
function partsStamp(parts) {
  const out = new Array(parts.length);
  for (let k = 0; k < parts.length; k++) out[k] = partMark(parts[k]);
  return out;
}

function sameParts(parts, stamp) {
  if (parts.length !== stamp.length) return false;
  for (let k = 0; k < parts.length; k++) if (!Object.is(partMark(parts[k]), stamp[k])) return false;
  return true;
}

function partMark(p) {
  if (p === null || typeof p !== "object") return p;
  const text = p.text;
  return text !== undefined ? text : p;
}

/** Whether message m's stamp is `chunk[k …]`; false when reading it throws (it is then
 * read afresh, which reports what throws). */
export function sameStamp(same, m, chunk, k) {
  try {
    return same(m, chunk, k);
  } catch {
    return false;
  }
}

// ---- formats/openai.js ----
// ---- openai: Chat Completions ---------------------------------------------------------
// One format's reader (what each has: the head of formats/content.js).
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).


function openaiContent(r, i, content) {
  if (typeof content === "string") {
    r.text(content);
  } else if (Array.isArray(content)) {
    for (const part of content) {
      if (part === null || typeof part !== "object") {
        r.text(part);
        continue;
      }
      switch (part.type) {
        case "image_url": case "input_audio": case "file": case "image":
          r.image();
          break;
        case "refusal":
          r.text(part.refusal);
          break;
        default:
          if (typeof part.text !== "string") foreignPart(i, part, "openai");
          r.text(part.text);
      }
    }
  } else if (content !== null && content !== undefined) {
    throw bad(i, `content must be a string, an array of parts or null, got ${describe(content)}`);
  }
}

/** The role code of an OpenAI role (a switch: faster than a table on the hot path). */
export function openaiRole(role) {
  switch (role) {
    case "user": return USER;
    case "assistant": return ASSISTANT;
    case "tool": case "function": return TOOL;
    case "system": case "developer": return SYSTEM;
    default: return undefined;
  }
}

/**
 * `check`: first whether m fits the format at all (`looksOpenAI` on the fields read here:
 * `MISFIT` when not). Writes its stamp from the same loads (`STAMPED`; `sameOpenAI` checks
 * it).
 *
 * Each field is read once, and every field but the role in a branch of the message's own
 * role: messages from several sources have many shapes (V8's hidden classes), and a read
 * that has met more than four of them is a generic lookup, several times slower; the
 * messages of one role have few (measured: 10,000 messages of six shapes read 1.6–2.7×
 * faster so).
 */
export function readOpenAI(r, i, m, check) {
  const name = m.role;
  switch (name) {
    case "user":
      return readOpenAIFields(r, i, check, name, USER, m.content, m.type, m.parts, m.name, undefined, undefined, undefined, undefined);
    case "assistant":
      return readOpenAIFields(r, i, check, name, ASSISTANT, m.content, m.type, m.parts, m.name, m.refusal, m.tool_calls, m.function_call, undefined);
    case "tool":
      return readOpenAIFields(r, i, check, name, TOOL, m.content, m.type, m.parts, m.name, undefined, undefined, undefined, m.tool_call_id);
    default:
      return readOpenAIFields(r, i, check, name, openaiRole(name), m.content, m.type, m.parts, m.name, undefined, undefined, undefined, undefined);
  }
}

/** `readOpenAI` on the fields it read: `calls` and `legacy` (`function_call`) of an
 * assistant, `callId` of a tool result. */
function readOpenAIFields(r, i, check, name, role, content, type, parts, author, refusal, calls, legacy, callId) {
  if (check && (role === undefined || type !== undefined || parts !== undefined ||
    (typeof content !== "string" && !partsFit(content, "openai")))) return MISFIT;
  if (role === undefined) throw roleError(i, name, "system, developer, user, assistant, tool");
  const flags = contentFlags(r, content, role === USER ? REAL_USER : 0, role !== TOOL);
  if ((content === undefined || content === null) && role !== ASSISTANT && name !== "function") {
    throw bad(i, `a ${name} message needs content (a string or an array of parts)${parts !== undefined ? "; it has parts, as Gemini or UI messages do: set config.format" : ""}`);
  }
  r.begin(i, role, flags);
  r.roleText(name);
  r.text(author);
  openaiContent(r, i, content);
  r.text(refusal);
  if (calls !== undefined && calls !== null) {
    if (!Array.isArray(calls)) throw bad(i, `tool_calls must be an array, got ${describe(calls)}`);
    for (const call of calls) {
      const id = call !== null && typeof call === "object" ? linkId(call.id) : undefined;
      if (id === undefined) throw bad(i, "every entry of tool_calls needs an id");
      r.call(id);
      r.text(id);
      const fn = call.function;
      if (fn !== null && typeof fn === "object") {
        r.text(fn.name);
        r.json(fn.arguments);
      } else {
        // A custom (freeform) tool's call: `{ type: "custom", custom: { name, input } }`.
        const custom = call.custom;
        if (custom !== null && typeof custom === "object") {
          r.text(custom.name);
          r.json(custom.input);
        }
      }
    }
  }
  if (legacy !== null && typeof legacy === "object") {
    r.call(`function:${legacy.name}`);
    r.text(legacy.name);
    r.json(legacy.arguments);
  }
  if (role === ASSISTANT && r.linkLength > r.linkStart[i] && !shows(content) && !visible(refusal)) r.callsOnly();
  if (name === "tool") {
    const id = linkId(callId);
    if (id === undefined) throw bad(i, "a tool message needs tool_call_id, the id of the call it answers");
    r.result(id);
    r.text(id);
  } else if (name === "function") {
    r.result(`function:${author}`);
  }
  // (An assistant's name, refusal and legacy call in one slot, none the usual case; another
  // message's name where an assistant's calls are: see `sameOpenAI`.)
  if (role === ASSISTANT) stampWith(r.stamps.writable(i), slot(i), content, name, calls, extras(author, refusal, legacy));
  else stampWith(r.stamps.writable(i), slot(i), content, name, author, callId);
  return STAMPED;
}

/**
 * Whether message m's fields are those `readOpenAI` stamped at `s[k]` (as `sameWith`
 * compares them): read by role, as `readOpenAI` reads them, and only those of its role (its
 * calls for an assistant, the call it answers for a tool result; for the others those
 * slots hold `undefined` and -1).
 */
export function sameOpenAI(m, s, k) {
  const name = m.role;
  if (!Object.is(name, s[k + 1])) return false;
  let content, calls;
  switch (name) {
    case "user":
      content = m.content;
      if (!Object.is(m.name, s[k + 2])) return false;
      break;
    case "assistant":
      content = m.content;
      calls = m.tool_calls;
      if (!Object.is(calls, s[k + 2]) || !sameExtras(s[k + 3], m.name, m.refusal, m.function_call)) return false;
      break;
    case "tool":
      content = m.content;
      if (!Object.is(m.tool_call_id, s[k + 3]) || !Object.is(m.name, s[k + 2])) return false;
      break;
    default:
      content = m.content;
      if (!Object.is(m.name, s[k + 2])) return false;
  }
  return Object.is(content, s[k]) && sameInside(s, k, content, calls);
}

/** An assistant's `name`, `refusal` and legacy `function_call` for its stamp: undefined when
 * it has none of them (no array made for most messages). */
function extras(name, refusal, legacy) {
  return name === undefined && refusal === undefined && legacy === undefined ? undefined : [name, refusal, legacy];
}

function sameExtras(stamped, name, refusal, legacy) {
  if (stamped === undefined) return name === undefined && refusal === undefined && legacy === undefined;
  return Object.is(stamped[0], name) && Object.is(stamped[1], refusal) && Object.is(stamped[2], legacy);
}

export function looksOpenAI(m) {
  if (m.type !== undefined || m.parts !== undefined || openaiRole(m.role) === undefined) return false;
  const content = m.content;
  return typeof content === "string" || partsFit(content, "openai");
}

// ---- formats/langchain.js ----
// ---- langchain: LangChain.js messages --------------------------------------------------
// One format's reader (what each has: the head of formats/content.js).
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).


export const LANGCHAIN_TYPES = table({ system: SYSTEM, developer: SYSTEM, human: USER, ai: ASSISTANT, tool: TOOL, function: TOOL, generic: OTHER, remove: OTHER });

/** The role name a message counts as its text (SPEC §3: the inputs of LangChain's
 * approximate counter, which counts a message's OpenAI role), where a format names it
 * otherwise: LangChain's types, Gemini's `model`. */
const ROLE_TEXTS = table({ human: "user", ai: "assistant", model: "assistant" });

const LANGCHAIN_CLASSES = table({
  SystemMessage: "system", HumanMessage: "human", AIMessage: "ai", ToolMessage: "tool",
  FunctionMessage: "function", ChatMessage: "generic", AIMessageChunk: "ai",
  HumanMessageChunk: "human", SystemMessageChunk: "system", ToolMessageChunk: "tool",
});

/** `[type, fields]` of a LangChain message in any of its three shapes. */
export function langchainShape(m) {
  if (typeof m.getType === "function") return [m.getType(), m];
  if (typeof m._getType === "function") return [m._getType(), m];
  if (m.lc === 1 && Array.isArray(m.id) && m.kwargs && typeof m.kwargs === "object") {
    return [LANGCHAIN_CLASSES.get(m.id[m.id.length - 1]), m.kwargs]; // the serialized form
  }
  if (m.data !== null && typeof m.data === "object" && m.content === undefined) return [m.type, m.data];
  return [m.type, m];
}

/**
 * An AI message's calls, as `[calls, raw, legacy]`: its `tool_calls`; without any, OpenAI's
 * raw ones in `additional_kwargs.tool_calls` (`raw`: a plain message stored before LangChain
 * parsed them, as its OpenAI client writes them); and a legacy `function_call` there (which
 * a `FunctionMessage` of its name answers).
 */
export function langchainCalls(d) {
  const extra = d.additional_kwargs !== null && typeof d.additional_kwargs === "object" ? d.additional_kwargs : {};
  const own = Array.isArray(d.tool_calls) ? d.tool_calls : [];
  const raw = own.length === 0 && Array.isArray(extra.tool_calls) && extra.tool_calls.length > 0;
  const legacy = extra.function_call !== null && typeof extra.function_call === "object" ? extra.function_call : undefined;
  return [raw ? extra.tool_calls : own, raw, legacy];
}

export function readLangChain(r, i, m) {
  const [type, d] = langchainShape(m);
  let role = LANGCHAIN_TYPES.get(type);
  if (role === undefined) throw bad(i, `has an unknown LangChain message type ${JSON.stringify(String(type))}`);
  if (type === "generic") role = openaiRole(d.role) ?? OTHER;
  const content = d.content;
  const flags = contentFlags(r, content, role === USER ? REAL_USER : 0, role !== TOOL);
  r.begin(i, role, flags);
  r.roleText(type === "generic" ? d.role : ROLE_TEXTS.get(type) ?? type);
  r.text(d.name);
  if (typeof content === "string") r.text(content);
  else if (Array.isArray(content)) {
    for (const b of content) {
      if (b === null || typeof b !== "object") r.text(b);
      else if (b.type === "document") documentBlock(r, b);
      else if (/image|file|audio|document/.test(String(b.type))) r.image();
      else if (b.type === "tool_use" || b.type === "tool_call") r.json(b.input ?? b.args);
      else if (b.type === "thinking") r.text(b.thinking);
      else r.text(b.text);
    }
  }
  if (role === ASSISTANT) {
    const [calls, raw, legacy] = langchainCalls(d);
    for (const c of calls) {
      if (c === null || typeof c !== "object") continue;
      // (LangChain's `id` is optional: a call without one is answered, if at all, by a
      // FunctionMessage of its name.)
      const id = linkId(c.id);
      const fn = raw && c.function !== null && typeof c.function === "object" ? c.function : c;
      if (id !== undefined) {
        r.call(id);
        r.text(id);
      } else {
        r.call(`function:${fn.name}`);
      }
      r.text(fn.name);
      r.json(raw ? fn.arguments : c.args);
    }
    if (legacy !== undefined) {
      r.call(`function:${legacy.name}`);
      r.text(legacy.name);
      r.json(legacy.arguments);
    }
    if (r.linkLength > r.linkStart[i] && !shows(content)) r.callsOnly();
  } else if (type === "tool") {
    const id = linkId(d.tool_call_id);
    if (id === undefined) throw bad(i, "a ToolMessage needs tool_call_id, the id of the call it answers");
    r.result(id);
    r.text(id);
  } else if (type === "function") {
    r.result(`function:${d.name}`);
  }
}

export function looksLangChain(m) {
  if (typeof m.getType === "function" || typeof m._getType === "function") return true;
  if (m.lc === 1 && Array.isArray(m.id)) return LANGCHAIN_CLASSES.get(m.id[m.id.length - 1]) !== undefined;
  const type = m.type;
  // (A ChatMessage, `generic`, has a role; a RemoveMessage may have no content.)
  return LANGCHAIN_TYPES.get(type) !== undefined && (m.role === undefined || type === "generic") &&
    (m.content !== undefined || type === "remove" || (m.data !== null && typeof m.data === "object"));
}

// ---- formats/responses.js ----
// ---- openai-responses: Responses API items ---------------------------------------------
// One format's reader (what each has: the head of formats/content.js).
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).


const RESPONSES_ROLES = table({ system: SYSTEM, developer: SYSTEM, user: USER, assistant: ASSISTANT });

export const RESPONSES_TYPES = new Set([
  "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
  "custom_tool_call_output", "computer_call", "computer_call_output", "local_shell_call",
  "local_shell_call_output", "shell_call", "shell_call_output", "apply_patch_call",
  "apply_patch_call_output", "web_search_call", "file_search_call", "image_generation_call",
  "code_interpreter_call", "mcp_call", "mcp_list_tools", "mcp_approval_request",
  "mcp_approval_response", "item_reference", "compaction",
]);

export function readResponses(r, i, m) {
  const type = m.type === undefined ? "message" : m.type;
  if (typeof type !== "string") throw bad(i, `type must be a string, got ${describe(type)}`);
  if (type === "message") {
    const role = RESPONSES_ROLES.get(m.role);
    if (role === undefined) throw roleError(i, m.role, "system, developer, user, assistant");
    const content = m.content;
    r.begin(i, role, contentFlags(r, content, role === USER ? REAL_USER : 0, true));
    r.roleText(m.role);
    if (typeof content === "string") r.text(content);
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (part === null || typeof part !== "object") continue;
        if (part.type === "input_image" || part.type === "input_file" || part.type === "input_audio") r.image();
        else if (part.type === "refusal") r.text(part.refusal);
        else if (typeof part.text === "string") r.text(part.text);
        else foreignPart(i, part, "openai-responses");
      }
    } else if (content !== undefined && content !== null) {
      throw bad(i, `content must be a string or an array of parts, got ${describe(content)}`);
    } else if (m.tool_calls !== undefined) {
      throw bad(i, `has tool_calls, as OpenAI Chat Completions messages do (Responses items are function_call items): set config.format to "openai" (or "auto")`);
    }
    return;
  }
  if (type === "reasoning") {
    // Stays with the item after it: the API rejects a reasoning item without it.
    r.begin(i, OTHER, ATTACH_NEXT);
    if (Array.isArray(m.summary)) for (const s of m.summary) if (s) r.text(s.text);
    r.text(m.encrypted_content);
    return;
  }
  if (type === "mcp_approval_request") {
    r.begin(i, ASSISTANT, CALLS_ONLY);
    r.call(`approval:${m.id}`);
    r.text(m.name);
    r.json(m.arguments);
    return;
  }
  if (type === "mcp_approval_response") {
    r.begin(i, TOOL, 0);
    r.result(`approval:${m.approval_request_id}`);
    return;
  }
  if (type.endsWith("_call_output")) {
    // (A local shell call's output names its call by `id`, as the API's type has it.)
    const id = linkId(m.call_id) ?? (type === "local_shell_call_output" ? linkId(m.id) : undefined);
    if (id === undefined) throw bad(i, `a ${type} item needs call_id, the id of the call it answers`);
    r.begin(i, TOOL, noted(0, openingText(m.output)));
    r.result(id);
    r.text(id);
    payload(r, m.output);
    return;
  }
  if (type.endsWith("_call")) {
    r.begin(i, ASSISTANT, 0);
    const id = linkId(m.call_id);
    // Calls the API runs itself (web search, file search, …) have no output item.
    if (id !== undefined) {
      r.callsOnly();
      r.call(id);
      r.text(id);
    }
    r.text(m.name);
    r.json(m.arguments ?? m.input ?? m.action);
    // What a call the API ran itself brought back, in its item: an MCP call's output (or
    // error), file search's results, the code interpreter's code and outputs.
    if (id === undefined) {
      payload(r, m.output ?? m.error);
      payload(r, m.results);
      r.text(m.code);
      payload(r, m.outputs);
      if (type === "image_generation_call" && m.result) r.image();
    }
    return;
  }
  if (LANGCHAIN_TYPES.get(type) !== undefined) {
    throw bad(i, `has type ${JSON.stringify(type)}, a LangChain message type, not a Responses item type: set config.format to "langchain" (or "auto")`);
  }
  r.begin(i, OTHER, 0);
  r.json(m);
}

export function looksResponses(m) {
  if (m.type !== undefined) return RESPONSES_TYPES.has(m.type);
  return RESPONSES_ROLES.get(m.role) !== undefined && m.parts === undefined && m.tool_calls === undefined && partsFit(m.content, "openai-responses");
}

/** A Responses item's stamp: the fields `readResponses` reads of its type (an item of a type
 * it does not know counts as its JSON: the item itself, whose insides are not looked at). */
export function stampResponses(m, s, k, w) {
  const type = m.type;
  if (type === undefined || type === "message") return w(s, k, m.content, type, undefined, m.role);
  if (type === "reasoning") return w(s, k, m.summary, type, m.encrypted_content, undefined);
  if (type === "mcp_approval_request") return w(s, k, m.arguments, type, m.id, m.name);
  if (type === "mcp_approval_response") return w(s, k, undefined, type, m.approval_request_id, undefined);
  if (typeof type === "string" && type.endsWith("_call_output")) return w(s, k, m.output, type, m.call_id, undefined);
  if (typeof type === "string" && type.endsWith("_call")) {
    // (A call the API ran itself has no call_id, and holds what it brought back.)
    return w(s, k, m.arguments ?? m.input ?? m.action, type, m.call_id !== undefined ? m.call_id : m.output ?? m.error ?? m.results ?? m.outputs, m.name);
  }
  return w(s, k, m, type, undefined, undefined);
}

// ---- formats/vercel.js ----
// ---- vercel: AI SDK ModelMessage -------------------------------------------------------
// One format's reader (what each has: the head of formats/content.js).
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).


const VERCEL_ROLES = table({ system: SYSTEM, user: USER, assistant: ASSISTANT, tool: TOOL });

export function readVercel(r, i, m) {
  const role = VERCEL_ROLES.get(m.role);
  if (role === undefined) throw roleError(i, m.role, "system, user, assistant, tool");
  const content = m.content;
  r.begin(i, role, contentFlags(r, content, role === USER ? REAL_USER : 0, role !== TOOL));
  r.roleText(m.role);
  if (typeof content === "string") {
    r.text(content);
    return;
  }
  if (!Array.isArray(content)) throw bad(i, `content must be a string or an array of parts, got ${describe(content)}`);
  // Whether it has parts besides its calls and reasoning (and texts of white space).
  let more = false;
  for (const p of content) {
    if (p === null || typeof p !== "object") continue;
    switch (p.type) {
      case "image": case "file":
        more = true;
        r.image();
        break;
      case "tool-call": {
        const id = linkId(p.toolCallId);
        if (id === undefined) throw bad(i, "a tool-call part needs toolCallId");
        r.call(id);
        r.text(id);
        r.text(p.toolName);
        r.json(p.input ?? p.args);
        break;
      }
      case "tool-result": {
        more = true;
        const id = linkId(p.toolCallId);
        if (id === undefined) throw bad(i, "a tool-result part needs toolCallId, the id of the call it answers");
        r.result(id);
        r.text(id);
        r.text(p.toolName);
        const out = p.output ?? p.result;
        // (An output of parts is `{ type: "content", value: [...] }`; the others hold text or
        // JSON: `{ type: "text" | "json" | "error-text" | "error-json", value }`.)
        if (out !== null && typeof out === "object" && "value" in out && typeof out.type === "string") {
          if (out.type === "content") payload(r, out.value);
          else r.json(out.value);
        } else {
          payload(r, out);
        }
        break;
      }
      case "tool-approval-request": {
        const id = linkId(p.approvalId);
        if (id === undefined) throw bad(i, "a tool-approval-request part needs approvalId");
        r.call(`approval:${id}`);
        break;
      }
      case "tool-approval-response": {
        more = true;
        const id = linkId(p.approvalId);
        if (id === undefined) throw bad(i, "a tool-approval-response part needs approvalId");
        r.result(`approval:${id}`);
        r.text(p.reason);
        break;
      }
      default:
        more = more || (p.type !== "reasoning" && (typeof p.text !== "string" || visible(p.text)));
        if (typeof p.text !== "string") foreignPart(i, p, "vercel");
        r.text(p.text);
    }
  }
  if (!more && role === ASSISTANT && r.linkLength > r.linkStart[i]) r.callsOnly();
}

export function looksVercel(m) {
  return VERCEL_ROLES.get(m.role) !== undefined && m.type === undefined && m.parts === undefined && m.tool_calls === undefined &&
    m.tool_call_id === undefined && (typeof m.content === "string" || Array.isArray(m.content)) &&
    partsFit(m.content, "vercel");
}

// ---- formats/vercel-ui.js ----
// ---- vercel-ui: AI SDK UIMessage -------------------------------------------------------
// One format's reader (what each has: the head of formats/content.js).
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).


const UI_ROLES = table({ system: SYSTEM, user: USER, assistant: ASSISTANT });

export function readVercelUI(r, i, m) {
  const role = UI_ROLES.get(m.role);
  if (role === undefined) throw roleError(i, m.role, "system, user, assistant");
  const parts = m.parts;
  if (!Array.isArray(parts)) throw bad(i, `parts must be an array, got ${describe(parts)}`);
  const flags = contentFlags(r, parts, role === USER ? REAL_USER : 0, true);
  r.begin(i, role, flags);
  r.roleText(m.role);
  for (const p of parts) {
    if (p === null || typeof p !== "object" || typeof p.type !== "string") continue;
    if (p.type === "file") r.image();
    else if (isUiTool(p)) {
      // A UI tool part holds the call and its result together: a call answered in its own
      // message (a tool message, for priority and progressive's tool runs), never an orphan.
      const id = linkId(p.toolCallId);
      if (id !== undefined) {
        r.call(id);
        r.result(id);
      }
      r.text(p.toolCallId);
      r.text(p.toolName ?? p.type.slice(5));
      r.json(p.input);
      payload(r, p.output);
      r.text(p.errorText);
    } else if (p.type.startsWith("data-")) r.json(p.data);
    else r.text(p.text);
  }
}

export function looksVercelUI(m) {
  return UI_ROLES.get(m.role) !== undefined && Array.isArray(m.parts) && m.content === undefined &&
    m.parts.every((p) => p !== null && typeof p === "object" && typeof p.type === "string");
}

// ---- formats/index.js ----
// The formats by name (`READERS`, in the order auto-detection prefers) and by the core's
// numbers (`FORMAT_CODES`), auto-detection, and a message's content field in each format.
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).


/**
 * In the order auto-detection prefers when several fit every message. `stamp(m, s, k, w)`
 * hands message m's stamp fields (see `STAMP`) to `w`: `stampWith` writes them at `s[k]`,
 * `sameWith` compares them with what is there. OpenAI's `read` writes its stamp itself, and
 * `sameOpenAI` checks it (`same`).
 */
export const READERS = {
  openai: { read: readOpenAI, looks: looksOpenAI, same: sameOpenAI, readChecked: (r, i, m) => readOpenAI(r, i, m, true) },
  anthropic: { read: readAnthropic, looks: looksAnthropic, stamp: (m, s, k, w) => w(s, k, m.content, m.role, m.type, m.parts) },
  vercel: { read: readVercel, looks: looksVercel, stamp: (m, s, k, w) => w(s, k, m.content, m.role, m.type, m.parts) },
  "openai-responses": {
    read: readResponses, looks: looksResponses,
    stamp: stampResponses,
  },
  "vercel-ui": { read: readVercelUI, looks: looksVercelUI, stamp: (m, s, k, w) => w(s, k, m.parts, m.role, m.content, m.type) },
  gemini: { read: readGemini, looks: looksGemini, stamp: (m, s, k, w) => w(s, k, m.parts, m.role, m.content, m.type) },
  langchain: {
    read: readLangChain, looks: looksLangChain,
    // (`name` where `tool_calls` or `tool_call_id` are not: an AI message has no id, a tool
    // message no calls, the others neither.)
    stamp: (m, s, k, w) => w(s, k, m.content !== undefined ? m.content : m.kwargs !== undefined ? m.kwargs : m.data, m.type,
      m.tool_calls !== undefined ? m.tool_calls : m.name, m.tool_call_id !== undefined ? m.tool_call_id : m.name),
  },
};

export const FORMATS = Object.keys(READERS);

// How a kept reading checks that a message is unchanged (`sameRun`): the format's own
// `same`, else its `stamp` compared by `sameWith`.
for (const name of FORMATS) READERS[name].same ??= sameByStamp(READERS[name].stamp);

function sameByStamp(stamp) {
  return (m, s, k) => stamp(m, s, k, sameWith);
}

const LOOKS = FORMATS.map((name) => READERS[name].looks);

export const ALL_FORMATS = (1 << FORMATS.length) - 1;

/** Of the formats in `which`, those message i could belong to (one bit each, `FORMATS` order). */
export function fitMask(i, m, which) {
  let mask = 0;
  try {
    for (let f = 0; f < LOOKS.length; f++) if (which & (1 << f) && LOOKS[f](m)) mask |= 1 << f;
  } catch (e) {
    throw bad(i, `could not be read: ${reason(e)}`);
  }
  return mask;
}

export function formatNames(mask) {
  return FORMATS.filter((_, f) => mask & (1 << f));
}

/**
 * The format of `items`: the first that fits them all. `masks[i]` holds the formats message
 * i fits among those in `checked[i]` (known from an earlier reading, or 0); only formats
 * still possible are checked, and what was checked is recorded for the next calls. Reports
 * the first message that no format shared with those before it fits.
 *
 * With `fresh` (`fresh[i] < 0`: message i is to be read afresh), a fresh message met once a
 * single format is left is not checked here but by its reader as it reads it (its own loads
 * of the fields, see `readChecked`), and marked as fitting: from `deferFrom` on. A reader
 * that finds it does not fit reports it through `misfit`, as this would have. `start`: where
 * an earlier detection over the same first messages ended (it goes on from there).
 */
export function detect(items, masks, checked, fresh, start) {
  let possible = start !== undefined ? start.possible : ALL_FORMATS;
  let decided = start !== undefined ? start.decided : -1;
  let deferFrom = items.length;
  for (let i = start !== undefined ? start.n : 0; i < items.length; i++) {
    const unknown = possible & ~checked[i];
    if (unknown !== 0) {
      if (fresh !== undefined && fresh[i] < 0 && (possible & (possible - 1)) === 0) {
        if (deferFrom > i) deferFrom = i;
        masks[i] |= possible;
        checked[i] |= possible;
        continue;
      }
      masks[i] |= fitMask(i, items[i], unknown);
      checked[i] |= unknown;
    }
    const next = possible & masks[i];
    if (next === possible) continue;
    if (next === 0) throw mixError(i, items[i], masks[i] | fitMask(i, items[i], ALL_FORMATS & ~checked[i]), possible, decided);
    decided = i;
    possible = next;
  }
  return { format: FORMATS[31 - Math.clz32(possible & -possible)], possible, decided, deferFrom, n: items.length };
}

/** Message i fits the formats `fits` and none of `possible`, those of messages ≤ `decided`. */
function mixError(i, m, fits, possible, decided) {
  if (fits === 0) {
    return bad(i, "is not a message of any known format (openai, openai-responses, anthropic, vercel, vercel-ui, gemini, langchain)");
  }
  return new ReduceError("INVALID_MESSAGES",
    `messages mix formats: message ${i} looks like ${formatNames(fits).join(" or ")}, but message ${decided} and those before it like ${formatNames(possible).join(" or ")}; pass one format, or set config.format`);
}

/** The error `detect` reports for message i, deferred to its reader, which found it does not
 * fit the one format left (`detected`). */
export function misfit(i, m, detected) {
  return mixError(i, m, fitMask(i, m, ALL_FORMATS & ~detected.possible), detected.possible, detected.decided);
}

/**
 * Before an error reading message i is thrown: the first message after it whose check was
 * deferred and that does not fit is the error `detect` would have reported first.
 */
export function checkDeferred(items, from, i, detected) {
  for (let j = Math.max(i + 1, detected.deferFrom); j < items.length; j++) {
    if (from[j] < 0 && fitMask(j, items[j], detected.possible) === 0) throw misfit(j, items[j], detected);
  }
}

/** Format names by the core's numbers (`Format::ALL`'s order); any other number is "auto". */
export const FORMAT_CODES = ["openai", "openai-responses", "anthropic", "vercel", "vercel-ui", "gemini", "langchain"];

/** A shallow copy that keeps a class instance's prototype (LangChain messages). */
export function copyOf(m) {
  const copy = Object.assign(Object.create(Object.getPrototypeOf(m)), m);
  return copy;
}

/** The content field of a message in `format` (LangChain's dict and serialized forms nest
 * it: `langchainShape`). */
export function contentOf(format, m) {
  if (format === "gemini" || format === "vercel-ui") return m.parts;
  if (format === "langchain") return langchainShape(m)[1].content;
  return m.content;
}

export function withContent(format, m, content) {
  return withFields(format, m, format === "gemini" || format === "vercel-ui" ? { parts: content } : { content });
}

/** A shallow copy of m with `changes` (a field's new value; `undefined` removes it) where
 * its format keeps those fields (LangChain's dict and serialized forms nest them, and an
 * instance's `lc_kwargs` repeat them). */
export function withFields(format, m, changes) {
  const copy = copyOf(m);
  const fields = format === "langchain" ? langchainShape(m)[1] : m;
  const targets = [];
  if (fields === m.kwargs) targets.push(copy.kwargs = { ...fields });
  else if (fields === m.data) targets.push(copy.data = { ...fields });
  else {
    targets.push(copy);
    if (copy.lc_kwargs && typeof copy.lc_kwargs === "object") targets.push(copy.lc_kwargs = { ...copy.lc_kwargs });
  }
  for (const target of targets) {
    for (const key of Object.keys(changes)) {
      if (changes[key] === undefined) delete target[key];
      else target[key] = changes[key];
    }
  }
  return copy;
}

// ---- results.js ----
// What a reduction hands back: its result (`buildResult`, with the orphan results a kept
// message loses), `analyze`'s analysis, and events for `onEvent`.
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).


/** Output entries at or above this are written messages: `written[entry - NEW]`. */
const NEW = 0x80000000;

/** Output entries from this up to NEW are input messages without their orphan results:
 * `withoutOrphans(reading, entry - CLEANED)`. */
const CLEANED = 0x40000000;

/** A typed array's values in a plain array (a loop: `Array.from` iterates). */
function plainArray(values) {
  const out = new Array(values.length);
  for (let k = 0; k < values.length; k++) out[k] = values[k];
  return out;
}

/**
 * `analyze`'s result (`Analysis` in types.d.ts), built in one loop: per message its role
 * (a code of `roleNames`), tokens, group, round, protection (a code of `protectionNames`,
 * 0 for none) and marks (1: a summary, 2: a real user input); `totals` are totalTokens,
 * groups, rounds and shouldReduce (1 or 0).
 */
export function buildAnalysis(format, roleNames, protectionNames, roles, tokens, groups, rounds, protections, marks, totals) {
  const n = roles.length;
  const messages = new Array(n);
  for (let i = 0; i < n; i++) {
    const role = roleNames[roles[i]], p = protections[i];
    const summary = (marks[i] & 1) !== 0, realUser = (marks[i] & 2) !== 0;
    messages[i] = p === 0
      ? { index: i, role, tokens: tokens[i], group: groups[i], round: rounds[i], protected: false, summary, realUser }
      : { index: i, role, tokens: tokens[i], group: groups[i], round: rounds[i], protected: true, protectedBy: protectionNames[p], summary, realUser };
  }
  return {
    format, messages, totalTokens: totals[0], totalMessages: n, groups: totals[1], rounds: totals[2],
    shouldReduce: totals[3] === 1,
  };
}

/** A core event. */
export function makeEvent(type, messages, tokensBefore, tokensAfter) {
  return { type, messages, tokensBefore, tokensAfter };
}

/**
 * The lists of the last memoised reduction `buildResult` was asked for twice (`listed`: its
 * number, given by the boundary): the calls that get it again (the same messages, unchanged)
 * copy them, block copies, instead of making them from typed arrays value by value. Asked
 * for once (a history that grows, a new reduction each call), its lists are not kept.
 */
let LISTED = { listed: 0, items: null, messages: null, kept: null, dropped: null, summarized: null, rewritten: null };

/** The number of the last memoised reduction built. */
let LAST_LISTED = 0;

/**
 * The `ReduceResult` of SPEC §8. `output` holds input indices (or NEW + k for the k-th
 * written message, CLEANED + i for input i without its orphan results); the kept messages
 * are the input objects themselves. `totals`: reduced
 * (1 or 0), removedCount, tokensBefore, tokensAfter, overBudget (1 or 0) and the
 * reduction's number if it is memoised (0 if not; see `LISTED`).
 */
export function buildResult(reading, output, written, summary, offloaded, kept, dropped, summarized, rewritten, totals, events) {
  const meta = {
    reduced: totals[0] === 1, removedCount: totals[1], tokensBefore: totals[2], tokensAfter: totals[3],
    overBudget: totals[4] === 1,
  };
  const items = reading.items, listed = totals[5];
  let lists = LISTED;
  if (listed === 0 || lists.listed !== listed || lists.items !== items) {
    const messages = new Array(output.length);
    for (let k = 0; k < output.length; k++) {
      const e = output[k];
      if (e < CLEANED) messages[k] = items[e];
      else if (e >= NEW) messages[k] = written[e - NEW];
      else messages[k] = withoutOrphans(reading, e - CLEANED);
    }
    lists = {
      listed, items, messages, kept: plainArray(kept), dropped: plainArray(dropped),
      summarized: plainArray(summarized), rewritten: plainArray(rewritten),
    };
    // The second time: kept (and copied for the caller, who may change what it is handed).
    if (listed !== 0 && listed === LAST_LISTED) LISTED = lists;
    LAST_LISTED = listed;
  }
  const shared = lists === LISTED;
  const result = {
    messages: shared ? lists.messages.slice() : lists.messages,
    reduced: meta.reduced,
    removedCount: meta.removedCount,
    kept: shared ? lists.kept.slice() : lists.kept,
    dropped: shared ? lists.dropped.slice() : lists.dropped,
    summarized: shared ? lists.summarized.slice() : lists.summarized,
    rewritten: shared ? lists.rewritten.slice() : lists.rewritten,
    offloaded,
    tokensBefore: meta.tokensBefore,
    tokensAfter: meta.tokensAfter,
    overBudget: meta.overBudget,
    events,
  };
  if (summary !== undefined) result.summary = summary;
  // A failed summary's entry is a step that changed nothing: a `CompressionEvent` has every
  // number (summing `messages` over the events gave NaN).
  let tokens = meta.tokensBefore;
  for (const e of events) {
    if (typeof e.messages !== "number") {
      e.messages = 0;
      e.tokensBefore = tokens;
      e.tokensAfter = tokens;
    } else {
      tokens = e.tokensAfter;
    }
  }
  if (reading.pending) completeLater(reading, result, meta.tokensBefore, events);
  return result;
}

/** Estimates a pending reading's remaining messages; their tokens (installed by the core). */
let COMPLETE = () => 0;

export function setCompleter(complete) {
  COMPLETE = complete;
}

/** The tokens of the messages `reading` left unestimated (estimated on the first call). */
export function completeReading(reading) {
  if (reading.rest === undefined) reading.rest = COMPLETE(reading);
  return reading.rest;
}

/**
 * A reduction that did not need every message's estimate (the oldest, all removed) counted
 * `tokensBefore` without them: it is completed the first time it is read, here and in the
 * events, so the result reads as if everything had been estimated.
 */
function completeLater(reading, result, known, events) {
  const lazy = (target, key, counted) => {
    // The getter stays (a frozen result, as state libraries freeze, still reads it).
    Object.defineProperty(target, key, {
      get() {
        return counted + completeReading(reading);
      },
      set(value) {
        Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
      },
      enumerable: true,
      configurable: true,
    });
  };
  lazy(result, "tokensBefore", known);
  for (const e of events) if (typeof e.tokensBefore === "number") lazy(e, "tokensBefore", e.tokensBefore);
  // (The orphans' step ends on the whole input without them: every orphan was counted.)
  for (const e of events) if (e.type === "orphans") lazy(e, "tokensAfter", e.tokensAfter);
}

/**
 * Where in `r.linkData` the orphans are (SPEC §9.4), as the core finds them
 * (`Structure::build`): results whose key no call link before them has, and calls that no
 * result answers before the latest step (the last user input or assistant message; in
 * Responses, the run of assistant items that ends the model's last answer: its calls may
 * still be waiting for their results).
 */
export function orphanLinks(r) {
  const data = r.linkData, called = new Map(), answered = new Set(), out = new Set();
  for (let at = 0; at < r.linkLength; at += 2) {
    if (data[at + 1] === CALL) called.set(data[at], at);
    else {
      const call = called.get(data[at]);
      if (call === undefined) out.add(at);
      else answered.add(call);
    }
  }
  const roles = r.roles;
  let turn = r.n - 1;
  while (turn > 0 && roles[turn] !== USER && roles[turn] !== ASSISTANT) turn--;
  while (turn > 0 && r.format === "openai-responses" && roles[turn] === ASSISTANT &&
    (roles[turn - 1] === ASSISTANT || roles[turn - 1] === OTHER)) turn--;
  for (let at = 0, end = r.linkStart[Math.max(turn, 0)]; at < end; at += 2) {
    if (data[at + 1] === CALL && !answered.has(at)) out.add(at);
  }
  return out;
}

/** The id a result part answers, as the readers read it (undefined for other parts). */
function resultId(p) {
  if (p === null || typeof p !== "object") return undefined;
  if (p.functionResponse) return linkId(p.functionResponse.id) ?? `name:${p.functionResponse.name}`;
  if (p.type === "tool-result") return linkId(p.toolCallId);
  if (p.type === "tool-approval-response") return `approval:${p.approvalId}`;
  if (typeof p.type === "string" && p.type.endsWith("tool_result")) return linkId(p.tool_use_id);
  return undefined;
}

/** Whether part p of a message in `format` is one of its calls (as the readers read them:
 * each makes one call link, in order). */
function isCallPart(format, p) {
  if (p === null || typeof p !== "object") return false;
  if (format === "gemini") return Boolean(p.functionCall);
  if (format === "vercel") return p.type === "tool-call" || p.type === "tool-approval-request";
  return p.type === "tool_use" || p.type === "server_tool_use" || p.type === "mcp_tool_use";
}

/**
 * Message i as a reduction outputs it: when it carries orphans beside other content (an
 * Anthropic user message with a stray `tool_result` block and text, an assistant's text
 * with a call that no result answers), a shallow copy in its format without them; else
 * itself.
 */
export function withoutOrphans(reading, i) {
  const orphans = reading.orphans ??= orphanLinks(reading);
  // How many orphan results of each id the message has, and which of its calls (by their
  // order among its calls: each call is a link of its own) are orphans.
  const ids = new Map(), calls = new Set();
  for (let at = reading.linkStart[i], end = reading.linkStart[i + 1], k = 0; at < end; at += 2) {
    const call = reading.linkData[at + 1] === CALL;
    if (orphans.has(at)) {
      if (call) calls.add(k);
      else {
        const id = reading.ids[reading.linkData[at]];
        ids.set(id, (ids.get(id) ?? 0) + 1);
      }
    }
    if (call) k++;
  }
  const m = reading.items[i];
  if (ids.size === 0 && calls.size === 0) return m;
  const format = reading.format, content = contentOf(format, m), changes = {};
  if (format === "openai" || format === "langchain") {
    if (calls.size > 0) callsWithout(format, m, calls, changes);
  } else if (Array.isArray(content)) {
    // The parts that go: as many result parts of each id, the last ones (results matched by
    // order and name, Gemini's without ids, answer the calls first, and those left over are
    // the orphans), and the orphan calls.
    const gone = new Set();
    for (let k = content.length - 1; k >= 0; k--) {
      const id = resultId(content[k]), left = ids.get(id);
      if (left > 0) {
        ids.set(id, left - 1);
        gone.add(k);
      }
    }
    for (let k = 0, call = 0; k < content.length; k++) {
      if (isCallPart(format, content[k]) && calls.has(call++)) gone.add(k);
    }
    changes[format === "gemini" || format === "vercel-ui" ? "parts" : "content"] = content.filter((_, k) => !gone.has(k));
  }
  // (A message of orphans alone goes whole: it is not copied.)
  return Object.keys(changes).length === 0 ? m : withFields(format, m, changes);
}

/**
 * Into `changes`: an OpenAI or LangChain message's calls without those whose order among
 * them is in `calls` (OpenAI: `tool_calls`, then the legacy `function_call`; LangChain: the
 * entries of `tool_calls`, with the content blocks and OpenAI's raw calls in
 * `additional_kwargs` of their ids).
 */
function callsWithout(format, m, calls, changes) {
  const d = format === "openai" ? m : langchainShape(m)[1];
  const [list, fromRaw, legacy] = format === "openai" ? [Array.isArray(d.tool_calls) ? d.tool_calls : []] : langchainCalls(d);
  const left = [], at = new Set();
  let k = 0;
  list.forEach((c, n) => {
    // (LangChain skips an entry that is no object: it is no call.)
    if ((format === "openai" || (c !== null && typeof c === "object")) && calls.has(k++)) at.add(n);
    else left.push(c);
  });
  if (format === "openai") {
    // (The API refuses an empty `tool_calls`.)
    changes.tool_calls = left.length > 0 ? left : undefined;
    if (calls.has(k)) changes.function_call = undefined;
    return;
  }
  // (Calls read from OpenAI's raw ones leave `tool_calls` as it was: none.)
  if (!fromRaw) changes.tool_calls = left;
  // The content's blocks and OpenAI's raw calls of the ids that are gone (that no call kept
  // has); the raw calls by their place when they stand for the calls one to one (or are
  // the calls read), and a legacy `function_call` that goes.
  const id = (c) => (c !== null && typeof c === "object" ? linkId(c.id) : undefined);
  const keptIds = new Set(left.map(id));
  const gone = (c) => id(c) !== undefined && !keptIds.has(id(c)) && [...at].some((n) => id(list[n]) === id(c));
  if (Array.isArray(d.content)) changes.content = d.content.filter((b) => !gone(b));
  const extra = d.additional_kwargs;
  if (extra === null || typeof extra !== "object") return;
  let next = extra;
  if (Array.isArray(extra.tool_calls)) {
    const { tool_calls: raw, ...rest } = extra;
    const kept = raw.length === list.length ? raw.filter((_, n) => !at.has(n)) : raw.filter((c) => !gone(c));
    // (LangChain's OpenAI client would send an empty `tool_calls`, which the API refuses.)
    next = kept.length > 0 ? { ...rest, tool_calls: kept } : rest;
  }
  if (legacy !== undefined && calls.has(k)) {
    const { function_call: _, ...rest } = next;
    next = rest;
  }
  if (next !== extra) changes.additional_kwargs = next;
}

/** A clock for durations. */
export function now() {
  return Date.now();
}

/** Reports an event to `config.onEvent`, if there is one. */
export function emit(onEvent, event) {
  if (typeof onEvent === "function") onEvent(event);
}

/** `onEvent` told of a reduction without a summarizer: `reduceStart` (no `result` yet) or
 * `reduceEnd`, as the strategies that summarize report them. */
export function reportReduction(onEvent, strategy, messages, tokens, result, durationMs) {
  emit(onEvent, result === undefined
    ? { type: "reduceStart", strategy, messages, tokens }
    : {
      type: "reduceEnd", reduced: result.reduced, tokensBefore: result.tokensBefore,
      tokensAfter: result.tokensAfter, overBudget: result.overBudget, durationMs,
    });
}

// ---- reader.js ----
// The JavaScript half of the boundary: reads the few fields the core needs from the
// user's message objects in one loop (`readMessages`: a `Reading`, whose texts and counts
// the core asks for), and keeps what it read for the next calls. The formats' readers are
// formats/*.js; results, summaries, offloading, options and ChatHistory's helpers have
// modules of their own.
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).
//
// The modules import one another without a cycle: common.js, formats/stamps.js and
// formats/content.js <- each format's reader <- formats/index.js <- results.js <- reader.js
// <- history.js, and results.js <- summaries.js <- offload.js; options.js needs common.js only.


/** How many links before a result taken over its call is looked for (see `farResult`). */
const NEAR_LINKS = 64;

/** How many messages taken over are looked through for the latest calls (see `recentFrom`). */
const NEAR_MESSAGES = 8;

/** The number of readings made, for their `version`. */
let VERSIONS = 0;

/**
 * What one call read, per message, in typed arrays for the core: role, flags, images, the
 * count of each message (`raw`, before calibration; -1 while it is still to be estimated
 * from its texts), tool-call links, and the formats it fits. It also keeps, per message, a
 * stamp of the fields its reading came from, so that the next call can take over what it
 * read about the same, unchanged message objects (see `readMessages`).
 */
export class Reading {
  /** `continued`: the reading of the same first messages (a history that grew), whose
   * stamps go on with this one's. */
  constructor(n, options, ids, continued) {
    this.format = "";
    this.items = null;
    // Shared by the readings of calls on the same, unchanged messages (see `again`).
    this.version = ++VERSIONS;
    this.n = n;
    // A reading that goes on from another (a history that grew): its first `base` messages
    // are those of reading `baseVersion`, unchanged, read the same (the core goes on from
    // what it made of them).
    this.base = continued !== undefined ? continued.n : 0;
    this.baseVersion = continued !== undefined ? continued.version : 0;
    this.roles = new Uint8Array(n);
    this.flags = new Uint8Array(n);
    this.images = new Uint32Array(n);
    // The formats each message fits, of those checked (set by readMessages).
    this.masks = null;
    this.checked = null;
    // Where auto-detection ended (see `detect`).
    this.detected = undefined;
    // Length mode's estimates, summed as the texts are read (empty otherwise).
    this.lengthTokens = new Float64Array(options.lengthMode ? n : 0);
    this.raw = new Float64Array(n).fill(-1);
    this.given = new Float64Array(0);
    // Message i's texts to estimate are texts[pieceStart[i] .. pieceStart[i + 1]] (in
    // length mode only its payloads of plain data: its texts are summed as they are read).
    this.pieceStart = new Uint32Array(n + 1);
    // Room for all (a grown array is copied as it grows); written in message order. A
    // continued reading reads only its own first n stamps, and this one writes every one
    // after them before it reads them (what a call that failed wrote there is let go).
    if (continued !== undefined) {
      continued.stamps.truncate(continued.n);
      this.stamps = continued.stamps;
    } else {
      this.stamps = new Stamps(n);
    }
    // (key, kind) pairs; message i's are linkData[linkStart[i] .. linkStart[i + 1]].
    this.linkStart = new Uint32Array(n + 1);
    this.linkData = new Uint32Array(Math.max(32, n * 2));
    this.linkLength = 0;
    // Link keys: one number per call read, `ids[key]` its id; shared with the readings this
    // one takes over from or is taken over by (their links keep their meaning).
    this.ids = ids;
    // (id, key) of the calls of the latest message read with calls (see `call`).
    // (`recentLength` of `recentCalls` hold them: the array is reused, not emptied, which
    // would let its storage go and make it anew for every message with calls.)
    this.recentCalls = [];
    this.recentLength = 0;
    this.recentOf = -1;
    // The key of the latest call of each id among the links before `byIdAt` (see `callKey`).
    this.byId = null;
    this.byIdAt = 0;
    // Where the orphans are, once asked (see `withoutOrphans`).
    this.orphans = undefined;
    // The texts to estimate, in chunks of TEXT_CHUNK (see `TextChunks`).
    this.texts = new TextChunks(options.lengthMode ? 16 : 4 * n);
    // Each message's role name as its code in `ROLE_NAMES` (0: none, or one of its texts):
    // the core weighs each name once (see `roleText`).
    this.roleCodes = new Uint8Array(options.lengthMode ? 0 : n);
    // Where the last round of an estimate stopped (see `encodeInto`).
    this.cursor = undefined;
    // Some messages left unestimated (a reduction that did not need them), and what
    // estimating them later takes (set by the core's boundary).
    this.pending = false;
    this.estimator = null;
    this.rest = undefined;
    this.lengthMode = options.lengthMode;
    this.charsPerToken = options.charsPerToken;
    this.collectTexts = false;
    this.index = 0;
    this.openTag = `<${options.tag}>`;
    this.closeTag = `</${options.tag}>`;
    // What it was read with (see `madeWith`).
    this.options = options;
    this.countTokens = undefined;
    // Whether the next calls may take over from it, and the reading it took over from.
    this.keep = false;
    this.previous = undefined;
  }

  begin(i, role, flags) {
    this.index = i;
    this.roles[i] = role;
    this.flags[i] = flags;
  }

  /** The message being read carries tool calls and nothing else but reasoning (see
   * `CALLS_ONLY`): with none of them answered, it goes whole. */
  callsOnly() {
    this.flags[this.index] |= CALLS_ONLY;
  }

  text(value) {
    if (typeof value !== "string" || value.length === 0) return;
    if (this.lengthMode) {
      this.lengthTokens[this.index] += Math.ceil(value.length / this.charsPerToken);
    } else if (this.collectTexts) {
      this.texts.push(value);
    }
  }

  /**
   * The message's role name (or type), which counts as a text of its own (SPEC §3): the
   * first of its texts. To estimate, it is a code (`roleCode`), whose name the core weighs
   * once a call, not a text to hand over and weigh for every message (a tenth of a first
   * call's time with the class estimator).
   */
  roleText(name) {
    if (this.collectTexts && !this.lengthMode) {
      const code = roleCode(name);
      if (code !== 0) {
        this.roleCodes[this.index] = code;
        return;
      }
    }
    this.text(name);
  }

  /**
   * A payload that counts as its JSON text (SPEC §3). An object or array of plain data
   * (`plainJson`) is kept as it is and written out only if it is estimated
   * (`TextChunks.text`; in length mode by `lengths`): a truncation estimates the newest
   * messages only. Anything else is written out now, and what `JSON.stringify` throws is
   * the reading's error.
   */
  json(value) {
    if (value === null || typeof value !== "object" || !plainJson(value, 0)) {
      this.text(jsonText(value));
    } else if (this.collectTexts) {
      this.texts.push(value);
    }
  }

  image() {
    this.images[this.index] += 1;
  }

  /** A new key, for id `id`. */
  newKey(id) {
    const key = this.ids.length;
    this.ids.push(id);
    return key;
  }

  /**
   * A call of the message being read: a key of its own (no lookup), remembered with the
   * other calls of its message, which the results after it find without a lookup.
   */
  call(id) {
    const recent = this.recentCalls;
    if (this.recentOf !== this.index) {
      this.recentLength = 0;
      this.recentOf = this.index;
    }
    const key = this.newKey(id);
    this.linkKey(CALL, key);
    const at = this.recentLength;
    recent[at] = id;
    recent[at + 1] = key;
    this.recentLength = at + 2;
  }

  /**
   * A result for call `id`: the key of the latest call with that id before it. The calls of
   * the latest message with calls are looked at first (where results usually are); else
   * `callKey`. A result with no call gets a key no call has.
   */
  result(id) {
    const key = this.findCall(id);
    this.linkKey(RESULT, key !== undefined ? key : this.newKey(id));
  }

  /** The key of the latest call with id `id` before the message being read (undefined if
   * none): the calls of the latest message with calls first, else `callKey`. */
  findCall(id) {
    return this.recentKey(id) ?? this.callKey(id);
  }

  /** The key of the latest of the latest calls (see `findCall`) with id `id`, as `callKey`
   * finds it (a result taken over is paired as a fresh one, when a message has two calls of
   * one id); undefined if none. */
  recentKey(id) {
    const recent = this.recentCalls;
    for (let c = this.recentLength - 2; c >= 0; c -= 2) {
      if (recent[c] === id) return recent[c + 1];
    }
    return undefined;
  }

  /**
   * A Gemini `functionResponse` (SPEC §2: matched by id, else by order and name), of the call
   * turn it follows (right before it, or before the response turns between them: parallel
   * calls answered one turn each, as a history converted from OpenAI's has them): the call
   * with its id; else the first call named `name` there that no response before it answered
   * (a call with an id answered by a response without one, as the SDK's examples write them,
   * or the other way round; a response whose id no call has answers no call with another).
   * A response with no call there (one beyond the calls of its name, or of a name or id that
   * turn did not call, or after a user input or model turn) gets a key no call has: an orphan.
   */
  namedResult(id, name) {
    let key;
    if (this.followsCalls()) {
      if (id !== undefined) key = this.recentKey(id);
      // (A response with an id answers by name only a call without one.)
      if (key === undefined) key = this.unansweredCall(name, id !== undefined);
    }
    this.linkKey(RESULT, key !== undefined ? key : this.newKey(id ?? `name:${name}`));
  }

  /**
   * Whether the message being read follows the latest call turn (`recentOf`), right after it
   * or after response turns only (role TOOL), at most NEAR_MESSAGES - 1 messages later: as
   * far back as `recentFrom` finds that turn after a take-over, so a reading taken over and
   * a fresh one pair alike.
   */
  followsCalls() {
    const of = this.recentOf, roles = this.roles;
    if (of < 0) return false;
    let k = this.index - 1;
    for (const stop = Math.max(of, this.index - NEAR_MESSAGES); k > stop && roles[k] === TOOL;) k--;
    return k === of;
  }

  /** The key of the first call named `name` among the latest calls (those of Gemini message
   * `recentOf`, whose functionCall parts made them, in order) with no result yet (`noId`:
   * of those without an id). */
  unansweredCall(name, noId) {
    if (this.recentLength === 0) return undefined;
    const parts = this.items[this.recentOf].parts, recent = this.recentCalls, data = this.linkData;
    let c = 0;
    for (const p of parts) {
      if (p === null || typeof p !== "object" || !p.functionCall) continue;
      if (c >= this.recentLength) break;
      const key = recent[c + 1];
      c += 2;
      if (p.functionCall.name !== name || (noId && linkId(p.functionCall.id) !== undefined)) continue;
      let answered = false;
      for (let at = this.linkStart[this.recentOf]; at < this.linkLength && !answered; at += 2) {
        answered = data[at] === key && data[at + 1] === RESULT;
      }
      if (!answered) return key;
    }
    return undefined;
  }

  /** The key of the latest call with id `id` among the links before `end` (read here or
   * taken over), by a map built as far as needed on the first lookup and extended after;
   * `end` never goes back. */
  callKey(id, end = this.linkLength) {
    if (this.byId === null) this.byId = new Map();
    const byId = this.byId, data = this.linkData, ids = this.ids;
    for (let at = this.byIdAt; at < end; at += 2) {
      if (data[at + 1] === CALL) byId.set(ids[data[at]], data[at]);
    }
    this.byIdAt = end;
    return byId.get(id);
  }

  linkKey(kind, key) {
    let data = this.linkData;
    const at = this.linkLength;
    if (at + 2 > data.length) data = this.growLinks(at + 2);
    data[at] = key;
    data[at + 1] = kind;
    this.linkLength = at + 2;
  }

  growLinks(least) {
    const grown = new Uint32Array(Math.max(least, this.linkData.length * 2));
    grown.set(this.linkData.subarray(0, this.linkLength));
    this.linkData = grown;
    return grown;
  }

  /**
   * Messages i … i + count - 1 are messages j … of `from`, unchanged: take over what was
   * read of them (block copies). Returns how many it took: up to the first message with a
   * result whose call is not in the run shortly before it (`farResult`), which is to be
   * read afresh.
   */
  take(i, from, j, count) {
    const end = j + count;
    this.roles.set(from.roles.subarray(j, end), i);
    this.flags.set(from.flags.subarray(j, end), i);
    this.images.set(from.images.subarray(j, end), i);
    if (this.lengthMode) this.lengthTokens.set(from.lengthTokens.subarray(j, end), i);
    this.raw.set(from.raw.subarray(j, end), i);
    const stamps = this.stamps, old = from.stamps;
    // (A continued reading has the stamps of `from` in place already.)
    if (old !== stamps) {
      for (let x = 0; x < count; x++) {
        const to = stamps.writable(i + x), src = old.chunks[(j + x) >> STAMP_SHIFT];
        for (let s = slot(i + x), t = slot(j + x), e = t + STAMP; t < e; s++, t++) to[s] = src[t];
      }
    }
    const first = from.linkStart[j], last = from.linkStart[end];
    const at = this.linkLength;
    if (at + last - first > this.linkData.length) this.growLinks(at + last - first);
    this.linkData.set(from.linkData.subarray(first, last), at);
    if (at === first) this.linkStart.set(from.linkStart.subarray(j, end), i);
    else for (let k = 0; k < count; k++) this.linkStart[i + k] = at + from.linkStart[j + k] - first;
    this.linkLength = at + last - first;
    // A result taken over has the key of the call `from` paired it with; unless nothing came
    // before the run in either, that call may not be the latest with its id here: it gets
    // the latest's key. A response Gemini pairs by order and name (one without an id) is
    // paired anew, its message read afresh as a new one would be.
    const far = i > 0 || j > 0 ? this.farResult(at, this.linkLength) : -1;
    if (far >= 0) {
      let took = 0;
      while (this.linkStart[i + took + 1] <= far && took + 1 < count) took++;
      const cut = i + took;
      this.linkLength = this.linkStart[cut];
      this.images.fill(0, cut, i + count);
      if (this.lengthMode) this.lengthTokens.fill(0, cut, i + count);
      this.raw.fill(-1, cut, i + count);
      // (The map of calls by id is made again as far as needed: it may have read links
      // that are read afresh.)
      if (this.byIdAt > this.linkLength) {
        this.byId = null;
        this.byIdAt = 0;
      }
      count = took;
    }
    // (None taken: the latest calls are still those read before.)
    if (count > 0) this.recentFrom(i, count);
    return count;
  }

  /** After messages `i … i + count - 1` were taken over: the latest calls are those of the
   * last of them with calls, when it is one of the last few (else `callKey` finds them). */
  recentFrom(i, count) {
    const recent = this.recentCalls, data = this.linkData, ids = this.ids;
    this.recentLength = 0;
    this.recentOf = -1;
    for (let k = i + count - 1, stop = Math.max(i, i + count - NEAR_MESSAGES); k >= stop; k--) {
      const last = k + 1 < i + count ? this.linkStart[k + 1] : this.linkLength;
      for (let at = this.linkStart[k]; at < last; at += 2) {
        if (data[at + 1] === CALL) {
          recent[this.recentLength++] = ids[data[at]];
          recent[this.recentLength++] = data[at];
        }
      }
      if (this.recentLength > 0) {
        this.recentOf = k;
        return;
      }
    }
  }

  /**
   * Results among links `start … end` (a run taken over) whose call is not a few links
   * before them in the run get the key of the latest call with their id before them here
   * (they keep theirs when there is none); a result whose call is (the usual case) keeps its
   * key without a lookup: nothing between them changed. Returns the first such Gemini
   * response (paired with the turn before, by order and name: see `namedResult`), to be
   * read afresh, or -1.
   */
  farResult(start, end) {
    const data = this.linkData, ids = this.ids;
    for (let at = start; at < end; at += 2) {
      if (data[at + 1] !== RESULT) continue;
      const key = data[at];
      let near = false;
      for (let back = at - 2, stop = Math.max(start, at - 2 * NEAR_LINKS); back >= stop && !near; back -= 2) {
        near = data[back] === key && data[back + 1] === CALL;
      }
      if (near) continue;
      if (this.format === "gemini") return at;
      const call = this.callKey(ids[key], at);
      if (call !== undefined) data[at] = call;
    }
    return -1;
  }

  /** A reading for another call on the same messages, sharing what was read. */
  again(options) {
    const r = new Reading(0, options, this.ids);
    r.version = this.version;
    r.n = this.n;
    r.roles = this.roles;
    r.flags = this.flags;
    r.images = this.images;
    r.masks = this.masks;
    r.checked = this.checked;
    r.detected = this.detected;
    r.lengthTokens = this.lengthTokens;
    r.roleCodes = this.roleCodes;
    r.raw = this.raw;
    r.stamps = this.stamps;
    r.linkStart = this.linkStart;
    r.linkData = this.linkData;
    r.linkLength = this.linkLength;
    return r;
  }

  isSummaryText(text) {
    if (typeof text !== "string") return false;
    let at = 0, c = text.charCodeAt(0);
    while (c <= 32) c = text.charCodeAt(++at);
    // (The tag opens with "<": most texts are told apart without a call of startsWith.)
    if (c !== 60 || !text.startsWith(this.openTag, at)) return false;
    // Wrapped in the tag, not only opened by it: a user's paste of a summary followed by a
    // request is that user's input (it was taken for a summary, and replaced).
    let end = text.length;
    while (end > 0 && text.charCodeAt(end - 1) <= 32) end--;
    return text.endsWith(this.closeTag, end);
  }

  /** The format read, as the core numbers it (`FORMAT_CODES`). */
  get formatCode() {
    return FORMAT_CODES.indexOf(this.format);
  }

  get links() {
    return this.linkData.subarray(0, this.linkLength);
  }

  /** Message i's links are `links[linkStarts[i] .. linkStarts[i + 1]]`. */
  get linkStarts() {
    return this.linkStart;
  }

  /**
   * Length mode: the estimate of each of messages `indices` before overheads, its texts'
   * summed as they were read and its payloads' (kept as they were) written out now.
   */
  lengths(indices) {
    const texts = this.texts, starts = this.pieceStart, out = new Float64Array(indices.length);
    for (let k = 0; k < indices.length; k++) {
      const i = indices[k];
      let tokens = this.lengthTokens[i];
      for (let q = starts[i], end = starts[i + 1]; q < end; q++) tokens += Math.ceil(texts.text(q).length / this.charsPerToken);
      out[k] = tokens;
    }
    return out;
  }

  /** Whether some texts wait to be estimated (in length mode: payloads, see `lengths`). */
  get deferred() {
    return this.texts.length > 0;
  }

  /** The length of the texts of messages `indices` (UTF-16 code units), counted only as far
   * as past `limit`, when given. */
  units(indices, limit) {
    return textUnits(this.texts, this.pieceStart, indices, limit);
  }

  /** How many texts each of messages `indices` has to estimate, and the code of its role
   * name (`roleText`) in the top 8 bits. */
  pieceCounts(indices) {
    const starts = this.pieceStart, codes = this.roleCodes, counts = new Uint32Array(indices.length);
    for (let k = 0; k < indices.length; k++) {
      const i = indices[k];
      // (A message of 2^24 texts would need gigabytes.)
      counts[k] = (starts[i + 1] - starts[i]) | ((codes.length > i ? codes[i] : 0) << 24);
    }
    return counts;
  }

  /** The role names that `roleCodes` number, from 1, each followed by "\0". */
  get roleNames() {
    return ROLE_NAMES_TEXT;
  }

  /** Whether the core asks for texts as UTF-16 (a Uint16Array `dest` for `encodeInto`):
   * where Node's `Buffer` writes them (several times faster than `TextEncoder` writes
   * UTF-8). */
  get wideTexts() {
    return NODE_BUFFER !== undefined;
  }

  /**
   * The texts of messages `indices` (in that order), piece after piece from piece number
   * `from`, into `dest` (a view of wasm memory) from its start: UTF-16 code units into a
   * Uint16Array (see `wideTexts`), UTF-8 into a Uint8Array; each piece's length in `dest`'s
   * units into `lengths[piece]`. A round ends at the piece that does not fit in what is
   * left of `dest`: returns the units written (the core weighs them, then asks for the
   * next round). A piece that does not fit in all of `dest` is written in parts, cut
   * between code points, one round each: such a round returns minus the part's units, and
   * the next round (asked from the same piece) goes on with the rest. So `dest`, the
   * memory the core keeps for texts, never grows to fit the longest text.
   */
  encodeInto(indices, from, dest, lengths) {
    const wide = dest.BYTES_PER_ELEMENT === 2;
    const texts = this.texts, starts = this.pieceStart;
    // Where piece `from` is: where the last round of this estimate stopped (else found),
    // and `off`, the units of it written already (by rounds that wrote a part of it).
    let { k, q, p, off } = this.cursor !== undefined && this.cursor.p === from ? this.cursor : pieceAt(starts, indices, from);
    this.cursor = undefined;
    let at = 0;
    // (A Buffer over `dest`, made for the first long piece: most first calls have none.)
    let bytes;
    for (; k < indices.length; k++, q = -1) {
      const end = starts[indices[k] + 1];
      if (q < 0) q = starts[indices[k]];
      for (; q < end; q++, off = 0) {
        let piece = texts.text(q);
        if (off > 0) piece = piece.substring(off);
        const length = piece.length;
        let written = -1;
        if (wide) {
          if (length <= dest.length - at) {
            if (length <= SHORT_PIECE) {
              for (let c = 0; c < length; c++) dest[at + c] = piece.charCodeAt(c);
              written = length;
            } else {
              bytes ??= NODE_BUFFER.from(dest.buffer, dest.byteOffset, dest.byteLength);
              written = (UCS2_WRITE ? bytes.ucs2Write(piece, 2 * at) : bytes.write(piece, 2 * at, "utf16le")) / 2;
            }
          }
        } else if (length <= SHORT_PIECE && length <= dest.length - at) {
          // A short ASCII piece (a role, an id, a name) is copied faster than encoded.
          let c = 0;
          while (c < length) {
            const unit = piece.charCodeAt(c);
            if (unit >= 0x80) break;
            dest[at + c++] = unit;
          }
          written = c === length ? c : encodeUtf8(piece, dest, at);
        } else if (length <= dest.length - at) {
          written = encodeUtf8(piece, dest, at);
        }
        // (Else it cannot fit: UTF-8 takes a byte a code unit at least.)
        if (written < 0 && at > 0) {
          this.cursor = { k, q, p, off };
          return at;
        }
        if (written < 0) {
          // A part of the piece, all that `dest` holds.
          let read = dest.length;
          if (wide) {
            // (Not between the two halves of a surrogate pair.)
            if ((piece.charCodeAt(read - 1) & 0xFC00) === 0xD800) read--;
            bytes ??= NODE_BUFFER.from(dest.buffer, dest.byteOffset, dest.byteLength);
            written = (UCS2_WRITE ? bytes.ucs2Write(piece, 0, 2 * read) : bytes.write(piece, 0, 2 * read, "utf16le")) / 2;
          } else {
            ({ read, written } = ENCODER.encodeInto(piece, dest));
          }
          this.cursor = { k, q, p, off: off + read };
          lengths[p] = written;
          return -written;
        }
        at += written;
        lengths[p++] = written;
      }
    }
    return at;
  }

  setRaw(raw) {
    this.raw.set(raw);
  }

  /** What a late estimate needs (`params` is a view of wasm memory: copied). */
  setEstimator(params) {
    this.estimator = Float64Array.from(params);
  }

  /** Done with the texts: every message that needs an estimate has one. */
  dropTexts() {
    this.texts = new TextChunks();
  }

}

// ---- Readings kept between calls ------------------------------------------------------
//
// A chat calls the reducer on every turn with the same message objects and a few new
// ones. A call takes over from an earlier reading of the same conversation what it read
// of every message object that is still there with the same stamp, and reads only the
// others. Readings are found by the conversation's first message object, and kept only
// as long as that object is alive (a conversation the app dropped takes its readings with
// it), a few per conversation (calls with other options may alternate); the latest are
// also held on their own, for a reduced history that no longer starts with the same
// message. Counts the caller gives (`tokenCounts`) are never kept; `countTokens`' counts
// are, for the same function.

/** Readings by their first message object, most recent first. */
const BY_FIRST = new WeakMap();

/** How many readings one first message keeps (one per set of estimator options, or two:
 * a whole history's and the shorter one of its prompt, see `keepReading`). */
const PER_FIRST = 4;

/** Calls that found their reading among those of their first message, and how many of
 * them a reading may go unused before it goes (`keepReading`). */
let CALLS = 0;
const KEEP_UNUSED = 8;

/** How far from its end a call's messages are searched for a kept reading's last one. */
const LAST_LOOKED_AT = 64;

/** The latest readings, most recent first. */
const RECENT = [];

const KEEP_RECENT = 2;

/** Shorter inputs are read afresh every time (unless a `countTokens` counts them): cheaper
 * than a lookup. */
const KEEP_MIN_MESSAGES = 32;

/** Whether reading `r` was made with these options (format, tag, the numbers its counts
 * depend on) and this `countTokens`. */
function madeWith(r, options, countTokens) {
  const a = r.options;
  if (a.format !== options.format || a.tag !== options.tag || r.countTokens !== countTokens) return false;
  const x = a.params, y = options.params;
  if (x.length !== y.length) return false;
  for (let k = 0; k < x.length; k++) if (!Object.is(x[k], y[k])) return false;
  return true;
}

/** The kept reading for this call, and where in it the call's first message is. */
function previousReading(items, options, countTokens) {
  if (items.length === 0) return undefined;
  const first = items[0];
  const own = BY_FIRST.get(first);
  if (own !== undefined) {
    // Of those made with these options, the one whose last message is latest among this
    // call's (looked for among the last few): the history it grew from, or the reduced one
    // an app went on with, or the whole history whose prompt this call checks; of two, the
    // longer.
    let best, bestAt = -2;
    for (const r of own) {
      if (!madeWith(r, options, countTokens)) continue;
      const last = r.items[r.items.length - 1];
      let at = items.length - 1;
      const stop = Math.max(0, items.length - LAST_LOOKED_AT);
      while (at >= stop && items[at] !== last) at--;
      if (at < stop) at = -1;
      if (at > bestAt || (at === bestAt && r.items.length > best.items.length)) {
        best = r;
        bestAt = at;
      }
    }
    if (best !== undefined) {
      best.used = ++CALLS;
      return { reading: best, at: 0 };
    }
  }
  for (const r of RECENT) {
    if (!madeWith(r, options, countTokens)) continue;
    const at = r.items.indexOf(first);
    if (at >= 0) return { reading: r, at };
  }
  return undefined;
}

/** Whether reading `r`'s link keys are mostly those of calls long gone (it is then not
 * taken over: a fresh reading numbers its calls from 0). */
function staleKeys(r) {
  return r.ids.length > r.linkLength + 4096;
}

/** Keeps `reading` for the next calls, in place of the one it took over from. */
function keepReading(reading) {
  const first = reading.items[0];
  const before = reading.previous;
  reading.previous = undefined;
  let own = BY_FIRST.get(first);
  if (own === undefined) BY_FIRST.set(first, (own = []));
  // It replaces the reading it took over from, unless it read fewer messages: the prompt a
  // reduction made, estimated or checked before the next turn, must not take the place of
  // the whole history's reading (whose every dropped message the next turn would count
  // again: `countTokens` called for each).
  const k = own.findIndex((r) => (r === before || (before === undefined && madeWith(r, reading.options, reading.countTokens))) &&
    r.items.length <= reading.items.length);
  if (k >= 0) own.splice(k, 1);
  // (A reading no call took over from for a while goes: the longer one kept beside a
  // shorter, once the app went on with the reduced history.)
  reading.used = CALLS;
  for (let j = own.length - 1; j >= 0; j--) if (CALLS - own[j].used > KEEP_UNUSED) own.splice(j, 1);
  own.unshift(reading);
  if (own.length > PER_FIRST) own.length = PER_FIRST;
  const j = RECENT.indexOf(before);
  if (j >= 0) RECENT.splice(j, 1);
  RECENT.unshift(reading);
  if (RECENT.length > KEEP_RECENT) RECENT.length = KEEP_RECENT;
}

/**
 * For each message, the index of the same unchanged message object in `prev` (-1: read it).
 * Walks both in order; a message that is not next in `prev` is searched for (removed
 * messages, a reduced history), by a scan and past a budget by a map.
 */
function align(items, prev, start, same, from, counts) {
  const old = prev.items, raw = prev.raw, stamps = prev.stamps;
  const n = items.length, m = old.length;
  let j = start, scanned = 0, where;
  for (let i = 0; i < n; i++) {
    // Messages in their places, unchanged (the usual case: a history that grew): one loop.
    const end = sameRun(items, i, prev, j, same, from, counts);
    if (end > i) {
      j += end - i;
      i = end - 1;
      continue;
    }
    const msg = items[i];
    let k = -1;
    if (j < m && old[j] === msg) k = j;
    else if (where !== undefined) k = where.get(msg) ?? -1;
    else if (scanned < 4 * m + 1024) {
      k = old.indexOf(msg, j);
      scanned += (k < 0 ? m : k) - j + 1;
    } else {
      where = new Map();
      for (let x = 0; x < m; x++) where.set(old[x], x);
      k = where.get(msg) ?? -1;
    }
    if (k < 0) continue;
    // A count is taken over when there is one (a count given by tokenCounts is not kept).
    if (raw[k] < 0 && !(counts !== undefined && counts[i] >= 0)) continue;
    if (!sameStamp(same, msg, stamps.chunks[k >> STAMP_SHIFT], slot(k))) continue;
    from[i] = k;
    j = k + 1;
  }
}

/**
 * How far messages `items[i …]` are messages `prev.items[j …]`, each unchanged (its stamp)
 * and counted (by `prev`, or by `counts`); `from` (if given) records them. Stops at the
 * first that is not, or whose fields throw (it is then read afresh, which reports it).
 */
function sameRun(items, i, prev, j, same, from, counts) {
  const old = prev.items, raw = prev.raw, stamps = prev.stamps;
  const n = items.length, m = old.length;
  try {
    for (; i < n && j < m; i++, j++) {
      const msg = items[i];
      if (msg !== old[j] || (raw[j] < 0 && !(counts !== undefined && counts[i] >= 0)) || !same(msg, stamps.chunks[j >> STAMP_SHIFT], slot(j))) break;
      if (from !== undefined) from[i] = j;
    }
  } catch {
    // items[i] is read afresh
  }
  return i;
}

/** Whether `items` are the messages `prev` read, in order, each unchanged and counted. */
function allUnchanged(items, prev, given) {
  return prev.n === items.length && sameRun(items, 0, prev, 0, READERS[prev.format].same, undefined, given) === items.length;
}

/** The largest token count taken from `tokenCounts` or `countTokens` (as from
 * `recordUsage`: `MAX_COUNT` in history.rs): a sum of any number of them stays finite, where
 * two counts of 1e308 made the totals Infinity. No context window comes near it. */
const MAX_COUNT = Number.MAX_SAFE_INTEGER;

const AT_MOST = `at most ${MAX_COUNT} (Number.MAX_SAFE_INTEGER)`;

/** `tokenCounts[i]` for every message: the count, or -1 where none is given (SPEC §3: what
 * is not a finite number ≥ 0 leaves the message to the next source). A finite count above
 * `MAX_COUNT` is INVALID_CONFIG. */
function givenCounts(tokenCounts, n) {
  const given = new Float64Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    let c;
    try {
      c = tokenCounts[i];
    } catch (e) {
      throw new ReduceError("INVALID_CONFIG", `reading tokenCounts[${i}] threw: ${reason(e)}`, i, "tokenCounts");
    }
    if (typeof c !== "number" || !(c >= 0) || c === Infinity) continue;
    if (c > MAX_COUNT) {
      throw new ReduceError("INVALID_CONFIG", `tokenCounts[${i}] is ${c}: a token count must be ${AT_MOST}`, i, "tokenCounts");
    }
    given[i] = c;
  }
  return given;
}

/**
 * Reads `messages` for the core: in format `formatCode` (of `FORMAT_CODES`; else "auto"),
 * recognising summaries by `tag`, in length mode (`charsPerToken`) or not. `params`: the
 * numbers a count depends on besides the message (a reading is taken over only under the
 * same ones). `tokenCounts`, `countTokens`: the caller's, or undefined. `keep`: whether
 * this reading may serve the next calls (the input of a call, not a message this library
 * wrote).
 */
export function readMessages(messages, formatCode, tag, lengthMode, charsPerToken, params, countTokens, tokenCounts, keep) {
  const options = {
    format: FORMAT_CODES[formatCode] ?? "auto", tag, lengthMode, charsPerToken,
    params: Float64Array.from(params), // (a view of wasm memory)
  };
  const items = messageList(messages);
  const n = items.length;
  if (typeof countTokens !== "function") countTokens = undefined;
  const given = Array.isArray(tokenCounts) ? givenCounts(tokenCounts, n) : undefined;
  keep = keep === true && (n >= KEEP_MIN_MESSAGES || countTokens !== undefined);
  let prev = keep ? previousReading(items, options, countTokens) : undefined;
  if (prev !== undefined && staleKeys(prev.reading)) prev = undefined;
  // Messages a reduction left unestimated are estimated now, once: the calls after this one
  // take every count over.
  if (prev !== undefined && prev.reading.pending) completeReading(prev.reading);

  // The same messages as last time, all unchanged: the same reading, for this call.
  if (prev !== undefined && prev.at === 0 && allUnchanged(items, prev.reading, given)) {
    const before = prev.reading;
    const r = before.again(options);
    r.format = before.format;
    r.items = before.items; // the same objects: the copy dies young
    r.countTokens = countTokens;
    if (given !== undefined) r.given = given;
    r.keep = keep;
    r.previous = before;
    return r;
  }

  // Which messages were read before, unchanged.
  const from = new Int32Array(n).fill(-1);
  if (prev !== undefined) {
    align(items, prev.reading, prev.at, READERS[prev.reading.format].same, from, given);
  }
  checkObjects(items, from);
  // Whether the messages start with all those of the reading taken over, in place (a
  // history that grew): what was read of them goes on (see `take`, and `detect` below).
  let first = 0;
  while (first < n && from[first] === first) first++;
  const continues = prev !== undefined && prev.reading.n > 0 && first >= prev.reading.n;
  // The format: for auto, from every message's fit mask (kept ones are known; fresh ones,
  // once one format is left, are checked by their reader).
  const masks = new Uint8Array(n), checked = new Uint8Array(n);
  let format = options.format;
  let detected;
  if (format === "auto") {
    let start;
    if (prev !== undefined) {
      const oldMasks = prev.reading.masks, oldChecked = prev.reading.checked;
      masks.set(oldMasks.subarray(0, first));
      checked.set(oldChecked.subarray(0, first));
      for (let i = first; i < n; i++) {
        const k = from[i];
        if (k >= 0) {
          masks[i] = oldMasks[k];
          checked[i] = oldChecked[k];
        }
      }
      // Detection over the same messages ends as it did: it goes on from there.
      if (continues && prev.reading.detected !== undefined) start = prev.reading.detected;
    }
    detected = detect(items, masks, checked, countTokens === undefined ? from : undefined, start);
    format = detected.format;
  }
  const deferFrom = detected !== undefined ? detected.deferFrom : n;
  if (prev !== undefined && format !== prev.reading.format) {
    from.fill(-1);
    prev = undefined;
  }
  const reader = own(READERS, format);
  const before = prev !== undefined ? prev.reading : undefined;
  const r = new Reading(n, options, before !== undefined ? before.ids : [], before !== undefined && continues ? before : undefined);
  r.format = format;
  r.items = items;
  r.masks = masks;
  r.checked = checked;
  r.detected = detected;
  r.countTokens = countTokens;
  if (given !== undefined) r.given = given;
  r.keep = keep;
  r.previous = before;
  for (let i = 0; i < n;) {
    const k = from[i];
    if (k >= 0) {
      let run = 1;
      while (i + run < n && from[i + run] === k + run) run++;
      const took = r.take(i, before, k, run);
      r.pieceStart.fill(r.texts.length, i, i + took);
      i += took;
      // (A message it did not take is read afresh.)
      if (took < run) from[i] = -1;
    } else {
      const check = i >= deferFrom;
      let fits;
      try {
        fits = readFresh(r, reader, i, items[i], given !== undefined && given[i] >= 0, countTokens, check);
      } catch (e) {
        // Which error `detect` would have reported first: this message's own check (it
        // could not be read, or does not fit), else a later message's, else the reading's.
        if (deferFrom < n) {
          if (check && fitMask(i, items[i], detected.possible) === 0) throw misfit(i, items[i], detected);
          checkDeferred(items, from, i, detected);
        }
        throw e;
      }
      if (!fits) throw misfit(i, items[i], detected);
      i++;
    }
  }
  r.linkStart[n] = r.linkLength;
  r.pieceStart[n] = r.texts.length;
  return r;
}

/** Reads message i afresh (`counted`: its count is given), with its stamp and, from the
 * caller's `countTokens`, its count. `check`: whether it is first to be checked to fit the
 * reader's format (false, nothing read, when it does not). */
function readFresh(r, reader, i, m, counted, countTokens, check) {
  r.linkStart[i] = r.linkLength;
  r.pieceStart[i] = r.texts.length;
  r.collectTexts = !counted && countTokens === undefined;
  const read = readOne(reader, r, i, m, check);
  if (read === MISFIT) return false;
  if (read !== STAMPED) {
    try {
      reader.stamp(m, r.stamps.writable(i), slot(i), stampWith);
    } catch (e) {
      throw bad(i, `could not be read: ${reason(e)}`);
    }
  }
  if (counted || countTokens === undefined) return true;
  // The user's own function: what it throws reaches the caller unchanged.
  const c = countTokens(m, i);
  if (typeof c !== "number" || !(c >= 0 && c <= MAX_COUNT)) {
    throw new ReduceError("INVALID_CONFIG",
      `countTokens returned ${describe(c)} for message ${i}; it must return a finite number ≥ 0, ${AT_MOST}`,
      i, "countTokens");
  }
  r.raw[i] = c;
  return true;
}

/**
 * `tokens[i]`: message i's count before calibration, estimated where `raw` had none (empty:
 * nothing changed). The reading becomes the one the next calls take over from.
 */
export function remember(reading, tokens) {
  if (tokens.length > 0) reading.raw.set(tokens);
  if (reading.keep && reading.n > 0) keepReading(reading);
}

/** Reads message i (`check`: if it fits the reader's format); what `read` returns, or
 * `MISFIT`. */
export function readOne(reader, r, i, m, check) {
  try {
    if (!check) return reader.read(r, i, m);
    if (reader.readChecked !== undefined) return reader.readChecked(r, i, m);
    return reader.looks(m) ? reader.read(r, i, m) : MISFIT;
  } catch (e) {
    if (e instanceof ReduceError) throw e;
    throw bad(i, `could not be read: ${reason(e)}`);
  }
}

/** log2 of the texts a chunk of `TextChunks` holds. */
const TEXT_SHIFT = 12;

const TEXT_CHUNK = 1 << TEXT_SHIFT;

/**
 * A list of texts in arrays of TEXT_CHUNK: an array of that many stays in V8's young
 * generation, while one of all a long history's texts (tens of thousands) is a large object,
 * into which every store of a string cost several times as much (measured: 34,000 pushes
 * 1.2–1.5 ms into one array, 0.5 ms into chunks).
 */
class TextChunks {
  /** `expected`: about how many texts there will be (the first chunk's size). */
  constructor(expected = 0) {
    this.chunks = [];
    this.length = 0;
    this.first = Math.min(TEXT_CHUNK, Math.max(16, expected));
  }

  push(text) {
    const q = this.length++;
    const at = q & (TEXT_CHUNK - 1);
    // (Chunks are made at their size, not grown by pushes, which copy them as they grow;
    // the first one grows past its size if there are more texts than expected.)
    if (at === 0) this.chunks.push(new Array(q === 0 ? this.first : TEXT_CHUNK));
    this.chunks[q >> TEXT_SHIFT][at] = text;
  }

  /** Text number q (< length). */
  at(q) {
    return this.chunks[q >> TEXT_SHIFT][q & (TEXT_CHUNK - 1)];
  }

  /** Text number q as a string: a payload kept as it was (`Reading.json`) is written out
   * once, here. (Called from the core: nothing may throw. Plain data does not, unless a
   * getter that ran once while it was read throws now: it then counts as empty.) */
  text(q) {
    const piece = this.at(q);
    if (typeof piece === "string") return piece;
    let written;
    try {
      written = jsonText(piece);
    } catch {
      written = "";
    }
    this.chunks[q >> TEXT_SHIFT][q & (TEXT_CHUNK - 1)] = written;
    return written;
  }
}

const ENCODER = new TextEncoder();

/** `piece` as UTF-8 into `dest` from `at`: the bytes written, or -1 if it does not fit. */
function encodeUtf8(piece, dest, at) {
  const { read, written } = ENCODER.encodeInto(piece, dest.subarray(at));
  return read < piece.length ? -1 : written;
}

/** Node's `Buffer` (undefined elsewhere, and where a page defines one of its own). */
const NODE_BUFFER = typeof globalThis.process === "object" && globalThis.process !== null &&
  typeof globalThis.process.versions?.node === "string" && typeof globalThis.Buffer?.from === "function"
  ? globalThis.Buffer : undefined;

/** The role names met (`Reading.roleText`), numbered from 1 in the order met: a code
 * keeps its name for good (readings taken over keep their codes). At most 255; a name not
 * among them, or one with a "\0" (the separator of `ROLE_NAMES_TEXT`), is a text. */
const ROLE_NAMES = [];

let ROLE_NAMES_TEXT = "";

/** The code of role name `name` (0 for none: not a non-empty string, or no room left). */
function roleCode(name) {
  for (let k = 0; k < ROLE_NAMES.length; k++) if (ROLE_NAMES[k] === name) return k + 1;
  if (typeof name !== "string" || name.length === 0 || ROLE_NAMES.length === 255 || name.includes("\0")) return 0;
  ROLE_NAMES.push(name);
  ROLE_NAMES_TEXT += `${name}\0`;
  return ROLE_NAMES.length;
}

/** Whether `Buffer` has `ucs2Write` (as Node's has had since its first releases): what
 * `write(…, "utf16le")` calls after checking its arguments, which took a sixth of the time. */
const UCS2_WRITE = typeof NODE_BUFFER?.prototype.ucs2Write === "function";

/** Pieces up to this long are copied by hand (UTF-8: tried as ASCII first). */
const SHORT_PIECE = 64;

/** Where piece number `p` of the texts of messages `indices` is: `{ k, q, p }`, `q` the
 * text's number in the reading (-1 at a message's start). */
function pieceAt(starts, indices, p) {
  let k = 0, before = 0;
  for (; k < indices.length; k++) {
    const count = starts[indices[k] + 1] - starts[indices[k]];
    if (before + count > p) return { k, q: starts[indices[k]] + (p - before), p, off: 0 };
    before += count;
  }
  return { k, q: -1, p, off: 0 };
}

/** The UTF-16 length of the texts of messages `indices` (as far as past `limit`). */
function textUnits(texts, starts, indices, limit = Infinity) {
  let units = 0;
  for (let k = 0; k < indices.length && units <= limit; k++) {
    for (let q = starts[indices[k]], end = starts[indices[k] + 1]; q < end; q++) units += texts.text(q).length;
  }
  return units;
}

/**
 * The message objects, each read once: whatever getters or proxies the array has, the
 * result is built from these same objects (`checkObjects` checks they are objects). `by`
 * opens an error's message (who was given the messages).
 */
export function messageList(messages, by = "") {
  let items;
  try {
    // (Inside: `Array.isArray` throws for a revoked proxy.)
    if (!Array.isArray(messages)) {
      throw new ReduceError("INVALID_MESSAGES", `${by}messages must be an array of messages, got ${describe(messages)}`);
    }
    const n = messages.length;
    if (!(n <= MAX_MESSAGES)) {
      throw new ReduceError("INVALID_MESSAGES", `${by}messages has ${n} entries; at most ${MAX_MESSAGES} are accepted`);
    }
    // A native copy (a proxy's traps run here, once).
    items = Array.prototype.slice.call(messages);
  } catch (e) {
    if (e instanceof ReduceError) throw e;
    throw new ReduceError("INVALID_MESSAGES", `${by}messages could not be read: ${reason(e)}`);
  }
  return items;
}

/** Every message not taken over from an earlier reading must be an object. */
function checkObjects(items, from) {
  for (let i = 0; i < items.length; i++) {
    if (from[i] >= 0) continue; // the same object as one read before
    const m = items[i];
    if (m === null || typeof m !== "object") throw bad(i, `expected a message object, got ${describe(m)}`);
  }
}

// ---- history.js ----
// `ChatHistory`'s helpers (src/wasm/history.rs): the config of one prepare(), its offloaded
// originals, where the model's reply starts, and the check of the messages it takes.
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).


/**
 * The config of one `ChatHistory.prepare()`: an object whose prototype is the app's `config`
 * (its options, getters and all, are read as ever) with the exact `tokenCounts` and the
 * `calibration` the history learned, where given, and a summarizer that counts each call it
 * passes on in `calls.n` whatever comes of it (`stats().summarizerCalls`); and the
 * `signal` of `prepare`'s `options`, if it has one, instead of the config's.
 */
export function historyConfig(config, tokenCounts, calibration, calls, options) {
  calls.n = 0;
  const own = {};
  let signal;
  try {
    signal = options !== null && typeof options === "object" ? options.signal : undefined;
  } catch {
    // (Not a signal: none.)
  }
  if (signal !== undefined) own.signal = { value: signal };
  if (tokenCounts !== undefined) own.tokenCounts = { value: tokenCounts };
  if (calibration !== undefined) own.calibration = { value: calibration };
  let summarizer;
  try {
    summarizer = config.summarizer;
  } catch {
    // (The reduction reads it again, and reports what it throws.)
  }
  if (typeof summarizer === "function") {
    own.summarizer = { value: (request) => { calls.n += 1; return summarizer(request); } };
  }
  return Object.create(config, own);
}

/**
 * The offloaded originals of a state `version` (1 or 2) whose messages ever pushed are
 * `original`, as `fromJSON` takes them in: a new object with a copy of each id's array, an
 * index into `original` as that message (an entry that is not an array, or that throws, is
 * not one a history wrote, and is left out), so that what a caller does with the state
 * after never changes the history's own.
 */
function offloadedCopy(offloaded, original, version) {
  const copy = {};
  // Version 1 wrote each original out: one with the JSON of a message of `original` is
  // that message again (as version 2 writes it), found by its JSON (made once, here).
  let byJson;
  const same = (m) => {
    if (byJson === undefined) {
      byJson = new Map();
      for (let k = original.length - 1; k >= 0; k--) {
        try {
          byJson.set(JSON.stringify(original[k]), original[k]);
        } catch {
          // (not JSON: matches nothing)
        }
      }
    }
    try {
      return byJson.get(JSON.stringify(m)) ?? m;
    } catch {
      return m;
    }
  };
  try {
    for (const [id, originals] of Object.entries(offloaded)) {
      if (!Array.isArray(originals)) continue;
      // A number (version 2) is the message at that index of `original`; one that is not an
      // index of it is left out.
      const value = originals.flatMap((m) => (typeof m !== "number" ? [version === 1 ? same(m) : m]
        : Number.isInteger(m) && m >= 0 && m < original.length ? [original[m]] : []));
      // (`defineProperty`: an id "__proto__" is an id like any other.)
      Object.defineProperty(copy, id, { value, enumerable: true, writable: true, configurable: true });
    }
  } catch {
    // (A state whose getters throw: what was read so far.)
  }
  return copy;
}

/**
 * `toJSON()`'s `offloaded` (state version 2): each original that is a message of `original`
 * as its index there, not a second copy of it in the JSON (after 80 turns of an agent, the
 * copies were 1.9 of a 4.1 MB state); the others (what earlier reductions wrote) as they
 * are. `at`: `firstIndices(original)`.
 */
function offloadedState(offloaded, at) {
  const out = {};
  for (const [id, originals] of Object.entries(offloaded)) {
    const value = originals.map((m) => at.get(m) ?? m);
    Object.defineProperty(out, id, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** For `toJSON()`: the index in `original` of each working message that is one of its
 * objects (-1 for one a reduction wrote), so that `fromJSON` gives each back as one object,
 * in both, as it was (a part an app replaces through either reaches the prompt). `at`:
 * `firstIndices(original)`. */
function messageOrigins(messages, at) {
  return messages.map((m) => at.get(m) ?? -1);
}

/** Each message object of `original` to its first index there. */
function firstIndices(original) {
  const at = new Map();
  for (let k = 0; k < original.length; k++) if (!at.has(original[k])) at.set(original[k], k);
  return at;
}

/** `ChatHistory.reload(id)`: a copy of the originals offloaded as `id`, or undefined for an
 * id it does not know, or one that is not a string (a model's tool call may leave it out;
 * own ids only, not what the object inherits, such as `toString`). */
export function reloaded(offloaded, id) {
  return typeof id === "string" && Object.hasOwn(offloaded, id) ? offloaded[id].slice() : undefined;
}

/**
 * The first of `values` that the model wrote, where its reply starts: an assistant message
 * (a Gemini `model` turn, a LangChain AI message, a Responses API assistant message or call
 * item; not a reasoning item, which the reply's next item carries), or undefined.
 * `ChatHistory.recordUsage` gives it the reply's `outputTokens`: a user message pushed
 * while the model was answering is not the reply. Null for a reply that holds more than the
 * model wrote, which `outputTokens` would under-count: tool outputs (an AI SDK UIMessage's
 * tool parts, the results of provider-executed tools), or a tool part whose output comes
 * later into the same message.
 */
export function replyOf(values) {
  for (const m of values) {
    try {
      if (byModel(m)) return holdsResults(m) ? null : m;
    } catch {
      // (A message whose fields throw is not taken for the reply.)
    }
  }
  return undefined;
}

function holdsResults(m) {
  // (A UIMessage's parts, whose tool parts hold call and output; else content parts.)
  const ui = Array.isArray(m.parts);
  const parts = ui ? m.parts : m.content;
  return Array.isArray(parts) && parts.some((p) => p !== null && typeof p === "object" && typeof p.type === "string" &&
    (ui ? isUiTool(p) : p.type === "tool-result" || p.type.endsWith("_tool_result")));
}

function byModel(m) {
  const role = m.role;
  if (role === "assistant" || role === "model") return true;
  if (looksLangChain(m)) return langchainShape(m)[0] === "ai";
  const type = m.type;
  return RESPONSES_TYPES.has(type) && (type.endsWith("_call") || type === "mcp_approval_request");
}

/** `ChatHistory`'s starting messages: none for undefined or null, else a copy of the array,
 * read once as `reduce` reads its input (`messageList`: what is not an array, or an array
 * whose reading throws, is `INVALID_MESSAGES`); `checkMessages` checks them. */
export function startingMessages(value) {
  if (value === undefined || value === null) return [];
  return messageList(value, "new ChatHistory: ");
}

/**
 * `ChatHistory` takes `values` after `before` messages only if each is a message object
 * that fits `formats`, the formats (a `fitMask`) all of its messages fit, and that the
 * reader of one of those formats reads without an error (as a reduction will read it);
 * returns the formats all fit then. It throws `INVALID_MESSAGE` (with the index `before` +
 * its own) for one that is not a message of any format or that every such reader refuses,
 * and `INVALID_MESSAGES` for one of another format than those before it, as a reduction of
 * them all would (`detect`): a message pushed by mistake is refused at once instead of
 * failing every later `prepare()`. Only the new messages are looked at. Under a named
 * `config.format`, `formats` is its code with the flag `NAMED`, and that format's reader is
 * the whole check (it takes shapes auto-detection does not); `formats` is returned as it is.
 */
export function checkMessages(values, before, by, formats) {
  // A named format (config.format): its code under the NAMED flag; its reader is the check.
  const named = formats & NAMED ? own(READERS, FORMAT_CODES[formats & 0xff]) : undefined;
  if (named === undefined) formats &= ALL_FORMATS;
  let scratch;
  for (let k = 0; k < values.length; k++) {
    const m = values[k], i = before + k;
    if (m === null || typeof m !== "object" || isArray(i, m, by)) {
      throw bad(i, `${by}: expected a message object, got ${describe(m)}`);
    }
    scratch ??= new Reading(1, SCRATCH_OPTIONS, []);
    if (named !== undefined) {
      checkRead(named, scratch, i, m, by);
      continue;
    }
    const fits = fitMask(i, m, formats || ALL_FORMATS);
    if (fits === 0) {
      const other = formats === 0 ? 0 : fitMask(i, m, ALL_FORMATS);
      if (other === 0) {
        throw bad(i, `${by}: not a message of any known format (openai, openai-responses, anthropic, vercel, vercel-ui, gemini, langchain)`);
      }
      throw new ReduceError("INVALID_MESSAGES",
        `${by}: message ${i} looks like ${formatNames(other).join(" or ")}, but the messages before it like ${formatNames(formats).join(" or ")}; a history holds messages of one format`);
    }
    // Read as each format it fits would read it: a message its reader refuses (content 42,
    // tool_calls "x") would make every later prepare() fail, with no way to take it out.
    let read = 0, error;
    for (let f = 0; f < FORMATS.length; f++) {
      if (!(fits & (1 << f))) continue;
      try {
        checkRead(READERS[FORMATS[f]], scratch, i, m, by);
        read |= 1 << f;
      } catch (e) {
        error ??= e;
      }
    }
    if (read === 0) throw error;
    if (formats !== 0) formats = read;
  }
  return formats;
}

/**
 * `recordUsage`'s `[inputTokens, outputTokens]`: each a count from 0 to
 * `Number.MAX_SAFE_INTEGER` (so that no total is ever Infinity), or undefined when left
 * out (undefined or null); `INVALID_CONFIG` (field `usage`) for anything else.
 */
export function usageCounts(usage) {
  const invalid = (message) => new ReduceError("INVALID_CONFIG", `recordUsage${message}`, undefined, "usage");
  if (usage === null || typeof usage !== "object") throw invalid(" takes { inputTokens, outputTokens }");
  return ["inputTokens", "outputTokens"].map((key) => {
    let n;
    try {
      n = usage[key];
    } catch (e) {
      throw invalid(`: ${key} could not be read: ${reason(e)}`);
    }
    if (n === undefined || n === null) return undefined;
    if (typeof n === "number" && n >= 0 && n <= MAX_COUNT) return n;
    throw invalid(`: ${key} must be a finite number ≥ 0, ${AT_MOST}`);
  });
}

/** The kind and the version of `toJSON()`'s state (`writeState`). */
const STATE_KIND = "chat-history-reducer/ChatHistory";
const STATE_VERSION = 2;

/**
 * `ChatHistory.toJSON()`'s state: plain JSON, versioned (`ChatHistoryState` in the typings;
 * `readState` reads it back). The arrays are the history's own (copied here); `stats`:
 * reductions, summarizer calls, tokens saved, 1 when the last reduction was over budget;
 * the last three null or a number.
 */
export function writeState(messages, original, counts, events, offloaded, stats, promptLength, pendingOutputTokens, calibration) {
  const at = firstIndices(original);
  return {
    kind: STATE_KIND,
    version: STATE_VERSION,
    messages: messages.slice(),
    original: original.slice(),
    origins: messageOrigins(messages, at),
    counts,
    events,
    offloaded: offloadedState(offloaded, at),
    stats: { reductions: stats[0], summarizerCalls: stats[1], tokensSaved: stats[2], overBudget: stats[3] === 1 },
    promptLength,
    pendingOutputTokens,
    calibration,
  };
}

/**
 * What `ChatHistory.fromJSON` takes of `state` (what `toJSON()` wrote, after a JSON round
 * trip), all read before the history holds anything (a getter of the caller's may run),
 * its working messages that are messages of `original` given back as those objects:
 * `[messages, original, counts, events, offloaded, reductions, summarizerCalls,
 * tokensSaved, promptLength, pendingOutputTokens, calibration]`. `INVALID_CONFIG` (field
 * `state`) for a state `toJSON()` did not write (its kind, its version) or messages that
 * are not an array; a part no history writes is left out: undefined (a count in `counts`:
 * null), or 0 for a statistic. Counts are from 0 to `Number.MAX_SAFE_INTEGER` (what
 * `recordUsage` takes), the calibration from 0.5 to 2 (what `calibrate` keeps it in).
 */
export function readState(state) {
  const invalid = (message) => new ReduceError("INVALID_CONFIG", `ChatHistory.fromJSON: ${message}`, undefined, "state");
  if (state === null || typeof state !== "object") throw invalid("state must be the object toJSON() returned");
  const get = (o, key) => {
    try {
      return o !== null && typeof o === "object" ? o[key] : undefined;
    } catch {
      return undefined;
    }
  };
  if (get(state, "kind") !== STATE_KIND) {
    throw invalid(`state.kind must be "${STATE_KIND}": this is not a state toJSON() wrote`);
  }
  // (Version 1 wrote every offloaded original out; `offloadedCopy` reads both.)
  const version = get(state, "version");
  if (version !== STATE_VERSION && version !== 1) {
    throw invalid(`state.version must be 1 or ${STATE_VERSION} (this state was written by another version)`);
  }
  const optional = (name) => {
    try {
      return stateList(get(state, name), name);
    } catch {
      return undefined;
    }
  };
  const count = (n) => (typeof n === "number" && n >= 0 && n <= MAX_COUNT ? n : undefined);
  const whole = (n) => (typeof n === "number" && n >= 0 ? Math.min(Math.floor(n), 0xffffffff) : 0);
  const stats = get(state, "stats"), offloaded = get(state, "offloaded"), calibration = get(state, "calibration");
  const promptLength = get(state, "promptLength");
  const messages = stateList(get(state, "messages"), "messages"), original = stateList(get(state, "original"), "original");
  // (`origins`: working messages that are messages of `original`, as one object again;
  // only where the two hold the same, so that a state edited since gives no message for
  // another.)
  const origins = optional("origins");
  if (origins !== undefined && origins.length === messages.length) {
    origins.forEach((k, i) => {
      if (Number.isInteger(k) && k >= 0 && k < original.length && sameJson(messages[i], original[k])) messages[i] = original[k];
    });
  }
  return [
    messages,
    original,
    optional("counts")?.map((n) => count(n) ?? null),
    optional("events"),
    offloaded !== null && typeof offloaded === "object" ? offloadedCopy(offloaded, original, version) : undefined,
    whole(get(stats, "reductions")),
    whole(get(stats, "summarizerCalls")),
    // (Whole since stats count whole tokens; a state of before may have fractions.)
    Math.ceil(count(get(stats, "tokensSaved")) ?? 0),
    typeof promptLength === "number" ? whole(promptLength) : undefined,
    count(get(state, "pendingOutputTokens")),
    typeof calibration === "number" && calibration >= 0.5 && calibration <= 2 ? calibration : undefined,
    get(stats, "overBudget") === true,
  ];
}

/** Whether `a` and `b` are the same as JSON (false when either cannot be written). */
function sameJson(a, b) {
  try {
    return a === b || JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}

/** `fromJSON`'s `state[name]`, a copy: `INVALID_CONFIG` (field `state`) when it is not an
 * array or cannot be read (a revoked proxy: `Array.isArray` throws). */
export function stateList(value, name) {
  try {
    if (Array.isArray(value)) return Array.prototype.slice.call(value);
  } catch (e) {
    throw new ReduceError("INVALID_CONFIG", `ChatHistory.fromJSON: state.${name} could not be read: ${reason(e)}`, undefined, "state");
  }
  throw new ReduceError("INVALID_CONFIG", `ChatHistory.fromJSON: state.${name} must be an array`, undefined, "state");
}

/** `Array.isArray(m)`, which throws for a revoked proxy: then `INVALID_MESSAGE`. */
function isArray(i, m, by) {
  try {
    return Array.isArray(m);
  } catch (e) {
    throw bad(i, `${by}: could not be read: ${reason(e)}`);
  }
}

/** The flag of a named format's code in `checkMessages`' `formats` (see history.rs). */
const NAMED = 1 << 30;

const SCRATCH_OPTIONS = { format: "auto", tag: "conversation-summary", lengthMode: true, charsPerToken: 4, params: new Float64Array(0) };

/** Reads message m (message i of the history) with `reader` into a scratch reading, as a
 * reduction would: what it refuses is thrown as the error for message i, `by` saying where. */
function checkRead(reader, scratch, i, m, by) {
  // (Alone: its results are not linked to calls of the messages checked before it.)
  scratch.items = [m];
  scratch.recentLength = 0;
  scratch.recentOf = -1;
  scratch.linkLength = 0;
  scratch.ids.length = 0;
  scratch.byId = null;
  scratch.byIdAt = 0;
  try {
    readOne(reader, scratch, 0, m, false);
  } catch (e) {
    if (!(e instanceof ReduceError)) throw e;
    throw new ReduceError(e.code, `${by}: message ${i}${e.message.replace(/^message 0/, "")}`, i, e.field);
  }
}

// ---- summaries.js ----
// ---------------------------------------------------------------------------------------
// Summaries: written in the input's own format, recognised later by their tag.
// The summarizer's call too (`callSummarizer`), and why a summary failed, in words.
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).


/** Whether the input writes content as an array of parts/blocks rather than a string. */
function usesParts(items) {
  for (const m of items) {
    const c = m.content !== undefined ? m.content : m.data && m.data.content;
    if (typeof c === "string") return false;
    if (Array.isArray(c)) return true;
  }
  return false;
}

const LANGCHAIN_SUMMARY_TYPES = { user: "human", system: "system", assistant: "ai" };

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
  return Array.from(indices, (i) => textOfSummary(reading.items[i], tag)).join("\n\n");
}

function textOfSummary(m, tag) {
  let text = "";
  const c = m.parts !== undefined ? m.parts : m.content !== undefined ? m.content : m.data && m.data.content;
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
  if ((reading.orphans ??= orphanLinks(reading)).size === 0) return Array.from(indices, (i) => reading.items[i]);
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

// ---- offload.js ----
// ---------------------------------------------------------------------------------------
// Offloading and rewriting (progressive): a rewritten message is a shallow copy of the
// original with only its text changed, in the same format; the original is kept under a
// content-derived id for the context_reload tool.
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).


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
 * and one that does not shrink the message is a summary over its limit).
 */
function rewriteTexts(format, m, replace, sized) {
  let before = 0, after = 0;
  const swap = (text) => {
    const written = replace(text);
    before += text.length;
    after += written.length;
    return written;
  };
  const copy = format === "openai-responses" && m.type !== undefined && m.type !== "message"
    ? rewriteItem(m, swap)
    : rewriteContent(format, m, swap);
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
function rewriteContent(format, m, replace) {
  const content = contentOf(format, m);
  if (typeof content === "string") return withContent(format, m, replace(content));
  if (!Array.isArray(content)) return withContent(format, m, replace(""));
  const parts = rewriteParts(content, replace);
  return parts !== undefined ? withContent(format, m, parts) : undefined;
}

/**
 * `parts` with their texts replaced (see `rewriteTexts`), or undefined when none of them
 * could take the rewritten text (only a tool call, say).
 */
function rewriteParts(content, replace) {
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
    } else if (textOfPart(p) !== undefined) {
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

function previewOf(text, chars) {
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

/** Stage 2–3: `{message, id}`, the message at `index` with its texts cut to previews (and
 * without its orphan results, as every copy written for it). */
export function offloadMessage(reading, index, previewChars, tokens) {
  const original = withoutOrphans(reading, index), id = offloadId([original]);
  const note = `[offloaded ${Math.round(tokens)} tokens as ${id}; call context_reload with {"id":"${id}"} for the full text]`;
  const message = rewriteTexts(reading.format, original, (text) => `${note}\n${previewOf(text, previewChars)}`);
  return { message, id };
}

/** Stages 5–6: `{message, id}`, the message at `index` with its texts replaced by `summary`. */
export function rewriteWithSummary(reading, index, summary) {
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

/** The tool calls of a message as `name(args)` strings, in any format. */
function callsOf(format, m) {
  const out = [];
  const add = (name, args) => out.push(`${name ?? "tool"}(${previewOf(jsonText(args), 80)})`);
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
  return { message: makeMessage(reading, role, lines.join("\n")), id };
}

/**
 * The `context_reload` tool: give it to the model so that it can ask for an offloaded
 * message back (`ChatHistory.reload(id)` or `result.offloaded[id]` answer it).
 */
export const reloadTool = Object.freeze({
  name: "context_reload",
  description:
    "Restore the full content of earlier conversation messages that were shortened to save context. " +
    "Call it with the id shown in a message that says it was offloaded or compressed (ids look like ctx_0123456789abcdef).",
  parameters: Object.freeze({
    type: "object",
    properties: Object.freeze({
      id: Object.freeze({ type: "string", description: "The offload id, e.g. ctx_0123456789abcdef." }),
    }),
    required: Object.freeze(["id"]),
    additionalProperties: false,
  }),
});

// ---- options.js ----
// Reading the config's options for the core: all of them in one pass, each by its kind.
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).


/** The INVALID_CONFIG error of an option whose getter threw. */
function optionError(key, e) {
  return new ReduceError("INVALID_CONFIG", `reading config.${key} threw: ${reason(e)}`, undefined, key);
}

/** The option names, in the order the core reads them: `Config::OPTION_NAMES` (a native
 * test in config.rs checks that this is the same list). */
const OPTION_KEYS = [
  "strategy", "format", "maxTokens", "targetTokens", "targetMessages", "thresholdMessages",
  "keepSystem", "keepLast", "startOn", "keepRecentPairs", "tokenCounts", "countTokens",
  "estimator", "charsPerToken", "tokenizer", "estimatorWeights", "calibration", "messageOverhead",
  "imageTokens", "summarizer", "summaryMode", "summaryRole", "summaryTag", "summaryMaxTokens",
  "onSummarizerError", "timeoutMs", "signal", "largeMessageTokens", "previewChars", "minToolRun",
  "currentRoundRatio", "onOverBudget", "onEvent",
];

/** Where `signal` is in `OPTION_KEYS`. */
const SIGNAL = OPTION_KEYS.indexOf("signal");

// Kinds of option values: the same numbers as `OptionKind` in decode.rs.
const O_MISSING = 0, O_BOOL = 1, O_NUMBER = 2, O_TEXT = 3, O_FUNCTION = 4, O_ARRAY = 5, O_OBJECT = 6,
  O_BIGINT = 7, O_SYMBOL = 8, O_OTHER = 9, O_THREW = 10;

/**
 * Reads every option of `config` in one pass (one crossing a call, not a few per option):
 * each one's kind into `kinds`, numbers and booleans (1/0) into `numbers` (both views of wasm
 * memory), and returns the values by index (undefined or null as given; the error of an
 * option whose getter threw).
 */
export function readOptions(config, kinds, numbers) {
  const keys = OPTION_KEYS;
  const values = new Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    let v;
    try {
      v = config[keys[i]];
    } catch (e) {
      kinds[i] = O_THREW;
      values[i] = optionError(keys[i], e);
      continue;
    }
    let kind;
    const type = typeof v;
    if (v === undefined || v === null) kind = O_MISSING;
    else if (type === "boolean") {
      kind = O_BOOL;
      numbers[i] = v ? 1 : 0;
    } else if (type === "number") {
      kind = O_NUMBER;
      numbers[i] = v;
    } else if (type === "string") kind = O_TEXT;
    else if (type === "function") kind = O_FUNCTION;
    else if (Array.isArray(v)) kind = O_ARRAY;
    else if (type === "object" && arrayLike(v)) {
      // (A typed array, or another array-like: as an array, what the core reads.)
      try {
        v = arrayOf(v);
        kind = O_ARRAY;
      } catch (e) {
        kind = O_THREW;
        v = optionError(keys[i], e);
      }
    } else if (type === "object") kind = O_OBJECT;
    else if (type === "bigint") kind = O_BIGINT;
    else if (type === "symbol") kind = O_SYMBOL;
    else kind = O_OTHER;
    kinds[i] = kind;
    values[i] = v;
  }
  // (Any other kind of value is refused by the core.)
  if (kinds[SIGNAL] === O_OBJECT) {
    const e = notASignal(values[SIGNAL]);
    if (e !== undefined) {
      kinds[SIGNAL] = O_THREW;
      values[SIGNAL] = e;
    }
  }
  return values;
}

/** The INVALID_CONFIG error of object `signal` if it is not an AbortSignal, else undefined.
 * Duck-typed (what `callSummarizer` uses of it): browsers, Node, Deno and workerd each have an
 * AbortSignal class of their own. */
function notASignal(signal) {
  try {
    if (typeof signal.aborted === "boolean" && typeof signal.addEventListener === "function" &&
      typeof signal.removeEventListener === "function") return undefined;
  } catch (e) {
    return optionError("signal", e);
  }
  return new ReduceError("INVALID_CONFIG", "signal must be an AbortSignal (such as an AbortController's signal), " +
    "got an object without a boolean aborted and addEventListener and removeEventListener methods", undefined, "signal");
}

/** Array-like `v` as an array: a typed array's values (no more than a call can have
 * messages), or another's own index keys, in a sparse array of its length: a `length` of
 * 2^32 - 1 makes no slots (copied whole, it took all the memory there is). */
function arrayOf(v) {
  if (ArrayBuffer.isView(v)) return Array.from(v.length > MAX_MESSAGES ? v.subarray(0, MAX_MESSAGES) : v);
  const out = [];
  out.length = v.length;
  for (const key of Object.keys(v)) {
    const k = Number(key);
    if (Number.isInteger(k) && k >= 0 && k < out.length && String(k) === key) out[k] = v[key];
  }
  return out;
}

/** Whether object `v` is a typed array, or has a whole `length` an array could have (and
 * no `length` getter that throws). */
function arrayLike(v) {
  if (ArrayBuffer.isView(v)) return !(v instanceof DataView);
  try {
    const n = v.length;
    return Number.isInteger(n) && n >= 0 && n < 2 ** 32;
  } catch {
    return false;
  }
}

export function optionEntries(config, key, value) {
  try {
    return Object.entries(value);
  } catch (e) {
    throw optionError(key, e);
  }
}
