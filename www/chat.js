// The demo's ChatHistory panel: the conversation above replayed turn by turn into a
// ChatHistory (push a turn, then prepare() as before a model call), edited by index into
// `original` (rewind, remove), and kept in localStorage so that it survives a reload: the
// state without `original` (toJSON({ original: "omit" })) beside the messages, joined
// again with ChatHistory.fromJSON(state, config, { original }).
import { ChatHistory, analyze, estimateTokens } from "./pkg/dist/chat_history_reducer.js";
import { preview } from "./generators.js";
import { stubSummarizer } from "./summarizer.js";
import { turnEnd } from "./turns.js";
import { $, fmt, el, eventText } from "./view.js";

/** Where the page keeps its history (one record, JSON). */
export const STORAGE_KEY = "chat-history-reducer-demo";

const chat = {
  history: null,
  /** The config as the controls gave it (what is stored); the summarizer is added to it. */
  config: null,
  /** The conversation replayed, analyze()'s round of each of its messages, and which of
   * its messages each one of `original` is; `next` is the first not pushed yet. */
  source: [],
  rounds: [],
  from: [],
  next: 0,
  /** Summarizer calls since the page loaded (the history's stats count them all). */
  calls: 0,
  busy: false,
  saved: null,
};

const summarizer = stubSummarizer({ delayMs: 150, onCall: () => (chat.calls += 1) });
let app;

function historyConfig(plain) {
  return plain.strategy === "summarize" ? { ...plain, summarizer } : { ...plain };
}

function callText(plain) {
  const shown = Object.entries(plain).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
  if (plain.strategy === "summarize") shown.push("summarizer");
  return `new ChatHistory({ ${shown.join(", ")} })`;
}

const isSummary = (m) => JSON.stringify(m).includes("<conversation-summary>");

// ---- what the buttons do ----------------------------------------------------------------

async function start() {
  const source = app.conversation();
  if (!source?.length) throw new Error("generate or paste a conversation first");
  const plain = app.config();
  const history = new ChatHistory(historyConfig(plain));
  Object.assign(chat, {
    history,
    config: plain,
    source: [...source],
    rounds: analyze(source, { maxTokens: Number.MAX_SAFE_INTEGER }).messages.map((m) => m.round),
    from: [],
    next: 0,
  });
  await turn();
}

/** Pushes the next turn of the conversation, then prepares the history as before a call. */
async function turn() {
  const end = turnEnd(chat.rounds, chat.next);
  chat.history.push(...chat.source.slice(chat.next, end));
  for (let k = chat.next; k < end; k++) chat.from.push(k);
  chat.next = end;
  await chat.history.prepare();
}

async function allTurns() {
  while (chat.next < chat.source.length) await turn();
}

function edit(kind, index) {
  const before = chat.history.original;
  if (kind === "rewind") {
    chat.history.rewind(index);
    // Edit-and-resend: the next turn pushes again from the message rewound to.
    chat.next = chat.from[index];
  } else {
    chat.history.remove(index);
  }
  const still = new Set(chat.history.original);
  chat.from = chat.from.filter((_, j) => still.has(before[j]));
}

function forget() {
  Object.assign(chat, { history: null, config: null, source: [], rounds: [], from: [], next: 0 });
}

// ---- storage ----------------------------------------------------------------------------

function save() {
  if (!chat.history) {
    localStorage.removeItem(STORAGE_KEY);
    chat.saved = null;
    return;
  }
  const state = chat.history.toJSON({ original: "omit" });
  const original = chat.history.original;
  const record = { version: 1, config: chat.config, source: chat.source, from: chat.from, next: chat.next, state, original };
  const text = JSON.stringify(record);
  localStorage.setItem(STORAGE_KEY, text);
  chat.saved = { total: text.length, state: JSON.stringify(state).length, original: JSON.stringify(original).length };
}

/** The history the page kept before a reload, if any: true when one was restored. */
function restore() {
  const text = localStorage.getItem(STORAGE_KEY);
  if (!text) return false;
  try {
    const r = JSON.parse(text);
    const history = ChatHistory.fromJSON(r.state, historyConfig(r.config), { original: r.original });
    Object.assign(chat, {
      history,
      config: r.config,
      source: r.source,
      rounds: analyze(r.source, { maxTokens: Number.MAX_SAFE_INTEGER }).messages.map((m) => m.round),
      from: r.from,
      next: r.next,
      saved: { total: text.length, state: JSON.stringify(r.state).length, original: JSON.stringify(r.original).length },
    });
    const s = history.stats();
    status(`Restored from localStorage: ${history.original.length} messages, ${history.messages.length} sent, ` +
      `${s.summarizerCalls} summarizer call${s.summarizerCalls === 1 ? "" : "s"} before the reload — none to restore it.`, "ok");
    return true;
  } catch (e) {
    localStorage.removeItem(STORAGE_KEY);
    status(`The saved history could not be restored (${app.errorText(e)}); it was forgotten.`, "err");
    return false;
  }
}

// ---- running an action ------------------------------------------------------------------

function status(text, cls = "") {
  $("h-status").textContent = text;
  $("h-status").className = `status ${cls}`;
}

/** Runs one action of the panel: one at a time, then stores and shows the history. */
async function act(what, fn) {
  if (chat.busy) return;
  chat.busy = true;
  const panel = $("chat");
  panel.dataset.busy = "true";
  render();
  const calls = chat.calls;
  const started = performance.now();
  try {
    await fn();
    save();
    const n = chat.calls - calls;
    status(`${what} took ${Math.round(performance.now() - started)} ms${n ? `, with ${n} summarizer call${n === 1 ? "" : "s"}` : ""}.`, "ok");
  } catch (e) {
    status(app.errorText(e), "err");
  } finally {
    chat.busy = false;
    panel.dataset.busy = "false";
    panel.dataset.ops = String(Number(panel.dataset.ops ?? 0) + 1);
    render();
  }
}

// ---- showing it -------------------------------------------------------------------------

function render() {
  const panel = $("chat");
  const h = chat.history;
  panel.dataset.calls = String(chat.calls);
  const idle = !chat.busy;
  $("h-start").disabled = !idle;
  $("h-turn").disabled = !idle || !h || chat.next >= chat.source.length;
  $("h-all").disabled = $("h-turn").disabled;
  $("h-prepare").disabled = !idle || !h;
  $("h-forget").disabled = !idle || !h;
  if (!h) {
    $("h-call").textContent = "new ChatHistory(config) — not started";
    for (const id of ["h-original", "h-working", "h-events"]) $(id).replaceChildren();
    for (const id of ["h-n-original", "h-n-sent", "h-tokens", "h-reductions", "h-calls", "h-edits", "h-undone"]) $(id).textContent = "–";
    $("h-output").textContent = "";
    $("h-storage").textContent = "Nothing stored: start a history and it is kept in localStorage, across reloads.";
    return;
  }
  const original = h.original;
  const working = h.messages;
  const stats = h.stats();
  const turnsDone = new Set(chat.from.map((k) => chat.rounds[k]).filter((r) => r > 0)).size;
  const turnsAll = new Set(chat.rounds.filter((r) => r > 0)).size;
  $("h-call").textContent = `${callText(chat.config)} · turns pushed ${turnsDone} of ${turnsAll}`;
  $("h-n-original").textContent = fmt(original.length);
  $("h-n-sent").textContent = fmt(working.length);
  $("h-tokens").textContent = `${fmt(estimateTokens(original))} → ${fmt(estimateTokens(working))}`;
  $("h-reductions").textContent = fmt(stats.reductions);
  $("h-calls").textContent = fmt(stats.summarizerCalls);
  $("h-edits").textContent = fmt(stats.edits);
  $("h-undone").textContent = fmt(stats.undone);

  // original, with the edits
  const sent = new Set(working);
  const groups = original.length ? analyze(original, { maxTokens: Number.MAX_SAFE_INTEGER }).messages.map((m) => m.group) : [];
  $("h-original").replaceChildren(...original.map((m, j) => {
    const row = el("li", `hmsg ${sent.has(m) ? "sent" : "reduced"}`);
    row.dataset.index = String(j);
    const prev = groups[j - 1] === groups[j];
    const next = groups[j + 1] === groups[j];
    if (prev || next) row.classList.add("grouped", prev ? (next ? "g-mid" : "g-end") : "g-start");
    row.append(el("span", "idx", `#${j}`), el("span", `role r-${m.role ?? "other"}`, m.role ?? "?"));
    const text = el("span", "text", preview(m));
    text.title = preview(m);
    row.append(text, el("span", `badge ${sent.has(m) ? "kept" : "summarized"}`, sent.has(m) ? "sent" : "reduced"));
    const actions = el("span", "actions");
    const button = (cls, label, title) => {
      const b = el("button", cls, label);
      b.type = "button";
      b.dataset.index = String(j);
      b.title = title;
      b.disabled = !idle;
      return b;
    };
    actions.append(
      button("h-rewind", "rewind", `rewind(${j}): drop #${j} and everything after it`),
      button("h-remove", "remove", `remove(${j}): drop #${j}${prev || next ? " with its tool group" : ""}`),
    );
    row.append(actions);
    return row;
  }));

  // what prepare() sends
  const at = new Map(original.map((m, j) => [m, j]));
  $("h-working").replaceChildren(...working.map((m, w) => {
    const j = at.get(m);
    if (j === undefined && isSummary(m)) {
      // In place of the messages not sent between the originals sent around it.
      const from = (at.get(working[w - 1]) ?? -1) + 1;
      const to = at.get(working[w + 1]) ?? original.length;
      const covered = original.slice(from, to).filter((o) => !sent.has(o)).length;
      const li = el("li", "summary-card");
      const where = covered ? ` · in place of #${from}–#${to - 1} (${covered} messages)` : "";
      li.append(el("div", "summary-head", `summary · role ${m.role ?? "user"} · ${fmt(estimateTokens(m))} tokens${where}`), el("div", "summary-text", preview(m)));
      return li;
    }
    const row = el("li", `hmsg ${j === undefined ? "offloaded" : "kept"}`);
    row.append(el("span", "idx", j === undefined ? "new" : `#${j}`), el("span", `role r-${m.role ?? "other"}`, m.role ?? "?"));
    const text = el("span", "text", preview(m));
    text.title = preview(m);
    row.append(text);
    return row;
  }));

  const events = h.events.map((e) => el("li", `ev-${e.type}`, eventText(e)));
  $("h-events").replaceChildren(...(events.length ? events : [el("li", null, "no events yet")]));
  $("h-output").textContent = JSON.stringify(working, null, 2);
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  $("h-storage").textContent = chat.saved
    ? `Kept in localStorage ("${STORAGE_KEY}"): ${kb(chat.saved.total)} — the state without original ${kb(chat.saved.state)} (toJSON({ original: "omit" })), the messages ${kb(chat.saved.original)}, the conversation replayed. Reload the page: it continues from there.`
    : "Not stored yet.";
}

/**
 * Wires the panel: `conversation()` is the conversation above (or null), `config()` the
 * controls' config, `errorText(e)` how the page words an error.
 */
export function setupChat(page) {
  app = page;
  $("h-start").addEventListener("click", () => act("Start: new ChatHistory, the first turn pushed, prepare()", start));
  $("h-turn").addEventListener("click", () => act("push(next turn), prepare()", turn));
  $("h-all").addEventListener("click", () => act("Every turn left, each pushed then prepared", allTurns));
  $("h-prepare").addEventListener("click", () => act("prepare()", () => chat.history.prepare()));
  $("h-forget").addEventListener("click", () => act("Forget", forget));
  $("h-original").addEventListener("click", (e) => {
    const b = e.target.closest("button[data-index]");
    if (!b) return;
    const kind = b.classList.contains("h-rewind") ? "rewind" : "remove";
    act(`${kind}(${b.dataset.index})`, () => edit(kind, Number(b.dataset.index)));
  });
  $("chat").dataset.restored = String(restore());
  $("chat").dataset.ops = "0";
  render();
}
