// Orphans (SPEC §9.4): tool results whose call is not in the history, calls no result
// answers. An app that keeps the last N messages cuts calls off their results: providers
// refuse the history ("messages with role 'tool' must be a response to a preceding message
// with 'tool_calls'"). Every output is without them, under budget too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { reduce, reduceSync, shouldReduce, analyze, estimateTokens, ChatHistory } from "chat-history-reducer";
import { HumanMessage, AIMessage, ToolMessage } from "@langchain/core/messages";
import { accepts } from "./providers.mjs";
import { build } from "./conversations.mjs";

/** Each fixture sliced after its first call: it opens on the results of a call that is gone.
 * `orphans`: the indices of the messages that carry only those results; `dropped`: with the
 * answer after them, which `startOn: "user"` drops too. */
const sliced = {
  openai: { make: () => { const m = build.openai(); return [m[0], ...m.slice(3)]; }, orphans: [1, 2], dropped: [1, 2, 3] },
  "openai-responses": { make: () => { const m = build["openai-responses"](); return [m[0], ...m.slice(5)]; }, orphans: [1, 2], dropped: [1, 2, 3] },
  anthropic: { make: () => build.anthropic().slice(2), orphans: [0], dropped: [0, 1] },
  vercel: { make: () => { const m = build.vercel(); return [m[0], ...m.slice(3)]; }, orphans: [1, 2], dropped: [1, 2, 3] },
  gemini: { make: () => build.gemini().slice(2), orphans: [0], dropped: [0, 1] },
  langchain: { make: () => { const m = build.langchain(); return [m[0], ...m.slice(3)]; }, orphans: [1, 2], dropped: [1, 2, 3] },
};

/** Every input index exactly once across the lists (SPEC §8). */
function assertAccounted(r, input, where) {
  const all = [...r.kept, ...r.dropped, ...r.summarized, ...r.rewritten].sort((a, b) => a - b);
  assert.deepEqual(all, input.map((_, i) => i), `${where}: accounting`);
  r.messages.filter((m) => input.includes(m)).forEach((m, k) => assert.equal(m, input[r.kept[k]], `${where}: kept objects`));
}

for (const [format, { make, orphans, dropped }] of Object.entries(sliced)) {
  test(`${format}: orphan results are dropped, under budget too, and by every strategy whatever protects them`, async () => {
    const input = make();
    assert.throws(() => accepts[format](input), undefined, "the provider refuses the sliced history");
    const snapshot = JSON.stringify(input);

    // Under budget: no trigger fires, the orphans go all the same (with what startOn asks).
    const quiet = { maxTokens: 1e9 };
    assert.equal(shouldReduce(input, quiet), true, "shouldReduce: there are orphans to remove");
    assert.equal(analyze(input, quiet).shouldReduce, true);
    const r = reduceSync(input, quiet);
    assert.equal(r.reduced, true);
    assert.deepEqual(r.dropped, dropped);
    assert.deepEqual(r.rewritten, []);
    const event = r.events.find((e) => e.type === "orphans");
    assert.equal(event?.messages, orphans.length, "an event says so");
    assert.equal(r.tokensAfter, estimateTokens(r.messages));
    assert.equal(r.tokensBefore, estimateTokens(input));
    accepts[format](r.messages);
    assertAccounted(r, input, `${format} under budget`);
    assert.equal(shouldReduce(r.messages, quiet), false, "the cleaned history needs nothing more");
    assert.equal(reduceSync(r.messages, quiet).reduced, false);
    // startOn "any": only the orphans go.
    assert.deepEqual(reduceSync(input, { ...quiet, startOn: "any" }).dropped, format === "anthropic" || format === "gemini" ? dropped : orphans);

    // Over budget, every strategy; keepLast covering the whole history protects no orphan.
    const total = estimateTokens(input);
    const summarized = [];
    const summarizer = async ({ messages }) => { summarized.push(...messages); return "an earlier conversation"; };
    for (const strategy of ["truncate", "priority", "summarize", "progressive"]) {
      for (const config of [{ maxTokens: Math.floor(total / 3) }, { maxTokens: Math.floor(total * 0.9), keepLast: 1000 }, quiet]) {
        const c = { ...config, strategy, ...(strategy === "summarize" ? { summarizer } : { largeMessageTokens: 100, minToolRun: 2 }) };
        const where = `${format} ${JSON.stringify(c)}`;
        const out = await reduce(input, c);
        for (const i of orphans) assert.ok(out.dropped.includes(i), `${where}: orphan ${i} dropped`);
        accepts[format](out.messages);
        assertAccounted(out, input, where);
        for (const originals of Object.values(out.offloaded)) for (const o of originals) assert.ok(!orphans.includes(input.indexOf(o)), `${where}: no orphan offloaded`);
        if (!out.overBudget) assert.equal((await reduce(out.messages, c)).reduced, false, `${where}: stable`);
      }
    }
    assert.ok(summarized.length > 0 && summarized.every((m) => !orphans.includes(input.indexOf(m))), "the summarizer is never asked about an orphan");
    assert.equal(JSON.stringify(input), snapshot, "the input is untouched");
  });
}

test("a message with orphan results beside its own content stands without them, counted as it stands (SPEC §8 tokensAfter), by every strategy", async () => {
  // An Anthropic user turn with a tool_result whose tool_use is gone, and the user's text:
  // its copy without the result was counted as the original, 228 tokens more (audit).
  const input = [
    { role: "user", content: [{ type: "tool_result", tool_use_id: "gone", content: "x ".repeat(300) }, { type: "text", text: "thanks, now explain the result" }] },
    { role: "assistant", content: "Sure: ..." },
    { role: "user", content: "and next?" },
    { role: "assistant", content: "ok" },
  ];
  const summarizer = async () => "an earlier conversation";
  for (const strategy of ["truncate", "priority", "summarize", "progressive"]) {
    for (const maxTokens of [300, 1e9, 60]) {
      const config = { strategy, maxTokens, summarizer };
      const r = await reduce(input, config);
      const where = `${strategy} ${maxTokens}`;
      assert.equal(r.tokensAfter, estimateTokens(r.messages), where);
      assert.equal(r.tokensBefore, estimateTokens(input), where);
      accepts.anthropic(r.messages);
      assertAccounted(r, input, where);
    }
  }
  const r = reduceSync(input, { maxTokens: 300 });
  assert.deepEqual(r.rewritten, [0]);
  assert.deepEqual(r.messages[0].content, [{ type: "text", text: "thanks, now explain the result" }]);
  assert.ok(r.tokensAfter < 60, `${r.tokensAfter}`);
});

test("an orphan inside another call's group goes; the call and its own results stay, protected or not", () => {
  const input = build.openai();
  const last = input.length - 5; // the last turn: user, calls, result, result, answer
  const orphan = { role: "tool", tool_call_id: "gone", content: "a stale result" };
  input.splice(last + 2, 0, orphan);
  assert.throws(() => accepts.openai(input));
  for (const config of [{ maxTokens: 1e9 }, { maxTokens: Math.floor(estimateTokens(input) / 3), keepLast: 4 }]) {
    const r = reduceSync(input, config);
    assert.ok(r.dropped.includes(last + 2), JSON.stringify(config));
    for (const i of [last + 1, last + 3, last + 4]) assert.ok(r.kept.includes(i), `${JSON.stringify(config)}: ${i} kept`);
    accepts.openai(r.messages);
    assertAccounted(r, input, JSON.stringify(config));
  }
  assert.deepEqual(reduceSync(input, { maxTokens: 1e9 }).dropped, [last + 2], "under budget, only the orphan");
});

// A turn whose tool call got no result (the app stopped the agent, the tool crashed, the
// user moved on): per format, the user's question, the call alone, the call beside the
// assistant's text, the result of a call, and the call's turn as it must stand without it.
const stray = {
  openai: {
    user: (t) => ({ role: "user", content: t }),
    alone: (id) => ({ role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "search", arguments: "{}" } }] }),
    beside: (id) => ({ role: "assistant", content: "Let me check.", tool_calls: [{ id, type: "function", function: { name: "search", arguments: "{}" } }], refusal: null }),
    result: (id) => [{ role: "tool", tool_call_id: id, content: "found" }],
    without: { role: "assistant", content: "Let me check.", refusal: null },
  },
  anthropic: {
    user: (t) => ({ role: "user", content: t }),
    alone: (id) => ({ role: "assistant", content: [{ type: "thinking", thinking: "search", signature: "s" }, { type: "tool_use", id, name: "search", input: {} }] }),
    beside: (id) => ({ role: "assistant", content: [{ type: "text", text: "Let me check." }, { type: "tool_use", id, name: "search", input: {} }] }),
    result: (id) => [{ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "found" }] }],
    without: { role: "assistant", content: [{ type: "text", text: "Let me check." }] },
  },
  vercel: {
    user: (t) => ({ role: "user", content: t }),
    alone: (id) => ({ role: "assistant", content: [{ type: "reasoning", text: "search" }, { type: "tool-call", toolCallId: id, toolName: "search", input: {} }] }),
    beside: (id) => ({ role: "assistant", content: [{ type: "text", text: "Let me check." }, { type: "tool-call", toolCallId: id, toolName: "search", input: {} }] }),
    result: (id) => [{ role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "search", output: { type: "text", value: "found" } }] }],
    without: { role: "assistant", content: [{ type: "text", text: "Let me check." }] },
  },
  gemini: {
    user: (t) => ({ role: "user", parts: [{ text: t }] }),
    alone: (id) => ({ role: "model", parts: [{ functionCall: { name: `search_${id}`, args: {} } }] }),
    beside: (id) => ({ role: "model", parts: [{ text: "Let me check." }, { functionCall: { name: `search_${id}`, args: {} } }] }),
    result: (id) => [{ role: "user", parts: [{ functionResponse: { name: `search_${id}`, response: { result: "found" } } }] }],
    without: { role: "model", parts: [{ text: "Let me check." }] },
  },
  langchain: {
    user: (t) => new HumanMessage(t),
    alone: (id) => new AIMessage({ content: "", tool_calls: [{ id, name: "search", args: {} }] }),
    beside: (id) => new AIMessage({ content: "Let me check.", tool_calls: [{ id, name: "search", args: {} }] }),
    result: (id) => [new ToolMessage({ content: "found", tool_call_id: id })],
    without: null,
  },
  "openai-responses": {
    user: (t) => ({ type: "message", role: "user", content: [{ type: "input_text", text: t }] }),
    // (An item of its own, with the reasoning item before it: they go together.)
    alone: (id) => [{ type: "reasoning", id: `rs_${id}`, summary: [] }, { type: "function_call", call_id: id, name: "search", arguments: "{}" }],
    beside: (id) => ({ type: "function_call", call_id: id, name: "search", arguments: "{}" }),
    result: (id) => [{ type: "function_call_output", call_id: id, output: "found" }],
    without: null,
  },
};

for (const [format, f] of Object.entries(stray)) {
  test(`${format}: a tool call that no result answers goes (its turn's text stays), under budget too, by every strategy; the latest turn's pending call stays`, async () => {
    const input = [f.user("Find the report."), f.alone("c1"), f.user("Never mind. Find the memo."), f.beside("c2"), f.user("Thanks, that is all."), f.beside("c3")].flat();
    // The last call waits for its result: the history is as an agent loop has it.
    const pending = input.length - 1;
    const alone = Array.isArray(f.alone("x")) ? [1, 2] : [1];
    const beside = alone.at(-1) + 2;
    const snapshot = JSON.stringify(input);
    for (const strategy of ["truncate", "priority", "summarize", "progressive"]) {
      const config = { maxTokens: 1e9, strategy, summarizer: async () => "s" };
      assert.equal(shouldReduce(input, config), true, `${format} ${strategy}: shouldReduce`);
      const r = await reduce(input, config);
      const where = `${format} ${strategy}`;
      assertAccounted(r, input, where);
      // (Responses: the call beside the text is an item of its own, and goes whole.)
      const separate = format === "openai-responses";
      assert.deepEqual(r.dropped, separate ? [...alone, beside] : alone, `${where}: dropped`);
      assert.deepEqual(r.rewritten, separate ? [] : [beside], `${where}: rewritten`);
      assert.ok(r.kept.includes(pending), `${where}: the pending call stays`);
      assert.equal(r.messages.at(-1), input[pending], `${where}: as it was`);
      assert.equal(r.events.find((e) => e.type === "orphans")?.messages, r.dropped.length + r.rewritten.length, `${where}: the orphans event`);
      if (!separate) {
        const copy = r.messages[r.kept.filter((i) => i < beside).length];
        assert.notEqual(copy, input[beside]);
        if (f.without !== null) assert.deepEqual(copy, f.without, `${where}: the turn without its call`);
        else assert.deepEqual([copy.content, copy.tool_calls], ["Let me check.", []], `${where}: the turn without its call`);
        assert.equal(r.tokensAfter, estimateTokens(r.messages), `${where}: counted as it stands`);
      }
      // Once answered, it is a call as any other; and the result is not lost by the next turn.
      accepts[format]([...r.messages, ...f.result("c3")]);
      assert.equal(reduceSync([...r.messages, ...f.result("c3")], { maxTokens: 1e9 }).reduced, false, `${where}: stable`);
    }
    assert.equal(JSON.stringify(input), snapshot, "the input is untouched");
    // The pending call goes once the history moves on without its result.
    const moved = [...input, f.user("Stop.")];
    const r = reduceSync(moved, { maxTokens: 1e9 });
    assert.ok(!r.kept.includes(pending), `${format}: the call is no longer pending`);
    accepts[format](r.messages);
  });
}

test("an orphan counts for nothing toward the targets: a large abandoned call or stray result makes no strategy remove more", async () => {
  // A write_file whose result never came (the user moved on), and a large result whose call
  // was sliced off: what is left without them fits the target, so nothing else goes.
  const big = "w ".repeat(2000);
  const call = { role: "assistant", content: null, tool_calls: [{ id: "big", type: "function", function: { name: "write_file", arguments: JSON.stringify({ text: big }) } }] };
  const stray = { role: "tool", tool_call_id: "gone", content: big };
  const rest = [{ role: "user", content: "q1" }, { role: "assistant", content: "a1" }, { role: "user", content: "q2" }];
  const tail = [{ role: "user", content: "never mind; q3" }, { role: "assistant", content: "a3" }];
  const config = { maxTokens: 1000 };
  for (const [input, orphan] of [[[...rest, call, ...tail], 3], [[stray, ...rest, ...tail], 0]]) {
    assert.ok(estimateTokens(input) > config.maxTokens, "the orphan alone is over the budget");
    assert.equal(reduceSync(input.filter((_, i) => i !== orphan), config).reduced, false, "without it, nothing to do");
    let asked = 0;
    for (const strategy of ["truncate", "priority", "summarize", "progressive"]) {
      const r = await reduce(input, { ...config, strategy, summarizer: async () => { asked++; return "s"; } });
      assert.deepEqual(r.dropped, [orphan], `${strategy}: only the orphan goes`);
      assert.deepEqual([r.summarized, r.rewritten, r.overBudget], [[], [], false], strategy);
      assert.equal(r.tokensAfter, estimateTokens(r.messages), strategy);
    }
    assert.equal(asked, 0, "no summarizer is asked");
  }
});

test("a call is pending in the latest step only: the model calling again without its result makes it an orphan", () => {
  // The agent reduces before its next model call; the first call's tool crashed and the
  // model called again. (Responses: the items of one answer are one step; see below.)
  for (const [format, f] of Object.entries(stray)) {
    if (format === "openai-responses") continue;
    const input = [f.user("Find the report."), f.alone("c1"), f.alone("c2"), ...f.result("c2")];
    for (const config of [{ maxTokens: 1e9 }, { maxTokens: 1e9, keepLast: 3 }]) {
      const r = reduceSync(input, config);
      assert.deepEqual(r.dropped, [1], `${format} ${JSON.stringify(config)}`);
      accepts[format](r.messages);
    }
    // And an assistant answer after it, or a user input.
    for (const after of [f.user("Thanks."), f.beside("c3")]) {
      const r = reduceSync([f.user("Find the report."), f.alone("c1"), after], { maxTokens: 1e9 });
      assert.deepEqual(r.dropped, [1], `${format}: followed by ${JSON.stringify(after).slice(0, 60)}`);
    }
  }
});

test("openai-responses: parallel call items of one answer stay together with their reasoning when one gets no result", () => {
  const user = (t) => ({ type: "message", role: "user", content: [{ type: "input_text", text: t }] });
  const call = (id) => ({ type: "function_call", call_id: id, name: "search", arguments: "{}" });
  const reasoning = { type: "reasoning", id: "rs_1", summary: [] };
  const input = [user("Search both."), reasoning, call("a"), call("b"), { type: "function_call_output", call_id: "b", output: "found" }, user("Thanks.")];
  const r = reduceSync(input, { maxTokens: 1e9 });
  assert.deepEqual(r.dropped, [2], "only the call no result answers");
  assert.deepEqual(r.messages, [input[0], reasoning, input[3], input[4], input[5]]);
  accepts["openai-responses"](r.messages);
  // Over budget, the answer's items go or stay together (never the reasoning item alone).
  for (const keepLast of [0, 1]) {
    const tight = reduceSync(input, { maxTokens: 12, keepLast });
    const at = tight.messages.indexOf(reasoning);
    if (at >= 0) assert.equal(tight.messages[at + 1], input[3], `keepLast ${keepLast}`);
    assert.equal(tight.messages.includes(input[3]), tight.messages.includes(reasoning), `keepLast ${keepLast}`);
  }
  // Still waiting (no user input yet): both calls are pending, the answer stays whole.
  assert.equal(reduceSync(input.slice(0, 5), { maxTokens: 1e9 }).reduced, false);
});

test("gemini: responses without ids answer the calls of the turn before by order and name; a call or response beyond them is an orphan", async () => {
  const call = (name) => ({ functionCall: { name, args: {} } });
  const response = (name) => ({ functionResponse: { name, response: { result: name } } });
  const user = (text) => ({ role: "user", parts: [{ text }] });
  const cases = [
    // Three searches, two responses: the third call goes from its turn.
    [[user("Find three."), { role: "model", parts: [call("search"), call("search"), call("search")] }, { role: "user", parts: [response("search"), response("search")] }, user("Thanks.")],
      { role: "model", parts: [call("search"), call("search")] }, 1],
    // One search, two responses, and a response of a name the turn did not call.
    [[user("Find it."), { role: "model", parts: [call("search")] }, { role: "user", parts: [response("search"), response("search"), response("lookup")] }, user("Thanks.")],
      { role: "user", parts: [response("search")] }, 2],
  ];
  for (const [input, cleaned, at] of cases) {
    assert.throws(() => accepts.gemini(input), undefined, "Gemini refuses the input");
    for (const strategy of ["truncate", "summarize", "progressive"]) {
      const r = await reduce(input, { maxTokens: 1e9, strategy, summarizer: async () => "s" });
      assert.deepEqual(r.rewritten, [at], strategy);
      assert.deepEqual(r.messages[at], cleaned, strategy);
      accepts.gemini(r.messages);
    }
  }
  // Taken over by the next call on the same messages, and on a history with one message
  // more before them (its readings re-paired as fresh ones): the same.
  const [input] = cases[0];
  const r = reduceSync(input, { maxTokens: 1e9 });
  assert.deepEqual(reduceSync(input, { maxTokens: 1e9 }), r);
  assert.deepEqual(reduceSync([user("Hello."), ...input], { maxTokens: 1e9 }).rewritten, [2]);
});

test("gemini: parallel calls answered one response turn each (as a history converted from OpenAI's) are paired, not orphans", () => {
  const call = (name, id) => ({ functionCall: { ...(id ? { id } : {}), name, args: { q: name } } });
  const response = (name, id) => ({ role: "user", parts: [{ functionResponse: { ...(id ? { id } : {}), name, response: { output: `${name} `.repeat(40) } } }] });
  const user = (text) => ({ role: "user", parts: [{ text }] });
  for (const ids of [true, false]) {
    const id = (k) => (ids ? `c${k}` : undefined);
    const input = [user("Look these up."), { role: "model", parts: [call("a", id(1)), call("b", id(2)), call("c", id(3))] },
      response("a", id(1)), response("b", id(2)), response("c", id(3)), { role: "model", parts: [{ text: "Found them." }] }, user("Thanks.")];
    const whole = reduceSync(input, { maxTokens: 1e9 });
    assert.equal(whole.reduced, false, `ids ${ids}: nothing is an orphan`);
    assert.deepEqual(whole.messages, input);
    // The call turn and its three response turns are one group: kept or removed together.
    for (const maxTokens of [40, 80, 120, 160, 200]) {
      const r = reduceSync(input, { maxTokens, startOn: "any" });
      const kept = new Set(r.kept);
      assert.ok([1, 2, 3, 4].every((k) => kept.has(k)) || [1, 2, 3, 4].every((k) => !kept.has(k)), `ids ${ids}, maxTokens ${maxTokens}: ${r.kept}`);
      assert.deepEqual(r.rewritten, []);
    }
    // The same on a second call (the reading taken over) and on copies.
    assert.deepEqual(reduceSync(input, { maxTokens: 100, startOn: "any" }).kept, reduceSync(structuredClone(input), { maxTokens: 100, startOn: "any" }).kept);
  }
  // A response after a user input, or far after its call turn, answers nothing: an orphan.
  const late = [user("q"), { role: "model", parts: [call("a"), call("b")] }, response("a"), user("and?"), response("b"), user("Thanks.")];
  const r = reduceSync(late, { maxTokens: 1e9 });
  assert.deepEqual([r.dropped, r.rewritten], [[4], [1]]);
  const far = [user("q"), { role: "model", parts: Array.from({ length: 9 }, (_, k) => call(`f${k}`)) }];
  for (let k = 0; k < 9; k++) far.push(response(`f${k}`));
  far.push(user("Thanks."));
  const f = reduceSync(far, { maxTokens: 1e9 });
  assert.deepEqual(f.dropped, [10], "the ninth response turn is past the turns a response may follow its calls by");
  reduceSync(far, { maxTokens: 1e9 });
  assert.deepEqual(reduceSync(far, { maxTokens: 1e9 }).dropped, [10], "and so after a take-over");
});

test("gemini: a call turn after a model turn that lost its calls has that model turn go (a functionCall turn follows a user turn)", async () => {
  const g = stray.gemini;
  // The first attempt's response never came; the model said something and called again.
  const input = [g.user("Find the memo."), g.beside("c1"), g.alone("c2"), ...g.result("c2"), g.user("Thanks.")];
  for (const strategy of ["truncate", "priority", "summarize", "progressive"]) {
    const r = await reduce(input, { maxTokens: 1e9, strategy, summarizer: async () => "s" });
    accepts.gemini(r.messages);
    assert.deepEqual(r.dropped, [1], strategy);
    assert.deepEqual(r.kept, [0, 2, 3, 4], strategy);
  }
});

test("gemini: two model turns whose calls are all orphans both stand without them (the second keeps no call: no turn goes for it)", async () => {
  const input = [
    { role: "user", parts: [{ text: "Find the memo." }] },
    { role: "model", parts: [{ text: "Looking in the archive." }, { functionCall: { name: "archive", args: {} } }] },
    { role: "model", parts: [{ text: "Trying the inbox too." }, { functionCall: { name: "inbox", args: {} } }] },
    { role: "user", parts: [{ text: "Never mind." }] },
    { role: "model", parts: [{ text: "OK." }] },
  ];
  for (const strategy of ["truncate", "priority", "summarize", "progressive"]) {
    const r = await reduce(input, { maxTokens: 1e9, strategy, summarizer: async () => "s" });
    assert.deepEqual([r.kept, r.dropped, r.rewritten], [[0, 3, 4], [], [1, 2]], strategy);
    assert.deepEqual(r.messages.map((m) => m.parts), [input[0].parts, [input[1].parts[0]], [input[2].parts[0]], input[3].parts, input[4].parts], strategy);
  }
});

test("gemini: a reading taken over pairs responses as a fresh one does (the turn before: by id, then by order and name), and stays stable", () => {
  const config = { maxTokens: 100000, countTokens: () => 10 }; // (counts kept: readings are taken over)
  const same = (h, what) => {
    const pick = (r) => ({ kept: r.kept, dropped: r.dropped, rewritten: r.rewritten, tokensAfter: r.tokensAfter });
    assert.deepEqual(pick(reduceSync(h, config)), pick(reduceSync(structuredClone(h), config)), what);
  };
  const call = (name, id) => ({ functionCall: { ...(id ? { id } : {}), name, args: {} } });
  const response = (name, id) => ({ functionResponse: { ...(id ? { id } : {}), name, response: {} } });
  // A response appended long after its call turn answers nothing (it follows no call turn).
  const grown = [{ role: "user", parts: [{ text: "q" }] }, { role: "model", parts: [call("a")] }];
  for (let k = 0; k < 9; k++) grown.push({ role: "user", parts: [{ text: `more ${k}` }] });
  reduceSync(grown, config);
  grown.push({ role: "user", parts: [response("a")] });
  same(grown, "a response far from its call");
  // A turn of calls replaced: the responses after it are paired again by order and name.
  const replaced = [{ role: "user", parts: [{ text: "q" }] }, { role: "model", parts: [call("a", "c0"), call("a", "c1")] },
    { role: "user", parts: [response("a"), response("a")] }, { role: "model", parts: [{ text: "done" }] }, { role: "user", parts: [{ text: "next" }] }];
  reduceSync(replaced, config);
  replaced[1] = { role: "model", parts: [call("b", "c0"), call("a", "c1")] };
  same(replaced, "a call turn replaced");
  // Two calls of one id, a response by id and one by name: reduced, then reduced again.
  const twice = [{ role: "user", parts: [{ text: "q" }] }, { role: "model", parts: [call("a", "c5"), call("a", "c5"), call("b", "c9")] },
    { role: "user", parts: [response("a", "c5"), response("a")] }, { role: "model", parts: [{ text: "done" }] }, { role: "user", parts: [{ text: "next" }] }];
  const r = reduceSync(twice, config);
  accepts.gemini(r.messages);
  assert.equal(reduceSync(r.messages, config).reduced, false, "stable with the same objects");
  assert.equal(reduceSync(structuredClone(r.messages), config).reduced, false, "and with copies");
});

test("the orphans' event is the same on a first call, which leaves the oldest messages unestimated, as on the next (SPEC §9.10)", () => {
  const history = [{ role: "system", content: "sys" }];
  for (let t = 0; t < 40; t++) {
    history.push({ role: "user", content: `question ${t} `.repeat(20) });
    history.push({ role: "assistant", content: null, tool_calls: [{ id: `c${t}`, type: "function", function: { name: "f", arguments: "{}" } }] });
    history.push({ role: "assistant", content: `answer ${t} `.repeat(20) });
  }
  const orphans = history.filter((m) => m.tool_calls).reduce((sum, m) => sum + estimateTokens(m), 0);
  const config = { maxTokens: 1000 };
  const events = (r) => JSON.parse(JSON.stringify(r.events));
  const first = events(reduceSync(structuredClone(history), config));
  reduceSync(history, config);
  assert.deepEqual(events(reduceSync(history, config)), first, "the same objects again");
  const event = first.find((e) => e.type === "orphans");
  assert.deepEqual([event.messages, event.tokensBefore, event.tokensAfter], [40, estimateTokens(history), estimateTokens(history) - orphans]);
});

test("a copy without its orphans is decided at its own size: a large stray result beside the user's text makes no strategy remove more", async () => {
  const input = [
    { role: "user", content: [{ type: "tool_result", tool_use_id: "gone", content: "x ".repeat(3000) }, { type: "text", text: "Thanks, now summarize it." }] },
    { role: "assistant", content: "Here is the summary." },
    { role: "user", content: "And the next step?" },
    { role: "assistant", content: "Deploy it." },
  ];
  const cleaned = [{ role: "user", content: [{ type: "text", text: "Thanks, now summarize it." }] }, ...input.slice(1)];
  for (const maxTokens of [200, 1000]) {
    // Over the trigger (200) or under it (1000): the copy fits, so only the stray result goes.
    assert.ok(estimateTokens(cleaned) <= Math.floor(maxTokens * 0.8));
    for (const strategy of ["truncate", "priority", "summarize", "progressive"]) {
      const r = await reduce(input, { maxTokens, strategy, summarizer: async () => "s" });
      const where = `${strategy} ${maxTokens}`;
      assert.deepEqual(r.messages, cleaned, where);
      assert.deepEqual([r.rewritten, r.dropped, r.overBudget], [[0], [], false], where);
      assert.equal(r.tokensAfter, estimateTokens(cleaned), where);
      assert.equal(r.tokensBefore, estimateTokens(input), where);
    }
  }
});

test("gemini: a response whose id no call of the turn before has answers none (by id, else by order and name)", () => {
  const input = [
    { role: "user", parts: [{ text: "read two files" }] },
    { role: "model", parts: [{ functionCall: { id: "c1", name: "read", args: { f: 1 } } }, { functionCall: { id: "c2", name: "read", args: { f: 2 } } }] },
    { role: "user", parts: [{ functionResponse: { id: "c2", name: "read", response: { r: 2 } } }, { functionResponse: { id: "zzz", name: "read", response: { r: "?" } } }] },
    { role: "model", parts: [{ text: "done" }] },
  ];
  const r = reduceSync(input, { maxTokens: 1e9 });
  assert.deepEqual(r.rewritten, [1, 2]);
  assert.deepEqual(r.messages[1].parts, [input[1].parts[1]]);
  assert.deepEqual(r.messages[2].parts, [input[2].parts[0]]);
  accepts.gemini(r.messages);
});

test("the result is the same for the same input, with a summarizer that takes its time (no durations in result.events)", async () => {
  const input = () => [{ role: "user", content: "q1 " + "word ".repeat(150) }, { role: "assistant", content: "a1 " + "word ".repeat(150) }, { role: "user", content: "q2" }, { role: "assistant", content: "a2" }];
  const config = { strategy: "summarize", maxTokens: 200, summarizer: async () => { await new Promise((resolve) => setTimeout(resolve, 3 + Math.random() * 5)); return "the user asked q1"; } };
  const seen = new Set();
  for (let k = 0; k < 4; k++) seen.add(JSON.stringify(await reduce(input(), config)));
  assert.equal(seen.size, 1);
});

test("a truncation with a copy without orphans decides the same on new objects (estimating only what decides) as on the same objects again", () => {
  const history = [];
  for (let k = 0; k < 150; k++) history.push({ role: "user", content: `question ${k} `.repeat(30) }, { role: "assistant", content: `answer ${k} `.repeat(30) });
  // Near the end, an answer beside a call whose result never came: output as a copy.
  history.splice(history.length - 3, 0, { role: "assistant", content: "Let me check.", tool_calls: [{ id: "lost", type: "function", function: { name: "search", arguments: JSON.stringify({ q: "x".repeat(400) }) } }] });
  const config = { maxTokens: Math.floor(estimateTokens(history) / 10) };
  const pick = (r) => JSON.parse(JSON.stringify({ ...r, messages: undefined }));
  const first = pick(reduceSync(structuredClone(history), config));
  assert.ok(first.rewritten.includes(history.length - 4));
  reduceSync(history, config);
  assert.deepEqual(pick(reduceSync(history, config)), first);
});

test("a growing history: a call pending on one turn stays, and goes once a user input follows it without its result (memoised readings)", async () => {
  const { ChatHistory } = await import("chat-history-reducer");
  const call = { role: "assistant", content: null, tool_calls: [{ id: "late", type: "function", function: { name: "search", arguments: "{}" } }] };
  const history = [];
  for (let k = 0; k < 300; k++) history.push({ role: "user", content: `q${k}` }, { role: "assistant", content: `a${k}` });
  history.push({ role: "user", content: "search" }, call);
  const config = { maxTokens: 1e9 };
  assert.equal(reduceSync(history, config).reduced, false, "pending: kept");
  history.push({ role: "user", content: "forget it" });
  let r = reduceSync(history, config);
  assert.deepEqual(r.dropped, [601], "the same call, now without its result, goes");
  history.pop();
  history.push({ role: "tool", tool_call_id: "late", content: "done" });
  r = reduceSync(history, config);
  assert.equal(r.reduced, false, "answered: kept");
  // ChatHistory: prepare() before the tool ran keeps the call; its result joins it.
  const h = new ChatHistory(config);
  h.push({ role: "user", content: "search" }, call);
  assert.deepEqual(await h.prepare(), [h.original[0], call]);
  h.push({ role: "tool", tool_call_id: "late", content: "done" });
  accepts.openai(await h.prepare());
  assert.equal((await h.prepare()).length, 3);
});

test("a message with orphan results beside other content keeps the rest, as a copy without them", async () => {
  const anthropic = [
    // Sliced: the user's text was sent with the result of a call that is gone (as agents do).
    { role: "user", content: [{ type: "tool_result", tool_use_id: "gone", content: "stale" }, { type: "text", text: "Thanks. Now search the web." }], id: "u0" },
    { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "search", input: { q: "x" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "found" }, { type: "tool_result", tool_use_id: "gone2", content: "stale" }] },
    { role: "assistant", content: "Here it is." },
  ];
  const gemini = [
    { role: "user", parts: [{ functionResponse: { name: "old_tool", response: { ok: true } } }, { text: "Go on, please." }] },
    { role: "model", parts: [{ functionCall: { name: "search", args: { q: "x" } } }] },
    { role: "user", parts: [{ functionResponse: { name: "search", response: { hits: 3 } } }] },
    { role: "model", parts: [{ text: "Three hits." }] },
  ];
  for (const [format, input, rewritten, expected] of [
    ["anthropic", anthropic, [0, 2], [
      { role: "user", content: [{ type: "text", text: "Thanks. Now search the web." }], id: "u0" },
      anthropic[1],
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "found" }] },
      anthropic[3]]],
    ["gemini", gemini, [0], [{ role: "user", parts: [{ text: "Go on, please." }] }, ...gemini.slice(1)]],
  ]) {
    assert.throws(() => accepts[format](input));
    const snapshot = JSON.stringify(input);
    for (const strategy of ["truncate", "priority", "summarize", "progressive"]) {
      const r = await reduce(input, { maxTokens: 1e9, strategy, summarizer: async () => "s" });
      assert.equal(r.reduced, true, `${format} ${strategy}`);
      assert.deepEqual(r.rewritten, rewritten, `${format} ${strategy}`);
      assert.deepEqual(r.dropped, [], `${format} ${strategy}: nothing of the user's is lost`);
      assert.deepEqual(r.messages, expected, `${format} ${strategy}: copies without the orphan parts`);
      for (const i of rewritten) assert.notEqual(r.messages[i], input[i], "a copy, not the input object");
      accepts[format](r.messages);
      assertAccounted(r, input, `${format} ${strategy}`);
      // (A copy is counted as it stands.)
      assert.equal(r.tokensAfter, estimateTokens(r.messages));
      assert.equal(reduceSync(r.messages, { maxTokens: 1e9 }).reduced, false);
    }
    assert.equal(JSON.stringify(input), snapshot, "the input is untouched");
  }
  // Offloaded as a preview, the copy is made without them too.
  const big = [...anthropic.slice(0, 2), { ...anthropic[2], content: [{ type: "tool_result", tool_use_id: "t1", content: "found ".repeat(800) }, anthropic[2].content[1]] }, anthropic[3], { role: "user", content: "And now?" }];
  const r = reduceSync(big, { strategy: "progressive", maxTokens: 800, largeMessageTokens: 200 });
  assert.ok(r.rewritten.includes(2) && Object.keys(r.offloaded).length > 0, JSON.stringify(r.events));
  accepts.anthropic(r.messages);
  assert.ok(!JSON.stringify(r.messages).includes("gone"), "no orphan block in the output, preview or copy");
});

test("the summarizer, a digest and the offloaded originals get a message with orphans beside other content without them", async () => {
  const long = "lorem ipsum dolor sit amet 42, ".repeat(60);
  const stale = { type: "tool_result", tool_use_id: "gone", content: "ORPHAN RESULT" };
  const chat = [
    { role: "user", content: [stale, { type: "text", text: long }] },
    { role: "assistant", content: long },
    { role: "user", content: long },
    { role: "assistant", content: long },
    { role: "user", content: "latest" },
  ];
  const seen = [];
  const summarizer = async (req) => { seen.push(...req.messages); return "sum"; };
  const s = await reduce(chat, { strategy: "summarize", maxTokens: 900, keepLast: 1, summarizer });
  assert.ok(s.summarized.includes(0), JSON.stringify(s.summarized));
  const p = await reduce(chat, { strategy: "progressive", maxTokens: 300, keepLast: 1, summarizer });
  assert.ok(p.summarized.includes(0), JSON.stringify(p.events));
  // A tool run (stage 1) with an orphan beside a result: its digest and its originals.
  const run = [{ role: "user", content: "start" }];
  for (let k = 0; k < 4; k++) {
    run.push({ role: "assistant", content: [{ type: "tool_use", id: `t${k}`, name: "f", input: {} }] });
    run.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `t${k}`, content: `result ${k} `.repeat(40) }, ...(k === 1 ? [stale] : [])] });
  }
  run.push({ role: "assistant", content: "done" }, { role: "user", content: "latest" });
  const d = reduceSync(run, { strategy: "progressive", maxTokens: 400, minToolRun: 2 });
  assert.ok(d.events.some((e) => e.type === "toolRuns"), JSON.stringify(d.events));
  assert.equal(seen.length > 0, true);
  for (const m of seen) assert.ok(!JSON.stringify(m).includes("ORPHAN"), `the summarizer got ${JSON.stringify(m).slice(0, 120)}`);
  assert.ok(seen.some((m) => JSON.stringify(m).includes("lorem")), "the user's text is summarised");
  for (const r of [s, p, d]) {
    assert.ok(!JSON.stringify(r.offloaded).includes("ORPHAN"), "no orphan offloaded");
    assert.ok(!JSON.stringify(r.messages).includes("ORPHAN"), "no orphan in the output");
    accepts.anthropic(r.messages);
  }
});

test("gemini: a call whose turn before was an orphan functionResponse goes with it (or, protected, the model turn before it)", async () => {
  const g = [
    { role: "user", parts: [{ text: "q1" }] },
    { role: "model", parts: [{ text: "a1" }] },
    { role: "user", parts: [{ functionResponse: { name: "b", response: { x: 1 } } }] },
    { role: "model", parts: [{ functionCall: { name: "c", args: {} } }] },
    { role: "user", parts: [{ functionResponse: { name: "c", response: { y: 2 } } }] },
    { role: "model", parts: [{ text: "done" }] },
    { role: "user", parts: [{ text: "q2" }] },
  ];
  for (const strategy of ["truncate", "priority", "summarize", "progressive"]) {
    const config = { maxTokens: 1e5, strategy, summarizer: async () => "s" };
    const r = await reduce(g, config);
    accepts.gemini(r.messages);
    assert.deepEqual(r.dropped, [2, 3, 4], strategy);
    const kept = await reduce(g, { ...config, keepLast: 3 });
    accepts.gemini(kept.messages);
    assert.deepEqual(kept.dropped, [1, 2], `${strategy}, keepLast 3`);
    assertAccounted(kept, g, strategy);
  }
});

test("progressive starts on a user input when its stages meet the target (an orphan went from the front)", () => {
  const long = "lorem ipsum dolor sit amet 42, ".repeat(40);
  const input = [
    { role: "user", content: [{ type: "tool_result", tool_use_id: "gone", content: "x" }] },
    { role: "assistant", content: long },
    { role: "user", content: "question " + long },
    { role: "assistant", content: long },
    { role: "user", content: "q2" },
    { role: "assistant", content: "short" },
  ];
  for (const startOn of ["user", "any"]) {
    const r = reduceSync(input, { strategy: "progressive", maxTokens: 500, largeMessageTokens: 60, startOn });
    assert.ok(r.events.some((e) => e.type === "offloadOld"), JSON.stringify(r.events));
    assert.deepEqual(r.dropped, [0, 1], startOn);
    accepts.anthropic(r.messages);
    assertAccounted(r, input, startOn);
  }
});

test("ChatHistory.prepare() removes orphans from the working history", async () => {
  const input = sliced.openai.make();
  const h = new ChatHistory({ maxTokens: 1e9 }, input);
  const sent = await h.prepare();
  accepts.openai(sent);
  assert.deepEqual(sent, [input[0], ...input.slice(4)]);
  assert.equal(h.messages.length, sent.length);
  assert.ok(h.events.some((e) => e.type === "orphans"));
  assert.equal(h.original.length, input.length, "original keeps everything");
});

test("shouldReduce finds orphans in a history it has seen, and in one that grew, as in a fresh one", () => {
  // 40 messages: long enough to be kept between calls (what a chat asks every turn).
  const history = [{ role: "system", content: "Be brief." }];
  for (let k = 0; k < 13; k++) {
    history.push({ role: "user", content: `question ${k}` });
    history.push({ role: "assistant", content: null, tool_calls: [{ id: `c${k}`, type: "function", function: { name: "f", arguments: "{}" } }] });
    history.push({ role: "tool", tool_call_id: `c${k}`, content: `result ${k}` });
  }
  const quiet = { maxTokens: 1e9 };
  for (let turn = 0; turn < 3; turn++) assert.equal(shouldReduce(history, quiet), false, `turn ${turn}: no orphan`);
  const grown = [...history, { role: "assistant", content: "done" }];
  assert.equal(shouldReduce(grown, quiet), false, "grown by a message: no orphan");
  const orphaned = [...grown, { role: "tool", tool_call_id: "gone", content: "late" }];
  for (let turn = 0; turn < 3; turn++) assert.equal(shouldReduce(orphaned, quiet), true, `turn ${turn}: an orphan at the end`);
  assert.deepEqual(reduceSync(orphaned, quiet).dropped, [orphaned.length - 1]);
  const sliced = history.slice(3);
  sliced.unshift(history[0]);
  assert.equal(shouldReduce(sliced, quiet), true, "a sliced history starts on a result whose call is gone");
  assert.equal(shouldReduce(sliced, { ...quiet, tokenCounts: sliced.map(() => 1) }), true, "with counts given too");
  assert.equal(shouldReduce(history, { ...quiet, tokenCounts: history.map(() => 1) }), false);
});
