// `cacheBreakpoints` (src/wasm/js/breakpoints.js): what each output message carries and
// whether a mark can go on it, and the marked copies in each format that takes them. Where
// the marks go is the core's decision (src/breakpoints.rs, its native tests); the package
// tests (js-tests/cache-breakpoints.test.mjs) check both together.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { SPOT_MARKABLE, SPOT_MARKS, SPOT_SUMMARY } from "../../src/wasm/js/contract.js";
import { breakpointSpots, markBreakpoints, withBreakpoint } from "../../src/wasm/js/breakpoints.js";
import { read, TAG } from "./helpers.mjs";

const EPHEMERAL = { type: "ephemeral" };
const rawSpots = (messages, format) => {
  const out = new Uint8Array(messages.length);
  breakpointSpots(read(messages, format), messages, out);
  return [...out];
};
const spots = (messages, format) => rawSpots(messages, format).map((f) => ({ marks: f & SPOT_MARKS, markable: (f & SPOT_MARKABLE) !== 0, summary: (f & SPOT_SUMMARY) !== 0 }));

test("anthropic: the last block that takes a mark gets cache_control; a string becomes a text block", () => {
  const text = { role: "user", content: "Hi" };
  assert.deepEqual(withBreakpoint("anthropic", text), { role: "user", content: [{ type: "text", text: "Hi", cache_control: EPHEMERAL }] });
  const blocks = { role: "assistant", content: [{ type: "text", text: "a" }, { type: "tool_use", id: "t", name: "f", input: {} }, { type: "thinking", thinking: "…", signature: "s" }], extra: 1 };
  const copy = withBreakpoint("anthropic", blocks);
  assert.deepEqual(copy.content[1], { type: "tool_use", id: "t", name: "f", input: {}, cache_control: EPHEMERAL });
  assert.equal(copy.content[0], blocks.content[0]);
  assert.equal(copy.content[2], blocks.content[2], "reasoning is never edited");
  assert.equal(copy.extra, 1);
  // The caller's objects are untouched.
  assert.equal(blocks.content[1].cache_control, undefined);
  assert.equal(text.content, "Hi");
  assert.deepEqual(spots([{ role: "user", content: [{ type: "text", text: "a", cache_control: EPHEMERAL }, { type: "text", text: "b", cache_control: EPHEMERAL }] }, { role: "assistant", content: " " }, { role: "assistant", content: [{ type: "thinking", thinking: "x", signature: "s" }] }], "anthropic"), [
    { marks: 2, markable: true, summary: false },
    { marks: 0, markable: false, summary: false },
    { marks: 0, markable: false, summary: false },
  ]);
});

test("AI SDK ModelMessage: providerOptions.anthropic.cacheControl on the message, beside the caller's options", () => {
  const m = { role: "user", content: [{ type: "text", text: "q" }], providerOptions: { anthropic: { other: 1 }, openai: { x: 2 } } };
  const copy = withBreakpoint("vercel", m);
  assert.deepEqual(copy.providerOptions, { anthropic: { other: 1, cacheControl: EPHEMERAL }, openai: { x: 2 } });
  assert.equal(copy.content, m.content);
  assert.deepEqual(m.providerOptions.anthropic, { other: 1 });
  assert.deepEqual(spots([
    { role: "system", content: "s", providerOptions: { anthropic: { cacheControl: EPHEMERAL } } },
    { role: "user", content: [{ type: "text", text: "q", providerOptions: { anthropic: { cache_control: EPHEMERAL } } }] },
    { role: "assistant", content: [{ type: "text", text: "a" }, { type: "reasoning", text: "r" }] },
    { role: "user", content: "" },
  ], "vercel"), [
    { marks: 1, markable: true, summary: false },
    { marks: 1, markable: true, summary: false },
    { marks: 0, markable: false, summary: false },
    { marks: 0, markable: false, summary: false },
  ]);
});

test("AI SDK UIMessage: the last text part's providerMetadata", () => {
  const m = { id: "1", role: "user", parts: [{ type: "text", text: "q" }, { type: "file", mediaType: "image/png", url: "u" }] };
  const copy = withBreakpoint("vercel-ui", m);
  assert.deepEqual(copy.parts[0], { type: "text", text: "q", providerMetadata: { anthropic: { cacheControl: EPHEMERAL } } });
  assert.equal(copy.parts[1], m.parts[1]);
  assert.equal(m.parts[0].providerMetadata, undefined);
  assert.deepEqual(spots([m, { id: "2", role: "assistant", parts: [{ type: "step-start" }] }], "vercel-ui").map((s) => s.markable), [true, false]);
});

test("LangChain: a content block of the same class; never a ToolMessage, nor text beside tool_calls", () => {
  const human = new HumanMessage("q");
  const copy = withBreakpoint("langchain", human);
  assert.ok(copy instanceof HumanMessage);
  assert.deepEqual(copy.content, [{ type: "text", text: "q", cache_control: EPHEMERAL }]);
  assert.equal(human.content, "q");
  const messages = [
    new SystemMessage("s"),
    human,
    new AIMessage({ content: "calling", tool_calls: [{ id: "c", name: "f", args: {} }] }),
    new ToolMessage({ content: "r", tool_call_id: "c" }),
    new AIMessage({ content: [{ type: "text", text: "calling" }, { type: "tool_use", id: "d", name: "f", input: {} }], tool_calls: [{ id: "d", name: "f", args: {} }] }),
    new ToolMessage({ content: "r", tool_call_id: "d" }),
  ];
  assert.deepEqual(spots(messages, "langchain").map((s) => s.markable), [true, true, false, false, true, false]);
  // Plain and dict forms are copied in their own shape.
  assert.deepEqual(withBreakpoint("langchain", { type: "human", data: { content: "q" } }), { type: "human", data: { content: [{ type: "text", text: "q", cache_control: EPHEMERAL }] } });
});

test("the caller's marks are counted as the API counts them: inside a tool_result, and once per AI SDK last part", () => {
  const nested = [
    { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "r", cache_control: EPHEMERAL }], cache_control: EPHEMERAL }] },
  ];
  assert.deepEqual(spots(nested, "anthropic").map((s) => s.marks), [0, 2]);
  const anthropic = { anthropic: { cacheControl: EPHEMERAL } };
  const both = { role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b", providerOptions: anthropic }], providerOptions: anthropic };
  const firstAndMessage = { role: "user", content: [{ type: "text", text: "a", providerOptions: anthropic }, { type: "text", text: "b" }], providerOptions: anthropic };
  const messageOnly = { role: "user", content: "c", providerOptions: anthropic };
  assert.deepEqual(spots([both, firstAndMessage, messageOnly], "vercel").map((s) => s.marks), [1, 2, 1]);
});

test("a summary is told by its tag, as the reader tells one", () => {
  const summary = { role: "user", content: `<${TAG}>\nwhat happened\n</${TAG}>` };
  assert.deepEqual(spots([summary, { role: "user", content: "q" }], "anthropic").map((s) => s.summary), [true, false]);
});

test("a marked input is rewritten, not kept, in the result", () => {
  const messages = [{ role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "c" }];
  const r = read(messages, "anthropic");
  const result = { messages: messages.slice(), kept: [0, 1, 2], rewritten: [], removedCount: 0 };
  const replaced = markBreakpoints(r, result, new Uint32Array([0, 2]), new Uint32Array([0, 2]));
  assert.deepEqual(replaced, [messages[0], messages[2]]);
  assert.deepEqual(result.kept, [1]);
  assert.deepEqual(result.rewritten, [0, 2]);
  assert.equal(result.removedCount, 2);
  assert.equal(result.messages[1], messages[1]);
  assert.deepEqual(result.messages[2].content, [{ type: "text", text: "c", cache_control: EPHEMERAL }]);
  // A written message (no input) moves nothing.
  const other = { messages: messages.slice(), kept: [0, 1, 2], rewritten: [], removedCount: 0 };
  markBreakpoints(r, other, new Uint32Array([1]), new Uint32Array([0xffffffff]));
  assert.deepEqual(other.kept, [0, 1, 2]);
});
