// The demo page's ChatHistory panel (www/chat.js) in a real headless Chromium: a history
// replayed turn by turn with the page's async summarizer, kept in localStorage as
// toJSON({ original: "omit" }) beside its messages, restored after a reload with
// ChatHistory.fromJSON(state, config, { original }), and edited by clicking rewind / remove.
// The control runs in Node on the same package, with the same summarizer and turns.
//
//   CHR_PKG=/path/to/chat-history-reducer node --test js-tests/e2e/page-history.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { SCREENSHOTS, useDemoPage } from "./helpers.mjs";
import { GENERATORS } from "../../www/generators.js";
import { stubSummarizer } from "../../www/summarizer.js";
import { turns } from "../../www/turns.js";

const STORAGE_KEY = "chat-history-reducer-demo";
const TURNS = 10;
const CONFIG = { strategy: "summarize", maxTokens: 900, keepLast: 1 };
let browser, page, lib;
useDemoPage((demo) => ({ lib, browser, page } = demo));

const text = (sel) => page.locator(sel).innerText();
const num = async (sel) => Number((await text(sel)).replace(/[^\d]/g, ""));
const shownHistory = async () => JSON.parse(await page.locator("#h-output").textContent());
const summaries = () => page.locator("#h-working li.summary-card").count();
const lastEvent = () => page.locator("#h-events li").last().innerText();

/** Clicks a button of the panel and waits for its action to end (data-ops counts them). */
async function act(selector) {
  const ops = Number(await page.getAttribute("#chat", "data-ops"));
  await page.click(selector);
  await page.waitForFunction(
    (n) => Number(document.getElementById("chat").dataset.ops) > n && document.getElementById("chat").dataset.busy === "false",
    ops,
    { timeout: 20_000 },
  );
  assert.doesNotMatch(await page.locator("#h-status").getAttribute("class"), /err/, await text("#h-status"));
}

/** The conversation and config of the controls, as a user sets them. */
async function setUp() {
  await page.fill("#turns", String(TURNS));
  await page.click('button[data-gen="openai"]');
  await page.check(`input[name="strategy"][value="${CONFIG.strategy}"]`, { force: true });
  await page.fill("#maxTokens", String(CONFIG.maxTokens));
  await page.fill("#targetMessages", "");
  await page.fill("#keepLast", String(CONFIG.keepLast));
}

/** The same session in Node, never interrupted: the working history and the summarizer calls after each turn. */
async function control() {
  let calls = 0;
  const history = new lib.ChatHistory({ ...CONFIG, summarizer: stubSummarizer({ delayMs: 0, onCall: () => (calls += 1) }) });
  const source = GENERATORS.openai.make(TURNS);
  const rounds = lib.analyze(source, { maxTokens: Number.MAX_SAFE_INTEGER }).messages.map((m) => m.round);
  const after = [];
  for (const [start, end] of turns(rounds)) {
    history.push(...source.slice(start, end));
    await history.prepare();
    after.push({ messages: JSON.parse(JSON.stringify(history.messages)), calls, stats: history.stats() });
  }
  return after;
}

test("a history kept in localStorage survives a reload and goes on as one that never stopped", async () => {
  assert.equal(await page.getAttribute("#chat", "data-restored"), "false", "a fresh profile has nothing stored");
  await setUp();
  await act("#h-start");
  let pushed = 1;
  while ((await summaries()) === 0) {
    assert.ok(pushed < TURNS, "a summary within the conversation");
    await act("#h-turn");
    pushed += 1;
  }
  const expected = await control();
  assert.equal(expected.length, TURNS);
  const beforeReload = await shownHistory();
  assert.deepEqual(beforeReload, expected[pushed - 1].messages, `after ${pushed} turns, as in Node`);
  const callsBefore = await num("#h-calls");
  assert.equal(callsBefore, expected[pushed - 1].calls);
  assert.ok(callsBefore >= 1);

  // What the page stored: the state without original, and the messages beside it.
  const stored = JSON.parse(await page.evaluate((key) => localStorage.getItem(key), STORAGE_KEY));
  assert.equal(stored.state.original, undefined, "toJSON({ original: \"omit\" })");
  assert.equal(stored.state.originalDigest.count, stored.original.length);
  assert.ok(JSON.stringify(stored.state).length < JSON.stringify(stored.original).length + JSON.stringify(beforeReload).length);
  assert.match(await text("#h-storage"), /Kept in localStorage .* the state without original [\d.]+ KB/);

  await page.reload();
  await page.waitForSelector('body[data-state="ready"]', { timeout: 20_000 });
  assert.equal(await page.getAttribute("#chat", "data-restored"), "true");
  assert.match(await text("#h-status"), /Restored from localStorage: \d+ messages, \d+ sent, \d+ summarizer calls? before the reload/);
  assert.deepEqual(await shownHistory(), beforeReload, "the same working history after the reload");
  assert.equal(await num("#h-calls"), callsBefore, "the stats came back with the state");
  assert.equal(await page.getAttribute("#chat", "data-calls"), "0", "restoring called no summarizer");

  await act("#h-all");
  const last = expected.at(-1);
  assert.deepEqual(await shownHistory(), last.messages, "the same working history as the control's");
  assert.equal(await num("#h-calls"), last.stats.summarizerCalls, "as many summarizer calls in all");
  assert.equal(Number(await page.getAttribute("#chat", "data-calls")), last.calls - expected[pushed - 1].calls,
    "after the reload, only the calls the control made after the same turn");
  assert.equal(await num("#h-reductions"), last.stats.reductions);
  assert.equal(await page.isDisabled("#h-turn"), true, "every turn pushed");
});

test("editing on the page: remove undoes the summary, prepare() redoes it, rewind drops the tail", async () => {
  await act("#h-forget");
  assert.equal(await page.evaluate((key) => localStorage.getItem(key), STORAGE_KEY), null, "Forget clears the storage");
  await setUp();
  await act("#h-start");
  await act("#h-all");
  assert.equal(await summaries(), 1);
  const total = await num("#h-n-original");
  const calls = await num("#h-calls");
  const reductions = await num("#h-reductions");
  assert.equal(await num("#h-undone"), 0);

  // A tool result under the summary: its call goes with it, and the summary is undone.
  const rows = page.locator("#h-original li.hmsg");
  const reducedTool = await rows.evaluateAll((rs) => rs.find((r) => r.classList.contains("reduced") && r.querySelector(".role").textContent === "tool")?.dataset.index);
  assert.ok(reducedTool !== undefined, "a tool result under the summary");
  await act(`#h-original button.h-remove[data-index="${reducedTool}"]`);
  assert.equal(await num("#h-n-original"), total - 2, "the call and its result went");
  assert.equal(await summaries(), 0, "the summary is undone");
  assert.equal(await num("#h-undone"), 1);
  assert.equal(await num("#h-edits"), 1);
  assert.equal(await num("#h-calls"), calls, "an edit calls no summarizer");
  assert.match(await lastEvent(), /^remove: 2 messages, [\d,]+ → [\d,]+ tokens \(undone 1, restored \d+\)/);
  assert.equal(await page.locator("#h-original li.hmsg.reduced").count(), 0, "every message is sent again");
  assert.equal(await num("#h-n-sent"), total - 2);

  // prepare(): over budget again, summarized again.
  await act("#h-prepare");
  assert.equal(await summaries(), 1, "the summary is back");
  assert.equal(await num("#h-calls"), calls + 1);
  assert.equal(await num("#h-reductions"), reductions + 1);
  assert.match(await lastEvent(), /^summarize: \d+ messages/);
  assert.ok((await num("#h-n-sent")) < total - 2);
  assert.match(await page.locator("#h-working li.summary-card").innerText(), /in place of #1–#\d+ \(\d+ messages\)/);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.locator("#chat").screenshot({ path: join(SCREENSHOTS, "demo-editing.png") });

  // rewind to the last user input: it and its answer go, the summary of older ones stays;
  // the next turn pushes them again (edit-and-resend).
  const lastUser = await rows.evaluateAll((rs) => rs.filter((r) => r.querySelector(".role").textContent === "user").at(-1).dataset.index);
  await act(`#h-original button.h-rewind[data-index="${lastUser}"]`);
  assert.equal(await num("#h-n-original"), Number(lastUser));
  assert.equal(await summaries(), 1, "a summary of what remains stays");
  assert.equal(await num("#h-undone"), 1);
  assert.match(await lastEvent(), /^rewind: \d+ messages, [\d,]+ → [\d,]+ tokens \(undone 0, restored 0\)/);
  assert.equal(await page.isDisabled("#h-turn"), false);
  await act("#h-turn");
  assert.equal(await num("#h-n-original"), total - 2);

  // At 390 px the panel fits the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), true);
  await page.screenshot({ path: join(SCREENSHOTS, "demo-editing-narrow.png"), fullPage: false });
  await page.setViewportSize({ width: 1280, height: 900 });
});

test("nothing but 127.0.0.1 was contacted, and the page logged no errors", () => {
  assert.deepEqual(browser.offsite, []);
  assert.deepEqual(browser.errors, []);
});
