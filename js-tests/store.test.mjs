// config.store (every offload written before the result returns, so that a later step or
// request can reload it) and config.reservedTokens (what the request spends outside the
// messages comes off the budget): SPEC §4, §11.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChatHistory, ReduceError, reduce, reduceSync, shouldReduce } from "chat-history-reducer";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** An agent history whose tool results are large: progressive offloads them. */
function agent(turns) {
  const m = [{ role: "system", content: "You are an agent." }];
  for (let k = 0; k < turns; k++) {
    m.push({ role: "user", content: `question ${k}` });
    m.push({ role: "assistant", content: null, tool_calls: [{ id: `c${k}`, type: "function", function: { name: "read_file", arguments: `{"n":${k}}` } }] });
    m.push({ role: "tool", tool_call_id: `c${k}`, content: `file ${k}: ` + "lorem ipsum dolor sit amet ".repeat(400) });
    m.push({ role: "assistant", content: `answer ${k}` });
  }
  return m;
}

const config = { strategy: "progressive", maxTokens: 6000, minToolRun: 6 };

test("a Map as the store: every offload of reduceSync is in it when the result returns", () => {
  const store = new Map();
  const r = reduceSync(agent(6), { ...config, store });
  const ids = Object.keys(r.offloaded);
  assert.ok(ids.length > 0, "something was offloaded");
  assert.deepEqual([...store.keys()].sort(), ids.sort());
  for (const id of ids) assert.deepEqual(store.get(id), r.offloaded[id]);
  assert.equal(r.stored, undefined, "nothing to wait for");
});

test("an asynchronous store: reduce resolves after every write; reduceSync hands the writes as result.stored", async () => {
  const written = new Map();
  const store = { get: async (id) => written.get(id), set: async (id, m) => { await sleep(5); written.set(id, m); } };
  const r = await reduce(agent(6), { ...config, store });
  assert.ok(Object.keys(r.offloaded).length > 0);
  for (const id of Object.keys(r.offloaded)) assert.deepEqual(await store.get(id), r.offloaded[id], id);
  written.clear();
  const s = reduceSync(agent(6), { ...config, store });
  assert.ok(s.stored instanceof Promise);
  await s.stored;
  for (const id of Object.keys(s.offloaded)) assert.ok(written.has(id), id);
});

test("a later request reloads what an earlier one offloaded, through the store alone", async () => {
  const store = new Map();
  const first = await reduce(agent(6), { ...config, store });
  const preview = first.messages.find((m) => typeof m.content === "string" && m.content.startsWith("[offloaded"));
  const id = /ctx_[0-9a-f]{16}/.exec(preview.content)[0];
  // (Another request: only the store is shared.)
  assert.equal(store.get(id)[0].tool_call_id, preview.tool_call_id);
  assert.match(store.get(id)[0].content, /^file \d+: lorem/);
});

test("what the store throws or rejects reaches the caller as itself; a store without get and set is INVALID_CONFIG", async () => {
  const boom = new Error("disk full");
  assert.throws(() => reduceSync(agent(6), { ...config, store: { get() {}, set() { throw boom; } } }), (e) => e === boom);
  await assert.rejects(reduce(agent(6), { ...config, store: { get() {}, set: async () => { throw boom; } } }), (e) => e === boom);
  for (const store of [{}, { get() {} }, { set() {} }, 5, "map"]) {
    assert.throws(() => reduceSync(agent(2), { ...config, store }),
      (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === "store", JSON.stringify(store));
  }
});

test("ChatHistory writes its offloads into the store too", async () => {
  const store = new Map();
  const h = new ChatHistory({ ...config, store }, agent(6));
  await h.prepare();
  const ids = h.events.length > 0 ? [...store.keys()] : [];
  assert.ok(ids.length > 0);
  for (const id of ids) assert.deepEqual(store.get(id), h.reload(id));
});

test("reservedTokens comes off the budget: the messages get maxTokens less what is reserved", () => {
  const m = agent(3);
  const total = reduceSync(m, { maxTokens: 1e9 }).tokensBefore;
  const maxTokens = Math.ceil(total * 1.2);
  assert.equal(shouldReduce(m, { maxTokens }), false);
  const reservedTokens = Math.ceil(total * 0.4);
  assert.equal(shouldReduce(m, { maxTokens, reservedTokens }), true, "tool schemas push it over");
  const r = reduceSync(m, { maxTokens, reservedTokens });
  assert.ok(r.tokensAfter <= Math.floor(maxTokens * 0.8) - reservedTokens, `${r.tokensAfter}`);
  assert.throws(() => reduceSync(m, { maxTokens: 1000, reservedTokens: 900 }),
    (e) => e.code === "INVALID_CONFIG" && e.field === "reservedTokens" && /no room/.test(e.message));
});
