// Every chat format of SPEC §2: a conversation with parallel tool calls, interleaved text
// and images, reduced under a tight budget, must still be a history the provider accepts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { reduceSync, shouldReduce, analyze, estimateTokens, ReduceError } from "chat-history-reducer";
import { HumanMessage, AIMessage, ToolMessage, FunctionMessage } from "@langchain/core/messages";
import { accepts, isRealUser, lcType } from "./providers.mjs";
import { rng } from "./random.mjs";
import { IMAGE_B64, build } from "./conversations.mjs";

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

/** Random JSON-like data, with what JSON.stringify escapes, skips or writes as null. */
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
