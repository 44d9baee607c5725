// Offloading and rewriting (src/wasm/js/offload.js): a rewritten message is a shallow copy
// of the original with only its text changed, in the same format, unknown fields kept
// (SPEC §2); read back it carries PREVIEW or COMPRESSED (SPEC §9.9: not previewed again)
// and still answers its call. Also offload ids, compressed tool runs and `reloadTool`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { COMPRESSED, PREVIEW, REAL_USER, TOOL, USER } from "../../src/wasm/js/contract.js";
import { clearToolResult, compressRun, holdsReload, excerptMessage, headAndTail, offloadId, offloadMessage, reloadTool, resolveOffloads, rewriteWithSummary, storeOffloads } from "../../src/wasm/js/offload.js";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { allLinks, list, read } from "./helpers.mjs";

/** A reading with no orphans, handed over as the core hands them before anything is copied. */
const handed = (...args) => {
  const r = read(...args);
  r.setOrphans([]);
  return r;
};

const LONG = "word ".repeat(100);
const ID = /ctx_[0-9a-f]{16}/;
const openaiCall = (id, name = "f", args = "{}") => ({ id, type: "function", function: { name, arguments: args } });

/** Message i of `messages` replaced by `message`, read again. */
function readWith(messages, i, message) {
  const copy = messages.slice();
  copy[i] = message;
  return handed(copy);
}

test("reloadTool: the context_reload tool's definition, frozen", () => {
  assert.equal(reloadTool.name, "context_reload");
  assert.equal(typeof reloadTool.description, "string");
  assert.deepEqual(reloadTool.parameters, {
    type: "object",
    properties: { id: { type: "string", description: "The offload id, e.g. ctx_0123456789abcdef." } },
    required: ["id"],
    additionalProperties: false,
  });
  assert.ok(Object.isFrozen(reloadTool));
  assert.ok(Object.isFrozen(reloadTool.parameters.properties.id));
});

test("offloadId: ctx_ and 16 hex digits, from the content: same content same id, other content another", () => {
  const a = offloadId([{ role: "user", content: "a" }]);
  assert.match(a, /^ctx_[0-9a-f]{16}$/);
  assert.equal(offloadId([{ role: "user", content: "a" }]), a);
  assert.notEqual(offloadId([{ role: "user", content: "b" }]), a);
  const cyclic = { role: "user", content: "a" };
  cyclic.self = cyclic;
  assert.match(offloadId([cyclic]), /^ctx_[0-9a-f]{16}$/);
  assert.match(offloadId([{ n: 1n }]), /^ctx_[0-9a-f]{16}$/);
});

test("openai: a preview is a shallow copy with a note and a preview as its text, other fields kept", () => {
  const messages = [
    { role: "user", content: "q" },
    { role: "assistant", content: null, tool_calls: [openaiCall("c1")] },
    { role: "tool", tool_call_id: "c1", content: LONG, extra: { keep: 1 } },
  ];
  const { message, id } = offloadMessage(handed(messages), 2, 20, 123.4);
  assert.equal(id, offloadId([messages[2]]));
  assert.notEqual(message, messages[2]);
  assert.equal(messages[2].content, LONG); // the original is untouched
  assert.equal(message.extra, messages[2].extra); // shallow: the same object
  assert.deepEqual(Object.keys(message), ["role", "tool_call_id", "content", "extra"]);
  assert.equal(message.content,
    `[offloaded 123 tokens as ${id}; call context_reload with {"id":"${id}"} for the full text]\nword word word word …`);
  const back = readWith(messages, 2, message);
  assert.equal(back.roles[2], TOOL);
  assert.equal(back.flags[2], PREVIEW);
  assert.deepEqual(allLinks(back)[2], [["c1", "result", 0]]);
});

test("a message whose size is in its call arguments is not offloaded", () => {
  const messages = [{ role: "user", content: "q" }, { role: "assistant", content: null, tool_calls: [openaiCall("c1", "f", JSON.stringify({ big: LONG }))] }];
  assert.equal(offloadMessage(handed(messages), 1, 20, 500).message, undefined);
});

test("a preview of text parts: the first text part takes the joined preview, images stay, a user input stays one", () => {
  const messages = [{ role: "user", content: [{ type: "text", text: LONG }, { type: "text", text: "second" }, { type: "image_url", image_url: { url: "x" } }] }];
  const { message, id } = offloadMessage(handed(messages), 0, 20, 200);
  assert.equal(message.content.length, 2);
  assert.equal(message.content[0].text.split("\n")[0], `[offloaded 200 tokens as ${id}; call context_reload with {"id":"${id}"} for the full text]`);
  assert.equal(message.content[1], messages[0].content[2]);
  const back = handed([message]);
  assert.equal(back.flags[0], REAL_USER | PREVIEW);
  assert.equal(back.images[0], 1);
});

test("anthropic: a tool_result block keeps its id and other fields, its content replaced", () => {
  const messages = [
    { role: "user", content: "q" },
    { role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: LONG, cache_control: { type: "ephemeral" } }] },
  ];
  const { message } = offloadMessage(handed(messages), 2, 20, 123);
  const block = message.content[0];
  assert.equal(block.type, "tool_result");
  assert.equal(block.tool_use_id, "t");
  assert.deepEqual(block.cache_control, { type: "ephemeral" });
  assert.match(block.content, /^\[offloaded 123 tokens as ctx_[0-9a-f]{16}; /);
  const back = readWith(messages, 2, message);
  assert.equal(back.roles[2], TOOL);
  assert.equal(back.flags[2], PREVIEW);
  assert.deepEqual(allLinks(back)[2], [["t", "result", 0]]);
});

test("gemini: a functionResponse keeps its name, its response's text under its first key", () => {
  const messages = [
    { role: "user", parts: [{ text: "q" }] },
    { role: "model", parts: [{ functionCall: { name: "f", args: {} } }] },
    { role: "user", parts: [{ functionResponse: { name: "f", response: { result: LONG } } }] },
  ];
  const { message } = offloadMessage(handed(messages), 2, 20, 123);
  const fr = message.parts[0].functionResponse;
  assert.equal(fr.name, "f");
  assert.deepEqual(Object.keys(fr.response), ["result"]);
  assert.match(fr.response.result, /^\[offloaded 123 tokens as ctx_/);
  const back = readWith(messages, 2, message);
  assert.equal(back.flags[2], PREVIEW);
  assert.deepEqual(allLinks(back)[2], [["name:f", "result", 0]]);
});

test("openai-responses: a function_call_output keeps call_id and unknown fields, its output replaced", () => {
  const messages = [
    { type: "message", role: "user", content: "q" },
    { type: "function_call", call_id: "x", name: "f", arguments: "{}" },
    { type: "function_call_output", call_id: "x", output: LONG, id: "out1" },
  ];
  const { message } = offloadMessage(handed(messages), 2, 20, 123);
  assert.equal(message.call_id, "x");
  assert.equal(message.id, "out1");
  assert.match(message.output, /^\[offloaded 123 tokens as ctx_[0-9a-f]{16}; .*\nword word word word …$/);
  assert.equal(readWith(messages, 2, message).flags[2], PREVIEW);
});

test("langchain: a copy of a class instance is an instance, its lc_kwargs rewritten too", () => {
  const messages = [new HumanMessage("q"), new AIMessage({ content: "", tool_calls: [{ id: "k", name: "f", args: {} }] }), new ToolMessage({ content: LONG, tool_call_id: "k" })];
  const { message } = offloadMessage(handed(messages), 2, 20, 100);
  assert.ok(message instanceof ToolMessage);
  assert.match(message.content, /^\[offloaded 100 tokens as ctx_/);
  assert.equal(message.lc_kwargs.content, message.content);
  assert.equal(message.tool_call_id, "k");
  assert.equal(messages[2].content, LONG);
  assert.equal(messages[2].lc_kwargs.content, LONG); // the original's lc_kwargs untouched
  assert.equal(readWith(messages, 2, message).flags[2], PREVIEW);
});

test("rewriteWithSummary: the text replaced by a compressed note and the summary; read back COMPRESSED", () => {
  const messages = [
    { role: "user", content: "q" },
    { role: "assistant", content: null, tool_calls: [openaiCall("c1")] },
    { role: "tool", tool_call_id: "c1", content: LONG, extra: 1 },
  ];
  const { message, id } = rewriteWithSummary(handed(messages), 2, "short summary");
  assert.equal(message.content, `[compressed; the original is ${id}, restored by context_reload]\nshort summary`);
  assert.equal(message.extra, 1);
  assert.equal(message.tool_call_id, "c1");
  assert.equal(readWith(messages, 2, message).flags[2], COMPRESSED);
});

test("compressRun: one assistant message with a digest of calls and results; read back COMPRESSED", () => {
  const messages = [
    { role: "user", content: "q" },
    { role: "assistant", content: null, tool_calls: [openaiCall("c1", "search", '{"q":1}')] },
    { role: "tool", tool_call_id: "c1", content: "r1 result" },
    { role: "assistant", content: "end" },
  ];
  const reading = handed(messages);
  const { message, id } = compressRun(reading, [1, 2], 200);
  assert.equal(id, offloadId([messages[1], messages[2]]));
  assert.deepEqual(message, {
    role: "assistant",
    content: `[compressed tool run: 2 messages, stored as ${id}; call context_reload with {"id":"${id}"} to restore them]\n- called search({"q":1})\n  → r1 result`,
  });
  const back = handed([messages[0], message, messages[3]]);
  assert.deepEqual(list(back.flags), [REAL_USER, COMPRESSED, 0]);
  // With the summarizer's text, that text in place of the digest.
  assert.equal(compressRun(reading, [1, 2], 200, "They searched.").message.content.split("\n")[1], "They searched.");
});

test("compressRun in gemini: a user turn that is no user input", () => {
  const messages = [
    { role: "user", parts: [{ text: "q" }] },
    { role: "model", parts: [{ functionCall: { name: "f", args: { a: 1 } } }] },
    { role: "user", parts: [{ functionResponse: { name: "f", response: { result: "ok" } } }] },
    { role: "model", parts: [{ text: "done" }] },
  ];
  const { message } = compressRun(handed(messages), [1, 2], 200);
  assert.equal(message.role, "user");
  assert.match(message.parts[0].text, ID);
  assert.match(message.parts[0].text, /\n- called f\(\{"a":1\}\)\n {2}→ \{"result":"ok"\}$/);
  const back = handed([messages[0], message, messages[3]]);
  assert.equal(back.roles[1], USER);
  assert.equal(back.flags[1], COMPRESSED); // not REAL_USER
});

test("compressRun of one message whose calls and results are in its content: a copy of it, id and fields kept", () => {
  const tool = { type: "tool-search", toolCallId: "c1", state: "output-available", input: { q: 1 }, output: "hits" };
  const ui = [
    { id: "u1", role: "user", parts: [{ type: "text", text: "q" }] },
    { id: "a1", role: "assistant", parts: [tool], metadata: { model: "m" } },
    { id: "a2", role: "assistant", parts: [{ type: "text", text: "done" }] },
  ];
  const { message, id } = compressRun(handed(ui), [1], 200);
  assert.equal(id, offloadId([ui[1]]));
  assert.deepEqual(message, { id: "a1", role: "assistant", parts: [{ type: "text", text: message.parts[0].text }], metadata: { model: "m" } });
  assert.match(message.parts[0].text, /^\[compressed tool run: 1 messages, stored as ctx_[0-9a-f]{16}; .*\n- called search\(\{"q":1\}\)\n {2}→ hits$/);
  assert.equal(handed([ui[0], message, ui[2]]).flags[1], COMPRESSED);
  // An Anthropic message with a server tool's use and result.
  const anthropic = [
    { role: "user", content: "q" },
    { role: "assistant", id: "msg_1", content: [{ type: "server_tool_use", id: "s1", name: "web_search", input: { query: "x" } }, { type: "web_search_tool_result", tool_use_id: "s1", content: [] }] },
    { role: "user", content: "thanks" },
  ];
  const copy = compressRun(handed(anthropic), [1], 200).message;
  assert.equal(copy.id, "msg_1");
  assert.equal(copy.role, "assistant");
  assert.match(typeof copy.content === "string" ? copy.content : copy.content[0].text, /^\[compressed tool run: 1 messages/);
  // A run of several is one new message.
  const two = [...ui.slice(0, 2), { id: "a3", role: "assistant", parts: [{ ...tool, toolCallId: "c2" }] }, ui[2]];
  assert.match(compressRun(handed(two), [1, 2], 200).message.id, /^summary-/);
});

test("resolveOffloads: an original that is an earlier preview or compressed text is the originals stored under its id", () => {
  const messages = [
    { role: "user", content: "q" },
    { role: "assistant", content: null, tool_calls: [openaiCall("c1"), openaiCall("c2")] },
    { role: "tool", tool_call_id: "c1", content: LONG },
    { role: "tool", tool_call_id: "c2", content: LONG + "2" },
  ];
  const first = offloadMessage(handed(messages), 2, 20, 100);
  const second = rewriteWithSummary(handed(messages), 3, "short");
  const known = { [first.id]: [messages[2]] };
  const previews = [messages[0], messages[1], first.message, second.message];
  // The digest of a run over both, stored with the rewrite of the same reduction.
  const digest = compressRun(handed(previews), [1, 2, 3], 200);
  const added = { [second.id]: [messages[3]], [digest.id]: [messages[1], first.message, second.message] };
  const resolved = resolveOffloads(known, added);
  assert.deepEqual(resolved[digest.id], [messages[1], messages[2], messages[3]]);
  assert.equal(resolved[digest.id][1], messages[2], "the stored objects themselves");
  assert.deepEqual(resolved[second.id], [messages[3]]);
  assert.notEqual(resolved, added);
  assert.deepEqual(added[digest.id], [messages[1], first.message, second.message], "added is left as it was");
  // An id not stored stays a preview; other formats' previews are found too.
  assert.deepEqual(resolveOffloads({}, { x: [first.message] }).x, [first.message]);
  const ui = [{ id: "u", role: "user", parts: [{ type: "text", text: "q" }] },
    { id: "a", role: "assistant", parts: [{ type: "tool-f", toolCallId: "c", state: "output-available", input: {}, output: LONG }] }];
  const uiPreview = offloadMessage(handed(ui), 1, 20, 100);
  assert.deepEqual(resolveOffloads({ [uiPreview.id]: [ui[1]] }, { d: [uiPreview.message] }).d, [ui[1]]);
  const lc = [new HumanMessage("q"), new AIMessage({ content: "", tool_calls: [{ id: "c", name: "f", args: {} }] }), new ToolMessage({ tool_call_id: "c", content: LONG })];
  const serialized = JSON.parse(JSON.stringify(lc));
  const lcPreview = offloadMessage(handed(serialized), 2, 20, 100);
  assert.deepEqual(resolveOffloads({ [lcPreview.id]: [serialized[2]] }, { d: [lcPreview.message] }).d, [serialized[2]]);  // A cleared result is found by its id as a preview is.
  const cleared = clearToolResult(handed(messages), 2, 100);
  assert.deepEqual(resolveOffloads({ [cleared.id]: [messages[2]] }, { d: [messages[1], cleared.message] }).d, [messages[1], messages[2]]);
});

test("headAndTail: the text's head and tail, a share of its length, and how much was left out between them", () => {
  const text = "a".repeat(50) + "b".repeat(50);
  assert.equal(headAndTail(text, 0.2), `${"a".repeat(10)}\n[… 80 characters omitted …]\n${"b".repeat(10)}`);
  assert.equal(headAndTail(text, 1), text);
  assert.equal(headAndTail("", 0.5), "");
  assert.equal(headAndTail(text, 0), "\n[… 100 characters omitted …]\n");
  // Never half of a surrogate pair at either cut.
  const emoji = "😀".repeat(10);
  for (const keep of [0.1, 0.15, 0.25, 0.35, 0.5]) {
    const cut = headAndTail(emoji, keep);
    assert.ok(!/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(cut), `${keep}: ${cut}`);
    const omitted = Number(/\[… (\d+) characters omitted …\]/.exec(cut)[1]);
    assert.equal(cut.replace(/\n\[… \d+ characters omitted …\]\n/, "").length + omitted, emoji.length, keep);
  }
});

test("excerptMessage: a copy in the message's own format with its texts cut, fields kept; undefined when nothing can be cut", () => {
  const big = "x".repeat(2000) + "END";
  const call = { role: "assistant", content: null, tool_calls: [openaiCall("c1", "read", "{}")] };
  const openai = [{ role: "user", content: "q" }, call, { role: "tool", tool_call_id: "c1", content: big, extra: 1 }];
  const r = handed(openai);
  const cut = excerptMessage(r, 2, 0.1);
  assert.notEqual(cut, openai[2]);
  assert.deepEqual({ ...cut, content: undefined }, { ...openai[2], content: undefined }, "the other fields as they were");
  assert.match(cut.content, /^x{100}\n\[… 1803 characters omitted …\]\nx{97}END$/);
  assert.equal(openai[2].content, big, "the original untouched");
  // Read back, it still answers its call.
  assert.deepEqual(allLinks(readWith(openai, 2, cut))[2], allLinks(r)[2]);
  // A message whose size is in its call's arguments has no text to cut.
  assert.equal(excerptMessage(handed([{ role: "user", content: "q" }, { ...call, tool_calls: [openaiCall("c1", "write", big)] }]), 1, 0.1), undefined);
  // Anthropic blocks: the text parts and a tool result's content are cut, the call kept.
  const anthropic = [
    { role: "user", content: [{ type: "text", text: "q" }] },
    { role: "assistant", content: [{ type: "text", text: big }, { type: "tool_use", id: "t1", name: "read", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: big }] },
  ];
  const a = handed(anthropic);
  const said = excerptMessage(a, 1, 0.1);
  assert.match(said.content[0].text, /characters omitted/);
  assert.deepEqual(said.content[1], anthropic[1].content[1]);
  const result = excerptMessage(a, 2, 0.1);
  assert.equal(result.content[0].tool_use_id, "t1");
  assert.match(result.content[0].content, /^x{100}\n\[… \d+ characters omitted …\]/);
});

test("a result of context_reload is not offloaded or rewritten again: the model asked for it back", () => {
  const big = "the original log line\n".repeat(200);
  const cases = {
    openai: [{ role: "user", content: "q" },
      { role: "assistant", content: null, tool_calls: [{ id: "r1", type: "function", function: { name: "context_reload", arguments: '{"id":"ctx_0123456789abcdef"}' } }, { id: "s1", type: "function", function: { name: "search", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "r1", content: big }, { role: "tool", tool_call_id: "s1", content: big }],
    anthropic: [{ role: "user", content: "q" },
      { role: "assistant", content: [{ type: "tool_use", id: "r1", name: "context_reload", input: {} }, { type: "tool_use", id: "s1", name: "search", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "r1", content: big }] }, { role: "user", content: [{ type: "tool_result", tool_use_id: "s1", content: big }] }],
    gemini: [{ role: "user", parts: [{ text: "q" }] },
      { role: "model", parts: [{ functionCall: { name: "context_reload", args: {} } }, { functionCall: { name: "search", args: {} } }] },
      { role: "user", parts: [{ functionResponse: { name: "context_reload", response: { text: big } } }] }, { role: "user", parts: [{ functionResponse: { name: "search", response: { text: big } } }] }],
    vercel: [{ role: "user", content: "q" },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "r1", toolName: "context_reload", input: {} }, { type: "tool-call", toolCallId: "s1", toolName: "search", input: {} }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "r1", toolName: "context_reload", output: { type: "text", value: big } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "s1", toolName: "search", output: { type: "text", value: big } }] }],
  };
  for (const [format, messages] of Object.entries(cases)) {
    const r = handed(messages);
    assert.equal(offloadMessage(r, 2, 50, 500).message, undefined, `${format}: the reload's result`);
    assert.equal(rewriteWithSummary(r, 2, "short").message, undefined, `${format}: not rewritten either`);
    assert.ok(offloadMessage(r, 3, 50, 500).message, `${format}: another tool's result is offloaded`);
    assert.equal(clearToolResult(r, 2, 500).message, undefined, `${format}: nor cleared`);
    assert.ok(clearToolResult(r, 3, 500).message, `${format}: another tool's result is cleared`);
    assert.equal(holdsReload(r, [1, 2]), true, `${format}: a run with it is not compressed`);
    assert.equal(holdsReload(r, [3]), false, format);
  }
});

test("clearToolResult: each result a placeholder naming the id, in every format; calls, ids and other fields kept; read back PREVIEW, still the answer", () => {
  const cleared = (id) => `[cleared 321 tokens as ${id}]`;
  const cases = {
    openai: [[{ role: "user", content: "q" }, { role: "assistant", content: null, tool_calls: [openaiCall("c1")] },
      { role: "tool", tool_call_id: "c1", content: LONG, extra: 1 }], (m) => m.content],
    "openai-responses": [[{ type: "message", role: "user", content: "q" }, { type: "function_call", call_id: "x", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "x", output: LONG, id: "out1" }], (m) => m.output],
    anthropic: [[{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: {} }, { type: "tool_use", id: "u", name: "f", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: LONG }, { type: "tool_result", tool_use_id: "u", content: [{ type: "text", text: LONG }] }] }],
    (m) => [m.content[0].content, m.content[1].content[0].text]],
    vercel: [[{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "tool-call", toolCallId: "c", toolName: "f", input: {} }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c", toolName: "f", output: { type: "json", value: { rows: LONG } } }] }], (m) => m.content[0].output.value],
    gemini: [[{ role: "user", parts: [{ text: "q" }] }, { role: "model", parts: [{ functionCall: { name: "f", args: {} } }] },
      { role: "user", parts: [{ functionResponse: { name: "f", response: { result: LONG } } }] }], (m) => m.parts[0].functionResponse.response.result],
    langchain: [[{ type: "human", content: "q" }, { type: "ai", content: "", tool_calls: [{ id: "c", name: "f", args: {} }] },
      { type: "tool", tool_call_id: "c", content: LONG }], (m) => m.content],
  };
  for (const [format, [messages, texts]] of Object.entries(cases)) {
    const { message, id } = clearToolResult(handed(messages), 2, 321.4);
    assert.equal(id, offloadId([messages[2]]), format);
    assert.deepEqual(Object.keys(message), Object.keys(messages[2]), `${format}: no field added or lost`);
    const got = texts(message);
    for (const text of Array.isArray(got) ? got : [got]) assert.equal(text, cleared(id), format);
    const back = readWith(messages, 2, message);
    assert.equal(back.flags[2] & PREVIEW, PREVIEW, `${format}: read back as written`);
    assert.deepEqual(allLinks(back)[2], allLinks(handed(messages))[2], `${format}: it answers what it answered`);
  }
});

test("clearToolResult of a message that is more than results: its own text stays, only the results are cleared", () => {
  // An Anthropic user input beside the results of the turn before; a UIMessage's answer
  // beside its tool part (which holds call and result).
  const anthropic = [{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: LONG }, { type: "text", text: "and now this" }] }];
  const a = clearToolResult(handed(anthropic), 2, 200);
  assert.match(a.message.content[0].content, /^\[cleared 200 tokens as ctx_[0-9a-f]{16}\]$/);
  assert.equal(a.message.content[1], anthropic[2].content[1]);
  const ui = [{ id: "u", role: "user", parts: [{ type: "text", text: "q" }] },
    { id: "a", role: "assistant", parts: [{ type: "text", text: "Looking." }, { type: "tool-f", toolCallId: "c", state: "output-available", input: { q: 1 }, output: LONG }] }];
  const u = clearToolResult(handed(ui), 1, 200);
  assert.equal(u.message.id, "a");
  assert.equal(u.message.parts[0], ui[1].parts[0]);
  assert.deepEqual(u.message.parts[1].input, { q: 1 });
  assert.match(u.message.parts[1].output, /^\[cleared 200 tokens as ctx_/);
  // A result written already (an earlier placeholder, a preview) is left as it is: clearing
  // again saves nothing, and there is nothing to write.
  assert.equal(clearToolResult(handed([ui[0], u.message]), 1, 40).message, undefined);
  const text = [{ id: "u", role: "user", parts: [{ type: "text", text: "q" }] }, { id: "b", role: "assistant", parts: [{ type: "text", text: LONG }] }];
  assert.equal(clearToolResult(handed(text), 1, 200).message, undefined, "no result: nothing cleared");
});

test("storeOffloads: an original that is an earlier placeholder is stored as what the store holds under its id, with a store that answers at once or later", async () => {
  const result = { role: "tool", tool_call_id: "c1", content: LONG };
  const inner = offloadId([result]);
  const placeholder = { ...result, content: `[cleared 100 tokens as ${inner}]` };
  const call = { role: "assistant", content: null, tool_calls: [openaiCall("c1")] };
  const map = new Map([[inner, [result]]]);
  assert.equal(storeOffloads(map, { ctx_00000000000000aa: [call, placeholder] }), undefined, "nothing to wait for");
  assert.deepEqual(map.get("ctx_00000000000000aa"), [call, result]);
  // Not in the store: stored as it is (the placeholder still names where it was).
  const empty = new Map();
  storeOffloads(empty, { ctx_00000000000000bb: [call, placeholder] });
  assert.deepEqual(empty.get("ctx_00000000000000bb"), [call, placeholder]);
  // Asynchronous gets: the writes wait for them.
  const kv = new Map([[inner, [result]]]);
  const store = { get: async (id) => kv.get(id), set: (id, v) => { kv.set(id, v); } };
  const pending = storeOffloads(store, { ctx_00000000000000cc: [call, placeholder] });
  assert.ok(pending instanceof Promise);
  assert.equal(kv.has("ctx_00000000000000cc"), false);
  await pending;
  assert.deepEqual(kv.get("ctx_00000000000000cc"), [call, result]);
});
