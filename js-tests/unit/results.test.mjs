// What a reduction hands back (src/wasm/js/results.js), the parts that need no wasm: the
// copy of a message without the orphan links the core found and handed over (SPEC §9.4; the
// core's Structure decides which they are, these tests hand them as it does), `pick` (the originals handed to a summarizer),
// `analyze`'s result shape (SPEC §1) and `buildResult`'s (SPEC §8).
import { test } from "node:test";
import assert from "node:assert/strict";
import { NEW } from "../../src/wasm/js/contract.js";
import { buildAnalysis, buildResult, withoutOrphans } from "../../src/wasm/js/results.js";
import { pick } from "../../src/wasm/js/summaries.js";
import { read } from "./helpers.mjs";

const openaiCall = (id) => ({ id, type: "function", function: { name: "f", arguments: "{}" } });

test("a copy drops the orphan call the core named and keeps the rest", () => {
  const messages = [
    { role: "user", content: "q" },
    { role: "assistant", content: "t", tool_calls: [openaiCall("a"), openaiCall("b")], x: 1 },
    { role: "tool", tool_call_id: "a", content: "r" },
    { role: "user", content: "next" },
  ];
  const r = read(messages);
  assert.throws(() => withoutOrphans(r, 1), /orphans asked for before the core handed them/);
  r.setOrphans([1]); // the second link: call b
  assert.deepEqual([...r.orphans], [2]);
  const copy = withoutOrphans(r, 1);
  assert.notEqual(copy, messages[1]);
  assert.deepEqual(copy, { role: "assistant", content: "t", tool_calls: [openaiCall("a")], x: 1 });
  assert.equal(messages[1].tool_calls.length, 2);
  // Messages without orphans are themselves.
  assert.equal(withoutOrphans(r, 2), messages[2]);
  assert.equal(withoutOrphans(r, 0), messages[0]);
});

test("without orphans, pick hands the messages over as they are", () => {
  const messages = [{ role: "user", content: "q" }, { role: "assistant", content: "t", tool_calls: [openaiCall("a")] }];
  const r = read(messages);
  r.setOrphans([]);
  const picked = pick(r, [0, 1]);
  assert.equal(picked[0], messages[0]);
  assert.equal(picked[1], messages[1]);
});

test("anthropic: a stray tool_result beside a user's text goes, the text stays (the original untouched)", () => {
  const messages = [
    { role: "user", content: "q" },
    { role: "assistant", content: [{ type: "text", text: "hi" }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "zz", content: "stray" }, { type: "text", text: "real question" }] },
  ];
  const r = read(messages);
  r.setOrphans([0]);
  assert.deepEqual(withoutOrphans(r, 2), { role: "user", content: [{ type: "text", text: "real question" }] });
  assert.equal(messages[2].content.length, 2);
  // `pick` hands the originals over as a reduction outputs them.
  const picked = pick(r, [1, 2]);
  assert.equal(picked[0], messages[1]);
  assert.deepEqual(picked[1].content, [{ type: "text", text: "real question" }]);
});

test("gemini: the response beyond a turn's calls of its name is the orphan part that goes", () => {
  const messages = [
    { role: "user", parts: [{ text: "q" }] },
    { role: "model", parts: [{ functionCall: { name: "f", args: {} } }] },
    { role: "user", parts: [{ functionResponse: { name: "f", response: { n: 1 } } }, { functionResponse: { name: "f", response: { n: 2 } } }] },
    { role: "model", parts: [{ text: "done" }] },
  ];
  const r = read(messages);
  r.setOrphans([2]); // the second response
  const copy = withoutOrphans(r, 2);
  assert.deepEqual(copy, { role: "user", parts: [{ functionResponse: { name: "f", response: { n: 1 } } }] });
});

test("buildAnalysis: one entry per message with index, role, tokens, group, round, protection; totals", () => {
  const a = buildAnalysis("openai", "o200k", ["system", "user", "assistant", "tool", "other"], ["", "keepSystem", "lastUser"],
    [0, 1, 2], [5, 7, 4], [0, 1, 2], [0, 1, 1], [1, 2, 0], [0, 2, 1], [16, 3, 1, 1]);
  assert.deepEqual(a, {
    format: "openai",
    tokenizer: "o200k",
    messages: [
      { index: 0, role: "system", tokens: 5, group: 0, round: 0, protected: true, protectedBy: "keepSystem", summary: false, realUser: false },
      { index: 1, role: "user", tokens: 7, group: 1, round: 1, protected: true, protectedBy: "lastUser", summary: false, realUser: true },
      { index: 2, role: "assistant", tokens: 4, group: 2, round: 1, protected: false, summary: true, realUser: false },
    ],
    totalTokens: 16, totalMessages: 3, groups: 3, rounds: 1, shouldReduce: true,
  });
  // Length mode: no profile, no field.
  const b = buildAnalysis("openai", undefined, ["user"], [""], [1], [5], [0], [1], [0], [0], [5, 1, 1, 0]);
  assert.equal("tokenizer" in b, false);
});

test("buildResult: kept messages are the input objects, written ones in place, every field of SPEC §8", () => {
  const messages = [{ role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "c" }];
  const r = read(messages);
  const summary = { role: "user", content: "<conversation-summary>s</conversation-summary>" };
  const result = buildResult(r, Uint32Array.of(NEW, 2), [summary], summary, {}, Uint32Array.of(2), new Uint32Array(0),
    Uint32Array.of(0, 1), new Uint32Array(0), [1, 2, 30, 12, 0, 0], []);
  assert.equal(result.messages[0], summary);
  assert.equal(result.messages[1], messages[2]);
  assert.deepEqual(result, {
    messages: [summary, messages[2]], reduced: true, removedCount: 2, kept: [2], dropped: [], summarized: [0, 1],
    rewritten: [], offloaded: {}, tokensBefore: 30, tokensAfter: 12, overBudget: false, events: [], summary,
  });
});
