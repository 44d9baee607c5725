// `ChatHistory`'s helpers (src/wasm/js/history.js) that need no wasm: the check of pushed
// messages (one format, each readable: SPEC §2, §10), `recordUsage`'s counts, the state of
// `toJSON`/`fromJSON` (SPEC §7), `reload(id)` and where the model's reply starts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ALL_FORMATS, FORMATS } from "../../src/wasm/js/formats/index.js";
import { checkMessages, readState, reloaded, replyOf, usageCounts, writeState } from "../../src/wasm/js/history.js";
import { reduceError } from "./helpers.mjs";

/** How history.rs passes "auto": every bit set. */
const AUTO = 0xffffffff;
const mask = (...names) => names.reduce((m, n) => m | (1 << FORMATS.indexOf(n)), 0);

test("checkMessages: the formats all the messages fit; those of a later push narrow them", () => {
  const first = checkMessages([{ role: "user", content: "x" }], 0, "new ChatHistory", AUTO);
  assert.equal(first, mask("openai", "anthropic", "vercel", "openai-responses"));
  const next = checkMessages([{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] }], 1, "ChatHistory.push", first);
  assert.equal(next, mask("anthropic"));
  assert.ok((ALL_FORMATS & next) === next);
});

test("checkMessages: another format is INVALID_MESSAGES; a non-message or unreadable one INVALID_MESSAGE at its index in the history", () => {
  const openai = mask("openai");
  let e = reduceError(() => checkMessages([{ type: "human", content: "y" }], 3, "ChatHistory.push", openai));
  assert.equal(e.code, "INVALID_MESSAGES");
  assert.match(e.message, /message 3 looks like langchain/);

  e = reduceError(() => checkMessages([5], 2, "ChatHistory.push", AUTO));
  assert.equal(e.code, "INVALID_MESSAGE");
  assert.equal(e.index, 2);

  e = reduceError(() => checkMessages([{ role: "user", content: "ok" }, { role: "assistant", content: null, tool_calls: "x" }], 4, "ChatHistory.push", AUTO));
  assert.equal(e.code, "INVALID_MESSAGE");
  assert.equal(e.index, 5);
  assert.match(e.message, /^ChatHistory\.push: message 5: tool_calls must be an array/);
});

test("usageCounts: [inputTokens, outputTokens], undefined where left out; anything else INVALID_CONFIG field usage", () => {
  assert.deepEqual(usageCounts({ inputTokens: 5 }), [5, undefined]);
  assert.deepEqual(usageCounts({ inputTokens: 0, outputTokens: null }), [0, undefined]);
  for (const bad of [null, 3, { inputTokens: -1 }, { outputTokens: "7" }, { inputTokens: 2 ** 60 }]) {
    const e = reduceError(() => usageCounts(bad));
    assert.equal(e.code, "INVALID_CONFIG");
    assert.equal(e.field, "usage");
  }
});

test("writeState / readState: a versioned plain-JSON state that reads back, shared messages as one object", () => {
  const a = { role: "user", content: "a" }, b = { role: "assistant", content: "b" }, s = { role: "user", content: "s" };
  const state = writeState([s, b], [a, b], [1, 2], [], {}, [1, 0, 5, 0], 2, undefined, 1.1);
  assert.equal(state.kind, "chat-history-reducer/ChatHistory");
  assert.equal(state.version, 2);
  assert.deepEqual(state.origins, [-1, 1]);
  assert.deepEqual(state.stats, { reductions: 1, summarizerCalls: 0, tokensSaved: 5, overBudget: false });

  const [messages, original, counts, events, offloaded, reductions, summarizerCalls, tokensSaved, promptLength, pending, calibration, overBudget] =
    readState(JSON.parse(JSON.stringify(state)));
  assert.deepEqual(messages, [s, b]);
  assert.deepEqual(original, [a, b]);
  assert.equal(messages[1], original[1]); // one object again, as toJSON had it
  assert.deepEqual(counts, [1, 2]);
  assert.deepEqual(events, []);
  assert.deepEqual(offloaded, {});
  assert.deepEqual([reductions, summarizerCalls, tokensSaved, promptLength, pending, calibration, overBudget], [1, 0, 5, 2, undefined, 1.1, false]);
});

test("readState refuses a state toJSON did not write: INVALID_CONFIG field state", () => {
  for (const bad of [null, { kind: "x" }, { kind: "chat-history-reducer/ChatHistory", version: 9 }, { kind: "chat-history-reducer/ChatHistory", version: 2, messages: "no" }]) {
    const e = reduceError(() => readState(bad));
    assert.equal(e.code, "INVALID_CONFIG");
    assert.equal(e.field, "state");
  }
});

test("reloaded: a copy of the offloaded originals for an own string id, else undefined", () => {
  const a = { role: "user", content: "a" };
  const offloaded = { ctx_0123456789abcdef: [a] };
  const got = reloaded(offloaded, "ctx_0123456789abcdef");
  assert.deepEqual(got, [a]);
  assert.notEqual(got, offloaded.ctx_0123456789abcdef);
  assert.equal(got[0], a);
  assert.equal(reloaded(offloaded, "toString"), undefined);
  assert.equal(reloaded(offloaded, 5), undefined);
});

test("replyOf: the first message the model wrote; null when it holds tool results", () => {
  const answer = { role: "assistant", content: "b" };
  assert.equal(replyOf([{ role: "user", content: "x" }, answer]), answer);
  assert.equal(replyOf([{ role: "user", content: "x" }]), undefined);
  const reasoning = { type: "reasoning", summary: [] }, call = { type: "function_call", call_id: "c", name: "f", arguments: "{}" };
  assert.equal(replyOf([reasoning, call]), call);
  assert.equal(replyOf([{ role: "assistant", content: [{ type: "tool-result", toolCallId: "x", output: {} }] }]), null);
});
