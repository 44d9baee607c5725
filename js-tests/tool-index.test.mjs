// progressive's index of dropped tool calls: when groups must go, each tool call that goes
// with its results leaves a line (the call, an offload id) in one index where summaries
// stand, at most toolIndexRatio of the target, the newest kept; ChatHistory carries it over.
import { test } from "node:test";
import assert from "node:assert/strict";
import { reduce, reduceSync, ChatHistory, ReduceError, estimateTokens } from "chat-history-reducer";
import { playTurns } from "./chats.mjs";

const SYSTEM = { role: "system", content: "You read files and answer." };
const HEADER = "<conversation-summary>Earlier tool calls, removed to save room.";

/** Turn `t` of an agent chat: a question, a call of read_file, its result, an answer. */
function turn(t, chars = 900) {
  return [
    { role: "user", content: `Question ${t}: what is in file ${t}?` },
    { role: "assistant", content: null, tool_calls: [{ id: `c${t}`, type: "function", function: { name: "read_file", arguments: `{"path":"f${t}.txt"}` } }] },
    { role: "tool", tool_call_id: `c${t}`, content: `file ${t}: ${"lorem ipsum dolor sit amet ".repeat(chars / 27)}` },
    { role: "assistant", content: `File ${t} is lorem ipsum.` },
  ];
}

const session = (turns, chars) => [SYSTEM, ...Array.from({ length: turns }, (_, t) => turn(t, chars)).flat()];

/** The index among `messages` and its lines `{ call, id }`, or undefined. */
function indexOf(messages) {
  const at = messages.findIndex((m) => typeof m.content === "string" && m.content.startsWith(HEADER));
  if (at < 0) return undefined;
  const body = messages[at].content.replace(/<\/conversation-summary>$/, "");
  const lines = body.split("\n").filter((l) => l.startsWith("- ")).map((l) => {
    const [, call, id] = /^- (.+) → (ctx_[0-9a-f]{16})$/.exec(l);
    return { call, id };
  });
  return { at, message: messages[at], lines };
}

test("progressive: the tool calls of the groups that go leave a line each in one index after the system prompt; each id reloads the call with its results", () => {
  const input = session(40);
  const config = { strategy: "progressive", maxTokens: 3000 };
  const r = reduceSync(input, config);
  const index = indexOf(r.messages);
  assert.ok(index, r.events.map((e) => e.type).join());
  assert.equal(index.at, 1, "where summaries stand");
  assert.ok(index.message.content.endsWith("</conversation-summary>"));
  assert.ok(index.lines.length >= 3, `${index.lines.length} lines`);
  assert.ok(estimateTokens([index.message]) <= 0.1 * 2400, "at most toolIndexRatio of the target");
  const listed = [];
  for (const { call, id } of index.lines) {
    const [c, result] = r.offloaded[id];
    const t = Number(/^c(\d+)$/.exec(c.tool_calls[0].id)[1]);
    assert.equal(c, input[4 * t + 2], "the call as it was sent");
    assert.equal(result, input[4 * t + 3], "its result");
    assert.equal(call, `read_file(path=f${t}.txt)`);
    assert.ok(!r.messages.includes(c) && !r.messages.includes(result), "gone from the prompt");
    assert.ok(r.rewritten.includes(4 * t + 2) && r.rewritten.includes(4 * t + 3));
    listed.push(t);
  }
  // The newest of the calls that went: any call gone without a line is older.
  const gone = input.flatMap((m, i) => (m.tool_calls && !r.messages.some((o) => o.tool_calls?.[0].id === m.tool_calls[0].id) ? [(i - 2) / 4] : []));
  const unlisted = gone.filter((t) => !listed.includes(t));
  assert.ok(unlisted.length > 0 && Math.max(...unlisted) < Math.min(...listed), `listed ${listed}, not ${unlisted}`);
  assert.deepEqual(listed, [...listed].sort((a, b) => a - b), "oldest first");
  // A prefix, as any summary (SPEC §9.12): no question or answer of a listed turn, or older,
  // stays (their answers would stand without the calls they report on).
  const kept = r.messages.flatMap((m) => (/^(Question|File) (\d+)/.exec(m.content ?? "") ?? [])[2] ?? []).map(Number);
  assert.ok(kept.every((t) => t > Math.max(...listed)), `kept turns ${kept}, listed up to ${Math.max(...listed)}`);
  const event = r.events.find((e) => e.type === "indexToolCalls");
  assert.equal(event.messages, 2 * listed.length);
  assert.deepEqual(r.events.map((e) => e.type).slice(-2), ["indexToolCalls", "truncate"]);
  const all = [...r.kept, ...r.dropped, ...r.summarized, ...r.rewritten].sort((a, b) => a - b);
  assert.deepEqual(all, input.map((_, i) => i), "every input index once");
  assert.ok(r.tokensAfter <= 2400 && !r.overBudget);
  assert.equal(r.tokensAfter, estimateTokens(r.messages));
  assert.equal(reduceSync(r.messages, config).reduced, false, "stable");
});

test("toolIndexRatio: 0 drops as truncate does, a larger share lists more; a share outside 0–1 is INVALID_CONFIG", () => {
  const input = session(40);
  const none = reduceSync(input, { strategy: "progressive", maxTokens: 3000, toolIndexRatio: 0 });
  assert.equal(indexOf(none.messages), undefined);
  assert.ok(!none.events.some((e) => e.type === "indexToolCalls"));
  const small = indexOf(reduceSync(input, { strategy: "progressive", maxTokens: 3000 }).messages);
  const large = indexOf(reduceSync(input, { strategy: "progressive", maxTokens: 3000, toolIndexRatio: 0.3 }).messages);
  assert.ok(large.lines.length > small.lines.length, `${large.lines.length} vs ${small.lines.length}`);
  for (const bad of [1.5, -0.1, "0.1", Number.NaN]) {
    assert.throws(() => reduceSync(input, { strategy: "progressive", maxTokens: 3000, toolIndexRatio: bad }),
      (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === "toolIndexRatio", String(bad));
  }
});

test("ChatHistory carries the index over: one index, the newest calls that went, older lines give way; every id it names reloads the pushed objects", async () => {
  const all = session(150);
  const h = new ChatHistory({ strategy: "progressive", maxTokens: 4000 }, [SYSTEM]);
  let largest = 0;
  await playTurns(h, all, () => {
    const index = indexOf(h.messages);
    if (index) largest = Math.max(largest, estimateTokens([index.message]));
  });
  const sent = await h.prepare();
  assert.ok(estimateTokens(sent) <= 4000);
  assert.equal(sent.filter((m) => typeof m.content === "string" && m.content.includes("Earlier tool calls")).length, 1, "one index");
  const index = indexOf(sent);
  assert.equal(index.at, 1);
  assert.ok(largest <= 0.1 * 3200, `${largest} tokens`);
  const listed = index.lines.map(({ id }) => {
    const [c, result] = h.reload(id);
    assert.ok(all.includes(c) && all.includes(result), "the pushed objects");
    return Number(c.tool_calls[0].id.slice(1));
  });
  assert.deepEqual(listed, [...listed].sort((a, b) => a - b), "oldest first");
  // The lines are of the newest turns that went: the turn after the last listed is in the
  // prompt, or listed; and the oldest turns' lines gave way.
  const inPrompt = sent.flatMap((m) => (m.tool_calls ? [Number(m.tool_calls[0].id.slice(1))] : []));
  assert.equal(Math.max(...listed) + 1, Math.min(...inPrompt), `listed up to ${Math.max(...listed)}, the prompt from ${Math.min(...inPrompt)}`);
  assert.ok(Math.min(...listed) > 0, "the oldest lines gave way");
  assert.ok(h.events.filter((e) => e.type === "indexToolCalls").length > 3);
});

test("an edit that removes a message the index lists undoes the index: its originals come back and the removed one's id no longer reloads", async () => {
  const all = session(40);
  const h = new ChatHistory({ strategy: "progressive", maxTokens: 3000 }, [SYSTEM]);
  h.push(...all.slice(1));
  const sent = await h.prepare();
  const index = indexOf(sent);
  const { id } = index.lines[0];
  const [c] = h.reload(id);
  h.remove(h.original.indexOf(c));
  assert.equal(h.reload(id), undefined, "what was removed is not handed to the model again");
  assert.ok(h.stats().undone >= 1);
  assert.ok(!JSON.stringify(h.messages).includes(id));
  const again = await h.prepare();
  assert.ok(estimateTokens(again) <= 3000);
  assert.ok(!JSON.stringify(again).includes(id));
});

test("a call of context_reload and what it answered are never listed: the model would reload them again", () => {
  const input = session(40);
  // Turn 20 reloads what turn 5 read.
  input.splice(4 * 20 + 4, 0,
    { role: "assistant", content: null, tool_calls: [{ id: "r1", type: "function", function: { name: "context_reload", arguments: '{"id":"ctx_0123456789abcdef"}' } }] },
    { role: "tool", tool_call_id: "r1", content: "[{\"role\":\"tool\",\"content\":\"file 5: lorem\"}]" });
  const r = reduceSync(input, { strategy: "progressive", maxTokens: 2000, toolIndexRatio: 0.5 });
  const index = indexOf(r.messages);
  assert.ok(index && index.lines.length > 5);
  assert.ok(!r.messages.some((m) => m.tool_call_id === "r1"), "the reload went");
  assert.ok(index.lines.every((l) => !l.call.startsWith("context_reload(")), index.lines.map((l) => l.call).join());
});

/** Turn `t` of a coding agent: a question, three calls one after another, an answer. */
function runTurn(t) {
  const steps = ["read_file", "grep", "run_tests"].flatMap((name, k) => [
    { role: "assistant", content: null, tool_calls: [{ id: `c${t}_${k}`, type: "function", function: { name, arguments: `{"arg":"${t}.${k}"}` } }] },
    { role: "tool", tool_call_id: `c${t}_${k}`, content: `${name} ${t}.${k}: ${"output line ".repeat(40)}` },
  ]);
  return [{ role: "user", content: `Task ${t}: fix module ${t}.` }, ...steps, { role: "assistant", content: `Module ${t} fixed.` }];
}

test("tool runs compressed into digests are listed when they go: by what they stand for, and a digest an earlier reduction wrote by its own id, which reloads the run", async () => {
  const input = [SYSTEM, ...Array.from({ length: 30 }, (_, t) => runTurn(t)).flat()];
  const config = { strategy: "progressive", maxTokens: 3000 };
  const r = reduceSync(input, config);
  assert.ok(r.events.some((e) => e.type === "toolRuns"), r.events.map((e) => e.type).join());
  const index = indexOf(r.messages);
  assert.ok(index && index.lines.length > 0);
  for (const { call, id } of index.lines) {
    const run = r.offloaded[id];
    assert.equal(run.length, 6, "the run's six messages");
    const t = Number(/^c(\d+)_0$/.exec(run[0].tool_calls[0].id)[1]);
    assert.deepEqual(run, input.slice(2 + 8 * t, 8 + 8 * t));
    assert.equal(call, `read_file(arg=${t}.0); grep(arg=${t}.1); run_tests(arg=${t}.2)`);
  }
  assert.equal(reduceSync(r.messages, config).reduced, false, "stable");
  // A history: runs become digests in one reduction, and go in a later one.
  const h = new ChatHistory(config, [SYSTEM]);
  for (let t = 0; t < 60; t++) {
    const turn = runTurn(t);
    h.push(turn[0]);
    for (let k = 1; k < 7; k += 2) {
      await h.prepare();
      h.push(turn[k], turn[k + 1]);
    }
    await h.prepare();
    h.push(turn[7]);
  }
  const sent = await h.prepare();
  const carried = indexOf(sent);
  assert.ok(carried && carried.lines.length > 3, JSON.stringify(sent[1]).slice(0, 300));
  for (const { id } of carried.lines) {
    const run = h.reload(id);
    assert.ok(run && run.length === 6 && run.every((m) => h.original.includes(m)), `${id} reloads its run`);
  }
  assert.ok(carried.lines.some(({ call }) => call.includes('{"arg"')), "a digest an earlier reduction wrote, listed by its calls as it names them");
});

test("the index takes no room that what must stay needs: a target truncation meets is met with it too", () => {
  for (const size of [1400, 1700]) {
    // The current input, protected, of about `size` tokens: what is left of the target is
    // less than the index's share.
    const input = [SYSTEM, ...session(30, 480).slice(1), { role: "user", content: `Now: ${"word ".repeat(Math.round(size / 0.78))}` }];
    const config = { strategy: "progressive", maxTokens: 2500, largeMessageTokens: 1e9 };
    const without = reduceSync(input, { ...config, toolIndexRatio: 0 });
    const r = reduceSync(input, config);
    assert.equal(r.overBudget, without.overBudget, `${size}: ${r.tokensAfter} vs ${without.tokensAfter}`);
    assert.ok(r.tokensAfter <= Math.max(2000, without.tokensAfter), `${size}: ${r.tokensAfter}`);
    if (!without.overBudget) assert.doesNotThrow(() => reduceSync(input, { ...config, onOverBudget: "error" }));
  }
});

test("with a store, a history sent back reduced each time: every id the index names holds the call and its result, not a placeholder", async () => {
  const store = new Map();
  const config = { strategy: "progressive", maxTokens: 3000, store };
  let state = [SYSTEM];
  for (let t = 0; t < 40; t++) state = (await reduce([...state, ...turn(t)], config)).messages;
  const index = indexOf(state);
  assert.ok(index && index.lines.length > 3);
  for (const { id } of index.lines) {
    const stored = store.get(id);
    assert.ok(Array.isArray(stored), id);
    const t = Number(stored[0].tool_calls[0].id.slice(1));
    assert.deepEqual(stored.map((m) => m.content), [null, turn(t)[2].content], `${id}: the result itself`);
  }
  // An asynchronous store: the same, once the writes resolve.
  const kv = new Map();
  const asyncStore = { get: async (id) => kv.get(id), set: async (id, v) => { await new Promise((r) => setTimeout(r, 1)); kv.set(id, v); } };
  let sent = [SYSTEM];
  for (let t = 0; t < 40; t++) sent = (await reduce([...sent, ...turn(t)], { ...config, store: asyncStore })).messages;
  for (const { id } of indexOf(sent).lines) assert.ok(!JSON.stringify(kv.get(id)).includes("[cleared "), id);
});
