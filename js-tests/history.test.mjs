// SPEC §7: ChatHistory as a chat front end or an edge worker uses it — messages pushed by
// the app (or by mistake), prepare() called twice at once, state saved and restored, and
// reload() answering a model's tool call.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChatHistory, ReduceError, estimateTokens, reduceSync } from "chat-history-reducer";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function chat(turns) {
  const m = [{ role: "system", content: "You help with gardening." }];
  for (let t = 0; t < turns; t++) {
    m.push({ role: "user", content: `Turn ${t}: how do I care for plant number ${t}?` });
    m.push({ role: "assistant", content: `Plant ${t} needs water every ${t % 5 + 1} days and some sun.` });
  }
  return m;
}

test("push takes message objects only, all or none, and the history keeps working", async () => {
  const h = new ChatHistory({ maxTokens: 1000 }, chat(2));
  // The error names the argument and the index it would have had in the history (only the
  // index was named: push(a, b) with a bad b was "message 6").
  for (const bad of [42, undefined, null, "hello", [{ role: "user", content: "x" }]]) {
    assert.throws(() => h.push({ role: "user", content: "fine" }, bad),
      (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGE" && e.index === 6 &&
        /^ChatHistory\.push: argument 1 \(message 6 of the history\): expected a message object/.test(e.message),
      String(bad));
  }
  assert.equal(h.messages.length, 5, "nothing was appended");
  assert.equal(h.original.length, 5);
  h.push({ role: "user", content: "next" });
  assert.equal((await h.prepare()).length, 6);
  // The constructor checks its messages the same way, and takes only an array (or nothing).
  assert.throws(() => new ChatHistory({ maxTokens: 10 }, [{ role: "user", content: "a" }, 5]), (e) => e.code === "INVALID_MESSAGE" && e.index === 1);
  for (const bad of [5, { role: "user", content: "a" }, "str"]) {
    assert.throws(() => new ChatHistory({ maxTokens: 10 }, bad), (e) => e.code === "INVALID_MESSAGES", String(bad));
  }
  assert.equal(new ChatHistory({ maxTokens: 10 }, null).messages.length, 0);
});

test("two prepare() calls at once: the summarizer is called once, both get the reduced history", async () => {
  let calls = 0;
  const summarizer = async () => {
    calls += 1;
    await sleep(20);
    return "They discussed watering plants.";
  };
  const h = new ChatHistory({ strategy: "summarize", summarizer, targetMessages: 6, thresholdMessages: 4 }, chat(10));
  const [a, b] = await Promise.all([h.prepare(), h.prepare()]);
  assert.equal(calls, 1);
  assert.deepEqual(a, b);
  assert.deepEqual(a, h.messages);
  assert.equal(h.stats().summarizerCalls, 1);
  assert.equal(h.events.filter((e) => e.type === "summarize").length, 1);
  // A failed prepare does not hold up the next one.
  const failing = new ChatHistory({ strategy: "summarize", summarizer: async () => { throw new Error("down"); }, onSummarizerError: "throw", targetMessages: 6, thresholdMessages: 4 }, chat(10));
  const first = failing.prepare();
  const second = failing.prepare();
  await assert.rejects(first, (e) => e.code === "SUMMARIZER_FAILED");
  await assert.rejects(second, (e) => e.code === "SUMMARIZER_FAILED");
  assert.equal(failing.stats().summarizerCalls, 2, "each prepare() called it, and both calls count");
  failing.push({ role: "user", content: "still there?" });
  assert.equal(failing.messages.length, 22);
});

test("toJSON keeps the calibration recordUsage learned: a restored history decides alike", async () => {
  const more = chat(12).slice(5);
  // A budget the estimates fit in, and twice the estimates do not.
  const config = { maxTokens: Math.floor(1.5 * estimateTokens([...chat(2), ...more])) };
  const h = new ChatHistory(config, chat(2));
  const sent = await h.prepare();
  h.recordUsage({ inputTokens: 2 * estimateTokens(sent) });
  const state = JSON.parse(JSON.stringify(h));
  assert.equal(typeof state.calibration, "number");
  const copy = ChatHistory.fromJSON(state, config);
  const plain = new ChatHistory(config, chat(2));
  for (const x of [h, copy, plain]) x.push(...more);
  const [x, y] = [await h.prepare(), await copy.prepare()];
  assert.equal((await plain.prepare()).length, 5 + more.length, "uncalibrated, it fits");
  assert.ok(x.length < 5 + more.length, "the calibrated history reduces");
  assert.deepEqual(y, x);
  assert.deepEqual(copy.stats(), h.stats());
  assert.equal(new ChatHistory(config).toJSON().calibration, null);
});

test("reload answers only the ids it offloaded, whatever a model's tool call passes", () => {
  const h = new ChatHistory({ maxTokens: 1000 });
  for (const id of [undefined, null, 123, {}, "toString", "__proto__", "constructor", "ctx_missing"]) {
    assert.equal(h.reload(id), undefined, String(id));
  }
});

test("reload and toJSON().offloaded hand out copies: what a caller does with them keeps the originals", async () => {
  const m = [{ role: "system", content: "s" }];
  for (let t = 0; t < 4; t++) {
    m.push({ role: "user", content: `question ${t}` });
    for (let k = 0; k < 4; k++) {
      m.push({ role: "assistant", content: null, tool_calls: [{ id: `c${t}_${k}`, type: "function", function: { name: "search", arguments: "{}" } }] });
      m.push({ role: "tool", tool_call_id: `c${t}_${k}`, content: "result data ".repeat(k === 2 ? 400 : 20) });
    }
    m.push({ role: "assistant", content: `answer ${t}` });
  }
  const config = { strategy: "progressive", maxTokens: 2300, minToolRun: 3 };
  const h = new ChatHistory(config, m);
  await h.prepare();
  const ids = Object.keys(h.toJSON().offloaded);
  assert.ok(ids.length > 0);
  const before = JSON.stringify(h.toJSON().offloaded);
  for (const id of ids) {
    const originals = h.reload(id);
    assert.ok(originals.length > 0);
    assert.notEqual(h.reload(id), originals, "a new array each call");
    assert.equal(h.reload(id)[0], originals[0], "of the same message objects");
    originals.splice(0, originals.length);
    h.toJSON().offloaded[id].length = 0;
    delete h.toJSON().offloaded[id];
  }
  assert.equal(JSON.stringify(h.toJSON().offloaded), before);
  for (const id of ids) assert.ok(h.reload(id).length > 0, id);
  // A restored history keeps copies too: the state it was made from may be edited after.
  const state = JSON.parse(before);
  const copy = ChatHistory.fromJSON({ ...h.toJSON(), offloaded: state }, config);
  for (const id of ids) state[id].length = 0;
  assert.equal(JSON.stringify(copy.toJSON().offloaded), before);
  // An id "__proto__" is an id.
  const odd = ChatHistory.fromJSON({ ...h.toJSON(), offloaded: JSON.parse('{"__proto__": [{"role": "user", "content": "x"}]}') }, config);
  assert.deepEqual(odd.reload("__proto__"), [{ role: "user", content: "x" }]);
  assert.deepEqual(Object.keys(odd.toJSON().offloaded), ["__proto__"]);
});

test("fromJSON refuses an offloaded that no history writes: INVALID_CONFIG, field state", async () => {
  // Out-of-range indices vanished, entries that are not arrays were skipped, and
  // non-messages were taken: reload(id) handed them to the model as its messages.
  const config = { strategy: "progressive", maxTokens: 2300, minToolRun: 3 };
  const h = new ChatHistory(config, [{ role: "system", content: "s" }]);
  for (let t = 0; t < 4; t++) {
    h.push({ role: "user", content: `question ${t}` });
    for (let k = 0; k < 4; k++) {
      h.push({ role: "assistant", content: null, tool_calls: [{ id: `c${t}_${k}`, type: "function", function: { name: "search", arguments: "{}" } }] });
      h.push({ role: "tool", tool_call_id: `c${t}_${k}`, content: "result data ".repeat(k === 2 ? 400 : 20) });
    }
    h.push({ role: "assistant", content: `answer ${t}` });
  }
  await h.prepare();
  const state = JSON.parse(JSON.stringify(h));
  const [id] = Object.keys(state.offloaded);
  assert.ok(id, "something was offloaded");
  assert.deepEqual(ChatHistory.fromJSON(state, config).reload(id), h.reload(id), "a state toJSON wrote reads back");
  const corrupt = {
    "not an object": 5,
    "an array": [[1]],
    "an entry that is not an array": { [id]: 5 },
    "an index past original": { [id]: [...state.offloaded[id], 1e9] },
    "a negative index": { [id]: [-1] },
    "a fractional index": { [id]: [0.5] },
    "a string": { [id]: ["hello"] },
    "null": { [id]: [null] },
    "an object of no format": { [id]: [{ foo: 1 }] },
    "a message of another format": { [id]: [{ role: "model", parts: [{ text: "gemini" }] }] },
  };
  for (const [what, offloaded] of Object.entries(corrupt)) {
    assert.throws(() => ChatHistory.fromJSON({ ...state, offloaded }, config),
      (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === "state" && /^ChatHistory\.fromJSON: state\.offloaded/.test(e.message), what);
  }
  // A state without offloaded originals has none.
  const { offloaded, ...none } = state;
  assert.equal(ChatHistory.fromJSON(none, config).reload(id), undefined);
});

test("toJSON writes each offloaded original that is one of original's as its index there (state version 2); fromJSON reads versions 1 and 2", async () => {
  // Every offloaded original was written out a second time: after 80 turns of an agent, 1.9
  // of a 4.1 MB state (audit); localStorage holds 5 MB.
  const h = new ChatHistory({ strategy: "progressive", maxTokens: 3000, minToolRun: 3 }, [{ role: "system", content: "s" }]);
  for (let t = 0; t < 12; t++) {
    h.push({ role: "user", content: `question ${t}` });
    for (let k = 0; k < 3; k++) {
      h.push({ role: "assistant", content: null, tool_calls: [{ id: `c${t}_${k}`, type: "function", function: { name: "read", arguments: "{}" } }] });
      h.push({ role: "tool", tool_call_id: `c${t}_${k}`, content: `file ${t}.${k}: ` + "data ".repeat(300) });
    }
    await h.prepare();
    h.push({ role: "assistant", content: `answer ${t}` });
  }
  const state = h.toJSON();
  assert.equal(state.version, 2);
  const entries = Object.values(state.offloaded).flat();
  assert.ok(entries.length > 10, `${entries.length} offloaded`);
  assert.ok(entries.every((e) => Number.isInteger(e) && h.original[e] !== undefined), "every original pushed is its index");
  const text = JSON.stringify(state);
  const v1 = { ...state, version: 1, offloaded: Object.fromEntries(Object.entries(state.offloaded).map(([id, xs]) => [id, xs.map((k) => state.original[k])])) };
  assert.ok(text.length < JSON.stringify(v1).length * 0.7, `${text.length} vs ${JSON.stringify(v1).length} characters`);
  for (const written of [JSON.parse(text), JSON.parse(JSON.stringify(v1))]) {
    const copy = ChatHistory.fromJSON(written, { strategy: "progressive", maxTokens: 3000, minToolRun: 3 });
    for (const id of Object.keys(state.offloaded)) {
      const back = copy.reload(id);
      assert.deepEqual(back, h.reload(id), id);
      // The same objects as the restored history's original messages (version 1's copies
      // are found by their JSON).
      back.forEach((m) => assert.ok(copy.original.includes(m), id));
    }
    assert.deepEqual(copy.toJSON(), state, `version ${written.version} read, version 2 written`);
  }
  // An index that is not one of original's is refused.
  const id = Object.keys(state.offloaded)[0];
  assert.throws(() => ChatHistory.fromJSON({ ...JSON.parse(text), offloaded: { [id]: [state.offloaded[id][0], 1e9] } }, { maxTokens: 3000 }),
    (e) => e.code === "INVALID_CONFIG" && e.field === "state");
  assert.throws(() => ChatHistory.fromJSON({ ...state, version: 3 }, { maxTokens: 3000 }), (e) => e.code === "INVALID_CONFIG" && /version/.test(e.message));
});

test("ChatHistory refuses at construction what every prepare() would: a summarize config without a summarizer, a state whose original mixes formats", async () => {
  // Both were taken, and failed later: the first prepare() (even with no trigger firing), or
  // every push of a message of the working history's format (audit F).
  assert.throws(() => new ChatHistory({ strategy: "summarize", maxTokens: 1000 }), (e) => e instanceof ReduceError && e.code === "SUMMARIZER_REQUIRED");
  const h = new ChatHistory({ maxTokens: 1000 }, [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }]);
  const state = JSON.parse(JSON.stringify(h));
  const gemini = { role: "user", parts: [{ text: "hi" }] };
  assert.throws(() => ChatHistory.fromJSON({ ...state, original: [...state.original, gemini] }, { maxTokens: 1000 }),
    (e) => e.code === "INVALID_MESSAGES" && /ChatHistory\.fromJSON/.test(e.message));
  assert.throws(() => ChatHistory.fromJSON({ ...state, messages: [gemini], original: state.original, origins: undefined }, { maxTokens: 1000 }),
    (e) => e.code === "INVALID_MESSAGES");
  const copy = ChatHistory.fromJSON(state, { maxTokens: 1000 });
  copy.push({ role: "user", content: "again" });
  assert.equal(copy.original.length, 3);
});

test("an abort through prepare({ signal }) says so", async () => {
  const h = new ChatHistory({ strategy: "summarize", targetMessages: 2, summarizer: () => new Promise(() => {}) });
  for (let t = 0; t < 6; t++) h.push({ role: "user", content: `q${t}` }, { role: "assistant", content: `a${t}` });
  const controller = new AbortController();
  const pending = h.prepare({ signal: controller.signal });
  setTimeout(() => controller.abort(), 5);
  await assert.rejects(pending, (e) => e.code === "ABORTED" && /prepare's/.test(e.message));
});

test("a message of another format than the history's is refused by push, and the history keeps working", async () => {
  const h = new ChatHistory({ maxTokens: 1000 }, chat(1));
  const gemini = { role: "model", parts: [{ text: "a Gemini turn by mistake" }] };
  const anthropic = { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] };
  for (const bad of [[gemini], [{ role: "user", content: "fine" }, gemini]]) {
    assert.throws(() => h.push(...bad),
      (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGES" && /ChatHistory\.push: argument \d \(message \d of the history\) looks like .*a history holds messages of one format/.test(e.message),
      JSON.stringify(bad));
    assert.equal(h.messages.length, 3, "nothing was appended");
    assert.equal(h.original.length, 3);
  }
  h.push({ role: "user", content: "next" });
  assert.equal((await h.prepare()).length, 4);
  // Messages that fit several formats narrow the history's: a Gemini history takes Gemini
  // turns; an OpenAI tool result makes it OpenAI's.
  const g = new ChatHistory({ maxTokens: 1000 });
  g.push({ role: "user", parts: [{ text: "hi" }] }, gemini);
  assert.throws(() => g.push({ role: "user", content: "plain" }), (e) => e.code === "INVALID_MESSAGES");
  assert.equal((await g.prepare()).length, 2);
  const o = new ChatHistory({ maxTokens: 1000 }, chat(1));
  o.push({ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "c1", content: "42" });
  assert.throws(() => o.push(anthropic), (e) => e.code === "INVALID_MESSAGES");
  assert.equal((await o.prepare()).length, 5);
  // The constructor and fromJSON refuse messages that mix formats, as reduce does.
  assert.throws(() => new ChatHistory({ maxTokens: 1000 }, [...chat(1), gemini]),
    (e) => e.code === "INVALID_MESSAGES" && /^new ChatHistory: message 3 looks like gemini/.test(e.message));
  const state = JSON.parse(JSON.stringify(h));
  assert.throws(() => ChatHistory.fromJSON({ ...state, messages: [...state.messages, gemini] }, { maxTokens: 1000 }),
    (e) => e.code === "INVALID_MESSAGES" && /ChatHistory\.fromJSON/.test(e.message));
  const restored = ChatHistory.fromJSON(state, { maxTokens: 1000 });
  assert.throws(() => restored.push(gemini), (e) => e.code === "INVALID_MESSAGES");
  restored.push({ role: "assistant", content: "ok" });
  assert.equal((await restored.prepare()).length, 5);
  // A named format is checked by its reader, as before: push takes any message of a known format.
  const named = new ChatHistory({ maxTokens: 1000, format: "openai" }, chat(1));
  named.push({ role: "assistant", content: "fine" });
  assert.throws(() => named.push({ text: "no role" }), (e) => e.code === "INVALID_MESSAGE" && e.index === 4);
  assert.equal((await named.prepare()).length, 4);
});

test("messages of no format are refused by push, and a state toJSON did not write by fromJSON", () => {
  const h = new ChatHistory({ maxTokens: 1000 }, chat(1));
  for (const bad of [{}, { role: "wizard", content: "x" }, { text: "no role" }]) {
    assert.throws(() => h.push(bad), (e) => e.code === "INVALID_MESSAGE" && e.index === 3 && /any known format/.test(e.message), JSON.stringify(bad));
  }
  assert.equal(h.messages.length, 3);
  const state = JSON.parse(JSON.stringify(h));
  assert.throws(() => ChatHistory.fromJSON({ ...state, messages: [5] }, { maxTokens: 1000 }), (e) => e.code === "INVALID_MESSAGE" && e.index === 0);
  // A calibration toJSON never writes (calibrate keeps it in [0.5, 2]) is not taken.
  for (const calibration of [0, 1e400, -1, "2"]) {
    const copy = ChatHistory.fromJSON({ ...state, calibration }, { maxTokens: 1000 });
    assert.equal(copy.toJSON().calibration, null, String(calibration));
  }
  assert.equal(ChatHistory.fromJSON({ ...state, calibration: 1.5 }, { maxTokens: 1000 }).toJSON().calibration, 1.5);
  // Tokens saved that no history counts (NaN, Infinity, below 0, above
  // Number.MAX_SAFE_INTEGER, not a number) count as none; every stat stays a whole number
  // ≥ 0; fractions of a state of before become whole tokens.
  for (const n of [NaN, Infinity, -5, 1e300, "7", null]) {
    const stats = ChatHistory.fromJSON({ ...state, stats: { reductions: n, summarizerCalls: n, tokensSaved: n } }, { maxTokens: 1000 }).stats();
    assert.equal(stats.tokensSaved, 0, String(n));
    for (const v of [stats.reductions, stats.summarizerCalls]) assert.ok(Number.isInteger(v) && v >= 0, `${n}: ${v}`);
  }
  const stats = ChatHistory.fromJSON({ ...state, stats: { reductions: 2, summarizerCalls: 1, tokensSaved: 12.5 } }, { maxTokens: 1000 }).stats();
  assert.deepEqual([stats.reductions, stats.summarizerCalls, stats.tokensSaved], [2, 1, 13]);
});

test("recordUsage's outputTokens go to the model's reply, not to a message pushed while it answered", async () => {
  const counts = (h) => h.toJSON().counts;
  // The user types while the model answers: the reply is pushed after their message.
  const h = new ChatHistory({ maxTokens: 100000 }, [{ role: "user", content: "Write a long essay." }]);
  await h.prepare();
  h.push({ role: "user", content: "(and make it funny)" });
  h.recordUsage({ inputTokens: 12, outputTokens: 500 });
  h.push({ role: "assistant", content: "A short reply." });
  assert.deepEqual(counts(h), [12, null, 500]);
  // Reply pushed before recordUsage, after the user's message: found now.
  await h.prepare();
  h.push({ role: "user", content: "more" }, { role: "assistant", content: "More." });
  h.recordUsage({ outputTokens: 40 });
  assert.deepEqual(counts(h).slice(3), [null, 40]);
  // A count that waited for a reply never pushed is dropped by the next prepare().
  await h.prepare();
  h.recordUsage({ outputTokens: 77 });
  assert.equal(h.toJSON().pendingOutputTokens, 77);
  h.push({ role: "user", content: "retry" });
  await h.prepare();
  assert.equal(h.toJSON().pendingOutputTokens, null);
  h.push({ role: "assistant", content: "Retried." });
  assert.equal(counts(h).at(-1), null);
  // In other formats: a Gemini model turn, a LangChain AI message, a Responses API item
  // after its reasoning.
  const cases = {
    gemini: [{ role: "user", parts: [{ text: "hi" }] }, { role: "user", parts: [{ text: "also" }] }, { role: "model", parts: [{ text: "yo" }] }],
    langchain: [{ type: "human", content: "hi" }, { type: "human", content: "also" }, { type: "ai", content: "yo" }],
    "openai-responses": [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
      { type: "reasoning", summary: [] }, { type: "function_call", call_id: "c1", name: "f", arguments: "{}" }],
  };
  for (const [format, [prompt, typed, reply]] of Object.entries(cases)) {
    const g = new ChatHistory({ maxTokens: 100000 }, [prompt]);
    await g.prepare();
    g.push(typed);
    g.recordUsage({ outputTokens: 9 });
    g.push(reply);
    assert.deepEqual(counts(g), [null, null, 9], format);
  }
});

test("tokensSaved is whole tokens, and so are the counts recordUsage spreads over the prompt", async () => {
  // The provider counts 37% more than the estimates: a ratio that spreads into fractions.
  const h = new ChatHistory({ maxTokens: 300 }, chat(4));
  const sent = await h.prepare();
  h.recordUsage({ inputTokens: Math.round(estimateTokens(sent) * 1.37), outputTokens: 7 });
  const counts = h.toJSON().counts.filter((c) => c !== null);
  assert.equal(counts.length, sent.length);
  assert.ok(counts.every(Number.isInteger), `counts ${counts}`);
  assert.equal(counts.reduce((a, b) => a + b, 0), Math.round(estimateTokens(sent) * 1.37), "they add up to inputTokens");
  h.push(...chat(12).slice(9));
  await h.prepare();
  const { reductions, tokensSaved } = h.stats();
  assert.equal(reductions, 1);
  assert.ok(Number.isInteger(tokensSaved) && tokensSaved > 0, `tokensSaved ${tokensSaved}`);
  for (const e of h.events) assert.ok(Number.isInteger(e.tokensBefore) && Number.isInteger(e.tokensAfter), JSON.stringify(e));
  // Counts of the app's own that are fractional: the totals count as whole tokens, rounded up
  // as the estimator rounds a message up.
  const quarter = new ChatHistory({ maxTokens: 200, countTokens: (m) => m.content.length / 4 }, chat(12));
  await quarter.prepare();
  const saved = quarter.stats().tokensSaved;
  assert.equal(quarter.stats().reductions, 1);
  const [e] = quarter.events;
  assert.equal(saved, Math.ceil(e.tokensBefore) - Math.ceil(e.tokensAfter), `${saved} of ${JSON.stringify(e)}`);
});

test("every summarizer call counts in stats().summarizerCalls, whatever its outcome", async () => {
  const cases = {
    rejected: { summarizer: async () => { throw new Error("down"); }, code: "SUMMARIZER_FAILED" },
    empty: { summarizer: async () => "", code: "SUMMARIZER_FAILED" },
    timeout: { summarizer: () => sleep(200).then(() => "late"), timeoutMs: 5, code: "SUMMARIZER_FAILED" },
    tooLarge: { summarizer: async () => "word ".repeat(5000), code: "SUMMARY_TOO_LARGE" },
  };
  for (const [name, { summarizer, code, timeoutMs }] of Object.entries(cases)) {
    let calls = 0;
    const counted = (req) => { calls += 1; return summarizer(req); };
    for (const onSummarizerError of ["throw", "fallback"]) {
      calls = 0;
      const h = new ChatHistory({ strategy: "summarize", summarizer: counted, timeoutMs, onSummarizerError, maxTokens: 400, targetMessages: 6, thresholdMessages: 4 }, chat(10));
      if (onSummarizerError === "throw") {
        await assert.rejects(h.prepare(), (e) => e.code === code, name);
        await assert.rejects(h.prepare(), (e) => e.code === code, name);
        assert.equal(h.stats().reductions, 0, name);
      } else {
        await h.prepare();
        assert.equal(h.stats().reductions, 1, name);
      }
      assert.ok(calls > 0, name);
      assert.equal(h.stats().summarizerCalls, calls, `${name}, ${onSummarizerError}`);
      // (And a state restored keeps counting from there.)
      const copy = ChatHistory.fromJSON(JSON.parse(JSON.stringify(h)), { strategy: "summarize", summarizer: counted, targetMessages: 6, thresholdMessages: 4 });
      assert.equal(copy.stats().summarizerCalls, calls, name);
    }
  }
  // An abort: the call was made, and counts.
  const controller = new AbortController();
  let calls = 0;
  const h = new ChatHistory({ strategy: "summarize", targetMessages: 6, thresholdMessages: 4, signal: controller.signal,
    summarizer: () => { calls += 1; controller.abort(); return sleep(50).then(() => "late"); } }, chat(10));
  await assert.rejects(h.prepare(), (e) => e.code === "ABORTED");
  assert.equal(calls, 1);
  assert.equal(h.stats().summarizerCalls, 1);
});

test("a message its format's reader refuses is refused by push, new and fromJSON: no later prepare() fails for it", async () => {
  // A message that fits a format by its shape but that the reduction's reader refuses
  // (content 42, tool_calls "x", cyclic arguments) was pushed, and every later prepare()
  // and stats() threw INVALID_MESSAGE, with no way to take it out (audit).
  const h = new ChatHistory({ maxTokens: 1000 }, chat(1));
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  const refused = [
    { role: "user", content: 42 },
    { role: "user", content: {} },
    { role: "assistant", content: null, tool_calls: "x" },
    { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: cyclic } }] },
  ];
  for (const m of refused) {
    assert.throws(() => h.push(m), (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGE" && e.index === 3 && /ChatHistory\.push: argument 0 \(message 3 of the history\): /.test(e.message), JSON.stringify(m.content ?? m.tool_calls?.[0]?.id));
  }
  assert.equal(h.messages.length, 3, "nothing appended");
  h.push({ role: "user", content: "fine" });
  assert.equal((await h.prepare()).length, 4);
  for (const m of refused.slice(0, 3)) {
    assert.throws(() => new ChatHistory({ maxTokens: 1000 }, [...chat(1), m]), (e) => e.code === "INVALID_MESSAGE" && e.index === 3);
    const state = { ...JSON.parse(JSON.stringify(h)), messages: [...chat(1), m] };
    assert.throws(() => ChatHistory.fromJSON(state, { maxTokens: 1000 }), (e) => e.code === "INVALID_MESSAGE");
  }
  // Under a named format its reader is the check (it takes shapes auto-detection does not).
  const named = new ChatHistory({ maxTokens: 1000, format: "openai" }, chat(1));
  assert.throws(() => named.push({ role: "user", content: 42 }), (e) => e.code === "INVALID_MESSAGE" && e.index === 3);
  named.push({ role: "user", content: [{ type: "text", text: "parts" }] });
  assert.equal(named.messages.length, 4);
});

test("new ChatHistory checks its messages before it holds them: an array of holes is an error, not a trap", () => {
  // A sparse array of nine million holes was taken as nine million references first, which
  // ran the module out of its reference table: RuntimeError: unreachable, for good (audit).
  assert.throws(() => new ChatHistory({ maxTokens: 1000 }, new Array(9_000_000)),
    (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGE" && e.index === 0);
  assert.equal(new ChatHistory({ maxTokens: 1000 }, chat(1)).messages.length, 3, "the module still works");
});

test("histories holding millions of messages in all do not run the module out of references", async () => {
  // A server with a ChatHistory per conversation: each message held in Rust took two slots
  // of the module's reference table, and about 4.2 million messages across live histories
  // made the next push trap (RuntimeError: unreachable), for good, for every caller
  // (audit). The histories now hold JavaScript arrays.
  const live = [];
  const per = 5000;
  for (let k = 0; k < 1100; k++) {
    const h = new ChatHistory({ maxTokens: 1_000_000 });
    for (let i = 0; i < per; i += 1000) h.push(...Array.from({ length: 1000 }, (_, j) => ({ role: (i + j) % 2 ? "assistant" : "user", content: `m${k}-${i + j}` })));
    live.push(h);
  }
  assert.equal(live.length * per, 5_500_000);
  assert.equal((await live[0].prepare()).length, per);
  assert.equal(live.at(-1).original.length, per);
});

test("the caller's code that a history runs (countTokens, a getter, a config getter) may call that history: no trap, nothing lost", async () => {
  // stats(), recordUsage(), push() and fromJSON held the history's state while they ran the
  // caller's code, and a call of the same history from there panicked: RuntimeError:
  // unreachable (audit).
  let history, calls = 0;
  const inside = [];
  const countTokens = (m) => {
    if (calls++ === 0) {
      history.push({ role: "assistant", content: "pushed from countTokens" });
      inside.push(history.messages.length, history.original.length, history.stats().reductions, history.events.length);
      history.recordUsage({ outputTokens: 3 });
    }
    return 20;
  };
  history = new ChatHistory({ maxTokens: 10_000, countTokens }, chat(3));
  const stats = history.stats();
  assert.equal(stats.reductions, 0);
  assert.deepEqual(inside, [8, 8, 0, 0]);
  assert.equal(history.messages.at(-1).content, "pushed from countTokens");
  // recordUsage counting the prompt with a countTokens that reads and pushes (a message
  // edited since, so that it is counted again).
  await history.prepare();
  history.push({ role: "user", content: "next" });
  history.messages[1].content = "edited";
  calls = 0;
  history.recordUsage({ inputTokens: 500, outputTokens: 20 });
  assert.equal(calls > 0, true, "countTokens ran");
  assert.equal(history.messages.at(-1).content, "pushed from countTokens");
  // A getter of a pushed message that reads its history while push() checks it.
  let seen;
  const message = { role: "user", get content() { seen = history.messages.length; return "from a getter"; } };
  const before = history.messages.length;
  history.push(message);
  assert.equal(seen, before);
  assert.equal(history.messages.at(-1), message);
  // A config getter read by prepare().
  const config = { maxTokens: 10_000 };
  let other;
  Object.defineProperty(config, "keepLast", { enumerable: true, get() { other?.messages; return 1; } });
  other = new ChatHistory(config, chat(2));
  assert.equal((await other.prepare()).length, 5);
  // A state whose getter calls the history being read back: fromJSON reads it all first.
  const state = history.toJSON();
  const restored = ChatHistory.fromJSON({ ...state, get stats() { return state.stats; } }, { maxTokens: 10_000 });
  assert.deepEqual(restored.messages, history.messages);
});

test("fromJSON refuses a state that toJSON did not write (its kind)", () => {
  const state = new ChatHistory({ maxTokens: 1000 }, chat(1)).toJSON();
  for (const kind of [undefined, "some-other-lib/Memory"]) {
    assert.throws(() => ChatHistory.fromJSON({ ...state, kind }, { maxTokens: 1000 }),
      (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === "state" && /state\.kind/.test(e.message));
  }
  assert.equal(ChatHistory.fromJSON(JSON.parse(JSON.stringify(state)), { maxTokens: 1000 }).messages.length, 3);
});

test("a revoked proxy, as a message or a list, is a ReduceError from every ChatHistory entry, not a TypeError", () => {
  const message = Proxy.revocable({ role: "user", content: "hi" }, {});
  const list = Proxy.revocable([], {});
  message.revoke();
  list.revoke();
  const config = { maxTokens: 100 };
  const history = new ChatHistory(config);
  const state = history.toJSON();
  const cases = [
    [() => new ChatHistory(config, [message.proxy]), "INVALID_MESSAGE"],
    [() => new ChatHistory(config, list.proxy), "INVALID_MESSAGES"],
    [() => history.push(message.proxy), "INVALID_MESSAGE"],
    [() => ChatHistory.fromJSON({ ...state, messages: [message.proxy] }, config), "INVALID_MESSAGE"],
    [() => ChatHistory.fromJSON({ ...state, messages: list.proxy }, config), "INVALID_CONFIG"],
    [() => ChatHistory.fromJSON({ ...state, original: list.proxy }, config), "INVALID_CONFIG"],
  ];
  for (const [call, code] of cases) {
    assert.throws(call, (e) => e instanceof ReduceError && e.code === code && /could not be read/.test(e.message), String(call));
  }
  // (counts that cannot be read are no counts, as counts that are not an array.)
  assert.equal(ChatHistory.fromJSON({ ...state, counts: list.proxy }, config).messages.length, 0);
  history.push({ role: "user", content: "still works" });
  assert.equal(history.messages.length, 1);
});

test("prepare({ signal }) bounds that prepare's summarizer instead of config.signal: an aborted request does not stop the history for good", async () => {
  const aborted = AbortSignal.abort();
  let calls = 0;
  const config = { strategy: "summarize", targetMessages: 4, signal: aborted, summarizer: async () => { calls++; return "Earlier: plants."; } };
  const history = new ChatHistory(config, chat(6));
  await assert.rejects(history.prepare(), (e) => e instanceof ReduceError && e.code === "ABORTED");
  await assert.rejects(history.prepare(), (e) => e.code === "ABORTED", "config.signal stays aborted");
  const messages = await history.prepare({ signal: new AbortController().signal });
  assert.equal(calls, 1);
  assert.match(messages[1].content, /Earlier: plants/);
  history.push(...chat(6).slice(1));
  await assert.rejects(history.prepare({ signal: aborted }), (e) => e.code === "ABORTED");
  await assert.rejects(history.prepare({ signal: "no" }), (e) => e.code === "INVALID_CONFIG" && e.field === "signal");
});

test("recordUsage: a reply that holds tool outputs (an AI SDK UIMessage's tool parts) takes no outputTokens count, so the next prompt is still reduced", async () => {
  // outputTokens counts what the model wrote; the UIMessage holds the tool's output too: as
  // its exact count, it hid a 1,682-token prompt over a 1,000 budget (audit).
  const config = { maxTokens: 1000 };
  const history = new ChatHistory(config);
  history.push({ id: "u1", role: "user", parts: [{ type: "text", text: "Search the docs" }] });
  let prompt = await history.prepare();
  history.recordUsage({ inputTokens: estimateTokens(prompt, config), outputTokens: 40 });
  history.push({ id: "a1", role: "assistant", parts: [
    { type: "tool-search", toolCallId: "c1", state: "output-available", input: { q: "d" }, output: "lorem ipsum dolor sit amet ".repeat(300) },
    { type: "text", text: "Found it." },
  ] });
  history.push({ id: "u2", role: "user", parts: [{ type: "text", text: "and now?" }] });
  assert.equal(history.toJSON().counts[1], null, "no count for the reply");
  prompt = await history.prepare();
  assert.ok(estimateTokens(prompt, config) <= 800, `${estimateTokens(prompt, config)}`);
  assert.equal(prompt.at(-1).id, "u2");
  // A plain reply still takes it.
  history.push({ id: "a2", role: "assistant", parts: [{ type: "text", text: "Here." }] });
  history.recordUsage({ outputTokens: 3 });
  assert.equal(history.toJSON().counts.at(-1), 3);
});

test("ChatHistory says when the last prepare() missed its budget (stats().overBudget, and reduceEnd's overBudget)", async () => {
  const ends = [];
  const config = { maxTokens: 50, onEvent: (e) => { if (e.type === "reduceEnd") ends.push(e.overBudget); } };
  const history = new ChatHistory(config, chat(3));
  await history.prepare();
  assert.equal(history.stats().overBudget, false);
  history.push({ role: "user", content: "a long question ".repeat(40) }); // the latest input alone is over
  await history.prepare();
  assert.equal(history.stats().overBudget, true);
  // (Kept through a JSON round trip, as the rest of the stats.)
  assert.equal(ChatHistory.fromJSON(JSON.parse(JSON.stringify(history)), config).stats().overBudget, true);
  history.push({ role: "assistant", content: "ok" }, { role: "user", content: "short" });
  await history.prepare();
  assert.equal(history.stats().overBudget, false);
  assert.deepEqual(ends, [false, true, false]);
});

test("stats().overBudget is the last prepare()'s: false again after one that rejected", async () => {
  // The summarizer answers once, then fails.
  let calls = 0;
  const summarizer = async () => { if (calls++ === 0) return "ok"; throw new Error("down"); };
  const config = { strategy: "summarize", maxTokens: 50, onSummarizerError: "throw", summarizer };
  const history = new ChatHistory(config, chat(1));
  history.push({ role: "user", content: "a long question ".repeat(40) });
  await history.prepare(); // (the latest input alone is over: summarized all the same, over budget)
  assert.equal(history.stats().overBudget, true);
  history.push({ role: "assistant", content: "ok" }, { role: "user", content: "short" });
  await assert.rejects(history.prepare(), (e) => e instanceof ReduceError); // (throw mode: no summary)
  assert.equal(history.stats().overBudget, false);
});

test("after fromJSON, a working message that is one of original is the same object in both, as before the round trip", async () => {
  const config = { maxTokens: 10_000 };
  const history = new ChatHistory(config, chat(2));
  history.push({ id: "a", role: "assistant", content: "pending" });
  assert.equal(history.messages.at(-1), history.original.at(-1));
  const state = JSON.parse(JSON.stringify(history.toJSON()));
  assert.deepEqual(state.origins, [0, 1, 2, 3, 4, 5]);
  const restored = ChatHistory.fromJSON(state, config);
  restored.messages.forEach((m, i) => assert.equal(m, restored.original[i], `message ${i}`));
  // An edit through original reaches the prompt (it did not: two objects, audit).
  restored.original.at(-1).content = "done";
  assert.equal((await restored.prepare()).at(-1).content, "done");
  // A state without origins (toJSON before them) still loads.
  const { origins, ...older } = state;
  assert.equal(ChatHistory.fromJSON(older, config).messages.length, 6);
});

test("a state written by an earlier package loads as it was: literal states of versions 2 and 1", async () => {
  // Written as toJSON() wrote them before ChatHistory's decisions moved into the core: a
  // state kept in localStorage or a KV store must load in every later version.
  const v2 = {
    kind: "chat-history-reducer/ChatHistory",
    version: 2,
    messages: [
      { role: "system", content: "You help with gardening." },
      { role: "user", content: "[offloaded ctx_0123456789abcdef] Turn 0: how do I care…" },
      { role: "user", content: "Turn 1: and the roses?" },
      { role: "assistant", content: "Water them weekly." },
    ],
    original: [
      { role: "system", content: "You help with gardening." },
      { role: "user", content: "Turn 0: how do I care for plant number 0?" },
      { role: "user", content: "Turn 1: and the roses?" },
      { role: "assistant", content: "Water them weekly." },
    ],
    origins: [0, -1, 2, 3],
    counts: [7, null, 12, 6],
    events: [{ type: "offload", messages: 1, tokensBefore: 60, tokensAfter: 41 }],
    offloaded: { ctx_0123456789abcdef: [1] },
    stats: { reductions: 1, summarizerCalls: 0, tokensSaved: 19, overBudget: false },
    promptLength: 3,
    pendingOutputTokens: null,
    calibration: 1.25,
  };
  const config = { maxTokens: 1000 };
  const h = ChatHistory.fromJSON(JSON.parse(JSON.stringify(v2)), config);
  // Written back as it was read, with what each message covers (a message of `original`
  // itself, the preview all of it) and no edits.
  const { events, ...head } = v2;
  const now = { ...head, covers: [[0], [0, 4], [2], [3]], events, stats: { ...v2.stats, edits: 0, undone: 0 } };
  assert.deepEqual(JSON.parse(JSON.stringify(h.toJSON())), now, "written back as it was read");
  assert.deepEqual(h.stats(), { reductions: 1, summarizerCalls: 0, tokensSaved: 19, compressionRatio: 0.84, overBudget: false, edits: 0, undone: 0 });
  assert.equal(h.reload("ctx_0123456789abcdef")[0], h.original[1]);
  assert.equal(h.messages[0], h.original[0]);
  assert.deepEqual(h.events, v2.events);
  // The last prompt was its first 3 messages: recordUsage spreads inputTokens over them.
  h.recordUsage({ inputTokens: 30 });
  assert.equal(h.toJSON().counts.slice(0, 3).reduce((a, b) => a + b, 0), 30);

  // Version 1 wrote every offloaded original out, and no origins: the originals are found
  // in `original` by their JSON, and version 2 is written back.
  const { origins: _, ...rest } = v2;
  const v1 = { ...rest, version: 1, offloaded: { ctx_0123456789abcdef: [{ role: "user", content: "Turn 0: how do I care for plant number 0?" }] } };
  const h1 = ChatHistory.fromJSON(JSON.parse(JSON.stringify(v1)), config);
  const back = h1.toJSON();
  assert.equal(back.version, 2);
  assert.deepEqual(back.offloaded, { ctx_0123456789abcdef: [1] });
  assert.deepEqual(back.counts, v2.counts);
  assert.equal(h1.reload("ctx_0123456789abcdef")[0], h1.original[1]);
  assert.deepEqual(h1.stats(), { reductions: 1, summarizerCalls: 0, tokensSaved: 19, compressionRatio: 0.84, overBudget: false, edits: 0, undone: 0 });
  // An edit of a state without covers undoes the preview: its original is back.
  h1.rewind(3);
  assert.deepEqual(h1.messages, h1.original);
});

test("rewind / remove / clear: a summary of messages that remain stays, one of a removed message is undone", async () => {
  let calls = 0;
  const summarizer = async (r) => { calls++; return `gist of ${r.messages.length}`; };
  const config = { targetMessages: 4, thresholdMessages: 1, strategy: "summarize", summarizer };
  const h = new ChatHistory(config, chat(5)); // system + 10
  await h.prepare();
  const summary = h.messages[1];
  assert.match(summary.content, /gist of 6/);
  // Regenerate: rewind to the last reply; the summary covers none of it and stays.
  h.rewind(10);
  assert.equal(h.original.length, 10);
  assert.equal(h.messages[1], summary);
  assert.deepEqual(h.messages.slice(2), h.original.slice(7));
  h.push({ role: "assistant", content: "again" });
  await h.prepare();
  assert.equal(calls, 1, "no summarizer call");
  // Removing a message the summary covers undoes it: its other messages come back.
  h.remove(3);
  assert.deepEqual(h.messages, h.original);
  assert.equal(h.original.length, 10);
  assert.deepEqual(h.events.slice(-2).map((e) => [e.type, e.messages, e.undone, e.restored]), [["rewind", 1, 0, 0], ["remove", 1, 1, 5]]);
  const e = h.events.at(-1);
  assert.ok(e.tokensAfter > e.tokensBefore, "the summary's messages are back");
  assert.deepEqual([h.stats().edits, h.stats().undone], [2, 1]);
  // The next prepare() reduces again; a JSON round trip keeps what each message covers.
  await h.prepare();
  assert.equal(calls, 2);
  const back = ChatHistory.fromJSON(JSON.parse(JSON.stringify(h)), config);
  back.rewind(9);
  h.rewind(9);
  assert.deepEqual(back.messages, h.messages);
  assert.deepEqual(back.stats(), h.stats());
  h.clear();
  assert.deepEqual([h.messages, h.original, h.stats().edits], [[], [], 4]);
});

test("an edit during a prepare(): the prepare's reduction no longer applies; a bad index is INVALID_MESSAGE", async () => {
  let release;
  const summarizer = () => new Promise((r) => { release = () => r("gist"); });
  const h = new ChatHistory({ targetMessages: 4, thresholdMessages: 1, strategy: "summarize", summarizer }, chat(5));
  const pending = h.prepare();
  await sleep(5);
  h.rewind(9);
  release();
  assert.deepEqual(await pending, h.original, "the edited history, unreduced");
  assert.equal(h.stats().reductions, 0);
  assert.equal(h.stats().summarizerCalls, 1, "the call was made all the same");
  for (const bad of [9, -1, 1.5, "2", undefined, NaN]) {
    assert.throws(() => h.rewind(bad), (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGE" &&
      /^ChatHistory\.rewind: .* is not an index of original \(9 messages\)$/.test(e.message), String(bad));
    assert.throws(() => h.remove(bad), (e) => e.code === "INVALID_MESSAGE", String(bad));
  }
  assert.throws(() => h.rewind(12), (e) => e.index === 12);
  assert.equal(h.original.length, 9);
});

test("remove takes a tool call with its results", async () => {
  const h = new ChatHistory({ maxTokens: 10_000 }, [
    { role: "user", content: "weather?" },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "w", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "c1", content: "sunny" },
    { role: "assistant", content: "Sunny." },
  ]);
  h.remove(2);
  assert.deepEqual(h.original.map((m) => m.content), ["weather?", "Sunny."]);
  assert.deepEqual(h.messages, h.original);
});

test("toJSON({ original: \"omit\" }) leaves original out; fromJSON joins the app's messages only if they match", async () => {
  const config = { targetMessages: 4, thresholdMessages: 1, strategy: "summarize", summarizer: async (r) => `gist of ${r.messages.length}` };
  const h = new ChatHistory(config, chat(6));
  await h.prepare();
  const full = JSON.stringify(h);
  const state = JSON.parse(JSON.stringify(h.toJSON({ original: "omit" })));
  assert.equal(state.original, undefined);
  assert.deepEqual(Object.keys(state.originalDigest), ["count", "hash"]);
  assert.equal(state.originalDigest.count, 13);
  assert.ok(JSON.stringify(state).length < full.length - JSON.stringify(h.original).length + 80, "the full state less original");
  // The app's own messages (here a copy as useChat would have them) join it again.
  const mine = JSON.parse(JSON.stringify(h.original));
  const back = ChatHistory.fromJSON(state, config, { original: mine });
  assert.equal(back.original[0], mine[0], "the app's objects");
  assert.deepEqual(back.messages, h.messages);
  assert.equal(back.messages.at(-1), mine.at(-1), "working messages that are originals are the app's objects");
  assert.deepEqual(back.toJSON(), h.toJSON());
  // Refused: none given, another count, a message changed.
  const refused = (original, what) => assert.throws(() => ChatHistory.fromJSON(state, config, original === undefined ? undefined : { original }),
    (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === "state" && what.test(e.message), String(what));
  refused(undefined, /needs fromJSON\(state, config, \{ original \}\)/);
  refused(mine.slice(1), /has 12 messages, the state was written with 13/);
  refused(mine.map((m, i) => (i === 3 ? { ...m, content: "edited" } : m)), /not what the state was written with/);
  refused(mine.map((m, i) => (i === 3 ? { content: m.content, role: m.role } : m)), /not what the state was written with/);
  // A full state takes `original` too, when it is the same.
  assert.equal(ChatHistory.fromJSON(JSON.parse(full), config, { original: mine }).original[1], mine[1]);
  assert.throws(() => h.toJSON({ original: "none" }), (e) => e.code === "INVALID_CONFIG" && e.field === "original");
});

test("a state without original is about its working history's size: 120 messages of 5 KB stay far under localStorage's 5 MB", async () => {
  const config = { maxTokens: 20_000, strategy: "summarize", summarizer: async () => "summary ".repeat(300) };
  const h = new ChatHistory(config);
  for (let t = 0; t < 60; t++) {
    h.push({ role: "user", content: `Question ${t}: ` + "lorem ipsum dolor sit amet ".repeat(185) });
    await h.prepare();
    h.push({ role: "assistant", content: `Answer ${t}: ` + "lorem ipsum dolor sit amet ".repeat(185) });
  }
  const full = JSON.stringify(h).length, omitted = JSON.stringify(h.toJSON({ original: "omit" })).length;
  const working = JSON.stringify(h.messages).length;
  // (Measured 2026-11-28: 709,802 and 105,246 characters, the working history 103,244.)
  assert.ok(full > JSON.stringify(h.original).length, `full: ${full}`);
  assert.ok(omitted < working + 4096, `without original: ${omitted}, the working history ${working}`);
  assert.ok(omitted < full / 5);
});

test("prepare() reads only what was pushed since the last one: a message changed in place is not seen; rewind and push it again", async () => {
  // Each prepare() gives what a reduction of the working history gives, while the history
  // grows past its trigger and is reduced again and again (the messages it read before are
  // taken over unread: src/wasm/history.rs `trusted`).
  const config = { maxTokens: 400 };
  const h = new ChatHistory(config, chat(20));
  const more = chat(60).slice(41);
  let reductions = 0;
  for (const m of more) {
    h.push(m);
    const before = h.messages;
    const expected = reduceSync(before, config);
    assert.deepEqual(await h.prepare(), expected.messages);
    if (expected.reduced) reductions++;
  }
  assert.ok(reductions >= 2, `reduced ${reductions} times`);
  // A message the history holds, changed in place (against the contract, docs/api.md): the
  // next prepare() does not read it again. Its estimate is the one it had.
  const big = new ChatHistory({ maxTokens: 2000 }, chat(20));
  await big.prepare();
  big.push({ role: "user", content: "one more" });
  big.messages[3].content = "many words ".repeat(2000);
  assert.equal((await big.prepare()).length, 42, "not reduced: the change is not seen");
  // Changed the way the contract says (rewind to it, push the changed messages again), it is.
  const tail = big.messages.slice(3).map((m, k) => (k === 0 ? { ...m } : m));
  big.rewind(3);
  big.push(...tail);
  const reduced = await big.prepare();
  assert.ok(reduced.length < 42, "reduced once the changed message is pushed again");
  assert.ok(estimateTokens(reduced) <= 2000);
});
