// Every chat format of SPEC §2: a conversation with parallel tool calls, interleaved text
// and images, reduced under a tight budget, must still be a history the provider accepts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { reduce, reduceSync, shouldReduce, analyze, estimateTokens, ChatHistory, ReduceError } from "chat-history-reducer";
import { HumanMessage, AIMessage, ToolMessage, SystemMessage, FunctionMessage } from "@langchain/core/messages";
import { accepts, isRealUser, lcType } from "./providers.mjs";
import { rng } from "./random.mjs";

const TURNS = 8;
const bulky = (t) => JSON.stringify({ turn: t, rows: Array.from({ length: 12 }, (_, k) => ({ k, v: `value ${t}-${k}` })) });
const IMAGE_B64 = "iVBORw0KGgo=";

// ---- builders: the same conversation in each format --------------------------------------

const build = {
  openai() {
    const m = [{ role: "system", content: "Be brief." }];
    for (let t = 0; t < TURNS; t++) {
      m.push(t % 3 === 0
        ? { role: "user", content: [{ type: "text", text: `Look at picture ${t}` }, { type: "image_url", image_url: { url: `data:image/png;base64,${IMAGE_B64}` } }] }
        : { role: "user", content: `Question ${t}?` });
      m.push({ role: "assistant", content: `Checking ${t}.`, tool_calls: [
        { id: `a${t}`, type: "function", function: { name: "search", arguments: JSON.stringify({ q: t }) } },
        { id: `b${t}`, type: "function", function: { name: "fetch", arguments: "{}" } }] });
      m.push({ role: "tool", tool_call_id: `a${t}`, content: bulky(t) });
      m.push({ role: "tool", tool_call_id: `b${t}`, content: "fetched" });
      m.push({ role: "assistant", content: `Answer ${t}.` });
    }
    return m;
  },
  "openai-responses"() {
    const m = [{ type: "message", role: "developer", content: [{ type: "input_text", text: "Be brief." }] }];
    for (let t = 0; t < TURNS; t++) {
      m.push({ type: "message", role: "user", content: t % 3 === 0
        ? [{ type: "input_text", text: `Look at picture ${t}` }, { type: "input_image", image_url: `data:image/png;base64,${IMAGE_B64}` }]
        : [{ type: "input_text", text: `Question ${t}?` }] });
      m.push({ type: "reasoning", id: `rs_${t}`, summary: [{ type: "summary_text", text: `I should search for ${t}.` }] });
      m.push({ type: "function_call", call_id: `a${t}`, name: "search", arguments: JSON.stringify({ q: t }) });
      m.push({ type: "function_call", call_id: `b${t}`, name: "fetch", arguments: "{}" });
      m.push({ type: "function_call_output", call_id: `a${t}`, output: bulky(t) });
      m.push({ type: "function_call_output", call_id: `b${t}`, output: "fetched" });
      m.push({ type: "message", role: "assistant", content: [{ type: "output_text", text: `Answer ${t}.` }] });
    }
    return m;
  },
  anthropic() {
    const m = [];
    for (let t = 0; t < TURNS; t++) {
      m.push({ role: "user", content: t % 3 === 0
        ? [{ type: "text", text: `Look at picture ${t}` }, { type: "image", source: { type: "base64", media_type: "image/png", data: IMAGE_B64 } }]
        : `Question ${t}?` });
      m.push({ role: "assistant", content: [
        { type: "thinking", thinking: `Plan for ${t}`, signature: "sig" },
        { type: "text", text: `Checking ${t}.` },
        { type: "tool_use", id: `a${t}`, name: "search", input: { q: t } },
        { type: "tool_use", id: `b${t}`, name: "fetch", input: {} }] });
      m.push({ role: "user", content: [
        { type: "tool_result", tool_use_id: `a${t}`, content: bulky(t) },
        { type: "tool_result", tool_use_id: `b${t}`, content: [{ type: "text", text: "fetched" }] }] });
      m.push({ role: "assistant", content: `Answer ${t}.` });
    }
    return m;
  },
  vercel() {
    const m = [{ role: "system", content: "Be brief." }];
    for (let t = 0; t < TURNS; t++) {
      m.push({ role: "user", content: t % 3 === 0
        ? [{ type: "text", text: `Look at picture ${t}` }, { type: "image", image: IMAGE_B64, mediaType: "image/png" }]
        : `Question ${t}?` });
      m.push({ role: "assistant", content: [
        { type: "text", text: `Checking ${t}.` },
        { type: "tool-call", toolCallId: `a${t}`, toolName: "search", input: { q: t } },
        { type: "tool-call", toolCallId: `b${t}`, toolName: "delete", input: {} },
        { type: "tool-approval-request", approvalId: `ap${t}`, toolCallId: `b${t}` }] });
      m.push({ role: "tool", content: [
        { type: "tool-result", toolCallId: `a${t}`, toolName: "search", output: { type: "json", value: JSON.parse(bulky(t)) } },
        { type: "tool-approval-response", approvalId: `ap${t}`, approved: true }] });
      m.push({ role: "tool", content: [{ type: "tool-result", toolCallId: `b${t}`, toolName: "delete", output: { type: "text", value: "deleted" } }] });
      m.push({ role: "assistant", content: [{ type: "text", text: `Answer ${t}.` }] });
    }
    return m;
  },
  "vercel-ui"() {
    const m = [{ id: "s", role: "system", parts: [{ type: "text", text: "Be brief." }] }];
    for (let t = 0; t < TURNS; t++) {
      m.push({ id: `u${t}`, role: "user", parts: t % 3 === 0
        ? [{ type: "text", text: `Look at picture ${t}` }, { type: "file", mediaType: "image/png", url: `data:image/png;base64,${IMAGE_B64}` }]
        : [{ type: "text", text: `Question ${t}?` }] });
      m.push({ id: `a${t}`, role: "assistant", parts: [
        { type: "step-start" },
        { type: "text", text: `Checking ${t}.` },
        { type: "tool-search", toolCallId: `a${t}`, state: "output-available", input: { q: t }, output: JSON.parse(bulky(t)) },
        { type: "dynamic-tool", toolName: "fetch", toolCallId: `b${t}`, state: "output-available", input: {}, output: "fetched" },
        { type: "text", text: `Answer ${t}.` }] });
    }
    return m;
  },
  gemini() {
    const m = [];
    for (let t = 0; t < TURNS; t++) {
      m.push({ role: "user", parts: t % 3 === 0
        ? [{ text: `Look at picture ${t}` }, { inlineData: { mimeType: "image/png", data: IMAGE_B64 } }]
        : [{ text: `Question ${t}?` }] });
      // No ids: responses match by name and order.
      m.push({ role: "model", parts: [{ functionCall: { name: "search", args: { q: t } } }, { functionCall: { name: "fetch", args: {} } }] });
      m.push({ role: "user", parts: [
        { functionResponse: { name: "search", response: JSON.parse(bulky(t)) } },
        { functionResponse: { name: "fetch", response: { ok: true } } }] });
      m.push({ role: "model", parts: [{ text: `Answer ${t}.` }] });
    }
    return m;
  },
  langchain() {
    const m = [new SystemMessage("Be brief.")];
    for (let t = 0; t < TURNS; t++) {
      m.push(t % 3 === 0
        ? new HumanMessage({ content: [{ type: "text", text: `Look at picture ${t}` }, { type: "image_url", image_url: { url: `data:image/png;base64,${IMAGE_B64}` } }] })
        : new HumanMessage(`Question ${t}?`));
      m.push(new AIMessage({ content: `Checking ${t}.`, tool_calls: [
        { id: `a${t}`, name: "search", args: { q: t } },
        { id: `b${t}`, name: "fetch", args: {} }] }));
      m.push(new ToolMessage({ tool_call_id: `a${t}`, content: bulky(t) }));
      m.push(new ToolMessage({ tool_call_id: `b${t}`, content: "fetched" }));
      m.push(new AIMessage(`Answer ${t}.`));
    }
    return m;
  },
};

for (const [format, make] of Object.entries(build)) {
  test(`${format}: detected, grouped, and reduced into a history the provider accepts`, () => {
    const input = make();
    accepts[format](input); // the fixture itself is valid
    const a = analyze(input);
    assert.equal(a.format, format, "auto-detection");
    assert.equal(a.messages.length, input.length);
    const total = estimateTokens(input);
    assert.equal(total, a.totalTokens);
    const images = input.filter((m, i) => i % 1 === 0 && JSON.stringify(m).includes(IMAGE_B64)).length;
    assert.ok(total > images * 1000, "images count imageTokens");

    for (const strategy of ["truncate", "priority"]) {
      for (const maxTokens of [Math.floor(total / 2), Math.floor(total / 5), 400]) {
        const config = { maxTokens, strategy, format: "auto" };
        const r = reduceSync(input, config);
        assert.equal(r.reduced, true, `${strategy} ${maxTokens}`);
        accepts[format](r.messages);
        assert.ok(r.tokensAfter <= Math.floor(maxTokens * 0.8) || r.overBudget, `${strategy}: ${r.tokensAfter} tokens over target`);
        const lastUser = input.findLastIndex((m) => isRealUser(format, m));
        // Kept messages are the input objects; a note of the current turn's oldest tool
        // steps may stand where they were (SPEC §9.13), their originals offloaded.
        const own = r.messages.filter((m) => input.includes(m));
        own.forEach((m, k) => assert.equal(m, input[r.kept[k]], "kept messages are the input objects"));
        const notes = r.messages.filter((m) => !input.includes(m));
        assert.ok(notes.length <= 1, "one note at most");
        if (notes.length === 1) {
          assert.match(JSON.stringify(notes[0]), /\[compressed tool run: \d+ messages, stored as (ctx_[0-9a-f]{16})/);
          const id = /stored as (ctx_[0-9a-f]{16})/.exec(JSON.stringify(notes[0]))[1];
          assert.deepEqual(r.offloaded[id].length, r.rewritten.length, "the note's originals are offloaded");
          assert.ok(r.rewritten.every((i) => i > lastUser), "the note stands for current-turn steps only");
        }
        assert.ok(r.kept.includes(lastUser), "the latest user input stays");
        const firstConversation = r.messages.find((m) => !["system", "developer"].includes(m.role ?? lcType(m)));
        assert.ok(isRealUser(format, firstConversation), `${strategy} ${maxTokens}: starts on a user input`);
        const again = reduceSync(r.messages, config);
        assert.equal(again.reduced, false, "a reduced history is not reduced again");
        assert.deepEqual(again.kept, r.messages.map((_, k) => k));
      }
    }
  });
}

test("LangChain's toDict() and serialized forms are read too", () => {
  const instances = build.langchain();
  const dicts = instances.map((m) => m.toDict());
  const serialized = JSON.parse(JSON.stringify(instances));
  for (const form of [dicts, serialized]) {
    assert.equal(analyze(form).format, "langchain");
    assert.equal(estimateTokens(form), estimateTokens(instances));
    const a = analyze(form);
    assert.equal(a.messages[2].group, a.messages[4].group, "AI tool calls and their ToolMessages share a group");
  }
});

test("LangChain's toDict() and serialized forms: an offloaded message is a copy in the same form, its content cut", () => {
  const long = "The report says ".repeat(800);
  const instances = [new HumanMessage("q0"), new AIMessage(long), new HumanMessage("q1"), new AIMessage("a1"), new HumanMessage("q2")];
  const forms = { toDict: instances.map((m) => m.toDict()), serialized: JSON.parse(JSON.stringify(instances)) };
  for (const [name, input] of Object.entries(forms)) {
    const config = { strategy: "progressive", maxTokens: estimateTokens(input) - 1, largeMessageTokens: 300, startOn: "any" };
    const r = reduceSync(input, config);
    assert.deepEqual(r.rewritten, [1], `${name}: ${r.events.map((e) => `${e.type}:${e.tokensBefore}->${e.tokensAfter}`)}`);
    assert.deepEqual(r.dropped, [], name);
    const copy = r.messages[1], fields = name === "toDict" ? "data" : "kwargs";
    assert.deepEqual(Object.keys(copy), Object.keys(input[1]), `${name}: no field added`);
    assert.deepEqual(Object.keys(copy[fields]), Object.keys(input[1][fields]), name);
    assert.match(copy[fields].content, /^\[offloaded \d+ tokens as ctx_[0-9a-f]{16}; /, name);
    assert.ok(r.tokensAfter < r.tokensBefore / 5, `${name}: ${r.tokensBefore} -> ${r.tokensAfter}`);
    assert.equal(analyze(r.messages).format, "langchain");
    assert.equal(reduceSync(r.messages, { ...config, maxTokens: r.tokensAfter - 1 }).rewritten.length, 0, `${name}: not offloaded again`);
  }
});

test("a mix of formats is INVALID_MESSAGES; a named format is checked", () => {
  const mixed = [build.openai()[1], build.anthropic()[1]];
  assert.throws(() => analyze(mixed), (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGES" && /mix/.test(e.message));
  const gemini = build.gemini();
  assert.throws(() => reduceSync(gemini, { maxTokens: 100, format: "openai" }), (e) => e.code === "INVALID_MESSAGE" && e.index === 0);
  assert.throws(() => analyze(gemini, { format: "cobol" }), (e) => e.code === "INVALID_CONFIG" && e.field === "format");
});

test("a named format refuses the parts and items of another format, naming it (INVALID_MESSAGE)", () => {
  const anthropic = [
    { role: "user", content: "Find the config file. " + "Context: ".repeat(150) },
    { role: "assistant", content: [{ type: "text", text: "Searching." }, { type: "tool_use", id: "toolu_1", name: "grep", input: { q: "config" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "config.yml" }] },
    { role: "assistant", content: [{ type: "text", text: "Found config.yml." }] },
    { role: "user", content: "Thanks" },
  ];
  const vercel = [
    { role: "user", content: "Find the config file." },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "grep", input: { q: "config" } }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "grep", output: { type: "text", value: "config.yml" } }] },
    { role: "user", content: "Thanks" },
  ];
  const langchain = [
    { type: "human", content: "Find the config file." },
    { type: "ai", content: "", tool_calls: [{ id: "c1", name: "grep", args: { q: "config" } }] },
    { type: "tool", tool_call_id: "c1", content: "config.yml" },
    { type: "human", content: "Thanks" },
  ];
  const openai = [
    { role: "user", content: "Find the config file." },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "grep", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "c1", content: "config.yml" },
  ];
  const cases = [
    [anthropic, "anthropic", ["openai", "vercel", "openai-responses", "gemini", "langchain"], 1],
    [vercel, "vercel", ["openai", "anthropic", "openai-responses", "gemini", "langchain"], 1],
    [langchain, "langchain", ["openai-responses"], 0],
    [openai, "openai", ["openai-responses"], 1],
  ];
  for (const [input, own, wrong, index] of cases) {
    assert.equal(analyze(input).format, own);
    for (const format of wrong) {
      for (const call of [() => reduceSync(input, { format, maxTokens: 100 }), () => estimateTokens(input, { format })]) {
        assert.throws(call, (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGE", `${own} read as ${format}`);
      }
      if (["openai", "vercel", "openai-responses"].includes(format)) {
        assert.throws(() => analyze(input, { format }), (e) => e.index === index && e.message.includes(own), `${own} as ${format}: the error names ${own}`);
      }
    }
  }
  // In a detected format, a part of another one is still a mix of formats.
  assert.throws(() => analyze([anthropic[0], anthropic[1], vercel[1]]), (e) => e.code === "INVALID_MESSAGES" && /mix/.test(e.message));
});

test("plain user/assistant text is accepted under every format that fits", () => {
  const plain = [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }];
  assert.equal(analyze(plain).format, "openai");
  for (const format of ["openai", "anthropic", "vercel", "openai-responses"]) {
    assert.equal(analyze(plain, { format }).format, format);
  }
});

test("groups: the responses reasoning item stays with its calls, Gemini matches by name", () => {
  const r = analyze(build["openai-responses"]());
  const [reasoning, call1, call2, out1, out2] = r.messages.slice(2, 7);
  assert.equal(reasoning.role, "other");
  for (const m of [call1, call2, out1, out2]) assert.equal(m.group, reasoning.group);
  const g = analyze(build.gemini());
  assert.equal(g.messages[1].group, g.messages[2].group);
  assert.equal(g.messages[2].realUser, false, "a turn of only functionResponse parts is not a user input");
  assert.equal(g.messages[4].round, 2);
});

test("gemini: a functionResponse is matched by id, else by order and name — an id on one side only still matches", () => {
  const weather = (id) => ({ functionCall: { ...(id ? { id } : {}), name: "get_weather", args: { city: id ?? "x" } } });
  const answer = (id, name = "get_weather") => ({ functionResponse: { ...(id ? { id } : {}), name, response: { temp: 21 } } });
  const quiet = { maxTokens: 1_000_000 };
  const history = (calls, responses) => [
    { role: "user", parts: [{ text: "Weather in Lisbon and Porto?" }] },
    { role: "model", parts: calls },
    { role: "user", parts: responses },
    { role: "model", parts: [{ text: "21°C in both." }] },
    { role: "user", parts: [{ text: "And tomorrow?" }] },
  ];
  // The audit's cases: a call with an id answered without one (as the SDK's examples write
  // it), and the other way round. Both were taken for orphans and dropped under budget,
  // leaving the call without its result.
  for (const [calls, responses] of [
    [[weather("fc_1")], [answer()]],
    [[weather()], [answer("fc_1")]],
    [[weather("fc_1"), weather("fc_2")], [answer(), answer()]],
    [[weather("fc_1"), weather("fc_2")], [answer("fc_2"), answer()]],
    [[weather(), weather()], [answer(), answer()]],
  ]) {
    const input = history(calls, responses);
    const what = JSON.stringify([calls, responses]);
    assert.equal(shouldReduce(input, quiet), false, what);
    const r = reduceSync(input, quiet);
    assert.deepEqual([r.reduced, r.dropped], [false, []], what);
    const g = analyze(input).messages;
    assert.equal(g[1].group, g[2].group, what);
    // Tight: the call and its results go or stay together, and the provider accepts it.
    for (const maxTokens of [40, 60, 80]) accepts.gemini(reduceSync(input, { maxTokens, startOn: "any" }).messages);
  }
  // By order: two same-named calls answered without ids take one response each; a third
  // response has no call left and is an orphan (dropped).
  const extra = history([weather("fc_1"), weather("fc_2")], [answer(), answer(), answer()]);
  const r = reduceSync(extra, quiet);
  assert.equal(r.reduced, true);
  assert.deepEqual(r.events.map((e) => e.type), ["orphans"]);
  assert.deepEqual(r.rewritten, [2]);
  assert.equal(r.messages[2].parts.length, 2, "the two responses that answer the calls stay (all three went by their shared name)");
  accepts.gemini(r.messages);
  // A response of a name no call has is an orphan, whatever its id.
  const stray = history([weather("fc_1")], [answer("fc_1"), answer("zz", "get_time")]);
  assert.deepEqual(reduceSync(stray, quiet).events.map((e) => e.type), ["orphans"]);
});

// ---- payloads: a non-string payload counts as its JSON text (SPEC §3) ----------------------

/** Random JSON-like data, with what JSON.stringify escapes, skips or writes as null. */
function randomPayload(rand, depth = 0) {
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const str = () => {
    const pieces = ["plain", 'q"uote', "back\\slash", "line\nbreak", "tab\t", "\u0001ctl", "\b\f\r", "é", "漢字",
      "😀", "\ud800", "\udc00x", "\u2028", "", " ", "\ud83d\ude00\ud83d"];
    let s = "";
    for (let k = Math.floor(rand() * 5); k > 0; k--) s += pick(pieces);
    return s;
  };
  const r = rand();
  if (depth > 4 || r < 0.3) return str();
  if (r < 0.45) return pick([0, -0, 1, -17, 0.1, 1e21, 1.5e-7, 123456789.125, NaN, Infinity, -Infinity]);
  if (r < 0.5) return pick([true, false, null]);
  if (r < 0.75) {
    const a = Array.from({ length: Math.floor(rand() * 4) }, () => (rand() < 0.1 ? pick([undefined, () => 1, Symbol("s")]) : randomPayload(rand, depth + 1)));
    if (rand() < 0.1) a.length += 2; // holes
    return a;
  }
  const o = rand() < 0.1 ? Object.create(null) : {};
  for (let k = Math.floor(rand() * 4); k > 0; k--) o[pick(["a", "key", 'k"q', "k\\b", "ключ", "🔑", "1", ""])] = rand() < 0.1 ? pick([undefined, () => 1]) : randomPayload(rand, depth + 1);
  return o;
}

/** One tool round in each format whose tool payloads may be objects, with payload `p`. */
const withPayload = {
  openai: (p) => [{ role: "user", content: "go" },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: p } }] },
    { role: "tool", tool_call_id: "c1", content: "done" }],
  anthropic: (p) => [{ role: "user", content: "go" },
    { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "f", input: p }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: [p, { type: "text", text: "t" }] }] }],
  vercel: (p) => [{ role: "user", content: "go" },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "f", input: p }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "f", output: { type: "json", value: p } }] }],
  gemini: (p) => [{ role: "user", parts: [{ text: "go" }] },
    { role: "model", parts: [{ functionCall: { name: "f", args: p } }] },
    { role: "user", parts: [{ functionResponse: { name: "f", response: p } }] }],
  langchain: (p) => [new HumanMessage("go"),
    new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "f", args: p }] }),
    new ToolMessage({ tool_call_id: "c1", content: "done" })],
};

test("a payload object counts exactly as its JSON text, in every format and estimator", () => {
  // Plain data is measured without writing its JSON out (length mode) and written out only
  // when estimated (the default estimator): both must count what JSON.stringify writes.
  const rand = rng(Number(process.env.PROPERTY_SEED ?? 5));
  const configs = [{ estimator: "length", charsPerToken: 1 }, { estimator: "length", charsPerToken: 3 }, {}];
  let compared = 0;
  for (let k = 0; k < 300; k++) {
    const payload = randomPayload(rand);
    if (payload === null || typeof payload !== "object") continue;
    const json = JSON.stringify(payload);
    for (const [format, build] of Object.entries(withPayload)) {
      // (An array in a tool result's output is a list of parts, each counted on its own.)
      if (format === "vercel" && Array.isArray(payload)) continue;
      for (const config of configs) {
        const asObject = estimateTokens(build(payload), { ...config, format });
        const asText = estimateTokens(build(json), { ...config, format });
        assert.equal(asObject, asText, `${format} ${JSON.stringify(config)}: ${json}`);
        compared++;
      }
    }
  }
  assert.ok(compared > 1000);
});

test("payloads that are not plain data count as JSON.stringify writes them, or fail as it does", () => {
  class Point { constructor() { this.x = 1; } }
  let deep = { leaf: "x" };
  for (let k = 0; k < 100; k++) deep = { deep };
  const odd = [new Date(0), new Point(), new Map([[1, 2]]), { toJSON: () => "custom" }, deep, [deep], Object.assign([1], { extra: 2 })];
  for (const payload of odd) {
    for (const config of [{ estimator: "length", charsPerToken: 1 }, {}]) {
      assert.equal(estimateTokens(withPayload.gemini(payload), config), estimateTokens(withPayload.gemini(JSON.stringify(payload)), config));
    }
  }
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  const throws = { toJSON() { throw new Error("no JSON"); } };
  for (const payload of [cyclic, { n: 1n }, [1, 2n], { nested: [throws] }]) {
    for (const config of [{ estimator: "length" }, {}, { countTokens: () => 1 }]) {
      assert.throws(() => reduceSync(withPayload.gemini(payload), { maxTokens: 10_000, ...config }),
        (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGE" && e.index === 1, JSON.stringify(Object.keys(config)));
    }
    // Also in an old message that a truncation would not estimate; the module goes on.
    const long = [...withPayload.gemini(payload), ...Array.from({ length: 200 }, (_, k) => withPayload.gemini({ k })).flat()];
    assert.throws(() => reduceSync(long, { maxTokens: 100 }), (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGE" && e.index === 1);
    assert.equal(reduceSync(long.slice(3), { maxTokens: 100 }).reduced, true);
  }
});

test("a long history's payloads left unestimated by a truncation count in tokensBefore as their JSON, with either estimator", () => {
  const rand = rng(9);
  const build = (text) => {
    const m = [];
    for (let t = 0; t < 300; t++) {
      const p = { turn: t, rows: Array.from({ length: 5 }, () => randomPayload(rand)) };
      m.push(...withPayload.gemini(text ? JSON.stringify(p) : p));
    }
    return m;
  };
  const objects = build(false);
  const texts = JSON.parse(JSON.stringify(objects)).map((m, i) => {
    const p = m.parts[0];
    if (p.functionCall) p.functionCall.args = JSON.stringify(objects[i].parts[0].functionCall.args);
    if (p.functionResponse) p.functionResponse.response = JSON.stringify(objects[i].parts[0].functionResponse.response);
    return m;
  });
  // With either estimator the oldest payloads are written out only when tokensBefore is
  // read (it is a getter then); "length" sums every other text as it is read.
  for (const config of [{}, { estimator: "length", charsPerToken: 3 }]) {
    const total = estimateTokens(texts, config);
    assert.equal(estimateTokens(objects, config), total);
    const r = reduceSync(objects.map((m) => ({ ...m })), { ...config, maxTokens: Math.floor(total / 8) });
    assert.ok(r.reduced);
    assert.equal(typeof Object.getOwnPropertyDescriptor(r, "tokensBefore").get, "function", JSON.stringify(config));
    assert.equal(r.tokensBefore, total, JSON.stringify(config));
    assert.equal(reduceSync(objects, { ...config, maxTokens: Math.floor(total / 8) }).tokensBefore, total);
  }
});

test("payload shapes of current APIs count what they hold", () => {
  const big = "word ".repeat(2000); // ~2,000 tokens of text
  const text = estimateTokens({ role: "user", content: big });
  const near = (n, want, what) => assert.ok(Math.abs(n - want) < 40, `${what}: ${n}, expected about ${want}`);
  // OpenAI custom (freeform) tool calls: { type: "custom", custom: { name, input } }.
  const custom = [
    { role: "user", content: "patch it" },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "custom", custom: { name: "apply_patch", input: big } }] },
    { role: "tool", tool_call_id: "c1", content: "done" },
  ];
  near(estimateTokens(custom[1]), text, "a custom tool call's input");
  assert.deepEqual(analyze(custom).messages.map((m) => m.group), [0, 1, 1], "the call and its result are one group");
  // AI SDK v5 tool output of content parts: the media part is an image, not its base64.
  const media = {
    role: "tool", content: [{
      type: "tool-result", toolCallId: "t1", toolName: "screenshot",
      output: { type: "content", value: [{ type: "text", text: "here" }, { type: "media", data: "A".repeat(40_000), mediaType: "image/png" }] },
    }],
  };
  near(estimateTokens(media, { format: "vercel" }), 1000, "a media part");
  assert.equal(estimateTokens(media, { format: "vercel", imageTokens: 0 }) < 30, true);
  // Responses computer_call_output: the screenshot is one image.
  const shot = { type: "computer_call_output", call_id: "cc", output: { type: "computer_screenshot", image_url: `data:image/png;base64,${"A".repeat(40_000)}` } };
  near(estimateTokens(shot, { format: "openai-responses" }), 1000, "a computer_screenshot");
  // A JSON result whose own `type` merely mentions a file is still its JSON text.
  const result = { type: "file_list", files: Array.from({ length: 200 }, (_, k) => `src/file${k}.rs`) };
  const vercelJson = { role: "tool", content: [{ type: "tool-result", toolCallId: "x", toolName: "ls", output: { type: "json", value: result } }] };
  assert.ok(estimateTokens(vercelJson, { format: "vercel", imageTokens: 0 }) > 500, "counted as text");
  // A JSON result that is an array of objects with types of their own is its JSON text too.
  const posts = Array.from({ length: 50 }, (_, k) => ({ type: k % 2 ? "social_media_post" : "file", text: `post ${k}` }));
  for (const output of [{ type: "json", value: posts }, posts]) {
    const m = { role: "tool", content: [{ type: "tool-result", toolCallId: "p", toolName: "feed", output }] };
    assert.equal(estimateTokens(m, { format: "vercel" }), estimateTokens(m, { format: "vercel", imageTokens: 0 }), "no images");
  }
  const single = { role: "tool", tool_call_id: "x", content: JSON.stringify({ type: "image", url: "https://example.com/a.png" }) };
  assert.ok(estimateTokens(single) < 40);
  // Anthropic MCP blocks: detected as Anthropic, linked, counted.
  const mcp = [
    { role: "user", content: "look it up" },
    { role: "assistant", content: [
      { type: "mcp_tool_use", id: "m1", name: "search", server_name: "docs", input: { q: "x" } },
      { type: "mcp_tool_result", tool_use_id: "m1", is_error: false, content: [{ type: "text", text: big }] },
      { type: "text", text: "found it" },
    ] },
  ];
  const a = analyze(mcp);
  assert.equal(a.format, "anthropic");
  near(a.messages[1].tokens, text, "an mcp_tool_result");
});

test("AI SDK v7: an image in a tool output of type content weighs imageTokens, not its base64 (file, file-reference, image-file-reference, reasoning-file)", () => {
  // A 300 KB PNG, as bytes a screenshot tool returns: base64 of a deterministic noise.
  const next = rng(27);
  const png = Buffer.from(Array.from({ length: 300 * 1024 }, () => Math.floor(next() * 256))).toString("base64");
  const near = (n, want, what) => assert.ok(Math.abs(n - want) < 40, `${what}: ${n}, expected about ${want}`);
  const result = (...items) => ({
    role: "tool", content: [{ type: "tool-result", toolCallId: "s1", toolName: "screenshot", output: { type: "content", value: items } }],
  });
  // v7's recommended image output: { type: "file", data: { type: "data", data }, mediaType }.
  near(estimateTokens(result({ type: "file", data: { type: "data", data: png }, mediaType: "image/png" }), { format: "vercel" }), 1000, "a file item");
  near(estimateTokens(result({ type: "file", data: { type: "url", url: "https://example.com/a.png" }, mediaType: "image" }), { format: "vercel" }), 1000, "a file item by URL");
  near(estimateTokens(result({ type: "file-reference", providerReference: { openai: "file-abc" } }), { format: "vercel" }), 1000, "a file-reference item");
  near(estimateTokens(result({ type: "image-file-reference", providerReference: { anthropic: "file-xyz" } }), { format: "vercel" }), 1000, "an image-file-reference item");
  // Detected as the AI SDK's in a history, and one image a message each.
  const history = [
    { role: "user", content: [{ type: "text", text: "What is on screen?" }] },
    { role: "assistant", content: [
      { type: "reasoning-file", data: { type: "data", data: png }, mediaType: "image/png" },
      { type: "tool-call", toolCallId: "s1", toolName: "screenshot", input: {} }] },
    result({ type: "text", text: "the screen" }, { type: "file", data: { type: "data", data: png }, mediaType: "image/png" }),
  ];
  const a = analyze(history);
  assert.equal(a.format, "vercel");
  near(a.messages[1].tokens, 1000, "a reasoning-file part");
  near(a.messages[2].tokens, 1000, "the tool result");
  // A file of inline text counts as that text.
  const doc = "Clause 4.2: the supplier shall deliver the goods within thirty days. ".repeat(100);
  const asFile = { role: "user", content: [{ type: "file", data: { type: "text", text: doc }, mediaType: "text/plain" }] };
  assert.equal(estimateTokens(asFile, { format: "vercel" }), estimateTokens({ role: "user", content: [{ type: "text", text: doc }] }, { format: "vercel" }));
});

test("AI SDK v7 UIMessage: a reasoning-file part is an image; a steering-message part's texts and files count", () => {
  const steer = "Also check the staging server before you deploy, and tell me what changed there. ".repeat(20);
  const base = { id: "a1", role: "assistant", parts: [{ type: "text", text: "Working." }] };
  const withParts = (...parts) => ({ ...base, parts: [...base.parts, ...parts] });
  const alone = estimateTokens(base, { format: "vercel-ui" });
  const image = { type: "file", url: "https://example.com/s.png", mediaType: "image/png" };
  assert.equal(estimateTokens(withParts({ type: "reasoning-file", url: "data:image/png;base64,AAAA", mediaType: "image/png" }), { format: "vercel-ui" }), alone + 1000);
  const steered = estimateTokens(withParts({ type: "steering-message", id: "s1", parts: [{ type: "text", text: steer }, image] }), { format: "vercel-ui" });
  assert.equal(steered, estimateTokens({ ...base, parts: [{ type: "text", text: "Working." }, { type: "text", text: steer }, image] }, { format: "vercel-ui" }));
  assert.ok(steered > alone + 1000 + 200, `${steered}`);
});

test("AI SDK v7 middleware prompt: a tool-approval-response whose request the SDK removed stays (no orphan); one with its request pairs", () => {
  // What a LanguageModelMiddleware's params.prompt holds for a provider-executed tool that
  // asked for approval: the SDK removes tool-approval-request parts, keeps the response.
  const prompt = [
    { role: "system", content: "Be brief." },
    { role: "user", content: [{ type: "text", text: "Deploy the site." }] },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "mcp1", toolName: "deploy", input: { site: "docs" }, providerExecuted: true }] },
    { role: "tool", content: [{ type: "tool-approval-response", approvalId: "apr1", approved: true, reason: "go ahead" }] },
  ];
  assert.equal(shouldReduce(prompt, { maxTokens: 100_000 }), false);
  const r = reduceSync(prompt, { maxTokens: 100_000 });
  assert.equal(r.reduced, false);
  assert.deepEqual(r.dropped, []);
  assert.ok(r.messages.every((m, i) => m === prompt[i]) && r.messages.length === prompt.length, "the prompt as it was");
  // Later in the conversation, with the provider's result after it: still kept, by every strategy.
  const later = [...prompt,
    { role: "assistant", content: [{ type: "tool-result", toolCallId: "mcp1", toolName: "deploy", output: { type: "text", value: "deployed" } }, { type: "text", text: "Done." }] },
    { role: "user", content: [{ type: "text", text: "Thanks" }] }];
  for (const strategy of ["truncate", "priority", "progressive"]) {
    const out = reduceSync(later, { strategy, maxTokens: 100_000 });
    assert.equal(out.reduced, false, strategy);
    assert.ok(out.messages.includes(prompt[3]), `${strategy}: the response stays`);
  }
  // A response whose request is there pairs with it (SPEC §9.4): they go together.
  const paired = [
    { role: "user", content: [{ type: "text", text: "Delete the old logs." }] },
    { role: "assistant", content: [
      { type: "text", text: "x".repeat(4000) },
      { type: "tool-call", toolCallId: "d1", toolName: "delete", input: {} },
      { type: "tool-approval-request", approvalId: "apr2", toolCallId: "d1" }] },
    { role: "tool", content: [{ type: "tool-approval-response", approvalId: "apr2", approved: true }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "d1", toolName: "delete", output: { type: "text", value: "deleted" } }] },
    { role: "user", content: [{ type: "text", text: "Now the caches." }] },
  ];
  const a = analyze(paired);
  assert.equal(a.messages[1].group, a.messages[2].group, "the request and its response are one group");
  const cut = reduceSync(paired, { maxTokens: 200, startOn: "any" });
  assert.deepEqual(cut.kept, [4]);
  accepts.vercel(cut.messages);
  // A request no response answers, once a user input follows, is still an orphan.
  const unanswered = [paired[0], { role: "assistant", content: [{ type: "tool-approval-request", approvalId: "apr3", toolCallId: "d3" }] }, paired[4]];
  assert.deepEqual(reduceSync(unanswered, { maxTokens: 100_000 }).dropped, [1]);
  // A long history's reading is kept between calls: the same objects sliced after the
  // request decide as new ones do (SPEC §9.10): the response stays, the stray result goes.
  const turns = (from) => Array.from({ length: 32 }, (_, k) => ({ role: k % 2 ? "assistant" : "user", content: `turn ${from + k}` }));
  const long = [...turns(0), ...paired, ...turns(32)];
  const any = { maxTokens: 100_000, startOn: "any" };
  assert.equal(shouldReduce(long, any), false);
  const sliced = long.slice(long.indexOf(paired[2]));
  assert.deepEqual(reduceSync(sliced, any).dropped, [1]);
  assert.deepEqual(reduceSync(structuredClone(sliced), any).dropped, [1]);
});

test("LangChain plain objects of every message type, and tool calls without an id", () => {
  const history = [
    { type: "system", content: "Be brief." },
    { type: "generic", role: "user", content: "hello" },
    { type: "ai", content: "", tool_calls: [{ name: "lookup", args: { q: "weather" } }] },
    { type: "function", name: "lookup", content: "sunny" },
    { type: "remove", id: "old-1" },
    { type: "human", content: "thanks" },
  ];
  const a = analyze(history, { maxTokens: 1000 });
  assert.equal(a.format, "langchain");
  assert.ok(a.messages[2].tokens > estimateTokens({ type: "ai", content: "" }), "the id-less call's name and args count");
  assert.equal(a.messages[3].group, a.messages[2].group, "the FunctionMessage of its name answers it");
  const tight = reduceSync(history, { maxTokens: 30, startOn: "any" });
  assert.equal(tight.kept.includes(2), tight.kept.includes(3), "the call and its result stay or go together");
  const r = reduceSync(history, { maxTokens: 1000 });
  assert.equal(r.reduced, false);
  assert.equal(r.messages[2], history[2]);
});

// ---- progressive: what it writes keeps the provider's rules ------------------------------

/** A user input, five reads, one more read and an answer (the newest groups), a new input:
 * in `format`, with `parts` of the reads' results. */
const agentRun = {
  openai: (reads) => [
    { role: "user", content: "Refactor the parser module." },
    ...reads.flatMap(([id, result]) => [
      { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "read_file", arguments: JSON.stringify({ path: `/src/${id}.rs` }) } }] },
      { role: "tool", tool_call_id: id, content: result }]),
    { role: "assistant", content: "Done refactoring." },
    { role: "user", content: "Now add tests." },
  ],
  "openai-responses": (reads) => [
    { type: "message", role: "user", content: [{ type: "input_text", text: "Refactor the parser module." }] },
    ...reads.flatMap(([id, result]) => [
      { type: "function_call", call_id: id, name: "read_file", arguments: JSON.stringify({ path: `/src/${id}.rs` }) },
      { type: "function_call_output", call_id: id, output: result }]),
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "Done refactoring." }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "Now add tests." }] },
  ],
  anthropic: (reads) => [
    { role: "user", content: "Refactor the parser module." },
    ...reads.flatMap(([id, result]) => [
      { role: "assistant", content: [{ type: "tool_use", id, name: "read_file", input: { path: `/src/${id}.rs` } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: result }] }]),
    { role: "assistant", content: "Done refactoring." },
    { role: "user", content: "Now add tests." },
  ],
  vercel: (reads) => [
    { role: "user", content: "Refactor the parser module." },
    ...reads.flatMap(([id, result]) => [
      { role: "assistant", content: [{ type: "tool-call", toolCallId: id, toolName: "read_file", input: { path: `/src/${id}.rs` } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "read_file", output: { type: "text", value: result } }] }]),
    { role: "assistant", content: [{ type: "text", text: "Done refactoring." }] },
    { role: "user", content: "Now add tests." },
  ],
  gemini: (reads) => [
    { role: "user", parts: [{ text: "Refactor the parser module." }] },
    ...reads.flatMap(([id, result]) => [
      { role: "model", parts: [{ functionCall: { name: "read_file", args: { path: `/src/${id}.rs` } } }] },
      { role: "user", parts: [{ functionResponse: { name: "read_file", response: { content: result } } }] }]),
    { role: "model", parts: [{ text: "Done refactoring." }] },
    { role: "user", parts: [{ text: "Now add tests." }] },
  ],
  langchain: (reads) => [
    new HumanMessage("Refactor the parser module."),
    ...reads.flatMap(([id, result]) => [
      new AIMessage({ content: "", tool_calls: [{ id, name: "read_file", args: { path: `/src/${id}.rs` } }] }),
      new ToolMessage({ tool_call_id: id, content: result })]),
    new AIMessage("Done refactoring."),
    new HumanMessage("Now add tests."),
  ],
};

test("progressive: a compressed tool run right before a kept call leaves a history the provider accepts, in every format", () => {
  const reads = ["a", "b", "c", "d", "e"].map((id) => [id, `contents of ${id} `.repeat(30)]);
  for (const [format, make] of Object.entries(agentRun)) {
    const input = make(reads);
    accepts[format](input);
    // keepLast 3: the last read, the answer and the new input; the four reads before are a run.
    const config = { strategy: "progressive", maxTokens: Math.floor(estimateTokens(input) * 0.8), keepLast: 3, minToolRun: 4 };
    const r = reduceSync(input, config);
    assert.deepEqual(r.events.map((e) => e.type), ["toolRuns"], format);
    const digest = r.messages.find((m) => JSON.stringify(m).includes("[compressed tool run: "));
    accepts[format](r.messages);
    assert.ok(!isRealUser(format, digest) || format === "gemini", `${format}: the digest is no user input`);
    const a = analyze(r.messages, config);
    assert.equal(a.messages[r.messages.indexOf(digest)].realUser, false, `${format}: the digest is read back as no user input`);
    assert.equal(a.rounds, 2, `${format}: the digest starts no round`);
    const again = reduceSync(r.messages, config);
    assert.equal(again.reduced, false, `${format}: a reduced history is not reduced again`);
  }
});

// ---- Orphans (SPEC §9.4): tool results whose call is not in the history -------------------
// An app that keeps the last N messages cuts calls off their results: providers refuse the
// history ("messages with role 'tool' must be a response to a preceding message with
// 'tool_calls'"). Every output is without them, under budget too.

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

test("openai-responses: what a call the API ran itself brought back counts (MCP output, file search results, code, images)", () => {
  const base = [{ type: "message", role: "user", content: "find it" }];
  const gain = (item, without) => estimateTokens([...base, item]) - estimateTokens([...base, { ...item, ...without }]);
  const mcp = { type: "mcp_call", id: "mcp_1", server_label: "wiki", name: "ask", arguments: "{\"q\":\"x\"}", output: "long answer ".repeat(200) };
  assert.ok(gain(mcp, { output: undefined }) > 400, "an MCP call's output");
  assert.ok(gain({ ...mcp, output: undefined, error: "failed: ".repeat(100) }, { error: undefined }) > 100, "an MCP call's error");
  const search = { type: "file_search_call", id: "fs_1", queries: ["x"], status: "completed", results: [{ file_id: "f", text: "result text ".repeat(100) }] };
  assert.ok(gain(search, { results: undefined }) > 200, "file search results");
  const code = { type: "code_interpreter_call", id: "ci_1", code: "print(1)\n".repeat(50), outputs: [{ type: "logs", logs: "1\n".repeat(50) }] };
  assert.ok(gain(code, { code: undefined, outputs: undefined }) > 100, "code and its outputs");
  const image = { type: "image_generation_call", id: "ig_1", status: "completed", result: "iVBORw0KGgo".repeat(1000) };
  assert.equal(gain(image, { result: undefined }), 1000, "a generated image is an image, not its base64 as text");
  // Read again when what it brought back is replaced (a history of 32+ items is kept).
  const h = [];
  for (let k = 0; k < 40; k++) h.push({ type: "message", role: k % 2 ? "assistant" : "user", content: `turn ${k}` });
  h.push({ ...mcp });
  assert.equal(estimateTokens(h), estimateTokens(structuredClone(h)));
  h.at(-1).output = "short";
  assert.equal(estimateTokens(h), estimateTokens(structuredClone(h)), "an output replaced");
});

test("priority: a Responses reasoning item before the answer keeps the pair a pair (keepRecentPairs)", () => {
  const msg = (role, text) => ({ type: "message", role, content: [{ type: role === "assistant" ? "output_text" : "input_text", text }] });
  const items = [msg("user", "q1"), { type: "reasoning", id: "rs_1", summary: [] }, msg("assistant", "a1"), msg("user", "q2")];
  const config = { strategy: "priority", maxTokens: 100, keepLast: 0, keepRecentPairs: 2 };
  // Without the reasoning item the pair stays; with it, the answer went and q1 stayed alone.
  assert.deepEqual(reduceSync([items[0], items[2], items[3]], { ...config, tokenCounts: [100, 40, 100] }).kept, [0, 1, 2]);
  assert.deepEqual(reduceSync(items, { ...config, tokenCounts: [100, 10, 30, 100] }).kept, [0, 1, 2, 3]);
});

test("priority: of the groups kept only for startOn, the user input stays and the tool groups after it may go", () => {
  // keepLast protects an answer whose question is older: the history must start on that
  // question, but the tool call between them is what priority removes first.
  const call = { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "search", arguments: "{}" } }] };
  const history = [{ role: "user", content: "q1" }, call, { role: "tool", tool_call_id: "c1", content: "huge" },
    { role: "assistant", content: "a1" }, { role: "user", content: "q2" }, { role: "assistant", content: "a2" }];
  const r = reduceSync(history, { strategy: "priority", maxTokens: 100, keepLast: 3, tokenCounts: [10, 10, 500, 10, 10, 10] });
  assert.deepEqual([r.kept, r.tokensAfter, r.overBudget], [[0, 3, 4, 5], 40, false]);
  assert.equal(analyze(history, { strategy: "priority", maxTokens: 100, keepLast: 3 }).messages[1].protected, false);
  // truncate cuts a prefix: the span stays protected there.
  const t = reduceSync(history, { maxTokens: 100, keepLast: 3, tokenCounts: [10, 10, 500, 10, 10, 10] });
  assert.deepEqual([t.kept, t.overBudget], [[0, 1, 2, 3, 4, 5], true]);
});

test("vercel-ui: a message with tool parts is a tool message (priority removes it first; progressive compresses a run of them)", () => {
  const oa = [{ role: "user", content: "q1" }, { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "search", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "c1", content: "big result" }, { role: "assistant", content: "a1" }, { role: "user", content: "q2" },
    { role: "assistant", content: "a2" }, { role: "user", content: "q3" }, { role: "assistant", content: "a3" }];
  const text = (id, role, t) => ({ id, role, parts: [{ type: "text", text: t }] });
  const ui = [text("1", "user", "q1"), { id: "2", role: "assistant", parts: [{ type: "tool-search", toolCallId: "c1", state: "output-available", input: {}, output: "big result" }] },
    text("3", "assistant", "a1"), text("4", "user", "q2"), text("5", "assistant", "a2"), text("6", "user", "q3"), text("7", "assistant", "a3")];
  const config = { strategy: "priority", maxTokens: 100, keepRecentPairs: 1 };
  assert.deepEqual(reduceSync(oa, { ...config, tokenCounts: [10, 5, 50, 10, 10, 10, 10, 10] }).kept, [0, 3, 4, 5, 6, 7]);
  assert.deepEqual(reduceSync(ui, { ...config, tokenCounts: [10, 55, 10, 10, 10, 10, 10] }).kept, [0, 2, 3, 4, 5, 6]);
  // Four old tool messages in a row: one digest, in the format, that names the calls.
  const runs = [text("u0", "user", "find things")];
  for (let i = 0; i < 4; i++) {
    runs.push({ id: `a${i}`, role: "assistant", parts: [{ type: "tool-search", toolCallId: `c${i}`, state: "output-available", input: { q: i }, output: { hits: [`result ${i} ${"lorem ipsum dolor ".repeat(100)}`] } }] });
  }
  runs.push(text("u1", "user", "thanks"), text("a9", "assistant", "welcome"));
  const r = reduceSync(runs, { strategy: "progressive", maxTokens: 400, minToolRun: 2 });
  assert.deepEqual(r.events.map((e) => e.type), ["toolRuns"]);
  assert.deepEqual([r.summarized, r.rewritten], [[], [1, 2, 3, 4]]);
  const digest = r.messages[1];
  assert.equal(digest.role, "assistant");
  assert.match(digest.parts[0].text, /called search\(\{"q":3\}\)/);
  assert.match(digest.parts[0].text, /→ .*result 3/);
});

test("vercel-ui with minToolRun 1: a one-message tool run is a shallow copy of it (its id and metadata kept), not a new message", () => {
  const text = (id, role, t) => ({ id, role, parts: [{ type: "text", text: t }] });
  const tool = { id: "a1", role: "assistant", metadata: { createdAt: 1 }, parts: [{ type: "tool-search", toolCallId: "c1", state: "output-available", input: { q: 1 }, output: `result ${"lorem ipsum dolor ".repeat(200)}` }] };
  const ui = [text("u0", "user", "find things"), tool, text("u1", "user", "thanks"), text("a9", "assistant", "welcome")];
  const r = reduceSync(ui, { strategy: "progressive", maxTokens: 300, minToolRun: 1 });
  assert.deepEqual(r.events.map((e) => e.type), ["toolRuns"]);
  assert.deepEqual(r.rewritten, [1]);
  const digest = r.messages[1];
  assert.equal(digest.id, "a1");
  assert.deepEqual(digest.metadata, { createdAt: 1 });
  assert.equal(digest.role, "assistant");
  assert.match(digest.parts[0].text, /^\[compressed tool run: 1 messages, stored as (ctx_[0-9a-f]{16});.*\n- called search\(\{"q":1\}\)/);
  assert.deepEqual(r.offloaded[digest.parts[0].text.match(/ctx_[0-9a-f]{16}/)[0]], [tool]);
  // Stable: reduced again, nothing changes (SPEC §9.9).
  assert.equal(reduceSync(r.messages, { strategy: "progressive", maxTokens: 300, minToolRun: 1 }).reduced, false);
});

test("anthropic: a plain-text document (and one of content blocks) counts as its text, not as an image", () => {
  const text = "Clause 4.2: the supplier shall deliver the goods within thirty days. ".repeat(300);
  const asDocument = { role: "user", content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: text } }] };
  const asText = { role: "user", content: [{ type: "text", text }] };
  assert.equal(estimateTokens(asDocument), estimateTokens(asText));
  const blocks = { role: "user", content: [{ type: "document", title: "Terms", source: { type: "content", content: [{ type: "text", text }] } }] };
  assert.equal(estimateTokens(blocks), estimateTokens(asText) + estimateTokens({ role: "user", content: "Terms" }) - estimateTokens({ role: "user", content: "" }));
  // A PDF is media: imageTokens.
  const pdf = { role: "user", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } }] };
  assert.equal(estimateTokens(pdf, { imageTokens: 700, messageOverhead: 0 }) - estimateTokens({ role: "user", content: [] }, { messageOverhead: 0 }), 700);
  // In a tool result too.
  const call = { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "fetch", input: {} }] };
  const result = (block) => ({ role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [block] }] });
  assert.equal(estimateTokens([call, result(asDocument.content[0])]), estimateTokens([call, result({ type: "text", text })]));
});

test("priority: an AI SDK UIMessage reply that holds its tool calls and its answer is the pair's answer (keepRecentPairs)", () => {
  const text = (id, role, t) => ({ id, role, parts: [{ type: "text", text: t }] });
  const reply = (id, k) => ({ id, role: "assistant", parts: [
    { type: "tool-search", toolCallId: `c${k}`, state: "output-available", input: {}, output: "result" }, { type: "text", text: `answer ${k}` }] });
  const ui = [text("1", "user", "q1"), reply("2", 1), text("3", "user", "q2"), reply("4", 2), text("5", "user", "q3")];
  const r = reduceSync(ui, { strategy: "priority", maxTokens: 100, keepLast: 1, keepRecentPairs: 2, tokenCounts: [10, 40, 10, 40, 10] });
  // The newest two pairs: q2 with its reply, and q3 (the latest input).
  assert.ok(r.kept.includes(2) && r.kept.includes(3), JSON.stringify(r.kept));
  assert.equal(analyze(ui, { strategy: "priority", maxTokens: 100, keepLast: 1, keepRecentPairs: 2 }).messages[3].protectedBy, "keepRecentPairs");
});

test("langchain: a plain-text document block counts as its text", () => {
  const text = "Clause 4.2: delivery within thirty days. ".repeat(200);
  const doc = new HumanMessage({ content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: text } }] });
  const plain = new HumanMessage({ content: [{ type: "text", text }] });
  assert.equal(estimateTokens([doc]), estimateTokens([plain]));
});

test("auto-detection tells formats apart by the shape of an image, file or reasoning part; a mix of them is INVALID_MESSAGES", () => {
  const format = (messages) => analyze(messages, { maxTokens: 1e6 }).format;
  const answer = { role: "assistant", content: "ok" };
  const anthropicImage = { role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image", source: { type: "base64", media_type: "image/png", data: IMAGE_B64 } }] };
  const openaiImage = { role: "user", content: [{ type: "text", text: "and this?" }, { type: "image_url", image_url: { url: "https://example.com/a.png" } }] };
  const sdkImage = { role: "user", content: [{ type: "text", text: "see" }, { type: "image", image: "https://example.com/c.png", mediaType: "image/png" }] };
  const sdkFile = { role: "user", content: [{ type: "file", data: "JVBER", mediaType: "application/pdf" }] };
  const openaiFile = { role: "user", content: [{ type: "file", file: { file_id: "file-1" } }] };
  const sdkReasoning = { role: "assistant", content: [{ type: "reasoning", text: "thinking" }, { type: "text", text: "answer" }] };
  assert.equal(format([anthropicImage, answer]), "anthropic");
  assert.equal(format([sdkImage, answer]), "vercel");
  assert.equal(format([sdkFile, answer]), "vercel");
  assert.equal(format([openaiFile, answer]), "openai");
  assert.equal(format([{ role: "user", content: "q" }, sdkReasoning]), "vercel");
  for (const mix of [[openaiImage, answer, anthropicImage], [openaiImage, answer, sdkImage], [anthropicImage, answer, sdkImage], [openaiFile, sdkFile]]) {
    assert.throws(() => reduceSync(mix, { maxTokens: 10 }), (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGES");
  }
  // A format named in the config still reads such a part as its reader knows it.
  assert.equal(estimateTokens([sdkImage], { format: "anthropic" }), estimateTokens([sdkImage], { format: "vercel" }));
});

test("LangChain: legacy calls (a FunctionMessage's function_call, OpenAI's raw calls in additional_kwargs) are linked to their results", () => {
  const legacy = [new HumanMessage("what is 2+2?"), new AIMessage({ content: "", additional_kwargs: { function_call: { name: "calc", arguments: '{"e":"2+2"}' } } }),
    new FunctionMessage({ content: "4", name: "calc" }), new AIMessage("It is 4."), new HumanMessage("thanks")];
  const raw = (calls) => ({ type: "ai", content: "", additional_kwargs: { tool_calls: calls.map((id) => ({ id, type: "function", function: { name: "calc", arguments: '{"e":"2+2"}' } })) } });
  const plain = [{ type: "human", content: "what is 2+2?" }, raw(["call_1"]), { type: "tool", content: "4", tool_call_id: "call_1" }, { type: "ai", content: "It is 4." }, { type: "human", content: "thanks" }];
  for (const messages of [legacy, plain]) {
    // Under budget nothing goes (the result was dropped as an orphan, its call kept).
    const r = reduceSync(messages, { maxTokens: 1e5 });
    assert.deepEqual([r.kept, r.dropped, shouldReduce(messages, { maxTokens: 1e5 })], [[0, 1, 2, 3, 4], [], false]);
    const rows = analyze(messages, { maxTokens: 1e5 }).messages;
    assert.equal(rows[1].group, rows[2].group, "the call and its result are one group");
  }
  // A raw call that no result answers is cut from a copy, which keeps the answered one.
  const partly = [{ type: "human", content: "go" }, { ...raw(["a", "b"]), content: "calling" }, { type: "tool", content: "4", tool_call_id: "a" },
    { type: "human", content: "and now?" }, { type: "ai", content: "done" }];
  const r = reduceSync(partly, { maxTokens: 1e5 });
  assert.deepEqual(r.rewritten, [1]);
  const copy = r.messages[1];
  assert.deepEqual(copy.additional_kwargs.tool_calls.map((c) => c.id), ["a"]);
  assert.equal(copy.tool_calls, undefined);
});

test("Gemini: call and response ids count as texts, and a multimodal response's media as images (SPEC §3)", () => {
  const config = { estimator: "length", charsPerToken: 1 };
  const turn = (id) => [{ role: "user", parts: [{ text: "hi" }] },
    { role: "model", parts: [{ functionCall: { ...(id ? { id } : {}), name: "f", args: {} } }] },
    { role: "user", parts: [{ functionResponse: { ...(id ? { id } : {}), name: "f", response: {} } }] }];
  const without = turn().map((m) => estimateTokens(m, config)), withId = turn("call_0123456789").map((m) => estimateTokens(m, config));
  assert.deepEqual(withId.map((t, k) => t - without[k]), [0, 15, 15]);
  const image = { role: "user", parts: [{ functionResponse: { name: "f", response: {}, parts: [{ inlineData: { mimeType: "image/png", data: IMAGE_B64 } }] } }] };
  assert.equal(estimateTokens(image, config) - estimateTokens(turn()[2], config), 1000);
});

test("the length estimator counts a message's OpenAI role, as LangChain's approximate counter does (LangChain's types, Gemini's model)", () => {
  const config = { estimator: "length", charsPerToken: 4 };
  const expected = (role, text) => 3 + Math.ceil((role.length + text.length) / 4);
  assert.equal(estimateTokens(new HumanMessage("hello world!"), config), expected("user", "hello world!"));
  assert.equal(estimateTokens(new AIMessage("hello world!"), config), expected("assistant", "hello world!"));
  assert.equal(estimateTokens({ type: "human", content: "hello world!" }, config), expected("user", "hello world!"));
  assert.equal(estimateTokens({ role: "model", parts: [{ text: "hello world!" }] }, config), expected("assistant", "hello world!"));
  assert.equal(estimateTokens({ role: "user", content: "hello world!" }, config), expected("user", "hello world!"));
});

test("the length estimator rounds once per message, as LangChain's approximate counter does (SPEC §3)", () => {
  const config = { estimator: "length", charsPerToken: 4 };
  // "user" + "ada" + "hi": 9 characters, 3 tokens (a text at a time: 1 + 1 + 1 = 3 too);
  // "assistant" + "bob" + "hello": 17 characters, 5 tokens (a text at a time: 3 + 1 + 2 = 6).
  const named = [{ role: "user", name: "ada", content: "hi" }, { role: "assistant", name: "bob", content: "hello" }];
  assert.equal(estimateTokens(named, config), 3 + 3 + 3 + 5);
  // "tool" + "call_1" + "done!": 15 characters, 4 tokens (1 + 2 + 2 = 5 a text at a time);
  // its call, "assistant" + "call_1" + "f" + "{}": 18 characters, 5 tokens (3 + 2 + 1 + 1 = 7).
  const call = { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }] };
  assert.equal(estimateTokens({ role: "tool", tool_call_id: "call_1", content: "done!" }, config), 3 + 4);
  assert.equal(estimateTokens(call, config), 3 + 5);
  // The same in LangChain's own form, and with a payload written out late (plain data).
  assert.equal(estimateTokens({ type: "ai", content: "", tool_calls: [{ id: "call_1", name: "f", args: {} }] }, config), 3 + 5);
});

test("openai-responses: a local_shell_call_output names its call by id, as the API's type has it", () => {
  const items = [{ type: "message", role: "user", content: "list files" },
    { type: "local_shell_call", id: "ls_1", call_id: "call_ls", action: { type: "exec", command: ["ls"] }, status: "completed" },
    { type: "local_shell_call_output", id: "call_ls", output: "a.txt" },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "a.txt" }] },
    { type: "message", role: "user", content: "thanks" }];
  const r = reduceSync(items, { maxTokens: 1e5 });
  assert.deepEqual([r.kept, r.dropped], [[0, 1, 2, 3, 4], []]);
});
