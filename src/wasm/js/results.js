// @eager: every call runs this module, so it is compiled at import (see build.rs).
// What a reduction hands back: its result (`buildResult`, with the orphan results a kept
// message loses), `analyze`'s analysis, and events for `onEvent`.

import { CALL, CLEANED, NEW } from "./contract.js";
import { linkId } from "./formats/content.js";
import { contentOf, withFields } from "./formats/index.js";
import { langchainCalls, langchainShape } from "./formats/langchain.js";

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
 * groups, rounds and shouldReduce (1 or 0). `tokenizer`: the estimator's profile, or
 * undefined in length mode (then not a field).
 */
export function buildAnalysis(format, tokenizer, roleNames, protectionNames, roles, tokens, groups, rounds, protections, marks, totals) {
  const n = roles.length;
  const messages = new Array(n);
  for (let i = 0; i < n; i++) {
    const role = roleNames[roles[i]], p = protections[i];
    const summary = (marks[i] & 1) !== 0, realUser = (marks[i] & 2) !== 0;
    messages[i] = p === 0
      ? { index: i, role, tokens: tokens[i], group: groups[i], round: rounds[i], protected: false, summary, realUser }
      : { index: i, role, tokens: tokens[i], group: groups[i], round: rounds[i], protected: true, protectedBy: protectionNames[p], summary, realUser };
  }
  const analysis = {
    format, messages, totalTokens: totals[0], totalMessages: n, groups: totals[1], rounds: totals[2],
    shouldReduce: totals[3] === 1,
  };
  if (tokenizer !== undefined) analysis.tokenizer = tokenizer;
  return analysis;
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
  // (The steps that start from the input; a later one, the current turn's note after a
  // truncation, starts from what that left, every message of it counted.)
  for (const e of events) if (e.tokensBefore === known) lazy(e, "tokensBefore", e.tokensBefore);
  // (The orphans' step ends on the whole input without them: every orphan was counted.)
  for (const e of events) if (e.type === "orphans") lazy(e, "tokensAfter", e.tokensAfter);
}

/** The orphans the core handed `reading` (`setOrphans`): it decides which they are. */
export function handedOrphans(reading) {
  if (reading.orphans === undefined) throw new Error("chat-history-reducer: a bug: orphans asked for before the core handed them");
  return reading.orphans;
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
  const orphans = handedOrphans(reading);
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
