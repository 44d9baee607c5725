// Summaries (src/wasm/js/summaries.js): a summary message written in each format of SPEC §2
// and recognised again when read back (SUMMARY flag, same format); the tag wrapping
// (`wrapSummary`), the previous summary's text (`summaryText`), and the summarizer's call
// (`callSummarizer`: every outcome settles, none throws).
import { test } from "node:test";
import assert from "node:assert/strict";
import { ASSISTANT, SUMMARY, SYSTEM, USER } from "../../src/wasm/js/contract.js";
import { addUsage, callSummarizer, failureMessage, makeMessage, summaryMessage, summaryText, wrapSummary } from "../../src/wasm/js/summaries.js";
import { HumanMessage, AIMessage } from "@langchain/core/messages";
import { TAG, read } from "./helpers.mjs";

const TEXT = wrapSummary("They discussed maps.", TAG);

/** A short conversation in each format (parts where the format writes parts). */
const CONVERSATIONS = {
  openai: () => [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }],
  "openai-responses": () => [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }],
  anthropic: () => [{ role: "user", content: [{ type: "text", text: "hi" }] }, { role: "assistant", content: [{ type: "tool_use", id: "a", name: "f", input: {} }] }],
  vercel: () => [{ role: "user", content: [{ type: "text", text: "hi" }] }, { role: "assistant", content: [{ type: "tool-call", toolCallId: "a", toolName: "f", input: {} }] }],
  "vercel-ui": () => [{ id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] }],
  gemini: () => [{ role: "user", parts: [{ text: "hi" }] }],
  langchain: () => [{ type: "human", content: "hi" }],
};

test("wrapSummary: one pair of tags around the trimmed text, tags the summarizer wrote removed", () => {
  assert.equal(TEXT, "<conversation-summary>They discussed maps.</conversation-summary>");
  assert.equal(wrapSummary(`  <${TAG}>\n x y \n</${TAG}> `, TAG), `<${TAG}>x y</${TAG}>`);
  assert.equal(wrapSummary("a", "s"), "<s>a</s>");
});

test("a summary written in each format is read back in that format, flagged SUMMARY, with its role", () => {
  const expectRole = { user: USER, system: SYSTEM, assistant: ASSISTANT };
  for (const [format, build] of Object.entries(CONVERSATIONS)) {
    const messages = build();
    const reading = read(messages);
    assert.equal(reading.format, format);
    for (const role of ["user", "system", "assistant"]) {
      const summary = summaryMessage(reading, role, TEXT);
      const back = read([summary, ...messages]);
      assert.equal(back.format, format, `${format} ${role}`);
      assert.equal(back.flags[0], SUMMARY, `${format} ${role}`);
      // Anthropic and Gemini open on a user turn whatever summaryRole says; Gemini has no
      // system turn in its contents.
      const opensAsUser = (format === "anthropic" && role === "assistant") || (format === "gemini" && role !== "user");
      assert.equal(back.roles[0], opensAsUser ? USER : expectRole[role], `${format} ${role}`);
    }
  }
});

test("summary messages have each format's exact shape", () => {
  const make = (format, role) => makeMessage(read(CONVERSATIONS[format]()), role, TEXT);
  assert.deepEqual(make("openai", "user"), { role: "user", content: TEXT });
  // Content as parts where the input writes parts; a system message's content is a string.
  assert.deepEqual(make("vercel", "user"), { role: "user", content: [{ type: "text", text: TEXT }] });
  assert.deepEqual(make("vercel", "system"), { role: "system", content: TEXT });
  assert.deepEqual(make("openai-responses", "assistant"), { type: "message", role: "assistant", content: [{ type: "output_text", text: TEXT }] });
  assert.deepEqual(make("openai-responses", "user"), { type: "message", role: "user", content: [{ type: "input_text", text: TEXT }] });
  assert.deepEqual(make("gemini", "assistant"), { role: "model", parts: [{ text: TEXT }] });
  assert.deepEqual(make("langchain", "assistant"), { type: "ai", content: TEXT });
  // The AI SDK's model-level prompt: a system message's string says nothing of the others.
  const prompt = [{ role: "system", content: "rules" }, ...CONVERSATIONS.vercel()];
  assert.deepEqual(makeMessage(read(prompt), "user", TEXT), { role: "user", content: [{ type: "text", text: TEXT }] });
  const ui = make("vercel-ui", "user");
  assert.match(ui.id, /^summary-[0-9a-f]{1,8}$/);
  assert.deepEqual(ui, { id: ui.id, role: "user", parts: [{ type: "text", text: TEXT }] });
});

test("vercel-ui: a summary's id is unique among the input's ids", () => {
  const reading = read(CONVERSATIONS["vercel-ui"]());
  const first = makeMessage(reading, "user", TEXT);
  reading.items.push(first);
  const second = makeMessage(reading, "user", TEXT);
  assert.equal(second.id, `${first.id}-2`);
});

test("langchain: a class instance when the input has one of that type, the toDict or serialized form for input in that form", () => {
  const classes = read([new HumanMessage("hi"), new AIMessage("yo")]);
  const human = summaryMessage(classes, "user", TEXT);
  assert.ok(human instanceof HumanMessage);
  assert.equal(human.content, TEXT);
  assert.ok(summaryMessage(classes, "assistant", TEXT) instanceof AIMessage);

  const dicts = read([{ type: "human", data: { content: "hi" } }]);
  assert.deepEqual(summaryMessage(dicts, "user", TEXT), { type: "human", data: { content: TEXT } });

  // The serialized form (JSON of instances) for serialized input, read back as a summary.
  const serialized = read([JSON.parse(JSON.stringify(new HumanMessage("hi")))]);
  for (const [role, cls] of [["user", "HumanMessage"], ["system", "SystemMessage"], ["assistant", "AIMessage"]]) {
    const summary = summaryMessage(serialized, role, TEXT);
    assert.deepEqual(summary, { lc: 1, type: "constructor", id: ["langchain_core", "messages", cls], kwargs: { content: TEXT } });
    const back = read([summary, ...serialized.items]);
    assert.equal(back.flags[0], SUMMARY, role);
    assert.equal(summaryText(back, [0], TAG), "They discussed maps.", role);
  }
});

test("summaryText: a summary's text in every format and every form of its content", () => {
  // Each: [the summary holding TEXT, a user input in the same form].
  const text = (t) => [{ type: "text", text: t }];
  const serialized = (cls, content) => ({ lc: 1, type: "constructor", id: ["langchain_core", "messages", cls], kwargs: { content, additional_kwargs: {} } });
  const forms = {
    "openai, a string": [{ role: "user", content: TEXT }, { role: "user", content: "hi" }],
    "openai, parts": [{ role: "user", content: text(TEXT) }, { role: "user", content: "hi" }],
    "openai-responses, content parts": [{ type: "message", role: "user", content: [{ type: "input_text", text: TEXT }] }, { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }],
    "openai-responses, a string": [{ type: "message", role: "user", content: TEXT }, { type: "message", role: "user", content: "hi" }],
    "anthropic, blocks": [{ role: "user", content: text(TEXT) }, { role: "assistant", content: [{ type: "tool_use", id: "a", name: "f", input: {} }] }],
    "vercel, parts": [{ role: "user", content: text(TEXT) }, { role: "assistant", content: [{ type: "tool-call", toolCallId: "a", toolName: "f", input: {} }] }],
    "vercel-ui, UIMessage parts": [{ id: "s", role: "user", parts: text(TEXT) }, { id: "u", role: "user", parts: text("hi") }],
    "gemini, parts": [{ role: "user", parts: [{ text: TEXT }] }, { role: "user", parts: [{ text: "hi" }] }],
    "langchain, instances": [new HumanMessage(TEXT), new HumanMessage("hi")],
    "langchain, instances with content blocks": [new HumanMessage({ content: text(TEXT) }), new HumanMessage("hi")],
    "langchain, plain": [{ type: "human", content: TEXT }, { type: "human", content: "hi" }],
    "langchain, toDict": [{ type: "human", data: { content: TEXT } }, { type: "human", data: { content: "hi" } }],
    "langchain, serialized": [serialized("HumanMessage", TEXT), serialized("HumanMessage", "hi")],
    "langchain, serialized with content blocks": [serialized("HumanMessage", text(TEXT)), serialized("HumanMessage", "hi")],
  };
  for (const [form, messages] of Object.entries(forms)) {
    const reading = read(messages);
    assert.equal(reading.flags[0], SUMMARY, form);
    assert.equal(summaryText(reading, [0], TAG), "They discussed maps.", form);
  }
});

test("summaryText: the texts between the tags of the summaries at the indices, joined by a blank line", () => {
  const reading = read([
    { role: "user", content: TEXT },
    { role: "user", content: [{ type: "text", text: `<${TAG}> second </${TAG}>` }] },
  ]);
  assert.equal(summaryText(reading, [0, 1], TAG), "They discussed maps.\n\nsecond");
  assert.equal(summaryText(reading, [1], TAG), "second");
});

// ---- callSummarizer ---------------------------------------------------------------------------

test("callSummarizer: a string or {text, usage} is ok; usage keeps finite numbers only", async () => {
  let out = await callSummarizer(async () => "short", {});
  assert.equal(out.status, "ok");
  assert.equal(out.text, "short");
  assert.equal(out.usage, undefined);

  const request = {};
  out = await callSummarizer(async (req) => {
    assert.ok(req.signal instanceof AbortSignal);
    return { text: "t", usage: { inputTokens: 5, bad: NaN, big: 1n, details: { cached: 2, x: "y" } } };
  }, request);
  assert.equal(out.status, "ok");
  assert.deepEqual(out.usage, { inputTokens: 5, details: { cached: 2 } });
  assert.equal(typeof out.durationMs, "number");
});

test("callSummarizer: empty answers are invalid, rejections rejected, a timeout aborts the request's signal", async () => {
  for (const answer of ["  ", null, { text: 3 }]) {
    const out = await callSummarizer(async () => answer, {});
    assert.equal(out.status, "invalid");
    assert.ok(out.error instanceof Error);
  }
  const boom = new Error("boom");
  let out = await callSummarizer(async () => { throw boom; }, {});
  assert.equal(out.status, "rejected");
  assert.equal(out.error, boom);

  const request = {};
  out = await callSummarizer(() => new Promise(() => {}), request, 5);
  assert.equal(out.status, "timeout");
  assert.equal(request.signal.aborted, true);
});

test("callSummarizer: an aborted signal settles as aborted, before or during the call", async () => {
  const before = new AbortController();
  before.abort(new Error("stop"));
  let called = false;
  let out = await callSummarizer(async () => { called = true; return "x"; }, {}, undefined, before.signal);
  assert.equal(out.status, "aborted");
  assert.equal(called, false);

  const during = new AbortController();
  const pending = callSummarizer(() => new Promise(() => {}), {}, undefined, during.signal);
  during.abort(new Error("later"));
  out = await pending;
  assert.equal(out.status, "aborted");
  assert.equal(out.error.message, "later");
});

test("failureMessage says why, in words", () => {
  assert.equal(failureMessage("timeout", undefined, 250), "the summarizer did not answer within timeoutMs (250 ms)");
  assert.equal(failureMessage("rejected", new Error("rate limit")), "the summarizer rejected: rate limit");
  assert.match(failureMessage("tooLarge", undefined, 900, 500), /^the summary has 900 tokens .*over its limit \(500/);
});

test("addUsage: the usage of a summary made in several calls, field by field", () => {
  const a = { inputTokens: 100, outputTokens: 8, prompt_tokens_details: { cached_tokens: 4 } };
  const b = { inputTokens: 50, outputTokens: 9, prompt_tokens_details: { cached_tokens: 1, audio_tokens: 2 }, cost: 3 };
  assert.deepEqual(addUsage(a, b), { inputTokens: 150, outputTokens: 17, prompt_tokens_details: { cached_tokens: 5, audio_tokens: 2 }, cost: 3 });
  assert.deepEqual(a, { inputTokens: 100, outputTokens: 8, prompt_tokens_details: { cached_tokens: 4 } }, "neither is changed");
  assert.equal(addUsage(undefined, b), b);
  assert.equal(addUsage(a, undefined), a);
  assert.equal(addUsage(undefined, undefined), undefined);
});
