// The README's JavaScript examples, run against the installed package so that they never
// rot: each block runs with small stand-ins for what it leaves to the reader (the history,
// the model, storage), and must not throw.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const readme = readFileSync(new URL("./README.md", import.meta.url), "utf8");
const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

/** Rewrites the block's imports of the package into dynamic imports. */
function runnable(code) {
  return code
    .replace(/^import (\w+), \{([^}]*)\} from "chat-history-reducer";$/gm,
      'const { default: $1, $2 } = await import("chat-history-reducer");')
    .replace(/^import \{([^}]*)\} from "chat-history-reducer";$/gm,
      'const { $1 } = await import("chat-history-reducer");')
    .replace(/^export default /m, "worker = ");
}

function standIns() {
  const history = [{ role: "system", content: "Be brief." }];
  for (let t = 0; t < 40; t++) {
    history.push({ role: "user", content: `Question ${t} `.repeat(150) });
    history.push({ role: "assistant", content: `Answer ${t} `.repeat(150) });
  }
  const store = new Map();
  return {
    history,
    messages: history,
    model: "gpt-test",
    openai: { chat: { completions: { create: async () => ({ choices: [] }) } } },
    llm: { summarize: async ({ messages }) => ({ text: `summary of ${messages.length} messages` }) },
    localStorage: { setItem: (k, v) => store.set(k, v), getItem: (k) => store.get(k) },
    maxTokens: 2000,
  };
}

test("the READMEs call init and initSync with an object: a bare argument logs wasm-bindgen's deprecation warning", () => {
  const shipped = readFileSync(new URL("./node_modules/chat-history-reducer/README.md", import.meta.url), "utf8");
  for (const [name, text] of [["README.md", readme], ["the package's README.md", shipped]]) {
    const calls = [...text.matchAll(/\b(init|initSync)\(([^)]*)\)/g)];
    const bare = calls.filter(([, , arg]) => arg.trim() !== "" && !arg.trim().startsWith("{"));
    assert.deepEqual(bare.map(([call]) => call), [], name);
  }
});

test("the README has runnable examples", () => {
  assert.ok(blocks.length >= 4, `${blocks.length} js blocks`);
});

for (const [k, code] of blocks.entries()) {
  test(`README example ${k + 1} runs`, async () => {
    const s = standIns();
    // `model` is a value in some examples and a function in others.
    const modelFn = async () => ({ usage: { prompt_tokens: 500, completion_tokens: 20 }, message: { role: "assistant", content: "ok" } });
    // Its own block, so that its declarations may shadow the stand-ins.
    // A hook the example defines (beforeSend) is called too.
    const call = /function beforeSend\(/.test(code)
      ? "\nconst out = beforeSend(history);\nif (!Array.isArray(out) || out.length >= history.length) throw new Error('beforeSend did not reduce');"
      : "";
    const body = `let worker;\n{\n${runnable(code)}${call}\n}\nreturn worker;`;
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
    const uses = (name) => new RegExp(`\\b${name}\\(`).test(code);
    const names = ["history", "messages", "model", "openai", "llm", "localStorage", "maxTokens"];
    const values = names.map((n) => (n === "model" && uses("model") ? modelFn : s[n]));
    const fn = new AsyncFunction(...names, body);
    const worker = await fn(...values);
    if (worker && typeof worker.fetch === "function") {
      // The worker example: a request through it, with the model call stubbed.
      const realFetch = globalThis.fetch;
      let sent;
      globalThis.fetch = async (url, init) => { sent = JSON.parse(init.body); return new Response("{}"); };
      try {
        const request = new Request("http://127.0.0.1/chat", { method: "POST", body: JSON.stringify({ messages: s.history }) });
        await worker.fetch(request, { MODEL_URL: "http://127.0.0.1:9/model" });
      } finally {
        globalThis.fetch = realFetch;
      }
      assert.ok(Array.isArray(sent.messages) && sent.messages.length > 0, "the worker forwards a reduced history");
    }
  });
}

// The framework sections' ```ts blocks (those importing an adapter) run with the real
// frameworks: an AI SDK 5 mock model, LangChain's fakeModel(), and each block's result used.
const frameworkBlocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])
  .filter((code) => /from "chat-history-reducer\/(ai-sdk|langchain)"/.test(code));

test("the README shows one line for each framework adapter", () => {
  assert.equal(frameworkBlocks.length, 2);
});

for (const [k, code] of frameworkBlocks.entries()) {
  test(`README framework example ${k + 1} runs with the real framework`, async () => {
    const { MockLanguageModelV2 } = await import("ai/test");
    const { fakeModel } = await import("@langchain/core/testing");
    const { AIMessage, HumanMessage } = await import("@langchain/core/messages");
    const baseModel = new MockLanguageModelV2({
      doGenerate: async () => ({ content: [{ type: "text", text: "ok" }], finishReason: "stop", usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, warnings: [] }),
      doStream: async () => ({
        stream: new ReadableStream({
          start(c) {
            for (const p of [{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "ok" }, { type: "text-end", id: "t" },
              { type: "finish", finishReason: "stop", usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }]) c.enqueue(p);
            c.close();
          },
        }),
      }),
    });
    const langchain = code.includes('"chat-history-reducer/langchain"');
    // Its own block, so that its declarations may shadow the stand-ins.
    const body = "{\n" + code.replace(/^import \{([^}]*)\} from "([^"]+)";$/gm, 'const {$1} = await import("$2");') +
      "\nreturn { result: typeof result === 'undefined' ? undefined : result, agent: typeof agent === 'undefined' ? undefined : agent };\n}";
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
    const names = ["baseModel", "model", "messages", "tools"];
    const values = langchain
      ? [undefined, fakeModel().respond(new AIMessage("ok")), undefined, []]
      : [baseModel, undefined, [{ role: "user", content: "Hi" }], {}];
    const { result, agent } = await new AsyncFunction(...names, body)(...values);
    if (langchain) assert.equal((await agent.invoke({ messages: [new HumanMessage("Hi")] })).messages.at(-1).text, "ok");
    else assert.equal(await result.text, "ok");
  });
}
