// A tiny app (js-tests/e2e/vite-app) that imports the package by name, built by Vite in a
// scratch project where the package is installed, served from 127.0.0.1 and run in
// headless Chromium.
//
//   CHR_PKG=/path/to/chat-history-reducer node --test js-tests/e2e/vite.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, readdirSync, writeFileSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { BIN, scratchProject, run, launchBrowser, importNode } from "./helpers.mjs";
import { startServer } from "../../www/serve.mjs";
import { conversation } from "./vite-app/conversation.js";

const APP = join(dirname(fileURLToPath(import.meta.url)), "vite-app");
let project;
let out;
let build;
let server;
let browser;

before(async () => {
  project = scratchProject("vite");
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "vite-check", private: true, type: "module" }, null, 2));
  for (const f of readdirSync(APP)) copyFileSync(join(APP, f), join(project, f));
  out = join(project, "dist");
  build = await run(BIN("vite"), ["build", "--outDir", out, "--emptyOutDir", "--logLevel", "info"], {
    cwd: project,
    env: { ...process.env, CI: "true", NO_COLOR: "1" },
  });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test("vite build bundles the app and emits the .wasm as an asset", () => {
  assert.equal(build.code, 0, `${build.stdout}${build.stderr}`);
  const assets = readdirSync(join(out, "assets"));
  assert.ok(assets.some((f) => /^chat_history_reducer_bg-[\w-]+\.wasm$/.test(f)), `assets: ${assets}`);
  assert.ok(assets.some((f) => f.endsWith(".js")));
  assert.ok(existsSync(join(out, "index.html")));
});

test("the built app reduces in Chromium", async () => {
  server = await startServer({ root: out });
  browser = await launchBrowser();
  const page = await browser.newPage();
  const wasmResponses = [];
  page.on("response", (r) => {
    if (r.url().endsWith(".wasm")) wasmResponses.push({ url: r.url(), type: r.headers()["content-type"], status: r.status() });
  });
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.state !== "loading", null, { timeout: 15_000 });
  const status = await page.locator("#status").innerText();
  assert.equal(await page.getAttribute("body", "data-state"), "done", status);
  const result = JSON.parse(await page.locator("#result").innerText());

  // the same numbers as the package computes in Node
  const lib = await importNode();
  assert.equal(result.format, "openai");
  const messages = conversation(12);
  const expected = lib.reduceSync(messages, { maxTokens: 500 });
  assert.equal(result.inputMessages, 49);
  assert.equal(result.tokensBefore, lib.estimateTokens(messages));
  assert.equal(result.truncate.kept, expected.kept.length);
  assert.equal(result.truncate.tokensAfter, expected.tokensAfter);
  assert.equal(result.shouldReduce, true);
  assert.ok(result.truncate.dropped > 0);
  assert.equal(result.truncate.kept + result.truncate.dropped, 49);
  assert.ok(result.truncate.tokensAfter <= 400, `${result.truncate.tokensAfter} ≤ target 400`);
  assert.equal(result.truncate.sameObjects, true);
  assert.ok(result.summarize.summarized > 0);
  assert.ok(result.summarize.tokensAfter <= 400);
  assert.match(result.summarize.summary, /<conversation-summary>\s*The user asked \d+ unit conversions\.\s*<\/conversation-summary>/);
  assert.ok(result.history.messages <= 7, `ChatHistory kept ${result.history.messages}`);
  assert.equal(result.history.original, 21);
  assert.equal(result.history.reductions, 1);
  assert.equal(result.errorCode, "INVALID_CONFIG");
  assert.match(status, /^Reduced 49 messages: kept \d+, dropped \d+/);

  const [wasm] = wasmResponses;
  assert.equal(wasmResponses.length, 1);
  assert.equal(wasm.status, 200);
  assert.equal(wasm.type, "application/wasm");
  assert.match(wasm.url, /\/assets\/chat_history_reducer_bg-[\w-]+\.wasm$/);
  assert.deepEqual(browser.offsite, []);
  assert.deepEqual(browser.errors, []);
});
