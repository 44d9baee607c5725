// Payloads (tool arguments, results, provider items) count as what they hold, in every
// format and with either estimator.
import { test } from "node:test";
import assert from "node:assert/strict";
import { reduceSync, analyze, estimateTokens, ReduceError } from "chat-history-reducer";
import { HumanMessage, AIMessage, ToolMessage } from "@langchain/core/messages";
import { rng } from "./random.mjs";
import { build } from "./conversations.mjs";

function randomPayload(rand, depth = 0) {
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const str = () => {
    const pieces = ["plain", 'q"uote', "back\\slash", "line\nbreak", "tab\t", "\u0001ctl", "\b\f\r", "é", "漢字",
      "😀", "\ud800", "\udc00x", "\u2028", "", " ", "\ud83d\ude00\ud83d"];
    let s = "";
    for (let k = Math.floor(rand() * 5); k > 0; k--) s += pick(pieces);
    return s;
  };
  const r = rand();
  if (depth > 4 || r < 0.3) return str();
  if (r < 0.45) return pick([0, -0, 1, -17, 0.1, 1e21, 1.5e-7, 123456789.125, NaN, Infinity, -Infinity]);
  if (r < 0.5) return pick([true, false, null]);
  if (r < 0.75) {
    const a = Array.from({ length: Math.floor(rand() * 4) }, () => (rand() < 0.1 ? pick([undefined, () => 1, Symbol("s")]) : randomPayload(rand, depth + 1)));
    if (rand() < 0.1) a.length += 2; // holes
    return a;
  }
  const o = rand() < 0.1 ? Object.create(null) : {};
  for (let k = Math.floor(rand() * 4); k > 0; k--) o[pick(["a", "key", 'k"q', "k\\b", "ключ", "🔑", "1", ""])] = rand() < 0.1 ? pick([undefined, () => 1]) : randomPayload(rand, depth + 1);
  return o;
}

/** One tool round in each format whose tool payloads may be objects, with payload `p`. */
const withPayload = {
  openai: (p) => [{ role: "user", content: "go" },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: p } }] },
    { role: "tool", tool_call_id: "c1", content: "done" }],
  anthropic: (p) => [{ role: "user", content: "go" },
    { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "f", input: p }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: [p, { type: "text", text: "t" }] }] }],
  vercel: (p) => [{ role: "user", content: "go" },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "f", input: p }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "f", output: { type: "json", value: p } }] }],
  gemini: (p) => [{ role: "user", parts: [{ text: "go" }] },
    { role: "model", parts: [{ functionCall: { name: "f", args: p } }] },
    { role: "user", parts: [{ functionResponse: { name: "f", response: p } }] }],
  langchain: (p) => [new HumanMessage("go"),
    new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "f", args: p }] }),
    new ToolMessage({ tool_call_id: "c1", content: "done" })],
};

test("a payload object counts exactly as its JSON text, in every format and estimator", () => {
  // Plain data is measured without writing its JSON out (length mode) and written out only
  // when estimated (the default estimator): both must count what JSON.stringify writes.
  const rand = rng(Number(process.env.PROPERTY_SEED ?? 5));
  const configs = [{ estimator: "length", charsPerToken: 1 }, { estimator: "length", charsPerToken: 3 }, {}];
  let compared = 0;
  for (let k = 0; k < 300; k++) {
    const payload = randomPayload(rand);
    if (payload === null || typeof payload !== "object") continue;
    const json = JSON.stringify(payload);
    for (const [format, build] of Object.entries(withPayload)) {
      // (An array in a tool result's output is a list of parts, each counted on its own.)
      if (format === "vercel" && Array.isArray(payload)) continue;
      for (const config of configs) {
        const asObject = estimateTokens(build(payload), { ...config, format });
        const asText = estimateTokens(build(json), { ...config, format });
        assert.equal(asObject, asText, `${format} ${JSON.stringify(config)}: ${json}`);
        compared++;
      }
    }
  }
  assert.ok(compared > 1000);
});

test("payloads that are not plain data count as JSON.stringify writes them, or fail as it does", () => {
  class Point { constructor() { this.x = 1; } }
  let deep = { leaf: "x" };
  for (let k = 0; k < 100; k++) deep = { deep };
  const odd = [new Date(0), new Point(), new Map([[1, 2]]), { toJSON: () => "custom" }, deep, [deep], Object.assign([1], { extra: 2 })];
  for (const payload of odd) {
    for (const config of [{ estimator: "length", charsPerToken: 1 }, {}]) {
      assert.equal(estimateTokens(withPayload.gemini(payload), config), estimateTokens(withPayload.gemini(JSON.stringify(payload)), config));
    }
  }
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  const throws = { toJSON() { throw new Error("no JSON"); } };
  for (const payload of [cyclic, { n: 1n }, [1, 2n], { nested: [throws] }]) {
    for (const config of [{ estimator: "length" }, {}, { countTokens: () => 1 }]) {
      assert.throws(() => reduceSync(withPayload.gemini(payload), { maxTokens: 10_000, ...config }),
        (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGE" && e.index === 1, JSON.stringify(Object.keys(config)));
    }
    // Also in an old message that a truncation would not estimate; the module goes on.
    const long = [...withPayload.gemini(payload), ...Array.from({ length: 200 }, (_, k) => withPayload.gemini({ k })).flat()];
    assert.throws(() => reduceSync(long, { maxTokens: 100 }), (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGE" && e.index === 1);
    assert.equal(reduceSync(long.slice(3), { maxTokens: 100 }).reduced, true);
  }
});

test("a long history's payloads left unestimated by a truncation count in tokensBefore as their JSON, with either estimator", () => {
  const rand = rng(9);
  const build = (text) => {
    const m = [];
    for (let t = 0; t < 300; t++) {
      const p = { turn: t, rows: Array.from({ length: 5 }, () => randomPayload(rand)) };
      m.push(...withPayload.gemini(text ? JSON.stringify(p) : p));
    }
    return m;
  };
  const objects = build(false);
  const texts = JSON.parse(JSON.stringify(objects)).map((m, i) => {
    const p = m.parts[0];
    if (p.functionCall) p.functionCall.args = JSON.stringify(objects[i].parts[0].functionCall.args);
    if (p.functionResponse) p.functionResponse.response = JSON.stringify(objects[i].parts[0].functionResponse.response);
    return m;
  });
  // With either estimator the oldest payloads are written out only when tokensBefore is
  // read (it is a getter then); "length" sums every other text as it is read.
  for (const config of [{}, { estimator: "length", charsPerToken: 3 }]) {
    const total = estimateTokens(texts, config);
    assert.equal(estimateTokens(objects, config), total);
    const r = reduceSync(objects.map((m) => ({ ...m })), { ...config, maxTokens: Math.floor(total / 8) });
    assert.ok(r.reduced);
    assert.equal(typeof Object.getOwnPropertyDescriptor(r, "tokensBefore").get, "function", JSON.stringify(config));
    assert.equal(r.tokensBefore, total, JSON.stringify(config));
    assert.equal(reduceSync(objects, { ...config, maxTokens: Math.floor(total / 8) }).tokensBefore, total);
  }
});

test("payload shapes of current APIs count what they hold", () => {
  const big = "word ".repeat(2000); // ~2,000 tokens of text
  const text = estimateTokens({ role: "user", content: big });
  const near = (n, want, what) => assert.ok(Math.abs(n - want) < 40, `${what}: ${n}, expected about ${want}`);
  // OpenAI custom (freeform) tool calls: { type: "custom", custom: { name, input } }.
  const custom = [
    { role: "user", content: "patch it" },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "custom", custom: { name: "apply_patch", input: big } }] },
    { role: "tool", tool_call_id: "c1", content: "done" },
  ];
  near(estimateTokens(custom[1]), text, "a custom tool call's input");
  assert.deepEqual(analyze(custom).messages.map((m) => m.group), [0, 1, 1], "the call and its result are one group");
  // AI SDK v5 tool output of content parts: the media part is an image, not its base64.
  const media = {
    role: "tool", content: [{
      type: "tool-result", toolCallId: "t1", toolName: "screenshot",
      output: { type: "content", value: [{ type: "text", text: "here" }, { type: "media", data: "A".repeat(40_000), mediaType: "image/png" }] },
    }],
  };
  near(estimateTokens(media, { format: "vercel" }), 1000, "a media part");
  assert.equal(estimateTokens(media, { format: "vercel", imageTokens: 0 }) < 30, true);
  // Responses computer_call_output: the screenshot is one image.
  const shot = { type: "computer_call_output", call_id: "cc", output: { type: "computer_screenshot", image_url: `data:image/png;base64,${"A".repeat(40_000)}` } };
  near(estimateTokens(shot, { format: "openai-responses" }), 1000, "a computer_screenshot");
  // A JSON result whose own `type` merely mentions a file is still its JSON text.
  const result = { type: "file_list", files: Array.from({ length: 200 }, (_, k) => `src/file${k}.rs`) };
  const vercelJson = { role: "tool", content: [{ type: "tool-result", toolCallId: "x", toolName: "ls", output: { type: "json", value: result } }] };
  assert.ok(estimateTokens(vercelJson, { format: "vercel", imageTokens: 0 }) > 500, "counted as text");
  // A JSON result that is an array of objects with types of their own is its JSON text too.
  const posts = Array.from({ length: 50 }, (_, k) => ({ type: k % 2 ? "social_media_post" : "file", text: `post ${k}` }));
  for (const output of [{ type: "json", value: posts }, posts]) {
    const m = { role: "tool", content: [{ type: "tool-result", toolCallId: "p", toolName: "feed", output }] };
    assert.equal(estimateTokens(m, { format: "vercel" }), estimateTokens(m, { format: "vercel", imageTokens: 0 }), "no images");
  }
  const single = { role: "tool", tool_call_id: "x", content: JSON.stringify({ type: "image", url: "https://example.com/a.png" }) };
  assert.ok(estimateTokens(single) < 40);
  // Anthropic MCP blocks: detected as Anthropic, linked, counted.
  const mcp = [
    { role: "user", content: "look it up" },
    { role: "assistant", content: [
      { type: "mcp_tool_use", id: "m1", name: "search", server_name: "docs", input: { q: "x" } },
      { type: "mcp_tool_result", tool_use_id: "m1", is_error: false, content: [{ type: "text", text: big }] },
      { type: "text", text: "found it" },
    ] },
  ];
  const a = analyze(mcp);
  assert.equal(a.format, "anthropic");
  near(a.messages[1].tokens, text, "an mcp_tool_result");
});
