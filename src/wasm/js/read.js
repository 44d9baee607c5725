// @eager: every call runs this module, so it is compiled at import (see build.rs).
// Reading a call's messages (`readMessages`): each message once, by its format's reader,
// taking over what an earlier call read of the same objects (reuse.js); the counts the
// caller gives, and the checks of the message list.

import { MAX_MESSAGES, ReduceError, bad, describe, own, reason } from "./common.js";
import { FORMAT_NAMES, MAX_COUNT } from "./contract.js";
import { MISFIT, STAMPED } from "./formats/content.js";
import { READERS, checkDeferred, detect, fitMask, misfit } from "./formats/index.js";
import { slot, stampWith } from "./formats/stamps.js";
import { Reading } from "./reading.js";
import { completeReading } from "./results.js";
import {
  KEEP_MIN_MESSAGES, align, allUnchanged, keepReading, madeWith, previousReading, staleKeys,
} from "./reuse.js";

export const AT_MOST = `at most ${MAX_COUNT} (Number.MAX_SAFE_INTEGER)`;

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
 * Reads `messages` for the core: in format `formatCode` (of `FORMAT_NAMES`; else "auto"),
 * recognising summaries by `tag`, in length mode (`charsPerToken`) or not. `params`: the
 * numbers a count depends on besides the message (a reading is taken over only under the
 * same ones). `tokenCounts`, `countTokens`: the caller's, or undefined. `keep`: whether
 * this reading may serve the next calls (the input of a call, not a message this library
 * wrote). `trusted` (a `ChatHistory`'s): a reading whose first `trustedLength` messages are
 * this call's first ones, unchanged by the history's contract (it pushed them and they are
 * not to be changed in place: SPEC §7, docs/api.md), so they are taken over without their
 * stamps being looked at; undefined for none.
 */
export function readMessages(messages, formatCode, tag, lengthMode, charsPerToken, params, countTokens, tokenCounts, keep, trusted, trustedLength) {
  const options = {
    format: FORMAT_NAMES[formatCode] ?? "auto", tag, lengthMode, charsPerToken,
    params: Float64Array.from(params), // (a view of wasm memory)
  };
  const items = messageList(messages);
  const n = items.length;
  if (typeof countTokens !== "function") countTokens = undefined;
  const given = Array.isArray(tokenCounts) ? givenCounts(tokenCounts, n) : undefined;
  keep = keep === true && (n >= KEEP_MIN_MESSAGES || countTokens !== undefined);
  let trust = trusted instanceof Reading && keep && trustedLength > 0 && trustedLength <= n &&
    trustedLength <= trusted.n && madeWith(trusted, options, countTokens) ? trustedLength : 0;
  let prev = trust > 0 ? { reading: trusted, at: 0 } : keep ? previousReading(items, options, countTokens) : undefined;
  if (prev !== undefined && staleKeys(prev.reading)) {
    prev = undefined;
    trust = 0;
  }
  // Messages a reduction left unestimated are estimated now, once: the calls after this one
  // take every count over.
  if (prev !== undefined && prev.reading.pending) completeReading(prev.reading);

  // The same messages as last time, all unchanged: the same reading, for this call.
  if (prev !== undefined && prev.at === 0 &&
    (trust === n && trust === prev.reading.n && allCounted(prev.reading, given, n) || allUnchanged(items, prev.reading, given))) {
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
  if (trust > 0) {
    // (A message without a count is read afresh, as `align` would.)
    const raw = prev.reading.raw;
    for (let i = 0; i < trust; i++) from[i] = raw[i] >= 0 || (given !== undefined && given[i] >= 0) ? i : -1;
  } else if (prev !== undefined) {
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

/** Whether each of the first n messages of reading `r` has a count (its own, or `given`). */
function allCounted(r, given, n) {
  const raw = r.raw;
  for (let i = 0; i < n; i++) if (raw[i] < 0 && !(given !== undefined && given[i] >= 0)) return false;
  return true;
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
  if (typeof c !== "number" || !(c >= 0 && c <= MAX_COUNT)) throw countError(c, i);
  r.raw[i] = c;
  return true;
}

/** What is wrong with `c`, which `countTokens` returned for message i. */
function countError(c, i) {
  if (handledPromise(c)) {
    return new ReduceError("INVALID_CONFIG",
      `countTokens returned a Promise for message ${i}; it must be synchronous: count the messages first and pass the counts as tokenCounts, or use a synchronous tokenizer`,
      i, "countTokens");
  }
  return new ReduceError("INVALID_CONFIG",
    `countTokens returned ${describe(c)} for message ${i}; it must return a finite number ≥ 0, ${AT_MOST}`,
    i, "countTokens");
}

/** Whether `value` is a promise (a thenable); its rejection, if one comes, is then handled
 * here: the caller awaits it nowhere, and an unhandled one ends a Node process. */
function handledPromise(value) {
  try {
    if (value === null || (typeof value !== "object" && typeof value !== "function") || typeof value.then !== "function") return false;
    value.then(undefined, () => {});
    return true;
  } catch {
    return false;
  }
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
