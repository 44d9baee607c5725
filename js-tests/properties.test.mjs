// SPEC §9 through the package: random valid conversations in six formats (parallel tool
// calls, texts of random lengths, images), random budgets and strategies. Every output must
// be accepted by its provider, account for every input once, return the input objects, keep
// system messages and the latest user input, and meet the budget or say it could not.
import { test } from "node:test";
import assert from "node:assert/strict";
import { analyze, reduce, reduceSync, estimateTokens, shouldReduce } from "chat-history-reducer";
import { accepts, hasCacheMark, isRealUser, lcType } from "./providers.mjs";
import { rng } from "./random.mjs";

const CASES = Number(process.env.PROPERTY_CASES ?? 400);

/** One conversation as steps; each format writes them its own way. */
function steps(rand, longRuns = false) {
  const int = (n) => Math.floor(rand() * n);
  const text = (max) => "lorem ipsum dolor sit amet 42, ".repeat(1 + int(max));
  const out = [{ kind: "user", text: text(5), image: rand() < 0.15 }];
  let id = 0;
  const n = 2 + int(14);
  for (let k = 0; k < n; k++) {
    const r = rand();
    if (r < 0.35) {
      // With `longRuns`, now and then a long run of parallel calls: their results lie far
      // from their calls.
      const calls = longRuns && r < 0.03 ? 34 : 1 + int(3);
      out.push({ kind: "tools", calls: Array.from({ length: calls }, () => ({ id: `c${id++}`, result: text(r < 0.1 ? 300 : 20) })) });
    } else if (r < 0.7) {
      out.push({ kind: "answer", text: text(30) });
    } else {
      if (out.at(-1).kind === "tools") out.push({ kind: "answer", text: text(4) });
      out.push({ kind: "user", text: text(8), image: rand() < 0.1 });
    }
  }
  if (out.at(-1).kind === "tools") out.push({ kind: "answer", text: "done" });
  return out;
}

const write = {
  openai(st, system) {
    const m = system ? [{ role: "system", content: "rules" }] : [];
    for (const s of st) {
      if (s.kind === "user") m.push({ role: "user", content: s.image ? [{ type: "text", text: s.text }, { type: "image_url", image_url: { url: "data:," } }] : s.text });
      else if (s.kind === "answer") m.push({ role: "assistant", content: s.text });
      else {
        m.push({ role: "assistant", content: null, tool_calls: s.calls.map((c) => ({ id: c.id, type: "function", function: { name: "f", arguments: "{}" } })) });
        for (const c of s.calls) m.push({ role: "tool", tool_call_id: c.id, content: c.result });
      }
    }
    return m;
  },
  "openai-responses"(st, system) {
    const m = system ? [{ type: "message", role: "developer", content: [{ type: "input_text", text: "rules" }] }] : [];
    for (const s of st) {
      if (s.kind === "user") m.push({ type: "message", role: "user", content: [{ type: "input_text", text: s.text }] });
      else if (s.kind === "answer") m.push({ type: "message", role: "assistant", content: [{ type: "output_text", text: s.text }] });
      else {
        m.push({ type: "reasoning", id: `rs_${s.calls[0].id}`, summary: [] });
        for (const c of s.calls) m.push({ type: "function_call", call_id: c.id, name: "f", arguments: "{}" });
        for (const c of s.calls) m.push({ type: "function_call_output", call_id: c.id, output: c.result });
      }
    }
    return m;
  },
  anthropic(st) {
    const m = [];
    for (const s of st) {
      if (s.kind === "user") m.push({ role: "user", content: s.image ? [{ type: "text", text: s.text }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } }] : s.text });
      else if (s.kind === "answer") m.push({ role: "assistant", content: s.text });
      else {
        m.push({ role: "assistant", content: s.calls.map((c) => ({ type: "tool_use", id: c.id, name: "f", input: {} })) });
        m.push({ role: "user", content: s.calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: c.result })) });
      }
    }
    return m;
  },
  vercel(st, system) {
    const m = system ? [{ role: "system", content: "rules" }] : [];
    for (const s of st) {
      if (s.kind === "user") m.push({ role: "user", content: s.text });
      else if (s.kind === "answer") m.push({ role: "assistant", content: [{ type: "text", text: s.text }] });
      else {
        m.push({ role: "assistant", content: s.calls.map((c) => ({ type: "tool-call", toolCallId: c.id, toolName: "f", input: {} })) });
        m.push({ role: "tool", content: s.calls.map((c) => ({ type: "tool-result", toolCallId: c.id, toolName: "f", output: { type: "text", value: c.result } })) });
      }
    }
    return m;
  },
  "vercel-ui"(st, system) {
    const m = system ? [{ id: "s", role: "system", parts: [{ type: "text", text: "rules" }] }] : [];
    let n = 0;
    for (const s of st) {
      const id = `m${n++}`;
      if (s.kind === "user") m.push({ id, role: "user", parts: [{ type: "text", text: s.text }] });
      else if (s.kind === "answer") m.push({ id, role: "assistant", parts: [{ type: "text", text: s.text }] });
      else {
        // A UI message holds each call with its result.
        m.push({ id, role: "assistant", parts: s.calls.map((c) => ({ type: "tool-f", toolCallId: c.id, state: "output-available", input: {}, output: c.result })) });
      }
    }
    return m;
  },
  gemini(st) {
    const m = [];
    for (const s of st) {
      if (s.kind === "user") m.push({ role: "user", parts: [{ text: s.text }] });
      else if (s.kind === "answer") m.push({ role: "model", parts: [{ text: s.text }] });
      else {
        m.push({ role: "model", parts: s.calls.map(() => ({ functionCall: { name: "f", args: {} } })) });
        const responses = s.calls.map((c) => ({ functionResponse: { name: "f", response: { r: c.result } } }));
        // Now and then a turn for each response (parallel calls as a converter from OpenAI
        // writes them), as far as a response may follow its call turn.
        if (responses.length > 1 && responses.length < 8 && Number(s.calls[0].id.slice(1)) % 3 === 0) {
          for (const r of responses) m.push({ role: "user", parts: [r] });
        } else {
          m.push({ role: "user", parts: responses });
        }
      }
    }
    return m;
  },
  langchain(st, system) {
    const m = system ? [{ type: "system", content: "rules" }] : [];
    for (const s of st) {
      if (s.kind === "user") m.push({ type: "human", content: s.text });
      else if (s.kind === "answer") m.push({ type: "ai", content: s.text });
      else {
        m.push({ type: "ai", content: "", tool_calls: s.calls.map((c) => ({ id: c.id, name: "f", args: {} })) });
        for (const c of s.calls) m.push({ type: "tool", tool_call_id: c.id, content: c.result });
      }
    }
    return m;
  },
};

/** A random source seeded from PROPERTY_SEED (or `fallback`), and whole numbers below n. */
function seeded(fallback) {
  const rand = rng(Number(process.env.PROPERTY_SEED ?? fallback));
  return { rand, int: (n) => Math.floor(rand() * n) };
}

/** A history in `format` of at least `length` messages; it opens with a system message
 * with probability `system`. */
function randomHistory(rand, format, length, system, longRuns = false) {
  const history = [];
  while (history.length < length) {
    history.push(...write[format](steps(rand, longRuns), history.length === 0 && (system >= 1 || rand() < system)));
  }
  return history;
}

const isSystem = (m) => ["system", "developer"].includes(m.role ?? lcType(m));
const isSummary = (m) => JSON.stringify(m).includes("<conversation-summary>");

test(`${CASES} random conversations × formats × strategies keep SPEC §9`, async () => {
  const rand = rng(Number(process.env.PROPERTY_SEED ?? 7));
  const formats = Object.keys(write);
  const strategies = ["truncate", "priority", "summarize", "progressive"];
  let reduced = 0;
  let checkedByProvider = 0;
  let markedCases = 0;
  for (let k = 0; k < CASES; k++) {
    const format = formats[k % formats.length];
    const strategy = strategies[Math.floor(rand() * strategies.length)];
    const input = write[format](steps(rand, true), rand() < 0.6);
    const total = estimateTokens(input);
    const maxTokens = Math.max(20, Math.floor(total * (0.1 + rand() * 0.8)));
    const config = { strategy, maxTokens, keepLast: Math.floor(rand() * 3), format };
    if (rand() < 0.3) config.targetMessages = 2 + Math.floor(rand() * 12);
    if (rand() < 0.2) config.thresholdMessages = Math.floor(rand() * 4);
    if (rand() < 0.2) config.startOn = "any";
    if (rand() < 0.15) config.keepSystem = false;
    if (rand() < 0.3) config.summaryMode = "layered";
    if (rand() < 0.2) config.keepRecentPairs = Math.floor(rand() * 3);
    if (strategy === "summarize" || (strategy === "progressive" && rand() < 0.5)) {
      // Mostly a good summarizer; sometimes one that fails in each of the ways SPEC §6 lists.
      const behaviour = rand();
      config.timeoutMs = 50;
      config.summarizer = async (req) => {
        if (behaviour < 0.06) throw new Error("model down");
        if (behaviour < 0.09) return new Promise(() => {});
        if (behaviour < 0.12) return "";
        if (behaviour < 0.15) return "word ".repeat(5000);
        return `summary of ${req.messages.length} (${req.kind})`;
      };
      if (rand() < 0.2) config.onSummarizerError = "throw";
    }
    if (strategy === "progressive") Object.assign(config, { largeMessageTokens: 150, minToolRun: 3 });
    if (rand() < 0.25) config.cacheBreakpoints = true;
    const snapshot = JSON.stringify(input);
    let r;
    try {
      r = await reduce(input, config);
    } catch (e) {
      // Only the documented failures, and the input untouched.
      assert.ok(config.onSummarizerError === "throw" && ["SUMMARIZER_FAILED", "SUMMARY_TOO_LARGE"].includes(e.code), `case ${k}: ${e.code} ${e.message}`);
      assert.equal(JSON.stringify(input), snapshot);
      continue;
    }
    const where = `case ${k}: ${format} ${strategy} ${JSON.stringify({ ...config, summarizer: undefined })}`;
    if (r.reduced) reduced++;

    // Accounting: every input index once.
    const all = [...r.kept, ...r.dropped, ...r.summarized, ...r.rewritten].sort((a, b) => a - b);
    assert.deepEqual(all, input.map((_, i) => i), where);
    // The originals behind offload ids are input messages rewritten or summarized (not kept,
    // not dropped: a preview the final truncation removed stands for nothing).
    for (const [id, originals] of Object.entries(r.offloaded)) {
      for (const o of originals) {
        const i = input.indexOf(o);
        assert.ok(r.rewritten.includes(i) || r.summarized.includes(i), `${where}: ${id} stands for input ${i}, rewritten or summarized`);
      }
    }
    // Identity and order of what was kept.
    const kept = r.messages.filter((m) => input.includes(m));
    assert.deepEqual(kept.map((m) => input.indexOf(m)), r.kept, where);
    // System messages stay; the latest user input stays verbatim (or as a copy that only
    // adds a cache breakpoint).
    const marked = (i) => config.cacheBreakpoints && r.rewritten.includes(i) &&
      r.messages.some((m) => hasCacheMark(m) && JSON.stringify(m).length >= JSON.stringify(input[i]).length && !input.includes(m));
    if (config.keepSystem !== false) input.forEach((m, i) => { if (isSystem(m)) assert.ok(r.kept.includes(i) || marked(i), `${where}: system ${i}`); });
    const lastUser = input.findLastIndex((m) => isRealUser(format, m));
    if (lastUser >= 0) assert.ok(r.kept.includes(lastUser) || marked(lastUser), `${where}: latest user input`);
    // Cache breakpoints: at most four, only in the formats that take them (the input has none).
    const marks = r.messages.filter(hasCacheMark).length;
    assert.ok(config.cacheBreakpoints && ["anthropic", "vercel", "vercel-ui", "langchain"].includes(format) ? marks <= 4 : marks === 0, `${where}: ${marks} marks`);
    if (config.cacheBreakpoints && marks > 0) markedCases++;
    // The provider accepts the result, when it accepted the input (the generator makes some
    // Gemini histories with a call turn right after a model turn, which Gemini refuses).
    let validInput = true;
    try { accepts[format](input); } catch { validInput = false; }
    if (validInput) {
      accepts[format](r.messages);
      checkedByProvider++;
    }
    // Starts on a user input.
    const first = r.messages.find((m) => !isSystem(m) && !isSummary(m));
    if (r.reduced && first && lastUser >= 0 && (config.startOn !== "any" || format === "gemini" || format === "anthropic")) assert.ok(isRealUser(format, first), `${where}: starts on ${JSON.stringify(first).slice(0, 80)}`);
    // Budget.
    if (r.reduced && !r.overBudget) {
      assert.ok(r.tokensAfter <= Math.floor(maxTokens * 0.8), `${where}: ${r.tokensAfter} tokens`);
      if (config.targetMessages !== undefined) {
        const counted = r.messages.filter((m) => !isSystem(m) && !isSummary(m)).length;
        assert.ok(counted <= config.targetMessages, `${where}: ${counted} messages > ${config.targetMessages}`);
      }
    }
    assert.equal(r.tokensAfter, estimateTokens(r.messages, { largeMessageTokens: 150 }), `${where}: tokensAfter is the output's count`);
    // Stability: the reduced history is left as it is. Determinism: the same input gives the
    // same output.
    if (!r.overBudget) {
      const again = await reduce(r.messages, config);
      assert.equal(again.reduced, false, `${where}: reduced again`);
    }
    const twice = await reduce(input, config);
    assert.equal(JSON.stringify(twice.messages), JSON.stringify(r.messages), `${where}: not deterministic`);
  }
  assert.ok(reduced > CASES / 2, `most cases reduce (${reduced})`);
  assert.ok(checkedByProvider > CASES * 0.7, `most outputs checked against their provider's rules (${checkedByProvider})`);
  assert.ok(markedCases > CASES / 20, `some outputs carry cache breakpoints (${markedCases})`);
});

/** A tool call that no result answers, in `format` (SPEC §9.4 "no call without its
 * results"): an assistant turn of the call alone (`alone`) or of the call beside its text;
 * in Responses a reasoning item and the call item (beside a message item before them).
 * Gemini's call has a name of its own: responses are matched by name. */
const unanswered = {
  openai: (id, alone) => [{ role: "assistant", content: alone ? null : "Let me check.", tool_calls: [{ id, type: "function", function: { name: "f", arguments: "{}" } }] }],
  "openai-responses": (id, alone) => [
    ...(alone ? [] : [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me check." }] }]),
    { type: "reasoning", id: `rs_${id}`, summary: [] }, { type: "function_call", call_id: id, name: "f", arguments: "{}" }],
  anthropic: (id, alone) => [{ role: "assistant", content: [...(alone ? [] : [{ type: "text", text: "Let me check." }]), { type: "tool_use", id, name: "f", input: {} }] }],
  vercel: (id, alone) => [{ role: "assistant", content: [...(alone ? [] : [{ type: "text", text: "Let me check." }]), { type: "tool-call", toolCallId: id, toolName: "f", input: {} }] }],
  gemini: (id, alone) => [{ role: "model", parts: [...(alone ? [] : [{ text: "Let me check." }]), { functionCall: { name: `g_${id}`, args: {} } }] }],
  langchain: (id, alone) => [{ type: "ai", content: alone ? "" : "Let me check.", tool_calls: [{ id, name: "f", args: {} }] }],
};

test("calls that no result answers are gone from every output (the rest of their turn stays), by every strategy, under budget too", async () => {
  const { rand, int } = seeded(41);
  const formats = Object.keys(unanswered);
  let copies = 0, checked = 0;
  for (let k = 0; k < Math.max(60, CASES / 4); k++) {
    const format = formats[k % formats.length];
    const input = write[format](steps(rand, true), rand() < 0.5);
    // (The generator makes some Gemini histories with a call turn right after a model turn,
    // which Gemini refuses: those are not checked against its rules.)
    let valid = true;
    try { accepts[format](input); } catch { valid = false; }
    // Before some real user inputs (not the first message): the turn went on without results.
    const users = input.flatMap((m, p) => (p > 0 && isRealUser(format, m) ? [p] : []));
    if (users.length === 0) continue;
    const at = [...new Set(Array.from({ length: 1 + int(3) }, () => users[int(users.length)]))].sort((a, b) => b - a);
    for (const p of at) input.splice(p, 0, ...unanswered[format](`u${k}_${p}`, rand() < 0.5));
    if (valid) assert.throws(() => accepts[format](input), undefined, "the provider refuses the input");
    const strategy = ["truncate", "priority", "summarize", "progressive"][int(4)];
    const total = estimateTokens(input);
    // (Some budgets a little over the input: no trigger fires, the orphans go, and what is
    // left still meets the target, SPEC §9.7.)
    const budget = rand();
    const maxTokens = budget < 0.25 ? 1e9 : Math.max(40, Math.floor(total * (budget < 0.5 ? 1 + rand() * 0.1 : 0.2 + rand() * 0.7)));
    const config = { strategy, format, maxTokens, keepLast: int(3) };
    if (strategy === "summarize" || strategy === "progressive") config.summarizer = async (req) => `summary of ${req.messages.length}`;
    if (strategy === "progressive") Object.assign(config, { largeMessageTokens: 150, minToolRun: 3 });
    const where = `case ${k}: ${format} ${JSON.stringify({ ...config, summarizer: undefined })}`;
    assert.equal(shouldReduce(input, config), true, `${where}: shouldReduce`);
    const r = await reduce(input, config);
    if (valid) {
      accepts[format](r.messages);
      checked++;
    }
    const all = [...r.kept, ...r.dropped, ...r.summarized, ...r.rewritten].sort((a, b) => a - b);
    assert.deepEqual(all, input.map((_, i) => i), `${where}: accounting`);
    assert.equal(r.tokensAfter, estimateTokens(r.messages, config), `${where}: tokensAfter`);
    if (r.reduced && !r.overBudget) {
      assert.ok(r.tokensAfter <= Math.floor(maxTokens * 0.8), `${where}: ${r.tokensAfter} tokens`);
    }
    // What stands of a call's turn beside it (its text) is a copy without the call.
    copies += r.messages.filter((m) => !input.includes(m) && JSON.stringify(m).includes("Let me check.")).length;
    if (!r.overBudget) assert.equal((await reduce(r.messages, config)).reduced, false, `${where}: stable`);
  }
  assert.ok(copies > 10, `turns kept without their calls: ${copies}`);
  assert.ok(checked > Math.max(60, CASES / 4) * 0.7, `outputs checked against their provider's rules: ${checked}`);
});

/** The tool results message `m` of `format` holds (as the generator writes them). */
function resultsIn(format, m) {
  const parts = m.parts ?? (Array.isArray(m.content) ? m.content : []);
  switch (format) {
    case "openai": return m.role === "tool" ? 1 : 0;
    case "langchain": return m.type === "tool" ? 1 : 0;
    case "openai-responses": return m.type === "function_call_output" ? 1 : 0;
    case "anthropic": return parts.filter((p) => p.type === "tool_result").length;
    case "vercel": return parts.filter((p) => p.type === "tool-result").length;
    case "vercel-ui": return parts.filter((p) => p.type.startsWith("tool-") && "output" in p).length;
    case "gemini": return parts.filter((p) => p.functionResponse).length;
  }
}

/** `reduceSync(input, config)`, its output accepted by the provider's rules where the input
 * is (`valid`), and every input index accounted for once. */
function reducedAndChecked(format, input, config, where) {
  const r = reduceSync(input, config);
  let valid = true;
  try { accepts[format](input); } catch { valid = false; }
  if (valid) accepts[format](r.messages);
  const all = [...r.kept, ...r.dropped, ...r.summarized, ...r.rewritten].sort((a, b) => a - b);
  assert.deepEqual(all, input.map((_, i) => i), `${where}: accounting`);
  return { r, valid };
}

test("progressive's clearToolResults in every format: only old results, the newest keepToolResults whole, each reloads its original; accepted, accounted for, stable", async () => {
  const { rand, int } = seeded(30);
  const formats = Object.keys(write);
  let clearedIn = new Set(), clearings = 0;
  for (let k = 0; k < Math.max(70, CASES / 4); k++) {
    const format = formats[k % formats.length];
    const input = write[format](steps(rand, true), rand() < 0.5);
    const total = estimateTokens(input);
    const keepToolResults = int(5);
    // Stages 1–3 and the index of dropped calls kept out: what is not cleared, truncation drops.
    const config = { strategy: "progressive", format, maxTokens: Math.max(40, Math.floor(total * (0.4 + rand() * 0.6))),
      keepLast: int(3), keepToolResults, largeMessageTokens: 1e9, minToolRun: 1e6, toolIndexRatio: 0 };
    const where = `case ${k}: ${format} ${JSON.stringify(config)}`;
    const { r } = reducedAndChecked(format, input, config, where);
    assert.ok(r.events.every((e) => ["clearToolResults", "truncate", "orphans"].includes(e.type)), `${where}: ${r.events.map((e) => e.type)}`);
    // The messages holding the newest keepToolResults results; the latest user input.
    let whole = input.length;
    for (let newer = 0; whole > 0 && newer < keepToolResults;) newer += resultsIn(format, input[--whole]);
    const lastUser = input.findLastIndex((m) => isRealUser(format, m));
    const text = JSON.stringify(r.messages);
    for (const [id, originals] of Object.entries(r.offloaded)) {
      assert.equal(originals.length, 1, where);
      const i = input.indexOf(originals[0]);
      assert.ok(r.rewritten.includes(i), `${where}: ${id} is input ${i}, rewritten`);
      assert.ok(resultsIn(format, input[i]) > 0, `${where}: ${i} holds results`);
      assert.ok(i < whole, `${where}: ${i} holds one of the newest ${keepToolResults} results`);
      assert.ok(i < lastUser, `${where}: ${i} is of the current turn`);
      assert.ok(text.includes(`[cleared `) && text.includes(id), `${where}: the prompt names ${id}`);
      clearedIn.add(format);
      clearings++;
    }
    // Stable: the next reduction clears nothing more, over budget too.
    const again = reduceSync(r.messages, config);
    assert.deepEqual(again.offloaded, {}, `${where}: cleared again`);
    if (!r.overBudget) assert.equal(again.reduced, false, `${where}: reduced again`);
  }
  assert.deepEqual([...clearedIn].sort(), [...formats].sort(), "every format had results cleared");
  assert.ok(clearings > 50, `results cleared: ${clearings}`);
});

const INDEX_HEADER = "Earlier tool calls, removed to save room.";

test("progressive's index of dropped tool calls in every format: after the system messages, within its share, each id reloads a whole tool group that went; accepted, accounted for, stable, carried over by ChatHistory", async () => {
  const { ChatHistory } = await import("chat-history-reducer");
  const { rand, int } = seeded(31);
  const formats = Object.keys(write);
  const indexedIn = new Set();
  let lines = 0;
  for (let k = 0; k < Math.max(70, CASES / 4); k++) {
    const format = formats[k % formats.length];
    const input = write[format](steps(rand, true).concat(steps(rand, true)), rand() < 0.5);
    const total = estimateTokens(input);
    const toolIndexRatio = rand() < 0.3 ? 0.1 : 0.05 + rand() * 0.5;
    const config = { strategy: "progressive", format, maxTokens: Math.max(60, Math.floor(total * (0.2 + rand() * 0.5))), keepLast: int(3), toolIndexRatio,
      ...(rand() < 0.5 ? { largeMessageTokens: 1e9, minToolRun: 1e6 } : {}) };
    const where = `case ${k}: ${format} ${JSON.stringify(config)}`;
    const { r, valid } = reducedAndChecked(format, input, config, where);
    const at = r.messages.findIndex((m) => JSON.stringify(m).includes(INDEX_HEADER));
    const event = r.events.find((e) => e.type === "indexToolCalls");
    assert.equal(at >= 0, event !== undefined, `${where}: an index with its event`);
    if (at >= 0) {
      assert.equal(r.messages.filter((m) => JSON.stringify(m).includes(INDEX_HEADER)).length, 1, `${where}: one index`);
      for (const m of r.messages.slice(0, at)) assert.ok(/"(system|developer)"/.test(JSON.stringify(m)), `${where}: ${JSON.stringify(m).slice(0, 80)} before the index`);
      assert.ok(estimateTokens([r.messages[at]], config) <= toolIndexRatio * Math.floor(config.maxTokens * 0.8), `${where}: within its share`);
      const ids = JSON.stringify(r.messages[at]).match(/→ ctx_[0-9a-f]{16}/g).map((s) => s.slice(2));
      let listed = 0;
      for (const id of ids) {
        const originals = r.offloaded[id];
        assert.ok(Array.isArray(originals), `${where}: ${id} reloads`);
        const indices = originals.map((m) => input.indexOf(m));
        assert.ok(indices.every((i) => i >= 0 && r.rewritten.includes(i) && !r.messages.includes(input[i])), `${where}: ${id} is input ${indices}, gone`);
        assert.ok(indices.some((i) => resultsIn(format, input[i]) > 0), `${where}: ${id} holds results`);
        listed += originals.length;
      }
      assert.equal(event.messages, listed, `${where}: the event counts what the index lists`);
      indexedIn.add(format);
      lines += ids.length;
    }
    assert.equal(r.tokensAfter, estimateTokens(r.messages, config), `${where}: tokensAfter`);
    if (!r.overBudget) assert.equal(reduceSync(r.messages, config).reduced, false, `${where}: stable`);
    // ChatHistory over the same messages in two halves: the second index takes the first's
    // lines over, and every id the prompt names reloads.
    const h = new ChatHistory(config);
    const half = Math.floor(input.length / 2);
    let cut = half;
    while (cut < input.length && !isRealUser(format, input[cut])) cut++;
    h.push(...input.slice(0, cut));
    await h.prepare();
    h.push(...input.slice(cut));
    const sent = await h.prepare();
    if (valid) accepts[format](sent);
    for (const id of new Set(JSON.stringify(sent).match(/ctx_[0-9a-f]{16}/g) ?? [])) {
      assert.ok(h.reload(id)?.every((m) => input.includes(m)), `${where}: ChatHistory reloads ${id}`);
    }
  }
  assert.deepEqual([...indexedIn].sort(), [...formats].sort(), "every format had an index");
  assert.ok(lines > 50, `lines: ${lines}`);
});

test("random ChatHistory sessions: what is sent fits, nothing is lost, JSON round trips continue alike", async () => {
  const { ChatHistory } = await import("chat-history-reducer");
  const rand = rng(Number(process.env.PROPERTY_SEED ?? 7) + 1000);
  const formats = ["openai", "anthropic", "vercel", "gemini", "langchain", "openai-responses"];
  for (let k = 0; k < 30; k++) {
    const format = formats[k % formats.length];
    const strategy = ["truncate", "summarize", "progressive", "priority"][Math.floor(rand() * 4)];
    const config = { strategy, maxTokens: 400 + Math.floor(rand() * 1500), format };
    if (strategy === "summarize" || (strategy === "progressive" && rand() < 0.5)) config.summarizer = async (req) => `sum ${req.kind} ${req.messages.length}`;
    if (strategy === "progressive") Object.assign(config, { largeMessageTokens: 150, minToolRun: 3 });
    const all = write[format](steps(rand, true).concat(steps(rand, true)), rand() < 0.5);
    const h = new ChatHistory(config);
    let copy;
    let pushed = 0;
    while (pushed < all.length) {
      const n = 1 + Math.floor(rand() * 4);
      // Push whole tool groups: a call and its results together, as an agent loop would.
      let end = Math.min(all.length, pushed + n);
      while (end < all.length && !isRealUser(format, all[end]) && !["assistant", "model", "ai"].includes(all[end].role ?? lcType(all[end]))) end++;
      h.push(...all.slice(pushed, end));
      if (copy) copy.push(...all.slice(pushed, end));
      pushed = end;
      const sent = await h.prepare();
      const tokens = estimateTokens(sent, { format });
      const where = `session ${k} ${format} ${strategy} at ${pushed}`;
      if (tokens > config.maxTokens) {
        const again = await reduce(sent, config);
        assert.ok(again.overBudget || !again.reduced, `${where}: sent ${tokens} tokens over ${config.maxTokens}`);
      }
      if (copy) assert.equal(JSON.stringify(await copy.prepare()), JSON.stringify(sent), `${where}: the restored copy diverged`);
      if (!copy && pushed > all.length / 2) copy = ChatHistory.fromJSON(JSON.parse(JSON.stringify(h)), config);
    }
    assert.equal(h.original.length, all.length, "original keeps everything pushed");
    h.original.forEach((m, i) => assert.equal(m, all[i]));
  }
});

test("random ChatHistory edits: original is the array model of push / rewind / remove / clear / JSON round trips, and what is sent keeps SPEC §9", async () => {
  const { ChatHistory } = await import("chat-history-reducer");
  const { rand, int } = seeded(2028);
  const formats = Object.keys(write);
  let checked = 0, undone = 0, kept = 0;
  for (let k = 0; k < Math.max(160, CASES / 4); k++) {
    const format = formats[k % formats.length];
    const strategy = ["truncate", "summarize", "progressive", "priority"][int(4)];
    const config = { strategy, maxTokens: 300 + int(1200), format };
    if (strategy === "summarize" || strategy === "progressive") config.summarizer = async (req) => `sum ${req.kind} ${req.messages.length}`;
    if (strategy === "progressive") Object.assign(config, { largeMessageTokens: 150, minToolRun: 3 });
    const all = write[format](steps(rand, true).concat(steps(rand, true)), rand() < 0.5);
    let h = new ChatHistory(config);
    // The model: the messages of `original`, and where each came from in `all` (a rewind
    // pushes again from there: edit-and-resend).
    let model = [], from = [], next = 0;
    for (let op = 0; op < 40 && next < all.length; op++) {
      const where = `session ${k} ${format} ${strategy} op ${op}`;
      const r = rand();
      if (r < 0.45) {
        const end = Math.min(all.length, next + 1 + int(4));
        h.push(...all.slice(next, end));
        for (let j = next; j < end; j++) { model.push(all[j]); from.push(j); }
        next = end;
      } else if (r < 0.6 && model.length > 0) {
        const i = int(model.length);
        // Now and then during a prepare(): its result no longer applies.
        const pending = rand() < 0.3 ? h.prepare() : undefined;
        h.rewind(i);
        next = from[i];
        model = model.slice(0, i); from = from.slice(0, i);
        if (pending) assert.deepEqual(await pending, h.messages, `${where}: a stale prepare() resolves to the edited history`);
      } else if (r < 0.75 && model.length > 0) {
        let i = int(model.length);
        // Now and then the input that opens the history after a summary (SPEC §9.5).
        const opening = h.messages.find((m) => !isSystem(m) && !isSummary(m));
        if (rand() < 0.4 && h.messages.some(isSummary) && model.includes(opening)) i = model.indexOf(opening);
        // The group of message i, as analyze() reports it.
        const groups = analyze(model, { format, maxTokens: 1e9 }).messages.map((m) => m.group);
        const before = h.stats().undone;
        h.remove(i);
        if (h.stats().undone > before) undone++;
        else kept++;
        const keep = groups.map((g) => g !== groups[i]);
        model = model.filter((_, j) => keep[j]); from = from.filter((_, j) => keep[j]);
      } else if (r < 0.78) {
        h.clear();
        model = []; from = [];
      } else if (r < 0.85) {
        if (rand() < 0.5) {
          // The app keeps the messages: the state without them, joined again.
          h = ChatHistory.fromJSON(JSON.parse(JSON.stringify(h.toJSON({ original: "omit" }))), config, { original: model });
          assert.deepEqual(h.original, model, `${where}: original joined`);
        } else {
          h = ChatHistory.fromJSON(JSON.parse(JSON.stringify(h)), config);
          // (Equal, as new objects: the model continues with them.)
          assert.deepEqual(h.original, model, `${where}: original read back`);
          model = h.original;
        }
      }
      assert.deepEqual(h.original, model, `${where}: original`);
      h.original.forEach((m, j) => assert.equal(m, model[j], `${where}: original[${j}] is the pushed object`));
      const sent = await h.prepare();
      assert.deepEqual(sent, h.messages, where);
      // Order and identity: the originals sent are in their order in `original`.
      const at = sent.map((m) => model.indexOf(m)).filter((j) => j >= 0);
      assert.deepEqual(at, [...at].sort((a, b) => a - b), `${where}: order`);
      // System messages and the latest real user input are sent as they are.
      model.forEach((m, j) => { if (isSystem(m)) assert.ok(sent.includes(m), `${where}: system ${j}`); });
      const lastUser = model.findLast((m) => isRealUser(format, m));
      if (lastUser !== undefined) assert.ok(sent.includes(lastUser), `${where}: latest user input`);
      // startOn "user": past the system messages and summaries, a message sent as it is
      // that opens the rest is a real user input where one came before it (under the
      // summary) — an edit that removed the input after a summary leaves no answer right
      // after it.
      const opening = sent.find((m) => !isSystem(m) && !isSummary(m));
      const opened = model.indexOf(opening);
      if (sent.some(isSummary) && opened >= 0 && model.slice(0, opened).some((m) => isRealUser(format, m))) {
        assert.ok(isRealUser(format, opening), `${where}: ${JSON.stringify(opening).slice(0, 80)} opens the history after a summary`);
      }
      // No orphans: the provider takes what is sent whenever it takes `original`.
      let valid = true;
      try { accepts[format](model); } catch { valid = false; }
      if (valid && model.length > 0) {
        accepts[format](sent);
        checked++;
      }
    }
  }
  assert.ok(checked > 200, `states checked against their provider's rules: ${checked}`);
  assert.ok(undone > 5 && kept > 5, `removals that undid a reduction's message (${undone}) and that kept them (${kept})`);
});

/** What a reduction decided, or the code it failed with. */
function outcome(messages, config) {
  try {
    const r = reduceSync(messages, config);
    return {
      kept: r.kept, dropped: r.dropped, tokensBefore: r.tokensBefore, tokensAfter: r.tokensAfter,
      reduced: r.reduced, overBudget: r.overBudget, estimate: estimateTokens(messages, config),
      // (The output also holds copies where it rewrote a message, such as one cleaned of an
      // orphan result: only the kept ones are the input objects.)
      same: r.kept.every((i) => r.messages.includes(messages[i])),
    };
  } catch (e) {
    return { error: e.code ?? String(e) };
  }
}

/**
 * Readings are kept between calls by message object (src/wasm/js/reuse.js); every way an app changes
 * its history between turns must give what reading copies of the messages gives. `cases`
 * histories of about `length` messages, `ops` changes each.
 */
function takeOverDecidesAsFreshRead(seed, cases, length, ops) {
  const { rand, int } = seeded(seed);
  const formats = Object.keys(write);
  let taken = 0;
  for (let k = 0; k < cases; k++) {
    const format = formats[k % formats.length];
    let history = randomHistory(rand, format, length, 0.6, true);
    const total = estimateTokens(history);
    const config = { maxTokens: Math.max(40, Math.floor(total * (0.2 + rand() * 0.6))), format: rand() < 0.5 ? "auto" : format };
    if (rand() < 0.4) Object.assign(config, { estimator: "length", charsPerToken: 2 + int(4) });
    if (rand() < 0.3) config.strategy = "priority";
    if (rand() < 0.2) config.calibration = 1.25;
    // A counter of the caller's (its counts are kept with the reading), or counts given
    // per call for some messages (never kept).
    const counter = rand();
    if (counter < 0.15) config.countTokens = (m) => Math.ceil(JSON.stringify(m).length / 3);
    for (let op = 0; op < ops; op++) {
      if (counter >= 0.15 && counter < 0.3) config.tokenCounts = Array.from({ length: history.length }, () => (rand() < 0.5 ? 1 + int(300) : undefined));
      // (Removals may have emptied it: a new conversation then.)
      if (history.length === 0) history = write[format](steps(rand, true), false);
      const choice = rand();
      const i = int(history.length);
      const m = history[i];
      if (choice < 0.25) {
        history.push(...write[format](steps(rand, true), false).slice(0, 1 + int(4)));
      } else if (choice < 0.4) {
        // (An operation before may have made the history invalid: then it stays as it is.)
        const r = outcome(history, config).error === undefined ? reduceSync(history, config) : { messages: history };
        history = [...r.messages, ...write[format](steps(rand, true), false).slice(0, 2)];
      } else if (choice < 0.5 && typeof m.content === "string") {
        m.content = `${m.content} and more`; // replaced in place
      } else if (choice < 0.6 && Array.isArray(m.content ?? m.parts) && (m.content ?? m.parts).some((p) => typeof p.text === "string")) {
        const type = format === "gemini" ? undefined : format === "openai-responses" ? "output_text" : "text";
        (m.content ?? m.parts).push(type === undefined ? { text: "one more part" } : { type, text: "one more part" });
      } else if (choice < 0.7) {
        history[i] = { ...m }; // a copy: another object
      } else if (choice < 0.78) {
        history.splice(i, 1); // may orphan a tool call: both reads must then fail alike
      } else if (choice < 0.85 && (m.role === "assistant" || m.role === "user") && typeof m.content === "string") {
        m.role = m.role === "user" ? "assistant" : "user";
      } else if (choice < 0.92 && Array.isArray(m.tool_calls)) {
        // A call pushed onto the same array (as a streamed reply grows), with its result.
        const id = `late${k}_${op}`;
        if (format === "openai") {
          m.tool_calls.push({ id, type: "function", function: { name: "f", arguments: "{}" } });
          history.splice(i + 1, 0, { role: "tool", tool_call_id: id, content: "late result" });
        } else {
          m.tool_calls.push({ id, name: "f", args: {} });
          history.splice(i + 1, 0, { type: "tool", tool_call_id: id, content: "late result" });
        }
      } else {
        history = history.slice(); // a new array of the same messages
      }
      // This config, another one on the same messages, then this one twice (what a call on
      // unchanged messages reuses must follow the config), against reading copies.
      const other = { ...config, maxTokens: Math.max(20, Math.floor(config.maxTokens * 0.6)) };
      const configs = [config, other, config, config];
      const again = configs.map((c) => outcome(history, c));
      const copy = structuredClone(history);
      const fresh = [outcome(copy, config), outcome(structuredClone(history), other)];
      again.forEach((a, n) => {
        const f = fresh[configs[n] === config ? 0 : 1];
        assert.deepEqual(a, "same" in a ? { ...f, same: a.same } : f, `case ${k} (${format}), operation ${op}, call ${n}: a taken-over reading decides as a fresh one`);
        if (a.same !== undefined) assert.ok(a.same, "kept messages are the input objects");
      });
      taken++;
    }
  }
  assert.ok(taken >= cases * ops);
}

test("a call that takes over an earlier call's reading decides exactly as a fresh read", () => {
  takeOverDecidesAsFreshRead(11, Math.max(24, Math.floor(CASES / 4)), 40, 10);
});

test("the same on long histories: readings kept in chunks (texts, stamps) across their boundaries", () => {
  // Thousands of messages: a reading's texts and stamps are kept in chunks of thousands
  // (texts.js `TextChunks`, formats/stamps.js `Stamps`); histories that grow, are cut and edited cross them.
  takeOverDecidesAsFreshRead(12, 7, 2600, 4);
});

test("auto-detection reports the same first error whether or not readers check the format as they read", () => {
  // Once one format is left, "auto" leaves each further message's format check to its
  // reader (one pass over its fields); with a countTokens every message is checked first.
  // Either way the error must be the one of the first message at fault, in the same words.
  const { rand, int } = seeded(23);
  const formats = Object.keys(write);
  const errorOf = (messages, config) => {
    try {
      reduceSync(messages, config);
      return "none";
    } catch (e) {
      return { code: e.code, message: e.message, index: e.index };
    }
  };
  let errors = 0;
  for (let k = 0; k < Math.max(70, CASES / 4); k++) {
    const format = formats[k % formats.length];
    const history = randomHistory(rand, format, 12 + int(40), 1);
    const corrupt = (h) => {
      const r2 = rng(k); // the same corruptions on each copy
      const n2 = (n) => Math.floor(r2() * n);
      const done = new Set(); // a message is corrupted once (a throwing getter stays)
      for (let c = 1 + n2(3); c > 0; c--) {
        const at = n2(h.length);
        if (done.has(at)) continue;
        done.add(at);
        const kind = n2(5);
        if (kind === 0) h[at] = write[formats[n2(formats.length)]](steps(r2), false)[0];
        else if (kind === 1) h[at] = { foo: 1 };
        else if (kind === 2) h[at] = { ...h[at], role: "narrator" };
        else if (kind === 3) Object.defineProperty(h[at] = { ...h[at] }, "content", { get() { throw new Error("boom"); }, enumerable: true });
        else if (h[at].content !== undefined) h[at] = { ...h[at], content: undefined };
      }
      return h;
    };
    const plain = errorOf(corrupt(structuredClone(history)), { maxTokens: 100 });
    const checked = errorOf(corrupt(structuredClone(history)), { maxTokens: 100, countTokens: () => 1 });
    assert.deepEqual(plain, checked, `case ${k} (${format})`);
    if (plain !== "none") errors++;
  }
  assert.ok(errors > 30, `only ${errors} corrupted histories failed`);
});

test("every format: unchanged messages are not read again, new and edited ones are", () => {
  // What a call reads of each message is kept by message object (js/reuse.js); `countTokens`
  // shows which messages a call read. A format whose stamp did not compare equal on an
  // unchanged message would read it on every call.
  const { rand } = seeded(5);
  for (const format of Object.keys(write)) {
    let history = randomHistory(rand, format, 60, 1);
    const read = [];
    const config = { format: rand() < 0.5 ? "auto" : format, countTokens: (m, i) => { read.push(i); return 5; } };
    const count = (messages) => {
      read.length = 0;
      assert.equal(estimateTokens(messages, config), 5 * messages.length, format);
      return read.slice();
    };
    assert.deepEqual(count(history), history.map((_, i) => i), `${format}: the first call reads every message`);
    assert.deepEqual(count(history), [], `${format}: the same messages again`);
    history = history.slice();
    assert.deepEqual(count(history), [], `${format}: the same messages in a new array`);
    const added = write[format](steps(rand), false);
    history.push(...added);
    assert.deepEqual(count(history), added.map((_, k) => history.length - added.length + k), `${format}: only the new messages`);
    const i = 1 + Math.floor(rand() * (history.length - 2));
    history[i] = { ...history[i] };
    // What is left without the first i messages may read as another format (its own shape
    // decides, as for copies; then it is read again): found on copies, before the calls.
    const plain = { format: config.format };
    const formatOf = (messages) => analyze(structuredClone(messages), plain).format;
    const sameFormat = formatOf(history.slice(i)) === formatOf(history);
    // (Gemini: and the response turns right after it, whose call turn is it or before it:
    // responses are paired anew, by order and name, after a change before them.)
    const edited = [i];
    while (format === "gemini" && i + edited.length < history.length && history[i + edited.length].parts.every((p) => p.functionResponse)) edited.push(i + edited.length);
    assert.deepEqual(count(history), edited, `${format}: only the replaced message`);
    // (Gemini responses that now lead the history, their call turn gone, are paired anew:
    // read again, as orphans.)
    const rest = history.slice(i), again = [];
    while (format === "gemini" && again.length < rest.length && rest[again.length].parts.every((p) => p.functionResponse)) again.push(again.length);
    if (sameFormat) assert.deepEqual(count(rest), again, `${format}: a reduced history (its oldest messages removed)`);
  }
});

test("a truncation that leaves the oldest messages unestimated decides as one that estimates them all", () => {
  // reduceSync estimates only what decides a `truncate` (estimating.rs); a message target
  // (here one that never binds) makes it estimate every message. Both must give the same
  // result, and the late tokensBefore must be the full estimate.
  const { rand, int } = seeded(5);
  const formats = Object.keys(write);
  const cases = Math.max(42, Math.floor(CASES / 4));
  let late = 0;
  for (let k = 0; k < cases; k++) {
    const format = formats[k % formats.length];
    // Most long enough that the texts without a count are longer than `FEW_UNITS`
    // (estimating.rs): those are estimated only as far as they decide.
    const history = randomHistory(rand, format, 40 + int(600), 0.6);
    const total = estimateTokens(history);
    const config = { maxTokens: Math.max(20, Math.floor(total * (0.05 + rand() * 0.9))), keepLast: int(3), format: rand() < 0.5 ? "auto" : format };
    if (rand() < 0.3) config.targetTokens = Math.floor(config.maxTokens * rand());
    if (rand() < 0.2) config.startOn = "any";
    if (rand() < 0.15) config.keepSystem = false;
    if (rand() < 0.2) config.calibration = 0.8 + rand();
    const profile = rand();
    if (profile < 0.2) config.tokenizer = profile < 0.07 ? "cl100k" : profile < 0.14 ? "gemma" : "llama3";
    if (rand() < 0.1) config.onOverBudget = "error";
    // Copies: estimateTokens above read (and keeps) every count of `history` itself.
    const mine = structuredClone(history), copy = structuredClone(history);
    let lazy;
    const run = (messages, c) => {
      try {
        const r = reduceSync(messages, c);
        if (lazy === undefined) lazy = typeof Object.getOwnPropertyDescriptor(r, "tokensBefore").get === "function";
        return JSON.parse(JSON.stringify({ ...r, messages: r.messages.map((m) => messages.indexOf(m)) }));
      } catch (e) {
        return { error: e.code };
      }
    };
    lazy = undefined;
    const some = run(mine, config);
    if (lazy) late++;
    const all = run(copy, { ...config, targetMessages: 1e9 });
    assert.deepEqual(some, all, `case ${k} (${format}): ${JSON.stringify(config)}`);
    if (some.error === undefined) assert.equal(some.tokensBefore, estimateTokens(history, config), "tokensBefore is the full estimate");
    // The next call on the same messages takes every count over, estimated now.
    assert.deepEqual(run(mine, config), some, "again on the same messages");
    if (some.error === undefined) {
      // A call on the same messages before the first result's tokensBefore is read.
      const other = structuredClone(history);
      const first = reduceSync(other, config);
      const second = reduceSync(other, config);
      assert.equal(second.tokensBefore, some.tokensBefore);
      assert.equal(first.tokensBefore, some.tokensBefore);
      assert.deepEqual(first.events, some.events);
    }
  }
  assert.ok(late >= cases / 4, `the late estimate is used (${late} of ${cases})`);
});
