// A reduction never misleads the model (issue 26, SPEC §5, §9.12, §9.13): what truncate and
// summarize remove is a prefix, the current turn's tool steps stay or leave one note naming
// them, and summarize summarizes what it can when what must stay is over the target.
import { test } from "node:test";
import assert from "node:assert/strict";
import { reduce, reduceSync } from "chat-history-reducer";

const U = (content) => ({ role: "user", content });
const A = (content) => ({ role: "assistant", content });
const call = (id, name, args) => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
});
const result = (id, content) => ({ role: "tool", tool_call_id: id, content });

test("a summary covers a prefix: never a message after the question it would precede", async () => {
  const m = [U("What's the time?"), A("Let me check"), U("What's the weather?"), call("c1", "weather", {}),
    result("c1", "Sunny"), A("It's sunny")];
  const requests = [];
  const summarizer = async (req) => (requests.push(req.messages), "The user asked the time.");
  const r = await reduce(m, { strategy: "summarize", targetMessages: 2, thresholdMessages: 0, summaryMaxTokens: 1e6, summarizer });
  assert.deepEqual(requests, [[m[0], m[1]]], "the summarizer sees the prefix only");
  assert.deepEqual(r.summarized, [0, 1]);
  assert.equal(r.messages[0], r.summary);
  // The question stays after the summary; the weather call and its result, a step of the
  // current turn, stand as one note naming the call (still over the message target).
  assert.equal(r.messages[1], m[2]);
  assert.match(r.messages[2].content, /^\[compressed tool run: 2 messages, stored as ctx_[0-9a-f]{16}; [^\n]*\n- called weather\(\{\}\)\n  → Sunny$/);
  assert.equal(r.messages[3], m[5]);
  assert.deepEqual(r.rewritten, [3, 4]);
  assert.equal(r.overBudget, true);
  // truncate cuts the same prefix.
  const t = reduceSync(m, { targetMessages: 2, thresholdMessages: 0 });
  assert.deepEqual(t.dropped, [0, 1]);
  assert.deepEqual([t.messages[0], t.messages[2]], [m[2], m[5]]);
  assert.deepEqual(t.rewritten, [3, 4]);
  assert.equal(t.overBudget, true);
});

/** A turn of `steps` tool calls with large results, after some earlier chat. */
function agentTurn(steps, resultChars) {
  const m = [{ role: "system", content: "You are an agent." }, U("hi"), A("hello")];
  m.push(U("Find the cheapest flight to Lisbon in May."));
  for (let k = 0; k < steps; k++) {
    m.push(call(`call_${k}`, k % 2 ? "fetch_page" : "search_flights", { query: `lisbon may ${k}`, page: k }));
    m.push(result(`call_${k}`, `result ${k}: ` + "fare data ".repeat(resultChars / 10)));
  }
  return m;
}

for (const strategy of ["truncate", "priority"]) {
  test(`${strategy}: the current turn's oldest tool steps become one note naming every call`, () => {
    const m = agentTurn(6, 4000);
    const r = reduceSync(m, { strategy, maxTokens: 3000 });
    const notes = r.messages.filter((x) => !m.includes(x));
    assert.equal(notes.length, 1, JSON.stringify(r.events));
    const note = notes[0];
    assert.equal(note.role, "assistant");
    assert.match(note.content, /^\[compressed tool run: \d+ messages, stored as (ctx_[0-9a-f]{16});/);
    // Every removed call is named with its arguments; its result went to the offload id.
    const id = /stored as (ctx_[0-9a-f]{16})/.exec(note.content)[1];
    assert.deepEqual(r.offloaded[id], r.rewritten.map((i) => m[i]));
    for (const i of r.rewritten) {
      const c = m[i].tool_calls?.[0];
      if (c) assert.ok(note.content.includes(`${c.function.name}(${c.function.arguments}`), c.function.arguments);
    }
    // Nothing of the current turn is dropped; the note stands where the first step stood.
    assert.ok(r.dropped.every((i) => i < 3), `${r.dropped}`);
    assert.equal(r.messages.indexOf(note), r.messages.indexOf(m[3]) + 1);
    assert.ok(r.events.some((e) => e.type === "currentTurn" && e.messages === r.rewritten.length));
    assert.equal(r.overBudget, false);
    assert.ok(r.tokensAfter <= 2400, `${r.tokensAfter}`);
    // Accounting: every input index once.
    const all = [...r.kept, ...r.dropped, ...r.summarized, ...r.rewritten].sort((a, b) => a - b);
    assert.deepEqual(all, m.map((_, i) => i));
    // Stable: the note is not noted again.
    assert.equal(reduceSync(r.messages, { strategy, maxTokens: 3000 }).reduced, false);
  });
}

test("an agent loop: at every step each earlier call of the current turn is visible as itself or in a note", async () => {
  // A scripted model: it calls a tool at each step, and records what it was sent.
  const seen = [];
  const model = (messages) => {
    seen.push(messages);
    const k = seen.length - 1;
    return call(`call_${k}`, "search", { q: `step ${k}` });
  };
  const history = [U("Plan my trip.")];
  for (let step = 0; step < 8; step++) {
    const { messages } = await reduce(history, { strategy: "truncate", maxTokens: 2500 });
    const reply = model(messages);
    history.push(reply, result(reply.tool_calls[0].id, `data for step ${step} ` + "x y z ".repeat(500)));
  }
  for (const [step, sent] of seen.entries()) {
    const text = JSON.stringify(sent);
    for (let k = 0; k < step; k++) {
      assert.ok(text.includes(`"id":"call_${k}"`) || text.includes(`search({\\"q\\":\\"step ${k}\\"}`),
        `step ${step}: call ${k} is gone without a trace`);
    }
  }
  assert.ok(seen.some((sent) => JSON.stringify(sent).includes("[compressed tool run")), "notes were written");
});

test("summarize: when what must stay is over the target, what may go is summarized all the same", async () => {
  const words = (k) => `message ${k} ` + "lorem ipsum dolor sit amet ".repeat(20);
  const msgs = Array.from({ length: 12 }, (_, k) => (k % 2 ? A(words(k)) : U(words(k))));
  let asked = 0;
  const config = { strategy: "summarize", maxTokens: 900, targetTokens: 300, keepLast: 4, summarizer: async () => (asked++, "a short summary") };
  const r = await reduce(msgs, config);
  assert.equal(asked, 1);
  assert.ok(r.summary);
  assert.equal(r.overBudget, true);
  assert.ok(r.tokensAfter < r.tokensBefore / 2, `${r.tokensBefore} -> ${r.tokensAfter}`);
  assert.ok(r.events.some((e) => e.type === "summarize" && e.overBudget === true), JSON.stringify(r.events));
  // A summarizer that fails under "throw": the error, not a silent truncation.
  await assert.rejects(reduce(msgs, { ...config, onSummarizerError: "throw", summarizer: async () => { throw new Error("down"); } }),
    (e) => e.code === "SUMMARIZER_FAILED");
});
