// SPEC §7 `summaryCache`: a stateless server (each request a new parse of the whole history)
// reuses summaries as ChatHistory keeps its own — through the packed package.
import { test } from "node:test";
import assert from "node:assert/strict";
import { reduce, ChatHistory } from "chat-history-reducer";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function turn(t) {
  return [
    { role: "user", content: `Turn ${t}: how do I care for plant number ${t}? It has ${t % 7} leaves.` },
    { role: "assistant", content: `Plant ${t} needs water every ${t % 5 + 1} days and some sun, and repotting in spring.` },
  ];
}

function config(extra) {
  let calls = 0;
  const c = {
    strategy: "summarize",
    maxTokens: 600,
    summarizer: async (req) => {
      calls++;
      return `Summary ${calls} of ${req.messages.length} messages${req.previousSummary ? " after an earlier one" : ""}.`;
    },
    ...extra,
  };
  return { config: c, calls: () => calls };
}

/** `requests` turns of one session, ChatHistory beside a stateless reduce over the JSON
 * body with `cache`: their summarizer calls and prefix changes. */
export async function session(requests, cache) {
  const system = { role: "system", content: "You help with gardening." };
  const held = config();
  const history = new ChatHistory(held.config, [system]);
  const stateless = config({ summaryCache: cache });
  let body = [system];
  const prefixes = { held: [], stateless: [] };
  for (let t = 0; t < requests; t++) {
    const [question, answer] = turn(t);
    history.push(question);
    body = [...body, question];
    const sent = await history.prepare();
    const result = await reduce(JSON.parse(JSON.stringify(body)), stateless.config);
    prefixes.held.push(JSON.stringify(sent[1]));
    prefixes.stateless.push(JSON.stringify(result.messages[1]));
    history.push(answer);
    body = [...body, answer];
  }
  const changes = (p) => p.filter((x, k) => k > 0 && x !== p[k - 1]).length;
  return {
    held: { calls: held.calls(), changes: changes(prefixes.held) },
    stateless: { calls: stateless.calls(), changes: changes(prefixes.stateless) },
    prefixes,
  };
}

test("a stateless 200-request session calls the summarizer as often as ChatHistory, same prefixes", async () => {
  const s = await session(200, new Map());
  assert.ok(s.held.calls > 3, `ChatHistory summarized ${s.held.calls} times`);
  assert.equal(s.stateless.calls, s.held.calls);
  assert.equal(s.stateless.changes, s.held.changes);
  // Byte for byte the same summary message sent, request by request.
  assert.deepEqual(s.prefixes.stateless, s.prefixes.held);
});

test("without a cache, the same stateless session summarizes on every request over the trigger", async () => {
  const s = await session(60, undefined);
  assert.ok(s.stateless.calls > 2 * s.held.calls, `${s.stateless.calls} vs ${s.held.calls}`);
});

test("an async cache (a Map behind setTimeout) serves as a Map does", async () => {
  const map = new Map();
  const cache = {
    get: async (k) => (await sleep(1), map.get(k)),
    set: async (k, v) => (await sleep(1), void map.set(k, structuredClone(v))),
  };
  const s = await session(80, cache);
  assert.equal(s.stateless.calls, s.held.calls);
  assert.deepEqual(s.prefixes.stateless, s.prefixes.held);
});

test("a cached summary: covered messages summarized, no summarizer call, the summary first", async () => {
  const cache = new Map();
  const { config: c, calls } = config({ summaryCache: cache });
  let body = [{ role: "system", content: "You help with gardening." }];
  for (let t = 0; t < 30; t++) body.push(...turn(t));
  body.push(turn(30)[0]);
  const first = await reduce(body, c);
  assert.equal(calls(), 1);
  assert.ok(cache.size >= 2);
  body.push(turn(30)[1], turn(31)[0]);
  const again = await reduce(JSON.parse(JSON.stringify(body)), c);
  assert.equal(calls(), 1);
  assert.equal(JSON.stringify(again.summary), JSON.stringify(first.summary));
  assert.deepEqual(again.summarized, first.summarized);
  assert.equal(again.messages[1], again.summary);
  assert.equal(again.events[0].type, "summarize");
  assert.equal(again.events[0].cached, true);
  assert.equal(again.events[0].summarizerCalls, 0);
  // Every input index once.
  const all = [...again.kept, ...again.dropped, ...again.summarized].sort((a, b) => a - b);
  assert.deepEqual(all, body.map((_, i) => i));
  assert.equal(again.tokensAfter < again.tokensBefore, true);
});

test("a cache that throws or rejects is a cache that misses", async () => {
  for (const cache of [
    { get() { throw new Error("down"); }, set() { throw new Error("down"); } },
    { get: async () => { throw new Error("down"); }, set: async () => { throw new Error("down"); } },
  ]) {
    const s = await session(40, cache);
    const plain = await session(40, undefined);
    assert.equal(s.stateless.calls, plain.stateless.calls);
  }
});

test("a stale or mismatched entry is ignored", async () => {
  const map = new Map();
  await session(40, map);
  // Entries of another shape, another digest, a summary of other messages.
  const tampered = new Map();
  for (const [k, v] of map) {
    tampered.set(k, Array.isArray(v) ? v : { ...v, digest: (v.digest ^ 1) >>> 0 });
  }
  const a = await session(40, tampered);
  const plain = await session(40, new Map());
  assert.equal(a.stateless.calls, plain.stateless.calls);
  // A summary of another session does not match this one's messages.
  const other = new Map(map);
  const { config: c, calls } = config({ summaryCache: other });
  const body = [{ role: "system", content: "You help with cooking." }];
  for (let t = 0; t < 20; t++) body.push(...turn(t));
  body.push(turn(20)[0]);
  const r = await reduce(body, c);
  assert.equal(calls(), 1);
  assert.equal(r.events[0].cached, undefined);
});

test("summaryCache must have get and set", async () => {
  await assert.rejects(reduce([{ role: "user", content: "hi" }], { maxTokens: 10, strategy: "summarize", summarizer: () => "x", summaryCache: {} }),
    (e) => e.code === "INVALID_CONFIG" && e.field === "summaryCache");
  await assert.rejects(reduce([{ role: "user", content: "hi" }], { maxTokens: 10, strategy: "summarize", summarizer: () => "x", summaryCache: 3 }),
    (e) => e.code === "INVALID_CONFIG" && e.field === "summaryCache");
});
