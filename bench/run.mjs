// `make bench`: the benchmark suite of issue 4, in one Node process.
//
//   node bench/run.mjs                 full run (100 … 100,000 messages), ~2–3 minutes on 2 cores
//   BENCH_QUICK=1 node bench/run.mjs   CI run (100 … 10,000 messages, fewer rounds), < 30 s
//   CHR_PKG=build/pkg-x node bench/run.mjs   another build of the package (a directory or
//                                       its node.js; default: ../pkg/node.js from this file)
//
// Contenders trim a generated agent conversation (generate.mjs) to 25% of its estimated
// tokens. Every size runs the contenders in interleaved rounds (one call of each per round,
// in a rotating order, a young-generation GC before each sample) and reports medians, so a slow phase of the
// machine hits every contender alike. Then the scenarios of issue 4: repeated turns, the
// summarizer's call count, the .wasm's size, start-up, and memory after many calls.
// Results also go to bench/results/latest.json.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { gzipSync } from "node:zlib";
import { trimMessages } from "@langchain/core/messages";
import { pruneMessages } from "ai";
import { describeConversation, generateConversation, generateTurns } from "./generate.mjs";
import { toFormat, toLangChain, toModelMessages } from "./formats.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const QUICK = process.env.BENCH_QUICK === "1" || process.env.BENCH_QUICK === "true";
const SEED = Number(process.env.BENCH_SEED ?? 42);
const SHARE = 0.25; // trim to 25% of the conversation's estimated tokens
const SIZE_TARGET = 77_000; // the .wasm, Node's zlib at level 9 (docs/performance.md, "The size, restated")

const P = QUICK
  ? {
    sizes: [100, 1_000, 10_000], rounds: { 100: 21, 1_000: 11, 10_000: 5 }, sampleMs: 1,
    langchainBudgetMs: 4_000, langchainSkipMs: 5_000,
    turns: 50, appliedTurns: 10, summaryTurns: 200, startups: 3, memoryCalls: 20_000,
    formatsMessages: 1_000, formatRounds: 5,
  }
  : {
    sizes: [100, 1_000, 10_000, 100_000], rounds: { 100: 61, 1_000: 41, 10_000: 15, 100_000: 7 }, sampleMs: 2,
    langchainBudgetMs: 15_000, langchainSkipMs: 30_000,
    turns: 200, appliedTurns: 50, summaryTurns: 200, startups: 7, memoryCalls: 100_000,
    formatsMessages: 10_000, formatRounds: 9,
  };

// ---- the package ------------------------------------------------------------------------

function packageEntry() {
  const given = process.env.CHR_PKG;
  if (!given) return join(HERE, "../pkg/node.js");
  const path = resolve(given);
  return existsSync(path) && statSync(path).isDirectory() ? join(path, "node.js") : path;
}
const ENTRY = packageEntry();
if (!existsSync(ENTRY)) {
  console.error(`bench: no package at ${ENTRY}; build it (bash scripts/build.sh) or set CHR_PKG`);
  process.exit(1);
}
const PKG_DIR = dirname(ENTRY);
const GLUE = join(PKG_DIR, "dist/chat_history_reducer.js");
const WASM = join(PKG_DIR, "dist/chat_history_reducer_bg.wasm");
const chr = await import(pathToFileURL(ENTRY).href);

// A full GC between samples, outside the timings (the flag can be set at run time).
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");

// ---- helpers ----------------------------------------------------------------------------

const now = () => performance.now();
const median = (xs) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const ms = (x) => (x === undefined || Number.isNaN(x) ? "—" : x < 0.01 ? `${(x * 1000).toFixed(2)} µs` : x < 1 ? x.toFixed(3) : x < 10 ? x.toFixed(2) : x < 1000 ? x.toFixed(1) : x.toFixed(0));
const int = (x) => x.toLocaleString("en-US");
const pad = (s, n) => String(s).padStart(n);
const padEnd = (s, n) => String(s).padEnd(n);
let sink = 0; // keeps every result alive past its timing
const consume = (x) => { sink = (sink + (Array.isArray(x) ? x.length : x && x.messages ? x.messages.length : 1)) | 0; };

// ---- the peers --------------------------------------------------------------------------

/** Tokens of one OpenAI message the way `estimator: "length"` counts them (SPEC §3): per
 * message 3, plus ceil(length / 4) of all its texts, rounded once: role, name, content,
 * each call's id, name and arguments, the result's tool_call_id. */
function lengthTokens(m) {
  let chars = m.role.length;
  if (typeof m.content === "string") chars += m.content.length;
  if (typeof m.name === "string") chars += m.name.length;
  const calls = m.tool_calls;
  if (calls !== undefined && calls !== null) {
    for (let k = 0; k < calls.length; k++) {
      const c = calls[k];
      chars += c.id.length + c.function.name.length + c.function.arguments.length;
    }
  }
  if (typeof m.tool_call_id === "string") chars += m.tool_call_id.length;
  return 3 + Math.ceil(chars / 4);
}

/**
 * The plain loop: what an application would write by hand. Keeps the leading system
 * messages, walks back from the end summing length/4 over whole tool groups (an assistant
 * message with its tool results), always keeps the current round (from the latest user
 * message), then starts the kept part on a user message.
 */
export function plainTrim(messages, maxTokens) {
  const n = messages.length;
  let start = 0, total = 0;
  while (start < n && (messages[start].role === "system" || messages[start].role === "developer")) {
    total += lengthTokens(messages[start]);
    start++;
  }
  let cut = n, seenUser = false, i = n - 1;
  while (i >= start) {
    let j = i, group = 0;
    while (j > start && messages[j].role === "tool") group += lengthTokens(messages[j--]);
    group += lengthTokens(messages[j]);
    if (seenUser && cut < n && total + group > maxTokens) break;
    total += group;
    cut = j;
    if (messages[j].role === "user") seenUser = true;
    i = j - 1;
  }
  while (cut < n && messages[cut].role !== "user") cut++;
  const out = messages.slice(0, start);
  for (let k = cut; k < n; k++) out.push(messages[k]);
  return out;
}

const OPENAI_ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

/**
 * The plain loop after a check of every message (its role, content, tool calls and their
 * ids: what a reducer has to look at to report a malformed or mixed-format history instead
 * of dropping it), run on new objects: about the least a first call that validates its
 * input costs in JavaScript. The plain loop itself reads only the newest messages.
 */
export function checkedTrim(messages, maxTokens) {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m === null || typeof m !== "object") throw new Error(`message ${i} is not an object`);
    const role = m.role, content = m.content;
    if (!OPENAI_ROLES.has(role) || m.type !== undefined || m.parts !== undefined) throw new Error(`message ${i}: not an OpenAI message`);
    if (typeof content !== "string" && content !== null && content !== undefined && !Array.isArray(content)) throw new Error(`message ${i}: bad content`);
    if (role === "assistant") {
      const calls = m.tool_calls;
      if (calls !== undefined && calls !== null) {
        if (!Array.isArray(calls)) throw new Error(`message ${i}: tool_calls is not an array`);
        for (let k = 0; k < calls.length; k++) if (typeof calls[k]?.id !== "string") throw new Error(`message ${i}: a call without an id`);
      }
    } else if (role === "tool" && typeof m.tool_call_id !== "string") {
      throw new Error(`message ${i}: a tool result without tool_call_id`);
    }
  }
  return CHECKED_TRIM(messages, maxTokens);
}

/** `plainTrim` (and `lengthTokens`) compiled again for `checkedTrim`: its copies of the
 * messages have other hidden classes, which would make the plain loop's property loads
 * polymorphic and slow it (measured: 2–3× at every size) if it shared the functions. */
const CHECKED_TRIM = new Function(
  `${lengthTokens.toString()}\n${plainTrim.toString().replace(/^export /, "")}\nreturn plainTrim;`)();

/** LangChain's tokenCounter: length/4 of each message's text, the way LangChain users write
 * it. (A counter that also counts roles, ids and arguments like ours was 2–3× slower inside
 * trimMessages's quadratic loop, so the fast one is used; its budget is 25% of its own count.) */
function langchainCounter(msgs) {
  let sum = 0;
  for (let i = 0; i < msgs.length; i++) {
    const c = msgs[i].content;
    if (typeof c === "string") sum += Math.ceil(c.length / 4);
  }
  return sum;
}

const PRUNE = { reasoning: "before-last-message", toolCalls: "before-last-2-messages", emptyMessages: "remove" };

// ---- interleaved rounds -----------------------------------------------------------------

/** Runs c once on a new input (awaiting when it is async) and returns its output. */
const once = async (c) => {
  const x = c.input();
  return c.async ? await c.run(x) : c.run(x);
};

/** First call (bounds every later one), warm-up, and calls per sample so a sample lasts ≥ sampleMs. */
async function calibrate(c) {
  gc({ type: "minor" });
  const x = c.input();
  let t = now();
  c.output = c.async ? await c.run(x) : c.run(x);
  c.first = now() - t;
  const times = [];
  let spent = c.first;
  // Warm-up toward steady state (V8 optimizes a function after many calls), bounded in time.
  while (spent < 250 && times.length < 200 && c.first < 200) {
    const y = c.input();
    t = now();
    consume(c.async ? await c.run(y) : c.run(y));
    const d = now() - t;
    times.push(d);
    spent += d;
  }
  const estimate = times.length ? median(times) : c.first;
  c.perSample = Math.max(1, Math.min(5_000, Math.ceil(P.sampleMs / Math.max(estimate, 1e-4))));
  c.estimate = estimate;
}

async function sample(c) {
  const k = c.perSample;
  const inputs = Array.from({ length: k }, c.input); // made outside the timing
  gc({ type: "minor" }); // a young-generation GC only: a full gc() before every call slows the next calls
  const t = now();
  if (c.async) for (let i = 0; i < k; i++) consume(await c.run(inputs[i]));
  else for (let i = 0; i < k; i++) consume(c.run(inputs[i]));
  c.samples.push((now() - t) / k);
}

let langchainLast; // { n, median } of the previous size, to predict the next (quadratic)

async function benchSize(n) {
  const t0 = now();
  const conv = generateConversation(n, { seed: SEED });
  const shape = describeConversation(conv);
  const genMs = now() - t0;
  const tokensDefault = chr.estimateTokens(conv);
  const tokensLength = chr.estimateTokens(conv, { estimator: "length", charsPerToken: 4 });
  const budgetDefault = Math.floor(SHARE * tokensDefault);
  const budgetLength = Math.floor(SHARE * tokensLength);
  // targetTokens = maxTokens: trim to the budget itself (the default target is 0.8 × maxTokens).
  const cfgDefault = { maxTokens: budgetDefault, targetTokens: budgetDefault };
  const cfgLength = { maxTokens: budgetLength, targetTokens: budgetLength, estimator: "length", charsPerToken: 4 };

  // LangChain is quadratic: predict this size from the last one, and skip it when too slow.
  let lcSkip;
  if (langchainLast) {
    const predicted = langchainLast.median * (n / langchainLast.n) ** 2;
    if (predicted > P.langchainSkipMs) lcSkip = `skipped (>${P.langchainSkipMs / 1000} s; predicted ${(predicted / 1000).toFixed(0)} s a call)`;
  }
  const lc = lcSkip ? undefined : toLangChain(conv);
  const lcOptions = { maxTokens: lc ? Math.floor(SHARE * langchainCounter(lc)) : 0, strategy: "last", startOn: "human", includeSystem: true, allowPartial: false, tokenCounter: langchainCounter };
  const model = toModelMessages(conv);

  // reduceSync caches token counts by message object, so it runs two ways: on new message
  // objects every call (shallow copies made outside the timing: a first reduction, nothing
  // cached) and on the same objects every call (an app reducing its history again). Each
  // has its own objects, so the two estimators do not evict each other's counts.
  const copy = () => conv.map((m) => ({ ...m }));
  const sameDefault = copy(), sameLength = copy();
  // The body of the request that brought the messages (JSON.parse is timed on it).
  const body = JSON.stringify({ model: "gpt-4.1", messages: conv });
  // A chat's history of n messages that a trigger does not fire on (maxTokens far above it,
  // so it stays n messages long; whole groups of the same generator, so about n): one new
  // message pushed, then prepare(), per call. (Its first prepare() read them all; the
  // messages pushed are the conversation's next ones, new objects.)
  const { history: chatStart, next: pushed } = historyAndContinuation(n, SEED);
  const chat = new chr.ChatHistory({ maxTokens: 8 * tokensDefault }, chatStart);
  await chat.prepare();
  const same = (x) => () => x;
  // Four teams, each in interleaved rounds of its own with the plain loop beside it: the
  // readings the package keeps for the next call (120,000 messages in all: src/wasm/memo.rs)
  // do not hold two 100,000-message histories, and a call on new objects evicts the reading
  // of the same objects, as in no app that reduces its one history. Interleaved, each "same
  // objects" contender found its reading gone at 100,000 messages.
  const plainLoop = (key) => ({ key, label: "plain JS loop (length/4)", input: same(conv), run: (x) => plainTrim(x, budgetLength) });
  const contenders = [
    { team: 0, key: "ours", label: "reduceSync default, new objects", input: copy, run: (x) => chr.reduceSync(x, cfgDefault) },
    { team: 0, key: "oursLength", label: "reduceSync length/4, new objects", input: copy, run: (x) => chr.reduceSync(x, cfgLength) },
    { team: 0, key: "langchain", label: "LangChain trimMessages (text/4)", async: true, input: same(lc), run: (x) => trimMessages(x, lcOptions), skip: lcSkip },
    { team: 0, key: "aiSdk", label: "AI SDK pruneMessages (no budget)", input: same(model), run: (x) => pruneMessages({ messages: x, ...PRUNE }) },
    { team: 0, ...plainLoop("plain") },
    { team: 0, key: "checked", label: "plain loop + check all, new objects", input: copy, run: (x) => checkedTrim(x, budgetLength) },
    // What an edge worker pays to read the request before any reducer runs.
    { team: 0, key: "parse", label: "JSON.parse of the request body", input: same(body), run: (x) => JSON.parse(x) },
    { team: 1, key: "oursCached", label: "reduceSync default, same objects", input: same(sameDefault), run: (x) => chr.reduceSync(x, cfgDefault) },
    { team: 1, ...plainLoop("plainCached") },
    { team: 2, key: "oursLengthCached", label: "reduceSync length/4, same objects", input: same(sameLength), run: (x) => chr.reduceSync(x, cfgLength) },
    { team: 2, ...plainLoop("plainLength") },
    { team: 3, key: "history", label: "ChatHistory push(1) + prepare()", async: true, input: pushed, run: (m) => { chat.push(m); return chat.prepare(); } },
    { team: 3, ...plainLoop("plainHistory") },
  ];
  const by = Object.fromEntries(contenders.map((c) => [c.key, c]));
  const rounds = P.rounds[n] ?? 5;
  for (const team of [0, 1, 2, 3]) {
    const members = contenders.filter((c) => c.team === team);
    for (const c of members) {
      c.samples = [];
      c.rounds = rounds;
      if (c.skip) continue;
      await calibrate(c);
      if (c.key === "langchain") {
        // Bounded: as many rounds as fit its time budget (at least the one measured above).
        c.rounds = Math.max(1, Math.min(rounds, Math.floor(P.langchainBudgetMs / (c.estimate * c.perSample))));
        if (c.rounds === 1 && c.first > P.langchainBudgetMs / 2) {
          c.samples.push(c.first); // the measured call is the only sample
          c.rounds = 0;
        }
      }
    }
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < members.length; k++) {
        const c = members[(r + k) % members.length];
        if (c.skip || c.samples.length >= c.rounds) continue;
        await sample(c);
      }
    }
  }

  // What each kept, and whether those that should agree do.
  const index = new Map(conv.map((m, i) => [m, i]));
  const rDefault = by.ours.output, rLength = by.oursLength.output;
  const plainKept = by.plain.output.map((m) => index.get(m));

  const equal = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  const agreement = {
    oursLengthVsPlain: equal(rLength.kept, plainKept),
    // (Its output is of copies: the same count, and the same first kept message.)
    checkedAsPlain: by.checked.output.length === plainKept.length &&
      by.checked.output[1]?.content === conv[plainKept[1]]?.content,
    cachedSameAsNew: equal(by.oursCached.output.kept, rDefault.kept) && equal(by.oursLengthCached.output.kept, rLength.kept),
    oursLengthKept: rLength.kept.length,
    plainKept: plainKept.length,
    oursOverBudget: rLength.overBudget,
    differing: rLength.kept.filter((i) => !plainKept.includes(i)).length + plainKept.filter((i) => !rLength.kept.includes(i)).length,
  };
  const lcOut = by.langchain.output;
  if (lcOut) {
    // Its counter reads only the message text, so its cut may sit a little elsewhere.
    agreement.langchainKept = lcOut.length;
    agreement.langchainVsOursLength = lcOut.length / rLength.kept.length - 1;
  }
  const aiOut = by.aiSdk.output;
  const aiTokens = chr.estimateTokens(aiOut, { format: "vercel", estimator: "length", charsPerToken: 4 });
  const aiModelTokens = chr.estimateTokens(model, { format: "vercel", estimator: "length", charsPerToken: 4 });

  const res = {
    n, generateMs: genMs, chars: shape.chars, roles: shape.roles, bigToolResults: shape.bigToolResults,
    tokens: { default: tokensDefault, length: tokensLength },
    budget: { default: budgetDefault, length: budgetLength },
    kept: {
      ours: rDefault.kept.length, oursLength: rLength.kept.length, plain: plainKept.length,
      langchain: lcOut ? lcOut.length : null, aiSdk: aiOut.length,
    },
    tokensAfter: { ours: rDefault.tokensAfter, oursLength: rLength.tokensAfter },
    aiSdkTokenShare: aiTokens / aiModelTokens,
    agreement,
    contenders: {},
  };
  for (const c of contenders) {
    res.contenders[c.key] = c.skip
      ? { label: c.label, skipped: c.skip }
      : {
        label: c.label, medianMs: median(c.samples), minMs: Math.min(...c.samples), p90Ms: quantile(c.samples, 0.9),
        firstMs: c.first, samples: c.samples.length, callsPerSample: c.perSample, samplesMs: c.samples,
      };
  }
  const lcRes = res.contenders.langchain;
  if (!lcRes.skipped) langchainLast = { n, median: lcRes.medianMs };
  const m = (k) => res.contenders[k].medianMs;
  res.ratios = {
    oursVsLangchain: m("ours") / m("langchain"),
    oursCachedVsLangchain: m("oursCached") / m("langchain"),
    oursLengthVsLangchain: m("oursLength") / m("langchain"),
    oursLengthCachedVsLangchain: m("oursLengthCached") / m("langchain"),
    oursLengthVsPlain: m("oursLength") / m("plain"),
    oursLengthCachedVsPlain: m("oursLengthCached") / m("plainLength"),
    oursVsPlain: m("ours") / m("plain"),
    oursLengthVsChecked: m("oursLength") / m("checked"),
    oursVsChecked: m("ours") / m("checked"),
    oursLengthVsAiSdk: m("oursLength") / m("aiSdk"),
    oursVsAiSdk: m("ours") / m("aiSdk"),
    oursVsParse: m("ours") / m("parse"),
    oursCachedVsPlain: m("oursCached") / m("plainCached"),
    historyVsPlain: m("history") / m("plainHistory"),
  };
  const took = ((now() - t0) / 1000).toFixed(1);
  console.error(`[bench] ${int(n)} messages: ${int(shape.chars)} chars, ${int(tokensDefault)} tokens (default estimator), done in ${took} s`);
  return res;
}

// ---- scenario (a): repeated turns ---------------------------------------------------------

/** The first `n` messages of the generated conversation (whole groups) and the groups after. */
function historyAndContinuation(n, seed) {
  const history = [];
  const turns = generateTurns(seed); // iterated by hand: a for-of break would close it
  while (history.length < n) history.push(...turns.next().value);
  const more = [];
  const next = () => {
    while (more.length === 0) more.push(...turns.next().value);
    return JSON.parse(JSON.stringify(more.shift()));
  };
  return { history: JSON.parse(JSON.stringify(history)), next };
}

function repeatedTurns() {
  const { history: base, next } = historyAndContinuation(10_000, SEED);
  const tokens = chr.estimateTokens(base); // (reads `base`: the app's history, read before)
  const config = { maxTokens: Math.floor(SHARE * tokens) }; // default target: 0.8 × maxTokens
  const appended = Array.from({ length: Math.max(P.turns, P.appliedTurns) }, next);

  // The first call: a full reduction of the 10,000 messages (median of a few, each on new
  // message objects so that nothing read before is reused).
  const firsts = [];
  let r, t;
  for (let i = 0; i < (QUICK ? 3 : 9); i++) {
    gc({ type: "minor" });
    const copy = base.map((m) => ({ ...m }));
    t = now();
    r = chr.reduceSync(copy, config);
    firsts.push(now() - t);
  }
  const first = median(firsts);
  const firstKept = r.kept.length;

  // A turn: one message appended to the whole history, which is reduced again (a chat that
  // keeps its full history and sends the reduced one; the same objects every turn).
  const full = base.slice();
  const times = [];
  for (let i = 0; i < P.turns; i++) {
    full.push(appended[i]);
    gc({ type: "minor" });
    t = now();
    consume(chr.reduceSync(full, config));
    times.push(now() - t);
  }

  // Or the app applies each result: the next turn reduces what was sent last time plus the
  // new message (a history of about the budget, not 10,000 messages).
  let history = r.messages;
  const applied = [];
  let reductions = 0;
  for (let i = 0; i < P.appliedTurns; i++) {
    history.push(appended[i]);
    gc({ type: "minor" });
    t = now();
    r = chr.reduceSync(history, config);
    applied.push(now() - t);
    if (r.reduced) reductions++;
    history = r.messages;
  }
  return {
    messages: base.length, turns: P.turns, maxTokens: config.maxTokens,
    firstCallMs: first, firstCalls: firsts.length, firstKept, medianTurnMs: median(times), p90TurnMs: quantile(times, 0.9), maxTurnMs: Math.max(...times),
    turnOverFirst: median(times) / first,
    appliedTurns: P.appliedTurns, appliedMedianMs: median(applied), appliedReductions: reductions, appliedMessages: history.length,
  };
}

// ---- scenario (b): the summarizer's calls --------------------------------------------------

async function summarizerTurns() {
  const { history: start, next } = historyAndContinuation(12, SEED + 1);
  const appended = Array.from({ length: P.summaryTurns }, next);
  let calls = 0;
  const summarizer = async ({ messages, previousSummary }) => {
    calls++;
    return `${previousSummary ? "Earlier: covered. " : ""}The user and the agent went through ${messages.length} messages of tool lookups.`;
  };
  const config = { strategy: "summarize", targetMessages: 20, thresholdMessages: 5, summarizer };

  // reduce() each turn, applying its result.
  let history = start.slice();
  const times = [];
  let reductions = 0, maxLength = 0;
  for (const m of appended) {
    history.push(m);
    const t = now();
    const r = await chr.reduce(history, config);
    times.push(now() - t);
    if (r.reduced) reductions++;
    history = r.messages;
    maxLength = Math.max(maxLength, history.length);
  }
  const reduceCalls = calls;

  // The same with ChatHistory: push, then prepare() before each model call.
  calls = 0;
  const chat = new chr.ChatHistory(config, start.slice());
  for (const m of appended) {
    chat.push(m);
    await chat.prepare();
  }
  const stats = chat.stats();
  return {
    turns: P.summaryTurns, summarizerCalls: reduceCalls, reductions, baselineCalls: P.summaryTurns,
    callsSaved: 1 - reduceCalls / P.summaryTurns, medianTurnMs: median(times), maxMessagesSent: maxLength,
    chatHistory: { summarizerCalls: calls, statsSummarizerCalls: stats.summarizerCalls, reductions: stats.reductions, messages: chat.messages.length },
  };
}

// ---- scenario (c): every format ------------------------------------------------------------

const FORMATS = ["openai", "openai-responses", "anthropic", "vercel", "gemini", "langchain"];

/** A copy of message m that is another object of the same kind (LangChain's are classes). */
const shallow = (m) => Object.assign(Object.create(Object.getPrototypeOf(m)), m);

/** `reduceSync` on the same conversation in every format, on new message objects every call
 * (each format detected, as an app would leave it), with each estimator, in interleaved
 * rounds as the sizes are. */
async function everyFormat() {
  const n = P.formatsMessages;
  const conv = generateConversation(n, { seed: SEED });
  const rows = [], contenders = [];
  for (const format of FORMATS) {
    const messages = toFormat(conv, format);
    const row = { format, messages: messages.length };
    rows.push(row);
    for (const [key, options] of [["length", { estimator: "length", charsPerToken: 4 }], ["default", {}]]) {
      const budget = Math.floor(SHARE * chr.estimateTokens(messages, options));
      const config = { maxTokens: budget, targetTokens: budget, ...options };
      contenders.push({ row, key, input: () => messages.map(shallow), run: (x) => chr.reduceSync(x, config), samples: [] });
    }
  }
  for (const c of contenders) await calibrate(c);
  for (let r = 0; r < P.formatRounds; r++) {
    for (let k = 0; k < contenders.length; k++) await sample(contenders[(r + k) % contenders.length]);
  }
  for (const c of contenders) {
    c.row[c.key] = median(c.samples);
    c.row[`${c.key}Kept`] = c.output.kept.length;
  }
  return { messages: n, rows };
}

// ---- size, start-up, memory ---------------------------------------------------------------

function sizeAndStartup() {
  const bytes = readFileSync(WASM);
  const runs = [];
  for (let i = 0; i < P.startups; i++) {
    const out = execFileSync(process.execPath, [join(HERE, "startup.mjs"), GLUE], { encoding: "utf8" });
    runs.push(JSON.parse(out.trim().split("\n").pop()));
  }
  const entry = [];
  for (let i = 0; i < P.startups; i++) {
    const out = execFileSync(process.execPath, [join(HERE, "startup.mjs"), GLUE, "--entry"], { encoding: "utf8" });
    entry.push(JSON.parse(out.trim().split("\n").pop()));
  }
  const med = (k) => median(runs.map((r) => r[k]));
  return {
    entryImportMs: median(entry.map((r) => r.entryImportMs)), entryFirstCallMs: median(entry.map((r) => r.entryFirstCallMs)),
    wasmBytes: bytes.length, wasmGzipBytes: gzipSync(bytes, { level: 9 }).length,
    processes: runs.length,
    compileMs: med("compileMs"), instantiateMs: med("instantiateMs"), firstCallMs: med("firstCallMs"),
    initToFirstResultMs: med("initToFirstResultMs"), importAndReadMs: med("importAndReadMs"),
  };
}

/** A fresh instance in this process: a fresh copy of the glue (cache-busting query), a fresh module. */
async function freshInstance(tag) {
  const api = await import(`${pathToFileURL(GLUE).href}?v=${tag}`);
  const bytes = readFileSync(WASM);
  const t0 = now();
  const module = new WebAssembly.Module(bytes);
  const exports = api.initSync({ module });
  return { api, exports, initMs: now() - t0 };
}

async function memory() {
  const { api, exports } = await freshInstance("memory");
  const conv = generateConversation(30, { seed: SEED + 2 });
  const config = { maxTokens: Math.floor(SHARE * api.estimateTokens(conv)) };
  const bad = { maxTokens: -1 };
  const pages = () => exports.memory.buffer.byteLength;
  let errors = 0, afterFirst = 0;
  const t0 = now();
  for (let i = 1; i <= P.memoryCalls; i++) {
    // Every 100th call takes the error path (an invalid config), the rest reduce: every
    // other one new message objects (nothing cached), the others the same objects.
    if (i % 100 === 0) {
      try { api.reduceSync(conv, bad); } catch { errors++; }
    } else {
      consume(api.reduceSync(i % 2 ? conv.map((m) => ({ ...m })) : conv, config));
    }
    if (i === 1_000) afterFirst = pages();
  }
  const afterAll = pages();
  return {
    calls: P.memoryCalls, errorCalls: errors, memoryAfter1000: afterFirst, memoryAfterAll: afterAll,
    grew: afterAll > afterFirst, perCallUs: ((now() - t0) * 1000) / P.memoryCalls,
  };
}

// ---- report -------------------------------------------------------------------------------

function printTable(results) {
  const cols = results.map((r) => r.n);
  const W = 17, L = 36;
  const head = padEnd("", L) + cols.map((n) => pad(int(n), W)).join("");
  const row = (label, f) => console.log(padEnd(label, L) + results.map((r) => pad(f(r), W)).join(""));
  console.log(`\nMedian ms per call (interleaved rounds; samples in the JSON)`);
  console.log(head);
  for (const key of ["ours", "oursCached", "oursLength", "oursLengthCached", "history", "langchain", "aiSdk", "plain", "checked", "parse"]) {
    row(results[0].contenders[key].label, (r) => {
      const c = r.contenders[key];
      return c.skipped ? "skipped" : ms(c.medianMs);
    });
  }
  for (const r of results) {
    const c = r.contenders.langchain;
    if (c.skipped) console.log(`  LangChain at ${int(r.n)}: ${c.skipped}`);
    else if (c.samples < (P.rounds[r.n] ?? 0)) console.log(`  LangChain at ${int(r.n)}: ${c.samples} sample(s) (bounded to ~${P.langchainBudgetMs / 1000} s)`);
  }
  console.log(`\nRatios: ours ÷ peer (median ms; below 1 = ours faster)`);
  console.log(head);
  const rr = (label, key) => row(label, (r) => {
    const x = r.ratios[key];
    return Number.isFinite(x) ? (x < 0.01 ? x.toFixed(4) : x < 0.1 ? x.toFixed(3) : x.toFixed(2)) : "—";
  });
  rr("default new ÷ JSON.parse", "oursVsParse");
  rr("default same ÷ plain loop", "oursCachedVsPlain");
  rr("ChatHistory prepare ÷ plain loop", "historyVsPlain");
  rr("default new ÷ trimMessages", "oursVsLangchain");
  rr("default same ÷ trimMessages", "oursCachedVsLangchain");
  rr("length new ÷ trimMessages", "oursLengthVsLangchain");
  rr("length same ÷ trimMessages", "oursLengthCachedVsLangchain");
  rr("length new ÷ plain loop", "oursLengthVsPlain");
  rr("length same ÷ plain loop", "oursLengthCachedVsPlain");
  rr("default new ÷ plain loop", "oursVsPlain");
  rr("length new ÷ checking loop", "oursLengthVsChecked");
  rr("default new ÷ checking loop", "oursVsChecked");
  rr("length new ÷ pruneMessages", "oursLengthVsAiSdk");
  rr("default new ÷ pruneMessages", "oursVsAiSdk");
  console.log(`  new = new message objects every call (nothing cached); same = the same objects again (counts cached)`);
  console.log(`\nWhat each kept (budget: 25% of the estimated tokens)`);
  console.log(head);
  row("characters in the conversation", (r) => int(r.chars));
  row("tokens, default estimator", (r) => int(r.tokens.default));
  row("tokens, length/4", (r) => int(r.tokens.length));
  row("kept: ours default / length", (r) => `${r.kept.ours}/${r.kept.oursLength}`);
  row("kept: plain loop", (r) => r.kept.plain);
  row("kept: trimMessages", (r) => r.kept.langchain ?? "skipped");
  row("kept: pruneMessages (all msgs)", (r) => `${r.kept.aiSdk} (${(100 * r.aiSdkTokenShare).toFixed(0)}% tok)`);
  row("ours length = plain loop?", (r) => (r.agreement.oursLengthVsPlain ? "same" : `${r.agreement.differing} differ`));
  row("checking loop = plain loop?", (r) => (r.agreement.checkedAsPlain ? "same" : "DIFFER"));
  row("ours same objects = new objects?", (r) => (r.agreement.cachedSameAsNew ? "same" : "DIFFER"));
  row("trimMessages kept vs ours length", (r) => (r.agreement.langchainKept === undefined ? "—" : `${r.agreement.langchainVsOursLength >= 0 ? "+" : ""}${(100 * r.agreement.langchainVsOursLength).toFixed(1)}%`));
  console.log(`  pruneMessages only strips tool calls/results before the last 2 messages: it has no token budget.`);
}

/**
 * The targets: issue 29's speed ratios (each against what every caller pays anyway, measured
 * in the same rounds), then those of issue 4 that it did not restate.
 */
function targets(results, turns, summary, mem, startup) {
  const at = (n) => results.find((r) => r.n === n);
  const list = [];
  const add = (issue, name, value, pass) => list.push({ issue, name, value, pass });
  const ratio = (x) => `${x < 0.1 ? x.toFixed(3) : x.toFixed(2)}×`;
  const per = (r, a, b) => `${ms(r.contenders[a].medianMs)} / ${ms(r.contenders[b].medianMs)} ms`;
  // (Each ratio with the plain loop of its own rounds: see `benchSize`.)
  const sizes = (list, f) => {
    for (const [n, bound] of list) {
      const r = at(n);
      if (r) f(r, n, bound);
      else add(29, `${int(n)} msgs`, "not run (BENCH_QUICK)", null);
    }
  };
  sizes([[1_000, 0.1], [10_000, 0.1], [100_000, 0.1]], (r, n, bound) => add(29,
    `1. ${int(n)} msgs: reduceSync (default, new objects) ≤ ${bound}× JSON.parse of the body`,
    `${ratio(r.ratios.oursVsParse)} (${per(r, "ours", "parse")})`, r.ratios.oursVsParse <= bound));
  sizes([[10_000, 2], [100_000, 3]], (r, n, bound) => add(29,
    `2. ${int(n)} msgs: reduceSync (default, the same objects again) ≤ ${bound}× the plain loop`,
    `${ratio(r.ratios.oursCachedVsPlain)} (${per(r, "oursCached", "plainCached")})`, r.ratios.oursCachedVsPlain <= bound));
  sizes([[10_000, 1], [100_000, 1]], (r, n, bound) => add(29,
    `3. ${int(n)} msgs: ChatHistory push + prepare() ≤ ${bound}× the plain loop`,
    `${ratio(r.ratios.historyVsPlain)} (${per(r, "history", "plainHistory")})`, r.ratios.historyVsPlain <= bound));
  add(4, "repeated turns: a turn on the 10,000-message history ≤ 1/5 of the first call", `${ms(turns.medianTurnMs)} / ${ms(turns.firstCallMs)} ms = ${turns.turnOverFirst.toFixed(3)}`, turns.turnOverFirst <= 0.2);
  add(4, "summarizer: fewer calls than one per turn", `${summary.summarizerCalls} vs ${summary.baselineCalls}`, summary.summarizerCalls < summary.baselineCalls);
  add(4, `memory: ${int(mem.calls)} calls leave memory ≤ after 1,000`, `${int(mem.memoryAfterAll)} vs ${int(mem.memoryAfter1000)} bytes`, !mem.grew);
  add(4, `.wasm ≤ ${int(SIZE_TARGET)} bytes gzipped`, `${int(startup.wasmGzipBytes)} bytes`, startup.wasmGzipBytes <= SIZE_TARGET);
  add(4, "initSync + first call ≤ 5 ms in Node", `${ms(startup.instantiateMs)} + ${ms(startup.firstCallMs)} ms`, startup.instantiateMs + startup.firstCallMs <= 5);
  return list;
}

// ---- main ---------------------------------------------------------------------------------

const started = now();
const wasmBytes = readFileSync(WASM);
console.log(`chat-history-reducer benchmark${QUICK ? " (BENCH_QUICK)" : ""}: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model?.trim() ?? "cpu"}`);
console.log(`package ${PKG_DIR}; conversations from bench/generate.mjs (seed ${SEED}); trimming to ${SHARE * 100}% of the estimated tokens`);
console.log(`reduceSync config: { maxTokens: budget, targetTokens: budget } (+ estimator: "length", charsPerToken: 4); truncate, startOn user`);

const results = [];
for (const n of P.sizes) {
  results.push(await benchSize(n));
  gc();
}
printTable(results);

gc();
const turns = repeatedTurns();
console.log(`\n(a) Repeated turns: a ${int(turns.messages)}-message history, ${turns.turns} turns of one appended message, reduceSync on the whole history each turn (maxTokens ${int(turns.maxTokens)})`);
console.log(`    first call ${ms(turns.firstCallMs)} ms (new objects, median of ${turns.firstCalls}; kept ${turns.firstKept}); per turn median ${ms(turns.medianTurnMs)} ms, p90 ${ms(turns.p90TurnMs)}, max ${ms(turns.maxTurnMs)}; ` +
  `turn ÷ first = ${turns.turnOverFirst.toFixed(3)}`);
console.log(`    applying each result instead (the next turn reduces the last result + the new message, ${turns.appliedTurns} turns): median ${ms(turns.appliedMedianMs)} ms; reduced again on ${turns.appliedReductions} turns`);

const summary = await summarizerTurns();
console.log(`\n(b) Summarizer: ${summary.turns} turns, reduce({strategy: "summarize", targetMessages: 20, thresholdMessages: 5}) each turn, result applied`);
console.log(`    summarizer calls ${summary.summarizerCalls} vs ${summary.baselineCalls} summarizing every turn (${(100 * summary.callsSaved).toFixed(0)}% fewer); ` +
  `at most ${summary.maxMessagesSent} messages sent; median turn ${ms(summary.medianTurnMs)} ms`);
console.log(`    ChatHistory push + prepare(): ${summary.chatHistory.summarizerCalls} calls (stats: ${summary.chatHistory.statsSummarizerCalls}, ${summary.chatHistory.reductions} reductions)`);

gc();
const formats = await everyFormat();
const openai = formats.rows[0];
console.log(`\n(c) Every format: the ${int(formats.messages)}-message conversation converted, reduceSync on new message objects (format detected), median ms and ÷ OpenAI`);
console.log(`    ${"format".padEnd(18)}${"messages".padStart(9)}${"length/4".padStart(11)}${"÷".padStart(7)}${"default".padStart(10)}${"÷".padStart(7)}`);
for (const r of formats.rows) {
  console.log(`    ${r.format.padEnd(18)}${int(r.messages).padStart(9)}${ms(r.length).padStart(11)}${(r.length / openai.length).toFixed(2).padStart(7)}` +
    `${ms(r.default).padStart(10)}${(r.default / openai.default).toFixed(2).padStart(7)}`);
}

const startup = sizeAndStartup();
const inProcess = [];
const small = generateConversation(7, { seed: 1 });
for (let i = 0; i < 3; i++) {
  const { api, initMs } = await freshInstance(`startup-${i}`);
  const t = now();
  consume(api.reduceSync(small, { maxTokens: 40 }));
  inProcess.push(initMs + (now() - t));
}
startup.inProcessFreshInstanceMs = median(inProcess);
console.log(`\nSize: ${int(startup.wasmBytes)} bytes .wasm, ${int(startup.wasmGzipBytes)} gzipped (${WASM})`);
console.log(`Start-up (median of ${startup.processes} fresh processes): compile ${ms(startup.compileMs)} ms + initSync ${ms(startup.instantiateMs)} ms + first reduceSync ${ms(startup.firstCallMs)} ms = ${ms(startup.initToFirstResultMs)} ms ` +
  `(glue import + file read before it: ${ms(startup.importAndReadMs)} ms); a fresh instance in a warm process: ${ms(startup.inProcessFreshInstanceMs)} ms`);
console.log(`  the package's Node entry (its import runs initSync and a warm-up): import ${ms(startup.entryImportMs)} ms, then the first reduceSync ${ms(startup.entryFirstCallMs)} ms`);

const mem = await memory();
console.log(`Memory: ${int(mem.calls)} small reduceSync calls (30 messages; ${mem.errorCalls} of them errors, half of the rest on new objects) on a fresh instance: wasm memory ${int(mem.memoryAfter1000)} bytes after 1,000, ` +
  `${int(mem.memoryAfterAll)} after all (${ms(mem.perCallUs)} µs a call)`);

const verdicts = targets(results, turns, summary, mem, startup);
console.log(`\nTargets (issue 29's speed ratios, from the rounds above; then issue 4's)`);
for (const v of verdicts) console.log(`  ${v.pass === null ? "n/a " : v.pass ? "PASS" : "FAIL"}  #${v.issue} ${v.name}: ${v.value}`);
const totalS = (now() - started) / 1000;
console.log(`\nTotal ${totalS.toFixed(1)} s`);

const out = join(HERE, "results");
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "latest.json"), JSON.stringify({
  date: new Date().toISOString(), quick: QUICK, seed: SEED, node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model,
  package: PKG_DIR, share: SHARE, sizes: results, repeatedTurns: turns, summarizer: summary, formats, startup, memory: mem,
  targets: verdicts, totalSeconds: totalS, sink,
}, null, 1) + "\n");
console.log(`Results: ${join(out, "latest.json")}`);
