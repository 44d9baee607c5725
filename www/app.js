// The demo page: the real package (web target) loaded with `await init()`, no framework.
import init, { reduce, reduceSync, shouldReduce, estimateTokens, analyze, ReduceError } from "./pkg/dist/chat_history_reducer.js";
import { GENERATORS, preview } from "./generators.js";
import { stubSummarizer } from "./summarizer.js";
import { $, fmt, el, eventText } from "./view.js";
import { setupChat } from "./chat.js";

const STRATEGY_HINTS = {
  truncate: "Drops the oldest groups until every target is met; the history still starts on a user message.",
  priority: "Drops old tool calls and their results first, then the oldest other messages; the newest user/assistant pairs stay.",
  summarize: "Replaces the oldest messages with one summary from an async summarizer (a 300 ms stub here) and keeps the newest verbatim.",
  progressive: "Light to heavy, stopping when the target is met: runs of old tool calls become digests, large messages become previews with a reload id, old tool results are cleared to a placeholder with their id (the newest keepToolResults stay; the originals stay in result.offloaded); only if that is not enough are the oldest groups dropped.",
};

const state = { messages: null, analysis: null, result: null, runs: 0, summarizerCalls: [] };

/** The debounce of the textarea's edits (its timer while one waits). */
let typing;

// ---- load the WebAssembly module ------------------------------------------------------

const t0 = performance.now();
try {
  await init();
  const wasmEntry = performance.getEntriesByType("resource").find((e) => e.name.endsWith(".wasm"));
  const size = wasmEntry?.encodedBodySize || wasmEntry?.transferSize;
  $("wasm-status").textContent = `WebAssembly ready in ${Math.round(performance.now() - t0)} ms${size ? ` · ${Math.round(size / 1024)} KB` : ""}`;
  $("wasm-status").classList.add("ok");
} catch (e) {
  $("wasm-status").textContent = `Could not load the WebAssembly module: ${e.message}`;
  $("wasm-status").classList.add("err");
  document.body.dataset.state = "error";
  throw e;
}

// ---- the summarizer stub ---------------------------------------------------------------

/** Async like a model call: resolves after ~300 ms with a short deterministic summary. */
const summarizer = stubSummarizer({ delayMs: 300, onCall: (call) => state.summarizerCalls.push(call) });

// ---- reading the controls --------------------------------------------------------------

function strategy() {
  return document.querySelector('input[name="strategy"]:checked').value;
}

function numberField(id) {
  const raw = $(id).value.trim();
  if (raw === "") return undefined;
  return Number(raw);
}

/** The config the page passes, without the summarizer (for display). */
function plainConfig() {
  const c = { strategy: strategy() };
  for (const key of ["maxTokens", "targetMessages", "keepLast"]) {
    const v = numberField(key);
    if (v !== undefined) c[key] = v;
  }
  return c;
}

function config() {
  const c = plainConfig();
  if (c.strategy === "summarize") c.summarizer = summarizer;
  return c;
}

function showCall() {
  const c = plainConfig();
  const shown = Object.entries(c).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
  if (c.strategy === "summarize") shown.push("summarizer");
  const fn = c.strategy === "summarize" ? "await reduce" : "reduceSync";
  $("call").textContent = `${fn}(messages, { ${shown.join(", ")} })`;
  $("strategy-hint").textContent = STRATEGY_HINTS[c.strategy];
  const hints = [];
  if (c.maxTokens !== undefined) hints.push(`Reduces when over ${fmt(c.maxTokens)} tokens, down to ${fmt(Math.floor(0.8 * c.maxTokens))} (80 %).`);
  if (c.targetMessages !== undefined) hints.push(`Reduces when over ${fmt(c.targetMessages + 5)} messages, down to ${fmt(c.targetMessages)}.`);
  hints.push(`The newest ${c.keepLast ?? 1} group${(c.keepLast ?? 1) === 1 ? " is" : "s are"} never removed.`);
  $("budget-hint").textContent = hints.join(" ");
}

// ---- the conversation ------------------------------------------------------------------

function generate(kind) {
  const turns = Math.max(1, Math.min(60, Number($("turns").value) || 8));
  state.messages = GENERATORS[kind].make(turns);
  $("conversation").value = JSON.stringify(state.messages, null, 2);
  for (const b of document.querySelectorAll(".gen")) b.classList.toggle("active", b.dataset.gen === kind);
  refresh();
}

function parseInput() {
  try {
    const parsed = JSON.parse($("conversation").value);
    if (!Array.isArray(parsed)) throw new Error("expected a JSON array of messages");
    state.messages = parsed;
    return true;
  } catch (e) {
    state.messages = null;
    $("input-info").textContent = `Not valid JSON: ${e.message}`;
    $("input-info").className = "hint err";
    return false;
  }
}

/** Re-analyses the input and shows the "before" view; clears any earlier result. */
function refresh() {
  showCall();
  state.result = null;
  state.analysis = null;
  $("reduce").disabled = true;
  // (No verdict of an earlier input stays beside a new one that cannot be read.)
  $("status").textContent = "";
  $("status").className = "status";
  if (!parseInput()) {
    renderEmpty();
    return;
  }
  try {
    state.analysis = analyze(state.messages, plainConfig());
  } catch (e) {
    $("input-info").textContent = errorText(e);
    $("input-info").className = "hint err";
    renderEmpty();
    return;
  }
  const a = state.analysis;
  $("input-info").className = "hint";
  $("input-info").textContent = `${a.totalMessages} messages · ${fmt(a.totalTokens)} tokens · format ${a.format} · ${a.groups} groups · ${a.rounds} rounds`;
  document.body.dataset.state = "ready";
  render();
  try {
    $("status").textContent = shouldReduce(state.messages, plainConfig())
      ? "A trigger fires: this conversation is over budget."
      : "Within budget: no trigger fires, Reduce would change nothing.";
    $("status").className = "status";
    $("reduce").disabled = false;
  } catch (e) {
    // e.g. no trigger set: the config is what needs fixing, the messages are fine
    $("status").textContent = errorText(e);
    $("status").className = "status err";
  }
}

function errorText(e) {
  return e instanceof ReduceError ? `ReduceError ${e.code}${e.field ? ` (${e.field})` : ""}${e.index != null ? ` (message ${e.index})` : ""}: ${e.message}` : String(e?.message ?? e);
}

// ---- reducing --------------------------------------------------------------------------

async function run() {
  // An edit still waiting for its debounce is read first: Reduce works on what is shown.
  if (typing !== undefined) {
    clearTimeout(typing);
    typing = undefined;
    refresh();
  }
  if (!state.messages || !state.analysis) return;
  const cfg = config();
  state.summarizerCalls = [];
  document.body.dataset.state = "reducing";
  $("reduce").disabled = true;
  $("status").className = "status busy";
  $("status").textContent = cfg.strategy === "summarize" ? "Waiting for the summarizer (stub model, ~300 ms)…" : "Reducing…";
  const started = performance.now();
  try {
    state.result = cfg.strategy === "summarize" ? await reduce(state.messages, cfg) : reduceSync(state.messages, cfg);
    state.ms = performance.now() - started;
    state.runs += 1;
    document.body.dataset.runs = String(state.runs);
    $("status").className = "status ok";
    $("status").textContent = `${cfg.strategy === "summarize" ? "await reduce()" : "reduceSync()"} took ${state.ms < 10 ? state.ms.toFixed(1) : Math.round(state.ms)} ms` +
      (state.summarizerCalls.length ? `, of which the summarizer ${state.summarizerCalls.reduce((s, c) => s + c.ms, 0)} ms.` : ".");
    render();
    document.body.dataset.state = "done";
  } catch (e) {
    $("status").className = "status err";
    $("status").textContent = errorText(e);
    document.body.dataset.state = "error";
  } finally {
    $("reduce").disabled = false;
  }
}

// ---- rendering -------------------------------------------------------------------------

function outcomes() {
  const r = state.result;
  const n = state.messages.length;
  if (!r) return new Array(n).fill("pending");
  const out = new Array(n).fill("offloaded");
  for (const i of r.kept) out[i] = "kept";
  for (const i of r.dropped) out[i] = "dropped";
  for (const i of r.summarized) out[i] = "summarized";
  return out;
}

function renderEmpty() {
  for (const id of ["bar-before", "bar-after", "markers", "messages", "events", "output"]) $(id).replaceChildren();
  for (const id of ["bar-before-total", "bar-after-total"]) $(id).textContent = "";
  for (const id of ["msgs-before", "msgs-after", "tokens-before", "tokens-after", "stat-kept", "stat-dropped", "stat-summarized", "stat-time"]) $(id).textContent = "–";
  $("headline").textContent = "Generate or paste a conversation, then click Reduce.";
  document.body.dataset.state = "ready";
}

const LABEL = { kept: "kept", dropped: "dropped", summarized: "summarized", offloaded: "offloaded", pending: "—" };
const WHY = {
  system: "system prompt",
  summary: "earlier summary",
  keepLast: "newest (keepLast)",
  latestUserInput: "latest user input",
  startOnUser: "first user message",
};

function render() {
  const a = state.analysis;
  const r = state.result;
  const cfg = plainConfig();
  const out = outcomes();

  // stats and headline
  $("msgs-before").textContent = fmt(a.totalMessages);
  $("tokens-before").textContent = fmt(a.totalTokens);
  $("msgs-after").textContent = r ? fmt(r.messages.length) : "?";
  $("tokens-after").textContent = r ? fmt(r.tokensAfter) : "?";
  $("stat-kept").textContent = r ? fmt(r.kept.length) : "–";
  $("stat-dropped").textContent = r ? fmt(r.dropped.length) : "–";
  $("stat-summarized").textContent = r ? fmt(r.summarized.length) : "–";
  $("stat-time").textContent = r ? `${state.ms < 10 ? state.ms.toFixed(1) : Math.round(state.ms)} ms` : "–";
  $("headline").replaceChildren(...headline(a, r, cfg));

  // token bars
  const maxT = cfg.maxTokens;
  const target = maxT !== undefined ? Math.floor(0.8 * maxT) : undefined;
  const scale = Math.max(a.totalTokens, maxT ?? 0) * 1.04 || 1;
  const seg = (tokens, cls, title) => {
    const s = el("span", `seg ${cls}`);
    s.style.width = `${(100 * tokens) / scale}%`;
    s.title = title;
    return s;
  };
  $("bar-before").replaceChildren(...a.messages.map((m) => seg(m.tokens, out[m.index], `#${m.index} ${m.role}: ${m.tokens} tokens (${LABEL[out[m.index]]})`)));
  $("bar-before-total").textContent = `${fmt(a.totalTokens)} tokens`;
  if (r) {
    const kept = new Set(r.kept);
    const inputIndex = new Map(r.kept.map((i) => [state.messages[i], i]));
    $("bar-after").replaceChildren(...r.messages.map((m) => {
      const i = inputIndex.get(m);
      if (i !== undefined && kept.has(i)) return seg(a.messages[i].tokens, "kept", `#${i}: ${a.messages[i].tokens} tokens`);
      const t = estimateTokens(m, cfg);
      return m === r.summary ? seg(t, "summary", `new summary: ${t} tokens`) : seg(t, "offloaded", `rewritten: ${t} tokens`);
    }));
    $("bar-after-total").textContent = `${fmt(r.tokensAfter)} tokens`;
  } else {
    $("bar-after").replaceChildren();
    $("bar-after-total").textContent = "";
  }
  const markers = [];
  const marker = (value, cls, text) => {
    const m = el("span", `marker ${cls}`);
    m.style.left = `${(100 * value) / scale}%`;
    m.append(el("span", "marker-label", text));
    markers.push(m);
  };
  if (maxT !== undefined) {
    marker(maxT, "max", `maxTokens ${fmt(maxT)}`);
    marker(target, "target", `target ${fmt(target)}`);
  }
  $("markers").replaceChildren(...markers);
  const present = new Set(out);
  if (r) present.add("kept").add("dropped").add("summarized");
  if (r?.summary) present.add("summary");
  for (const li of document.querySelectorAll(".legend li")) li.hidden = !present.has(li.dataset.kind);
  $("bars").classList.toggle("over", maxT !== undefined && a.totalTokens > maxT);

  // the message list
  const maxTokens = Math.max(...a.messages.map((m) => m.tokens), 1);
  const groupSize = new Map();
  for (const m of a.messages) groupSize.set(m.group, (groupSize.get(m.group) ?? 0) + 1);
  const rows = [];
  let round = -1;
  const lastSummarized = r?.summarized.length ? Math.max(...r.summarized) : -1;
  const offloadId = new Map();
  for (const [id, originals] of Object.entries(r?.offloaded ?? {})) for (const o of originals) offloadId.set(o, id);
  a.messages.forEach((m, k) => {
    if (m.round !== round) {
      round = m.round;
      if (round > 0) rows.push(el("li", "round", `round ${round}`));
    }
    const row = el("li", `msg ${out[m.index]}`);
    row.dataset.index = String(m.index);
    row.dataset.outcome = out[m.index];
    const size = groupSize.get(m.group);
    if (size > 1) {
      const prev = a.messages[k - 1]?.group === m.group;
      const next = a.messages[k + 1]?.group === m.group;
      row.classList.add("grouped", prev ? (next ? "g-mid" : "g-end") : "g-start");
    }
    row.append(el("span", "idx", `#${m.index}`));
    row.append(el("span", `role r-${m.role}`, m.role));
    const text = el("span", "text");
    if (m.protected) text.append(el("span", "why", `protected: ${WHY[m.protectedBy] ?? m.protectedBy ?? "yes"}`));
    if (size > 1 && !(a.messages[k - 1]?.group === m.group)) text.append(el("span", "grp", "tool group"));
    const oid = offloadId.get(state.messages[m.index]);
    if (oid) text.append(el("span", "oid", `reloadable: ${oid}`));
    text.append(document.createTextNode(preview(state.messages[m.index])));
    text.title = preview(state.messages[m.index]);
    row.append(text);
    const tok = el("span", "tok");
    const mini = el("span", "mini");
    mini.style.width = `${Math.max(2, (100 * m.tokens) / maxTokens)}%`;
    tok.append(el("span", "n", fmt(m.tokens)), el("span", "mini-track"));
    tok.lastChild.append(mini);
    row.append(tok);
    row.append(el("span", `badge ${out[m.index]}`, LABEL[out[m.index]]));
    rows.push(row);
    if (r?.summary && m.index === lastSummarized) rows.push(summaryCard(r, cfg));
  });
  $("messages").replaceChildren(...rows);

  // events and output
  const events = r ? r.events.map((e) => el("li", null, eventText(e))) : [];
  for (const c of state.summarizerCalls) events.push(el("li", null, `summarizer call: kind ${c.kind}, ${c.messages} messages, targetTokens ${c.targetTokens}, answered in ${c.ms} ms`));
  if (r && !events.length) events.push(el("li", null, "no events: nothing was reduced"));
  $("events").replaceChildren(...events);
  $("output").textContent = r ? JSON.stringify(r.messages, null, 2) : "";
}

function summaryCard(r, cfg) {
  const li = el("li", "summary-card");
  li.dataset.outcome = "summary";
  const tokens = estimateTokens(r.summary, cfg);
  const covered = r.summarized;
  const where = state.analysis.messages[0]?.role === "system" ? "right after the system prompt" : "at the start of the history";
  const head = el("div", "summary-head");
  head.append(el("span", "badge summary", "new summary"),
    el("span", null, ` replaces #${Math.min(...covered)}–#${Math.max(...covered)} (${covered.length} messages) with ${fmt(tokens)} tokens · role ${r.summary.role ?? "user"} · placed ${where}`));
  li.append(head, el("div", "summary-text", preview(r.summary)));
  return li;
}

function headline(a, r, cfg) {
  const b = (t) => el("b", null, t);
  const t = (s) => document.createTextNode(s);
  if (!r) {
    const over = cfg.maxTokens !== undefined && a.totalTokens > cfg.maxTokens;
    return over
      ? [b(`${fmt(a.totalTokens)} tokens`), t(` is over maxTokens ${fmt(cfg.maxTokens)}. Click `), b("Reduce"), t(" to fit it.")]
      : [t(`${a.totalMessages} messages, ${fmt(a.totalTokens)} tokens. Click `), b("Reduce"), t(" to apply the strategy.")];
  }
  if (!r.reduced) return [b("Nothing to do: "), t("no trigger fires, so the history is returned unchanged (the same objects).")];
  const pct = a.totalTokens ? Math.round((100 * (r.tokensBefore - r.tokensAfter)) / r.tokensBefore) : 0;
  const parts = [b(`${a.totalMessages} → ${r.messages.length} messages, ${fmt(r.tokensBefore)} → ${fmt(r.tokensAfter)} tokens (−${pct} %). `)];
  if (r.summarized.length) parts.push(t(`${r.summarized.length} older messages became one summary; `));
  if (r.dropped.length) parts.push(t(`${r.dropped.length} dropped in whole groups; `));
  parts.push(t(`${r.kept.length} kept verbatim.`));
  if (r.overBudget) parts.push(el("span", "warn", " Over budget: the protected messages alone exceed a target."));
  return parts;
}

// ---- wiring ----------------------------------------------------------------------------

for (const b of document.querySelectorAll(".gen")) b.addEventListener("click", () => generate(b.dataset.gen));
$("reduce").addEventListener("click", run);
$("conversation").addEventListener("input", () => {
  clearTimeout(typing);
  for (const b of document.querySelectorAll(".gen")) b.classList.remove("active");
  typing = setTimeout(() => {
    typing = undefined;
    refresh();
  }, 250);
});
for (const id of ["maxTokens", "targetMessages", "keepLast"]) $(id).addEventListener("input", refresh);
for (const r of document.querySelectorAll('input[name="strategy"]')) r.addEventListener("change", refresh);
$("turns").addEventListener("change", () => {
  const active = document.querySelector(".gen.active");
  if (active) generate(active.dataset.gen);
});

generate("openai");
setupChat({ conversation: () => state.messages, config: plainConfig, errorText });
