// examples/cloudflare-agent under `wrangler dev` (workerd) on 127.0.0.1: an AIChatAgent
// (Cloudflare Agents) whose model calls go through chat-history-reducer/ai-sdk's middleware,
// with its offloads in the agent's Durable Object storage and the context_reload tool, and
// the example's stub model (MODEL=stub). The chat is driven over the agent's WebSocket as
// useAgentChat drives it (cf_agent_use_chat_request frames).
//
//   CHR_TARBALL=build/chat-history-reducer-0.1.0.tgz node --test js-tests/e2e/agent.test.mjs
//   (bash scripts/e2e.sh agent; Node 20 needs --experimental-websocket, which e2e.sh passes)
//
// The example's dependencies (agents, @cloudflare/ai-chat, ai, wrangler) are installed in
// examples/cloudflare-agent by scripts/setup.sh (npm registry); here they are hard-linked
// into a scratch copy of the example, the packed package is installed over them offline,
// and wrangler runs with every phone-home off and pointed at a local sentinel.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { REPO, BUILD, pkgDir, importNode, freePort, run } from "./helpers.mjs";

const EXAMPLE = join(REPO, "examples", "cloudflare-agent");
const PROJECT = join(BUILD, "e2e", "cloudflare-agent");
const STATE = join(PROJECT, "state");
const MAX_TOKENS = 3000;
const AGENT = "alice";

let lib;
let sentinel; // records anything wrangler tries to reach beyond the worker: none expected
const offsite = [];
let wrangler;
let wranglerLog = "";
let port;
let base;

// A log of the kind a user pastes: large enough (≈ 2,400 tokens) to be offloaded once the
// conversation outgrows MAX_TOKENS.
const LOG =
  "Here is the gateway log from last night:\n" +
  Array.from({ length: 60 }, (_, i) =>
    `2026-11-2${i % 10}T10:${String(i % 60).padStart(2, "0")}:00Z api-gateway[${1000 + i}] WARN upstream timeout after 30s on /v1/orders/${7000 + i} (retry ${i % 3})`,
  ).join("\n");
const question = (n) => `Question ${n}: what should we check first in the gateway, and which of the retries look suspicious to you?`;

// ---- the scratch project and wrangler --------------------------------------------------

function tarball() {
  if (process.env.CHR_TARBALL) return resolve(process.env.CHR_TARBALL);
  const dir = join(BUILD, "e2e", "agent-tarball");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: pkgDir() });
  return join(dir, readdirSync(dir).find((f) => f.endsWith(".tgz")));
}

async function makeProject() {
  if (!existsSync(join(EXAMPLE, "node_modules", ".bin", "wrangler"))) {
    throw new Error("examples/cloudflare-agent/node_modules is missing: bash scripts/setup.sh npm");
  }
  rmSync(PROJECT, { recursive: true, force: true });
  mkdirSync(PROJECT, { recursive: true });
  for (const f of ["package.json", "package-lock.json", "wrangler.jsonc", "src"]) cpSync(join(EXAMPLE, f), join(PROJECT, f), { recursive: true });
  // Hard links (the tree is 300 MB), except what npm rewrites here: its record of the tree,
  // and the package under test, which it must install afresh from the tarball.
  const modules = join(PROJECT, "node_modules");
  try {
    execFileSync("cp", ["-al", join(EXAMPLE, "node_modules"), modules], { stdio: "pipe" });
  } catch {
    rmSync(modules, { recursive: true, force: true });
    execFileSync("cp", ["-a", join(EXAMPLE, "node_modules"), modules]); // another file system
  }
  rmSync(join(modules, "chat-history-reducer"), { recursive: true, force: true });
  const record = join(modules, ".package-lock.json");
  if (existsSync(record)) {
    const text = readFileSync(record);
    rmSync(record);
    writeFileSync(record, text);
  }
  const pack = tarball();
  const installed = await run("npm", ["install", "--offline", "--no-save", "--no-audit", "--no-fund", "--loglevel=error", pack], {
    cwd: PROJECT,
    env: { ...process.env, npm_config_update_notifier: "false" },
  });
  assert.equal(installed.code, 0, installed.stderr);
  // The installed package is the tarball's, file for file.
  const unpacked = join(PROJECT, "unpacked");
  mkdirSync(unpacked);
  execFileSync("tar", ["-xzf", pack, "-C", unpacked]);
  const files = (dir) => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath ?? e.path, e.name))).sort();
  const shipped = files(join(unpacked, "package"));
  assert.deepEqual(files(join(modules, "chat-history-reducer")), shipped);
  for (const f of shipped.filter((f) => f !== "package.json")) {
    assert.ok(readFileSync(join(unpacked, "package", f)).equals(readFileSync(join(modules, "chat-history-reducer", f))), `${f} is the tarball's`);
  }
}

/** Stands in for the internet: an HTTP proxy and npm registry that records and refuses. */
function startSentinel() {
  const server = createServer((req, res) => {
    offsite.push(`${req.method} ${req.url}`);
    res.writeHead(502).end();
  });
  server.on("connect", (req, socket) => {
    offsite.push(`CONNECT ${req.url}`);
    socket.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok(server)));
}

function wranglerEnv() {
  const local = `http://127.0.0.1:${sentinel.address().port}`;
  return {
    ...process.env,
    CI: "true",
    NO_COLOR: "1",
    WRANGLER_SEND_METRICS: "false",
    WRANGLER_SEND_ERROR_REPORTS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false", // no https://workers.cloudflare.com/cf.json
    WRANGLER_HIDE_BANNER: "true", // the banner asks the registry for a newer wrangler
    npm_config_registry: `${local}/`, // where wrangler's update check would ask
    HTTP_PROXY: local,
    HTTPS_PROXY: local,
    NO_PROXY: "127.0.0.1,localhost",
    XDG_CONFIG_HOME: join(PROJECT, "config"),
  };
}

async function startWrangler() {
  wranglerLog = "";
  // Its own process group, so that stopping it stops the workerd it starts.
  wrangler = spawn(
    join(PROJECT, "node_modules", ".bin", "wrangler"),
    ["dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", STATE, "--var", "MODEL:stub", "--var", `MAX_TOKENS:${MAX_TOKENS}`, "--show-interactive-dev-session=false"],
    { cwd: PROJECT, env: wranglerEnv(), stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  wrangler.stdout.on("data", (d) => (wranglerLog += d));
  wrangler.stderr.on("data", (d) => (wranglerLog += d));
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/`);
      if (r.status === 404 && (await r.text()) === "Not found") return; // the worker's own 404
    } catch {}
    if (wrangler.exitCode !== null) throw new Error(`wrangler exited (${wrangler.exitCode}):\n${wranglerLog}`);
    if (Date.now() > until) throw new Error(`wrangler dev did not answer within 60 s:\n${wranglerLog}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function stopWrangler() {
  if (!wrangler || wrangler.exitCode !== null) return;
  const exited = new Promise((r) => wrangler.once("exit", r));
  process.kill(-wrangler.pid, "SIGTERM");
  const timer = setTimeout(() => process.kill(-wrangler.pid, "SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
  // workerd leaves with it: the port is free again
  for (let i = 0; i < 50; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}/`);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("workerd still answers after wrangler stopped");
}

before(async () => {
  if (typeof WebSocket !== "function") throw new Error("no WebSocket in this Node: run with --experimental-websocket (Node 20) or Node ≥ 22");
  lib = await importNode();
  sentinel = await startSentinel();
  await makeProject();
  port = await freePort();
  base = `127.0.0.1:${port}/agents/chat-agent`;
  await startWrangler();
});

after(async () => {
  await stopWrangler();
  await new Promise((r) => (sentinel ? sentinel.close(r) : r()));
});

// ---- the agent's protocol --------------------------------------------------------------

const getJson = async (name, path) => {
  const r = await fetch(`http://${base}/${name}/${path}`);
  assert.equal(r.status, 200, `${path}: ${r.status}`);
  return r.json();
};
const modelCalls = (name = AGENT) => getJson(name, "model-calls");
const offloads = (name = AGENT) => getJson(name, "offloads");
const transcript = (name = AGENT) => getJson(name, "get-messages");

let seq = 0;
/**
 * One chat turn as useAgentChat sends it: the transcript so far and the new user message in
 * a cf_agent_use_chat_request frame over the agent's WebSocket; resolves when the response
 * stream is done, to the UI message stream chunks it carried.
 */
async function chat(text, name = AGENT) {
  const messages = [...(await transcript(name)), { id: `user-${++seq}`, role: "user", parts: [{ type: "text", text }] }];
  const ws = new WebSocket(`ws://${base}/${name}`);
  const frames = [];
  ws.addEventListener("message", (e) => frames.push(JSON.parse(e.data)));
  await new Promise((ok, fail) => {
    ws.addEventListener("open", ok, { once: true });
    ws.addEventListener("error", () => fail(new Error(`WebSocket to ${base}/${name} failed:\n${wranglerLog}`)), { once: true });
  });
  const id = `request-${seq}`;
  ws.send(JSON.stringify({ type: "cf_agent_use_chat_request", id, init: { method: "POST", body: JSON.stringify({ messages, trigger: "submit-message" }) } }));
  const until = Date.now() + 20_000;
  const mine = () => frames.filter((f) => f.type === "cf_agent_use_chat_response" && f.id === id);
  while (!mine().some((f) => f.done || f.error)) {
    if (Date.now() > until) throw new Error(`no answer to "${text.slice(0, 40)}" within 20 s:\n${wranglerLog}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  ws.close();
  const errors = mine().filter((f) => f.error);
  if (errors.length > 0) await new Promise((r) => setTimeout(r, 1_000)); // wrangler logs the error after the frame
  assert.deepEqual(errors, [], `the turn failed:\n${wranglerLog}`);
  return mine().filter((f) => f.body).map((f) => JSON.parse(f.body));
}

const textOf = (m) => (typeof m.content === "string" ? m.content : m.content.filter((p) => p.type === "text").map((p) => p.text).join(""));
const idIn = (s) => s.match(/ctx_[0-9a-f]{16}/)?.[0];

// ---- the tests -------------------------------------------------------------------------

let offloadId;

test("over budget, the model is sent a reduced prompt and the original goes to the Durable Object's storage", async () => {
  await chat(LOG);
  let calls = await modelCalls();
  assert.equal(calls.length, 1);
  assert.equal(textOf(calls[0].prompt[1]), LOG, "under budget, the model sees the log as sent");
  assert.deepEqual(calls[0].tools.map((t) => t.name), ["context_reload"], "the reload tool is registered");
  assert.deepEqual(await offloads(), {}, "nothing offloaded yet");

  let reducedAt;
  for (let n = 1; n <= 12 && reducedAt === undefined; n++) {
    await chat(question(n));
    calls = await modelCalls();
    if (idIn(JSON.stringify(calls.at(-1).prompt))) reducedAt = n;
  }
  assert.ok(reducedAt > 1, `the log was offloaded after a few turns (at ${reducedAt})`);
  const before = calls.at(-2).prompt;
  const prompt = calls.at(-1).prompt;

  // what the agent keeps is everything; what the model saw fits
  const kept = await transcript();
  assert.equal(kept.length, 2 * (reducedAt + 1), "the agent keeps every message");
  assert.equal(kept[0].parts[0].text, LOG, "the agent's own history is untouched");
  // The middleware reserves the tools' schemas' tokens (counted as it counts them) and
  // keeps the messages within what is left.
  const tokens = (prompt) => lib.estimateTokens(prompt, { format: "vercel" });
  const budget = MAX_TOKENS - lib.estimateTokens({ role: "system", content: JSON.stringify([calls[0].tools]) }, { format: "vercel" });
  const reply = kept.at(-3).parts.filter((p) => p.type === "text").map((p) => p.text).join("");
  const unreduced = [...before, { role: "assistant", content: [{ type: "text", text: reply }] }, { role: "user", content: [{ type: "text", text: question(reducedAt) }] }];
  assert.ok(tokens(unreduced) > budget, `unreduced, the prompt (${tokens(unreduced)} tokens) would be over ${budget}`);
  for (const [k, call] of calls.entries()) {
    assert.ok(tokens(call.prompt) <= budget, `call ${k}: ${tokens(call.prompt)} tokens ≤ ${budget}`);
  }
  assert.equal(textOf(before[1]), LOG, "the call before was not reduced");

  // the log became a preview with an id; the rest of the prompt is as sent
  assert.deepEqual(prompt[0], { role: "system", content: "You are a helpful assistant. Answer briefly." });
  const preview = textOf(prompt[1]);
  offloadId = idIn(preview);
  assert.ok(offloadId, preview);
  assert.match(preview, /call context_reload/);
  assert.ok(preview.length < LOG.length / 5, `a preview (${preview.length} characters)`);
  assert.ok(!JSON.stringify(prompt).includes(LOG.split("\n")[30]), "the log's body is not in the prompt");
  assert.equal(textOf(prompt.at(-1)), question(reducedAt), "the new question is last");

  // the original is in the object's storage under that id, and only there
  const stored = await offloads();
  assert.deepEqual(Object.keys(stored), [offloadId]);
  assert.equal(stored[offloadId].length, 1);
  assert.equal(stored[offloadId][0].role, "user");
  assert.equal(textOf(stored[offloadId][0]), LOG, "the original, whole");

  // a later turn keeps the same preview (the id comes from the content): the prefix stays put
  await chat(question(99));
  const next = (await modelCalls()).at(-1).prompt;
  assert.deepEqual(next[1], prompt[1]);
  assert.deepEqual(Object.keys(await offloads()), [offloadId], "nothing new offloaded");
});

test("after wrangler dev restarts, a later request's context_reload call gets the original from storage", async () => {
  assert.ok(offloadId, "the first test got no offload to reload");
  await stopWrangler();
  await startWrangler(); // the same --persist-to: the object's storage is on disk
  assert.deepEqual(Object.keys(await offloads()), [offloadId], "the offload outlived the process");

  const chunks = await chat("Please reload the gateway log and tell me what is in it.");
  const input = chunks.find((c) => c.type === "tool-input-available");
  assert.equal(input?.toolName, "context_reload", JSON.stringify(chunks));
  assert.deepEqual(input.input, { id: offloadId }, "the model asked for the id its preview showed");
  const output = chunks.find((c) => c.type === "tool-output-available");
  const stored = (await offloads())[offloadId];
  assert.deepEqual(output.output, stored, "the tool answered with the originals from storage");
  assert.equal(textOf(output.output[0]), LOG);

  // the agent persisted the tool call with its output, and the model answered after it
  const last = (await transcript()).at(-1);
  const part = last.parts.find((p) => p.type === "tool-context_reload");
  assert.equal(part.state, "output-available");
  assert.deepEqual(part.output, stored);
  const calls = await modelCalls();
  assert.equal(calls.at(-1).prompt.at(-1).role, "tool", "a second step ran with the tool's result");
  assert.match(last.parts.filter((p) => p.type === "text").map((p) => p.text).join(""), /^context_reload answered with \d+ characters/);
});

test("the model is then shown the reloaded original", async () => {
  const calls = await modelCalls();
  const result = calls.at(-1).prompt.at(-1).content.find((p) => p.type === "tool-result");
  assert.ok(JSON.stringify(result.output).includes(JSON.stringify(LOG.split("\n")[30]).slice(1, -1)), JSON.stringify(result.output).slice(0, 300));
});

test("an id the store does not have is answered with a sentence the model can act on", async () => {
  const ids = Object.keys(await offloads());
  const chunks = await chat("Please reload ctx_0123456789abcdef as well.");
  assert.deepEqual(chunks.find((c) => c.type === "tool-input-available")?.input, { id: "ctx_0123456789abcdef" });
  const output = chunks.find((c) => c.type === "tool-output-available").output;
  assert.match(output, /^No offloaded content has the id "ctx_0123456789abcdef"/);
  assert.deepEqual(Object.keys(await offloads()), ids, "nothing new offloaded");
});

test("each conversation is its own object with its own storage", async () => {
  const ids = Object.keys(await offloads());
  await chat("Hello, a short conversation.", "bob");
  assert.deepEqual(await offloads("bob"), {});
  assert.equal((await modelCalls("bob")).length, 1);
  assert.equal((await transcript("bob")).length, 2);
  assert.deepEqual(Object.keys(await offloads()), ids);
});

test("wrangler bundled the package's workerd entry with its .wasm as a CompiledWasm module", async () => {
  const out = join(PROJECT, "dry-run");
  const dry = await run(join(PROJECT, "node_modules", ".bin", "wrangler"), ["deploy", "--dry-run", "--outdir", out], { cwd: PROJECT, env: wranglerEnv() });
  assert.equal(dry.code, 0, `${dry.stdout}${dry.stderr}`);
  const wasm = readdirSync(out).filter((f) => f.endsWith(".wasm"));
  assert.equal(wasm.length, 1, `modules: ${readdirSync(out)}`);
  assert.match(wasm[0], /chat_history_reducer_bg\.wasm$/);
  const bundle = readFileSync(join(out, "server.js"), "utf8");
  assert.ok(bundle.includes(`from "./${wasm[0]}"`), "the bundle imports the .wasm module");
  assert.match(bundle, /initSync\(\{ module: \w+ \}\)/, "the workerd entry instantiates it at import");
});

test("nothing beyond 127.0.0.1 was contacted, and wrangler logged no errors", () => {
  assert.deepEqual(offsite, [], "requests that reached the sentinel (proxy / registry)");
  assert.doesNotMatch(wranglerLog, /✘|\[ERROR\]|uncaught/i, wranglerLog);
});
