// Shared by the end-to-end tests: where the package under test is (CHR_PKG), the repo's
// dev tools, a Chromium launched by playwright-core with no network chatter, a free port.
import { existsSync, mkdtempSync, readFileSync, rmSync, mkdirSync, cpSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { spawn } from "node:child_process";
import { before, after } from "node:test";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const BIN = (name) => join(REPO, "node_modules", ".bin", name);
export const BUILD = join(REPO, "build");
export const SCREENSHOTS = join(BUILD, "screenshots");
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

/** The package directory under test: $CHR_PKG, else the repo's pkg/. */
export function pkgDir() {
  const dir = resolve(process.env.CHR_PKG ?? join(REPO, "pkg"));
  if (!existsSync(join(dir, "package.json"))) {
    throw new Error(`no package at ${dir} (set CHR_PKG to a built or installed chat-history-reducer directory)`);
  }
  return dir;
}

export function manifest(dir = pkgDir()) {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
}

/** The package's Node entry, imported the way Node resolves `import "chat-history-reducer"`. */
export async function importNode(dir = pkgDir()) {
  const entry = manifest(dir).exports["."].node;
  return import(pathToFileURL(join(dir, entry)).href);
}

/**
 * A scratch project with the package installed as node_modules/chat-history-reducer
 * (a copy of the package's published files), so that code there imports it by name.
 */
export function scratchProject(name) {
  const dir = join(BUILD, "e2e", name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  const src = pkgDir();
  const dest = join(dir, "node_modules", "chat-history-reducer");
  const m = manifest(src);
  mkdirSync(dest);
  for (const f of ["package.json", ...(m.files ?? [])]) {
    const from = join(src, f.replace(/\/$/, ""));
    if (existsSync(from)) cpSync(from, join(dest, f.replace(/\/$/, "")), { recursive: true, dereference: true });
  }
  return dir;
}

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-default-browser-check",
  "--disable-default-apps",
];

/**
 * Chromium via playwright-core (never a downloaded browser), in a fresh profile directory
 * that is removed on close. Requests to anything but 127.0.0.1 are aborted and recorded in
 * `offsite`.
 */
export async function launchBrowser() {
  const { chromium } = await import("playwright-core");
  const profile = mkdtempSync(join(tmpdir(), "chr-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1360, height: 900 },
    deviceScaleFactor: 1,
    offline: false,
  });
  const offsite = [];
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === "data:" || url.hostname === "127.0.0.1") return route.continue();
    offsite.push(url.href);
    return route.abort();
  });
  const errors = [];
  context.on("weberror", (e) => errors.push(String(e.error())));
  return {
    context,
    offsite,
    errors,
    async newPage() {
      const page = await context.newPage();
      page.on("console", (msg) => {
        if (msg.type() === "error") errors.push(msg.text());
      });
      page.on("pageerror", (e) => errors.push(String(e)));
      return page;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The demo page (www/) served on 127.0.0.1 with the package under test, open and ready in
 * a fresh Chromium; `lib` is the same package imported in Node (for control runs).
 */
export async function openDemoPage() {
  const { startServer } = await import("../../www/serve.mjs");
  const lib = await importNode();
  const server = await startServer({ root: join(REPO, "www"), pkgDir: pkgDir() });
  const browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(server.url);
  await page.waitForSelector('body[data-state="ready"]', { timeout: 20_000 });
  return {
    lib,
    browser,
    page,
    async close() {
      await browser.close();
      await server.close();
    },
  };
}

/** The demo page open for a test file's tests (`onOpen` gets it, before them), closed after. */
export function useDemoPage(onOpen) {
  let demo;
  before(async () => onOpen((demo = await openDemoPage())));
  after(() => demo?.close());
}

export function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

/** Runs a command; resolves to { code, stdout, stderr } (never rejects on a non-zero exit). */
export function run(cmd, args, opts = {}) {
  return new Promise((ok, fail) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], ...opts });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.once("error", fail);
    child.once("close", (code) => ok({ code, stdout, stderr }));
  });
}
