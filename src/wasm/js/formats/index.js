// @eager: every call runs this module, so it is compiled at import (see build.rs).
// The formats by name (`READERS`, in the order auto-detection prefers) and by the core's
// numbers (`FORMAT_NAMES`), auto-detection, and a message's content field in each format.

import { ReduceError, bad, reason } from "../common.js";
import { looksAnthropic, readAnthropic } from "./anthropic.js";
import { looksGemini, readGemini } from "./gemini.js";
import { langchainShape, looksLangChain, readLangChain } from "./langchain.js";
import { looksOpenAI, readOpenAI, sameOpenAI } from "./openai.js";
import { looksResponses, readResponses, stampResponses } from "./responses.js";
import { sameWith } from "./stamps.js";
import { looksVercelUI, readVercelUI } from "./vercel-ui.js";
import { looksVercel, readVercel } from "./vercel.js";

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
// `same`, else its `stamp` compared by `sameWith`. (Defined above the loop that calls it:
// build.rs writes this module's functions as constants, which are not hoisted.)
function sameByStamp(stamp) {
  return (m, s, k) => stamp(m, s, k, sameWith);
}

for (const name of FORMATS) READERS[name].same ??= sameByStamp(READERS[name].stamp);

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
