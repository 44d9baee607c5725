// The seven formats of SPEC §2, read by `readMessages` (src/wasm/js/read.js) straight from
// source: for a small conversation with tool calls in each, what the core receives — the
// detected format, role codes, flags, images, call/result links (a call and its result
// share a key) and the texts to estimate.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ASSISTANT, ATTACH_NEXT, CALLS_ONLY, FORMAT_NAMES, OTHER, REAL_USER, SUMMARY, SYSTEM, TOOL, USER,
} from "../../src/wasm/js/contract.js";
import { HumanMessage, AIMessage, ToolMessage, SystemMessage } from "@langchain/core/messages";
import { allLinks, list, read, roleNameOf, textsOf } from "./helpers.mjs";

const SUMMARY_TEXT = "<conversation-summary>Earlier: the user asked about maps.</conversation-summary>";

// ---- builders ---------------------------------------------------------------------------

const openaiCall = (id, name, args) => ({ id, type: "function", function: { name, arguments: args } });

function openaiChat() {
  return [
    { role: "system", content: "Be brief." },
    { role: "user", content: SUMMARY_TEXT },
    { role: "user", content: [{ type: "text", text: "What is here?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AA" } }] },
    { role: "assistant", content: null, tool_calls: [openaiCall("c1", "search", '{"q":1}'), openaiCall("c2", "fetch", { url: "x" })] },
    { role: "tool", tool_call_id: "c1", content: "r1" },
    { role: "tool", tool_call_id: "c2", content: "r2" },
    { role: "assistant", content: "Done." },
  ];
}

// ---- per format ---------------------------------------------------------------------------

test("openai: roles, summary and real-user flags, calls-only, images, call/result keys, texts", () => {
  const r = read(openaiChat());
  assert.equal(r.format, "openai");
  assert.equal(r.formatCode, FORMAT_NAMES.indexOf("openai"));
  assert.deepEqual(list(r.roles), [SYSTEM, USER, USER, ASSISTANT, TOOL, TOOL, ASSISTANT]);
  assert.deepEqual(list(r.flags), [0, SUMMARY, REAL_USER, CALLS_ONLY, 0, 0, 0]);
  assert.deepEqual(list(r.images), [0, 0, 1, 0, 0, 0, 0]);
  assert.deepEqual(allLinks(r), [[], [], [], [["c1", "call", 0], ["c2", "call", 1]], [["c1", "result", 0]], [["c2", "result", 1]], []]);
  // Arguments as their JSON text (an object's written out); a tool result's id is a text too.
  assert.deepEqual(textsOf(r, 3), ["c1", "search", '{"q":1}', "c2", "fetch", '{"url":"x"}']);
  assert.deepEqual(textsOf(r, 4), ["r1", "c1"]);
  assert.deepEqual(textsOf(r, 2), ["What is here?"]);
  assert.equal(roleNameOf(r, 0), "system");
  assert.equal(roleNameOf(r, 4), "tool");
});

test("openai: an assistant text beside its calls is not calls-only; legacy function_call pairs with its function message", () => {
  const r = read([
    { role: "user", content: "go" },
    { role: "assistant", content: "Looking.", tool_calls: [openaiCall("a", "f", "{}")] },
    { role: "tool", tool_call_id: "a", content: "x" },
    { role: "assistant", content: null, function_call: { name: "legacy", arguments: "{}" } },
    { role: "function", name: "legacy", content: "y" },
  ]);
  assert.deepEqual(list(r.flags), [REAL_USER, 0, 0, CALLS_ONLY, 0]);
  assert.deepEqual(list(r.roles), [USER, ASSISTANT, TOOL, ASSISTANT, TOOL]);
  assert.deepEqual(allLinks(r), [[], [["a", "call", 0]], [["a", "result", 0]], [["function:legacy", "call", 1]], [["function:legacy", "result", 1]]]);
});

test("openai-responses: reasoning attaches to the call after it; call and output share a key", () => {
  const r = read([
    { type: "message", role: "developer", content: [{ type: "input_text", text: "Be brief." }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "Hi" }, { type: "input_image", image_url: "data:x" }] },
    { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "I should search." }] },
    { type: "function_call", call_id: "fc1", name: "search", arguments: '{"q":"maps"}' },
    { type: "function_call_output", call_id: "fc1", output: "found 3" },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "Three." }] },
    { role: "user", content: [{ type: "input_text", text: SUMMARY_TEXT }] },
  ]);
  assert.equal(r.format, "openai-responses");
  assert.equal(r.formatCode, 1);
  assert.deepEqual(list(r.roles), [SYSTEM, USER, OTHER, ASSISTANT, TOOL, ASSISTANT, USER]);
  assert.deepEqual(list(r.flags), [0, REAL_USER, ATTACH_NEXT, CALLS_ONLY, 0, 0, SUMMARY]);
  assert.deepEqual(list(r.images), [0, 1, 0, 0, 0, 0, 0]);
  assert.deepEqual(allLinks(r), [[], [], [], [["fc1", "call", 0]], [["fc1", "result", 0]], [], []]);
  assert.deepEqual(textsOf(r, 2), ["I should search."]);
  assert.deepEqual(textsOf(r, 3), ["fc1", "search", '{"q":"maps"}']);
  assert.deepEqual(textsOf(r, 4), ["fc1", "found 3"]);
});

test("anthropic: a user message of tool_result blocks only is a tool message, not a real user input", () => {
  const r = read([
    { role: "user", content: [{ type: "text", text: "Look" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AA" } }] },
    { role: "assistant", content: [{ type: "text", text: "Checking." }, { type: "tool_use", id: "tu1", name: "search", input: { q: 1 } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "tu1", content: "res" }] },
    { role: "assistant", content: [{ type: "thinking", thinking: "hmm", signature: "s" }, { type: "tool_use", id: "tu2", name: "f", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "tu2", content: [{ type: "text", text: "r2" }] }, { type: "text", text: "and also this" }] },
    { role: "assistant", content: "ok" },
  ]);
  assert.equal(r.format, "anthropic");
  assert.deepEqual(list(r.roles), [USER, ASSISTANT, TOOL, ASSISTANT, USER, ASSISTANT]);
  // Thinking beside calls is still calls-only; a tool_result with a text beside it is user input.
  assert.deepEqual(list(r.flags), [REAL_USER, 0, 0, CALLS_ONLY, REAL_USER, 0]);
  assert.deepEqual(list(r.images), [1, 0, 0, 0, 0, 0]);
  assert.deepEqual(allLinks(r), [[], [["tu1", "call", 0]], [["tu1", "result", 0]], [["tu2", "call", 1]], [["tu2", "result", 1]], []]);
  assert.deepEqual(textsOf(r, 1), ["Checking.", "tu1", "search", '{"q":1}']);
  assert.deepEqual(textsOf(r, 4), ["tu2", "r2", "and also this"]);
});

test("vercel (ModelMessage): tool-call/tool-result and approval request/response pairs", () => {
  const r = read([
    { role: "system", content: "S" },
    { role: "user", content: [{ type: "text", text: "Hi" }, { type: "image", image: "data:x" }] },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "v1", toolName: "search", input: { q: 1 } }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "v1", toolName: "search", output: { type: "text", value: "res" } }] },
    { role: "assistant", content: [{ type: "tool-approval-request", approvalId: "ap1", toolCallId: "v2" }] },
    { role: "tool", content: [{ type: "tool-approval-response", approvalId: "ap1", approved: true }] },
    { role: "assistant", content: [{ type: "text", text: "done" }] },
  ]);
  assert.equal(r.format, "vercel");
  assert.equal(r.formatCode, 3);
  assert.deepEqual(list(r.roles), [SYSTEM, USER, ASSISTANT, TOOL, ASSISTANT, TOOL, ASSISTANT]);
  assert.deepEqual(list(r.flags), [0, REAL_USER, CALLS_ONLY, 0, CALLS_ONLY, 0, 0]);
  assert.deepEqual(list(r.images), [0, 1, 0, 0, 0, 0, 0]);
  assert.deepEqual(allLinks(r), [
    [], [], [["v1", "call", 0]], [["v1", "result", 0]],
    [["approval:ap1", "call", 1]], [["approval:ap1", "result", 1]], [],
  ]);
  assert.deepEqual(textsOf(r, 3), ["v1", "search", "res"]);
});

test("vercel-ui (UIMessage): a tool part is its call and its result, in one message", () => {
  const r = read([
    { id: "m1", role: "user", parts: [{ type: "text", text: "Hi" }, { type: "file", mediaType: "image/png", url: "data:x" }] },
    {
      id: "m2", role: "assistant", parts: [
        { type: "step-start" },
        { type: "tool-search", toolCallId: "u1", state: "output-available", input: { q: 1 }, output: { hits: 2 } },
        { type: "text", text: "Found two." },
      ],
    },
    { id: "m3", role: "assistant", parts: [{ type: "dynamic-tool", toolName: "calc", toolCallId: "u2", state: "output-available", input: {}, output: "4" }] },
  ]);
  assert.equal(r.format, "vercel-ui");
  assert.equal(r.formatCode, 4);
  assert.deepEqual(list(r.roles), [USER, ASSISTANT, ASSISTANT]);
  assert.deepEqual(list(r.flags), [REAL_USER, 0, 0]);
  assert.deepEqual(list(r.images), [1, 0, 0]);
  assert.deepEqual(allLinks(r), [[], [["u1", "call", 0], ["u1", "result", 0]], [["u2", "call", 1], ["u2", "result", 1]]]);
  // The tool's name is its part type's tail ("tool-search") when it has no toolName.
  assert.deepEqual(textsOf(r, 1), ["u1", "search", '{"q":1}', '{"hits":2}', "Found two."]);
});

// ---- AI SDK v7 shapes (ai 7.0, @ai-sdk/provider 4.0: ModelMessage and the middleware's
// LanguageModelV4Prompt) ----------------------------------------------------------------------

// A 300 KB PNG as base64, as a screenshot tool returns it.
const PNG_B64 = "iVBORw0KGgo" + "A".repeat(400_000);

test("vercel v7: a tool output's file item, file-reference and image-file-reference items and reasoning-file parts are images", () => {
  const r = read([
    { role: "user", content: [{ type: "text", text: "Look" }] },
    {
      role: "assistant", content: [
        // A reasoning file beside a call is reasoning: the message is still calls-only.
        { type: "reasoning-file", data: { type: "data", data: PNG_B64 }, mediaType: "image/png" },
        { type: "tool-call", toolCallId: "s1", toolName: "screenshot", input: {} },
      ],
    },
    {
      role: "tool", content: [{
        type: "tool-result", toolCallId: "s1", toolName: "screenshot",
        output: {
          type: "content", value: [
            { type: "text", text: "here" },
            { type: "file", data: { type: "data", data: PNG_B64 }, mediaType: "image/png" },
            { type: "file", data: { type: "url", url: new URL("https://example.com/a.png") }, mediaType: "image" },
            { type: "file-reference", providerReference: { openai: "file-1" } },
            { type: "image-file-reference", providerReference: { anthropic: "file-2" } },
          ],
        },
      }],
    },
  ], "vercel");
  assert.deepEqual(list(r.images), [0, 1, 4]);
  assert.deepEqual(list(r.flags), [REAL_USER, CALLS_ONLY, 0]);
  // No base64 among the texts: the item's data is no text.
  assert.deepEqual(textsOf(r, 2), ["s1", "screenshot", "here"]);
  assert.deepEqual(textsOf(r, 1), ["s1", "screenshot", "{}"]);
});

test("vercel v7: a file whose data is inline text counts as that text, not as an image", () => {
  const doc = "Clause 4.2: delivery within thirty days.";
  const r = read([
    { role: "user", content: [{ type: "file", data: { type: "text", text: doc }, mediaType: "text/plain" }] },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "d1", toolName: "read", input: {} }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "d1", toolName: "read", output: { type: "content", value: [{ type: "file", data: { type: "text", text: doc }, mediaType: "text" }] } }] },
  ], "vercel");
  assert.deepEqual(list(r.images), [0, 0, 0]);
  assert.deepEqual(textsOf(r, 0), [doc]);
  assert.deepEqual(textsOf(r, 2), ["d1", "read", doc]);
});

test("vercel: an approval response whose request is not before it stands alone (no link, no orphan); the others pair", () => {
  // The middleware's prompt: the SDK removed the approval requests and kept the responses of
  // provider-executed tools.
  const r = read([
    { role: "user", content: [{ type: "text", text: "Deploy" }] },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "p1", toolName: "mcp_deploy", input: {}, providerExecuted: true }] },
    { role: "tool", content: [{ type: "tool-approval-response", approvalId: "ap1", approved: true, reason: "go ahead" }] },
    { role: "assistant", content: [{ type: "tool-approval-request", approvalId: "ap2", toolCallId: "c2" }] },
    { role: "tool", content: [{ type: "tool-approval-response", approvalId: "ap2", approved: false }, { type: "tool-approval-response", approvalId: "ap3", approved: true }] },
  ], "vercel");
  assert.deepEqual(allLinks(r), [
    [], [["p1", "call", 0]], [], [["approval:ap2", "call", 1]], [["approval:ap2", "result", 1]],
  ]);
  // Its reason still counts.
  assert.deepEqual(textsOf(r, 2), ["go ahead"]);
  // A request after its response does not pair with it.
  const late = read([
    { role: "tool", content: [{ type: "tool-approval-response", approvalId: "ap4", approved: true }] },
    { role: "assistant", content: [{ type: "tool-approval-request", approvalId: "ap4", toolCallId: "c4" }] },
  ], "vercel");
  assert.deepEqual(allLinks(late), [[], [["approval:ap4", "call", 0]]]);
});

test("vercel-ui v7: reasoning-file parts are images; a steering-message part's texts and files count", () => {
  const r = read([
    { id: "u", role: "user", parts: [{ type: "text", text: "Plan it" }] },
    {
      id: "a", role: "assistant", parts: [
        { type: "reasoning-file", url: `data:image/png;base64,${PNG_B64}`, mediaType: "image/png" },
        { type: "text", text: "Working." },
        {
          type: "steering-message", id: "s1", parts: [
            { type: "text", text: "also check the staging server" },
            { type: "file", url: "https://example.com/s.png", mediaType: "image/png" },
          ],
        },
      ],
    },
  ], "vercel-ui");
  assert.deepEqual(list(r.images), [0, 2]);
  assert.deepEqual(textsOf(r, 1), ["Working.", "also check the staging server"]);
});

test("gemini: responses pair by id, else by order and name; a response turn is a tool message", () => {
  const r = read([
    { role: "user", parts: [{ text: "Weather?" }, { inlineData: { mimeType: "image/png", data: "AA" } }] },
    {
      role: "model", parts: [
        { functionCall: { name: "weather", args: { city: "A" } } },
        { functionCall: { name: "weather", args: { city: "B" } } },
        { functionCall: { id: "g3", name: "time", args: {} } },
      ],
    },
    {
      role: "user", parts: [
        { functionResponse: { name: "weather", response: { t: 1 } } },
        { functionResponse: { id: "g3", name: "time", response: { t: 2 } } },
        { functionResponse: { name: "weather", response: { t: 3 } } },
      ],
    },
    { role: "model", parts: [{ text: "Sunny." }] },
  ]);
  assert.equal(r.format, "gemini");
  assert.equal(r.formatCode, 5);
  assert.deepEqual(list(r.roles), [USER, ASSISTANT, TOOL, ASSISTANT]);
  assert.deepEqual(list(r.flags), [REAL_USER, CALLS_ONLY, 0, 0]);
  assert.deepEqual(list(r.images), [1, 0, 0, 0]);
  assert.deepEqual(allLinks(r), [
    [],
    [["name:weather", "call", 0], ["name:weather", "call", 1], ["g3", "call", 2]],
    // The first weather response answers the first weather call, the second the second.
    [["name:weather", "result", 0], ["g3", "result", 2], ["name:weather", "result", 1]],
    [],
  ]);
  assert.equal(roleNameOf(r, 1), "assistant"); // "model" counts as OpenAI's role name
});

test("gemini: parallel calls answered one turn each; a response beyond its calls, or after a model turn, is an orphan", () => {
  const r = read([
    { role: "user", parts: [{ text: "Go" }] },
    { role: "model", parts: [{ functionCall: { id: "x1", name: "a", args: {} } }, { functionCall: { id: "x2", name: "b", args: {} } }] },
    { role: "user", parts: [{ functionResponse: { id: "x2", name: "b", response: {} } }] },
    { role: "user", parts: [{ functionResponse: { name: "a", response: {} } }] },
    { role: "user", parts: [{ functionResponse: { name: "a", response: {} } }] },
    { role: "model", parts: [{ text: "ok" }] },
    { role: "user", parts: [{ functionResponse: { name: "b", response: {} } }] },
  ]);
  const links = allLinks(r);
  assert.deepEqual(links[2], [["x2", "result", 1]]);
  assert.deepEqual(links[3], [["x1", "result", 0]]); // by name: the call with an id, answered without one
  assert.deepEqual(links[4], [["name:a", "result", 2]]); // a key no call has
  assert.deepEqual(links[6], [["name:b", "result", 3]]);
});

test("langchain plain objects: human/ai/tool types, tool_calls and tool_call_id", () => {
  const r = read([
    { type: "system", content: "S" },
    { type: "human", content: "Hi" },
    { type: "ai", content: "", tool_calls: [{ id: "l1", name: "search", args: { q: 1 } }] },
    { type: "tool", content: "r", tool_call_id: "l1" },
    { type: "human", content: SUMMARY_TEXT },
    { type: "ai", content: "Done" },
  ]);
  assert.equal(r.format, "langchain");
  assert.equal(r.formatCode, 6);
  assert.deepEqual(list(r.roles), [SYSTEM, USER, ASSISTANT, TOOL, USER, ASSISTANT]);
  assert.deepEqual(list(r.flags), [0, REAL_USER, CALLS_ONLY, 0, SUMMARY, 0]);
  assert.deepEqual(allLinks(r), [[], [], [["l1", "call", 0]], [["l1", "result", 0]], [], []]);
  assert.deepEqual(textsOf(r, 2), ["l1", "search", '{"q":1}']);
  assert.equal(roleNameOf(r, 1), "user"); // "human" counts as OpenAI's role name
});

test("langchain toDict form {type, data}: read as the plain form", () => {
  const r = read([
    { type: "human", data: { content: "Hi" } },
    { type: "ai", data: { content: "", tool_calls: [{ id: "l1", name: "search", args: { q: 1 } }] } },
    { type: "tool", data: { content: "r", tool_call_id: "l1" } },
  ]);
  assert.equal(r.format, "langchain");
  assert.deepEqual(list(r.roles), [USER, ASSISTANT, TOOL]);
  assert.deepEqual(list(r.flags), [REAL_USER, CALLS_ONLY, 0]);
  assert.deepEqual(allLinks(r), [[], [["l1", "call", 0]], [["l1", "result", 0]]]);
  assert.deepEqual(textsOf(r, 2), ["r", "l1"]);
});

test("langchain class instances and their JSON-serialized form read alike", () => {
  const messages = [
    new SystemMessage("S"),
    new HumanMessage({ content: [{ type: "text", text: "Hi" }, { type: "image_url", image_url: { url: "data:x" } }] }),
    new AIMessage({ content: "", tool_calls: [{ id: "k1", name: "search", args: { q: 1 } }] }),
    new ToolMessage({ content: "r", tool_call_id: "k1" }),
    new AIMessage("Done"),
  ];
  for (const input of [messages, JSON.parse(JSON.stringify(messages))]) {
    const r = read(input);
    assert.equal(r.format, "langchain");
    assert.deepEqual(list(r.roles), [SYSTEM, USER, ASSISTANT, TOOL, ASSISTANT]);
    assert.deepEqual(list(r.flags), [0, REAL_USER, CALLS_ONLY, 0, 0]);
    assert.deepEqual(list(r.images), [0, 1, 0, 0, 0]);
    assert.deepEqual(allLinks(r), [[], [], [["k1", "call", 0]], [["k1", "result", 0]], []]);
  }
});

// ---- summaries and notes --------------------------------------------------------------------

test("a summary is a message wrapped in the tag (white space around allowed), not one that only opens with it", () => {
  const r = read([
    { role: "user", content: `  ${SUMMARY_TEXT}\n` },
    { role: "user", content: `${SUMMARY_TEXT} now do y` },
    { role: "system", content: SUMMARY_TEXT },
    { role: "assistant", content: [{ type: "text", text: SUMMARY_TEXT }] },
    { role: "user", content: "<other-tag>x</other-tag>" },
  ]);
  assert.deepEqual(list(r.flags), [SUMMARY, REAL_USER, SUMMARY, SUMMARY, REAL_USER]);
});

test("a tool result holding a summary's text is no summary", () => {
  const r = read([
    { role: "assistant", content: null, tool_calls: [openaiCall("a", "f", "{}")] },
    { role: "tool", tool_call_id: "a", content: SUMMARY_TEXT },
  ]);
  assert.deepEqual(list(r.flags), [CALLS_ONLY, 0]);
});

test("a result with no call before it gets a key no call has", () => {
  const r = read([
    { role: "tool", tool_call_id: "nope", content: "r" },
    { role: "assistant", content: null, tool_calls: [openaiCall("later", "f", "{}")] },
    { role: "tool", tool_call_id: "later", content: "r" },
  ]);
  assert.deepEqual(allLinks(r), [[["nope", "result", 0]], [["later", "call", 1]], [["later", "result", 1]]]);
});
