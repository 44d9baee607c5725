// The JavaScript half of the boundary: reads the few fields the core needs from the
// user's message objects in one loop, and builds results from the same objects.
// Shipped through wasm-bindgen's `module` attribute; no other file imports it.

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
const SYSTEM = 0, USER = 1, ASSISTANT = 2, TOOL = 3, OTHER = 4;
const REAL_USER = 1, SUMMARY = 2, ATTACH_NEXT = 4;
const CALL = 0, RESULT = 1;

function describe(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value).slice(0, 40)}`;
}

function bad(index, what) {
  return new ReduceError("INVALID_MESSAGE", `message ${index}: ${what}`, index);
}

function jsonText(value) {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  const text = JSON.stringify(value);
  return text === undefined ? "" : text;
}

/**
 * Collects, per message, what the core needs. One instance per call; `begin(i)` starts
 * message i, the `add*` calls fill it.
 */
class Reading {
  constructor(n, options) {
    this.format = "";
    this.roles = new Uint8Array(n);
    this.flags = new Uint8Array(n);
    this.exact = new Float64Array(n).fill(-1);
    this.images = new Uint32Array(n);
    this.lengthTokens = new Float64Array(n);
    this.pieceCounts = new Uint32Array(n);
    this.pieceLengths = [];
    this.texts = [];
    this.links = [];
    this.keys = new Map();
    this.lengthMode = options.lengthMode;
    this.charsPerToken = options.charsPerToken;
    this.collectTexts = false;
    this.index = 0;
    this.openTag = `<${options.tag}>`;
  }

  begin(i, role, flags) {
    this.index = i;
    this.roles[i] = role;
    this.flags[i] = flags;
  }

  text(value) {
    if (typeof value !== "string" || value.length === 0) return;
    if (this.lengthMode) {
      this.lengthTokens[this.index] += Math.ceil(value.length / this.charsPerToken);
    } else if (this.collectTexts) {
      this.texts.push(value);
      this.pieceLengths.push(value.length);
      this.pieceCounts[this.index] += 1;
    }
  }

  image() {
    this.images[this.index] += 1;
  }

  link(kind, id) {
    let key = this.keys.get(id);
    if (key === undefined) {
      key = this.keys.size;
      this.keys.set(id, key);
    }
    this.links.push(this.index, key, kind);
  }

  isSummaryText(text) {
    return typeof text === "string" && text.trimStart().startsWith(this.openTag);
  }

  /** The typed arrays the Rust side reads. */
  finish() {
    this.text = this.texts.join("");
    this.pieceLengths = Uint32Array.from(this.pieceLengths);
    this.links = Uint32Array.from(this.links);
    this.texts = null;
    this.keys = null;
    return this;
  }
}

// ---------------------------------------------------------------------------------------
// openai: Chat Completions messages.

const OPENAI_ROLES = {
  system: SYSTEM,
  developer: SYSTEM,
  user: USER,
  assistant: ASSISTANT,
  tool: TOOL,
  function: TOOL,
};

function openaiContent(r, i, content) {
  if (typeof content === "string") {
    r.text(content);
  } else if (Array.isArray(content)) {
    for (const part of content) {
      if (part === null || typeof part !== "object") {
        if (typeof part === "string") r.text(part);
        continue;
      }
      switch (part.type) {
        case "image_url":
        case "input_image":
        case "image":
        case "input_audio":
        case "file":
        case "input_file":
          r.image();
          break;
        case "refusal":
          r.text(part.refusal);
          break;
        default:
          r.text(part.text);
      }
    }
  } else if (content !== null && content !== undefined) {
    throw bad(i, `content must be a string, an array of parts or null, got ${describe(content)}`);
  }
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

function readOpenAI(r, i, m) {
  const role = OPENAI_ROLES[m.role];
  if (role === undefined) {
    throw bad(i, m.role === undefined
      ? "has no role; expected one of system, developer, user, assistant, tool"
      : `has an unknown role ${JSON.stringify(String(m.role))}`);
  }
  const content = m.content;
  let flags = 0;
  if (role !== TOOL && r.isSummaryText(firstText(content))) flags = SUMMARY;
  else if (role === USER) flags = REAL_USER;
  r.begin(i, role, flags);
  r.text(m.role);
  r.text(m.name);
  openaiContent(r, i, content);
  r.text(m.refusal);
  if (role === ASSISTANT) {
    const calls = m.tool_calls;
    if (calls !== undefined && calls !== null) {
      if (!Array.isArray(calls)) throw bad(i, `tool_calls must be an array, got ${describe(calls)}`);
      for (const call of calls) {
        if (call === null || typeof call !== "object" || typeof call.id !== "string") {
          throw bad(i, "every entry of tool_calls needs a string id");
        }
        r.link(CALL, call.id);
        r.text(call.id);
        const fn = call.function;
        if (fn && typeof fn === "object") {
          r.text(fn.name);
          r.text(jsonText(fn.arguments));
        }
      }
    }
    const legacy = m.function_call;
    if (legacy && typeof legacy === "object") {
      r.link(CALL, `function:${legacy.name}`);
      r.text(legacy.name);
      r.text(jsonText(legacy.arguments));
    }
  } else if (m.role === "tool") {
    if (typeof m.tool_call_id !== "string") {
      throw bad(i, "a tool message needs tool_call_id, the id of the call it answers");
    }
    r.link(RESULT, m.tool_call_id);
    r.text(m.tool_call_id);
  } else if (m.role === "function") {
    r.link(RESULT, `function:${m.name}`);
  }
}

function looksOpenAI(m) {
  return typeof m.role === "string" && m.role in OPENAI_ROLES && m.type === undefined && m.parts === undefined;
}

const READERS = {
  openai: { read: readOpenAI, looks: looksOpenAI },
};

/** The format of `messages`, by their shape: the first reader that accepts them all. */
function detect(messages) {
  const candidates = Object.keys(READERS);
  let possible = candidates;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m === null || typeof m !== "object") continue; // reported by the reader
    const next = possible.filter((name) => READERS[name].looks(m));
    if (next.length === 0) {
      const alone = candidates.filter((name) => READERS[name].looks(m));
      throw alone.length === 0
        ? bad(i, "is not a message of any known format (openai, openai-responses, anthropic, vercel, vercel-ui, gemini, langchain)")
        : new ReduceError("INVALID_MESSAGES",
            `messages mix formats: message ${i} looks like ${alone.join(" or ")}, earlier ones like ${possible.join(" or ")}`);
    }
    possible = next;
  }
  return possible[0];
}

/**
 * Reads `messages` for the core. `options`: `{format, tag, lengthMode, charsPerToken,
 * estimate, tokenCounts, countTokens}`.
 */
export function readMessages(messages, options) {
  if (!Array.isArray(messages)) {
    throw new ReduceError("INVALID_MESSAGES", `messages must be an array of messages, got ${describe(messages)}`);
  }
  const n = messages.length;
  const r = new Reading(n, options);
  const format = options.format === "auto" ? detect(messages) : options.format;
  const reader = READERS[format];
  if (reader === undefined) {
    throw new ReduceError("INVALID_CONFIG", `format "${format}" is not supported yet`, undefined, "format");
  }
  r.format = format;
  const counts = Array.isArray(options.tokenCounts) ? options.tokenCounts : undefined;
  const countTokens = options.countTokens;
  for (let i = 0; i < n; i++) {
    const m = messages[i];
    if (m === null || typeof m !== "object") {
      throw bad(i, `expected a message object, got ${describe(m)}`);
    }
    let exact = -1;
    if (counts !== undefined) {
      const c = counts[i];
      if (typeof c === "number" && Number.isFinite(c) && c >= 0) exact = c;
    }
    if (exact < 0 && countTokens !== undefined) {
      const c = countTokens(m, i);
      if (typeof c !== "number" || !Number.isFinite(c) || c < 0) {
        throw new ReduceError("INVALID_CONFIG",
          `countTokens returned ${describe(c)} for message ${i}; it must return a finite number ≥ 0`,
          i, "countTokens");
      }
      exact = c;
    }
    r.exact[i] = exact;
    r.collectTexts = exact < 0 && options.estimate;
    try {
      reader.read(r, i, m);
    } catch (e) {
      if (e instanceof ReduceError) throw e;
      throw bad(i, `could not be read: ${e && e.message ? e.message : String(e)}`);
    }
  }
  return r.finish();
}

/** Reads one option, turning a throwing getter into INVALID_CONFIG. */
export function readOption(config, key) {
  let value;
  try {
    value = config[key];
  } catch (e) {
    throw new ReduceError("INVALID_CONFIG", `reading config.${key} threw: ${e && e.message}`, undefined, key);
  }
  return value;
}

/** The own enumerable entries of a plain object option, as `[key, value]` pairs. */
export function optionEntries(config, key, value) {
  try {
    return Object.entries(value);
  } catch (e) {
    throw new ReduceError("INVALID_CONFIG", `reading config.${key} threw: ${e && e.message}`, undefined, key);
  }
}

/**
 * The `ReduceResult` of SPEC §8. `output` holds input indices; the messages are the
 * input objects themselves.
 */
export function buildResult(messages, output, kept, dropped, summarized, meta, events) {
  const out = new Array(output.length);
  for (let k = 0; k < output.length; k++) out[k] = messages[output[k]];
  return {
    messages: out,
    reduced: meta.reduced,
    removedCount: meta.removedCount,
    kept: Array.from(kept),
    dropped: Array.from(dropped),
    summarized: Array.from(summarized),
    offloaded: {},
    tokensBefore: meta.tokensBefore,
    tokensAfter: meta.tokensAfter,
    overBudget: meta.overBudget,
    events,
  };
}
