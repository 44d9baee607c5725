// `make bench`: what the model still knows after a long agent session (issue 30).
//
//   node bench/retention.mjs                 after `bash scripts/build.sh`
//   BENCH_SEED=7 node bench/retention.mjs    another session
//   CHR_PKG=build/pkg-x node bench/retention.mjs    another build (a directory or its node.js)
//   CHR_BASE=build/pkg-main node bench/retention.mjs  also run a baseline build, for the
//                                            no-regression target
//
// A seeded agent session (400 turns, 0–2 tool calls a turn, tool results of 400–4,000
// characters) plants one fact — a short unique code — in every user message, every answer
// and every tool result (at its head, or deep inside). It is replayed through `ChatHistory`
// for each strategy: every model call is preceded by `prepare()`, as an agent loop does. After
// the last turn one more question is asked, and its prompt is read:
// - a fact is *visible* when its code is in the prompt's text;
// - it is *reloadable* when the prompt names an offload id (`ctx_…`) whose originals
//   (`history.reload(id)`, what the context_reload tool answers) hold it;
// both per 1,000 tokens sent (the prompt's tokens by the default estimator), by place, and
// against truncate's. The summarizing strategies get a deterministic *extractive* summarizer:
// it copies every fact code it is handed, newest first, as many as the summary's token target
// allows — no model summarizes better, so their rows are an upper bound.
// Results also go to bench/results/retention.json.
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CHAT_WORDS, prng } from "./generate.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const SEED = Number(process.env.BENCH_SEED ?? 42);
const TURNS = 400;
const WINDOW = 30_000;
/** A small window, where `largeMessageTokens` and `minToolRun` follow the target. */
const SMALL_WINDOW = 8_000;

function entryOf(given, fallback) {
  if (!given) return fallback;
  const path = resolve(given);
  return existsSync(path) && statSync(path).isDirectory() ? join(path, "node.js") : path;
}
const ENTRY = entryOf(process.env.CHR_PKG, join(HERE, "../pkg/node.js"));
if (!existsSync(ENTRY)) {
  console.error(`retention: no package at ${ENTRY}; build it (bash scripts/build.sh) or set CHR_PKG`);
  process.exit(1);
}
const BASE = process.env.CHR_BASE ? entryOf(process.env.CHR_BASE) : undefined;

// ---- the session ------------------------------------------------------------------------

const NAMES = "otter heron lynx marten kestrel puffin walrus bison ibex gecko tapir dingo".split(" ");
const TOOLS = ["read_file", "grep_repo", "run_sql", "http_get", "run_tests", "fetch_metrics"];

/** Where a fact is planted. */
const PLACES = ["user", "answer", "toolHead", "toolDeep"];
const PLACE_NAMES = { user: "user messages", answer: "answers", toolHead: "tool results, at the head", toolDeep: "tool results, deep inside" };

/**
 * The session: `turns` of `{ user, steps: [[call message, ...results]], answer }`, and every
 * planted fact `{ code, place, turn }`. A fact's code is `K<n>:<name>`, unique, a few tokens.
 */
function session(seed) {
  const random = prng(seed);
  const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));
  const pick = (xs) => xs[Math.floor(random() * xs.length)];
  const sentence = () => {
    let s = pick(CHAT_WORDS);
    s = s[0].toUpperCase() + s.slice(1);
    for (let i = int(5, 16); i > 0; i--) s += " " + pick(CHAT_WORDS);
    return s + ".";
  };
  const prose = (chars) => {
    let s = sentence();
    while (s.length < chars) s += " " + sentence();
    return s;
  };
  const facts = [];
  let turn = 0;
  const fact = (place) => {
    const code = `K${facts.length}:${pick(NAMES)}`;
    facts.push({ code, place, turn });
    return code;
  };
  /** Log lines of a tool's output, about `chars` long, with `code` in the first line or deep. */
  const output = (chars, code, head) => {
    const lines = [`ok ${pick(TOOLS)} took ${int(2, 900)} ms${head ? `; note ${code}` : ""}`];
    let size = lines[0].length;
    while (size < chars) {
      const line = `${int(1, 9999)} ${pick(CHAT_WORDS)}=${int(0, 99999)} ${prose(int(30, 110))}`;
      lines.push(line);
      size += line.length + 1;
    }
    if (!head) {
      // Deep: from a third of the way in to the end, and at least four lines in (past the
      // head a preview shows).
      const at = Math.max(Math.min(lines.length - 1, 4), int(Math.floor(lines.length / 3), lines.length - 1));
      lines.splice(at, 0, `record ${code} confirmed`);
    }
    return lines.join("\n");
  };
  let call = 0;
  const turns = [];
  for (; turn < TURNS; turn++) {
    const user = { role: "user", content: `${prose(int(30, 200))} Remember ${fact("user")}. ${prose(int(0, 60))}`.trim() };
    const calls = random() < 0.25 ? 0 : random() < 0.55 ? 1 : 2;
    const parallel = calls === 2 && random() < 0.5;
    const steps = [];
    const made = [];
    for (let c = 0; c < calls; c++) {
      const id = `call_${call++}`, name = pick(TOOLS);
      const args = JSON.stringify({ path: `src/${pick(CHAT_WORDS)}/${pick(CHAT_WORDS)}.rs`, query: pick(CHAT_WORDS) });
      const head = random() < 0.5;
      const result = { role: "tool", tool_call_id: id, content: output(int(400, 4000), fact(head ? "toolHead" : "toolDeep"), head) };
      made.push({ call: { id, type: "function", function: { name, arguments: args } }, result });
    }
    if (parallel) {
      steps.push([{ role: "assistant", content: null, tool_calls: made.map((m) => m.call) }, ...made.map((m) => m.result)]);
    } else {
      for (const m of made) steps.push([{ role: "assistant", content: null, tool_calls: [m.call] }, m.result]);
    }
    const answer = { role: "assistant", content: `${prose(int(40, 300))} Found ${fact("answer")}. ${prose(int(0, 120))}`.trim() };
    turns.push({ user, steps, answer });
  }
  return { turns, facts };
}

const SYSTEM = { role: "system", content: "You are an engineering agent. Use the tools; cite what they return." };
const LAST_QUESTION = { role: "user", content: "Before we stop: list every code you were told to remember or found." };

// ---- the extractive summarizer: the upper bound --------------------------------------------

const FACT = /K\d+:[a-z]+/g;

/** Every fact code of the originals and the summary it replaces, newest first, as many as
 * `targetTokens` allows (the strategies ask for what fits). */
function extractive(estimateTokens) {
  return async (req) => {
    const text = (req.previousSummary ?? "") + JSON.stringify(req.messages);
    const codes = [...new Set(text.match(FACT) ?? [])];
    const fits = (k) => estimateTokens({ role: "user", content: codes.slice(codes.length - k).join(" ") }) <= req.targetTokens;
    let lo = 0, hi = codes.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (fits(mid)) lo = mid; else hi = mid - 1;
    }
    return codes.slice(codes.length - lo).join(" ") || "(nothing to keep)";
  };
}

// ---- the replay -------------------------------------------------------------------------

const STRATEGIES = [
  { key: "truncate", name: "truncate", config: { strategy: "truncate" } },
  { key: "priority", name: "priority", config: { strategy: "priority" } },
  { key: "summarize", name: "summarize (extractive summarizer)", config: { strategy: "summarize" }, summarizer: true },
  { key: "progressive", name: "progressive, no summarizer", config: { strategy: "progressive" } },
  { key: "progressive+summarizer", name: "progressive (extractive summarizer)", config: { strategy: "progressive" }, summarizer: true },
];
/** At the small window: the thresholds that follow the target against the fixed ones. */
const SMALL_STRATEGIES = [
  ...STRATEGIES.filter((x) => !x.summarizer),
  { key: "progressive-fixed", name: "progressive, fixed 1250 / 6", config: { strategy: "progressive", largeMessageTokens: 1250, minToolRun: 6 } },
];

/** How many of the last prompts the mean is over. */
const MEAN_OF = 100;

/** What `prompt` (of `history`) holds of the facts of `s`. */
function holds(chr, s, history, prompt) {
  const text = JSON.stringify(prompt);
  const ids = [...new Set(text.match(/ctx_[0-9a-f]{16}/g) ?? [])];
  const shown = new Set(text.match(FACT) ?? []);
  const reloadable = new Set(ids.flatMap((id) => JSON.stringify(history.reload(id) ?? []).match(FACT) ?? []));
  const seen = { visible: {}, reloadable: {} };
  for (const p of PLACES) seen.visible[p] = seen.reloadable[p] = 0;
  // The turns the prompt still holds: those whose user message's fact it shows.
  const held = new Set();
  const reached = [];
  for (const f of s.facts) {
    const visible = shown.has(f.code);
    if (visible) seen.visible[f.place]++;
    else if (reloadable.has(f.code)) seen.reloadable[f.place]++;
    else continue;
    if (visible && f.place === "user") held.add(f.turn);
    reached.push(f);
  }
  const heads = s.facts.filter((f) => f.place === "toolHead" && held.has(f.turn));
  const headsReached = reached.filter((f) => f.place === "toolHead" && held.has(f.turn)).length;
  const sum = (o) => PLACES.reduce((a, p) => a + o[p], 0);
  const tokens = chr.estimateTokens(prompt);
  const visible = sum(seen.visible), reload = sum(seen.reloadable);
  return {
    tokens, messages: prompt.length, ids: ids.length, visible, reloadable: reload,
    perK: (1000 * visible) / tokens, perKAll: (1000 * (visible + reload)) / tokens,
    byPlace: seen, turnsHeld: held.size, heads: { held: heads.length, reached: headsReached },
  };
}

/** `strategy` over `s`: what its last prompt holds, and the mean facts per 1k tokens of its
 * last `MEAN_OF` prompts (the last one depends on where in the cycle of reductions the
 * session ends: a `ChatHistory` reduces when the prompt passes the trigger, to the target). */
async function replay(chr, s, strategy, window) {
  const config = { maxTokens: window, ...strategy.config };
  if (strategy.summarizer) config.summarizer = extractive(chr.estimateTokens);
  const history = new chr.ChatHistory(config, [SYSTEM]);
  const total = s.turns.reduce((n, t) => n + 1 + t.steps.length, 1);
  let prompts = 0, ms = 0, last;
  const means = [];
  const prepare = async () => {
    const t0 = performance.now();
    const prompt = await history.prepare();
    ms += performance.now() - t0;
    if (++prompts > total - MEAN_OF) {
      last = holds(chr, s, history, prompt);
      means.push(last.perKAll);
    }
  };
  for (const turn of s.turns) {
    history.push(turn.user);
    await prepare();
    for (const step of turn.steps) {
      history.push(...step);
      await prepare();
    }
    history.push(turn.answer);
  }
  history.push(LAST_QUESTION);
  await prepare();
  const mean = means.reduce((a, x) => a + x, 0) / means.length;
  return { key: strategy.key, strategy: strategy.name, prompts, ms, reductions: history.stats().reductions, ...last, mean };
}

async function measure(entry, s, strategies, window) {
  const chr = await import(pathToFileURL(entry).href);
  const rows = [];
  for (const strategy of strategies) rows.push(await replay(chr, s, strategy, window));
  return rows;
}

// ---- the report ---------------------------------------------------------------------------

const f1 = (x) => x.toFixed(1);
const pad = (s, n) => String(s).padStart(n);
const padEnd = (s, n) => String(s).padEnd(n);

function printRows(rows, planted, label) {
  const truncate = rows[0];
  console.log(`\n${label}`);
  console.log(`${padEnd("strategy", 38)}${pad("visible", 9)}${pad("reload", 8)}${pad("tokens", 8)}${pad("/1k vis", 9)}${pad("/1k all", 9)}${pad("× trunc", 9)}${pad("ids", 6)}${pad(`mean ${MEAN_OF}`, 9)}${pad("× trunc", 9)}${pad("ms", 7)}`);
  for (const r of rows) {
    console.log(`${padEnd(r.strategy, 38)}${pad(r.visible, 9)}${pad(r.reloadable, 8)}${pad(r.tokens, 8)}${pad(f1(r.perK), 9)}${pad(f1(r.perKAll), 9)}${pad(`${(r.perKAll / truncate.perKAll).toFixed(2)}×`, 9)}${pad(r.ids, 6)}${pad(f1(r.mean), 9)}${pad(`${(r.mean / truncate.mean).toFixed(2)}×`, 9)}${pad(Math.round(r.ms), 7)}`);
  }
  console.log(`\nby place (visible + reloadable, of the facts planted there); the turns the prompt holds (its user message's fact shown) and their tool-head facts reached`);
  console.log(padEnd("strategy", 38) + PLACES.map((p) => pad(`${p} (${planted[p]})`, 18)).join("") + pad("turns", 8) + pad("heads", 10));
  for (const r of rows) {
    console.log(padEnd(r.strategy, 38) + PLACES.map((p) => pad(`${r.byPlace.visible[p]} + ${r.byPlace.reloadable[p]}`, 18)).join("") + pad(r.turnsHeld, 8) + pad(`${r.heads.reached}/${r.heads.held}`, 10));
  }
}

/** The small window: facts per 1k tokens, the last prompt's and the mean of the last ones. */
function printSmall(rows) {
  const truncate = rows[0];
  console.log(`\nwindow ${SMALL_WINDOW}: largeMessageTokens and minToolRun by default follow the target; the last row pins them to the fixed values of before`);
  console.log(`${padEnd("strategy", 38)}${pad("visible", 9)}${pad("reload", 8)}${pad("tokens", 8)}${pad("/1k all", 9)}${pad("× trunc", 9)}${pad(`mean ${MEAN_OF}`, 9)}${pad("× trunc", 9)}`);
  for (const r of rows) {
    console.log(`${padEnd(r.strategy, 38)}${pad(r.visible, 9)}${pad(r.reloadable, 8)}${pad(r.tokens, 8)}${pad(f1(r.perKAll), 9)}${pad(`${(r.perKAll / truncate.perKAll).toFixed(2)}×`, 9)}${pad(f1(r.mean), 9)}${pad(`${(r.mean / truncate.mean).toFixed(2)}×`, 9)}`);
  }
}

function targets(rows, planted, base) {
  const by = (key) => rows.find((r) => r.key === key);
  const truncate = by("truncate"), priority = by("priority"), progressive = by("progressive");
  const headReached = progressive.byPlace.visible.toolHead + progressive.byPlace.reloadable.toolHead;
  const { held, reached } = progressive.heads;
  const lines = [
    ["progressive, no summarizer: ≥ 3× truncate's facts per 1k tokens (visible + reloadable)",
      `${(progressive.perKAll / truncate.perKAll).toFixed(2)}×`, progressive.perKAll >= 3 * truncate.perKAll],
    ["progressive, no summarizer: ≥ priority's facts per 1k tokens",
      `${f1(progressive.perKAll)} vs ${f1(priority.perKAll)} (${(progressive.perKAll / priority.perKAll).toFixed(2)}×)`, progressive.perKAll >= priority.perKAll],
    // As the issue states it, of all planted; the share of the turns the prompt holds is
    // shown beside it (why the first misses: docs/performance.md, Retention).
    ["progressive, no summarizer: ≥ half the tool-head facts visible or reloadable",
      `${headReached} of ${planted.toolHead} (${((100 * headReached) / planted.toolHead).toFixed(0)}%)`, 2 * headReached >= planted.toolHead],
    ["progressive, no summarizer: ≥ half the tool-head facts of the turns it holds",
      `${reached} of ${held} (${((100 * reached) / held).toFixed(0)}%)`, 2 * reached >= held],
  ];
  if (base) {
    // Every figure of the other strategies as the baseline build's (the same session).
    const others = rows.filter((r) => r !== progressive);
    const before = (r) => base.find((b) => b.key === r.key);
    const worse = others.filter((r) => r.visible + r.reloadable < before(r).visible + before(r).reloadable || r.perKAll < before(r).perKAll - 1e-9);
    const ratios = others.map((r) => `${r.key} ${(r.perKAll / before(r).perKAll).toFixed(2)}×`).join(", ");
    lines.push(["no regression of the other rows against CHR_BASE (facts per 1k, this build's / the baseline's)", ratios, worse.length === 0]);
  } else {
    lines.push(["no regression of the other strategies", "set CHR_BASE=<an older package> to compare", undefined]);
  }
  console.log(`\nissue 30's targets`);
  for (const [what, value, ok] of lines) console.log(`  ${ok === undefined ? "SKIP" : ok ? "PASS" : "FAIL"}  ${padEnd(what, 84)} ${value}`);
  return lines.every(([, , ok]) => ok !== false);
}

const s = session(SEED);
const planted = Object.fromEntries(PLACES.map((p) => [p, s.facts.filter((f) => f.place === p).length]));
const everything = [SYSTEM, ...s.turns.flatMap((t) => [t.user, ...t.steps.flat(), t.answer]), LAST_QUESTION];
const chr = await import(pathToFileURL(ENTRY).href);
console.log(`retention (issue 30), seed ${SEED}: ${TURNS} turns, ${everything.length} messages, ${chr.estimateTokens(everything)} tokens in all; windows ${WINDOW} and ${SMALL_WINDOW} (maxTokens; targetTokens its default, 80%)`);
const share = (ms) => chr.estimateTokens(ms);
console.log(`tokens: user messages ${share(s.turns.map((t) => t.user))}, answers ${share(s.turns.map((t) => t.answer))}, tool calls ${share(s.turns.flatMap((t) => t.steps.map((st) => st[0])))}, tool results ${share(s.turns.flatMap((t) => t.steps.flatMap((st) => st.slice(1))))}`);
console.log(`facts planted: ${s.facts.length} (${PLACES.map((p) => `${planted[p]} ${PLACE_NAMES[p]}`).join(", ")})`);
console.log(`summarizing strategies use an extractive summarizer that copies every fact it is handed, as many as fit: an upper bound, not a model's summary`);
const rows = await measure(ENTRY, s, STRATEGIES, WINDOW);
printRows(rows, planted, `window ${WINDOW}: the last prompt (${ENTRY})`);
let base;
if (BASE) {
  base = await measure(BASE, s, STRATEGIES, WINDOW);
  printRows(base, planted, `window ${WINDOW}, baseline: the last prompt (${BASE})`);
}
const small = await measure(ENTRY, s, SMALL_STRATEGIES, SMALL_WINDOW);
printSmall(small);
const ok = targets(rows, planted, base);
mkdirSync(join(HERE, "results"), { recursive: true });
writeFileSync(join(HERE, "results/retention.json"), JSON.stringify({ date: new Date().toISOString(), seed: SEED, turns: TURNS, window: WINDOW, planted, rows, base, small: { window: SMALL_WINDOW, rows: small } }, null, 2));
if (!ok) process.exitCode = 1;
