// chat-history-reducer/ai-sdk with the real AI SDK, 5 and 7 (SPEC §11): the middleware in
// generateText and streamText, contextWindowStep in a multi-step loop, and the reload tool
// answering from the store, with the SDKs' mock models.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as ai5 from "ai";
import { MockLanguageModelV2 } from "ai/test";
import * as ai7 from "ai-v7";
import { MockLanguageModelV4 } from "ai-v7/test";
import * as adapter5 from "chat-history-reducer/ai-sdk";
import { estimateTokens } from "chat-history-reducer";
import { aiSdk7Adapter, offloadIds, report } from "./frameworks.mjs";

const adapter7 = await aiSdk7Adapter();

/** (The AI SDK 7 project has a copy of the package, with a ReduceError class of its own.) */
const reduceError = (code, field) => (e) => e instanceof Error && e.name === "ReduceError" && e.code === code && e.field === field;

/** What differs between the two SDKs' model specifications and options. */
const SDKS = [
  {
    name: "AI SDK 5",
    ai: ai5,
    adapter: adapter5,
    Mock: MockLanguageModelV2,
    finish: (reason) => reason,
    usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
    // (AI SDK 7 refuses system messages in `messages`: it takes `instructions`.)
    system: (text) => ({ system: text }),
  },
  {
    name: "AI SDK 7",
    ai: ai7,
    adapter: adapter7,
    Mock: MockLanguageModelV4,
    finish: (reason) => ({ unified: reason, raw: undefined }),
    usage: { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } },
    system: (text) => ({ instructions: text }),
  },
];

/** Two large tool results read earlier, then a question about the first one's end. */
function history() {
  const read = (n) => [
    { role: "assistant", content: [{ type: "tool-call", toolCallId: `c${n}`, toolName: "read", input: { n } }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: `c${n}`, toolName: "read", output: { type: "text", value: report(n) } }] },
  ];
  return [
    { role: "user", content: "Read both reports." },
    ...read(1),
    ...read(2),
    { role: "assistant", content: "I have read both." },
    { role: "user", content: "How does report 1 end?" },
  ];
}

/**
 * A mock model of `sdk` that answers each call with the next of `replies`, a function of the
 * prompt (and its JSON text) returning `{ call: { name, input } }` or `{ text }`, through
 * doGenerate and doStream alike. `prompts` are the prompts it was sent.
 */
function scripted(sdk, replies) {
  const prompts = [];
  const next = (prompt) => {
    prompts.push(prompt);
    const reply = replies[prompts.length - 1];
    assert.ok(reply, `an unexpected model call (${prompts.length})`);
    return reply(prompt, JSON.stringify(prompt));
  };
  const callPart = (r) => ({ type: "tool-call", toolCallId: `call${prompts.length}`, toolName: r.call.name, input: JSON.stringify(r.call.input) });
  const model = new sdk.Mock({
    doGenerate: async ({ prompt }) => {
      const r = next(prompt);
      return {
        content: [r.call ? callPart(r) : { type: "text", text: r.text }],
        finishReason: sdk.finish(r.call ? "tool-calls" : "stop"),
        usage: sdk.usage,
        warnings: [],
      };
    },
    doStream: async ({ prompt }) => {
      const r = next(prompt);
      const parts = [{ type: "stream-start", warnings: [] }];
      if (r.call) parts.push(callPart(r));
      else parts.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: r.text }, { type: "text-end", id: "t" });
      parts.push({ type: "finish", finishReason: sdk.finish(r.call ? "tool-calls" : "stop"), usage: sdk.usage });
      return { stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } }) };
    },
  });
  return { model, prompts };
}

/** The model's side of the reload: it finds the preview's id, calls context_reload with it,
 * and answers from what came back. */
function reloadingModel(sdk, seen) {
  return scripted(sdk, [
    (prompt, text) => {
      seen.firstPrompt = prompt;
      seen.id = offloadIds(text)[0];
      return { call: { name: "context_reload", input: { id: seen.id } } };
    },
    (prompt, text) => ({ text: text.includes("END-OF-REPORT-1") ? "It ends with END-OF-REPORT-1." : "I cannot tell." }),
  ]);
}

for (const sdk of SDKS) {
  const { generateText, streamText, stepCountIs, wrapLanguageModel, tool, jsonSchema } = sdk.ai;
  const { contextReloadTool, contextWindowMiddleware, contextWindowStep } = sdk.adapter;

  for (const [how, run] of [
    ["generateText", async (options) => {
      const r = await generateText(options);
      return { text: r.text, steps: r.steps };
    }],
    ["streamText", async (options) => {
      const r = streamText(options);
      return { text: await r.text, steps: await r.steps };
    }],
  ]) {
    test(`${sdk.name}, ${how}: the middleware shows a preview, the model reloads it by id and gets the original from the store`, async () => {
      const store = new Map();
      const seen = {};
      const { model, prompts } = reloadingModel(sdk, seen);
      const result = await run({
        model: wrapLanguageModel({ model, middleware: contextWindowMiddleware({ strategy: "progressive", maxTokens: 6000, minToolRun: 6, store }) }),
        ...sdk.system("You are brief."),
        messages: history(),
        tools: { context_reload: contextReloadTool(store) },
        stopWhen: stepCountIs(4),
        maxRetries: 0,
      });
      assert.equal(prompts.length, 2);
      const first = JSON.stringify(seen.firstPrompt);
      assert.match(first, /\[offloaded \d+ tokens as ctx_[0-9a-f]{16}; call context_reload/);
      assert.ok(!first.includes("END-OF-REPORT-1"), "the first prompt shows report 1 as a preview");
      assert.ok(store.has(seen.id), "the offload is in the store before the model is called");
      const [original] = store.get(seen.id);
      assert.equal(original.role, "tool");
      assert.ok(original.content[0].output.value.endsWith("END-OF-REPORT-1"));
      // What the tool answered is the stored original, and the next call was shown it.
      assert.deepEqual(result.steps[0].toolResults[0].output, store.get(seen.id));
      assert.equal(result.text, "It ends with END-OF-REPORT-1.");
      for (const prompt of prompts) {
        assert.deepEqual(prompt[0], { role: "system", content: "You are brief." }, "the system message stays, first");
        assert.ok(estimateTokens(prompt, { format: "vercel" }) <= 6000, "every call within the budget");
      }
    });
  }

  test(`${sdk.name}: contextWindowStep reduces a growing tool loop only when a trigger fires, and reload works through the store`, async () => {
    const store = new Map();
    const step = contextWindowStep({ strategy: "progressive", maxTokens: 6000, store });
    const stepped = [];
    let reloadId;
    const reading = (n) => () => ({ call: { name: "read", input: { n } } });
    const { model, prompts } = scripted(sdk, [
      reading(1), reading(2), reading(3), reading(4),
      (prompt, text) => {
        // Report 1's preview: the id shown beside its head.
        const at = text.indexOf("report 1: lorem");
        reloadId = offloadIds(text.slice(Math.max(0, at - 400), at)).at(-1);
        return { call: { name: "context_reload", input: { id: reloadId } } };
      },
      (prompt, text) => ({ text: text.includes("END-OF-REPORT-1") ? "found" : "missing" }),
    ]);
    const result = await generateText({
      model,
      messages: [{ role: "user", content: "Read reports 1 to 4, then tell me how report 1 ends." }],
      tools: {
        read: tool({ description: "Reads a report.", inputSchema: jsonSchema({ type: "object", properties: { n: { type: "number" } }, required: ["n"] }), execute: async ({ n }) => report(n) }),
        context_reload: contextReloadTool(store),
      },
      prepareStep: async (options) => {
        const out = await step(options);
        stepped.push({ given: options.messages, out });
        return out;
      },
      stopWhen: stepCountIs(8),
      maxRetries: 0,
    });
    assert.equal(result.text, "found");
    assert.equal(prompts.length, 6);
    // Below the trigger the step returns nothing, so the prompt goes as it is.
    assert.equal(stepped[0].out, undefined);
    assert.equal(stepped[1].out, undefined);
    assert.ok(stepped.some((s) => s.out !== undefined), "a reduction once the reports pile up");
    for (const s of stepped) {
      if (s.out !== undefined) assert.ok(estimateTokens(s.out.messages, { format: "vercel" }) <= 4800, "reduced to the target");
    }
    for (const prompt of prompts) assert.ok(estimateTokens(prompt, { format: "vercel" }) <= 6000, "every call within the budget");
    assert.ok(store.get(reloadId)[0].content[0].output.value.endsWith("END-OF-REPORT-1"));
    // AI SDK 7 carries the messages a step returned into the next steps; AI SDK 5 hands each
    // step the whole history again, reduced again.
    const afterFirst = stepped.slice(stepped.findIndex((s) => s.out !== undefined) + 1);
    const carried = afterFirst.map((s) => JSON.stringify(s.given).includes("[offloaded"));
    assert.deepEqual(carried, carried.map(() => sdk.name === "AI SDK 7"));
  });

  test(`${sdk.name}: the tools' schemas count against the budget unless reservedTokens is set`, async () => {
    const history = [
      { role: "user", content: "Read report 1." },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "read", input: { n: 1 } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "text", value: report(1) } }] },
      { role: "assistant", content: "Read." },
      { role: "user", content: "Thanks." },
    ];
    const tools = {
      lookup: tool({ description: "Looks things up. " + "It knows many things. ".repeat(800), inputSchema: jsonSchema({ type: "object", properties: { q: { type: "string" } } }) }),
    };
    const shown = async (config) => {
      const { model, prompts } = scripted(sdk, [() => ({ text: "ok" })]);
      await generateText({ model: wrapLanguageModel({ model, middleware: contextWindowMiddleware(config) }), messages: history, tools, maxRetries: 0 });
      return JSON.stringify(prompts[0]);
    };
    assert.ok(estimateTokens(history, { format: "vercel" }) < 4000, "the messages alone fit");
    assert.ok((await shown({ strategy: "progressive", maxTokens: 6000, minToolRun: 6 })).includes("[offloaded"), "with the tools counted, they do not");
    assert.ok((await shown({ strategy: "progressive", maxTokens: 6000, minToolRun: 6, reservedTokens: 0 })).includes("END-OF-REPORT-1"));
    await assert.rejects(shown({ strategy: "progressive", maxTokens: 2000 }),
      (e) => reduceError("INVALID_CONFIG", "reservedTokens")(e) && /counted from what the call sends beside its messages/.test(e.message));
  });

  test(`${sdk.name}: a summary written into the prompt has the prompt's shape (text parts), the system message kept first`, async () => {
    const chat = [];
    for (let t = 0; t < 30; t++) chat.push({ role: "user", content: `Question ${t}: ` + "tell me more ".repeat(40) }, { role: "assistant", content: `Answer ${t}: ` + "here is more ".repeat(40) });
    chat.push({ role: "user", content: "And finally?" });
    const summarizer = async ({ messages }) => `The user asked ${messages.length / 2} questions.`;
    const { model, prompts } = scripted(sdk, [() => ({ text: "ok" })]);
    await generateText({
      model: wrapLanguageModel({ model, middleware: contextWindowMiddleware({ strategy: "summarize", maxTokens: 2000, summarizer }) }),
      ...sdk.system("You are brief."),
      messages: chat,
      maxRetries: 0,
    });
    const [prompt] = prompts;
    assert.deepEqual(prompt[0], { role: "system", content: "You are brief." });
    const summary = prompt.find((m) => JSON.stringify(m).includes("<conversation-summary>"));
    assert.ok(summary, "the prompt has the summary");
    for (const m of prompt.slice(1)) assert.ok(Array.isArray(m.content) && m.content.every((p) => p.type === "text"), JSON.stringify(m).slice(0, 200));
    assert.ok(prompt.length < chat.length);
  });

  test(`${sdk.name}: contextReloadTool answers an unknown id in words, reads async stores, and needs a store`, async () => {
    const store = { get: async (id) => (id === "ctx_0000000000000001" ? [{ role: "user", content: "the original" }] : undefined) };
    const reload = contextReloadTool(store);
    assert.equal(typeof reload.execute, "function");
    const options = { toolCallId: "t", messages: [] };
    assert.deepEqual(await reload.execute({ id: "ctx_0000000000000001" }, options), [{ role: "user", content: "the original" }]);
    assert.match(await reload.execute({ id: "ctx_ffffffffffffffff" }, options), /No offloaded content has the id "ctx_ffffffffffffffff"/);
    for (const bad of [undefined, {}, { set() {} }]) {
      assert.throws(() => contextReloadTool(bad), reduceError("INVALID_CONFIG", "store"));
    }
  });

  test(`${sdk.name}: a bad config fails when the middleware or step is made, naming the option`, () => {
    assert.throws(() => contextWindowMiddleware({ maxTokens: 1000, keepLats: 2 }), reduceError("INVALID_CONFIG", "keepLats"));
    assert.throws(() => contextWindowStep({ maxTokens: 1000, mode: "call" }), reduceError("INVALID_CONFIG", "mode"));
    assert.throws(() => contextWindowStep({ strategy: "progressive" }), (e) => e.name === "ReduceError" && e.code === "INVALID_CONFIG");
  });
}

test("the core entry imports no framework; the adapters import theirs", () => {
  const pkg = join(dirname(fileURLToPath(import.meta.url)), "node_modules", "chat-history-reducer");
  const imports = (file) => [...readFileSync(file, "utf8").matchAll(/\bfrom\s+"([^"]+)"|\bimport\s*\(\s*"([^"]+)"/g)].map((m) => m[1] ?? m[2]);
  const core = ["node.js", "workerd.js", ...readdirSync(join(pkg, "dist"), { recursive: true }).filter((f) => f.endsWith(".js")).map((f) => join("dist", f))];
  for (const file of core) {
    const frameworks = imports(join(pkg, file)).filter((s) => /^(ai|langchain|@langchain\/|@ai-sdk\/)/.test(s));
    assert.deepEqual(frameworks, [], file);
  }
  assert.ok(imports(join(pkg, "ai-sdk.js")).includes("ai"));
  assert.ok(imports(join(pkg, "langchain.js")).includes("langchain"));
  const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
  for (const peer of ["ai", "langchain", "@langchain/core"]) assert.equal(manifest.peerDependenciesMeta[peer].optional, true, peer);
  assert.deepEqual(Object.keys(manifest.exports["./ai-sdk"]), ["types", "default"]);
});
