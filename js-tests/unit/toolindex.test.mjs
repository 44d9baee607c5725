// progressive's index of dropped tool calls (src/wasm/js/toolindex.js): a line for each tool
// group the core chose, in every format, after the lines of the earlier index; read back as
// a summary that is the index (SUMMARY | TOOL_INDEX).
import { test } from "node:test";
import assert from "node:assert/strict";
import { COMPRESSED, SUMMARY, TOOL_INDEX, TOOL_INDEX_HEADER } from "../../src/wasm/js/contract.js";
import { compressRun, offloadId } from "../../src/wasm/js/offload.js";
import { summaryMessage, wrapSummary } from "../../src/wasm/js/summaries.js";
import { indexText, listable, listableUnits, toolIndex } from "../../src/wasm/js/toolindex.js";
import { TAG, read } from "./helpers.mjs";

/** Tool groups as the core hands them: their messages, and where each ends. */
const units = (...groups) => {
  const messages = [], ends = [];
  for (const [start, end] of groups) {
    for (let i = start; i < end; i++) messages.push(i);
    ends.push(messages.length);
  }
  return [Uint32Array.from(messages), Uint32Array.from(ends)];
};

const handed = (messages) => {
  const r = read(messages);
  r.setOrphans([]);
  return r;
};

/** A call of `name` with `args` and its result, in each format: [call message, result message]. */
const turns = {
  openai: (k, name, args) => [{ role: "assistant", content: null, tool_calls: [{ id: `c${k}`, type: "function", function: { name, arguments: JSON.stringify(args) } }] },
    { role: "tool", tool_call_id: `c${k}`, content: `result ${k}` }],
  "openai-responses": (k, name, args) => [{ type: "function_call", call_id: `c${k}`, name, arguments: JSON.stringify(args) },
    { type: "function_call_output", call_id: `c${k}`, output: `result ${k}` }],
  anthropic: (k, name, args) => [{ role: "assistant", content: [{ type: "tool_use", id: `c${k}`, name, input: args }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: `c${k}`, content: `result ${k}` }] }],
  vercel: (k, name, args) => [{ role: "assistant", content: [{ type: "tool-call", toolCallId: `c${k}`, toolName: name, input: args }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: `c${k}`, toolName: name, output: { type: "text", value: `result ${k}` } }] }],
  gemini: (k, name, args) => [{ role: "model", parts: [{ functionCall: { name, args } }] },
    { role: "user", parts: [{ functionResponse: { name, response: { result: `result ${k}` } } }] }],
  langchain: (k, name, args) => [{ type: "ai", content: "", tool_calls: [{ id: `c${k}`, name, args }] },
    { type: "tool", tool_call_id: `c${k}`, content: `result ${k}` }],
};
const opening = {
  openai: { role: "user", content: "q" },
  "openai-responses": { type: "message", role: "user", content: "q" },
  anthropic: { role: "user", content: "q" },
  vercel: { role: "user", content: "q" },
  gemini: { role: "user", parts: [{ text: "q" }] },
  langchain: { type: "human", content: "q" },
};

test("toolIndex in every format: a line a group, its calls with their arguments and the id of the group's messages, oldest first", () => {
  for (const [format, turn] of Object.entries(turns)) {
    const messages = [opening[format], ...turn(1, "read_file", { path: "src/a.rs", lines: [1, 20] }), ...turn(2, "grep", { query: "x" })];
    const r = handed(messages);
    const w = toolIndex(r, ...units([1, 3], [3, 5]), [], TAG, Infinity);
    assert.equal(w.first, 0, format);
    assert.equal(w.earlier, 0, format);
    assert.deepEqual(w.ids, [offloadId(messages.slice(1, 3)), offloadId(messages.slice(3, 5))], format);
    const lines = indexText(w, 0).split("\n");
    assert.ok(lines[0].startsWith(`${TOOL_INDEX_HEADER} Call context_reload`), format);
    assert.deepEqual(lines.slice(1), [`- read_file(path=src/a.rs, lines=[1,20]) → ${w.ids[0]}`, `- grep(query=x) → ${w.ids[1]}`], format);
    assert.equal(w.count, 2, format);
  }
});

test("toolIndex of UIMessages: a message holds its calls and their results, a group of its own", () => {
  const part = (k, name, input) => ({ type: `tool-${name}`, toolCallId: `c${k}`, state: "output-available", input, output: `result ${k}` });
  const messages = [{ id: "u", role: "user", parts: [{ type: "text", text: "q" }] },
    { id: "a1", role: "assistant", parts: [{ type: "text", text: "Looking." }, part(1, "read_file", { path: "src/a.rs" }), part(2, "grep", { query: "x" })] },
    { id: "a2", role: "assistant", parts: [part(3, "run", {})] }];
  const w = toolIndex(handed(messages), ...units([1, 2], [2, 3]), [], TAG, Infinity);
  assert.deepEqual(w.ids, [offloadId([messages[1]]), offloadId([messages[2]])]);
  assert.deepEqual(indexText(w, 0).split("\n").slice(1), [`- read_file(path=src/a.rs); grep(query=x) → ${w.ids[0]}`, `- run() → ${w.ids[1]}`]);
});

test("toolIndex: the newest groups only, as many characters as asked and one line more; the oldest lines left out; an earlier index's lines come first", () => {
  const messages = [opening.openai, ...turns.openai(1, "a", {}), ...turns.openai(2, "b", {}), ...turns.openai(3, "c", {})];
  const groups = units([1, 3], [3, 5], [5, 7]);
  // A line here has 28 characters and its newline: two pass 30.
  const newest = toolIndex(handed(messages), ...groups, [], TAG, 30);
  assert.equal(newest.first, 1);
  assert.deepEqual(indexText(newest, 0).split("\n").slice(1).map((l) => l.slice(2, 5)), ["b()", "c()"]);
  const all = toolIndex(handed(messages), ...groups, [], TAG, Infinity);
  assert.equal(all.ids.length, 3, "an id for every group written");
  assert.deepEqual(indexText(all, 2).split("\n").slice(1).map((l) => l.slice(2, 5)), ["c()"]);
  // The earlier index stands first, as the core sees it when it reduces a reduced history.
  const r = handed(messages);
  const earlier = summaryMessage(r, "user", wrapSummary(`${TOOL_INDEX_HEADER} Call context_reload …\n- old(x=1) → ctx_0123456789abcdef\n- older → ctx_fedcba9876543210`, TAG));
  const withEarlier = [messages[0], earlier, ...messages.slice(1)];
  const w = toolIndex(handed(withEarlier), ...units([2, 4]), [1], TAG, Infinity);
  assert.equal(w.earlier, 2);
  assert.equal(w.count, 3);
  assert.deepEqual(indexText(w, 0).split("\n").slice(1), ["- old(x=1) → ctx_0123456789abcdef", "- older → ctx_fedcba9876543210", `- a() → ${w.ids[0]}`]);
  assert.deepEqual(indexText(w, 1).split("\n").slice(1), ["- older → ctx_fedcba9876543210", `- a() → ${w.ids[0]}`]);
});

test("toolIndex: arguments that are no JSON object are shown as they are, all cut short", () => {
  const long = "y".repeat(200);
  const messages = [opening.openai,
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "shell", arguments: "ls -la" } }, { id: "c2", type: "function", function: { name: "sum", arguments: "[1,2]" } }] },
    { role: "tool", tool_call_id: "c1", content: "a" }, { role: "tool", tool_call_id: "c2", content: "3" },
    { role: "assistant", content: null, tool_calls: [{ id: "c3", type: "function", function: { name: "write", arguments: JSON.stringify({ text: long }) } }] },
    { role: "tool", tool_call_id: "c3", content: "ok" }];
  const w = toolIndex(handed(messages), ...units([1, 4], [4, 6]), [], TAG, Infinity);
  const [, first, second] = indexText(w, 0).split("\n");
  assert.equal(first, `- shell(ls -la); sum([1,2]) → ${w.ids[0]}`, "a group of two calls: one line");
  assert.match(second, /^- write\(text=y{55}…\) → ctx_/, "60 characters of arguments");
});

test("a summary that opens with the index's header reads as the index; another summary as a summary only", () => {
  const index = { role: "user", content: `<${TAG}>${TOOL_INDEX_HEADER} …\n- a() → ctx_0123456789abcdef</${TAG}>` };
  const summary = { role: "user", content: `<${TAG}>We talked about ${TOOL_INDEX_HEADER}</${TAG}>` };
  const pasted = { role: "user", content: `<${TAG}>${TOOL_INDEX_HEADER}</${TAG}> and now a question` };
  const r = read([index, summary, pasted]);
  assert.equal(r.flags[0], SUMMARY | TOOL_INDEX);
  assert.equal(r.flags[1], SUMMARY);
  assert.equal(r.flags[2] & (SUMMARY | TOOL_INDEX), 0, "a user's paste is the user's input");
  // In parts as well (Anthropic, the AI SDK).
  const parts = read([{ role: "user", content: [{ type: "text", text: index.content }] }], "anthropic");
  assert.equal(parts.flags[0], SUMMARY | TOOL_INDEX);
});

test("toolIndex of a tool run's digest: a run this reduction compressed is listed by what it stands for, an earlier digest by its own id and calls", () => {
  const messages = [opening.openai, ...turns.openai(1, "a", { x: 1 }), ...turns.openai(2, "b", {})];
  const r = handed(messages);
  // What the digest of messages 1–4 stands for (as compressRun hands its originals): its id.
  const run = compressRun(r, [1, 2, 3, 4], 100);
  const w = toolIndex(r, Uint32Array.of(1, 2, 3, 4), Uint32Array.of(4), [], TAG, Infinity);
  assert.deepEqual(w.ids, [run.id]);
  assert.equal(indexText(w, 0).split("\n")[1], `- a(x=1); b() → ${run.id}`);
  // The digest read back: its own id, nothing to offload again ("").
  const back = handed([messages[0], run.message]);
  assert.equal(back.flags[1] & COMPRESSED, COMPRESSED);
  assert.ok(listable(back, [1]));
  const again = toolIndex(back, Uint32Array.of(1), Uint32Array.of(1), [], TAG, Infinity);
  assert.deepEqual(again.ids, [""]);
  assert.equal(indexText(again, 0).split("\n")[1], `- a({"x":1}); b({}) → ${run.id}`);
  // A text the summarizer compressed is no digest: no line; nor what answered context_reload.
  const text = handed([messages[0], { role: "assistant", content: "[compressed; the original is ctx_0123456789abcdef, restored by context_reload]\nshort" }]);
  assert.equal(text.flags[1] & COMPRESSED, COMPRESSED);
  assert.ok(!listable(text, [1]));
  const reload = [opening.openai, { role: "assistant", content: null, tool_calls: [{ id: "r", type: "function", function: { name: "context_reload", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "r", content: "[]" }];
  assert.ok(!listable(handed(reload), [1, 2]));
  assert.ok(listable(r, [1, 2]));
});

test("toolIndex: a step of many calls is one line of a few, and how many more it holds", () => {
  const calls = Array.from({ length: 30 }, (_, k) => ({ id: `c${k}`, type: "function", function: { name: "read_file", arguments: JSON.stringify({ path: `src/module_${k}/file.rs` }) } }));
  const messages = [opening.openai, { role: "assistant", content: null, tool_calls: calls },
    ...calls.map((c) => ({ role: "tool", tool_call_id: c.id, content: "ok" }))];
  const w = toolIndex(handed(messages), Uint32Array.from({ length: 31 }, (_, k) => k + 1), Uint32Array.of(31), [], TAG, Infinity);
  const line = indexText(w, 0).split("\n")[1];
  assert.match(line, /^- read_file\(path=src\/module_0\/file.rs\); read_file\(path=src\/module_1\/file.rs\); .*; … \(\+\d+ more\) → ctx_[0-9a-f]{16}$/);
  assert.ok(line.length < 260, `${line.length} characters`);
});

test("a result answers the latest call of its id before it: ids a server numbers per response repeat, and only the reload's own result is its answer", () => {
  const turn = (k, name) => [{ role: "user", content: `q${k}` },
    { role: "assistant", content: null, tool_calls: [{ id: "call_0", type: "function", function: { name, arguments: "{}" } }] },
    { role: "tool", tool_call_id: "call_0", content: `result ${k}` }];
  const messages = [...turn(0, "read_file"), ...turn(1, "read_file"), ...turn(2, "context_reload"), ...turn(3, "read_file")];
  const r = handed(messages);
  assert.deepEqual([2, 5, 8, 11].map((i) => !listable(r, [i - 1, i])), [false, false, true, false]);
});

test("listableUnits: the numbers of the units that get a line, in one call", () => {
  const reload = [opening.openai, { role: "assistant", content: null, tool_calls: [{ id: "r", type: "function", function: { name: "context_reload", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "r", content: "[]" }, ...turns.openai(1, "a", {})];
  assert.deepEqual(Array.from(listableUnits(handed(reload), ...units([1, 3], [3, 5]))), [1]);
});
