// What a reduction hands back: its result (`buildResult`, with the orphan results a kept
// message loses), `analyze`'s analysis, and events for `onEvent`.
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).

import { CALL } from "./common.js";
import { linkId } from "./formats/content.js";
import { contentOf, withContent } from "./formats/index.js";

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
}

/**
 * Where in `r.linkData` the results are whose call is not before them (orphans, SPEC §9.4),
 * as the core finds them: a result whose key no call link before it has.
 */
export function orphanResults(r) {
  const data = r.linkData, called = new Set(), out = new Set();
  for (let at = 0; at < r.linkLength; at += 2) {
    if (data[at + 1] === CALL) called.add(data[at]);
    else if (!called.has(data[at])) out.add(at);
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

/**
 * Message i as a reduction outputs it: when it carries results whose call is not before it
 * beside other content (an Anthropic user message with a stray `tool_result` block and
 * text), a shallow copy in its format without those result parts; else itself.
 */
export function withoutOrphans(reading, i) {
  const orphans = reading.orphans ??= orphanResults(reading);
  // How many orphan results of each id the message has.
  const ids = new Map();
  for (let at = reading.linkStart[i], end = reading.linkStart[i + 1]; at < end; at += 2) {
    if (orphans.has(at)) {
      const id = reading.ids[reading.linkData[at]];
      ids.set(id, (ids.get(id) ?? 0) + 1);
    }
  }
  const m = reading.items[i], format = reading.format, content = contentOf(format, m);
  // (Results are parts of an array: a message of one result alone goes whole.)
  if (ids.size === 0 || !Array.isArray(content)) return m;
  // As many parts of each id, the last ones: results matched by order and name (Gemini's
  // without ids) answer the calls first, and those left over are the orphans.
  const keep = content.slice();
  for (let k = keep.length - 1; k >= 0; k--) {
    const id = resultId(keep[k]), left = ids.get(id);
    if (left > 0) {
      ids.set(id, left - 1);
      keep.splice(k, 1);
    }
  }
  return withContent(format, m, keep);
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
