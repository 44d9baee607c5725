// SPEC §5–7: summarize with real async summarizers, offloading and reload, and ChatHistory
// that stays reduced — through the packed package (progressive: progressive.test.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { reduce, reduceSync, ChatHistory, ReduceError, reloadTool, estimateTokens } from "chat-history-reducer";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { agentSession, byLength, chat, sleep } from "./chats.mjs";

test("summarize: the summary replaces the oldest messages, after the system prompt, and is reused", async () => {
  const input = chat(20);
  const requests = [];
  const config = {
    strategy: "summarize",
    targetMessages: 8,
    summarizer: async (req) => {
      requests.push(req);
      await sleep(20);
      return { text: `Summary of ${req.messages.length} messages.`, usage: { inputTokens: 100, outputTokens: 8 } };
    },
  };
  const r = await reduce(input, config);
  assert.equal(requests.length, 1);
  assert.equal(requests[0].kind, "history");
  assert.equal(requests[0].previousSummary, undefined);
  assert.ok(requests[0].signal, "the request carries an AbortSignal");
  assert.deepEqual(requests[0].messages, input.slice(1, 33), "the originals, in order, as the input objects");
  assert.equal(r.messages[0], input[0]);
  assert.equal(r.messages[1], r.summary);
  assert.equal(r.summary.content, "<conversation-summary>Summary of 32 messages.</conversation-summary>");
  assert.equal(r.summary.role, "user");
  assert.deepEqual(r.summarized, Array.from({ length: 32 }, (_, i) => i + 1));
  assert.deepEqual(r.kept, [0, ...Array.from({ length: 8 }, (_, i) => i + 33)]);
  assert.equal(r.events[0].type, "summarize");
  assert.deepEqual(r.events[0].usage, { inputTokens: 100, outputTokens: 8 });

  // Below the trigger, nothing happens; past it, the old summary is passed on and replaced.
  assert.equal((await reduce(r.messages, config)).reduced, false);
  const grown = [...r.messages, ...chat(4, false)];
  const r2 = await reduce(grown, config);
  assert.equal(requests.length, 2);
  assert.equal(requests[1].previousSummary, "Summary of 32 messages.");
  assert.equal(r2.messages.filter((m) => String(m.content).startsWith("<conversation-summary>")).length, 1);
  assert.ok(r2.summarized.includes(1), "the earlier summary is covered by the new one");

  const layered = await reduce(grown, { ...config, summaryMode: "layered" });
  assert.equal(layered.messages.filter((m) => String(m.content).startsWith("<conversation-summary>")).length, 2);
});

test("summarize: failures never lose a message", async () => {
  const input = chat(20);
  const snapshot = JSON.stringify(input);
  const base = { strategy: "summarize", targetMessages: 8, timeoutMs: 50 };
  const failing = {
    rejected: async () => { throw new Error("model overloaded"); },
    hung: () => new Promise(() => {}),
    empty: async () => "",
    nonString: async () => 42,
    throwsSync: () => { throw new TypeError("bad"); },
  };
  for (const [name, summarizer] of Object.entries(failing)) {
    const r = await reduce(input, { ...base, summarizer });
    assert.equal(r.events[0].type, "summarizeFailed", name);
    assert.equal(r.events[1].type, "truncate", name);
    // A step that changed nothing, with every number a CompressionEvent has (audit: summing
    // `messages` gave NaN).
    assert.deepEqual([r.events[0].messages, r.events[0].tokensBefore, r.events[0].tokensAfter], [0, r.tokensBefore, r.tokensBefore], name);
    assert.equal(r.events.reduce((n, e) => n + e.messages, 0), r.events[1].messages, name);
    assert.ok(r.messages.filter((m) => m.role !== "system").length <= 8, name);
    assert.equal(r.summary, undefined);
    await assert.rejects(reduce(input, { ...base, summarizer, onSummarizerError: "throw" }), (e) =>
      e instanceof ReduceError && e.code === "SUMMARIZER_FAILED", name);
  }
  await assert.rejects(
    reduce(input, { ...base, summarizer: async () => "word ".repeat(3000), summaryMaxTokens: 100, onSummarizerError: "throw" }),
    (e) => e.code === "SUMMARY_TOO_LARGE");
  const cause = new Error("root cause");
  await assert.rejects(reduce(input, { ...base, summarizer: async () => { throw cause; }, onSummarizerError: "throw" }),
    (e) => e.cause === cause);
  assert.equal(JSON.stringify(input), snapshot, "the input is untouched");
  assert.throws(() => reduceSync(input, { ...base, summarizer: async () => "x" }), (e) => e.code === "SUMMARIZER_REQUIRES_ASYNC");
  await assert.rejects(reduce(input, { strategy: "summarize", targetMessages: 8 }), (e) => e.code === "SUMMARIZER_REQUIRED");
});

test("summarize: an abort rejects with ABORTED and aborts the summarizer's signal", async () => {
  const controller = new AbortController();
  let seen;
  const pending = reduce(chat(20), {
    strategy: "summarize", targetMessages: 8, signal: controller.signal,
    summarizer: (req) => { seen = req.signal; return new Promise(() => {}); },
  });
  setTimeout(() => controller.abort(new Error("user navigated away")), 20);
  await assert.rejects(pending, (e) => e instanceof ReduceError && e.code === "ABORTED");
  assert.equal(seen.aborted, true);
  const already = AbortSignal.abort();
  await assert.rejects(reduce(chat(20), { strategy: "summarize", targetMessages: 8, signal: already, summarizer: async () => "x" }),
    (e) => e.code === "ABORTED");
});

test("an aborted signal rejects with ABORTED where the summary is judged too large before the summarizer is asked", async () => {
  // The summarizer is never asked here (no room beside the summary's tag): the abort was
  // ignored, and the reduction went on to its fallback.
  const reason = new Error("user navigated away");
  const signal = AbortSignal.abort(reason);
  let calls = 0;
  const summarizer = async () => { calls++; return "s"; };
  const aborted = (e) => e instanceof ReduceError && e.code === "ABORTED" && e.cause === reason;
  const history = [{ role: "system", content: "S" }];
  for (let i = 0; i < 6; i++) history.push({ role: i % 2 ? "assistant" : "user", content: `${i}`.repeat(100) });
  history.push({ role: "user", content: "q".repeat(500) }, { role: "assistant", content: "a".repeat(70) });
  // (onOverBudget "error": no summary over budget either, so none is asked for.)
  const summarize = { strategy: "summarize", maxTokens: 750, targetTokens: 600, countTokens: byLength, summarizer, onOverBudget: "error" };
  assert.equal((await reduce(history, summarize)).events[0].reason, "tooLarge", "judged too large without asking");
  await assert.rejects(reduce(history, { ...summarize, signal }), aborted);
  const progressive = { strategy: "progressive", maxTokens: 200, summaryMaxTokens: 0.5, summarizer };
  assert.ok((await reduce(chat(20), progressive)).events.some((e) => e.kind === "round" && e.reason === "tooLarge"));
  await assert.rejects(reduce(chat(20), { ...progressive, signal }), aborted);
  assert.equal(calls, 0);
});

test("onEvent reports progress as it happens", async () => {
  const seen = [];
  await reduce(chat(20), { strategy: "summarize", targetMessages: 8, summarizer: async () => "s", onEvent: (e) => seen.push(e.type) });
  assert.deepEqual(seen, ["reduceStart", "summarizeStart", "summarizeEnd", "reduceEnd"]);
});

test("summaries are written in the input's own format", async () => {
  const summarizer = async () => "short";
  const anthropic = [];
  for (let t = 0; t < 10; t++) anthropic.push({ role: "user", content: [{ type: "text", text: `q${t}` }] }, { role: "assistant", content: [{ type: "text", text: `a${t}` }] });
  const a = await reduce(anthropic, { strategy: "summarize", targetMessages: 4, summarizer });
  assert.deepEqual(a.summary, { role: "user", content: [{ type: "text", text: "<conversation-summary>short</conversation-summary>" }] });
  const gemini = [];
  for (let t = 0; t < 10; t++) gemini.push({ role: "user", parts: [{ text: `q${t}` }] }, { role: "model", parts: [{ text: `a${t}` }] });
  const g = await reduce(gemini, { strategy: "summarize", targetMessages: 4, summarizer });
  assert.deepEqual(g.summary, { role: "user", parts: [{ text: "<conversation-summary>short</conversation-summary>" }] });
  const responses = gemini.map((m) => ({ type: "message", role: m.role === "model" ? "assistant" : "user", content: [{ type: m.role === "model" ? "output_text" : "input_text", text: m.parts[0].text }] }));
  const o = await reduce(responses, { strategy: "summarize", targetMessages: 4, summarizer, summaryRole: "system" });
  assert.deepEqual(o.summary, { type: "message", role: "system", content: [{ type: "input_text", text: "<conversation-summary>short</conversation-summary>" }] });
});

let uiIds = 0;

/** `(role, text) => message` ("user" or "assistant") in each format and each form of its
 * content, with the format to name (auto-detection takes text parts for OpenAI's). */
const FORMS = {
  "openai, strings": ["openai", (role, text) => ({ role, content: text })],
  "openai, parts": ["openai", (role, text) => ({ role, content: [{ type: "text", text }] })],
  "openai-responses, content parts": ["openai-responses", (role, text) => ({ type: "message", role, content: [{ type: role === "user" ? "input_text" : "output_text", text }] })],
  "openai-responses, strings": ["openai-responses", (role, text) => ({ type: "message", role, content: text })],
  "anthropic, strings": ["anthropic", (role, text) => ({ role, content: text })],
  "anthropic, blocks": ["anthropic", (role, text) => ({ role, content: [{ type: "text", text }] })],
  "vercel, parts": ["vercel", (role, text) => ({ role, content: [{ type: "text", text }] })],
  "vercel-ui, UIMessage parts": ["vercel-ui", (role, text) => ({ id: `m${++uiIds}`, role, parts: [{ type: "text", text }] })],
  "gemini, parts": ["gemini", (role, text) => ({ role: role === "user" ? "user" : "model", parts: [{ text }] })],
  "langchain, instances": ["langchain", (role, text) => (role === "user" ? new HumanMessage(text) : new AIMessage(text))],
  "langchain, plain": ["langchain", (role, text) => ({ type: role === "user" ? "human" : "ai", content: text })],
  "langchain, toDict": ["langchain", (role, text) => ({ type: role === "user" ? "human" : "ai", data: { content: text } })],
  "langchain, serialized": ["langchain", (role, text) => JSON.parse(JSON.stringify(role === "user" ? new HumanMessage(text) : new AIMessage(text)))],
};

const EARLIER = "Ada flies to Lisbon in May.";

/** An earlier summary, then `turns` turns of ~60 tokens, in one of `FORMS`. */
function withSummary(make, turns) {
  const m = [make("user", `<conversation-summary>${EARLIER}</conversation-summary>`)];
  for (let t = 0; t < turns; t++) {
    m.push(make("user", `Turn ${t}: what should Ada pack for day ${t} of the trip? ${"Some detail. ".repeat(12)}`));
    m.push(make("assistant", `Day ${t}: ${"a jacket, good shoes, a map. ".repeat(8)}`));
  }
  return m;
}

test("an earlier summary's text reaches the summarizer as previousSummary in every format and form (summarize and progressive rounds)", async () => {
  // LangChain's serialized form (JSON of instances, what ChatHistory.fromJSON restores) had
  // its summary recognised and replaced, with previousSummary "": the old summary was lost.
  for (const [form, [format, make]] of Object.entries(FORMS)) {
    const input = withSummary(make, 10);
    for (const strategy of ["summarize", "progressive"]) {
      const requests = [];
      const r = await reduce(input, {
        strategy, format, maxTokens: 1200,
        summarizer: async (req) => { requests.push(req); return "Ada packs a jacket."; },
      });
      const asked = requests.filter((q) => q.kind === "history" || q.kind === "round");
      assert.equal(asked.length, 1, `${form} ${strategy}`);
      assert.equal(asked[0].previousSummary, EARLIER, `${form} ${strategy}`);
      assert.ok(r.summarized.includes(0), `${form} ${strategy}: the earlier summary is replaced`);
      assert.ok(!asked[0].messages.includes(input[0]), `${form} ${strategy}: not among the messages`);
      // The new summary is recognised in turn: its text goes on to the next one.
      const next = [];
      await reduce([...r.messages, ...withSummary(make, 10).slice(1)], {
        strategy, format, maxTokens: 1200,
        summarizer: async (req) => { next.push(req); return "Ada packs a jacket and a map."; },
      });
      assert.equal(next.find((q) => q.kind === "history" || q.kind === "round").previousSummary, "Ada packs a jacket.", `${form} ${strategy}: again`);
    }
  }
});

test("ChatHistory after a JSON round trip of LangChain messages passes the earlier summary on", async () => {
  const requests = [];
  const config = { strategy: "summarize", maxTokens: 1200, summarizer: async (req) => { requests.push(req); return `summary ${requests.length}`; } };
  const h = new ChatHistory(config, withSummary(FORMS["langchain, instances"][1], 4));
  const restored = ChatHistory.fromJSON(JSON.parse(JSON.stringify(h.toJSON())), config);
  for (let t = 0; t < 12; t++) restored.push(new HumanMessage(`Turn ${t}: ${"more about the trip. ".repeat(12)}`), new AIMessage(`Noted ${t}. ${"pack light. ".repeat(10)}`));
  await restored.prepare();
  assert.equal(requests.length, 1);
  assert.equal(requests[0].previousSummary, EARLIER);
});

test("an offloaded message's preview is its text with whitespace runs collapsed, cut to previewChars", () => {
  const flat = (t) => t.replace(/\s+/g, " ").trim();
  const texts = [
    // Long, with runs of every length (one across every window the preview may look at).
    "  \n " + Array.from({ length: 400 }, (_, k) => `word${k}${" \n\t".repeat(k % 7)}`).join(""),
    // Large only by its whitespace: the preview is all of it, flattened, without "…".
    "start" + " ".repeat(3000) + "\n".repeat(2000) + "end  ",
  ];
  const input = [{ role: "system", content: "rules" }];
  texts.forEach((text, k) => input.push(
    { role: "user", content: `question ${k}` },
    { role: "assistant", content: null, tool_calls: [{ id: `c${k}`, type: "function", function: { name: "read", arguments: "{}" } }] },
    { role: "tool", tool_call_id: `c${k}`, content: text },
    { role: "assistant", content: `answer ${k}` },
  ));
  for (let k = 0; k < 6; k++) input.push({ role: "user", content: `later ${k}` }, { role: "assistant", content: `reply ${k}` });
  const r = reduceSync(input, { strategy: "progressive", maxTokens: 700, largeMessageTokens: 100, minToolRun: 6, previewChars: 40 });
  for (const [k, at] of [[0, 3], [1, 7]]) {
    assert.ok(r.rewritten.includes(at), `tool result ${k} offloaded (${r.events.map((e) => e.type)})`);
    const written = r.messages.find((m) => m.role === "tool" && m.tool_call_id === `c${k}`);
    const preview = written.content.slice(written.content.indexOf("\n") + 1);
    const whole = flat(texts[k]);
    assert.equal(preview, whole.length <= 40 ? whole : `${whole.slice(0, 40)}…`);
  }
});

test("ChatHistory: 200 turns, the summarizer is called once per thresholdMessages + 1 turns", async () => {
  let calls = 0;
  const config = { strategy: "summarize", targetMessages: 20, thresholdMessages: 5, summarizer: async (req) => { calls++; await sleep(1); return `summary ${calls}`; } };
  const h = new ChatHistory(config, [{ role: "system", content: "sys" }]);
  const callTurns = [];
  for (let turn = 0; turn < 200; turn++) {
    h.push(turn % 2 === 0 ? { role: "user", content: `u${turn}` } : { role: "assistant", content: `a${turn}` });
    const before = calls;
    const sent = await h.prepare();
    const counted = sent.filter((m) => m.role !== "system" && !String(m.content).startsWith("<conversation-summary>")).length;
    assert.ok(counted <= 25, `turn ${turn}: ${counted} messages sent, over the trigger`);
    if (calls > before) callTurns.push(turn);
  }
  const gaps = callTurns.slice(1).map((t, i) => t - callTurns[i]);
  assert.ok(gaps.every((g) => g === 6), `gaps ${gaps}`);
  assert.equal(h.stats().summarizerCalls, calls);
  assert.equal(h.original.length, 201);
  assert.ok(h.stats().compressionRatio > 5);
});

test("ChatHistory: usage becomes exact counts, and fromJSON continues exactly", async () => {
  const config = { maxTokens: 400 };
  const h = new ChatHistory(config);
  const plain = new ChatHistory(config);
  let copy;
  const turn = async (history, t, record) => {
    history.push({ role: "user", content: `question ${t} `.repeat(5) });
    const sent = await history.prepare();
    // A provider that counts twice what the estimator says.
    if (record) history.recordUsage({ inputTokens: estimateTokens(sent) * 2, outputTokens: 40 });
    history.push({ role: "assistant", content: `answer ${t} `.repeat(5) });
  };
  for (let t = 0; t < 12; t++) {
    await turn(h, t, true);
    await turn(plain, t, false);
    if (t === 6) copy = ChatHistory.fromJSON(JSON.parse(JSON.stringify(h)), config);
  }
  const state = h.toJSON();
  assert.equal(state.version, 2);
  assert.ok(state.counts.some((c) => typeof c === "number"), "recorded counts are kept");
  assert.ok(h.messages.length < plain.messages.length,
    `the provider's larger counts reduce harder (${h.messages.length} vs ${plain.messages.length} messages)`);
  for (let t = 7; t < 12; t++) await turn(copy, t, true);
  assert.equal(JSON.stringify(copy.messages), JSON.stringify(h.messages));
  assert.deepEqual(copy.stats(), h.stats());
  assert.throws(() => ChatHistory.fromJSON({ version: 99 }, config), (e) => e instanceof ReduceError);
  assert.throws(() => new ChatHistory({ maxTokens: -1 }), (e) => e.code === "INVALID_CONFIG");
});

test("reloadTool is a tool definition for OpenAI, Anthropic and the AI SDK; ChatHistory.reload answers it", async () => {
  assert.equal(reloadTool.name, "context_reload");
  assert.equal(reloadTool.parameters.type, "object");
  assert.deepEqual(reloadTool.parameters.required, ["id"]);
  const h = new ChatHistory({ strategy: "progressive", maxTokens: 6000 }, agentSession().slice(0, 40));
  await h.prepare();
  const ids = Object.keys(h.toJSON().offloaded);
  assert.ok(ids.length > 0);
  for (const id of ids) assert.ok(Array.isArray(h.reload(id)) && h.reload(id).length > 0);
  assert.equal(h.reload("ctx_nope"), undefined);
  const restored = ChatHistory.fromJSON(JSON.parse(JSON.stringify(h)), { strategy: "progressive", maxTokens: 6000 });
  assert.equal(JSON.stringify(restored.reload(ids[0])), JSON.stringify(h.reload(ids[0])));
});

test("ChatHistory.reload of a tool-run digest made over earlier previews gives the originals", async () => {
  const big = `rows: ${"2024-05-01,Lisbon,18C,sunny; ".repeat(300)}`;
  const call = (id, q) => ({ role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "weather", arguments: JSON.stringify({ q }) } }] });
  const h = new ChatHistory({ strategy: "progressive", maxTokens: 2000, minToolRun: 4 }, [{ role: "system", content: "You plan trips." }]);
  const round1 = [{ role: "user", content: "How was May in Lisbon?" }, call("c1", "Lisbon May"), { role: "tool", tool_call_id: "c1", content: big },
    call("c2", "Porto May"), { role: "tool", tool_call_id: "c2", content: "Porto: mild." }, { role: "assistant", content: "Mild and sunny." }];
  h.push(...round1);
  // Round 1 is the current round: its large result becomes a preview (stage 2).
  let sent = await h.prepare();
  const preview = sent[3];
  assert.match(preview.content, /^\[offloaded \d+ tokens as ctx_/);
  // Once round 1 is old, its four tool messages are one run: a digest over the preview.
  h.push({ role: "user", content: "And June?" }, { role: "assistant", content: `June: ${"warm, ".repeat(1200)}` }, { role: "user", content: "Thanks!" });
  sent = await h.prepare();
  const digest = sent.find((m) => typeof m.content === "string" && m.content.startsWith("[compressed tool run: 4 messages"));
  assert.ok(digest, "the tool run is compressed");
  const id = digest.content.match(/ctx_[0-9a-f]{16}/)[0];
  // The originals themselves, the large result as it was (not its preview).
  assert.deepEqual(h.reload(id).map((m) => round1.indexOf(m)), [1, 2, 3, 4]);
});

test("openai-responses: a tool result's output becomes the preview in the item's own shape, and stays so", () => {
  const log = Array.from({ length: 400 }, (_, k) => `test suite::case_${k} ... ok`).join("\n");
  const screenshot = { type: "computer_screenshot", image_url: "data:image/png;base64,iVBORw0KGgo=" };
  const items = (type, output) => [
    { role: "user", content: "Run the test suite." },
    { type: "reasoning", id: "rs_1", summary: [] },
    { type: type.replace("_output", ""), id: "it_1", call_id: "call_1", name: "shell", input: "cargo test", arguments: "{}" },
    { type, call_id: "call_1", output },
    { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "All tests pass." }] },
    { role: "user", content: "Great, now commit." },
  ];
  const cases = [
    ["function_call_output", log, (o) => typeof o === "string"],
    ["custom_tool_call_output", log, (o) => typeof o === "string"],
    ["local_shell_call_output", JSON.stringify({ output: log }), (o) => typeof o === "string"],
    ["function_call_output", [{ type: "input_text", text: log }, { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=" }],
      (o) => o.length === 2 && o[0].type === "input_text" && o[1].type === "input_image"],
    ["shell_call_output", [{ stdout: log, stderr: "", outcome: { type: "exit", exit_code: 0 } }],
      (o) => o.length === 1 && o[0].stderr === "" && o[0].outcome.exit_code === 0 && typeof o[0].stdout === "string"],
  ];
  for (const [type, output, shaped] of cases) {
    const input = items(type, output);
    const total = estimateTokens(input);
    const config = { strategy: "progressive", maxTokens: Math.floor(total * 0.8), minToolRun: 6 };
    const r = reduceSync(input, config);
    const where = `${type} ${Array.isArray(output) ? "of parts" : "string"}`;
    assert.deepEqual(r.rewritten, [3], `${where}: ${r.events.map((e) => `${e.type}:${e.tokensBefore}->${e.tokensAfter}`)}`);
    const copy = r.messages[3];
    assert.deepEqual(Object.keys(copy), Object.keys(input[3]), `${where}: no field added`);
    assert.ok(shaped(copy.output), `${where}: the output keeps its shape: ${JSON.stringify(copy.output).slice(0, 200)}`);
    assert.match(JSON.stringify(copy.output), /^.{0,30}\[offloaded \d+ tokens as ctx_[0-9a-f]{16}; /, where);
    assert.ok(estimateTokens([copy]) < estimateTokens([input[3]]) / 2, `${where}: the tokens are gone`);
    assert.ok(r.tokensAfter <= Math.floor(config.maxTokens * 0.8) && !r.overBudget, where);
    // (Without the index of dropped calls, which would list the call with its preview.)
    const again = reduceSync(r.messages, { ...config, maxTokens: Math.floor(r.tokensAfter * 0.9), toolIndexRatio: 0 });
    assert.ok(!again.rewritten.includes(3), `${where}: the preview is not offloaded again`);
  }
  // A screenshot has no text to cut: it is not offloaded (nor claimed to be).
  const shot = items("computer_call_output", screenshot);
  const s = reduceSync(shot, { strategy: "progressive", maxTokens: 600, largeMessageTokens: 100, minToolRun: 6 });
  assert.ok(!s.rewritten.includes(3), JSON.stringify(s.events));
  assert.deepEqual(Object.keys(s.offloaded), []);
});

test("openai-responses: a call's arguments or input stay as the model wrote them; nothing is offloaded that is not cut", () => {
  const file = Array.from({ length: 120 }, (_, k) => `fn helper_${k}(x: u32) -> u32 { x * ${k} + 1 }`).join("\n");
  const history = (latest) => [
    { role: "developer", content: "You are a coding agent." },
    { role: "user", content: "Rewrite src/helpers.rs and apply the patch." },
    { type: "reasoning", id: "rs_1", summary: [] },
    { type: "function_call", id: "fc_1", call_id: "call_1", name: "write_file", arguments: JSON.stringify({ path: "src/helpers.rs", content: file }), status: "completed" },
    { type: "custom_tool_call", id: "ctc_1", call_id: "call_2", name: "apply_patch", input: `*** Begin Patch\n${file}\n*** End Patch` },
    { type: "mcp_approval_request", id: "mcpr_1", server_label: "fs", name: "write", arguments: JSON.stringify({ content: file }) },
    { type: "function_call_output", call_id: "call_1", output: "written" },
    { type: "custom_tool_call_output", call_id: "call_2", output: "applied" },
    { type: "mcp_approval_response", approval_request_id: "mcpr_1", approve: true },
    { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Done." }] },
    { role: "user", content: latest },
  ];
  for (const latest of ["Great, now commit.", "Commit with this message:\n" + "Refactor helpers. ".repeat(700)]) {
    const input = history(latest);
    const config = { strategy: "progressive", maxTokens: Math.floor(estimateTokens(input) * 0.5), keepLast: 3, minToolRun: 100 };
    const r = reduceSync(input, config);
    assert.deepEqual(r.rewritten, [], `nothing rewritten: ${r.events.map((e) => `${e.type}:${e.tokensBefore}->${e.tokensAfter}`)}`);
    assert.deepEqual(Object.keys(r.offloaded), []);
    assert.ok(r.events.every((e) => !e.type.startsWith("offload")), "no offload stage claims tokens");
    for (const m of r.messages) assert.ok(input.includes(m), "every item is an original");
    const again = reduceSync(r.messages, config);
    assert.equal(again.reduced, false, "reducing the result again changes nothing");
  }
});

test("a message whose size is in its tool calls is not offloaded in any format (no note that cuts nothing)", () => {
  const file = "fn main() {}\n".repeat(600);
  const cases = {
    openai: [
      { role: "user", content: "write files" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "write_file", arguments: JSON.stringify({ code: file }) } }] },
      { role: "tool", tool_call_id: "c1", content: "ok" },
      { role: "assistant", content: "Done." },
      { role: "user", content: "thanks" },
    ],
    "openai (text beside the calls)": [
      { role: "user", content: "write files" },
      { role: "assistant", content: "Writing.", tool_calls: [{ id: "c1", type: "function", function: { name: "write_file", arguments: JSON.stringify({ code: file }) } }] },
      { role: "tool", tool_call_id: "c1", content: "ok" },
      { role: "assistant", content: "Done." },
      { role: "user", content: "thanks" },
    ],
    langchain: [
      { type: "human", content: "write files" },
      { type: "ai", content: "", tool_calls: [{ id: "c1", name: "write_file", args: { code: file } }] },
      { type: "tool", tool_call_id: "c1", content: "ok" },
      { type: "ai", content: "Done." },
      { type: "human", content: "thanks" },
    ],
    vercel: [
      { role: "user", content: "write files" },
      { role: "assistant", content: [{ type: "text", text: "Writing." }, { type: "tool-call", toolCallId: "c1", toolName: "write_file", input: { code: file } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "write_file", output: { type: "text", value: "ok" } }] },
      { role: "assistant", content: "Done." },
      { role: "user", content: "thanks" },
    ],
  };
  for (const [name, input] of Object.entries(cases)) {
    for (const keepLast of [1, 5]) {
      const config = { strategy: "progressive", maxTokens: 200, largeMessageTokens: 100, minToolRun: 6, keepLast };
      const r = reduceSync(input, config);
      assert.ok(!r.rewritten.includes(1), `${name} keepLast ${keepLast}: the call is not rewritten`);
      assert.deepEqual(Object.keys(r.offloaded), [], `${name}: no original stored for a message that is not in the output as a preview`);
      const again = reduceSync(r.messages, config);
      assert.equal(again.reduced, false, `${name}: reducing the result again changes nothing`);
    }
  }
});

test("a preview never cuts an emoji (or any surrogate pair) in half", () => {
  for (const previewChars of [39, 40, 41, 199, 200]) {
    for (const text of ["x".repeat(previewChars - 1) + "👍 thanks " + "y ".repeat(3000), "😀".repeat(2000)]) {
      const input = [
        { role: "user", content: "q" },
        { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "read", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c", content: text },
        { role: "assistant", content: "🙂 ".repeat(3000) },
        { role: "user", content: "next" },
      ];
      const r = reduceSync(input, { strategy: "progressive", maxTokens: 1000, largeMessageTokens: 100, minToolRun: 6, previewChars });
      assert.ok(r.rewritten.includes(2), "the tool result was previewed");
      for (const m of r.messages) {
        assert.ok(m.content === null || m.content.isWellFormed(), `previewChars ${previewChars}: ${JSON.stringify(m.content?.slice(-60))}`);
      }
      const preview = r.messages.find((m) => m.role === "tool").content.split("\n")[1];
      assert.ok(preview.length >= previewChars - 1 && preview.length <= previewChars + 1, `${preview.length} units for ${previewChars}`);
    }
  }
});

test("a large message with no text to carry a note (only a tool call) is not offloaded, and stays so", () => {
  const input = () => [
    { role: "user", content: "write files" },
    { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "write_file", input: { code: "fn main() {}\n".repeat(600) } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] },
    { role: "assistant", content: "Done." },
    { role: "user", content: "thanks" },
  ];
  for (const keepLast of [1, 5]) {
    const config = { strategy: "progressive", maxTokens: 200, largeMessageTokens: 100, minToolRun: 6, keepLast };
    const r = reduceSync(input(), config);
    assert.deepEqual(r.rewritten, [], `keepLast ${keepLast}: nothing rewritten`);
    assert.deepEqual(Object.keys(r.offloaded), [], "no original stored for a message that is not in the output as a preview");
    const again = reduceSync(r.messages, config);
    assert.equal(again.reduced, false, "reducing the result again changes nothing");
  }
});

test("a user input that happens to start like a note is still the latest user input", async () => {
  const { analyze } = await import("chat-history-reducer");
  const typed = "[compressed; the original is ctx_0123456789abcdef, restored by context_reload]\nhello?";
  const input = [
    { role: "user", content: "a long question ".repeat(100) },
    { role: "assistant", content: "an answer" },
    { role: "user", content: typed },
  ];
  const a = analyze(input, { maxTokens: 100 });
  assert.equal(a.messages[2].realUser, true);
  assert.equal(a.messages[2].protectedBy, "latestUserInput");
  const r = reduceSync(input, { maxTokens: 100 });
  assert.ok(r.kept.includes(2) && r.dropped.includes(0));
});

test("a timeoutMs longer than a timer can wait (2^31 - 1 ms) does not fire at once", async () => {
  let calls = 0;
  const summarizer = async () => { calls++; await sleep(20); return "earlier turns, in brief"; };
  const r = await reduce(chat(12), { strategy: "summarize", targetMessages: 4, summarizer, timeoutMs: 3e9, onSummarizerError: "throw" });
  assert.equal(calls, 1);
  assert.ok(r.summary, "summarized: the summarizer was waited for");
  assert.ok(!r.events.some((e) => e.type === "summarizeFailed" || e.kind === "truncate"), JSON.stringify(r.events));
});

test("summarize: summaryMaxTokens bounds the summary's text (its tag is beside it), and a summary of the tokens the summarizer was asked for is taken", async () => {
  // The summarizer writes the text; the summary message adds its tag, role and overhead.
  // A summary that did as it was told was over summaryMaxTokens by the wrapping:
  // SUMMARY_TOO_LARGE (audit); then the wrapping counted against summaryMaxTokens, so at
  // small budgets (maxTokens 50: 10 tokens, the tag alone 14) no summary fitted (audit).
  const text = (tokens) => {
    const weigh = (k) => estimateTokens({ role: "user", content: "word ".repeat(k).trim() }) - estimateTokens({ role: "user", content: "" });
    let k = 0;
    while (weigh(k + 1) <= tokens) k++;
    return "word ".repeat(k).trim();
  };
  for (const extra of [{}, { summaryMaxTokens: 30 }, { summaryRole: "system", summaryTag: "recap" }]) {
    const asked = [];
    const config = {
      strategy: "summarize", maxTokens: 200, onSummarizerError: "throw", ...extra,
      summarizer: async (req) => {
        asked.push(req.targetTokens);
        return text(req.targetTokens);
      },
    };
    const r = await reduce(chat(12), config);
    assert.equal(asked.length, 1, JSON.stringify(extra));
    assert.ok(r.summary, JSON.stringify(extra));
    const max = extra.summaryMaxTokens ?? Math.floor(0.25 * Math.floor(0.8 * 200));
    assert.ok(asked[0] <= max, `asked for ${asked[0]}, at most ${max}`);
    const summary = r.messages.find((m) => typeof m.content === "string" && m.content.includes("</"));
    const tag = { ...summary, content: summary.content.replace(/>[^]*</, "><") };
    assert.ok(estimateTokens(summary) - estimateTokens(tag) <= max, `${estimateTokens(summary)} - ${estimateTokens(tag)} ≤ ${max}`);
    assert.ok(r.tokensAfter <= 160 && !r.overBudget, `${r.tokensAfter}`);
  }
});

test("a user input that starts with the summary tag and goes on after it is that user's input, not a summary", async () => {
  // A user quoting an earlier summary, then asking something: it was taken for the summary,
  // replaced in single mode, and the request after the tag was lost (audit).
  const history = chat(30);
  const latest = {
    role: "user",
    content: "<conversation-summary>\nMy notes: budget approved, launch in May.\n</conversation-summary>\nPlease turn these notes into an email.",
  };
  history.push(latest);
  const sent = [];
  const r = await reduce(history, {
    strategy: "summarize", maxTokens: Math.floor(estimateTokens(history) * 0.7),
    summarizer: async (q) => {
      sent.push(q);
      return "earlier chat about plants";
    },
  });
  assert.ok(r.messages.includes(latest), "the latest user input is kept, verbatim");
  assert.equal(r.messages.at(-1), latest);
  assert.equal(sent.length, 1);
  assert.equal(sent[0].previousSummary, undefined, "no earlier summary to replace");
  // A message that is the tag's text alone (as the library writes it) is still a summary.
  const again = await reduce([...r.messages, { role: "assistant", content: "Here is the email." }, { role: "user", content: "Thanks" }], {
    strategy: "summarize", maxTokens: 200, summarizer: async (q) => {
      sent.push(q);
      return "more";
    },
  });
  assert.ok(again.messages.length > 0);
  assert.equal(sent.at(-1).previousSummary, "earlier chat about plants");
});

test("a preview keeps the payload's shape: Gemini's response key, an AI SDK output's type, Anthropic's blocks (SPEC §2: only its text changed)", async () => {
  // Gemini's { result } became { content }, an AI SDK json output a text one, Anthropic's
  // tool_result blocks a string (audit).
  const big = "row data value ".repeat(600);
  const cases = {
    gemini: [[{ role: "user", parts: [{ text: "fetch" }] }, { role: "model", parts: [{ functionCall: { id: "f1", name: "fetch", args: {} } }] },
      { role: "user", parts: [{ functionResponse: { id: "f1", name: "fetch", response: { result: big } } }] }, { role: "model", parts: [{ text: "got it" }] },
      { role: "user", parts: [{ text: "summarize" }] }, { role: "model", parts: [{ text: "ok" }] }],
    (m) => Object.keys(m.parts[0].functionResponse.response), ["result"]],
    anthropic: [[{ role: "user", content: "fetch" }, { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "fetch", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: big }] }] }, { role: "assistant", content: "got it" },
      { role: "user", content: "summarize" }, { role: "assistant", content: "ok" }],
    (m) => m.content[0].content.map((b) => b.type), ["text"]],
    vercel: [[{ role: "user", content: "fetch" }, { role: "assistant", content: [{ type: "tool-call", toolCallId: "t1", toolName: "fetch", input: {} }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "t1", toolName: "fetch", output: { type: "json", value: { rows: big } } }] }, { role: "assistant", content: "got it" },
      { role: "user", content: "summarize" }, { role: "assistant", content: "ok" }],
    (m) => m.content[0].output.type, "json"],
  };
  for (const [format, [input, shape, expected]] of Object.entries(cases)) {
    for (const maxTokens of [1500, 60]) {
      const config = { strategy: "progressive", maxTokens, keepLast: 3, minToolRun: 6 };
      const r = await reduce(input, config);
      assert.deepEqual(r.rewritten, [2], format);
      const preview = r.messages[2];
      assert.deepEqual(shape(preview), expected, format);
      assert.match(JSON.stringify(preview), /\[offloaded \d+ tokens as ctx_/, format);
      assert.equal(r.tokensAfter, estimateTokens(r.messages, config), format);
      // Known as a preview by the next reduction: not offloaded again, over budget too.
      const again = await reduce(r.messages, config);
      assert.equal(again.rewritten.length, 0, `${format} ${maxTokens}`);
      again.messages.forEach((m, i) => assert.equal(m, r.messages[i], format));
    }
  }
});

test("a copy without orphan results keeps the caller's count of the original when countTokens counts (by the original's index)", async () => {
  // It was counted as message 0 of its own: another message's count (review).
  const input = [
    { role: "user", content: "first" },
    { role: "assistant", content: "ok" },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "gone", content: "x" }, { type: "text", text: "and then?" }] },
  ];
  const counts = [900, 20, 30], indices = [];
  const r = await reduce(input, { maxTokens: 1e9, countTokens: (m, i) => { indices.push(i); return counts[i]; } });
  assert.deepEqual(r.rewritten, [2]);
  assert.deepEqual(indices, [0, 1, 2]);
  assert.equal(r.tokensBefore, 950);
  assert.equal(r.tokensAfter, 950);
});

test("a summarizer answer that cannot be read is a failed summary (fallback, or SUMMARIZER_FAILED), not an escaped error", async () => {
  // An answer whose `text` getter throws escaped as the getter's own Error (audit).
  const unreadable = async () => ({ get text() { throw new Error("answer unreadable"); } });
  for (const strategy of ["summarize", "progressive"]) {
    const r = await reduce(chat(30), { strategy, maxTokens: 500, summarizer: unreadable });
    assert.ok(r.events.some((e) => e.type === "summarizeFailed" && e.reason === "invalid" && /answer unreadable/.test(e.message)), strategy);
    await assert.rejects(reduce(chat(30), { strategy, maxTokens: 500, summarizer: unreadable, onSummarizerError: "throw" }),
      (e) => e instanceof ReduceError && e.code === "SUMMARIZER_FAILED" && /answer unreadable/.test(e.message), strategy);
  }
});

test("a summarizer's long answer, and a long previous summary, go through without growing the wasm memory", async () => {
  // The summary's text stays a JavaScript string (it was copied into wasm memory and back,
  // twice: 10 MB of summary grew the memory, which never shrinks, by 40 MB).
  const { initSync } = await import("chat-history-reducer/web");
  const memory = () => initSync(undefined).memory.buffer.byteLength; // (loaded already: its exports)
  const long = "word ".repeat(4_000_000);
  const history = chat(20);
  const requests = [];
  const config = { strategy: "summarize", targetMessages: 6, summaryMaxTokens: 1e9, summarizer: async (req) => { requests.push(req); return long; } };
  const before = memory();
  const r = await reduce(history, config);
  assert.equal(r.summary.content, `<conversation-summary>${long.trim()}</conversation-summary>`);
  const again = await reduce([history[0], r.summary, ...chat(10, false)], config);
  assert.equal(requests.at(-1).previousSummary, long.trim(), "the long summary goes to the summarizer as it was");
  assert.equal(again.summary.content, r.summary.content);
  assert.ok(memory() - before <= 1 << 20, `wasm memory grew by ${memory() - before} bytes`);
});

test("summarize, single mode: an earlier summary too long for the target is replaced with the oldest messages, not kept while they are dropped", async () => {
  const old = { role: "user", content: `<conversation-summary>\n${"w".repeat(250)}\n</conversation-summary>` };
  const history = [{ role: "system", content: "S" }, old];
  for (let i = 0; i < 6; i++) history.push({ role: i % 2 ? "assistant" : "user", content: `${i}`.repeat(20) });
  const requests = [];
  const r = await reduce(history, {
    strategy: "summarize", maxTokens: 400, targetTokens: 300, countTokens: byLength,
    summarizer: async (req) => { requests.push(req); return "N"; },
  });
  assert.equal(requests.length, 1);
  assert.equal(requests[0].previousSummary, "w".repeat(250));
  // The oldest group goes with it, and the reply after it (the history starts on a user input).
  assert.deepEqual(requests[0].messages, [history[2], history[3]]);
  assert.deepEqual(r.summarized, [1, 2, 3]);
  assert.deepEqual(r.dropped, []);
  assert.equal(r.overBudget, false);
  assert.equal(r.tokensAfter, 1 + 46 + 4 * 20);
  assert.deepEqual(r.messages.slice(2), history.slice(4));
});

test("summarize: the summary may have no more than the target leaves beside the tail that stays; where none fits, it truncates", async () => {
  // The latest user input (500) and the reply (70) stay, and the system prompt (1): 29 of
  // the 600 are left for the summary.
  const history = [{ role: "system", content: "S" }];
  for (let i = 0; i < 6; i++) history.push({ role: i % 2 ? "assistant" : "user", content: `${i}`.repeat(100) });
  history.push({ role: "user", content: "q".repeat(500) }, { role: "assistant", content: "a".repeat(70) });
  const requests = [];
  const config = {
    strategy: "summarize", maxTokens: 750, targetTokens: 600, onOverBudget: "error", countTokens: byLength,
    summaryTag: "s", // (its wrapping: "<s>" and "</s>", 7 tokens)
    summarizer: async (req) => { requests.push(req); return "S".repeat(req.targetTokens); },
  };
  let r = await reduce(history, config);
  assert.equal(requests.at(-1).targetTokens, 29 - 7 - 1, "what is left, less the wrapping and a token");
  assert.deepEqual([r.overBudget, r.tokensAfter], [false, 571 + 28]);
  r = await reduce(history, { ...config, targetTokens: 700 });
  assert.equal(requests.at(-1).targetTokens, 129 - 7 - 1, "below summaryMaxTokens (175)");
  // The default tag's wrapping alone (45) is over the 29 left: no summary is asked for, and
  // that is a summary too large (reported; or SUMMARY_TOO_LARGE).
  r = await reduce(history, { ...config, summaryTag: undefined });
  assert.equal(requests.length, 2, "not asked");
  assert.deepEqual(r.events.map((e) => [e.type, e.reason]), [["summarizeFailed", "tooLarge"], ["truncate", undefined]]);
  assert.deepEqual([r.overBudget, r.tokensAfter], [false, 571]);
  await assert.rejects(reduce(history, { ...config, summaryTag: undefined, onSummarizerError: "throw" }),
    (e) => e instanceof ReduceError && e.code === "SUMMARY_TOO_LARGE");
  assert.equal(requests.length, 2, "not asked");
});

test("summarize with only a message target: the summary is judged by summaryMaxTokens (1000 unless set), not by the few short messages it replaces", async () => {
  // A summary longer than the short messages it replaced was too large: the early turns went
  // with no summary at all.
  const history = [];
  for (let i = 0; i < 12; i++) history.push({ role: i % 2 ? "assistant" : "user", content: `message ${i} `.repeat(8) });
  const requests = [];
  const config = { strategy: "summarize", targetMessages: 4, thresholdMessages: 0 };
  const replaced = estimateTokens(history.slice(0, 8));
  const longer = "Ada asked about the trip; ".repeat(Math.ceil(replaced / 4));
  assert.ok(estimateTokens({ role: "user", content: longer }) > replaced);
  const r = await reduce(history, { ...config, summarizer: async (req) => { requests.push(req); return longer; } });
  assert.equal(r.summary.content, `<conversation-summary>${longer.trim()}</conversation-summary>`);
  assert.deepEqual(r.summarized, [0, 1, 2, 3, 4, 5, 6, 7]);
  // Asked for what the default leaves for the text (its tag is beside it), less a token for
  // the rounding.
  assert.equal(requests[0].targetTokens, 1000 - 1);
  // Over the default, or over summaryMaxTokens, it is too large.
  const long = "word ".repeat(2000);
  const tooLong = await reduce(history, { ...config, summarizer: async () => long });
  assert.deepEqual(tooLong.events.map((e) => [e.type, e.reason]), [["summarizeFailed", "tooLarge"], ["truncate", undefined]]);
  assert.equal(tooLong.summary, undefined);
  await assert.rejects(reduce(history, { ...config, onSummarizerError: "throw", summarizer: async () => long }),
    (e) => e instanceof ReduceError && e.code === "SUMMARY_TOO_LARGE");
  await assert.rejects(reduce(history, { ...config, summaryMaxTokens: 20, onSummarizerError: "throw", summarizer: async () => longer }),
    (e) => e instanceof ReduceError && e.code === "SUMMARY_TOO_LARGE");
});

test("a reduction that rejects still ends its reduceStart with a reduceEnd (the error in it); an abort is a summarizeFailed too", async () => {
  // A UI that shows "summarizing…" from summarizeStart to reduceEnd was left spinning (audit).
  const history = chat(30);
  // (AbortSignal.timeout's timer does not keep Node's event loop alive.)
  const abortIn = (ms) => { const c = new AbortController(); setTimeout(() => c.abort(), ms); return c.signal; };
  const cases = [
    ["aborted before", { signal: AbortSignal.abort() }, "ABORTED", ["summarizeFailed:aborted"]],
    ["aborted during", { signal: abortIn(20), summarizer: () => new Promise(() => {}) }, "ABORTED", ["summarizeFailed:aborted"]],
    ["rejected, throw", { onSummarizerError: "throw", summarizer: async () => { throw new Error("down"); } }, "SUMMARIZER_FAILED", ["summarizeFailed:rejected"]],
    ["budget", { strategy: "truncate", maxTokens: 5, onOverBudget: "error" }, "BUDGET_UNREACHABLE", []],
  ];
  for (const [name, extra, code, failed] of cases) {
    const events = [];
    const config = { strategy: "summarize", targetMessages: 6, summarizer: async () => "s", onEvent: (e) => events.push(e), ...extra };
    const error = await reduce(history, config).then(() => undefined, (e) => e);
    assert.equal(error?.code, code, name);
    const types = events.map((e) => e.type + (e.reason ? `:${e.reason}` : ""));
    assert.equal(types[0], "reduceStart", name);
    assert.deepEqual(types.filter((t) => t.startsWith("summarizeFailed")), failed, name);
    const end = events.at(-1);
    assert.equal(end.type, "reduceEnd", name);
    assert.equal(end.reduced, false, name);
    assert.equal(end.error, error, name);
    assert.equal(end.tokensAfter, end.tokensBefore, name);
  }
  const events = [];
  assert.throws(() => reduceSync(history, { maxTokens: 5, onOverBudget: "error", onEvent: (e) => events.push(e.type) }), (e) => e.code === "BUDGET_UNREACHABLE");
  assert.deepEqual(events, ["reduceStart", "reduceEnd"]);
});

test("summarize: when what must stay misses the target by itself, it is truncate's over budget, not a summary too large", async () => {
  const history = [];
  for (let i = 0; i < 5; i++) history.push({ role: "user", content: `q ${i}` }, { role: "assistant", content: `a ${i}` });
  history.push({ role: "user", content: "lorem ipsum ".repeat(800) }); // the latest input alone is over the budget
  let calls = 0;
  const config = { maxTokens: 500, strategy: "summarize", onSummarizerError: "throw", summarizer: async () => { calls++; return "s"; } };
  const r = await reduce(history, config);
  assert.deepEqual([calls, r.overBudget, r.events.map((e) => e.type)], [0, true, ["truncate"]]);
  await assert.rejects(reduce(history, { ...config, onOverBudget: "error" }), (e) => e.code === "BUDGET_UNREACHABLE" && /protected messages alone/.test(e.message));
});

test("onEvent that throws on reduceEnd: its error, and no second reduceEnd", async () => {
  const seen = [];
  const onEvent = (e) => { seen.push(e.type); if (e.type === "reduceEnd") throw new Error("ui gone"); };
  await assert.rejects(reduce(chat(30), { strategy: "summarize", targetMessages: 6, onEvent, summarizer: async () => "s" }), /ui gone/);
  assert.deepEqual(seen.filter((t) => t === "reduceEnd"), ["reduceEnd"]);
  seen.length = 0;
  assert.throws(() => reduceSync(chat(30), { maxTokens: 100, onEvent }), /ui gone/);
  assert.deepEqual(seen, ["reduceStart", "reduceEnd"]);
});

test("the summarizer's usage is kept as plain JSON: its numbers, not a provider's object (ChatHistory.toJSON stays JSON)", async () => {
  const response = { id: "resp_1" };
  const usage = { inputTokens: 120, outputTokens: 9, details: { cachedTokens: 40, raw: response }, response, big: 10n, note: "x" };
  response.usage = usage; // (a usage that points back at its response)
  const h = new ChatHistory({ strategy: "summarize", targetMessages: 4, thresholdMessages: 1, summarizer: async () => ({ text: "Earlier: plants.", usage }) }, chat(6));
  await h.prepare();
  assert.deepEqual(h.events.find((e) => e.usage !== undefined).usage, { inputTokens: 120, outputTokens: 9, details: { cachedTokens: 40 } });
  const again = ChatHistory.fromJSON(JSON.parse(JSON.stringify(h.toJSON())), { strategy: "summarize", targetMessages: 4, thresholdMessages: 1, summarizer: async () => "x" });
  assert.deepEqual(again.messages, h.messages);
});

test("summarize at a small budget: summaryMaxTokens bounds the summary's text, so a short summary fits where the tag alone is over it", async () => {
  // maxTokens 60: summaryMaxTokens 12, and the tag, role and overhead 14: no summary fitted,
  // and the summarizer was never asked (audit).
  const msgs = [{ role: "system", content: "You are helpful." },
    ...Array.from({ length: 20 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `message number ${i} about topic ${i}` }))];
  for (const maxTokens of [60, 70, 80]) {
    let calls = 0;
    const r = await reduce(msgs, { strategy: "summarize", maxTokens, onSummarizerError: "throw", summarizer: async () => { calls++; await sleep(2); return "ok"; } });
    assert.equal(calls, 1, `${maxTokens}`);
    assert.ok(r.summary && r.tokensAfter <= Math.floor(0.8 * maxTokens) && !r.overBudget, `${maxTokens}: ${r.tokensAfter}`);
  }
  // What must stay meets the target exactly (32 of 32 tokens), with no room for the tag:
  // what may go is summarized all the same (it saves tokens), over budget, and the
  // summary's event says so (issue 26: it was a truncation without asking).
  const config = { strategy: "summarize", maxTokens: 41, summarizer: async () => "ok" };
  for (const onSummarizerError of ["throw", "fallback"]) {
    const r = await reduce(msgs, { ...config, onSummarizerError });
    assert.ok(r.summary, onSummarizerError);
    assert.equal(r.overBudget, true);
    assert.ok(r.tokensAfter < r.tokensBefore);
    assert.ok(r.events.some((e) => e.type === "summarize" && e.overBudget === true), JSON.stringify(r.events));
  }
  // Asked never to be over budget: no summary fits, so the summarizer is not asked, and
  // a truncation meets the target (a summary too large, reported).
  let asked = 0;
  const r = await reduce(msgs, { ...config, onOverBudget: "error", summarizer: async () => (asked++, "ok") });
  assert.equal(asked, 0);
  assert.equal(r.overBudget, false);
  assert.ok(r.events.some((e) => e.type === "summarizeFailed" && e.reason === "tooLarge"), JSON.stringify(r.events));
});

test("vercel-ui: a new summary's id is not one the history has (layered summaries of the same text)", async () => {
  const msg = (id, role, text) => ({ id, role, parts: [{ type: "text", text }] });
  const turns = (from, to) => Array.from({ length: to - from }, (_, k) => [
    msg(`u${from + k}`, "user", `q${from + k} ${"lorem ipsum ".repeat(20)}`), msg(`a${from + k}`, "assistant", `a${from + k} ${"dolor sit ".repeat(20)}`)]).flat();
  const config = { strategy: "summarize", summaryMode: "layered", maxTokens: 1200, summarizer: async () => "(earlier conversation omitted)" };
  const first = await reduce(turns(0, 20), config);
  const second = await reduce([...first.messages, ...turns(20, 40)], config);
  const ids = second.messages.map((m) => m.id);
  assert.equal(ids.filter((id) => id.startsWith("summary-")).length, 2, ids.join());
  assert.equal(new Set(ids).size, ids.length, `duplicate ids: ${ids.join()}`);
  // The same input, the same ids (SPEC §9.10).
  assert.deepEqual((await reduce([...first.messages, ...turns(20, 40)], config)).messages.map((m) => m.id), ids);
});

test("a summary is a message its provider takes: a system one has string content (the AI SDK's rule), and in Anthropic and Gemini an assistant one opens the history as a user turn", async () => {
  const summarizer = async () => { await sleep(2); return "The user asked about the logs; a tool read them."; };
  const filler = "please look at this long log excerpt ".repeat(120);
  const vercel = [
    { role: "user", content: [{ type: "text", text: `first question ${filler}` }] },
    { role: "assistant", content: `answer ${filler}` },
    { role: "user", content: "second question" },
    { role: "assistant", content: "ok" },
  ];
  for (const strategy of ["summarize", "progressive"]) {
    const r = await reduce(vercel, { strategy, format: "vercel", maxTokens: 400, largeMessageTokens: 1250, summaryRole: "system", summarizer });
    assert.equal(r.summary.role, "system");
    assert.equal(typeof r.summary.content, "string", JSON.stringify(r.summary));
  }
  const anthropic = vercel.map((m) => ({ ...m }));
  const gemini = vercel.map((m) => ({ role: m.role === "assistant" ? "model" : "user", parts: [{ text: typeof m.content === "string" ? m.content : m.content[0].text }] }));
  for (const [format, input] of [["anthropic", anthropic], ["gemini", gemini]]) {
    const r = await reduce(input, { strategy: "summarize", format, maxTokens: 400, summaryRole: "assistant", summarizer });
    assert.ok(r.summary, format);
    assert.equal(r.messages[0], r.summary, format);
    assert.equal(r.summary.role, "user", `${format}: ${JSON.stringify(r.summary)}`);
  }
});
