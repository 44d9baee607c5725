// What `ChatHistory` (src/wasm/history.rs) does with JavaScript objects: the config of one
// prepare(), the check of the messages it takes, where the model's reply starts, and the
// parts of its state that are about object identity (which working message or offloaded
// original is one of `original`'s). What it decides is the core's (src/history/).

import { ReduceError, describe, own, reason } from "./common.js";
import { FORMAT_NAMES, MAX_COUNT, STATE_KIND, STATE_VERSION } from "./contract.js";
import { isUiTool } from "./formats/content.js";
import { ALL_FORMATS, FORMATS, READERS, fitMask, formatNames } from "./formats/index.js";
import { langchainShape, looksLangChain } from "./formats/langchain.js";
import { RESPONSES_TYPES } from "./formats/responses.js";
import { offloadId } from "./offload.js";
import { AT_MOST, messageList, readOne } from "./read.js";
import { Reading } from "./reading.js";

/**
 * The config of one `ChatHistory.prepare()`: an object whose prototype is the app's `config`
 * (its options, getters and all, are read as ever) with the exact `tokenCounts` (`counts`:
 * one per message, NaN for none, as null; empty for none at all) and the `calibration` the
 * history learned, where given, and a summarizer that counts each call it passes on in
 * `calls[0]` whatever comes of it (`stats().summarizerCalls`); and the `signal` of
 * `prepare`'s `options`, if it has one, instead of the config's.
 */
export function historyConfig(config, counts, calibration, calls, options) {
  calls[0] = 0;
  const own = {};
  let signal;
  try {
    signal = options !== null && typeof options === "object" ? options.signal : undefined;
  } catch {
    // (Not a signal: none.)
  }
  if (signal !== undefined) own.signal = { value: signal };
  if (counts.length > 0) own.tokenCounts = { value: orNull(counts) };
  if (calibration !== undefined) own.calibration = { value: calibration };
  let summarizer;
  try {
    summarizer = config.summarizer;
  } catch {
    // (The reduction reads it again, and reports what it throws.)
  }
  if (typeof summarizer === "function") {
    own.summarizer = { value: (request) => { calls[0] += 1; return summarizer(request); } };
  }
  return Object.create(config, own);
}

/** The counts of a history (NaN for none) as JSON and `tokenCounts` hold them (null). */
function orNull(counts) {
  const out = new Array(counts.length);
  for (let k = 0; k < counts.length; k++) out[k] = Number.isNaN(counts[k]) ? null : counts[k];
  return out;
}

/**
 * The offloaded originals of a state `version` (1 or 2) whose messages ever pushed are
 * `original`, as `fromJSON` takes them in: a new object with a copy of each id's array, an
 * index into `original` as that message, so that what a caller does with the state after
 * never changes the history's own. `INVALID_CONFIG` (field `state`) for what a history never
 * writes: an `offloaded` that is not an object of arrays, an index that is not one of
 * `original`'s, an original that is not an object (`checkOffloaded` reads the others as
 * messages), or getters that throw — `reload` would hand it to the model as a message.
 */
function offloadedCopy(offloaded, original, version) {
  const corrupt = (what) => new ReduceError("INVALID_CONFIG", `ChatHistory.fromJSON: state.offloaded${what}`, undefined, "state");
  if (offloaded === undefined || offloaded === null) return {};
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
    if (typeof offloaded !== "object" || Array.isArray(offloaded)) throw corrupt(` must be an object of offload ids, got ${describe(offloaded)}`);
    for (const [id, originals] of Object.entries(offloaded)) {
      const at = `[${JSON.stringify(id)}]`;
      if (!Array.isArray(originals)) throw corrupt(`${at} must be an array of messages, got ${describe(originals)}`);
      // A number (version 2) is the message at that index of `original`.
      const value = Array.from(originals, (m, k) => {
        if (typeof m === "number") {
          if (Number.isInteger(m) && m >= 0 && m < original.length) return original[m];
          throw corrupt(`${at}[${k}] is ${m}, not an index of state.original (${original.length} messages)`);
        }
        if (m === null || typeof m !== "object" || Array.isArray(m)) throw corrupt(`${at}[${k}] must be a message or an index of state.original, got ${describe(m)}`);
        return version === 1 ? same(m) : m;
      });
      // (`defineProperty`: an id "__proto__" is an id like any other.)
      Object.defineProperty(copy, id, { value, enumerable: true, writable: true, configurable: true });
    }
  } catch (e) {
    if (e instanceof ReduceError) throw e;
    throw corrupt(` could not be read: ${reason(e)}`);
  }
  return copy;
}

/**
 * `fromJSON`'s check of the offloaded originals that are not messages of `original` (those
 * are checked as the history's): each a message of the history's `formats` (as
 * `checkMessages` takes them), else `INVALID_CONFIG` (field `state`) — `reload` would hand
 * the model what no reduction wrote.
 */
export function checkOffloaded(offloaded, original, formats) {
  const known = new Set(original);
  for (const [id, originals] of Object.entries(offloaded)) {
    const others = originals.filter((m) => !known.has(m));
    if (others.length === 0) continue;
    try {
      checkMessages(others, 0, `ChatHistory.fromJSON: state.offloaded[${JSON.stringify(id)}]`, formats, false);
    } catch (e) {
      if (!(e instanceof ReduceError)) throw e;
      throw new ReduceError("INVALID_CONFIG", e.message, undefined, "state");
    }
  }
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

/** Deletes from `offloaded` every id whose originals hold one of `gone`: messages an edit
 * removed, which `reload` must not hand the model again. */
export function pruneOffloaded(offloaded, gone) {
  if (gone.length === 0) return;
  const removed = new Set(gone);
  for (const [id, originals] of Object.entries(offloaded)) {
    if (originals.some((m) => removed.has(m))) delete offloaded[id];
  }
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
 * its own, where it would be in the history; the error's text names, when `pushed`, the
 * argument too) for one that is not a message of any format or that every such reader refuses,
 * and `INVALID_MESSAGES` for one of another format than those before it, as a reduction of
 * them all would (`detect`): a message pushed by mistake is refused at once instead of
 * failing every later `prepare()`. Only the new messages are looked at. Under a named
 * `config.format`, `formats` is its code with the flag `NAMED`, and that format's reader is
 * the whole check (it takes shapes auto-detection does not); `formats` is returned as it is.
 */
export function checkMessages(values, before, by, formats, pushed) {
  // A named format (config.format): its code under the NAMED flag; its reader is the check.
  const named = formats & NAMED ? own(READERS, FORMAT_NAMES[formats & 0xff]) : undefined;
  if (named === undefined) formats &= ALL_FORMATS;
  let scratch;
  for (let k = 0; k < values.length; k++) {
    const m = values[k], i = before + k;
    // (A caller of push looks among its arguments, not at the index the message would have.)
    const where = `${by}: ${pushed ? `argument ${k} (message ${i} of the history)` : `message ${i}`}`;
    const invalid = (what) => new ReduceError("INVALID_MESSAGE", `${where}: ${what}`, i);
    if (m === null || typeof m !== "object" || isArray(m, invalid)) {
      throw invalid(`expected a message object, got ${describe(m)}`);
    }
    scratch ??= new Reading(1, SCRATCH_OPTIONS, []);
    if (named !== undefined) {
      checkRead(named, scratch, i, m, where);
      continue;
    }
    const fits = fitMask(i, m, formats || ALL_FORMATS);
    if (fits === 0) {
      const other = formats === 0 ? 0 : fitMask(i, m, ALL_FORMATS);
      if (other === 0) {
        throw invalid("not a message of any known format (openai, openai-responses, anthropic, vercel, vercel-ui, gemini, langchain)");
      }
      throw new ReduceError("INVALID_MESSAGES",
        `${where} looks like ${formatNames(other).join(" or ")}, but the messages before it like ${formatNames(formats).join(" or ")}; a history holds messages of one format`);
    }
    // Read as each format it fits would read it: a message its reader refuses (content 42,
    // tool_calls "x") would make every later prepare() fail, with no way to take it out.
    let read = 0, error;
    for (let f = 0; f < FORMATS.length; f++) {
      if (!(fits & (1 << f))) continue;
      try {
        checkRead(READERS[FORMATS[f]], scratch, i, m, where);
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

/**
 * `ChatHistory.toJSON()`'s state from its parts (the core's `history::State`): plain JSON,
 * versioned (`ChatHistoryState` in the typings). The arrays are the history's own (copied
 * here), `counts` NaN for none, `covers` the originals each working message stands for
 * (flattened ranges, made by the core); `stats`: reductions, summarizer calls, tokens saved,
 * 1 when the last reduction was over budget, edits, undone; the last three a number or
 * undefined (null in JSON). With `options.original: "omit"` the state has no `original`
 * but its `originalDigest` (`digestOf`).
 */
export function writeState(messages, original, counts, covers, events, offloaded, stats, promptLength, pendingOutputTokens, calibration, options) {
  const omit = omitsOriginal(options);
  const at = firstIndices(original);
  return {
    kind: STATE_KIND,
    version: STATE_VERSION,
    messages: messages.slice(),
    // (Left out, the app keeps them: their digest, that fromJSON joins only those.)
    ...(omit ? { originalDigest: digestOf(original) } : { original: original.slice() }),
    origins: messageOrigins(messages, at),
    counts: orNull(counts),
    covers,
    events: events.slice(),
    offloaded: offloadedState(offloaded, at),
    stats: { reductions: stats[0], summarizerCalls: stats[1], tokensSaved: stats[2], overBudget: stats[3] === 1, edits: stats[4], undone: stats[5] },
    promptLength: promptLength ?? null,
    pendingOutputTokens: pendingOutputTokens ?? null,
    calibration: calibration ?? null,
  };
}

/** Whether `toJSON(options)` leaves `original` out: `{ original: "omit" }`; anything that is
 * not an object (`JSON.stringify` passes a key) keeps it. `INVALID_CONFIG` (field `original`)
 * for another value of `original` than "omit" or "include". */
function omitsOriginal(options) {
  const original = field(options, "original");
  if (original === undefined || original === "include") return false;
  if (original === "omit") return true;
  throw new ReduceError("INVALID_CONFIG", `ChatHistory.toJSON: original must be "omit" or "include", got ${describe(original)}`, undefined, "original");
}

/**
 * The digest of `original` that a state without it keeps: `{ count, hash }`, the number of
 * messages and an FNV-1a hash of their JSON (as `JSON.stringify(original)` writes it: a
 * field added, changed or reordered in any message changes it).
 */
export function digestOf(original) {
  return { count: original.length, hash: offloadId(original).slice(4) };
}

/** The `original` of a state without one (`{ original }` of `fromJSON`'s options), checked
 * against its digest: `INVALID_CONFIG` (field `state`) when there is none to join, or it is
 * not the messages the state was written with. */
function joinedOriginal(state, given) {
  const invalid = (what) => new ReduceError("INVALID_CONFIG", `ChatHistory.fromJSON: ${what}`, undefined, "state");
  const digest = field(state, "originalDigest");
  if (given === undefined) throw invalid("state.original must be an array (a state toJSON({ original: \"omit\" }) wrote needs fromJSON(state, config, { original }))");
  const original = stateList(given, "original");
  const count = field(digest, "count"), hash = field(digest, "hash");
  if (count !== original.length) throw invalid(`options.original has ${original.length} messages, the state was written with ${typeof count === "number" ? count : describe(count)}: pass the messages the history held when toJSON() ran`);
  if (hash !== digestOf(original).hash) throw invalid(`options.original is not what the state was written with (their JSON differs): pass the messages the history held when toJSON() ran, unchanged`);
  return original;
}

/** `o[key]` for an object `o`, else undefined; undefined too when reading it throws. */
function field(o, key) {
  try {
    return o !== null && typeof o === "object" ? o[key] : undefined;
  } catch {
    return undefined;
  }
}

/** A state's `[kind, version]`, read without throwing (the core says which it takes). */
export function stateHeader(state) {
  return [field(state, "kind"), field(state, "version")];
}

/**
 * What `ChatHistory.fromJSON` takes of a state of `version` (1 or 2, checked by the core),
 * all read before the history holds anything (a getter of the caller's may run):
 * `[messages, original, events, offloaded, counts]`, and into `numbers` reductions,
 * summarizerCalls, tokensSaved, overBudget (1 for true), promptLength,
 * `options.original` (`fromJSON`'s): the messages of a state written without them, joined
 * only if they match its digest (`joinedOriginal`).
 * pendingOutputTokens, calibration, whether there are counts (1), edits and undone (and
 * `covers` as the 6th part, an array or undefined), each NaN where the
 * state has no number (the core keeps those a history could have written). The working
 * messages that are messages of `original` are given back as those objects, and so are
 * the offloaded originals (`offloadedCopy`). `INVALID_CONFIG` (field `state`) for messages
 * that are not an array and an `offloaded` a history never writes (none is `{}`); `events`
 * is undefined where it is not what a history writes; `counts` (`savedCounts`) is NaN for a
 * value that is no number.
 */
export function readState(state, version, numbers, options) {
  const optional = (name) => {
    try {
      return stateList(field(state, name), name);
    } catch {
      return undefined;
    }
  };
  const stats = field(state, "stats"), offloaded = field(state, "offloaded");
  const messages = stateList(field(state, "messages"), "messages");
  const given = field(options, "original");
  const saved = field(state, "original");
  let original;
  if (saved === undefined) {
    original = joinedOriginal(state, given);
  } else {
    original = stateList(saved, "original");
    // (Given too: the app's own objects, when they are the state's.)
    if (given !== undefined) original = joinedOriginal({ originalDigest: digestOf(original) }, given);
  }
  // (`origins`: working messages that are messages of `original`, as one object again;
  // only where the two hold the same, so that a state edited since gives no message for
  // another.)
  const origins = optional("origins");
  if (origins !== undefined && origins.length === messages.length) {
    origins.forEach((k, i) => {
      if (Number.isInteger(k) && k >= 0 && k < original.length && sameJson(messages[i], original[k])) messages[i] = original[k];
    });
  }
  const counts = optional("counts");
  const values = [field(stats, "reductions"), field(stats, "summarizerCalls"), field(stats, "tokensSaved"),
    field(stats, "overBudget") === true ? 1 : 0, field(state, "promptLength"), field(state, "pendingOutputTokens"),
    field(state, "calibration"), counts === undefined ? 0 : 1, field(stats, "edits"), field(stats, "undone")];
  values.forEach((n, k) => { numbers[k] = number(n); });
  return [
    messages,
    original,
    optional("events"),
    offloadedCopy(offloaded, original, version),
    counts === undefined ? new Float64Array(0) : Float64Array.from(counts, number),
    // (The core checks them. A state written before them: a working message that is one of
    // `original`'s covers itself, one a reduction wrote all of `original`.)
    optional("covers") ?? legacyCovers(messages, original),
  ];
}

/** The covers of a state written before they were (see `readState`). */
function legacyCovers(messages, original) {
  const at = firstIndices(original);
  return messages.map((m) => (at.has(m) ? [at.get(m)] : original.length > 0 ? [0, original.length] : []));
}

/** A number as a state holds it; NaN for anything else. */
const number = (n) => (typeof n === "number" ? n : NaN);

/** The counts of `readState`'s parts. */
export function savedCounts(parts) {
  return parts[4];
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

/** `Array.isArray(m)`, which throws for a revoked proxy: then `invalid(what)`. */
function isArray(m, invalid) {
  try {
    return Array.isArray(m);
  } catch (e) {
    throw invalid(`could not be read: ${reason(e)}`);
  }
}

/** The flag of a named format's code in `checkMessages`' `formats` (see history.rs). */
const NAMED = 1 << 30;

const SCRATCH_OPTIONS = { format: "auto", tag: "conversation-summary", lengthMode: true, charsPerToken: 4, params: new Float64Array(0) };

/** Reads message m (message i of the history) with `reader` into a scratch reading, as a
 * reduction would: what it refuses is thrown as the error for message i, `where` saying
 * where. */
function checkRead(reader, scratch, i, m, where) {
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
    throw new ReduceError(e.code, `${where}${e.message.replace(/^message 0/, "")}`, i, e.field);
  }
}
