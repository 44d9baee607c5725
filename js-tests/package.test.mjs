// The packed npm package, installed into a scratch project and imported the way a user
// imports it: by its name, from Node ESM.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { readFileSync, existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import init, {
  ChatHistory,
  reduce,
  reduceSync,
  shouldReduce,
  estimateTokens,
  analyze,
  ReduceError,
} from "chat-history-reducer";

function conversation(turns) {
  const messages = [{ role: "system", content: "You are terse.", cache_control: { type: "ephemeral" } }];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: "user", content: `Question ${t}: convert ${t * 17} km to miles.`, id: `u${t}` });
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [
        { id: `call_${t}a`, type: "function", function: { name: "convert", arguments: JSON.stringify({ km: t * 17 }) } },
        { id: `call_${t}b`, type: "function", function: { name: "log", arguments: "{}" } },
      ],
    });
    messages.push({ role: "tool", tool_call_id: `call_${t}a`, content: JSON.stringify({ miles: t * 10.563, detail: "x".repeat(300) }) });
    messages.push({ role: "tool", tool_call_id: `call_${t}b`, content: "ok" });
    messages.push({ role: "assistant", content: `${t * 17} km is ${(t * 10.563).toFixed(1)} miles.` });
  }
  return messages;
}

function assertToolIntegrity(messages) {
  const open = new Map();
  for (const m of messages) {
    for (const c of m.tool_calls ?? []) open.set(c.id, true);
    if (m.role === "tool") {
      assert.ok(open.has(m.tool_call_id), `tool result ${m.tool_call_id} without its call`);
      open.delete(m.tool_call_id);
    }
  }
  assert.deepEqual([...open.keys()], [], "tool calls without their results");
}

test("the package resolves to the Node entry and ships its typings", () => {
  const require = createRequire(import.meta.url);
  const pkgJson = require.resolve("chat-history-reducer/package.json");
  const manifest = JSON.parse(readFileSync(pkgJson, "utf8"));
  assert.equal(manifest.exports["."].types, "./index.d.ts");
  const dts = readFileSync(new URL("./dist/chat_history_reducer.d.ts", `file://${pkgJson}`), "utf8");
  const own = readFileSync(new URL("./dist/boundary.d.ts", `file://${pkgJson}`), "utf8");
  assert.match(own, /export class ReduceError extends Error/);
  assert.match(readFileSync(new URL("./index.d.ts", `file://${pkgJson}`), "utf8"), /export \{ ReduceError, reloadTool \} from "\.\/dist\/boundary\.js"/);
  assert.match(dts, /export function reduceSync<M extends object = Message>\(messages: readonly M\[\], config\?: ReduceConfig<M>\): ReduceResult<M>;/);
  assert.match(dts, /export class ChatHistory<M extends object = Message> \{/);
  assert.deepEqual(manifest.typesVersions, { "*": { web: ["./index.d.ts"] } });
  assert.ok(existsSync(new URL("./dist/chat_history_reducer_bg.wasm", `file://${pkgJson}`)));
});

test("init() is available and harmless in Node, where the module is already loaded", async () => {
  await init();
  assert.equal(typeof reduceSync, "function");
});

/** The installed package's directory. */
function packageRoot() {
  return dirname(createRequire(import.meta.url).resolve("chat-history-reducer/package.json"));
}

/** Runs an ES module `script` in a fresh Node process (from this directory, so that the
 * package resolves by name); `before`: a module to `--import` first. */
function runNode(script, before) {
  const args = before ? ["--import", before] : [];
  const out = spawnSync(process.execPath, [...args, "--input-type=module", "-e", script], {
    cwd: dirname(new URL(import.meta.url).pathname),
    encoding: "utf8",
  });
  assert.equal(out.status, 0, `exit ${out.status}:\n${out.stdout}${out.stderr}`);
  return out.stdout + out.stderr;
}

test("importing the Node entry and the workerd entry prints nothing (initSync is called with { module })", () => {
  assert.equal(runNode(`const m = await import("chat-history-reducer"); m.reduceSync([{ role: "user", content: "hi" }], { maxTokens: 9 });`), "");
  // workerd hands the .wasm import over as a compiled WebAssembly.Module: so does this hook.
  const hooks = `export async function load(url, context, next) {
  if (!url.endsWith(".wasm")) return next(url, context);
  return { format: "module", shortCircuit: true, source: \`import { readFileSync } from "node:fs";
export default new WebAssembly.Module(readFileSync(new URL(\${JSON.stringify(url)})));\` };
}`;
  const register = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  const workerd = pathToFileURL(join(packageRoot(), "workerd.js")).href;
  assert.equal(runNode(`const m = await import(${JSON.stringify(workerd)});
if (m.reduceSync([{ role: "user", content: "hi" }], { maxTokens: 9 }).reduced !== false) throw new Error("workerd entry");`,
  `data:text/javascript,${encodeURIComponent(register)}`), "");
});

test("the web entry called before init() throws an Error that says so; initSync({ module }) then loads it silently", () => {
  // In a process of its own: two instances of the glue would share boundary.js.
  const web = pathToFileURL(join(packageRoot(), "dist", "chat_history_reducer.js")).href;
  const wasm = pathToFileURL(join(packageRoot(), "dist", "chat_history_reducer_bg.wasm")).href;
  const out = runNode(`
import { readFileSync } from "node:fs";
const web = await import(${JSON.stringify(web)});
const messages = [{ role: "user", content: "hi" }], config = { maxTokens: 9 };
const calls = {
  reduceSync: () => web.reduceSync(messages, config),
  shouldReduce: () => web.shouldReduce(messages, config),
  estimateTokens: () => web.estimateTokens(messages, config),
  analyze: () => web.analyze(messages, config),
  calibrate: () => web.calibrate(messages, 5, config),
  ChatHistory: () => new web.ChatHistory(config, messages),
  fromJSON: () => web.ChatHistory.fromJSON({ version: 1 }, config),
};
const seen = {};
const check = (name, e) => {
  if (e instanceof TypeError || !(e instanceof Error) || !/call .*init\\(\\)/.test(e.message)) throw new Error(name + ": " + e);
  seen[name] = e.message;
};
for (const [name, call] of Object.entries(calls)) {
  try { call(); } catch (e) { check(name, e); continue; }
  throw new Error(name + " did not throw");
}
// reduce returns a promise, rejected.
let promise;
try { promise = web.reduce(messages, config); } catch (e) { throw new Error("reduce threw: " + e); }
await promise.then(() => { throw new Error("reduce resolved"); }, (e) => check("reduce", e));
if (Object.keys(seen).length !== 8) throw new Error(JSON.stringify(seen));
web.initSync({ module: readFileSync(new URL(${JSON.stringify(wasm)})) });
if (web.reduceSync(messages, config).reduced !== false || !(new web.ChatHistory(config) instanceof web.ChatHistory)) throw new Error("after initSync");
if (web.initSync({ module: new WebAssembly.Module(readFileSync(new URL(${JSON.stringify(wasm)}))) }) === undefined) throw new Error("initSync again");
console.log(seen.reduceSync);
`);
  assert.match(out, /^chat-history-reducer: .*init\(\).*\n$/, "only the message printed, no warning");
});

test("reduceSync fits the budget, keeps tool groups whole, starts on a user message", () => {
  const input = conversation(15);
  const before = estimateTokens(input);
  assert.ok(before > 1000, `the conversation needs reducing (${before} tokens)`);
  const r = reduceSync(input, { maxTokens: 1000 });
  assert.equal(r.reduced, true);
  assert.ok(r.tokensAfter <= 800 || r.overBudget, `${r.tokensAfter} tokens after`);
  assert.equal(r.tokensAfter, estimateTokens(r.messages), "tokensAfter is the estimate of the output");
  assert.equal(r.messages[0], input[0], "the system message stays");
  assert.equal(r.messages[1].role, "user");
  assert.equal(r.messages.at(-1), input.at(-1), "the newest message stays");
  assertToolIntegrity(r.messages);
});

test("kept messages are the input objects, unknown fields and all", () => {
  const input = conversation(10);
  const r = reduceSync(input, { maxTokens: 700 });
  r.messages.forEach((m, k) => assert.equal(m, input[r.kept[k]]));
  assert.deepEqual(r.messages[0].cache_control, { type: "ephemeral" });
  assert.equal(r.messages[1].id, input[r.kept[1]].id);
  const all = [...r.kept, ...r.dropped].sort((a, b) => a - b);
  assert.deepEqual(all, input.map((_, i) => i), "every input index is accounted for once");
  assert.equal(r.removedCount, r.dropped.length);
});

test("reduce resolves to the same result and a reduced history is not reduced again", async () => {
  const input = conversation(12);
  const config = { maxTokens: 900 };
  const r = await reduce(input, config);
  assert.deepEqual(r.kept, reduceSync(input, config).kept);
  assert.equal(shouldReduce(input, config), true);
  assert.equal(shouldReduce(r.messages, config), false);
  const again = reduceSync(r.messages, config);
  assert.equal(again.reduced, false);
  again.messages.forEach((m, k) => assert.equal(m, r.messages[k]));
});

test("bad input throws ReduceError with a code, and the module keeps working", async () => {
  const good = conversation(4);
  const cases = [
    [() => reduceSync("nope", { maxTokens: 10 }), "INVALID_MESSAGES"],
    [() => reduceSync([null], { maxTokens: 10 }), "INVALID_MESSAGE"],
    [() => reduceSync([{ content: "no role" }], { maxTokens: 10 }), "INVALID_MESSAGE"],
    [() => reduceSync(good, { maxTokens: -1 }), "INVALID_CONFIG"],
    [() => reduceSync(good, { maxTokens: NaN }), "INVALID_CONFIG"],
    [() => reduceSync(good, { targetMessages: 1.5 }), "INVALID_CONFIG"],
    [() => reduceSync(good, {}), "INVALID_CONFIG"],
    [() => reduceSync(good), "INVALID_CONFIG"],
    [() => reduceSync(good, { maxTokens: 100, strategy: "summarize" }), "SUMMARIZER_REQUIRES_ASYNC"],
    [() => shouldReduce(good, { maxTokens: 100, keepLast: -2 }), "INVALID_CONFIG"],
    [() => analyze({ length: 3 }), "INVALID_MESSAGES"],
  ];
  for (const [call, code] of cases) {
    assert.throws(call, (e) => {
      assert.ok(e instanceof ReduceError, `${code}: ${e}`);
      assert.ok(e instanceof Error);
      assert.equal(e.name, "ReduceError");
      assert.equal(e.code, code, e.message);
      assert.ok(e.message.length > 10);
      return true;
    });
  }
  await assert.rejects(reduce(good, { maxTokens: -3 }), (e) => e instanceof ReduceError && e.field === "maxTokens");
  try {
    reduceSync([{ role: "user", content: "a" }, { role: "wizard", content: "b" }], { maxTokens: 10 });
    assert.fail("unknown role accepted");
  } catch (e) {
    assert.equal(e.code, "INVALID_MESSAGE");
    assert.equal(e.index, 1);
  }
  const r = reduceSync(good, { maxTokens: 200 });
  assert.equal(r.reduced, true);
});

test("an option name that is not one is INVALID_CONFIG naming it and the option meant", async () => {
  const good = conversation(4);
  const cases = [
    [{ maxTokens: 3000, keepLats: 5 }, "keepLats", "did you mean keepLast?"],
    [{ maxTokens: 3000, tokenCounter: () => 1 }, "tokenCounter", "did you mean countTokens?"],
    [{ maxToken: 3000 }, "maxToken", "did you mean maxTokens?"],
    [{ maxTokens: 3000, includeSystem: true }, "includeSystem", "did you mean keepSystem?"],
    [{ maxTokens: 3000, temperature: 0.2 }, "temperature", "config.temperature is not an option"],
  ];
  for (const [config, field, words] of cases) {
    for (const call of [() => reduceSync(good, config), () => shouldReduce(good, config), () => estimateTokens(good, config),
      () => analyze(good, config), () => new ChatHistory(config)]) {
      assert.throws(call, (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === field &&
        e.message.includes(words), `${field}: ${call}`);
    }
    await assert.rejects(reduce(good, config), (e) => e.code === "INVALID_CONFIG" && e.field === field);
  }
  // Inherited options are options: a config made from a base config reads as one.
  const derived = Object.assign(Object.create({ maxTokens: 200 }), { keepLast: 2 });
  assert.equal(reduceSync(good, derived).reduced, true);
  assert.throws(() => reduceSync(good, Object.create({ maxTokens: 200, keepLats: 2 })), (e) => e.field === "keepLats");
  // Symbols and non-enumerable keys are not names the app wrote as options.
  const hidden = Object.defineProperty({ maxTokens: 200, [Symbol("x")]: 1 }, "extra", { value: 1, enumerable: false });
  assert.equal(reduceSync(good, hidden).reduced, true);
});

test("token counts: tokenCounts, then countTokens, then the estimator", () => {
  const input = [
    { role: "user", content: "hello" },
    { role: "assistant", content: "hi there" },
  ];
  const calls = [];
  const n = estimateTokens(input, {
    tokenCounts: [40],
    countTokens: (m, i) => {
      calls.push(i);
      return 2;
    },
  });
  assert.equal(n, 42);
  assert.deepEqual(calls, [1], "countTokens is not asked for a message with a given count");
  assert.equal(estimateTokens({ role: "user", content: "hello" }), 4);
  assert.throws(() => estimateTokens(input, { countTokens: () => "many" }), (e) => e.code === "INVALID_CONFIG" && e.field === "countTokens");
});

test("counts are cached by message object, and a changed message is counted again", () => {
  const calls = [];
  const countTokens = (m, i) => { calls.push(i); return m.content.length; };
  const history = [{ role: "user", content: "hello" }, { role: "assistant", content: "hi there" }];
  assert.equal(estimateTokens(history, { countTokens }), 13);
  assert.deepEqual(calls, [0, 1]);
  history.push({ role: "user", content: "and more" });
  assert.equal(estimateTokens(history, { countTokens }), 21);
  assert.deepEqual(calls, [0, 1, 2], "only the new message is counted");
  history[0].content = "hello again";
  assert.equal(estimateTokens(history, { countTokens }), 27);
  assert.deepEqual(calls, [0, 1, 2, 0], "an edited message is counted again");
  const other = (m) => 1;
  assert.equal(estimateTokens(history, { countTokens: other }), 3, "another counter is not served from the cache");
  // The built-in estimator: an in-place edit of a part is seen too.
  const m = { role: "user", content: [{ type: "text", text: "short" }] };
  const before = estimateTokens(m);
  m.content[0].text = "a much longer text than before, with many more words in it";
  assert.ok(estimateTokens(m) > before);
  assert.ok(estimateTokens(m, { messageOverhead: 10 }) > estimateTokens(m), "the cache is per estimator config");
});

test("a reduction served again from the cache hands out arrays of its own", () => {
  // The same messages again reuse the last reduction and copy its lists (results.js
  // `LISTED`): what a caller does to one result must not show in the next.
  const history = conversation(30);
  const config = { maxTokens: 300 };
  const first = reduceSync(history, config);
  const expected = structuredClone({ kept: first.kept, dropped: first.dropped, count: first.messages.length });
  assert.ok(first.reduced && first.dropped.length > 0);
  first.kept.push(999);
  first.dropped.length = 0;
  first.messages.reverse();
  for (let k = 0; k < 4; k++) {
    const again = reduceSync(history, config);
    assert.deepEqual({ kept: again.kept, dropped: again.dropped, count: again.messages.length }, expected);
    assert.deepEqual(again.messages, again.kept.map((i) => history[i]));
    again.messages.length = 0;
  }
});

test("tokenizer profiles and calibration from provider counts", async () => {
  const { calibrate } = await import("chat-history-reducer");
  const cjk = [{ role: "user", content: "日本語のテキストはトークンが多い。".repeat(20) }];
  assert.ok(estimateTokens(cjk, { tokenizer: "cl100k" }) > estimateTokens(cjk, { tokenizer: "o200k" }), "cl100k spends more on CJK");
  assert.equal(estimateTokens({ role: "user", content: "Привет" }), 3 + Math.ceil(4 * 0.1 + 6 * 0.3), "Cyrillic letters are otherLetter");
  const raw = estimateTokens(cjk);
  const first = calibrate(cjk, raw * 1.4);
  assert.ok(Math.abs(first - 1.4) < 1e-9, "the first observation is taken as it is");
  const second = calibrate(cjk, raw * 1.2, { calibration: first });
  assert.ok(Math.abs(second - 1.3) < 1e-9, "later ones move halfway");
  assert.equal(calibrate(cjk, raw * 10), 2, "bounded");
  assert.equal(estimateTokens(cjk, { calibration: 1.5 }), Math.ceil(raw * 1.5));
  assert.equal(estimateTokens(cjk, { calibration: 1.5, tokenCounts: [7] }), 7, "given counts are not scaled");
  assert.throws(() => estimateTokens(cjk, { calibration: 5 }), (e) => e.code === "INVALID_CONFIG" && e.field === "calibration");
  assert.throws(() => estimateTokens(cjk, { tokenizer: "gpt2" }), (e) => e.field === "tokenizer");
  // inputTokens is a number, as every number this package takes: not a string that looks like one.
  for (const bad of ["50", 50n, null, undefined, { valueOf: () => 50 }, [50], 0, -1, NaN, Infinity]) {
    assert.throws(() => calibrate(cjk, bad), (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === "inputTokens", String(bad));
  }
});

test("the typings' examples give what they say", () => {
  // Each `name(args); // value` line of the doc comments in the shipped .d.ts.
  const dts = readFileSync(join(packageRoot(), "dist", "chat_history_reducer.d.ts"), "utf8");
  const api = { estimateTokens };
  const examples = [...dts.matchAll(/^ \* (\w+)\((.*)\); \/\/ (\d+)$/gm)];
  assert.ok(examples.length > 0);
  for (const [line, name, args, value] of examples) {
    assert.ok(name in api, `an example of ${name}: add it to this test`);
    assert.equal(api[name](...new Function(`return [${args}]`)()), Number(value), line);
  }
});

test("a long history edited in place is read again where it changed", () => {
  // Readings are kept by message object (src/wasm/js/reuse.js): each message's stamp must notice the
  // edits a chat makes between turns.
  const history = [];
  for (let k = 0; k < 40; k++) {
    history.push({ role: "user", content: [{ type: "text", text: `question ${k}` }] });
    history.push({ role: "assistant", content: `answer ${k}` });
  }
  const count = () => estimateTokens(history);
  const fresh = () => estimateTokens(structuredClone(history));
  assert.equal(count(), fresh());
  history[3].content = "a replaced answer, much longer than before";
  assert.equal(count(), fresh(), "replaced content");
  history[4].content[0].text = "a question edited in place, much longer than before";
  assert.equal(count(), fresh(), "a part's text edited in place");
  history[6].content.push({ type: "text", text: "one more part" });
  assert.equal(count(), fresh(), "a part pushed");
  history[8] = { ...history[8], content: "copied and changed" };
  assert.equal(count(), fresh(), "a replaced message");
  history[11].role = "user";
  assert.equal(count(), fresh(), "a role changed");
  const roles = (h) => analyze(h, { maxTokens: 1e6 }).messages.map((m) => m.role);
  assert.deepEqual(roles(history), roles(structuredClone(history)), "a role changed");
  // Calls and results, read by role (formats/openai.js reads each role's fields apart).
  history.push({ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] });
  history.push({ role: "tool", tool_call_id: "c1", content: "one" });
  const groups = (h) => analyze(h, { maxTokens: 1e6 }).messages.map((m) => m.group);
  assert.equal(count(), fresh());
  history.at(-2).tool_calls.push({ id: "c2-a-longer-id", type: "function", function: { name: "g", arguments: "{\"q\":1}" } });
  history.push({ role: "tool", tool_call_id: "c2-a-longer-id", content: "two" });
  assert.equal(count(), fresh(), "a call pushed onto tool_calls");
  assert.deepEqual(groups(history), groups(structuredClone(history)), "the new result joins the call's group");
  history.at(-1).tool_call_id = "c1";
  assert.equal(count(), fresh(), "a result's tool_call_id changed");
  assert.deepEqual(groups(history), groups(structuredClone(history)));
  // Every top-level field the reading counts (SPEC §3: name too): the audit found a name,
  // refusal or legacy function_call set later left the count of before.
  history[20].name = "x".repeat(400);
  assert.equal(count(), fresh(), "a user's name set");
  history[21].name = "y".repeat(400);
  assert.equal(count(), fresh(), "an assistant's name set");
  history[23].refusal = "I cannot help with that. ".repeat(20);
  assert.equal(count(), fresh(), "a refusal set");
  history[23].refusal = undefined;
  assert.equal(count(), fresh(), "a refusal taken away");
  history[25].function_call = { name: "legacy", arguments: "{\"a\": 1}".repeat(30) };
  assert.equal(count(), fresh(), "a legacy function_call set");
  history.at(-1).name = "lookup";
  assert.equal(count(), fresh(), "a tool result's name set");
});

test("Responses items and LangChain messages edited in place are read again where it changed", () => {
  const items = [];
  for (let k = 0; k < 20; k++) {
    items.push({ type: "message", role: "user", content: [{ type: "input_text", text: `question ${k}` }] });
    items.push({ type: "function_call", call_id: `c${k}`, name: "f", arguments: "{}" });
    items.push({ type: "function_call_output", call_id: `c${k}`, output: `result ${k}` });
  }
  const same = (h) => estimateTokens(h) === estimateTokens(structuredClone(h));
  const groups = (h) => analyze(h, { maxTokens: 1e6 }).messages.map((m) => m.group);
  assert.ok(same(items));
  items[31].name = "a_much_longer_function_name_".repeat(10);
  assert.ok(same(items), "a call's name replaced");
  items[34].arguments = "{\"q\": \"a longer argument\"}";
  assert.ok(same(items), "a call's arguments replaced");
  items[35].call_id = "c11";
  assert.ok(same(items), "a result's call_id changed");
  assert.deepEqual(groups(items), groups(structuredClone(items)));
  items.push({ type: "reasoning", summary: [{ type: "summary_text", text: "short" }] }, { type: "function_call", call_id: "z", name: "f", arguments: "{}" }, { type: "function_call_output", call_id: "z", output: "r" });
  assert.ok(same(items));
  items.at(-3).encrypted_content = "e".repeat(500);
  assert.ok(same(items), "a reasoning item's encrypted_content set");
  const lc = [];
  for (let k = 0; k < 40; k++) lc.push(k % 2 ? { type: "ai", content: `answer ${k}`, tool_calls: [] } : { type: "human", content: `question ${k}` });
  lc.push({ type: "ai", content: "", tool_calls: [{ id: "t1", name: "f", args: {} }] }, { type: "tool", tool_call_id: "t1", content: "r" });
  assert.ok(same(lc));
  lc[10].name = "n".repeat(300);
  assert.ok(same(lc), "a human message's name set");
  lc[11].name = "m".repeat(300);
  assert.ok(same(lc), "an AI message's name set");
  lc.at(-1).name = "tool_name_".repeat(30);
  assert.ok(same(lc), "a tool message's name set");
});

test("a reading is taken over only under the same options: summary tag, estimator, overheads", () => {
  const history = [{ role: "system", content: "rules" }, { role: "assistant", content: "<recap>what came before</recap>" }];
  for (let k = 0; k < 40; k++) history.push({ role: k % 2 ? "assistant" : "user", content: `turn ${k}, some words` });
  const summary = (config) => analyze(history, { maxTokens: 1000, ...config }).messages[1].summary;
  assert.equal(summary({}), false);
  assert.equal(summary({ summaryTag: "recap" }), true, "another tag: read again");
  assert.equal(summary({}), false);
  const tokens = (config) => estimateTokens(history, config);
  const fresh = (config) => estimateTokens(structuredClone(history), config);
  for (const config of [{}, { messageOverhead: 5 }, { imageTokens: 7 }, { estimator: "length" }, { estimator: "length", charsPerToken: 3 }, { tokenizer: "cl100k" }, {}]) {
    assert.equal(tokens(config), fresh(config), JSON.stringify(config));
  }
});

test("a growing history read again after a failed call, and after a branch, reads as fresh copies", () => {
  // A history that grew goes on with the reading of the call before (reuse.js shares what
  // it read of the unchanged messages): what a failed call or another branch added must
  // not leak into the next reading.
  const history = [{ role: "system", content: "Be brief." }];
  for (let k = 0; k < 30; k++) {
    history.push({ role: "user", content: `question ${k} ${"lorem ".repeat(k % 7)}` });
    history.push({ role: "assistant", content: null, tool_calls: [{ id: `c${k}`, type: "function", function: { name: "f", arguments: "{}" } }] });
    history.push({ role: "tool", tool_call_id: `c${k}`, content: `result ${k} ${"ipsum ".repeat(k % 5)}` });
  }
  const config = { maxTokens: 400 };
  const same = (messages, what) => {
    const r = reduceSync(messages, config);
    const f = reduceSync(structuredClone(messages), config);
    assert.deepEqual(r.kept, f.kept, what);
    assert.equal(r.tokensAfter, f.tokensAfter, what);
    assert.equal(estimateTokens(messages), estimateTokens(structuredClone(messages)), what);
    const groups = (m) => analyze(m, config).messages.map((x) => `${x.group}/${x.round}/${x.tokens}`);
    assert.deepEqual(groups(messages), groups(structuredClone(messages)), what);
  };
  same(history, "the first call");
  // A call that fails after reading its messages (a budget it cannot meet), and one that
  // fails reading them, after the first new one.
  const failing = [...history, { role: "user", content: "one more, in other words" }];
  assert.throws(() => reduceSync(failing, { ...config, onOverBudget: "error", maxTokens: 1 }), (e) => e.code === "BUDGET_UNREACHABLE");
  assert.throws(() => reduceSync([...failing, { role: "narrator", content: "x" }], config), (e) => e.code === "INVALID_MESSAGE");
  history.push({ role: "user", content: "and the weather tomorrow, in more words than before" });
  same(history, "grown after a failed call");
  // Two branches from the same messages.
  const a = [...history, { role: "assistant", content: "branch a, a short answer" }];
  const b = [...history, { role: "assistant", content: "branch b, an answer that is much longer than the other one".repeat(9) }];
  same(a, "branch a");
  same(b, "branch b");
  same(a, "branch a again");
  same(history, "the trunk again");
  // A call read in one turn and its results in the next ones: the core goes on from what it
  // made of the messages before (their transcript), and the call's group grows across turns.
  const call = (id) => ({ id, type: "function", function: { name: "g", arguments: `{"id":"${id}"}` } });
  history.push({ role: "assistant", content: "let me look", tool_calls: [call("x1"), call("x2")] });
  same(history, "a call, no result yet");
  history.push({ role: "tool", tool_call_id: "x1", content: "first" });
  same(history, "one of its results");
  history.push({ role: "tool", tool_call_id: "x2", content: "second ".repeat(40) });
  same(history, "both results");
  history.push({ role: "tool", tool_call_id: "c3", content: "a late result for an early call" });
  same(history, "a result for a call far back");
  history.push({ role: "user", content: "thanks" }, { role: "assistant", content: "welcome" });
  same(history, "two more");

  // Messages that fit several formats, then ones that settle it: detection goes on from
  // where the call before left it, and the format it settles on reads every message.
  const plain = [];
  for (let k = 0; k < 40; k++) plain.push({ role: k % 2 ? "assistant" : "user", content: `plain text ${k} ${"lorem ".repeat(k % 6)}` });
  same(plain, "plain texts (openai by preference)");
  plain.push({ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: { q: 1 } }] });
  plain.push({ role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "done ".repeat(30) }] });
  same(plain, "then Anthropic blocks");
  const r = reduceSync(plain, { maxTokens: 60 });
  assert.ok(r.kept.includes(plain.length - 2) === r.kept.includes(plain.length - 1), "the tool_use and its result stay together");
});

test("texts of every script weigh the same whether they are encoded in one round or several", () => {
  // The texts to estimate are encoded into wasm memory kept between calls, a round at a
  // time; a text longer than a round is written in parts, cut between code points (CJK,
  // emoji, lone surrogates), each part weighed where the last left off.
  const piece = (unit, n) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  const texts = [
    piece("漢字かな交じり文，", 300_000), piece("🙂👍🏽 ", 400_000), piece("plain ASCII text, ", 500_000),
    piece("Ελληνικά кириллица ", 300_000), `${piece("a", 70_000)}\ud800${piece("한국어 ", 200_000)}\udfff`,
  ];
  const messages = [];
  for (let k = 0; k < 12; k++) {
    messages.push({ role: "user", content: texts[k % texts.length] });
    messages.push({ role: "assistant", content: `${k} ${texts[(k * 3 + 1) % texts.length].slice(0, 1000 + k * 7919)}` });
  }
  // One message at a time, then again after the room was used by others.
  const one = messages.map((m) => estimateTokens(m));
  estimateTokens(messages.slice(0, 4));
  assert.deepEqual(messages.map((m) => estimateTokens(m)), one, "alike again, from the room kept");
  // All at once: parts and whole pieces in the same rounds.
  const sum = one.reduce((a, b) => a + b, 0);
  assert.equal(estimateTokens(messages), sum);
  assert.equal(reduceSync(messages, { maxTokens: sum + 1 }).tokensBefore, sum);
  assert.equal(estimateTokens(messages.slice().reverse()), sum, "in another order");
});

test("a truncation's tokensBefore is the full estimate, read late, frozen or assigned", () => {
  // Only what decides a truncation is estimated before it returns; the rest when
  // tokensBefore is first read (see README, Performance).
  const history = [{ role: "system", content: "Be brief." }];
  for (let k = 0; k < 200; k++) {
    history.push({ role: "user", content: `question ${k} ${"lorem ipsum ".repeat(40)}` });
    history.push({ role: "assistant", content: `answer ${k} ${"dolor sit amet ".repeat(60)}` });
  }
  const total = estimateTokens(history);
  const config = { maxTokens: Math.floor(total / 10) };
  const fresh = () => history.map((m) => ({ ...m }));
  const r = reduceSync(fresh(), config);
  assert.ok(r.reduced && r.tokensAfter <= Math.floor(0.8 * config.maxTokens));
  Object.freeze(r);
  r.events.forEach(Object.freeze);
  assert.equal(r.tokensBefore, total, "read from a frozen result");
  assert.equal(r.events[0].tokensBefore, total);
  assert.equal(JSON.parse(JSON.stringify(r)).tokensBefore, total);
  const s = reduceSync(fresh(), config);
  s.tokensBefore = 7;
  assert.equal(s.tokensBefore, 7, "assignable like any field");
  assert.equal({ ...reduceSync(fresh(), config) }.tokensBefore, total);
});

test("an async countTokens is INVALID_CONFIG that says it returned a Promise and must be synchronous", async () => {
  const input = conversation(2);
  const config = { maxTokens: 100, countTokens: async () => 1 };
  const promised = (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === "countTokens" && e.index === 0 &&
    /countTokens returned a Promise for message 0; it must be synchronous/.test(e.message) && /tokenCounts/.test(e.message);
  for (const call of [() => reduceSync(input, config), () => estimateTokens(input, config), () => shouldReduce(input, config)]) {
    assert.throws(call, promised, String(call));
  }
  await assert.rejects(reduce(input, config), promised);
});

test("no input is 0 tokens, not -0", () => {
  // (An empty f64 sum in Rust is -0, which strict equality in tests, and Object.is, tell apart.)
  for (const estimator of ["classes", "length"]) {
    assert.ok(Object.is(estimateTokens([], { estimator }), 0), estimator);
    const r = reduceSync([], { maxTokens: 5, estimator });
    assert.ok(Object.is(r.tokensBefore, 0) && Object.is(r.tokensAfter, 0), estimator);
    assert.ok(Object.is(analyze([], { maxTokens: 5, estimator }).totalTokens, 0), estimator);
  }
});

test("a count above Number.MAX_SAFE_INTEGER is INVALID_CONFIG with its index: no total is ever Infinity", async () => {
  const input = conversation(2);
  const cases = [
    ["tokenCounts", 1, { tokenCounts: [3, 1e308, 1e308] }],
    ["tokenCounts", 2, { tokenCounts: new Float64Array([3, 4, Number.MAX_SAFE_INTEGER + 2]) }],
    ["countTokens", 0, { countTokens: () => 1e308 }],
  ];
  for (const [field, index, counts] of cases) {
    const config = { maxTokens: 100, ...counts };
    const calls = [
      () => reduceSync(input, config), () => estimateTokens(input, config), () => analyze(input, config),
      () => shouldReduce(input, config),
    ];
    const invalid = (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === field && e.index === index &&
      /at most 9007199254740991 \(Number\.MAX_SAFE_INTEGER\)/.test(e.message);
    for (const call of calls) assert.throws(call, invalid, `${field} ${call}`);
    await assert.rejects(reduce(input, config), invalid);
  }
  // The bound itself is a count, and any number of them add up to a finite total.
  const max = Number.MAX_SAFE_INTEGER;
  const r = reduceSync(input, { maxTokens: 100, tokenCounts: input.map(() => max) });
  assert.ok(Number.isFinite(r.tokensBefore) && r.tokensBefore >= max * (input.length - 1), String(r.tokensBefore));
  assert.ok(Number.isFinite(r.tokensAfter) && r.overBudget);
  assert.ok(Number.isFinite(estimateTokens(input, { countTokens: () => max })));
  // What SPEC §3 leaves to the next source stays so: not a finite number ≥ 0.
  assert.equal(estimateTokens(input, { tokenCounts: [Infinity, -1, NaN] }), estimateTokens(input));
  // ChatHistory takes no count above the bound either: from recordUsage, nor from a state.
  const h = new ChatHistory({ maxTokens: 100 }, input);
  await h.prepare();
  for (const usage of [{ inputTokens: 1e308 }, { outputTokens: 2 ** 60 }]) {
    assert.throws(() => h.recordUsage(usage), (e) => e.code === "INVALID_CONFIG" && e.field === "usage" && /MAX_SAFE_INTEGER/.test(e.message));
  }
  const state = JSON.parse(JSON.stringify(h));
  const copy = ChatHistory.fromJSON({ ...state, counts: state.messages.map(() => 1e308), pendingOutputTokens: 1e308 }, { maxTokens: 100 });
  assert.deepEqual(copy.toJSON().counts, state.messages.map(() => null));
  assert.equal(copy.toJSON().pendingOutputTokens, null);
  assert.deepEqual(await copy.prepare(), state.messages);
});

test("count options take whole numbers up to Number.MAX_SAFE_INTEGER, a huge one meaning 'more than there is'", () => {
  const input = conversation(6);
  const agent = [{ role: "user", content: "go" }];
  for (let k = 0; k < 8; k++) {
    agent.push({ role: "assistant", content: null, tool_calls: [{ id: `t${k}`, type: "function", function: { name: "f", arguments: "{}" } }] });
    agent.push({ role: "tool", tool_call_id: `t${k}`, content: k === 3 ? "data ".repeat(2000) : "ok" });
  }
  agent.push({ role: "assistant", content: "done" }, { role: "user", content: "next" });
  const keys = ["targetMessages", "keepLast", "thresholdMessages", "keepRecentPairs", "previewChars", "minToolRun"];
  const cases = [
    [input, { maxTokens: 100 }], [input, { strategy: "priority", maxTokens: 300, startOn: "any" }],
    [input, { targetMessages: 2, thresholdMessages: 1 }], [agent, { strategy: "progressive", maxTokens: 1500 }],
  ];
  const outcome = (messages, config) => {
    try {
      const r = reduceSync(messages, config);
      return JSON.stringify([r.messages, r.kept, r.overBudget, shouldReduce(messages, config)]);
    } catch (e) {
      return `${e.code} ${e.field}`;
    }
  };
  for (const n of [2 ** 32, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
    // Every group is kept: over budget rather than anything removed.
    const kept = reduceSync(input, { maxTokens: 100, keepLast: n });
    assert.equal(kept.messages.length, input.length, `keepLast ${n}`);
    assert.equal(kept.overBudget, true);
    // A message trigger no history reaches.
    assert.equal(shouldReduce(input, { targetMessages: n }), false);
    assert.equal(shouldReduce(input, { targetMessages: 1, thresholdMessages: n }), false);
    // Each means what the largest count held means.
    for (const key of keys) {
      for (const [messages, config] of cases) {
        assert.equal(outcome(messages, { ...config, [key]: n }), outcome(messages, { ...config, [key]: 2 ** 32 - 1 }), `${key} ${n}`);
      }
    }
  }
  for (const key of keys) {
    assert.throws(() => reduceSync(input, { maxTokens: 100, [key]: 2.5 }),
      (e) => e.code === "INVALID_CONFIG" && e.field === key && /whole number/.test(e.message));
    assert.throws(() => reduceSync(input, { maxTokens: 100, [key]: 2 ** 53 }),
      (e) => e.code === "INVALID_CONFIG" && e.field === key && /MAX_SAFE_INTEGER/.test(e.message));
  }
});

test("signal must be an AbortSignal: anything else is INVALID_CONFIG with field signal", async () => {
  const input = conversation(2);
  const summarizer = async () => "summary";
  const notSignals = [{}, { aborted: false }, { addEventListener() {}, removeEventListener() {} },
    { aborted: "no", addEventListener() {}, removeEventListener() {} }, { aborted: false, addEventListener() {} },
    new EventTarget(), Object.create(null), 5, [], () => {}];
  for (const [k, signal] of notSignals.entries()) {
    const invalid = (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === "signal" && /AbortSignal/.test(e.message);
    const what = `notSignals[${k}]`;
    assert.throws(() => reduceSync(input, { maxTokens: 100, signal }), invalid, what);
    assert.throws(() => shouldReduce(input, { maxTokens: 100, signal }), invalid, what);
    await assert.rejects(reduce(input, { maxTokens: 100, strategy: "summarize", summarizer, signal }), invalid, what);
    assert.throws(() => new ChatHistory({ maxTokens: 100, signal }), invalid, what);
  }
  // AbortSignals, of this runtime or another (duck-typed), already aborted or not.
  const own = { aborted: false, reason: undefined, addEventListener() {}, removeEventListener() {} };
  for (const signal of [new AbortController().signal, AbortSignal.abort(), own, undefined, null]) {
    assert.equal(reduceSync(input, { maxTokens: 100, signal }).reduced, true);
  }
  const r = await reduce(input, { maxTokens: 100, strategy: "summarize", summarizer, signal: own });
  assert.ok(r.summary);
  // A getter that throws is reported as such.
  const throwing = { get aborted() { throw new Error("no access"); }, addEventListener() {}, removeEventListener() {} };
  assert.throws(() => reduceSync(input, { maxTokens: 100, signal: throwing }),
    (e) => e instanceof ReduceError && e.field === "signal" && /reading config\.signal threw: no access/.test(e.message));
});

test("tokenCounts may be a typed array or another array-like, as the typings say", () => {
  const input = [{ role: "user", content: "a" }, { role: "assistant", content: "b" }];
  assert.equal(estimateTokens(input, { tokenCounts: new Float64Array([7, 9]) }), 16);
  assert.equal(estimateTokens(input, { tokenCounts: new Uint32Array([7]) }), 7 + estimateTokens(input[1]));
  assert.equal(estimateTokens(input, { tokenCounts: { 0: 5, 1: 6, length: 2 } }), 11);
  const r = reduceSync(input, { maxTokens: 200, tokenCounts: new Float64Array([100, 4]) });
  assert.equal(r.tokensBefore, 104);
  for (const tokenCounts of [{ length: 2 }, new Float64Array(0)]) {
    assert.equal(estimateTokens(input, { tokenCounts }), estimateTokens(input), "no counts given: estimated");
  }
  // An array-like's own index keys only: a huge `length` makes no slots (it took all the
  // memory there is, killing the process, when it was copied whole).
  assert.equal(estimateTokens(input, { tokenCounts: { length: 2 ** 32 - 1, 0: 7 } }), 7 + estimateTokens(input[1]));
  assert.throws(() => estimateTokens(input, { estimatorWeights: { length: 2 ** 32 - 1 } }), (e) => e.code === "INVALID_CONFIG" && e.field === "estimatorWeights");
  assert.throws(() => reduceSync(input, { maxTokens: 100, summaryTag: { length: 2 ** 32 - 1 } }), (e) => e.code === "INVALID_CONFIG" && e.field === "summaryTag");
  assert.throws(() => estimateTokens(input, { tokenCounts: { a: 1 } }), (e) => e.code === "INVALID_CONFIG" && e.field === "tokenCounts");
  assert.throws(() => estimateTokens(input, { tokenCounts: 5 }), (e) => e.code === "INVALID_CONFIG" && e.field === "tokenCounts");
});

test("reduce reads its input when called: what the caller changes afterwards is not in the result", async () => {
  const history = conversation(3);
  const n = history.length;
  const pending = reduce(history, { maxTokens: 10_000 });
  history.push({ role: "user", content: "typed while the reduction ran" });
  history[0] = { role: "system", content: "replaced" };
  const r = await pending;
  assert.equal(r.messages.length, n);
  assert.equal(r.messages[0].content, "You are terse.");
  // Bad input rejects (never throws synchronously), and the module keeps working.
  const rejected = reduce("not an array", { maxTokens: 10 });
  assert.ok(rejected instanceof Promise);
  await assert.rejects(rejected, (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGES");
  await assert.rejects(reduce(history, { maxTokens: -1 }), (e) => e.code === "INVALID_CONFIG" && e.field === "maxTokens");
  assert.equal((await reduce(history, { maxTokens: 10_000 })).messages.length, n + 1);
});

test("onEvent hears reduceStart and reduceEnd from truncate and priority too", async () => {
  const history = conversation(20);
  const total = estimateTokens(history);
  for (const strategy of ["truncate", "priority"]) {
    for (const run of [(c) => reduceSync(history.map((m) => ({ ...m })), c), (c) => reduce(history.map((m) => ({ ...m })), c)]) {
      const events = [];
      const r = await run({ strategy, maxTokens: Math.floor(total / 4), onEvent: (e) => events.push(e) });
      assert.deepEqual(events.map((e) => e.type), ["reduceStart", "reduceEnd"], strategy);
      assert.equal(events[0].strategy, strategy);
      assert.equal(events[0].messages, history.length);
      assert.equal(events[0].tokens, total, "the whole history's tokens");
      assert.equal(events[1].reduced, true);
      assert.equal(events[1].tokensBefore, total);
      assert.equal(events[1].tokensAfter, r.tokensAfter);
      assert.ok(events[1].durationMs >= 0);
    }
  }
  // No trigger: the same pair, unchanged, from every strategy (truncate, priority and
  // progressive told only reduceEnd, summarize both: audit). What onEvent throws reaches
  // the caller.
  for (const strategy of ["truncate", "priority", "progressive", "summarize"]) {
    const events = [];
    const r = await reduce(history, { strategy, maxTokens: total + 1, summarizer: async () => "s", onEvent: (e) => events.push(e) });
    assert.deepEqual(events.map((e) => e.type), ["reduceStart", "reduceEnd"], strategy);
    assert.equal(events[1].reduced, false, strategy);
    assert.equal(r.reduced, false, strategy);
  }
  const own = new Error("mine");
  assert.throws(() => reduceSync(history, { maxTokens: 100, onEvent: () => { throw own; } }), (e) => e === own);
});

test("error messages name what was wrong in words", async () => {
  const message = (f) => { try { f(); } catch (e) { return e.message; } return ""; };
  assert.match(message(() => reduceSync([{ role: "user", content: 5 }], { maxTokens: 9 })), /got the number 5$/);
  assert.match(message(() => reduceSync([{ role: "user", content: "a" }, 7], { maxTokens: 9 })), /got the number 7$/);
  assert.match(message(() => reduceSync([{ role: "assistant", content: null, tool_calls: "x" }], { maxTokens: 9 })), /got the string "x"$/);
  assert.match(message(() => reduceSync([{ role: "assistant", content: null, tool_calls: "" }], { maxTokens: 9 })), /got an empty string$/);
  assert.match(message(() => reduceSync([{ role: "user", content: "a" }], { maxTokens: 0 })), /maxTokens must be a finite number greater than 0 and at most 9007199254740991 \(Number\.MAX_SAFE_INTEGER\), got 0/);
  assert.match(message(() => reduceSync([{ role: "user", content: "a" }], { maxTokens: -1 })), /maxTokens must be a finite number greater than 0 and at most 9007199254740991 \(Number\.MAX_SAFE_INTEGER\), got -1/);
  // Numbers under which a sum of tokens would be Infinity or NaN.
  const one = [{ role: "user", content: "a" }];
  for (const [options, field] of [[{ messageOverhead: 1e308 }, "messageOverhead"], [{ imageTokens: 1e300 }, "imageTokens"],
    [{ estimator: "length", charsPerToken: 1e-308 }, "charsPerToken"], [{ estimatorWeights: { letter: 1e300 } }, "estimatorWeights"]]) {
    assert.throws(() => reduceSync(one, { maxTokens: 9, ...options }), (e) => e.code === "INVALID_CONFIG" && e.field === field, field);
    assert.throws(() => estimateTokens(one, options), (e) => e.code === "INVALID_CONFIG" && e.field === field, field);
  }
  assert.ok(Number.isFinite(estimateTokens(one, { messageOverhead: Number.MAX_SAFE_INTEGER })));
  // reduceSync with strategy "summarize" and no summarizer says what is missing.
  const e = message(() => reduceSync(conversation(2), { maxTokens: 50, strategy: "summarize" }));
  assert.match(e, /needs config\.summarizer/);
});

test("letters of other alphabets (Greek, Cyrillic, Arabic, Indic, Thai…) have a class of their own", () => {
  const CLASSES = ["letter", "digit", "whitespace", "whitespaceRun", "punctuation", "han", "kana", "hangul",
    "cjkPunctuation", "emoji", "other", "otherLetter"];
  // Every class at 0 but those given: the role "user" is 4 letters.
  const only = (w) => ({ ...Object.fromEntries(CLASSES.map((c) => [c, 0])), ...w });
  const weigh = (text, w) => estimateTokens({ role: "user", content: text }, { messageOverhead: 0, estimatorWeights: only(w) });
  for (const word of ["абвгдежзик", "αβγδεζηθικ", "ابتثجحخدذر", "कखगघचछजझटठ", "กขคงจฉชซญด", "אבגדהוזחטי"]) {
    assert.equal(weigh(word, { otherLetter: 0.3 }), 3, word);
    assert.equal(weigh(word, { otherLetter: 1 }), 10, word);
    assert.equal(weigh(word, { letter: 1 }), 4, `${word}: not Latin letters (only the role's 4 are)`);
    assert.equal(weigh(word, { other: 1 }), 0, `${word}: not "other"`);
  }
  assert.equal(weigh("abcdefghij", { otherLetter: 1 }), 0, "Latin letters are not in it");
  assert.equal(weigh("éàüñçøåæœß", { letter: 1 }), 14, "Latin with diacritics is a letter");
  // The defaults: 0.30 for o200k; cl100k spends more on them.
  assert.equal(estimateTokens({ role: "user", content: "абвгдежзик" }), 3 + Math.ceil(0.4 + 3));
  assert.ok(estimateTokens({ role: "user", content: "абвгдежзик" }, { tokenizer: "cl100k" }) > estimateTokens({ role: "user", content: "абвгдежзик" }));
});

test("what a call leaves behind never changes a later call on the same messages (shouldReduce then reduceSync, concurrent reduce)", async () => {
  // 120 long messages: a truncation estimates only the newest and leaves the rest for later.
  const make = () => Array.from({ length: 120 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `turn ${i}: ` + "The quick brown fox jumps over the lazy dog. ".repeat(40) }));
  const config = { maxTokens: 12000, keepLast: 2 };
  const other = { maxTokens: 20000 };
  const fresh = (c) => { const r = reduceSync(make(), c); return [r.kept.join(), r.tokensAfter]; };
  const same = (r) => [r.kept.join(), r.tokensAfter];
  const want = fresh(config), wantOther = fresh(other);

  // The README's beforeSend: shouldReduce (whose trigger fires), then reduceSync.
  const h = make();
  assert.equal(shouldReduce(h, config), true);
  assert.deepEqual(same(reduceSync(h, config)), want);
  assert.deepEqual(same(reduceSync(h, other)), wantOther, "a later call with another config");
  assert.deepEqual(same(reduceSync(h, { ...other, strategy: "priority" })), fresh({ ...other, strategy: "priority" }));
  h.push({ role: "user", content: "one more question" });
  const grown = make();
  grown.push({ role: "user", content: "one more question" });
  const g = reduceSync(grown, config);
  assert.deepEqual(same(reduceSync(h, config)), [g.kept.join(), g.tokensAfter], "the history that grew");

  // Two reductions of the same array at once, then others.
  const c = make();
  const [a, b] = await Promise.all([reduce(c, config), reduce(c, config)]);
  assert.deepEqual(same(a), want);
  assert.deepEqual(same(b), want);
  assert.deepEqual(same(reduceSync(c, config)), want);
  assert.deepEqual(same(reduceSync(c, other)), wantOther);
  for (const r of [a, b]) assert.equal(r.tokensAfter, estimateTokens(r.messages));
});

test("analyze shows what priority protects: its newest keepRecentPairs user/assistant pairs", () => {
  const history = [{ role: "system", content: "rules" }];
  for (let k = 0; k < 10; k++) history.push({ role: "user", content: `question ${k} `.repeat(5) }, { role: "assistant", content: `answer ${k} `.repeat(5) });
  const config = { strategy: "priority", maxTokens: 60, keepRecentPairs: 3, keepLast: 0 };
  const a = analyze(history, config).messages;
  const r = reduceSync(history, config);
  assert.equal(r.overBudget, true);
  // Every message the reduction keeps, analyze says why (audit: the pairs read unprotected).
  for (const i of r.kept) assert.equal(a[i].protected, true, `message ${i}: ${a[i].protectedBy}`);
  assert.deepEqual(a.slice(15).map((m) => m.protectedBy),
    ["keepRecentPairs", "keepRecentPairs", "keepRecentPairs", "keepRecentPairs", "latestUserInput", "currentTurn"]);
  // Under another strategy the pairs are nothing special.
  assert.equal(analyze(history, { ...config, strategy: "truncate" }).messages[15].protected, false);
});

test("countTokens is called for new messages only, turn after turn, though the reduced prompt is reduced or estimated between turns", () => {
  // The prompt's reading (it starts with the same system message) took the place of the
  // whole history's, and every dropped message was counted again on the next turn: 360
  // countTokens calls a turn at 400 messages (audit).
  let calls = 0;
  const config = { maxTokens: 500, countTokens: (m) => (calls++, Math.ceil(m.content.length / 4) + 3) };
  const history = [{ role: "system", content: "You are helpful." }];
  const perTurn = [];
  for (let turn = 0; turn < 120; turn++) {
    history.push({ role: "user", content: `question ${turn} lorem ipsum dolor sit amet` });
    calls = 0;
    const prompt = reduceSync(history, config).messages;
    perTurn.push(calls);
    reduceSync(prompt, config);
    estimateTokens(prompt, config);
    history.push({ role: "assistant", content: `answer ${turn} consectetur adipiscing elit` });
  }
  assert.ok(perTurn.slice(20).every((n) => n <= 2), JSON.stringify(perTurn.slice(20)));
  // An app that goes on with the reduced history: its new messages only, too.
  let working = reduceSync(history, config).messages;
  for (let turn = 0; turn < 30; turn++) {
    working = [...working, { role: "user", content: `more ${turn}` }];
    calls = 0;
    working = reduceSync(working, config).messages;
    // (The first turn may count the last reply again: the prompt's reading before it did not
    // have it.)
    assert.ok(calls <= (turn === 0 ? 2 : 1), `turn ${turn}: ${calls} calls`);
  }
});
