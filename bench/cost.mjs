// What a long agent session costs with prompt caching (issue 29, targets 4 and 5).
//
// One seeded agent session from generate.mjs, replayed call by call: the model is called
// before every assistant message, on what each contender sends. Every prompt is billed
// under OpenAI's automatic prefix caching (the OpenAI-format session) and under Anthropic's
// breakpoint caching (the same session in Anthropic's format), by the rules of
// caching.mjs; summarizer calls are billed too (input at 1, output at 8: an output token
// costs eight input tokens). Bills are in input-token units.
//
// Contenders, all with a window of a tenth of the session's tokens (the package's estimate):
// a sliding window that trims to the window on every call (trimMessages' policy, here
// reduceSync with targetTokens = maxTokens), the same at 80% of the window, and ChatHistory
// with maxTokens = the window and the strategies truncate (the default), summarize and
// progressive. Under Anthropic's rule each is billed without breakpoints and with
// `cacheBreakpoints: true`.
//
// Token counts for the bills: gpt-tokenizer (o200k_base) over each message's texts (role,
// contents, call names and arguments, results, ids), plus 3 a message.
//
//   node bench/cost.mjs [--messages 2000] [--seed 42]    (after `make build`)
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { countTokens } from "gpt-tokenizer";
import { ChatHistory, estimateTokens, reduceSync } from "../pkg/node.js";
import { AnthropicCache, OpenAICache, checkRules } from "./caching.mjs";
import { toFormat } from "./formats.mjs";
import { generateConversation, prng } from "./generate.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const MESSAGES = arg("messages", 2000);
const SEED = arg("seed", 42);
const WINDOW_SHARE = 0.1;
const OUTPUT_PRICE = 8;
/** What the stand-in summarizer writes: a tenth of what it is handed, within what it is asked. */
const SUMMARY_SHARE = 0.1;

checkRules();

// ---- what a message costs, and which bytes it is --------------------------------------------

/** A message's bytes as the provider caches them: its mark left out, a string content as the
 * one text block Anthropic reads it as. */
function bytesOf(m) {
  return JSON.stringify(m, (key, value) => {
    if (key === "cache_control") return undefined;
    if (key === "content" && typeof value === "string") return [{ type: "text", text: value }];
    return value;
  });
}

/** The texts a model reads of a message: every string but `type`s, objects given as
 * arguments as their JSON. */
function textsOf(value, out, key) {
  if (typeof value === "string") {
    if (key !== "type") out.push(value);
  } else if (typeof value === "number") {
    out.push(String(value));
  } else if (Array.isArray(value)) {
    for (const v of value) textsOf(v, out);
  } else if (value !== null && typeof value === "object") {
    if (key === "input" || key === "args") out.push(JSON.stringify(value));
    else for (const k of Object.keys(value)) if (k !== "cache_control") textsOf(value[k], out, k);
  }
  return out;
}

const KEYS = new Map();
const TOKENS = new Map();
const DESCRIBED = new WeakMap();

/** `{ key, tokens, blocks, marked }` of a message (caching.mjs). */
function describe(m) {
  let d = DESCRIBED.get(m);
  if (d !== undefined) return d;
  const bytes = bytesOf(m);
  let key = KEYS.get(bytes);
  if (key === undefined) {
    key = KEYS.size + 1;
    KEYS.set(bytes, key);
    TOKENS.set(key, 3 + countTokens(textsOf(m, []).join(" ")));
  }
  const content = m.content;
  const marked = Array.isArray(content) && content.some((b) => b !== null && typeof b === "object" && b.cache_control != null);
  d = { key, tokens: TOKENS.get(key), blocks: Array.isArray(content) ? Math.max(1, content.length) : 1, marked };
  DESCRIBED.set(m, d);
  return d;
}

const tokensOf = (messages) => messages.reduce((s, m) => s + describe(m).tokens, 0);

// ---- the stand-in summarizer ----------------------------------------------------------------

const WORDS = "the agent looked up flights hotels prices tool results errors and the user asked for a plan with dates budget constraints and noted what was found where".split(" ");

/** A summarizer that writes a tenth of its input's tokens (at most 90% of what it is asked
 * for), metered. */
function standInSummarizer(meter) {
  const random = prng(SEED + 1);
  return async (request) => {
    const input = tokensOf(request.messages) + (request.previousSummary ? countTokens(request.previousSummary) : 0);
    const want = Math.max(40, Math.min(Math.floor(0.9 * request.targetTokens), Math.round(SUMMARY_SHARE * input)));
    const words = [`Summary ${++meter.calls} (${request.kind}):`];
    // (About 1.1 tokens a word: a little under what is wanted.)
    for (let k = 0; k < want * 0.85; k++) words.push(WORDS[Math.floor(random() * WORDS.length)]);
    const text = words.join(" ") + ".";
    meter.input += input;
    meter.output += countTokens(text);
    return text;
  };
}

// ---- the session and the contenders ---------------------------------------------------------

const session = generateConversation(MESSAGES, { seed: SEED });
const sessions = { openai: session, anthropic: toFormat(session, "anthropic") };
const WINDOW = Math.round(WINDOW_SHARE * estimateTokens(session));

const CONTENDERS = [
  { id: "sliding", name: "sliding window (trims to the window every call)", sliding: 1 },
  { id: "sliding80", name: "sliding window at 80% of it", sliding: 0.8 },
  { id: "truncate", name: "ChatHistory, truncate (the default)", config: {} },
  { id: "summarize", name: "ChatHistory, summarize", config: { strategy: "summarize" }, summarizes: true },
  { id: "progressive", name: "ChatHistory, progressive", config: { strategy: "progressive" }, summarizes: true },
];

/** Replays the session in `format` for contender `c`, billing each prompt with `cache`. */
async function replay(c, format, cache, breakpoints) {
  const messages = sessions[format];
  const meter = { calls: 0, input: 0, output: 0 };
  const extra = { format, ...(breakpoints ? { cacheBreakpoints: true } : {}) };
  let prompt;
  if (c.sliding) {
    const budget = Math.round(c.sliding * WINDOW);
    const config = { maxTokens: budget, targetTokens: budget, ...extra };
    const history = [];
    prompt = async () => reduceSync(history, config).messages;
    prompt.push = (m) => history.push(m);
  } else {
    const config = { maxTokens: WINDOW, ...c.config, ...extra, ...(c.summarizes ? { summarizer: standInSummarizer(meter) } : {}) };
    const history = new ChatHistory(config);
    prompt = () => history.prepare();
    prompt.push = (m) => history.push(m);
    prompt.history = history;
  }
  const totals = { calls: 0, tokens: 0, read: 0, written: 0, billed: 0, breaks: 0 };
  let before = [];
  for (const m of messages) {
    if (m.role === "assistant") {
      const sent = (await prompt()).map(describe);
      // (A break: this prompt is not the one before with messages after it.)
      if (before.some((d, i) => sent[i] === undefined || sent[i].key !== d.key)) totals.breaks++;
      before = sent;
      const bill = cache.bill(sent);
      totals.calls++;
      totals.tokens += bill.tokens;
      totals.read += bill.read;
      totals.written += bill.written;
      totals.billed += bill.billed;
    }
    prompt.push(m);
  }
  totals.summarizer = meter;
  totals.summarizerBill = meter.input + OUTPUT_PRICE * meter.output;
  totals.total = totals.billed + totals.summarizerBill;
  return totals;
}

// ---- run ------------------------------------------------------------------------------------

const started = performance.now();
const RULES = [
  { id: "openai", name: "OpenAI (automatic prefix caching)", format: "openai", cache: () => new OpenAICache(), breakpoints: [false] },
  { id: "anthropic", name: "Anthropic (cache_control breakpoints)", format: "anthropic", cache: () => new AnthropicCache(), breakpoints: [false, true] },
];
const results = {};
for (const rule of RULES) {
  results[rule.id] = {};
  for (const c of CONTENDERS) {
    for (const bp of rule.breakpoints) {
      results[rule.id][`${c.id}${bp ? "+bp" : ""}`] = await replay(c, rule.format, rule.cache(), bp);
    }
  }
}

const int = (x) => Math.round(x).toLocaleString("en-US");
const millions = (x) => `${(x / 1e6).toFixed(2)} M`;
const pct = (x) => `${(100 * x).toFixed(0)}%`;
const sessionTokens = tokensOf(session);
console.log(`Cost per session (issue 29): node ${process.version}, ${cpus().length} × ${cpus()[0]?.model?.trim() ?? "cpu"}, ${new Date().toISOString().slice(0, 10)}`);
console.log(`A ${int(MESSAGES)}-message agent session (bench/generate.mjs, seed ${SEED}): ${int(sessionTokens)} tokens (gpt-tokenizer o200k, +3 a message), ` +
  `${int(results.openai.sliding.calls)} model calls; window ${int(WINDOW)} tokens (a tenth of the package's estimate, ${int(estimateTokens(session))}).`);
console.log(`Bills in input-token units: cached reads 0.1, Anthropic cache writes 1.25, summarizer input 1 and output ${OUTPUT_PRICE}.`);

/** The sliding window's bill under a rule: its cheaper one (with or without breakpoints). */
const reference = (rule) => Math.min(...Object.entries(results[rule]).filter(([k]) => k === "sliding" || k === "sliding+bp").map(([, r]) => r.total));
const rows = [];
for (const rule of RULES) {
  const ref = reference(rule.id), sent = results[rule.id].sliding.tokens;
  console.log(`\n${rule.name}: ratio to the sliding window's ${rule.breakpoints.length > 1 ? "cheaper " : ""}bill (${millions(ref)})`);
  console.log(`  ${"contender".padEnd(64)}${"billed".padStart(9)}${"÷ sliding".padStart(11)}${"from cache".padStart(12)}${"written".padStart(9)}${"context".padStart(9)}${"breaks".padStart(8)}${"summarizer".padStart(17)}`);
  for (const [key, r] of Object.entries(results[rule.id])) {
    const c = CONTENDERS.find((x) => x.id === key.replace("+bp", ""));
    const name = `${c.name}${key.endsWith("+bp") ? ", cacheBreakpoints" : ""}`;
    const row = {
      rule: rule.id, contender: key, name, billed: r.total, ratio: r.total / ref, cacheShare: r.read / r.tokens,
      writtenShare: r.written / r.tokens, context: r.tokens / sent, summarizerBill: r.summarizerBill, summarizerCalls: r.summarizer.calls, breaks: r.breaks,
    };
    rows.push(row);
    console.log(`  ${name.padEnd(64)}${millions(row.billed).padStart(9)}${row.ratio.toFixed(2).padStart(11)}${pct(row.cacheShare).padStart(12)}${pct(row.writtenShare).padStart(9)}` +
      `${row.context.toFixed(2).padStart(9)}${String(r.breaks).padStart(8)}${(r.summarizer.calls ? `${millions(r.summarizerBill)} (${r.summarizer.calls})` : "—").padStart(17)}`);
  }
}
console.log(`\n  from cache: the share of prompt tokens read from cache; written: written to it (Anthropic); context: tokens sent ÷ the sliding window's;`);
console.log(`  breaks: calls whose prompt is not the one before with messages after it (its cached prefix ends there); summarizer: its bill (calls).`);

const row = (rule, contender) => rows.find((r) => r.rule === rule && r.contender === contender);
const verdicts = [
  ["OpenAI: the default ChatHistory ≤ 0.5× the sliding window's bill", row("openai", "truncate"), (r) => r.ratio, 0.5, "≤"],
  ["Anthropic: the default ChatHistory with cacheBreakpoints ≤ 0.5× the sliding window's bill", row("anthropic", "truncate+bp"), (r) => r.ratio, 0.5, "≤"],
  ["OpenAI: the default ChatHistory sends ≥ 0.85× the sliding window's context", row("openai", "truncate"), (r) => r.context, 0.85, "≥"],
  ["Anthropic: the default ChatHistory sends ≥ 0.85× the sliding window's context", row("anthropic", "truncate+bp"), (r) => r.context, 0.85, "≥"],
].map(([name, r, value, bound, op]) => {
  const v = value(r);
  return { name, value: v, pass: op === "≤" ? v <= bound : v >= bound };
});
console.log(`\nTargets (issue 29, item 4)`);
for (const v of verdicts) console.log(`  ${v.pass ? "PASS" : "FAIL"}  ${v.name}: ${v.value.toFixed(2)}×`);
const seconds = (performance.now() - started) / 1000;
console.log(`\nTotal ${seconds.toFixed(1)} s`);

const out = join(HERE, "results");
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "cost.json"), JSON.stringify({
  date: new Date().toISOString(), node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model, messages: MESSAGES, seed: SEED,
  sessionTokens, window: WINDOW, calls: results.openai.sliding.calls, rows, targets: verdicts, results, seconds,
}, null, 1) + "\n");
console.log(`Results: ${join(out, "cost.json")}`);
