// SPEC §6, `summarizerInputTokens`: what one summarizer call is handed stays under it. A
// larger input is summarized in chunks, oldest first, each call getting the summary so far
// as `previousSummary`; a message too large for a call is handed as a head-and-tail excerpt
// (its original stays in the input or `offloaded`); a failed chunk fails the summary.
// Through the packed package, with real async summarizers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChatHistory, ReduceError, estimateTokens, reduce } from "chat-history-reducer";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A count a test can follow: a token per 4 characters of the content, 3 per message. */
const textOf = (m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? ""));
const countTokens = (m) => Math.ceil(textOf(m).length / 4) + 3;
const handed = (req) => req.messages.reduce((n, m) => n + countTokens(m), 0) + (req.previousSummary === undefined ? 0 : Math.ceil(req.previousSummary.length / 4) + 3);

/** Turns of a user question, a tool call and its result, and an answer: ~120 tokens each
 * message by `countTokens`. */
function agent(turns) {
  const m = [{ role: "system", content: "You run errands." }];
  for (let t = 0; t < turns; t++) {
    m.push({ role: "user", content: `Turn ${t}: ` + "please look this up ".repeat(24) });
    m.push({ role: "assistant", content: null, tool_calls: [{ id: `c${t}`, type: "function", function: { name: "search", arguments: `{"q":"${t}"}` } }] });
    m.push({ role: "tool", tool_call_id: `c${t}`, content: `result ${t}: ` + "found it ".repeat(50) });
    m.push({ role: "assistant", content: `Answer ${t}: ` + "here it is ".repeat(40) });
  }
  return m;
}

/** An async summarizer that records its requests and answers `S<k>` after a while. */
function recorder({ fail, late } = {}) {
  const requests = [];
  const summarizer = async (req) => {
    const k = requests.push(req);
    await sleep(late === k ? 300 : 5);
    if (fail === k) throw new Error(`chunk ${k} failed`);
    return { text: `S${k}: summary of ${req.messages.length} messages`, usage: { inputTokens: 100, outputTokens: 10, details: { cached: 1 } } };
  };
  return { requests, summarizer };
}

/** Each tool result a request hands has its call in that same request, and the other way round. */
function whole(req) {
  const calls = new Set(req.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
  const results = new Set(req.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id));
  return [...calls].every((id) => results.has(id)) && [...results].every((id) => calls.has(id));
}

const LIMIT = 1000;
const base = { strategy: "summarize", targetMessages: 4, thresholdMessages: 0, summaryMaxTokens: 100, countTokens, summarizerInputTokens: LIMIT };

test("summarize: an input over summarizerInputTokens is summarized in chunks, oldest first, each call given the summary so far", async () => {
  const input = agent(12);
  const { requests, summarizer } = recorder();
  const starts = [];
  const r = await reduce(input, { ...base, summarizer, onEvent: (e) => e.type === "summarizeStart" && starts.push(e) });
  assert.ok(requests.length >= 4, `${requests.length} calls`);
  // What each call was handed stays under the limit, and no call splits a tool call from its result.
  for (const req of requests) {
    assert.ok(handed(req) <= LIMIT, `${handed(req)} tokens handed`);
    assert.ok(whole(req), "a call and its result together");
    assert.equal(req.kind, "history");
  }
  // Together, the originals in order, as the input's objects.
  assert.deepEqual(requests.flatMap((q) => q.messages), r.summarized.map((i) => input[i]));
  requests.flatMap((q) => q.messages).forEach((m, k) => assert.equal(m, input[r.summarized[k]]));
  assert.equal(requests[0].previousSummary, undefined);
  requests.slice(1).forEach((req, k) => assert.equal(req.previousSummary, `S${k + 1}: summary of ${requests[k].messages.length} messages`));
  // The summary is the last call's; the events count the calls, usage added up.
  const n = requests.length;
  assert.match(r.summary.content, new RegExp(`^<conversation-summary>S${n}: `));
  const e = r.events[0];
  assert.equal(e.type, "summarize");
  assert.equal(e.summarizerCalls, n);
  assert.deepEqual(e.usage, { inputTokens: 100 * n, outputTokens: 10 * n, details: { cached: n } });
  assert.deepEqual(starts.map((s) => [s.chunk, s.chunks]), requests.map((_, k) => [k + 1, n]));
  assert.deepEqual(starts.map((s) => s.messages), requests.map((q) => q.messages.length));

  // Single mode: the first call of the next summary gets the earlier summary.
  const next = recorder();
  const grown = [...r.messages, ...agent(8).slice(1)];
  const r2 = await reduce(grown, { ...base, summarizer: next.summarizer });
  assert.ok(next.requests.length > 1);
  assert.equal(next.requests[0].previousSummary, `S${n}: summary of ${requests[n - 1].messages.length} messages`);
  assert.ok(r2.summarized.includes(1), "the earlier summary is replaced");
  for (const req of next.requests) assert.ok(handed(req) <= LIMIT, `${handed(req)} tokens handed`);
});

test("a message too large for one call is handed as a head-and-tail excerpt in its own format; by default above 32,000 tokens", async () => {
  // A 260,000-character tool output went to the summarizer whole.
  const output = "2026-11-28 build step ok: " + "compiled module and linked it; ".repeat(8400) + "BUILD FINISHED";
  assert.ok(output.length > 260_000);
  const input = [
    { role: "system", content: "You run builds." },
    { role: "user", content: "Run the build." },
    { role: "assistant", content: null, tool_calls: [{ id: "b1", type: "function", function: { name: "build", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "b1", content: output, name: "build" },
    { role: "assistant", content: "The build passed." },
    { role: "user", content: "Thanks. What next?" },
  ];
  assert.ok(estimateTokens(input[3]) > 32_000, `${estimateTokens(input[3])} tokens`);
  const { requests, summarizer } = recorder();
  const r = await reduce(input, { strategy: "summarize", maxTokens: 20_000, summarizer });
  assert.equal(requests.length, 1);
  const [req] = requests;
  assert.equal(req.messages[1], input[2], "the call as it is");
  const excerpt = req.messages[2];
  assert.ok(excerpt !== input[3], "handed as an excerpt, not whole");
  assert.deepEqual({ ...excerpt, content: "" }, { ...input[3], content: "" }, "its other fields kept");
  const m = /^(2026-11-28 build step ok: [^\n]+)\n\[… (\d+) characters omitted …\]\n([^\n]+BUILD FINISHED)$/.exec(excerpt.content);
  assert.ok(m, excerpt.content.slice(0, 200));
  assert.equal(m[1].length + Number(m[2]) + m[3].length, output.length);
  assert.ok(estimateTokens(req.messages) <= 32_000, `${estimateTokens(req.messages)} tokens handed`);
  assert.equal(input[3].content, output, "the original untouched");
  assert.ok(r.summarized.includes(3), "the original is covered by the summary (the caller holds it)");

  // With a smaller limit: the call, its result and what the limit leaves, in one call still.
  const small = recorder();
  await reduce(input, { strategy: "summarize", maxTokens: 20_000, summarizer: small.summarizer, summarizerInputTokens: 2000, countTokens });
  for (const req of small.requests) {
    assert.ok(handed(req) <= 2000, `${handed(req)} tokens handed`);
    assert.ok(whole(req));
  }
});

test("a failed chunk fails the summary: fallback or throw, the input untouched; a timeout and an abort too", async () => {
  const input = agent(12);
  const snapshot = JSON.stringify(input);
  const rejecting = recorder({ fail: 2 });
  const r = await reduce(input, { ...base, summarizer: rejecting.summarizer });
  assert.equal(rejecting.requests.length, 2, "no call after the failed one");
  assert.equal(r.summary, undefined);
  assert.deepEqual([r.events[0].type, r.events[0].reason, r.events[0].summarizerCalls, r.events[0].fallback], ["summarizeFailed", "rejected", 2, "truncate"]);
  assert.equal(r.events[1].type, "truncate");
  await assert.rejects(reduce(input, { ...base, summarizer: recorder({ fail: 3 }).summarizer, onSummarizerError: "throw" }),
    (e) => e instanceof ReduceError && e.code === "SUMMARIZER_FAILED" && e.cause.message === "chunk 3 failed");

  const late = recorder({ late: 2 });
  const timedOut = await reduce(input, { ...base, summarizer: late.summarizer, timeoutMs: 100 });
  assert.deepEqual([timedOut.events[0].reason, timedOut.events[0].summarizerCalls], ["timeout", 2]);
  assert.equal(late.requests[1].signal.aborted, true, "the late call's signal is aborted");

  const controller = new AbortController();
  const waiting = recorder({ late: 2 });
  const pending = reduce(input, { ...base, summarizer: waiting.summarizer, signal: controller.signal });
  while (waiting.requests.length < 2) await sleep(2);
  controller.abort(new Error("user left"));
  await assert.rejects(pending, (e) => e instanceof ReduceError && e.code === "ABORTED");
  assert.equal(waiting.requests[1].signal.aborted, true);
  assert.equal(JSON.stringify(input), snapshot, "the input is untouched");
});

test("progressive: tool runs, round summaries and large messages stay under summarizerInputTokens; the events count the calls", async () => {
  // Old tool runs (stage 1), previous rounds (stage 4), and a long answer in the current
  // round (stage 5), each over the limit.
  const m = [{ role: "system", content: "You research." }];
  for (let t = 0; t < 6; t++) {
    m.push({ role: "user", content: `Question ${t}: ` + "tell me more ".repeat(30) });
    for (let k = 0; k < 3; k++) {
      m.push({ role: "assistant", content: null, tool_calls: [{ id: `c${t}_${k}`, type: "function", function: { name: "read", arguments: `{"page":${k}}` } }] });
      m.push({ role: "tool", tool_call_id: `c${t}_${k}`, content: `page ${t}.${k}: ` + "lorem ipsum ".repeat(50) });
    }
    m.push({ role: "assistant", content: `Answer ${t}: ` + "so it goes ".repeat(t === 5 ? 1100 : 35) });
  }
  const limit = 400;
  const { requests, summarizer } = recorder();
  const config = { strategy: "progressive", maxTokens: 2000, minToolRun: 4, summaryMaxTokens: 100, countTokens, summarizerInputTokens: limit, summarizer };
  const r = await reduce(m, config);
  const kinds = requests.map((q) => q.kind);
  for (const kind of ["toolRun", "round", "largeMessage"]) assert.ok(kinds.includes(kind), kinds.join());
  for (const req of requests) {
    assert.ok(handed(req) <= limit, `${req.kind}: ${handed(req)} tokens handed`);
    assert.ok(whole(req), req.kind);
  }
  // A summary of several calls: the next call of the same summary gets the one before.
  assert.equal(requests[1].kind, "toolRun");
  assert.match(requests[1].previousSummary, /^S1: /);
  // The events count the calls each step took.
  assert.equal(r.events.reduce((n, e) => n + (e.summarizerCalls ?? 0), 0), requests.length);
  assert.ok(r.events.find((e) => e.type === "toolRuns").summarizerCalls > 1);
  // The long answer was handed as an excerpt; its original is offloaded, whole.
  const [large] = requests.filter((q) => q.kind === "largeMessage");
  assert.match(large.messages[0].content, /^Answer 5: so it goes [^\n]*\n\[… \d+ characters omitted …\]\n[^\n]*so it goes $/);
  assert.ok(Object.values(r.offloaded).some((o) => o[0] === m[m.length - 1]), "the original offloaded");

  // A tool run whose second call rejects gets its digest, as a failed summary does.
  const failing = recorder({ fail: 2 });
  const f = await reduce(m, { ...config, summarizer: failing.summarizer });
  const failed = f.events.find((e) => e.type === "summarizeFailed");
  assert.deepEqual([failed.kind, failed.reason, failed.fallback, failed.summarizerCalls], ["toolRun", "rejected", "digest", 2]);
  await assert.rejects(reduce(m, { ...config, summarizer: recorder({ fail: 2 }).summarizer, onSummarizerError: "throw" }),
    (e) => e.code === "SUMMARIZER_FAILED");
});

test("ChatHistory: stats().summarizerCalls counts every call of a chunked summary", async () => {
  const { requests, summarizer } = recorder();
  const h = new ChatHistory({ ...base, summarizer }, agent(12));
  await h.prepare();
  assert.ok(requests.length > 1, `${requests.length} calls`);
  assert.equal(h.stats().summarizerCalls, requests.length);
  assert.equal(h.events[0].summarizerCalls, requests.length);
  // A failed chunk's calls count too.
  const failing = recorder({ fail: 2 });
  const f = new ChatHistory({ ...base, summarizer: failing.summarizer }, agent(12));
  await f.prepare();
  assert.equal(f.stats().summarizerCalls, 2);
});

test("summarizerInputTokens is a number > 0", async () => {
  for (const bad of [0, -5, "8k", Infinity]) {
    await assert.rejects(reduce(agent(2), { ...base, summarizer: async () => "s", summarizerInputTokens: bad }),
      (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === "summarizerInputTokens", String(bad));
  }
});
