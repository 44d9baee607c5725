// `ChatHistory`'s helpers (src/wasm/js/history.js) that need no wasm: the check of pushed
// messages (one format, each readable: SPEC §2, §10), `recordUsage`'s counts, the state of
// `toJSON`/`fromJSON` (SPEC §7) that is about objects, `reload(id)`, where the model's reply
// starts, and the config of one prepare().
import { test } from "node:test";
import assert from "node:assert/strict";
import { ALL_FORMATS, FORMATS } from "../../src/wasm/js/formats/index.js";
import { checkMessages, checkOffloaded, digestOf, historyConfig, pruneOffloaded, readState, reloaded, replyOf, savedCounts, stateHeader, usageCounts, writeState } from "../../src/wasm/js/history.js";
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

  e = reduceError(() => checkMessages([{ role: "user", content: "ok" }, { role: "assistant", content: null, tool_calls: "x" }], 4, "new ChatHistory", AUTO, false));
  assert.equal(e.code, "INVALID_MESSAGE");
  assert.equal(e.index, 5);
  assert.match(e.message, /^new ChatHistory: message 5: tool_calls must be an array/);
});

test("checkMessages: a pushed message's error names the argument of push and the index it would have in the history", () => {
  // Only the index in the history was named: a caller of push(a, b) was told "message 6".
  const ok = { role: "user", content: "ok" };
  for (const [bad, what] of [[5, /expected a message object, got the number 5/], [{ role: "wizard" }, /not a message of any known format/],
    [{ role: "assistant", content: null, tool_calls: "x" }, /tool_calls must be an array/]]) {
    const e = reduceError(() => checkMessages([ok, bad], 4, "ChatHistory.push", AUTO, true));
    assert.equal(e.code, "INVALID_MESSAGE");
    assert.equal(e.index, 5);
    assert.match(e.message, /^ChatHistory\.push: argument 1 \(message 5 of the history\): /);
    assert.match(e.message, what);
  }
  const e = reduceError(() => checkMessages([ok, { type: "human", content: "y" }], 3, "ChatHistory.push", mask("openai"), true));
  assert.equal(e.code, "INVALID_MESSAGES");
  assert.match(e.message, /^ChatHistory\.push: argument 1 \(message 4 of the history\) looks like langchain/);
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
  const state = writeState([s, b], [a, b], new Float64Array([1, NaN]), [[0, 1], [1]], [], {}, [1, 0, 5, 0, 2, 1], 2, undefined, 1.1);
  assert.equal(state.kind, "chat-history-reducer/ChatHistory");
  assert.equal(state.version, 2);
  assert.deepEqual(state.origins, [-1, 1]);
  assert.deepEqual(state.counts, [1, null]);
  assert.deepEqual(state.covers, [[0, 1], [1]]);
  assert.deepEqual(state.stats, { reductions: 1, summarizerCalls: 0, tokensSaved: 5, overBudget: false, edits: 2, undone: 1 });
  assert.deepEqual([state.promptLength, state.pendingOutputTokens, state.calibration], [2, null, 1.1]);

  const written = JSON.parse(JSON.stringify(state));
  assert.deepEqual(stateHeader(written), ["chat-history-reducer/ChatHistory", 2]);
  const numbers = new Float64Array(10);
  const parts = readState(written, 2, numbers);
  const [messages, original, events, offloaded] = parts;
  assert.deepEqual(messages, [s, b]);
  assert.deepEqual(original, [a, b]);
  assert.equal(messages[1], original[1]); // one object again, as toJSON had it
  assert.deepEqual([...savedCounts(parts)], [1, NaN]);
  assert.deepEqual(events, []);
  assert.deepEqual(offloaded, {});
  assert.deepEqual(parts[5], [[0, 1], [1]]);
  // reductions, summarizerCalls, tokensSaved, overBudget, promptLength, pending, calibration,
  // counts given, edits, undone
  assert.deepEqual([...numbers], [1, 0, 5, 0, 2, NaN, 1.1, 1, 2, 1]);
});

test("readState: messages that are not an array are INVALID_CONFIG field state; other parts that cannot be read are left out", () => {
  for (const bad of [{ messages: "no", original: [] }, { messages: [], original: null }]) {
    const e = reduceError(() => readState(bad, 2, new Float64Array(8)));
    assert.equal(e.code, "INVALID_CONFIG");
    assert.equal(e.field, "state");
  }
  const odd = { messages: [], original: [], counts: ["7", 3], get events() { throw new Error("no"); }, stats: 5, calibration: "2" };
  const numbers = new Float64Array(10);
  const parts = readState(odd, 2, numbers);
  assert.deepEqual([...savedCounts(parts)], [NaN, 3]);
  assert.equal(parts[2], undefined);
  assert.deepEqual(parts[3], {}, "no offloaded originals");
  assert.deepEqual([...numbers], [NaN, NaN, NaN, 0, NaN, NaN, NaN, 1, NaN, NaN]);
  assert.deepEqual(parts[5], [], "no covers: made from the (no) messages");
  // A state written before covers: an original covers itself, a message a reduction wrote
  // all of original.
  const a = { role: "user", content: "a" }, w = { role: "user", content: "w" };
  assert.deepEqual(readState({ messages: [w, a], original: [a, a], origins: [-1, 0] }, 2, new Float64Array(10))[5], [[0, 2], [0]]);
  assert.deepEqual(stateHeader(null), [undefined, undefined]);
  assert.deepEqual(stateHeader({ get kind() { throw new Error("no"); }, version: 1 }), [undefined, 1]);
});

test("readState: an offloaded a history never writes is INVALID_CONFIG field state", () => {
  // Out-of-range indices vanished and non-messages were taken: reload handed them to the model.
  const original = [{ role: "user", content: "a" }, { role: "assistant", content: "b" }];
  const state = (offloaded) => ({ messages: [], original, offloaded });
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  for (const [offloaded, what] of [
    [5, /must be an object of offload ids, got the number 5/],
    [[[0]], /must be an object of offload ids/],
    [{ ctx_a: 5 }, /\["ctx_a"\] must be an array of messages, got the number 5/],
    [{ ctx_a: [0, 2] }, /\["ctx_a"\]\[1\] is 2, not an index of state\.original \(2 messages\)/],
    [{ ctx_a: [-1] }, /is -1, not an index/],
    [{ ctx_a: [0.5] }, /is 0\.5, not an index/],
    [{ ctx_a: ["hello"] }, /\["ctx_a"\]\[0\] must be a message or an index of state\.original, got/],
    [{ ctx_a: [null] }, /must be a message/],
    [{ ctx_a: [[original[0]]] }, /must be a message/],
    [{ get ctx_a() { throw new Error("boom"); } }, /could not be read: .*boom/],
    [revoked.proxy, /could not be read/],
  ]) {
    const e = reduceError(() => readState(state(offloaded), 2, new Float64Array(8)));
    assert.equal(e.code, "INVALID_CONFIG", String(what));
    assert.equal(e.field, "state");
    assert.match(e.message, /^ChatHistory\.fromJSON: state\.offloaded/);
    assert.match(e.message, what);
  }
  // What a history writes: indices of original, and messages earlier reductions wrote.
  const note = { role: "assistant", content: "[compressed tool run: …]" };
  const [, , , offloaded] = readState(state({ ctx_a: [1, note], ["__proto__"]: [0] }), 2, new Float64Array(8));
  assert.equal(offloaded.ctx_a[0], original[1]);
  assert.equal(offloaded.ctx_a[1], note);
  assert.ok(Object.hasOwn(offloaded, "__proto__"), "an id like any other");
  assert.equal(Object.getOwnPropertyDescriptor(offloaded, "__proto__").value[0], original[0]);
  assert.deepEqual(readState(state(undefined), 2, new Float64Array(8))[3], {});
});

test("checkOffloaded: offloaded originals that are not messages of the history's formats are INVALID_CONFIG field state", () => {
  const original = [{ role: "user", content: "a" }];
  const openai = mask("openai");
  checkOffloaded({ ctx_a: [original[0], { role: "assistant", content: "note" }] }, original, openai);
  for (const [offloaded, what] of [
    [{ ctx_a: [{ foo: 1 }] }, /^ChatHistory\.fromJSON: state\.offloaded\["ctx_a"\]: message 0: not a message of any known format/],
    [{ ctx_b: [{ role: "user", parts: [{ text: "g" }] }] }, /state\.offloaded\["ctx_b"\]: message 0 looks like gemini/],
    [{ ctx_c: [{ role: "user", content: 42 }] }, /state\.offloaded\["ctx_c"\]: message 0/],
  ]) {
    const e = reduceError(() => checkOffloaded(offloaded, original, openai));
    assert.equal(e.code, "INVALID_CONFIG");
    assert.equal(e.field, "state");
    assert.match(e.message, what);
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

test("historyConfig: the app's config with the history's counts and calibration, and a summarizer that counts its calls", async () => {
  const config = { maxTokens: 100, summarizer: async () => "s" };
  const calls = new Uint32Array(1);
  const view = historyConfig(config, new Float64Array([3, NaN]), 1.2, calls, { signal: "mine" });
  assert.equal(view.maxTokens, 100);
  assert.deepEqual(view.tokenCounts, [3, null]);
  assert.equal(view.calibration, 1.2);
  assert.equal(view.signal, "mine");
  await view.summarizer({});
  await view.summarizer({});
  assert.equal(calls[0], 2);
  // No counts recorded: no tokenCounts.
  assert.equal("tokenCounts" in historyConfig(config, new Float64Array(0), undefined, calls, undefined), false);
  assert.equal(calls[0], 0);
});

test("pruneOffloaded: an offload id whose originals hold a removed message is forgotten", () => {
  const a = { role: "user", content: "a" }, b = { role: "tool", content: "b" };
  const offloaded = { keep: [a], gone: [a, b], other: [{ role: "tool", content: "x" }] };
  pruneOffloaded(offloaded, [b]);
  assert.deepEqual(Object.keys(offloaded), ["keep", "other"]);
  pruneOffloaded(offloaded, []);
  assert.deepEqual(Object.keys(offloaded), ["keep", "other"]);
});

test("digestOf: the count and a hash of the messages' JSON, which any change of a message changes", () => {
  const m = [{ role: "user", content: "a" }, { role: "assistant", content: "b" }];
  const d = digestOf(m);
  assert.equal(d.count, 2);
  assert.match(d.hash, /^[0-9a-f]{16}$/);
  assert.deepEqual(digestOf(JSON.parse(JSON.stringify(m))), d);
  for (const other of [[m[0]], [m[0], { content: "b", role: "assistant" }], [m[0], { role: "assistant", content: "c" }]]) {
    assert.notEqual(digestOf(other).hash, d.hash, JSON.stringify(other));
  }
});
