// A stand-in model (AI SDK LanguageModelV4) for offline runs and the tests: `MODEL=stub`
// (`wrangler dev --var MODEL:stub`). No network. It hands every prompt it is sent (what the
// middleware left of it) to `record`, and answers by rule:
//   - after a tool result: a sentence saying what came back;
//   - when the latest user text asks to "reload": a `context_reload` call with the offload
//     id (ctx_ and 16 hex digits) that text names, else the first one the prompt shows (a
//     preview's);
//   - otherwise: a short acknowledgement.

const OFFLOAD_ID = /ctx_[0-9a-f]{16}/;

const textOf = (message) =>
  typeof message.content === "string"
    ? message.content
    : message.content
        .filter((part) => part.type === "text")
        .map((part) => part.text)
        .join("\n");

/** The stub's answer to `prompt`: `{ text }` or `{ call: { toolName, input } }`. */
function answer(prompt, toolNames) {
  const last = prompt.at(-1);
  if (last.role === "tool") {
    const result = last.content.find((part) => part.type === "tool-result");
    const value = result?.output?.value;
    const chars = JSON.stringify(value ?? "").length;
    const head = Array.isArray(value) ? textOf(value[0] ?? { content: "" }) : String(value ?? "");
    return { text: `${result?.toolName} answered with ${chars} characters, starting "${head.slice(0, 40)}".` };
  }
  const latestUser = [...prompt].reverse().find((m) => m.role === "user");
  const asked = latestUser ? textOf(latestUser) : "";
  if (/\breload\b/i.test(asked) && toolNames.includes("context_reload")) {
    const id = asked.match(OFFLOAD_ID)?.[0] ?? prompt.map(textOf).join("\n").match(OFFLOAD_ID)?.[0];
    if (id) return { call: { toolName: "context_reload", input: { id } } };
  }
  return {
    text:
      `Noted: "${asked.slice(0, 60)}". I will keep it in mind for the rest of this conversation, ` +
      "together with everything you sent before it, and answer from it when you ask.",
  };
}

const usage = (prompt, out) => {
  const input = Math.ceil(JSON.stringify(prompt).length / 4);
  const output = Math.ceil(JSON.stringify(out).length / 4);
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
};

/**
 * @param {{ record?: (call: { prompt: unknown[], tools: { name: string }[] }) => unknown }} [options]
 *   `record` may return a promise: the answer waits for it.
 */
export function stubModel({ record } = {}) {
  let calls = 0;
  async function run({ prompt, tools = [] }) {
    const toolNames = tools.map((t) => t.name);
    await record?.({ prompt, tools });
    calls += 1;
    return answer(prompt, toolNames);
  }
  return {
    specificationVersion: "v4",
    provider: "stub",
    modelId: "stub",
    supportedUrls: {},
    async doGenerate(options) {
      const out = await run(options);
      const content = out.call
        ? [{ type: "tool-call", toolCallId: `call_${calls}`, toolName: out.call.toolName, input: JSON.stringify(out.call.input) }]
        : [{ type: "text", text: out.text }];
      return {
        content,
        finishReason: { unified: out.call ? "tool-calls" : "stop", raw: undefined },
        usage: usage(options.prompt, out),
        warnings: [],
      };
    },
    async doStream(options) {
      const out = await run(options);
      const parts = [{ type: "stream-start", warnings: [] }];
      if (out.call) {
        parts.push({ type: "tool-call", toolCallId: `call_${calls}`, toolName: out.call.toolName, input: JSON.stringify(out.call.input) });
      } else {
        parts.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: out.text }, { type: "text-end", id: "t" });
      }
      parts.push({ type: "finish", finishReason: { unified: out.call ? "tool-calls" : "stop", raw: undefined }, usage: usage(options.prompt, out) });
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}
