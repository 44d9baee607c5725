// SPEC §9.11: no input, however malformed, traps the WebAssembly module or leaves it
// unusable. Thousands of random values, odd objects and random configs go to every exported
// function; each call must return or throw ReduceError, and a normal call must still work.
import { test } from "node:test";
import assert from "node:assert/strict";
import { reduce, reduceSync, shouldReduce, estimateTokens, analyze, ChatHistory, ReduceError } from "chat-history-reducer";
import { rng } from "./random.mjs";

const CALLS = Number(process.env.FUZZ_CALLS ?? 12000);

function makeGen(seed) {
  const rand = rng(seed);
  const int = (n) => Math.floor(rand() * n);
  const pick = (xs) => xs[int(xs.length)];
  const HUGE = "x".repeat(200_000) + "漢字😀".repeat(20_000);
  const strings = ["", "user", "assistant", "system", "tool", "model", "human", "ai", "developer", "function",
    "text", "tool_use", "tool_result", "tool-call", "tool-result", "function_call", "function_call_output",
    "reasoning", "message", "image_url", "__proto__", "constructor", "toString", "hasOwnProperty",
    "<conversation-summary>old</conversation-summary>", "\u0000", "\ud800", "a".repeat(1000), "😀🏳️‍🌈", "ひらがな"];
  const numbers = [0, -0, 1, -1, 0.5, 2 ** 31, 2 ** 32, 2 ** 53, -(2 ** 53), 1e308, -1e308, NaN, Infinity, -Infinity, 5, 100, 1000];

  function odd(depth) {
    switch (int(13)) {
      case 0: return Object.defineProperty({}, pick(["role", "content", "type", "parts", "tool_calls", "id"]), { get() { throw new Error("getter"); }, enumerable: true });
      case 1: { const o = { role: "user", content: "loop" }; o.self = o; o.tool_calls = [o]; o.content = [o]; return o; }
      case 2: return JSON.parse(`{"__proto__": {"role": "user"}, "content": "proto"}`);
      case 3: return Symbol("s");
      case 4: return BigInt(int(1000));
      case 5: { const a = []; a[int(50) + 1] = { role: "user", content: "sparse" }; return a; }
      case 6: return HUGE;
      case 7: return new Proxy({}, { get() { throw new Error("proxy get"); }, has() { throw new Error("proxy has"); }, ownKeys() { throw new Error("proxy keys"); } });
      case 8: return () => 1;
      case 9: return new Date(0);
      case 10: return Object.create(null);
      case 11: return new Uint8Array(4);
      default: return value(depth + 1);
    }
  }

  function value(depth = 0) {
    const r = int(depth > 3 ? 4 : 10);
    switch (r) {
      case 0: return pick(strings);
      case 1: return pick(numbers);
      case 2: return pick([null, undefined, true, false]);
      case 3: return pick(strings);
      case 4: return Array.from({ length: int(4) }, () => value(depth + 1));
      case 5: return message(depth + 1);
      case 6: return odd(depth);
      default: {
        const o = {};
        for (let k = 0; k < int(4); k++) o[pick(strings)] = value(depth + 1);
        return o;
      }
    }
  }

  /** Something close to a real message of some format, with random damage. */
  function message(depth = 0, form = int(11)) {
    const forms = [
      () => ({ role: pick(["user", "assistant", "system", "tool", "developer"]), content: pick(["hi", null, [], [{ type: "text", text: "t" }], value(depth)]) }),
      () => ({ role: "assistant", content: null, tool_calls: [{ id: pick(["a", "b", 1, null]), type: "function", function: { name: "f", arguments: pick(["{}", value(depth)]) } }] }),
      () => ({ role: "tool", tool_call_id: pick(["a", "b", undefined, 7]), content: value(depth) }),
      () => ({ role: pick(["user", "assistant"]), content: [{ type: pick(["tool_use", "tool_result", "text", "image", "thinking"]), id: "a", tool_use_id: "a", input: value(depth), content: value(depth), text: "x" }] }),
      () => ({ role: pick(["user", "model"]), parts: [pick([{ text: "x" }, { functionCall: { name: "f", args: value(depth) } }, { functionResponse: { name: "f", response: value(depth) } }, { inlineData: {} }])] }),
      () => ({ type: pick(["message", "reasoning", "function_call", "function_call_output", "mcp_approval_request"]), role: "user", call_id: pick(["a", "b"]), content: [{ type: "input_text", text: "x" }], output: value(depth) }),
      () => ({ id: "u", role: pick(["user", "assistant"]), parts: [{ type: pick(["text", "tool-x", "dynamic-tool", "file", "data-y"]), text: "x", input: value(depth), output: value(depth) }] }),
      () => ({ type: pick(["human", "ai", "tool", "system", "generic"]), content: value(depth), tool_calls: pick([undefined, [{ id: "a", name: "f", args: {} }]]), tool_call_id: "a" }),
      () => ({ getType: pick([() => "human", () => "ai", () => { throw new Error("getType"); }, () => 5]), content: "lc" }),
      () => ({ role: "user", content: [{ type: "tool-call", toolCallId: "a" }, { type: "tool-approval-request", approvalId: pick(["p", undefined]) }] }),
      () => value(depth),
    ];
    return forms[form % forms.length]();
  }

  /** Clean messages of one format: a user turn and an answer, again and again. */
  const clean = [
    (t) => [{ role: "user", content: `q${t}` }, { role: "assistant", content: `a${t}`.repeat(t + 1) }],
    (t) => [{ role: "user", content: [{ type: "text", text: `q${t}` }] }, { role: "assistant", content: [{ type: "tool_use", id: `c${t}`, name: "f", input: {} }] }, { role: "user", content: [{ type: "tool_result", tool_use_id: `c${t}`, content: "r" }] }],
    (t) => [{ role: "user", parts: [{ text: `q${t}` }] }, { role: "model", parts: [{ text: `a${t}` }] }],
    (t) => [{ type: "human", content: `q${t}` }, { type: "ai", content: "", tool_calls: [{ id: `c${t}`, name: "f", args: {} }] }, { type: "tool", tool_call_id: `c${t}`, content: "r" }],
  ];

  function messages() {
    if (rand() < 0.05) return value();
    const n = int(12);
    if (rand() < 0.6) {
      const make = pick(clean);
      const list = Array.from({ length: n }, (_, t) => make(t)).flat();
      if (rand() < 0.4 && list.length) list[int(list.length)] = rand() < 0.5 ? message() : value();
      return list;
    }
    const form = rand() < 0.5 ? int(11) : undefined;
    const list = Array.from({ length: n }, () => message(0, form ?? int(11)));
    if (rand() < 0.05) list.length = n + int(5); // holes
    return list;
  }

  function config() {
    if (rand() < 0.1) return value();
    const keys = ["strategy", "format", "maxTokens", "targetTokens", "targetMessages", "thresholdMessages", "keepSystem",
      "keepLast", "startOn", "keepRecentPairs", "tokenCounts", "estimator", "estimatorWeights", "charsPerToken",
      "messageOverhead", "imageTokens", "summaryTag", "summaryMode", "onOverBudget", "previewChars", "currentRoundRatio", "signal"];
    const good = {
      strategy: () => pick(["truncate", "priority", "summarize", "progressive", "nope"]),
      format: () => pick(["auto", "openai", "anthropic", "gemini", "vercel", "vercel-ui", "langchain", "openai-responses", "x"]),
      maxTokens: () => pick([10, 100, 1000, 5000, 1, 0, -1, NaN]),
      targetMessages: () => pick([0, 1, 2, 5, 2 ** 32 - 1, 1.5]),
      estimator: () => pick(["classes", "length", "x"]),
      estimatorWeights: () => pick([{ letter: 0.2 }, { nope: 1 }, { digit: -1 }, { emoji: "x" }, value()]),
      tokenCounts: () => pick([[1, 2, 3], [NaN, -1, 1e9], [null, 5], []]),
      targetTokens: () => pick([5, 50, 800]),
      thresholdMessages: () => int(6),
      keepSystem: () => rand() < 0.5,
      keepLast: () => int(4),
      startOn: () => pick(["user", "any"]),
      keepRecentPairs: () => int(3),
      charsPerToken: () => pick([1, 3.5, 4]),
      messageOverhead: () => int(5),
      imageTokens: () => pick([0, 85, 1000]),
      summaryTag: () => pick(["summary", "conversation-summary", "bad tag"]),
      summaryMode: () => pick(["single", "layered"]),
      onOverBudget: () => pick(["bestEffort", "error"]),
      previewChars: () => pick([0, 50, 200]),
      currentRoundRatio: () => pick([0, 0.3, 1]),
      signal: () => undefined,
    };
    const c = {};
    const damaged = rand() < 0.25;
    for (let k = 0; k < int(5); k++) {
      const key = pick(keys);
      c[key] = damaged && rand() < 0.5 ? value() : good[key]();
    }
    if (rand() < 0.8) c.maxTokens = pick([10, 100, 300, 1000, 5000]);
    else if (rand() < 0.5) c.targetMessages = int(8);
    return c;
  }

  return { messages, config, rand };
}

const SYNC = { reduceSync, shouldReduce, estimateTokens, analyze };

function isTrap(e) {
  return e instanceof WebAssembly.RuntimeError || /unreachable|RuntimeError|memory access out of bounds/i.test(String(e && e.message));
}

test(`${CALLS} random calls: each returns or throws ReduceError, none traps`, async () => {
  const gen = makeGen(Number(process.env.FUZZ_SEED ?? 20261121));
  let returned = 0, rejected = 0;
  const codes = new Map();
  const names = Object.keys(SYNC);
  for (let k = 0; k < CALLS; k++) {
    const name = k % 10 === 9 ? "reduce" : names[k % names.length];
    const messages = gen.messages();
    const config = gen.config();
    try {
      if (name === "reduce") await reduce(messages, config);
      else SYNC[name](messages, config);
      returned++;
    } catch (e) {
      assert.ok(!isTrap(e), `call ${k} (${name}) trapped: ${e && e.stack}`);
      assert.ok(e instanceof ReduceError, `call ${k} (${name}) threw a ${e && e.constructor && e.constructor.name}: ${e && e.message}`);
      assert.equal(typeof e.code, "string");
      codes.set(e.code, (codes.get(e.code) ?? 0) + 1);
      rejected++;
    }
  }
  assert.equal(returned + rejected, CALLS);
  assert.ok(returned > CALLS / 5, `enough calls succeed to reach the core (${returned})`);
  assert.ok(codes.get("INVALID_MESSAGE") > 0 && codes.get("INVALID_CONFIG") > 0 && codes.get("INVALID_MESSAGES") > 0,
    `every input error code is reached: ${JSON.stringify([...codes])}`);
  console.log(`fuzz: ${CALLS} calls, ${returned} returned, ${rejected} ReduceError ${JSON.stringify(Object.fromEntries(codes))}`);

  // The module still works, with the same answer as before the storm.
  const history = [{ role: "system", content: "s" }];
  for (let t = 0; t < 30; t++) history.push({ role: "user", content: `q${t} `.repeat(20) }, { role: "assistant", content: `a${t} `.repeat(20) });
  const r = reduceSync(history, { maxTokens: 300 });
  assert.equal(r.reduced, true);
  assert.ok(r.tokensAfter <= 240);
  assert.equal(r.messages[0], history[0]);
  assert.equal(r.messages[1].role, "user");
});

test("arrays and configs that misbehave while being read", () => {
  const trap = new Proxy([{ role: "user", content: "a" }], { get(t, k) { if (k === "0") throw new Error("boom"); return Reflect.get(t, k); } });
  assert.throws(() => reduceSync(trap, { maxTokens: 5 }), (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGES");
  // ChatHistory's starting messages are read as reduceSync reads its input.
  const throwingLength = new Proxy([], { get(t, k) { if (k === "length") throw new Error("length boom"); return Reflect.get(t, k); } });
  for (const messages of [trap, throwingLength]) {
    assert.throws(() => new ChatHistory({ maxTokens: 5 }, messages),
      (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGES" && /^new ChatHistory: messages could not be read: .*boom/.test(e.message));
  }
  // A revoked proxy throws even when asked whether it is an array.
  const revoked = Proxy.revocable([], {});
  revoked.revoke();
  assert.throws(() => reduceSync(revoked.proxy, { maxTokens: 5 }), (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGES");
  assert.throws(() => new ChatHistory({ maxTokens: 5 }, revoked.proxy), (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGES");
  const source = new Proxy([{ role: "user", content: "a" }], {});
  const history = new ChatHistory({ maxTokens: 5 }, source);
  source.push({ role: "assistant", content: "b" });
  assert.equal(history.messages.length, 1, "a copy of the array it was given");
  const huge = [];
  huge.length = 2 ** 32 - 1;
  assert.throws(() => analyze(huge), (e) => e instanceof ReduceError && e.code === "INVALID_MESSAGES");
  const flaky = { get maxTokens() { throw new Error("nope"); } };
  assert.throws(() => reduceSync([{ role: "user", content: "a" }], flaky), (e) => e.code === "INVALID_CONFIG" && e.field === "maxTokens");
  // Options are all read at once, but reported in the order they are checked.
  const both = { strategy: "bogus", get maxTokens() { throw new Error("nope"); } };
  assert.throws(() => reduceSync([{ role: "user", content: "a" }], both), (e) => e.code === "INVALID_CONFIG" && e.field === "strategy");
  const later = { get maxTokens() { throw new Error("nope"); }, onOverBudget: "never" };
  assert.throws(() => reduceSync([{ role: "user", content: "a" }], later), (e) => e.code === "INVALID_CONFIG" && e.field === "maxTokens");
  let reads = 0;
  const changing = { maxTokens: 10, get countTokens() { reads++; return reads === 1 ? () => 1 : 5; } };
  assert.equal(estimateTokens([{ role: "user", content: "a" }], changing), 1, "each option is read once");
  const ownError = new Error("mine");
  assert.throws(() => estimateTokens([{ role: "user", content: "a" }], { countTokens: () => { throw ownError; } }), (e) => e === ownError,
    "an exception from the user's own callback reaches the caller unchanged");
});
