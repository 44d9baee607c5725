// chat-history-reducer/langchain with the real LangChain v1 (SPEC §11): createAgent with
// fakeModel() and the middleware in both modes, the reload tool registered through the
// middleware answering from the store.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createAgent, tool } from "langchain";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { MemorySaver } from "@langchain/langgraph";
import { ReduceError, estimateTokens } from "chat-history-reducer";
import { contextReloadTool, contextWindowMiddleware } from "chat-history-reducer/langchain";
import { offloadIds, report } from "./frameworks.mjs";

/** Two large tool results read earlier, then a question about the first one's end. */
function history() {
  const read = (n) => [
    new AIMessage({ content: "", tool_calls: [{ id: `c${n}`, name: "read", args: { n } }] }),
    new ToolMessage({ content: report(n), tool_call_id: `c${n}`, name: "read" }),
  ];
  return [new HumanMessage("Read both reports."), ...read(1), ...read(2), new AIMessage("I have read both."), new HumanMessage("How does report 1 end?")];
}

const textOf = (messages) => messages.map((m) => m.text).join("\n");
// (The tool run stays two messages: a preview, not a digest; see docs/options.md.)
const config = (mode, store) => ({ mode, strategy: "progressive", maxTokens: 6000, minToolRun: 6, store });

/** The model's side of the reload: it finds the preview's id, calls context_reload with it,
 * and answers from what came back. */
function reloadingModel(seen) {
  return fakeModel()
    .respond((messages) => {
      seen.id = offloadIds(textOf(messages))[0];
      return new AIMessage({ content: "", tool_calls: [{ id: "r1", name: "context_reload", args: { id: seen.id } }] });
    })
    .respond((messages) => new AIMessage(textOf(messages).includes("END-OF-REPORT-1") ? "It ends with END-OF-REPORT-1." : "I cannot tell."));
}

for (const mode of ["state", "call"]) {
  test(`mode "${mode}": the model is shown a preview, reloads it through the middleware's tool, and gets the original from the store`, async () => {
    const store = new Map();
    const seen = {};
    const model = reloadingModel(seen);
    const agent = createAgent({ model, tools: [], systemPrompt: "Be brief.", middleware: [contextWindowMiddleware(config(mode, store))] });
    const out = await agent.invoke({ messages: history() });
    assert.equal(model.callCount, 2);
    const [first, second] = model.calls.map((c) => c.messages);
    assert.equal(first[0].getType(), "system", "the system prompt goes first");
    assert.ok(!textOf(first).includes("END-OF-REPORT-1"), "the first call shows report 1 as a preview");
    assert.match(textOf(first), /\[offloaded \d+ tokens as ctx_[0-9a-f]{16}; call context_reload/);
    assert.ok(store.has(seen.id), "the offload is in the store");
    assert.ok(store.get(seen.id)[0] instanceof ToolMessage && store.get(seen.id)[0].text.endsWith("END-OF-REPORT-1"));
    const reloaded = second.find((m) => m.getType() === "tool" && m.tool_call_id === "r1");
    assert.ok(reloaded, "the agent ran context_reload");
    assert.deepEqual(JSON.parse(reloaded.text), [{ type: "tool", content: report(1), name: "read", tool_call_id: "c1" }]);
    assert.equal(out.messages.at(-1).text, "It ends with END-OF-REPORT-1.");
    for (const call of model.calls) assert.ok(estimateTokens(call.messages) <= 6000, "every call within the budget");
    const kept = textOf(out.messages);
    if (mode === "state") {
      // The agent's own messages were rewritten: the previews stay in its state.
      assert.ok(out.messages.some((m) => m.text.startsWith("[offloaded")));
      assert.ok(!kept.includes("END-OF-REPORT-2"));
    } else {
      // Each call was reduced; the state still holds every original.
      assert.ok(kept.includes("END-OF-REPORT-1") && kept.includes("END-OF-REPORT-2"));
      assert.ok(!out.messages.some((m) => m.text.startsWith("[offloaded")));
    }
  });
}

test(`mode "state": a thread's later turns start from the reduced state, which is not reduced again below the trigger`, async () => {
  const store = new Map();
  const model = fakeModel().respond(new AIMessage("first answer")).respond(new AIMessage("second answer"));
  const agent = createAgent({ model, tools: [], middleware: [contextWindowMiddleware(config("state", store))], checkpointer: new MemorySaver() });
  const thread = { configurable: { thread_id: "t1" } };
  const once = await agent.invoke({ messages: history() }, thread);
  const previews = once.messages.filter((m) => m.text.startsWith("[offloaded"));
  assert.ok(previews.length > 0);
  const twice = await agent.invoke({ messages: [new HumanMessage("And report 2?")] }, thread);
  const [, secondCall] = model.calls.map((c) => c.messages);
  // The previews (the same objects' ids) went on into the next turn as they were.
  assert.deepEqual(secondCall.filter((m) => m.text.startsWith("[offloaded")).map((m) => m.id), previews.map((m) => m.id));
  assert.equal(twice.messages.at(-1).text, "second answer");
  assert.equal(twice.messages.length, once.messages.length + 2);
});

test("below the trigger nothing changes: the model gets the messages as they are, the state keeps them", async () => {
  for (const mode of ["state", "call"]) {
    const model = fakeModel().respond(new AIMessage("fine"));
    const agent = createAgent({ model, tools: [], middleware: [contextWindowMiddleware({ mode, maxTokens: 100_000 })] });
    const input = history();
    const out = await agent.invoke({ messages: input });
    assert.deepEqual(model.calls[0].messages.map((m) => m.text), input.map((m) => m.text), mode);
    assert.deepEqual(out.messages.slice(0, input.length).map((m) => m.text), input.map((m) => m.text), mode);
  }
});

test(`mode "call" counts the system prompt and the tools' schemas against the budget unless reservedTokens is set`, async () => {
  const input = [new HumanMessage("Read report 1."), ...history().slice(1, 3), new AIMessage("Read."), new HumanMessage("Thanks.")];
  const lookup = tool(async () => "nothing", { name: "lookup", description: "Looks things up. " + "It knows many things. ".repeat(400), schema: { type: "object", properties: { q: { type: "string" } } } });
  const shown = async (options) => {
    const model = fakeModel().respond(new AIMessage("ok"));
    const agent = createAgent({ model, tools: [lookup], systemPrompt: "Be brief. ".repeat(300), middleware: [contextWindowMiddleware({ mode: "call", strategy: "progressive", maxTokens: 6000, minToolRun: 6, ...options })] });
    await agent.invoke({ messages: input });
    return textOf(model.calls[0].messages);
  };
  assert.ok(estimateTokens(input) < 4000, "the messages alone fit");
  assert.ok((await shown({})).includes("[offloaded"), "with the system prompt and tools counted, they do not");
  assert.ok((await shown({ reservedTokens: 0 })).includes("END-OF-REPORT-1"));
});

test("mode is the adapter's: validated, and not handed to the core; other options are the core's", () => {
  const invalid = (field) => (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === field;
  assert.throws(() => contextWindowMiddleware({ maxTokens: 1000, mode: "both" }), invalid("mode"));
  assert.throws(() => contextWindowMiddleware({ maxTokens: 1000, mode: "call", keepLats: 1 }), invalid("keepLats"));
  assert.throws(() => contextWindowMiddleware({ mode: "state" }), (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG");
  assert.equal(contextWindowMiddleware({ maxTokens: 1000, mode: "call" }).name, "ContextWindowMiddleware");
});

test("the reload tool is registered only with a store; it answers an unknown id in words", async () => {
  assert.deepEqual(contextWindowMiddleware({ maxTokens: 1000 }).tools, []);
  const store = new Map([["ctx_0000000000000001", [new HumanMessage("the original"), new SystemMessage("rules")]]]);
  const [reload] = contextWindowMiddleware({ maxTokens: 1000, store }).tools;
  assert.equal(reload.name, "context_reload");
  assert.deepEqual(JSON.parse(await reload.invoke({ id: "ctx_0000000000000001" })),
    [{ type: "human", content: "the original" }, { type: "system", content: "rules" }]);
  assert.match(await reload.invoke({ id: "ctx_ffffffffffffffff" }), /No offloaded content has the id "ctx_ffffffffffffffff"/);
  const async = contextReloadTool({ get: async () => [new AIMessage("later")] });
  assert.deepEqual(JSON.parse(await async.invoke({ id: "ctx_0000000000000002" })), [{ type: "ai", content: "later" }]);
  assert.throws(() => contextReloadTool({}), (e) => e instanceof ReduceError && e.field === "store");
});
