// `cacheBreakpoints: true` (SPEC §4) with the packed package: Anthropic's `cache_control`,
// the AI SDK's providerOptions (5 and 7, ModelMessage and UIMessage, through the SDKs' own
// conversions to what their providers are handed) and LangChain's content blocks; the
// caller's objects untouched, at most four marks, and ChatHistory's stable prefix the same
// bytes from one prepare() to the next.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as ai5 from "ai";
import { MockLanguageModelV2 } from "ai/test";
import * as ai7 from "ai-v7";
import { MockLanguageModelV4 } from "ai-v7/test";
import { createAgent } from "langchain";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { ChatHistory, reduce, reduceSync } from "chat-history-reducer";
import * as adapter5 from "chat-history-reducer/ai-sdk";
import { contextWindowMiddleware as langchainMiddleware } from "chat-history-reducer/langchain";
import { aiSdk7Adapter } from "./frameworks.mjs";
import { hasCacheMark as marked } from "./providers.mjs";

const EPHEMERAL = { type: "ephemeral" };
const SYSTEM = "You are a careful travel agent. ".repeat(40);

/** An Anthropic agent session: a system prompt, turns with a tool call each. */
function anthropicSession(turns) {
  const out = [{ role: "system", content: SYSTEM }];
  for (let t = 0; t < turns; t++) {
    out.push({ role: "user", content: `Question ${t}: what is the weather in city ${t}? ` + "Please be precise. ".repeat(20) });
    out.push({ role: "assistant", content: [{ type: "text", text: "Looking it up." }, { type: "tool_use", id: `t${t}`, name: "weather", input: { city: t } }] });
    out.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `t${t}`, content: `Sunny, ${t} °C. ` + "Details follow. ".repeat(30) }] });
    out.push({ role: "assistant", content: `It is sunny in city ${t}.` });
  }
  out.push({ role: "user", content: "And tomorrow?" });
  return out;
}

const marks = (messages) => messages.flatMap((m, p) => (marked(m) ? [p] : []));

/** Every input index once in kept, dropped, summarized, rewritten and the offloaded (SPEC §8). */
function accountsForAll(result, n) {
  const all = [...result.kept, ...result.dropped, ...result.summarized, ...result.rewritten].sort((a, b) => a - b);
  assert.deepEqual(all, [...new Set(all)], "an index twice");
  assert.ok(all.length <= n && all.every((i) => i >= 0 && i < n));
  assert.equal(result.removedCount, n - result.kept.length);
}

test("anthropic: the end of the system prompt and the newest message, as copies; the input untouched", () => {
  const input = anthropicSession(3);
  const before = structuredClone(input);
  const result = reduceSync(input, { maxTokens: 100_000, cacheBreakpoints: true });
  assert.deepEqual(input, before, "the caller's objects are untouched");
  assert.deepEqual(marks(result.messages), [0, input.length - 1]);
  assert.deepEqual(result.messages[0].content, [{ type: "text", text: SYSTEM, cache_control: EPHEMERAL }]);
  assert.deepEqual(result.messages.at(-1), { role: "user", content: [{ type: "text", text: "And tomorrow?", cache_control: EPHEMERAL }] });
  assert.equal(result.reduced, false, "a mark is no reduction");
  assert.deepEqual(result.rewritten, [0, input.length - 1]);
  accountsForAll(result, input.length);
  for (let p = 1; p < input.length - 1; p++) assert.equal(result.messages[p], input[p], "the others are the caller's objects");
  // Reduced: the marks follow the output.
  const small = reduceSync(input, { maxTokens: 900, cacheBreakpoints: true });
  assert.ok(small.reduced);
  assert.deepEqual(marks(small.messages), [0, small.messages.length - 1]);
  accountsForAll(small, input.length);
  // A marked output reduced again gains nothing (SPEC §9.9).
  const again = reduceSync(small.messages, { maxTokens: 900, cacheBreakpoints: true });
  assert.deepEqual(again.messages, small.messages);
  assert.equal(again.rewritten.length, 0);
});

test("the caller's own breakpoints count toward four and are not doubled", () => {
  const input = anthropicSession(2);
  const mark = (m) => ({ ...m, content: [{ type: "text", text: typeof m.content === "string" ? m.content : "x", cache_control: EPHEMERAL }] });
  const three = input.map((m, i) => (i === 1 || i === 5 || i === 8 ? mark(m) : m));
  const r3 = reduceSync(three, { maxTokens: 100_000, cacheBreakpoints: true });
  assert.deepEqual(marks(r3.messages), [1, 5, 8, input.length - 1], "room for the newest only");
  const four = three.map((m, i) => (i === 4 && typeof m.content === "string" ? mark(m) : m));
  assert.equal(marks(four).length, 4);
  assert.deepEqual(reduceSync(four, { maxTokens: 100_000, cacheBreakpoints: true }).rewritten, []);
  // The newest marked already: the system prompt gets the one left.
  const newest = input.map((m, i) => (i === input.length - 1 ? mark(m) : m));
  assert.deepEqual(reduceSync(newest, { maxTokens: 100_000, cacheBreakpoints: true }).rewritten, [0]);
});

test("formats whose providers cache without marks ignore it; it must be a boolean", () => {
  const openai = [{ role: "system", content: "s" }, { role: "user", content: "q" }];
  const r = reduceSync(openai, { maxTokens: 1000, cacheBreakpoints: true });
  assert.deepEqual(r.messages, openai);
  assert.equal(r.messages[0], openai[0]);
  const gemini = [{ role: "user", parts: [{ text: "q" }] }];
  assert.equal(reduceSync(gemini, { maxTokens: 1000, cacheBreakpoints: true }).messages[0], gemini[0]);
  assert.throws(() => reduceSync(openai, { maxTokens: 1000, cacheBreakpoints: "yes" }), (e) => e.code === "INVALID_CONFIG" && e.field === "cacheBreakpoints");
});

test("summarize: the summary ends the stable prefix; result.summary is the summary itself", async () => {
  const input = anthropicSession(6);
  const summarizer = async ({ messages }) => `${messages.length} messages about the weather in several cities.`;
  const r = await reduce(input, { strategy: "summarize", maxTokens: 1500, summarizer, cacheBreakpoints: true });
  assert.ok(r.summary);
  assert.equal(r.messages[1].role, r.summary.role);
  assert.deepEqual(marks(r.messages), [1, r.messages.length - 1], "the summary after the system prompt, and the newest");
  assert.ok(!marked(r.summary), "the summary as written, without the mark");
  assert.ok(!marked(r.messages[0]), "one mark for the stable prefix: at its end");
  accountsForAll(r, input.length);
});

test("ChatHistory: the prefix up to the stable mark is the same bytes across prepare()s; the history keeps no marks", async () => {
  const session = anthropicSession(20);
  const before = structuredClone(session);
  const summarizer = async ({ messages, previousSummary }) => `Summary of ${messages.length} messages${previousSummary ? " and an earlier summary" : ""}.`;
  const history = new ChatHistory({ format: "anthropic", strategy: "summarize", maxTokens: 1500, summarizer, cacheBreakpoints: true });
  history.push(session[0]);
  const prefixes = [];
  let reductions = 0, compared = 0;
  for (let i = 1; i < session.length; i++) {
    history.push(session[i]);
    if (session[i].role !== "user") continue;
    const sent = await history.prepare();
    const at = marks(sent);
    assert.ok(at.length <= 4 && at.length >= 1);
    assert.equal(at.at(-1), sent.length - 1, "the newest message is marked");
    assert.ok(marks(history.messages).length === 0, "the working history holds the messages themselves");
    const stable = at.length > 1 ? at[0] : -1;
    const prefix = JSON.stringify(sent.slice(0, stable + 1));
    const reduced = history.stats().reductions;
    if (prefixes.length > 0 && reduced === reductions && stable > 0) {
      assert.equal(prefix, prefixes.at(-1), `the prefix up to the summary changed without a reduction (message ${i})`);
      compared++;
    }
    prefixes.push(prefix);
    reductions = reduced;
  }
  assert.ok(reductions >= 2 && compared >= 5, `the session was reduced along the way (${reductions}), the prefix with a summary compared (${compared})`);
  assert.deepEqual(session, before, "the caller's objects are untouched");
  assert.ok(JSON.stringify(history.toJSON()).indexOf("cache_control") < 0, "the saved state holds no marks");
});

const SDKS = [
  { name: "AI SDK 5", ai: ai5, adapter: adapter5, Mock: MockLanguageModelV2, finish: "stop", usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
  {
    name: "AI SDK 7", ai: ai7, adapter: await aiSdk7Adapter(), Mock: MockLanguageModelV4, finish: { unified: "stop", raw: undefined },
    usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
  },
];

/** A mock model of `sdk` that keeps the prompts it is handed (what a provider converts). */
function recording(sdk) {
  const prompts = [];
  const model = new sdk.Mock({
    doGenerate: async ({ prompt }) => {
      prompts.push(prompt);
      return { content: [{ type: "text", text: "ok" }], finishReason: sdk.finish, usage: sdk.usage, warnings: [] };
    },
  });
  return { model, prompts };
}

const modelMessages = () => [
  { role: "user", content: "Read the report. " + "It is long. ".repeat(50) },
  { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "read", input: {} }] },
  { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "text", value: "The report. ".repeat(80) } }] },
  { role: "assistant", content: "Read." },
  { role: "user", content: "Summarize it." },
];

for (const sdk of SDKS) {
  test(`${sdk.name}: ModelMessage marks reach the provider as the message's providerOptions, by the middleware too`, async () => {
    const input = modelMessages();
    const before = structuredClone(input);
    const result = reduceSync(input, { format: "vercel", maxTokens: 100_000, cacheBreakpoints: true });
    assert.deepEqual(input, before);
    assert.deepEqual(marks(result.messages), [input.length - 1], "no system message: the newest only");
    const direct = recording(sdk);
    await sdk.ai.generateText({ model: direct.model, messages: result.messages, maxRetries: 0 });
    const sent = direct.prompts[0];
    assert.deepEqual(sent.at(-1).providerOptions, { anthropic: { cacheControl: EPHEMERAL } });
    assert.deepEqual(sent.filter((m) => m.providerOptions?.anthropic?.cacheControl).length, 1);
    // The middleware marks every call's prompt; the system prompt is part of it there.
    const wrapped = recording(sdk);
    const model = sdk.ai.wrapLanguageModel({ model: wrapped.model, middleware: sdk.adapter.contextWindowMiddleware({ maxTokens: 100_000, cacheBreakpoints: true }) });
    const system = sdk.name === "AI SDK 5" ? { system: SYSTEM } : { instructions: SYSTEM };
    await sdk.ai.generateText({ model, ...system, messages: input, maxRetries: 0 });
    const prompt = wrapped.prompts[0];
    assert.deepEqual(marks(prompt), [0, prompt.length - 1]);
    assert.equal(prompt[0].role, "system");
  });

  test(`${sdk.name}: UIMessage marks go on a text part and reach the provider through convertToModelMessages`, async () => {
    const ui = [
      { id: "s", role: "system", parts: [{ type: "text", text: SYSTEM }] },
      { id: "1", role: "user", parts: [{ type: "text", text: "Hello" }] },
      { id: "2", role: "assistant", parts: [{ type: "step-start" }, { type: "text", text: "Hi! How can I help?" }] },
      { id: "3", role: "user", parts: [{ type: "text", text: "Plan a trip." }] },
    ];
    const before = structuredClone(ui);
    const result = reduceSync(ui, { maxTokens: 100_000, cacheBreakpoints: true });
    assert.deepEqual(ui, before);
    assert.deepEqual(marks(result.messages), [0, 3]);
    const converted = await sdk.ai.convertToModelMessages(result.messages);
    const { model, prompts } = recording(sdk);
    const [system, ...messages] = converted;
    await sdk.ai.generateText({ model, ...(sdk.name === "AI SDK 5" ? { system: system.content } : { instructions: system }), messages, maxRetries: 0 });
    const prompt = prompts[0];
    assert.deepEqual(prompt.at(-1).content.at(-1).providerOptions, { anthropic: { cacheControl: EPHEMERAL } }, "the last user text part");
    if (sdk.name === "AI SDK 5") assert.deepEqual(converted[0].providerOptions, { anthropic: { cacheControl: EPHEMERAL } }, "the system message's");
  });
}

test("LangChain: content blocks of the same classes; a ToolMessage passes its mark on; the agent's state keeps none", async () => {
  const input = [
    new SystemMessage(SYSTEM),
    new HumanMessage("What is the weather?"),
    new AIMessage({ content: "", tool_calls: [{ id: "w", name: "weather", args: {} }] }),
    new ToolMessage({ content: "Sunny.", tool_call_id: "w" }),
  ];
  const result = reduceSync(input, { maxTokens: 100_000, cacheBreakpoints: true });
  // The tool result and the AI message's calls take no mark: the human message takes it.
  assert.deepEqual(marks(result.messages), [0, 1]);
  assert.ok(result.messages[1] instanceof HumanMessage);
  assert.deepEqual(result.messages[1].content, [{ type: "text", text: "What is the weather?", cache_control: EPHEMERAL }]);
  assert.equal(input[1].content, "What is the weather?");
  for (const mode of ["state", "call"]) {
    const model = fakeModel().respond(new AIMessage("fine")).respond(new AIMessage("still fine"));
    const agent = createAgent({ model, tools: [], middleware: [langchainMiddleware({ mode, maxTokens: 100_000, cacheBreakpoints: true })] });
    const first = await agent.invoke({ messages: [new HumanMessage("Hello"), new AIMessage("Hi"), new HumanMessage("Plan a trip.")] });
    const sent = model.calls[0].messages;
    assert.ok(marked(sent.at(-1)), `${mode}: the call's newest message is marked`);
    assert.equal(marks(first.messages).length, 0, `${mode}: the state holds the messages themselves`);
  }
});
