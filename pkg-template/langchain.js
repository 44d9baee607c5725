// chat-history-reducer/langchain: the LangChain v1 adapters. An agent middleware
// (createMiddleware) that reduces the agent's stored messages before each model call
// ("state") or each call's messages alone ("call"), and the context_reload tool over an
// offload store. The frameworks are imported from the app's own installation (optional
// peers), the core by the package's own name so that each runtime gets its entry.
import { RemoveMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { ReduceError, estimateTokens, reduce, reloadTool, shouldReduce } from "chat-history-reducer";

const MODES = ["state", "call"];

/**
 * The adapter's own option `mode` apart, and the config the core gets: LangChain messages
 * (`format: "langchain"` unless set), checked here once rather than on the first call.
 * @param {object} config
 * @returns {{ mode: "state" | "call", options: object }}
 */
function split(config) {
  if (config === null || typeof config !== "object") {
    throw new ReduceError("INVALID_CONFIG", "contextWindowMiddleware needs a config object, such as { maxTokens: 100000 }");
  }
  const { mode = "state", ...rest } = config;
  if (!MODES.includes(mode)) {
    throw new ReduceError("INVALID_CONFIG", `mode must be "state" or "call", got ${JSON.stringify(mode)}`, undefined, "mode");
  }
  const options = { format: "langchain", ...rest };
  shouldReduce([], options);
  return { mode, options };
}

/**
 * The tokens of one model call's system message and tool schemas (as OpenAI function
 * definitions), by the package's estimator with the config's counting options.
 * @param {{ systemMessage?: unknown, systemPrompt?: string, tools?: unknown[] }} request
 * @param {object} options
 * @returns {number}
 */
function requestTokens(request, options) {
  const parts = [];
  const system = request.systemMessage !== undefined && request.systemMessage !== null ? request.systemMessage.text : request.systemPrompt;
  if (typeof system === "string" && system !== "") parts.push(system);
  for (const t of request.tools ?? []) {
    try {
      parts.push(convertToOpenAITool(t));
    } catch {
      // (A provider's built-in tool has no function schema: its definition as it is.)
      parts.push(t);
    }
  }
  if (parts.length === 0) return 0;
  const { tokenCounts, countTokens, format, ...counting } = options;
  return estimateTokens({ role: "system", content: JSON.stringify(parts) }, counting);
}

/**
 * A LangChain v1 agent middleware that keeps the conversation within the config's budget.
 *
 * - `mode: "state"` (default): `beforeModel` reduces the agent's stored messages when a
 *   trigger fires and writes the reduced list back (the state's messages replaced whole), so
 *   later turns start from it. The system prompt and tools are not in the state: reserve
 *   their tokens with `reservedTokens`.
 * - `mode: "call"`: `wrapModelCall` reduces what each model call is sent and leaves the
 *   state as it is; the call's system message and tool schemas are counted into
 *   `reservedTokens` unless the config sets it.
 *
 * With `config.store`, every offload is written there and the middleware registers
 * `contextReloadTool(store)`, so the model can fetch what a preview stands for.
 *
 * With `cacheBreakpoints`, the marks are on what each model call is sent only: in
 * `mode: "state"` the state keeps the messages themselves (a mark kept there would count
 * against the four of every later call).
 *
 * @param {import("./langchain.js").ContextWindowMiddlewareConfig} config
 */
export function contextWindowMiddleware(config) {
  const { mode, options } = split(config);
  const userReserved = options.reservedTokens !== undefined && options.reservedTokens !== null;
  const tools = options.store !== undefined && options.store !== null ? [contextReloadTool(options.store)] : [];
  if (mode === "state") {
    const marking = options.cacheBreakpoints === true;
    const stored = marking ? { ...options, cacheBreakpoints: false } : options;
    return createMiddleware({
      name: "ContextWindowMiddleware",
      tools,
      beforeModel: async (state) => {
        const result = await reduce(state.messages, stored);
        if (!result.reduced) return undefined;
        return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...result.messages] };
      },
      // (The state is below the triggers by now: this only marks what the call is sent.)
      ...(marking && {
        wrapModelCall: async (request, handler) => handler({ ...request, messages: (await reduce(request.messages, options)).messages }),
      }),
    });
  }
  return createMiddleware({
    name: "ContextWindowMiddleware",
    tools,
    wrapModelCall: async (request, handler) => {
      const reservedTokens = userReserved ? 0 : requestTokens(request, options);
      const callOptions = reservedTokens > 0 ? { ...options, reservedTokens } : options;
      const result = await reduce(request.messages, callOptions);
      // (A result marked for `cacheBreakpoints` is a change too.)
      return handler(result.reduced || result.rewritten.length > 0 ? { ...request, messages: result.messages } : request);
    },
  });
}

/**
 * A message as the model reads it back: a LangChain message's type, content, calls and
 * the call it answers (its class instance would serialize as a constructor record).
 * @param {any} m
 */
function readable(m) {
  if (m === null || typeof m !== "object" || typeof m.getType !== "function") return m;
  const out = { type: m.getType(), content: m.content };
  if (typeof m.name === "string") out.name = m.name;
  if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) out.tool_calls = m.tool_calls;
  if (typeof m.tool_call_id === "string") out.tool_call_id = m.tool_call_id;
  return out;
}

/**
 * The `context_reload` tool as a LangChain tool: the model calls it with an offload id from
 * a preview or digest and gets the originals from `store` (`store.get(id)`, sync or async;
 * a `Map` works), as JSON text. An id the store does not know is answered with a message
 * saying so.
 *
 * @param {{ get(id: string): unknown }} store
 */
export function contextReloadTool(store) {
  if (store === null || typeof store !== "object" || typeof store.get !== "function") {
    throw new ReduceError("INVALID_CONFIG", "contextReloadTool needs a store with a get(id) method, such as a Map", undefined, "store");
  }
  return tool(
    async ({ id }) => {
      const originals = typeof id === "string" ? await store.get(id.trim()) : undefined;
      if (originals === undefined || originals === null) {
        return `No offloaded content has the id ${JSON.stringify(id)}. Ids look like ctx_0123456789abcdef and are shown in the ` +
          "message that was shortened; it may also be gone from the store.";
      }
      return JSON.stringify(Array.isArray(originals) ? originals.map(readable) : readable(originals));
    },
    // (A copy: the package's definition is frozen, and schema tooling may annotate its input.)
    { name: reloadTool.name, description: reloadTool.description, schema: structuredClone(reloadTool.parameters) },
  );
}
