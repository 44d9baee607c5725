// The demo page (www/) in a real headless Chromium: the page loads the package's web build
// with `await init()`, generates conversations, reduces them on a click (truncate, priority
// and the async summarize path) and shows what happened to each message.
//
//   CHR_PKG=/path/to/chat-history-reducer node --test js-tests/e2e/page.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { SCREENSHOTS, useDemoPage } from "./helpers.mjs";
import { GENERATORS } from "../../www/generators.js";

let browser, page, lib;
useDemoPage((demo) => ({ lib, browser, page } = demo));

const text = (sel) => page.locator(sel).innerText();
const num = async (sel) => Number((await text(sel)).replace(/[^\d]/g, ""));

async function setField(id, value) {
  await page.fill(`#${id}`, value === undefined ? "" : String(value));
}

/** Clicks Reduce and waits for the next result (or an error). */
async function clickReduce() {
  const runs = Number((await page.getAttribute("body", "data-runs")) ?? 0);
  await page.click("#reduce");
  await page.waitForFunction(
    (n) => Number(document.body.dataset.runs ?? 0) > n || document.body.dataset.state === "error",
    runs,
    { timeout: 10_000 },
  );
  assert.equal(await page.getAttribute("body", "data-state"), "done", await text("#status"));
}

async function shown() {
  const outcomes = await page.locator("#messages li.msg").evaluateAll((rows) => rows.map((r) => r.dataset.outcome));
  const count = (o) => outcomes.filter((x) => x === o).length;
  return {
    outcomes,
    kept: await num("#stat-kept"),
    dropped: await num("#stat-dropped"),
    summarized: await num("#stat-summarized"),
    tokensBefore: await num("#tokens-before"),
    tokensAfter: await num("#tokens-after"),
    msgsAfter: await num("#msgs-after"),
    rows: { kept: count("kept"), dropped: count("dropped"), summarized: count("summarized") },
  };
}

test("the page loads the real WebAssembly module", async () => {
  assert.match(await text("#wasm-status"), /WebAssembly ready in \d+ ms/);
  const wasm = await page.evaluate(() =>
    performance.getEntriesByType("resource").filter((e) => e.name.endsWith(".wasm")).map((e) => e.name));
  assert.equal(wasm.length, 1, "one .wasm fetched");
  assert.match(wasm[0], /\/pkg\/dist\/chat_history_reducer_bg\.wasm$/);
  const res = await page.request.get(wasm[0]);
  assert.equal(res.headers()["content-type"], "application/wasm");
});

test("generate an OpenAI conversation, truncate it by clicking Reduce", async () => {
  await page.fill("#turns", "8");
  await page.click('button[data-gen="openai"]');
  await page.check('input[name="strategy"][value="truncate"]', { force: true });
  await setField("maxTokens", 800);
  await setField("targetMessages", undefined);
  await setField("keepLast", 1);
  assert.match(await text("#input-info"), /31 messages · [\d,]+ tokens · format openai/);
  assert.match(await text("#headline"), /over maxTokens 800/);
  await clickReduce();

  const s = await shown();
  const expected = lib.reduceSync(GENERATORS.openai.make(8), { strategy: "truncate", maxTokens: 800, keepLast: 1 });
  assert.equal(s.kept, expected.kept.length, "kept count as reduceSync computes it");
  assert.equal(s.dropped, expected.dropped.length);
  assert.ok(s.dropped > 0, "something was dropped");
  assert.equal(s.summarized, 0);
  assert.deepEqual(s.rows, { kept: s.kept, dropped: s.dropped, summarized: 0 }, "the rows show the same outcomes");
  assert.equal(s.kept + s.dropped, 31, "every message has an outcome");
  assert.equal(s.tokensBefore, expected.tokensBefore);
  assert.equal(s.tokensAfter, expected.tokensAfter);
  assert.ok(s.tokensAfter <= 640, `tokens after ${s.tokensAfter} ≤ target 640`);
  assert.equal(s.msgsAfter, s.kept);
  // the system prompt and the newest message stay; whole tool groups go together
  assert.equal(s.outcomes[0], "kept");
  assert.equal(s.outcomes.at(-1), "kept");
  const groups = await page.locator("#messages li.msg.grouped").evaluateAll((rows) =>
    rows.map((r) => ({ start: r.classList.contains("g-start"), outcome: r.dataset.outcome })));
  let current = null;
  for (const g of groups) {
    if (g.start) current = g.outcome;
    else assert.equal(g.outcome, current, "a tool call and its results share one outcome");
  }
  assert.match(await text("#headline"), /31 → \d+ messages/);
  // a bar segment per message, and markers at maxTokens and the target
  assert.equal(await page.locator("#bar-before .seg").count(), 31);
  assert.equal(await page.locator("#bar-after .seg").count(), s.kept);
  assert.match(await text("#markers"), /maxTokens 800[\s\S]*target 640/);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, "demo-truncate.png"), fullPage: true });
});

test("every generator's shape is detected and reduced: Anthropic, Vercel, Gemini, OpenAI", async () => {
  await setField("maxTokens", 700);
  await page.check('input[name="strategy"][value="priority"]', { force: true });
  for (const [kind, { make }] of Object.entries(GENERATORS)) {
    await page.click(`button[data-gen="${kind}"]`);
    assert.match(await text("#input-info"), new RegExp(`format ${kind}\\b`));
    await clickReduce();
    const s = await shown();
    const expected = lib.reduceSync(make(8), { strategy: "priority", maxTokens: 700, keepLast: 1 });
    assert.equal(s.kept, expected.kept.length, kind);
    assert.equal(s.dropped, expected.dropped.length, kind);
    assert.ok(s.tokensAfter <= 560 || expected.overBudget, `${kind}: ${s.tokensAfter} tokens after`);
  }
});

test("targetMessages: the message budget is met", async () => {
  await page.click('button[data-gen="openai"]');
  await page.check('input[name="strategy"][value="truncate"]', { force: true });
  await setField("maxTokens", undefined);
  await setField("targetMessages", 6);
  await setField("keepLast", 2);
  await clickReduce();
  const s = await shown();
  // the system prompt is not counted by targetMessages
  assert.ok(s.msgsAfter - 1 <= 6, `${s.msgsAfter} messages after`);
  assert.equal(s.kept + s.dropped, 31);
  assert.match(await text("#call"), /reduceSync\(messages, \{ strategy: "truncate", targetMessages: 6, keepLast: 2 \}\)/);
});

test("summarize: the async summarizer stub runs, its summary replaces the oldest messages", async () => {
  await page.fill("#turns", "10");
  await page.click('button[data-gen="openai"]');
  await setField("maxTokens", 900);
  await setField("targetMessages", undefined);
  await setField("keepLast", 1);
  await page.check('input[name="strategy"][value="summarize"]', { force: true });
  assert.match(await text("#call"), /await reduce\(messages, \{ strategy: "summarize", maxTokens: 900, keepLast: 1, summarizer \}\)/);

  const runs = Number((await page.getAttribute("body", "data-runs")) ?? 0);
  const started = Date.now();
  await page.click("#reduce");
  await page.waitForSelector('body[data-state="reducing"]', { timeout: 2_000 });
  assert.match(await text("#status"), /Waiting for the summarizer/);
  await page.waitForFunction((n) => Number(document.body.dataset.runs ?? 0) > n || document.body.dataset.state === "error", runs);
  assert.equal(await page.getAttribute("body", "data-state"), "done", await text("#status"));
  assert.ok(Date.now() - started >= 290, "the summarizer took its ~300 ms");

  const s = await shown();
  assert.ok(s.summarized > 0, "messages were summarized");
  assert.equal(s.rows.summarized, s.summarized);
  assert.equal(s.kept + s.dropped + s.summarized, GENERATORS.openai.make(10).length, "every message has an outcome");
  assert.ok(s.tokensAfter <= 720, `tokens after ${s.tokensAfter} ≤ target 720`);
  assert.equal(s.msgsAfter, s.kept + 1, "the kept messages plus one summary");
  const card = page.locator("#messages li.summary-card");
  assert.equal(await card.count(), 1);
  assert.match(await card.innerText(), /new summary[\s\S]*replaces #1–#\d+ \(\d+ messages\)/i);
  assert.match(await card.innerText(), /the user asked \d+ questions/);
  assert.equal(await page.locator("#bar-after .seg.summary").count(), 1);
  assert.match(await page.locator("#events").textContent(), /summarize: \d+ messages[\s\S]*summarizer call: kind history/);
  assert.match(await text("#status"), /await reduce\(\) took \d+ ms, of which the summarizer \d+ ms/);
  assert.match(await page.locator("#output").textContent(), /<conversation-summary>/);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, "demo.png"), fullPage: true });
});

test("bad input shows the ReduceError code instead of breaking the page", async () => {
  await page.fill("#conversation", '[{"role":"user","content":"hi"},{"role":"wizard","content":"abracadabra"}]');
  await page.waitForFunction(() => /INVALID_MESSAGE/.test(document.getElementById("input-info").textContent));
  assert.match(await text("#input-info"), /ReduceError INVALID_MESSAGE \(message 1\)/);
  assert.equal(await page.isDisabled("#reduce"), true);
  await page.fill("#conversation", "[not json");
  await page.waitForFunction(() => /Not valid JSON/.test(document.getElementById("input-info").textContent));
  // and the module still works afterwards
  await page.click('button[data-gen="gemini"]');
  await setField("maxTokens", 500);
  await page.check('input[name="strategy"][value="truncate"]', { force: true });
  await clickReduce();
  assert.ok((await num("#stat-dropped")) > 0);
});

test("the page as a user tries it: no stale verdict, Reduce right after an edit, a narrow screen", async () => {
  // Invalid JSON after an over-budget conversation: the old verdict goes.
  await page.click('button[data-gen="openai"]');
  await setField("maxTokens", 300);
  await page.waitForFunction(() => /A trigger fires/.test(document.getElementById("status").textContent));
  await page.fill("#conversation", "[not json");
  await page.waitForFunction(() => /Not valid JSON/.test(document.getElementById("input-info").textContent));
  assert.doesNotMatch(await text("#status"), /trigger fires/);
  // Reduce clicked inside the edit's debounce works on the edited conversation.
  await page.click('button[data-gen="anthropic"]');
  await page.waitForSelector('body[data-state="ready"]');
  const edited = JSON.parse(await page.inputValue("#conversation")).slice(0, 9);
  await page.fill("#conversation", JSON.stringify(edited));
  await clickReduce();
  assert.equal(await num("#msgs-before"), 9);
  // At 390 px the header shows all of its text, and the strategy labels do not touch.
  await page.setViewportSize({ width: 390, height: 844 });
  const clipped = await page.evaluate(() => [...document.querySelectorAll(".top, .top *")]
    .filter((e) => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflow !== "visible").length
    + (document.querySelector(".top").scrollWidth > document.documentElement.clientWidth ? 1 : 0));
  assert.equal(clipped, 0);
  const gaps = await page.evaluate(() => [...document.querySelectorAll(".segmented span")].map((s) => {
    const r = document.createRange();
    r.selectNodeContents(s);
    const text = r.getBoundingClientRect(), box = s.getBoundingClientRect();
    return Math.min(text.left - box.left, box.right - text.right);
  }));
  assert.ok(gaps.every((g) => g >= 4), `label padding ${gaps}`);
  await page.screenshot({ path: join(SCREENSHOTS, "narrow.png"), fullPage: false });
  await page.setViewportSize({ width: 1280, height: 900 });
});

test("nothing but 127.0.0.1 was contacted, and the page logged no errors", () => {
  assert.deepEqual(browser.offsite, []);
  assert.deepEqual(browser.errors, []);
});
