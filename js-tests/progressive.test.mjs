// progressive (SPEC §5): stages 1–6 with and without a summarizer, their limits, failures,
// accounting and stability.
import { test } from "node:test";
import assert from "node:assert/strict";
import { reduce, reduceSync, ChatHistory, ReduceError, estimateTokens } from "chat-history-reducer";
import { agentSession, chat, playTurns, sleep } from "./chats.mjs";

test("progressive without a summarizer: stages 1–3 reach the target and every original reloads byte for byte", () => {
  const input = agentSession();
  assert.equal(input.length, 300);
  const before = estimateTokens(input);
  const maxTokens = Math.floor(before / 20);
  const r = reduceSync(input, { strategy: "progressive", maxTokens });
  assert.ok(r.tokensAfter <= Math.floor(maxTokens * 0.8), `${r.tokensAfter} > target`);
  assert.equal(r.overBudget, false);
  assert.ok(r.events.every((e) => ["toolRuns", "offloadOld", "offloadRecent"].includes(e.type)), r.events.map((e) => e.type).join());
  assert.deepEqual(r.dropped, [], "nothing dropped without a trace");
  // Every user input stays verbatim.
  input.forEach((m, i) => { if (m.role === "user") assert.ok(r.kept.includes(i), `user input ${i}`); });
  // Accounting: each index once.
  const all = [...r.kept, ...r.dropped, ...r.summarized, ...r.rewritten].sort((a, b) => a - b);
  assert.deepEqual(all, input.map((_, i) => i));
  // Every offloaded original reloads byte for byte.
  const offloaded = Object.values(r.offloaded).flat();
  assert.equal(offloaded.length, r.summarized.length + r.rewritten.length);
  for (const original of offloaded) assert.ok(input.includes(original), "the originals are the input objects");
  for (const [id, originals] of Object.entries(r.offloaded)) {
    assert.match(id, /^ctx_[0-9a-f]{16}$/);
    assert.ok(r.messages.some((m) => JSON.stringify(m).includes(id)), `the output names ${id}`);
    assert.equal(JSON.stringify(originals), JSON.stringify(originals.map((o) => input[input.indexOf(o)])));
  }
  // Tool integrity after compression.
  const open = new Set();
  for (const m of r.messages) {
    for (const c of m.tool_calls ?? []) open.add(c.id);
    if (m.role === "tool") { assert.ok(open.has(m.tool_call_id)); open.delete(m.tool_call_id); }
  }
  assert.equal(open.size, 0);
  // Deterministic: the same ids for the same content.
  assert.deepEqual(Object.keys(reduceSync(input, { strategy: "progressive", maxTokens }).offloaded), Object.keys(r.offloaded));
});

test("progressive is stable over budget: previews, digests and compressed texts are not rewritten again (SPEC §9.9)", async () => {
  const words = (n) => "lorem ipsum dolor sit amet ".repeat(n);
  const call = (id) => ({ id, type: "function", function: { name: "read_file", arguments: `{"path":"${id}.log"}` } });
  // Previews bigger than largeMessageTokens, over budget: the audit's case.
  const openai = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Read the logs and tell me what failed." },
    { role: "assistant", content: null, tool_calls: [call("c1"), call("c2")] },
    { role: "tool", tool_call_id: "c1", content: words(400) },
    { role: "tool", tool_call_id: "c2", content: words(400) },
  ];
  // One message holding several results, each previewed; and a digest of eight calls,
  // bigger than largeMessageTokens, that stays (keepLast reaches back to its round's input).
  const anthropic = [{ role: "user", content: "Check every file, then both logs." }];
  for (let k = 0; k < 8; k++) {
    anthropic.push({ role: "assistant", content: [{ type: "tool_use", id: `t${k}`, name: "read_file", input: { path: `/src/file_${k}.rs` } }] });
    anthropic.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `t${k}`, content: words(30) }] });
  }
  anthropic.push({ role: "assistant", content: [{ type: "tool_use", id: "a", name: "read_file", input: {} }, { type: "tool_use", id: "b", name: "read_file", input: {} }] });
  anthropic.push({ role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: words(400) }, { type: "tool_result", tool_use_id: "b", content: words(400) }] });
  anthropic.push({ role: "assistant", content: "Both read." }, { role: "user", content: "What failed?" });
  const summarizer = async (req) => `${req.kind} summary ${"of many words ".repeat(40)}`;
  const cases = [
    [openai, { strategy: "progressive", maxTokens: 150, keepLast: 2, largeMessageTokens: 80 }],
    [anthropic, { strategy: "progressive", maxTokens: 150, keepLast: 3, largeMessageTokens: 80, minToolRun: 4 }],
    [openai, { strategy: "progressive", maxTokens: 150, keepLast: 2, largeMessageTokens: 80, summarizer }],
    [anthropic, { strategy: "progressive", maxTokens: 150, keepLast: 3, largeMessageTokens: 80, minToolRun: 4, summarizer }],
  ];
  for (const [input, config] of cases) {
    const where = `${input === openai ? "openai" : "anthropic"}${config.summarizer ? " with a summarizer" : ""}`;
    const first = await reduce(input, config);
    assert.ok(first.reduced && first.overBudget, `${where}: over budget (${first.events.map((e) => e.type)})`);
    assert.ok(first.rewritten.length > 0 || first.summarized.length > 0, where);
    if (input === anthropic) {
      const digest = first.messages.find((m) => String(m.content).startsWith("[compressed tool run: 16 messages"));
      assert.ok(digest && estimateTokens(digest) > 80, `${where}: a large digest stands`);
    }
    const again = await reduce(first.messages, config);
    assert.equal(again.reduced, false, `${where}: reduced again (${again.events.map((e) => e.type)})`);
    assert.equal(again.messages.length, first.messages.length, where);
    again.messages.forEach((m, k) => assert.equal(m, first.messages[k], `${where}: message ${k} is the same object`));
    assert.deepEqual(again.kept, first.messages.map((_, k) => k), where);
    assert.deepEqual(again.offloaded, {}, where);
    assert.equal(again.tokensAfter, first.tokensAfter, where);
  }
});

test("progressive with a summarizer: stages 4–6 only when 1–3 are not enough, with the right kinds", async () => {
  const input = agentSession();
  const kinds = [];
  const summarizer = async (req) => { kinds.push(req.kind); return `(${req.kind} summary of ${req.messages.length})`; };
  const before = estimateTokens(input);
  const light = await reduce(input, { strategy: "progressive", maxTokens: Math.floor(before / 2), summarizer, minToolRun: 1000 });
  assert.ok(kinds.length === 0, `no summarizer call for a light reduction: ${kinds}`);
  assert.ok(light.events.every((e) => e.type.startsWith("offload")));
  const heavy = await reduce(input, { strategy: "progressive", maxTokens: 3000, summarizer, minToolRun: 1000 });
  assert.ok(kinds.includes("round"), kinds.join());
  assert.ok(kinds.every((k) => ["round", "largeMessage", "currentRound"].includes(k)));
  assert.ok(heavy.tokensAfter <= 2400 || heavy.overBudget);
});

test("progressive keeps the round summary it wrote and the current turn when the later stages are not enough (SPEC §5, §8, §9.13)", async () => {
  // Previous rounds, then a current round with three tool calls: summarizing the rounds and
  // compressing the current one still leaves too many messages. The new summary stays (a
  // summary as any other), and so do the current turn's steps: over budget.
  const words = (n) => "lorem ipsum dolor ".repeat(n);
  const input = [{ role: "system", content: "You are a helpful agent." }];
  for (let i = 0; i < 5; i++) input.push({ role: "user", content: `question ${i} ${words(20)}` }, { role: "assistant", content: `answer ${i} ${words(20)}` });
  input.push({ role: "user", content: "current question" });
  for (let i = 0; i < 3; i++) {
    input.push({ role: "assistant", content: null, tool_calls: [{ id: `c${i}`, type: "function", function: { name: "search", arguments: "{}" } }] });
    input.push({ role: "tool", tool_call_id: `c${i}`, content: words(10) });
  }
  input.push({ role: "assistant", content: "final answer" });
  const config = { strategy: "progressive", targetMessages: 4, thresholdMessages: 0, summarizer: async (req) => `summary of ${req.messages.length} (${req.kind})` };
  const r = await reduce(input, config);
  assert.deepEqual(r.events.map((e) => e.type), ["summarizeRounds", "compressCurrentRound"]);
  assert.ok(r.summary, "a summary was made");
  assert.equal(r.messages[1], r.summary, "the new summary stands after the system prompt");
  assert.equal(r.summary.content, "<conversation-summary>summary of 10 (round)</conversation-summary>");
  assert.deepEqual(r.summarized, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.deepEqual(r.dropped, [], "no step of the current turn dropped");
  const all = [...r.kept, ...r.dropped, ...r.summarized, ...r.rewritten].sort((a, b) => a - b);
  assert.deepEqual(all, input.map((_, i) => i), "every input index once");
  assert.equal(r.overBudget, true);
  assert.equal((await reduce(r.messages, config)).reduced, false, "stable");
});

/** An agent chat: per turn a question, a call of read_file and its result of `chars`, an answer. */
function readingSession(turns, chars = 1200) {
  const m = [{ role: "system", content: "You read files." }];
  for (let t = 0; t < turns; t++) {
    m.push({ role: "user", content: `Question ${t}: what is in file ${t}?` });
    m.push({ role: "assistant", content: null, tool_calls: [{ id: `c${t}`, type: "function", function: { name: "read_file", arguments: `{"path":"f${t}.txt"}` } }] });
    m.push({ role: "tool", tool_call_id: `c${t}`, content: `file ${t}: ${"lorem ipsum dolor sit amet ".repeat(chars / 27)}` });
    m.push({ role: "assistant", content: `File ${t} is lorem ipsum.` });
  }
  return m;
}

test("progressive without a summarizer clears old tool results before any group goes: the calls stay, each result a placeholder whose id reloads it", () => {
  // Nothing large, no run of tool messages (at a small window these follow the target:
  // here, the values of a large one): only stage clearToolResults helps.
  const input = readingSession(10);
  const before = estimateTokens(input);
  const results = input.flatMap((m, i) => (m.role === "tool" ? [i] : []));
  const cleared = (r) => r.messages.flatMap((m) => (m.role === "tool" && m.content.startsWith("[cleared ") ? [input.findIndex((o) => o.tool_call_id === m.tool_call_id)] : []));
  const large = { strategy: "progressive", largeMessageTokens: 1250, minToolRun: 6 };
  // Room for all but six results (a placeholder has some 25 tokens).
  const config = { ...large, maxTokens: before - 1, targetTokens: Math.floor(before - 5.5 * (estimateTokens(input[3]) - 25)) };
  const r = reduceSync(input, config);
  assert.deepEqual(r.events.map((e) => e.type), ["clearToolResults"]);
  assert.deepEqual(r.dropped, []);
  assert.deepEqual(cleared(r), results.slice(0, 6), "the oldest first");
  assert.deepEqual(r.rewritten, results.slice(0, 6));
  for (const i of r.rewritten) {
    const m = r.messages.find((o) => o.role === "tool" && o.tool_call_id === input[i].tool_call_id);
    const [, tokens, id] = /^\[cleared (\d+) tokens as (ctx_[0-9a-f]{16})\]$/.exec(m.content);
    assert.equal(Number(tokens), estimateTokens(input[i]));
    assert.deepEqual(r.offloaded[id], [input[i]], "the id reloads the original");
    assert.ok(r.messages.includes(input[i - 1]), "its call is sent as it was");
  }
  assert.ok(r.tokensAfter <= config.targetTokens);
  assert.equal(reduceSync(r.messages, config).reduced, false, "stable");
  // A lower target: every result but the newest three (keepToolResults), then groups go,
  // their calls listed in the index of dropped tool calls.
  const low = reduceSync(input, { ...large, maxTokens: 1500 });
  assert.deepEqual(low.events.map((e) => e.type), ["clearToolResults", "indexToolCalls", "truncate"]);
  assert.equal(low.events[0].messages, 7);
  assert.deepEqual(low.messages.filter((m) => m.role === "tool" && !m.content.startsWith("[cleared ")), input.slice(-12).filter((m) => m.role === "tool").slice(-3));
  // keepToolResults 0: the eighth oldest result may go too, and then no group has to.
  const none = reduceSync(input, { ...large, maxTokens: 1500, keepToolResults: 0 });
  assert.deepEqual(none.events.map((e) => [e.type, e.messages]), [["clearToolResults", 8]]);
});

test("ChatHistory with progressive: old results are cleared turn after turn, every id it names reloads, nothing else goes", async () => {
  // A 30k window, with its default thresholds.
  const all = readingSession(120, 2400);
  const h = new ChatHistory({ strategy: "progressive", maxTokens: 30_000 }, [all[0]]);
  await playTurns(h, all);
  const sent = h.messages;
  assert.ok(estimateTokens(sent) <= 30_000);
  // 120 turns of 80k tokens in all: with the old results cleared, none had to go.
  assert.deepEqual([...new Set(h.events.map((e) => e.type))], ["clearToolResults"]);
  assert.equal(sent.length, all.length);
  assert.ok(h.events.some((e) => e.type === "clearToolResults"), h.events.map((e) => e.type).join());
  const ids = [...new Set(JSON.stringify(sent).match(/ctx_[0-9a-f]{16}/g))];
  assert.ok(ids.length > 3, `${ids.length} ids`);
  for (const id of ids) {
    const [original] = h.reload(id);
    assert.ok(all.includes(original), "the pushed object");
    const placeholder = sent.find((m) => m.tool_call_id === original.tool_call_id);
    assert.match(placeholder.content, new RegExp(`^\\[cleared \\d+ tokens as ${id}\\]$`));
  }
  // Every result sent is whole or a placeholder, and each answers its call.
  const calls = new Set(sent.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
  for (const m of sent.filter((o) => o.role === "tool")) assert.ok(calls.has(m.tool_call_id));
});

test("what the model reloaded is not compressed, cleared or offloaded again, in a small window's runs of two as well", () => {
  const big = "the original log line\n".repeat(300);
  const input = [{ role: "user", content: "Reload the log." },
    { role: "assistant", content: null, tool_calls: [{ id: "r1", type: "function", function: { name: "context_reload", arguments: '{"id":"ctx_0123456789abcdef"}' } }] },
    { role: "tool", tool_call_id: "r1", content: big },
    { role: "assistant", content: "It says the original log line, many times." },
    ...readingSession(6).slice(1)];
  // A 3,000-token window: largeMessageTokens 120; runs of two set (the default is 3).
  const r = reduceSync(input, { strategy: "progressive", maxTokens: 3000, minToolRun: 2 });
  assert.ok(r.events.some((e) => e.type === "toolRuns"), r.events.map((e) => e.type).join());
  assert.ok(!r.rewritten.includes(2) && !Object.values(r.offloaded).flat().includes(input[2]), "the reload's result is no original of an offload");
  assert.ok(r.kept.includes(2) || r.dropped.includes(2));
});

test("keepToolResults: a whole number ≥ 0, named when it is wrong or misspelt", () => {
  const input = readingSession(3);
  for (const [value, says] of [[-1, "≥ 0"], [1.5, "whole number"], ["3", "a number"]]) {
    assert.throws(() => reduceSync(input, { strategy: "progressive", maxTokens: 100, keepToolResults: value }),
      (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === "keepToolResults" && e.message.includes(says), String(value));
  }
  assert.throws(() => reduceSync(input, { strategy: "progressive", maxTokens: 100, keepToolResult: 2 }),
    (e) => e.code === "INVALID_CONFIG" && /did you mean keepToolResults\?/.test(e.message));
});

test("progressive never edits reasoning: items and parts keep their text", () => {
  const big = "data ".repeat(3000);
  const vercel = [
    { role: "user", content: "hi" },
    { role: "assistant", content: [{ type: "reasoning", text: "thinking ".repeat(500) }, { type: "text", text: big }] },
    { role: "user", content: "next" },
    { role: "assistant", content: "ok" },
  ];
  const r = reduceSync(vercel, { strategy: "progressive", maxTokens: 3000 });
  assert.deepEqual(r.rewritten, [1]);
  assert.equal(r.messages[1].content[0], vercel[1].content[0], "the reasoning part is the original object");
  assert.ok(r.messages[1].content[1].text.length < 500);
  const responses = [
    { type: "message", role: "user", content: [{ type: "input_text", text: "go" }] },
    { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "plan " }], encrypted_content: "e".repeat(20000) },
    { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
    { type: "function_call_output", call_id: "c1", output: big },
    { type: "message", role: "user", content: [{ type: "input_text", text: "again" }] },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "done" }] },
  ];
  const o = reduceSync(responses, { strategy: "progressive", maxTokens: 9000 });
  assert.ok(!o.rewritten.includes(1), "the reasoning item is not rewritten");
  assert.ok(o.kept.includes(1) || o.dropped.includes(1));
  if (o.kept.includes(1)) assert.equal(o.messages[o.kept.indexOf(1)], responses[1]);
});

test("progressive: a summary over its limit is a failed one (SUMMARY_TOO_LARGE, or skipped and reported), and a compression never grows the history", async () => {
  // It used to take whatever the summarizer answered: a 2,213-token round summary with
  // summaryMaxTokens 100, a tool-run digest that grew a reduction from 1,000 tokens to
  // 4,386 (audit).
  const huge = "lorem ipsum dolor sit amet ".repeat(400);
  const input = chat(40);
  const frozen = JSON.stringify(input);
  const config = { strategy: "progressive", maxTokens: 600, summaryMaxTokens: 100, summarizer: async () => huge };
  await assert.rejects(reduce(input, { ...config, onSummarizerError: "throw" }), (e) => e instanceof ReduceError && e.code === "SUMMARY_TOO_LARGE" && /summaryMaxTokens/.test(e.message));
  assert.equal(JSON.stringify(input), frozen, "the input is untouched");
  const seen = [];
  const r = await reduce(input, { ...config, onEvent: (e) => seen.push(e) });
  assert.equal(r.summary, undefined);
  const failed = r.events.find((e) => e.type === "summarizeFailed");
  assert.deepEqual([failed.kind, failed.reason, failed.fallback], ["round", "tooLarge", "none"]);
  assert.ok(seen.some((e) => e.type === "summarizeFailed" && e.reason === "tooLarge"));
  assert.ok(r.tokensAfter <= 480 && !r.overBudget, `${r.tokensAfter}`);

  // Tool runs, and rewrites of the current round: a summary longer than what it replaces
  // is not used either.
  const W = (n) => "alpha beta gamma delta ".repeat(n);
  const call = (id) => ({ id, type: "function", function: { name: "read", arguments: "{}" } });
  const agent = [{ role: "system", content: "sys" }, { role: "user", content: "q1" }];
  for (let i = 0; i < 4; i++) agent.push({ role: "assistant", content: null, tool_calls: [call("a" + i)] }, { role: "tool", tool_call_id: "a" + i, content: W(20) });
  agent.push({ role: "assistant", content: "done 1" }, { role: "user", content: "q2" });
  for (let i = 0; i < 2; i++) agent.push({ role: "assistant", content: null, tool_calls: [call("b" + i)] }, { role: "tool", tool_call_id: "b" + i, content: W(60) });
  const before = estimateTokens(agent);
  const agentConfig = { strategy: "progressive", maxTokens: Math.floor(before * 0.9), largeMessageTokens: 1250, minToolRun: 6, summaryMaxTokens: 100, summarizer: async () => "verbose ".repeat(3000) };
  await assert.rejects(reduce(agent, { ...agentConfig, onSummarizerError: "throw" }), (e) => e.code === "SUMMARY_TOO_LARGE");
  const a = await reduce(agent, agentConfig);
  assert.ok(a.tokensAfter <= before, `${a.tokensAfter} ≤ ${before}`);
  const kinds = a.events.filter((e) => e.type === "summarizeFailed" && e.reason === "tooLarge").map((e) => e.kind);
  assert.deepEqual([...new Set(kinds)].sort(), ["currentRound", "round", "toolRun"]);
  assert.ok(!a.messages.some((m) => typeof m.content === "string" && m.content.includes("verbose")));
});

test("progressive: a round summary of the tokens the summarizer was asked for is taken; summaryMaxTokens bounds its text", async () => {
  const asked = [];
  const r = await reduce(chat(40), {
    strategy: "progressive", maxTokens: 600, summaryMaxTokens: 40, onSummarizerError: "throw",
    summarizer: async (req) => {
      asked.push(req.targetTokens);
      return "word ".repeat(Math.floor(req.targetTokens * 0.75)).trim();
    },
  });
  assert.equal(asked.length, 1);
  assert.ok(asked[0] <= 40, `asked for ${asked[0]}`);
  const tag = { ...r.summary, content: r.summary.content.replace(/>[^]*</, "><") };
  assert.ok(estimateTokens(r.summary) - estimateTokens(tag) <= 40, `${estimateTokens(r.summary)} - ${estimateTokens(tag)} ≤ 40`);
});

test("progressive: in single mode a new round summary replaces the earlier ones, which go as previousSummary", async () => {
  // Each round summary used to be added beside the earlier ones: in 150 turns 98 piled up,
  // and the summarizer ran every turn (audit).
  const run = async (summaryMode) => {
    const requests = [];
    const h = new ChatHistory({
      strategy: "progressive", maxTokens: 1200, summaryMode,
      summarizer: async (req) => {
        requests.push(req);
        return `summary ${requests.length}: ` + "gist ".repeat(Math.floor(req.targetTokens * 0.5));
      },
    }, [{ role: "system", content: "You help with gardening." }]);
    for (let t = 0; t < 120; t++) {
      h.push({ role: "user", content: `Turn ${t}: ` + "how should I water and prune this plant ".repeat(3) });
      await h.prepare();
      h.push({ role: "assistant", content: `Answer ${t}: ` + "water weekly, prune in spring, feed monthly ".repeat(3) });
    }
    const summaries = h.messages.filter((m) => m.content.startsWith("<conversation-summary>"));
    return { requests, summaries, h };
  };
  const single = await run(undefined);
  assert.equal(single.summaries.length, 1);
  assert.ok(single.requests.length > 2 && single.requests.length < 20, `${single.requests.length} summarizer calls`);
  const [first, ...later] = single.requests;
  assert.equal(first.previousSummary, undefined);
  later.forEach((req, k) => {
    assert.ok(req.previousSummary.startsWith(`summary ${k + 1}: `), req.previousSummary.slice(0, 20));
    assert.ok(!req.messages.some((m) => m.content.startsWith("<conversation-summary>")), "the earlier summary is not among the messages");
  });
  assert.ok(single.summaries[0].content.includes(`summary ${single.requests.length}: `));
  assert.equal(single.h.messages[1], single.summaries[0], "where the earlier one stood: after the system prompt");
  const layered = await run("layered");
  assert.ok(layered.summaries.length > 1);
  assert.ok(layered.requests.every((req) => req.previousSummary === undefined));
});

test("progressive stage 4 summarizes the oldest rounds the targets need; the rounds after them stay verbatim (SPEC §5: it stops as soon as the targets are met)", async () => {
  // A chat with no tools and nothing large: only stage 4 helps. It used to summarize every
  // previous round even when two would do ("make your last answer shorter" then found that
  // answer summarized).
  const input = chat(30);
  const total = estimateTokens(input);
  const asked = [];
  const config = {
    strategy: "progressive", maxTokens: total - 1, targetTokens: total - 60, summaryMaxTokens: 30,
    summarizer: async (req) => {
      asked.push(req);
      await sleep(5);
      return "Earlier: plants and their watering.";
    },
  };
  const r = await reduce(input, config);
  assert.equal(asked.length, 1);
  assert.equal(asked[0].kind, "round");
  const n = asked[0].messages.length;
  assert.ok(n >= 2 && n % 2 === 0 && n < 20, `${n} messages summarized: whole rounds, the oldest, a few`);
  assert.deepEqual(asked[0].messages, input.slice(1, 1 + n), "the oldest rounds, as the input objects");
  assert.deepEqual(r.summarized, Array.from({ length: n }, (_, i) => i + 1));
  assert.equal(r.messages[0], input[0]);
  assert.equal(r.messages[1], r.summary);
  assert.deepEqual(r.messages.slice(2), input.slice(1 + n), "every later message verbatim, the same objects");
  assert.ok(r.tokensAfter <= config.targetTokens, `${r.tokensAfter} ≤ ${config.targetTokens}`);
  assert.ok(!r.overBudget);
  // One round fewer would not have met the target, with the summary at summaryMaxTokens
  // (its text; and its tag).
  const tag = estimateTokens({ role: "user", content: "<conversation-summary></conversation-summary>" });
  const fewer = estimateTokens([input[0], ...input.slice(n - 1)]) + 30 + tag;
  assert.ok(fewer > config.targetTokens, `${fewer} > ${config.targetTokens}`);
  // A target only all previous rounds meet: every one of them (the current round stays).
  asked.length = 0;
  const all = await reduce(input, { ...config, targetTokens: 90 });
  assert.deepEqual(asked[0].messages, input.slice(1, 59));
  assert.deepEqual(all.messages.slice(2), input.slice(59));
});

test("progressive stage 4 never cuts inside a group that spans two rounds (an Anthropic tool_result in the user's next input)", async () => {
  // The user turn that carries the tool_result and new text is a real user input (a round
  // starts) and the end of the call's group. Cut at the round, the summary held the call
  // without its result, and the next round was dropped unsummarized (review).
  const text = (s) => [{ type: "text", text: s }];
  const m = [
    { role: "user", content: text("Question 0 about plants. ".repeat(4)) },
    { role: "assistant", content: text("Answer 0 about plants. ".repeat(4)) },
    { role: "user", content: text("Question 1: weather in Paris? ".repeat(4)) },
    { role: "assistant", content: [...text("Checking. "), { type: "tool_use", id: "t1", name: "weather", input: { city: "Paris" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "sunny 20C" }, ...text("Question 2: and tomorrow? ".repeat(4))] },
    { role: "assistant", content: text("Answer 2. ".repeat(4)) },
  ];
  for (let r = 3; r < 10; r++) m.push({ role: "user", content: text(`Question ${r} about trees. `.repeat(4)) }, { role: "assistant", content: text(`Answer ${r} about trees. `.repeat(4)) });
  const total = estimateTokens(m, { format: "anthropic" });
  const twoRounds = estimateTokens(m.slice(0, 4), { format: "anthropic" });
  let asked;
  const config = { strategy: "progressive", maxTokens: total - 1, targetTokens: total - twoRounds + 30, summaryMaxTokens: 30,
    summarizer: async (req) => { asked = req.messages; return "short summary"; } };
  const r = await reduce(m, config);
  assert.deepEqual(asked, m.slice(0, 6), "the call's whole group: its result and the round it opens");
  assert.deepEqual(r.dropped, []);
  assert.deepEqual(r.messages.slice(1), m.slice(6));
  assert.ok(r.tokensAfter <= config.targetTokens);
});

test("progressive does not ask the summarizer to rewrite a message no rewrite can shorten: a history left over budget is reduced again with no summarizer call (SPEC §9.9)", async () => {
  // Short tool results of the current round: the note a rewrite carries has as many tokens
  // as they do. They were sent to the summarizer, failed as too large, and were sent again
  // by every later reduction of the result (review: 1–2 new calls on each).
  const input = [...chat(6)];
  input.push({ role: "user", content: "Check the three sensors." });
  input.push({ role: "assistant", content: null, tool_calls: ["a", "b", "c"].map((id) => ({ id, type: "function", function: { name: "sensor", arguments: `{"id":"${id}"}` } })) });
  for (const id of ["a", "b", "c"]) input.push({ role: "tool", tool_call_id: id, content: `sensor ${id}: ok` });
  input.push({ role: "assistant", content: "All three sensors are fine." });
  const kinds = [];
  const config = {
    strategy: "progressive", targetMessages: 2, thresholdMessages: 0, keepLast: 3,
    summarizer: async (req) => { kinds.push(req.kind); return `S(${req.kind})`; },
  };
  const r = await reduce(input, config);
  assert.ok(r.overBudget, "two messages cannot hold the current round");
  assert.ok(!kinds.includes("currentRound"), `asked: ${kinds}`);
  for (const id of ["a", "b", "c"]) assert.ok(r.messages.includes(input.find((m) => m.tool_call_id === id)), `the result ${id} as it was`);
  const asked = kinds.length;
  const again = await reduce(r.messages, config);
  assert.equal(kinds.length, asked, `asked again: ${kinds.slice(asked)}`);
  assert.equal(again.messages.length, r.messages.length);
  again.messages.forEach((m, i) => assert.equal(m, r.messages[i]));
});

test("progressive: a round summary longer than the rounds it replaces is too large (it would grow the history)", async () => {
  // With only a message target there is no summaryMaxTokens: a summary of any length was
  // taken (audit: 1171 → 1173 tokens).
  const input = chat(10);
  const config = {
    strategy: "progressive", targetMessages: 6, thresholdMessages: 0,
    summarizer: async () => "a very long summary ".repeat(300),
  };
  const r = await reduce(input, config);
  assert.equal(r.summary, undefined);
  const failed = r.events.find((e) => e.type === "summarizeFailed");
  assert.equal(failed?.kind, "round");
  assert.equal(failed?.reason, "tooLarge");
  assert.ok(r.tokensAfter < r.tokensBefore, `${r.tokensAfter} < ${r.tokensBefore}`);
  // A short one is taken.
  const ok = await reduce(input, { ...config, summarizer: async () => "Plants and their watering." });
  assert.ok(ok.summary !== undefined && ok.tokensAfter < ok.tokensBefore);
});

test("progressive: a round summary with no room beside its tag is too large without asking, and onSummarizerError decides, as in summarize", async () => {
  // It was skipped silently, and "throw" was not honoured (review).
  const input = chat(20);
  let calls = 0;
  const config = { strategy: "progressive", maxTokens: 200, summaryMaxTokens: 0.5, summarizer: async () => { calls++; return "s"; } };
  const r = await reduce(input, config);
  assert.equal(calls, 0);
  assert.ok(r.events.some((e) => e.type === "summarizeFailed" && e.kind === "round" && e.reason === "tooLarge"));
  await assert.rejects(reduce(input, { ...config, onSummarizerError: "throw" }), (e) => e.code === "SUMMARY_TOO_LARGE");
  assert.equal(calls, 0);
});

test("progressive: result.events lists a failed summary where it failed, after the stages that ran before it", async () => {
  const history = [{ role: "system", content: "s" }];
  for (let i = 0; i < 12; i++) {
    history.push({ role: "user", content: `question ${i} ${"lorem ipsum ".repeat(20)}` });
    history.push({ role: "assistant", content: null, tool_calls: [{ id: `c${i}`, type: "function", function: { name: "f", arguments: "{}" } }] });
    history.push({ role: "tool", tool_call_id: `c${i}`, content: "result ".repeat(i % 3 === 0 ? 2000 : 50) });
    history.push({ role: "assistant", content: `answer ${i}` });
  }
  const r = await reduce(history, {
    strategy: "progressive", maxTokens: 1500, largeMessageTokens: 1250, minToolRun: 6,
    summarizer: async (req) => { if (req.kind === "round") throw new Error("no rounds today"); return "short summary"; },
  });
  const names = r.events.map((e) => (e.type === "summarizeFailed" ? `failed:${e.kind}` : e.type));
  // (Old results that stage 2 left whole are cleared once the round summary failed.)
  assert.deepEqual(names, ["offloadOld", "failed:round", "clearToolResults", "compressCurrentRound", "indexToolCalls", "truncate"]);
});

test("progressive: a summarizer that timed out is asked nothing more in that reduction (timeoutMs bounds the wait once, not once a summary)", async () => {
  const history = [{ role: "system", content: "You are an agent." }];
  for (let r = 0; r < 20; r++) {
    history.push({ role: "user", content: `task ${r}: ${"details ".repeat(30)}` });
    history.push({ role: "assistant", content: null, tool_calls: [{ id: `c${r}`, type: "function", function: { name: "search", arguments: `{"q":${r}}` } }] });
    history.push({ role: "tool", tool_call_id: `c${r}`, content: `result ${r} ${"data ".repeat(60)}` });
    history.push({ role: "assistant", content: `done with task ${r}` });
  }
  let calls = 0;
  const started = Date.now();
  const r = await reduce(history, {
    strategy: "progressive", maxTokens: 2000, timeoutMs: 100,
    summarizer: () => { calls++; return new Promise(() => {}); },
  });
  assert.equal(calls, 1);
  assert.ok(Date.now() - started < 1000, `${Date.now() - started} ms`);
  assert.deepEqual(r.events.filter((e) => e.type === "summarizeFailed").map((e) => e.reason), ["timeout"]);
  assert.ok(r.tokensAfter <= 1600 || r.overBudget);
});

test("progressive: kept, dropped, summarized and the originals in offloaded count each input index once (SPEC §8)", async () => {
  // A compressed tool run is a rewritten message whose originals are offloaded: not summarized.
  let id = 0;
  const run = () => {
    const c = `call_${++id}`;
    return [
      { role: "assistant", content: null, tool_calls: [{ id: c, type: "function", function: { name: "search", arguments: `{"q":"t${id}"}` } }] },
      { role: "tool", tool_call_id: c, content: `result ${"r".repeat(400)}` },
    ];
  };
  const tools = [{ role: "system", content: "sys" }, { role: "user", content: "research X" }, ...run(), ...run(), ...run(),
    { role: "assistant", content: "done" }, { role: "user", content: "now Y" }, { role: "assistant", content: "Y is fine" }];
  const total = estimateTokens(tools, { estimator: "length" });
  const digest = reduceSync(tools, { estimator: "length", strategy: "progressive", maxTokens: total - 1, targetTokens: total - 50, minToolRun: 6 });
  assert.ok(digest.events.some((e) => e.type === "toolRuns"), JSON.stringify(digest.events));
  // A round summary covers what it summarizes, which is not offloaded (the input holds it).
  const talk = chat(12);
  const rounds = await reduce(talk, { strategy: "progressive", maxTokens: 300, summarizer: async () => "They discussed plants." });
  assert.ok(rounds.summary !== undefined && rounds.summarized.length > 0, JSON.stringify(rounds.events));
  for (const [r, input] of [[digest, tools], [rounds, talk]]) {
    const behind = Object.values(r.offloaded).flat().map((m) => input.indexOf(m));
    const all = [...r.kept, ...r.dropped, ...r.summarized, ...behind].sort((a, b) => a - b);
    assert.deepEqual(all, input.map((_, i) => i), JSON.stringify(r.events));
    assert.deepEqual(behind.sort((a, b) => a - b), r.rewritten, "the originals offloaded are those rewritten");
  }
  assert.deepEqual([digest.summarized, digest.rewritten], [[], [2, 3, 4, 5, 6, 7]]);
});

test("progressive: a rewritten message is at most summaryMaxTokens and the summarizer is asked for no more; the target is met", async () => {
  const essay = [{ role: "system", content: "sys" }];
  for (let i = 0; i < 3; i++) essay.push({ role: "user", content: `q${i} ${"lorem ipsum ".repeat(20)}` }, { role: "assistant", content: `a${i} ${"dolor sit ".repeat(20)}` });
  essay.push({ role: "user", content: "write me an essay" }, { role: "assistant", content: `ESSAY ${"This is a long essay sentence. ".repeat(400)}` });
  const words = (n) => Array.from({ length: Math.max(1, Math.floor(n * 0.9)) }, () => "word").join(" ");
  const asked = [];
  // A summarizer that writes as many tokens as it is asked for (about: a word is ~1 token).
  const summarizer = async (req) => { asked.push(req); return words(req.targetTokens); };
  const config = { strategy: "progressive", maxTokens: 600, onSummarizerError: "throw", summarizer }; // summaryMaxTokens 120
  const r = await reduce(essay, config);
  assert.ok(asked.some((q) => q.kind === "largeMessage"), asked.map((q) => q.kind).join());
  for (const q of asked) assert.ok(q.targetTokens <= 120, `${q.kind} asked for ${q.targetTokens} tokens`);
  assert.ok(r.tokensAfter <= 480 && !r.overBudget, `${r.tokensAfter} tokens, overBudget ${r.overBudget}`);
  // A summarizer that ignores it: too large (thrown here), not a history over budget.
  const long = { ...config, summarizer: async () => "This is a long essay sentence. ".repeat(100) };
  await assert.rejects(reduce(essay, long), (e) => e instanceof ReduceError && e.code === "SUMMARY_TOO_LARGE");
});
