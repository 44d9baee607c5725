// @eager: every call runs this module, so it is compiled at import (see build.rs).
// Readings kept between calls.
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

import { READERS } from "./formats/index.js";
import { STAMP_SHIFT, sameStamp, slot } from "./formats/stamps.js";

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
export const KEEP_MIN_MESSAGES = 32;

/** Whether reading `r` was made with these options (format, tag, the numbers its counts
 * depend on) and this `countTokens`. */
export function madeWith(r, options, countTokens) {
  const a = r.options;
  if (a.format !== options.format || a.tag !== options.tag || r.countTokens !== countTokens) return false;
  const x = a.params, y = options.params;
  if (x.length !== y.length) return false;
  for (let k = 0; k < x.length; k++) if (!Object.is(x[k], y[k])) return false;
  return true;
}

/** The kept reading for this call, and where in it the call's first message is. */
export function previousReading(items, options, countTokens) {
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
export function staleKeys(r) {
  return r.ids.length > r.linkLength + 4096;
}

/** Keeps `reading` for the next calls, in place of the one it took over from. */
export function keepReading(reading) {
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
export function align(items, prev, start, same, from, counts) {
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
export function allUnchanged(items, prev, given) {
  return prev.n === items.length && sameRun(items, 0, prev, 0, READERS[prev.format].same, undefined, given) === items.length;
}
