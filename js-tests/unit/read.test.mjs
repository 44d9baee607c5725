// `readMessages` (src/wasm/js/read.js) beyond one format's reading: auto-detection, the
// errors of SPEC §10 for bad messages (INVALID_MESSAGES, INVALID_MESSAGE with `index`), the
// counts the caller gives (`tokenCounts`, `countTokens`: INVALID_CONFIG with `field`), and
// length mode's estimates.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ReduceError } from "../../src/wasm/js/common.js";
import { FORMAT_NAMES } from "../../src/wasm/js/contract.js";
import { readMessages, remember } from "../../src/wasm/js/read.js";
import { TAG, linksOf, list, read, reduceError } from "./helpers.mjs";

const user = (content) => ({ role: "user", content });

test("auto-detection picks the one format all messages fit, in the order it prefers", () => {
  assert.equal(read([user("hi")]).format, "openai"); // fits openai, anthropic, vercel, responses: openai first
  assert.equal(read([user("hi"), { role: "assistant", content: [{ type: "tool-call", toolCallId: "x", toolName: "f", input: {} }] }]).format, "vercel");
  assert.equal(read([user("hi"), { role: "assistant", content: [{ type: "tool_use", id: "x", name: "f", input: {} }] }]).format, "anthropic");
  assert.equal(read([{ role: "user", parts: [{ text: "hi" }] }]).format, "gemini");
  // A named format is read as named, even where auto would pick another.
  assert.equal(read([user("hi")], "anthropic").format, "anthropic");
});

test("an empty array reads as zero messages", () => {
  const r = read([]);
  assert.equal(r.n, 0);
  assert.equal(r.links.length, 0);
});

test("a mixed-format array is INVALID_MESSAGES, naming both sides", () => {
  for (const second of [{ type: "human", content: "x" }, { role: "model", parts: [{ text: "x" }] }]) {
    const e = reduceError(() => read([user("hi"), second]));
    assert.ok(e instanceof ReduceError);
    assert.equal(e.code, "INVALID_MESSAGES");
    assert.equal(e.index, undefined);
    assert.match(e.message, /messages mix formats: message 1 looks like (langchain|gemini), but message 0/);
  }
});

test("what is not an array is INVALID_MESSAGES", () => {
  for (const value of ["hi", { 0: user("x"), length: 1 }, null, undefined]) {
    const e = reduceError(() => read(value));
    assert.equal(e.code, "INVALID_MESSAGES");
    assert.equal(e.index, undefined);
  }
});

test("a message that is no object is INVALID_MESSAGE with its index", () => {
  for (const bad of [5, null, "hello", undefined]) {
    const e = reduceError(() => read([user("fine"), user("fine"), bad]));
    assert.equal(e.code, "INVALID_MESSAGE");
    assert.equal(e.index, 2);
  }
});

test("a role no format has, or one the named format does not have, is INVALID_MESSAGE with its index", () => {
  let e = reduceError(() => read([user("hi"), { role: "wizard", content: "x" }]));
  assert.equal(e.code, "INVALID_MESSAGE");
  assert.equal(e.index, 1);
  assert.match(e.message, /not a message of any known format/);

  e = reduceError(() => read([user("hi"), { role: "model", content: "x" }], "openai"));
  assert.equal(e.code, "INVALID_MESSAGE");
  assert.equal(e.index, 1);
  assert.match(e.message, /unknown role "model"/);

  e = reduceError(() => read([{ role: "tool", content: "x" }], "anthropic"));
  assert.equal(e.code, "INVALID_MESSAGE");
  assert.equal(e.index, 0);
});

test("malformed messages of a known format are INVALID_MESSAGE with their index", () => {
  const cases = [
    [user(42), /content must be/],
    [{ role: "assistant", content: null, tool_calls: [{ type: "function" }] }, /needs an id/],
    [{ role: "tool", content: "x" }, /needs tool_call_id/],
    // A part only another format has, under a named format.
    [user([{ type: "tool_use", id: "t", name: "n", input: {} }]), /set config.format to "anthropic"/],
  ];
  for (const [bad, words] of cases) {
    const e = reduceError(() => read([user("fine"), bad], "openai"));
    assert.equal(e.code, "INVALID_MESSAGE");
    assert.equal(e.index, 1);
    assert.match(e.message, words);
  }
});

test("tokenCounts: finite numbers ≥ 0 are given, anything else is left to the estimator; above MAX_SAFE_INTEGER is INVALID_CONFIG", () => {
  const r = read([user("x"), user("y"), user("z"), user("w")], "auto", { tokenCounts: [5, "7", -1, Infinity] });
  assert.deepEqual(list(r.given), [5, -1, -1, -1]);
  // Only the messages without a count hand their texts over to be estimated.
  assert.deepEqual(list(r.pieceStart), [0, 0, 1, 2, 3]);

  const e = reduceError(() => read([user("x")], "auto", { tokenCounts: [2 ** 60] }));
  assert.equal(e.code, "INVALID_CONFIG");
  assert.equal(e.field, "tokenCounts");
  assert.equal(e.index, 0);
});

test("countTokens: called once per message with (message, index); a bad count is INVALID_CONFIG, its own error passes through", () => {
  const messages = [user("x"), user("yy")];
  const seen = [];
  const r = read(messages, "auto", { countTokens: (m, i) => (seen.push([m, i]), i + 10) });
  assert.deepEqual(list(r.raw), [10, 11]);
  assert.deepEqual(seen, [[messages[0], 0], [messages[1], 1]]);
  assert.equal(r.texts.length, 0);

  const e = reduceError(() => read([user("x")], "auto", { countTokens: () => -1 }));
  assert.equal(e.code, "INVALID_CONFIG");
  assert.equal(e.field, "countTokens");
  assert.equal(e.index, 0);

  const mine = new TypeError("mine");
  assert.throws(() => read([user("x")], "auto", { countTokens: () => { throw mine; } }), (thrown) => thrown === mine);
});

test("countTokens that returns a Promise: INVALID_CONFIG that says it must be synchronous, its rejection handled", async () => {
  let rejected;
  const e = reduceError(() => read([user("x")], "auto", { countTokens: async () => { await null; rejected = true; throw new Error("later"); } }));
  assert.equal(e.code, "INVALID_CONFIG");
  assert.equal(e.field, "countTokens");
  assert.equal(e.index, 0);
  assert.match(e.message, /countTokens returned a Promise for message 0; it must be synchronous/);
  assert.match(e.message, /tokenCounts/);
  // (An unhandled rejection would fail this test's process.)
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(rejected, true);
});

test("length mode: a message of one text (and its role name) is ceil(length / charsPerToken)", () => {
  const r = read([user("12345678")], "auto", { lengthMode: true });
  // "user" + "12345678": 12 characters, 3 tokens.
  assert.deepEqual(list(r.lengths([0])), [3]);
});

test("length mode: a message's text lengths are summed, then rounded once (SPEC §3)", () => {
  const r = read([
    { role: "assistant", content: null, tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: { long: "x".repeat(20) } } }] },
  ], "auto", { lengthMode: true });
  // "assistant" 9 + "a" 1 + "f" 1 + the arguments' JSON 30 = 41 characters: ceil(41 / 4) = 11.
  assert.deepEqual(list(r.lengths([0])), [11]);
});

test("a reading taken over pairs an AI SDK approval response as a fresh one does, when its request went or came", () => {
  // Kept between calls (a `countTokens` keeps even a short history's reading), then the same
  // message objects in another array: what the next call takes over must read as new.
  const count = () => 1;
  const readKept = (messages) => {
    const r = readMessages(messages, FORMAT_NAMES.indexOf("vercel"), TAG, false, 4, new Float64Array([3, 85, 1, 4]), count, undefined, true);
    remember(r, new Float64Array(0));
    return r;
  };
  const u0 = user("deploy it"), request = { role: "assistant", content: [{ type: "tool-approval-request", approvalId: "ap1", toolCallId: "c1" }] };
  const response = { role: "tool", content: [{ type: "tool-approval-response", approvalId: "ap1", approved: true }] };
  const after = [{ role: "assistant", content: "Deployed." }, user("thanks")];
  const keysOf = (r, i) => linksOf(r, i).map(([id, kind]) => [id, kind]);

  // Its request went (an app sliced the history after it): it stands alone, as read afresh.
  readKept([u0, request, response, ...after]);
  const sliced = readKept([response, ...after]);
  assert.deepEqual(linksOf(sliced, 0), linksOf(read([response, ...after], "vercel"), 0));
  assert.deepEqual(linksOf(sliced, 0), []);

  // Its request came (read alone first): it pairs with it, as read afresh.
  const u1 = user("deploy again");
  readKept([u1, response, ...after]);
  const whole = readKept([u1, request, response, ...after]);
  assert.deepEqual(keysOf(whole, 1), [["approval:ap1", "call"]]);
  assert.deepEqual(keysOf(whole, 2), keysOf(read([u1, request, response, ...after], "vercel"), 2));
  assert.deepEqual(keysOf(whole, 2), [["approval:ap1", "result"]]);
  assert.equal(linksOf(whole, 1)[0][2], linksOf(whole, 2)[0][2], "the request and its response share a key");
});
