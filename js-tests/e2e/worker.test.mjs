// examples/worker under a real workerd: a Durable Object per conversation keeps a
// ChatHistory, reduces it (summarizing with the model) before each call to a stub model on
// 127.0.0.1, and persists it across requests and evictions.
//
//   CHR_PKG=/path/to/chat-history-reducer node --test js-tests/e2e/worker.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { REPO, BUILD, BIN, pkgDir, importNode, freePort } from "./helpers.mjs";
import { writeConfig } from "../../examples/worker/config.mjs";

const MAX_TOKENS = 600;
const TARGET = Math.floor(0.8 * MAX_TOKENS);
let lib;
let model; // the stub model server
const seen = []; // every request the stub model got: { kind, messages, reply }
let workerd;
let workerdLog = "";
let base;

// ---- a stub OpenAI-compatible model ----------------------------------------------------

function modelReply(messages) {
  const system = messages[0]?.content ?? "";
  if (system.startsWith("Summarize")) {
    // single mode: the summary so far comes along in the prompt and is folded in
    const earlier = messages[1].content.match(/questions ([\d, ]+) about/)?.[1].split(", ") ?? [];
    const questions = [...earlier, ...[...messages[1].content.matchAll(/^user: Question (\d+)/gm)].map((m) => m[1])];
    return { kind: "summary", content: `The user asked questions ${questions.join(", ")} about trip planning; each was answered.` };
  }
  const last = messages.at(-1).content;
  if (last.includes("PLEASE FAIL")) return null;
  return {
    kind: "chat",
    content: `Answer to "${last.slice(0, 24)}": pack light, book early, and keep a day free for whatever you discover there.`,
  };
}

function startModel() {
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const { messages } = JSON.parse(body);
    const out = req.method === "POST" && req.url === "/v1/chat/completions" ? modelReply(messages) : undefined;
    if (!out) {
      seen.push({ kind: "failed", messages });
      res.writeHead(out === null ? 500 : 404, { "content-type": "application/json" }).end('{"error":{"message":"stub failure"}}');
      return;
    }
    const message = { role: "assistant", content: out.content };
    seen.push({ kind: out.kind, messages, reply: message });
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
      id: `chatcmpl-${seen.length}`,
      object: "chat.completion",
      choices: [{ index: 0, message, finish_reason: "stop" }],
      usage: { prompt_tokens: lib.estimateTokens(messages), completion_tokens: lib.estimateTokens(message) },
    }));
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok(server)));
}

// ---- workerd ---------------------------------------------------------------------------

async function waitForHealth(url, ms) {
  const until = Date.now() + ms;
  for (;;) {
    try {
      const r = await fetch(`${url}/health`);
      if (r.ok) return;
    } catch {}
    if (workerd.exitCode !== null) throw new Error(`workerd exited (${workerd.exitCode}):\n${workerdLog}`);
    if (Date.now() > until) throw new Error(`workerd did not answer within ${ms} ms:\n${workerdLog}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  lib = await importNode();
  model = await startModel();
  const port = await freePort();
  const config = writeConfig({
    out: join(BUILD, "e2e", "worker", "config.capnp"),
    pkgDir: pkgDir(),
    port,
    modelUrl: `http://127.0.0.1:${model.address().port}/v1/chat/completions`,
    maxTokens: MAX_TOKENS,
    keepLast: 2,
  });
  workerd = spawn(BIN("workerd"), ["serve", config], { stdio: ["ignore", "pipe", "pipe"], cwd: REPO });
  workerd.stdout.on("data", (d) => (workerdLog += d));
  workerd.stderr.on("data", (d) => (workerdLog += d));
  base = `http://127.0.0.1:${port}`;
  await waitForHealth(base, 20_000);
});

after(async () => {
  if (workerd && workerd.exitCode === null) {
    const exited = new Promise((r) => workerd.once("exit", r));
    workerd.kill("SIGTERM");
    const timer = setTimeout(() => workerd.kill("SIGKILL"), 3_000);
    await exited;
    clearTimeout(timer);
  }
  await new Promise((r) => (model ? model.close(r) : r()));
});

const post = async (path, body) => {
  const r = await fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
};
const get = async (path) => {
  const r = await fetch(`${base}${path}`);
  return { status: r.status, body: await r.json() };
};

const question = (n) => ({
  role: "user",
  content: `Question ${n}: I am planning trip number ${n} with ${n + 1} friends; what should we pack, where should we stay and how early should we book the trains?`,
});

/** Sends one turn and checks what every turn must satisfy. */
async function turn(id, n, prev) {
  const before = seen.length;
  const { status, body } = await post(`/chat/${id}`, { message: question(n) });
  assert.equal(status, 200, JSON.stringify(body));
  const chats = seen.slice(before).filter((s) => s.kind === "chat");
  assert.equal(chats.length, 1, "one model call per turn");
  assert.deepEqual(body.reply, chats[0].reply, "the model's reply is returned");
  assert.deepEqual(body.messages, chats[0].messages, "the model saw exactly the reduced history");
  assert.deepEqual(body.messages[0], { role: "system", content: "You are a helpful assistant. Answer briefly." });
  assert.deepEqual(body.messages.at(-1), question(n), "the new user message is last");
  const tokens = lib.estimateTokens(body.messages);
  assert.equal(body.tokens, tokens, "workerd and Node count the same tokens");
  assert.ok(tokens <= MAX_TOKENS, `turn ${n}: ${tokens} tokens ≤ maxTokens ${MAX_TOKENS}`);
  if (body.reduced) assert.ok(tokens <= TARGET, `turn ${n}: reduced to ${tokens} ≤ target ${TARGET}`);
  if (prev && !body.reduced) {
    // not reduced this turn: the prompt is the previous one plus the reply and the new question
    assert.deepEqual(body.messages, [...prev.messages, prev.reply, question(n)], `turn ${n}: the prefix stays stable`);
  }
  return body;
}

test("a conversation over many turns stays under the budget, summarized by the model", async () => {
  let prev = null;
  const reducedAt = [];
  for (let n = 1; n <= 14; n++) {
    const body = await turn("alice", n, prev);
    assert.equal(body.originalCount, 1 + 2 * n, "every message ever pushed is kept in `original`");
    assert.equal(body.restoredFromStorage, false);
    if (body.reduced) reducedAt.push(n);
    prev = body;
  }
  if (process.env.E2E_DEBUG) console.log({ reducedAt, stats: prev.stats, messages: prev.messages.map((m) => `${m.role}: ${m.content.slice(0, 70)}`), tokens: prev.tokens });
  assert.ok(reducedAt.length >= 1, "the history was reduced");
  assert.ok(reducedAt.length < 5, `not reduced every turn (at ${reducedAt})`);
  assert.equal(reducedAt[0] > 2, true);
  const summaries = seen.filter((s) => s.kind === "summary");
  assert.equal(prev.stats.summarizerCalls, summaries.length, "each reduction asked the model for a summary");
  assert.equal(prev.stats.reductions, reducedAt.length);
  assert.ok(prev.stats.tokensSaved > 0);
  const summary = prev.messages.find((m) => typeof m.content === "string" && m.content.includes("<conversation-summary>"));
  assert.ok(summary, "the reduced history carries the summary");
  // the last summary folds in the one before it (single mode passes previousSummary)
  const covered = summary.content.match(/The user asked questions ([\d, ]+) about trip planning/)[1].split(", ").map(Number);
  assert.deepEqual(covered, Array.from({ length: covered.length }, (_, i) => i + 1), "questions 1…k, none lost");
  assert.ok(covered.length >= 5);
  assert.deepEqual(prev.messages[2], question(covered.length + 1), "the history resumes right after what the summary covers");
  assert.equal(prev.messages.indexOf(summary), 1, "the summary sits right after the system prompt");
  assert.ok(prev.events.some((e) => e.type === "summarize"));
});

test("the state is in the Durable Object's storage: it survives an eviction", async () => {
  const state = await get("/chat/alice");
  assert.equal(state.status, 200);
  assert.equal(state.body.kind, "chat-history-reducer/ChatHistory");
  assert.equal(state.body.original.length, 29);
  const ev = await post("/chat/alice/evict", {});
  assert.deepEqual(ev.body, { evicted: true });
  const prevMessages = state.body.messages;
  const body = await turn("alice", 15, null);
  assert.equal(body.restoredFromStorage, true, "the history came back from storage");
  assert.equal(body.originalCount, 31);
  if (!body.reduced) assert.deepEqual(body.messages.slice(0, -1), prevMessages, "the same working history, continued");
  assert.equal(body.stats.reductions, state.body.stats.reductions + (body.reduced ? 1 : 0));
});

test("conversations are separate objects", async () => {
  const body = await turn("bob", 1, null);
  assert.equal(body.originalCount, 3);
  assert.equal(body.messages.length, 2);
  assert.equal(body.stats.reductions, 0);
  const alice = await get("/chat/alice");
  assert.equal(alice.body.original.length, 31);
});

test("bad requests get a 400 with the ReduceError code and change nothing", async () => {
  const bad = await post("/chat/bob", { message: { role: "wizard", content: "abracadabra" } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.code, "INVALID_MESSAGE");
  assert.match(bad.body.error, /known format/);
  const notJson = await post("/chat/bob", "{nope");
  assert.equal(notJson.status, 400);
  const noMessage = await post("/chat/bob", { text: "hi" });
  assert.equal(noMessage.status, 400);
  const bob = await get("/chat/bob");
  assert.equal(bob.body.original.length, 3, "nothing was stored");
  assert.equal((await get("/nowhere")).status, 404);
});

test("a failing model call does not corrupt the conversation", async () => {
  const failing = await post("/chat/bob", { message: { role: "user", content: "PLEASE FAIL now" } });
  assert.equal(failing.status, 502);
  assert.match(failing.body.error, /model answered 500/);
  const body = await turn("bob", 2, null);
  assert.equal(body.originalCount, 5, "the failed turn left no trace");
  assert.ok(!body.messages.some((m) => m.content === "PLEASE FAIL now"));
});

test("workerd was configured to reach 127.0.0.1 only and logged no errors, nor warnings", () => {
  const config = readFileSync(join(BUILD, "e2e", "worker", "config.capnp"), "utf8");
  assert.match(config, /name = "internet", network = \(allow = \["127\.0\.0\.1\/32"\]\)/);
  assert.match(config, /name = "chat-history-reducer", esModule = embed ".*workerd\.js"/);
  assert.match(config, /wasm = embed ".*chat_history_reducer_bg\.wasm"/);
  assert.doesNotMatch(workerdLog, /uncaught|error/i, workerdLog);
  // (workerd prints console.warn: wasm-bindgen's, for initSync called without { module }.)
  assert.doesNotMatch(workerdLog, /deprecated|warn/i, workerdLog);
});
