// chat-history-reducer/ai-sdk: the AI SDK adapters (AI SDK 5 and 7). A middleware that
// reduces each model call's prompt, a prepareStep function for tool loops, and the
// context_reload tool over an offload store. `ai` is imported from the app's own
// installation (an optional peer), the core by the package's own name so that each runtime
// gets its entry.
import { jsonSchema, tool } from "ai";
import { ReduceError, estimateTokens, reduce, reloadTool, shouldReduce } from "chat-history-reducer";

/**
 * The config the core gets: the AI SDK's messages are the `vercel` format (the model-level
 * prompt has the same roles and parts), named so that a history of plain strings is not
 * read as another format's. The config is checked here, once, rather than on the first call.
 * @param {object} config
 * @returns {object}
 */
function coreConfig(config) {
  if (config === null || typeof config !== "object") {
    throw new ReduceError("INVALID_CONFIG", "the adapter needs a config object, such as { maxTokens: 100000 }");
  }
  const options = { format: "vercel", ...config };
  shouldReduce([], options);
  return options;
}

/**
 * The tokens of what a request sends beside its messages, `parts` (tool schemas, a JSON
 * response schema, instructions), by the package's estimator with the config's counting
 * options: one message holding their JSON.
 * @param {unknown[]} parts
 * @param {object} options
 * @returns {number}
 */
function outsideTokens(parts, options) {
  if (parts.length === 0) return 0;
  const { tokenCounts, countTokens, ...counting } = options;
  return estimateTokens({ role: "system", content: JSON.stringify(parts) }, counting);
}

/**
 * `options` with `reservedTokens` set to `counted()` unless the user set it. When the
 * counted parts alone leave no room under `maxTokens`, the error says they were counted.
 * @param {object} options
 * @param {boolean} userReserved
 * @param {() => number} counted
 */
function reserving(options, userReserved, counted) {
  if (userReserved) return options;
  const reservedTokens = counted();
  if (reservedTokens === 0) return options;
  const withReserve = { ...options, reservedTokens };
  try {
    shouldReduce([], withReserve);
  } catch (e) {
    if (e instanceof ReduceError && e.field === "reservedTokens") {
      throw new ReduceError("INVALID_CONFIG", `${e.message} (reservedTokens was counted from what the call sends beside its messages: ` +
        "the tools' schemas, instructions; set config.reservedTokens to use your own figure)", undefined, "reservedTokens");
    }
    throw e;
  }
  return withReserve;
}

/**
 * A message the reduction wrote (a summary, a note) in the model-level prompt's shape: there,
 * only a system message's content is a string; the others' are parts. (The `vercel` format
 * also allows string content, which a summary of a prompt that opens on its system message
 * gets.)
 * @param {any} m
 */
function asPromptMessage(m) {
  return m.role !== "system" && typeof m.content === "string" ? { ...m, content: [{ type: "text", text: m.content }] } : m;
}

/**
 * Whether a result differs from its input: reduced, or with `cacheBreakpoints` marked (a
 * marked message is a copy, in `rewritten`).
 * @param {{ reduced: boolean, rewritten: number[] }} result
 */
function changed(result) {
  return result.reduced || result.rewritten.length > 0;
}

/**
 * A `LanguageModelMiddleware` that reduces every call's prompt (`params.prompt`, generate
 * and stream alike) before the model sees it. System messages stay (`keepSystem`); the
 * tools' schemas and a JSON response schema are counted into `reservedTokens` unless the
 * config sets it. Offloads go to `config.store`, where `contextReloadTool(store)` finds them.
 *
 * @param {import("chat-history-reducer").ReduceConfig<any>} config
 */
export function contextWindowMiddleware(config) {
  const options = coreConfig(config);
  const userReserved = config.reservedTokens !== undefined && config.reservedTokens !== null;
  return {
    async transformParams({ params }) {
      const outside = [];
      if (Array.isArray(params.tools) && params.tools.length > 0) outside.push(params.tools);
      if (params.responseFormat && params.responseFormat.type === "json" && params.responseFormat.schema) outside.push(params.responseFormat);
      const callOptions = reserving(options, userReserved, () => outsideTokens(outside, options));
      const result = await reduce(params.prompt, callOptions);
      return changed(result) ? { ...params, prompt: result.messages.map(asPromptMessage) } : params;
    },
  };
}

/**
 * A `prepareStep` function for `generateText` / `streamText` tool loops: it returns the
 * reduced `messages` when a trigger fires, and nothing otherwise, so that the prompt prefix
 * stays the same between reductions. AI SDK 7's `instructions` are counted into
 * `reservedTokens` unless the config sets it (the tools are not handed to prepareStep: set
 * `reservedTokens` for their schemas, or use the middleware, which sees them).
 *
 * @param {import("chat-history-reducer").ReduceConfig<any>} config
 */
export function contextWindowStep(config) {
  const options = coreConfig(config);
  const userReserved = config.reservedTokens !== undefined && config.reservedTokens !== null;
  return async ({ messages, instructions }) => {
    const outside = instructions === undefined || instructions === null ? [] : [instructions];
    const stepOptions = reserving(options, userReserved, () => outsideTokens(outside, options));
    const result = await reduce(messages, stepOptions);
    return changed(result) ? { messages: result.messages } : undefined;
  };
}

/**
 * The `context_reload` tool (AI SDK `tool()`): the model calls it with an offload id from
 * a preview or digest, and gets the originals back from `store` (`store.get(id)`, sync or
 * async; a `Map` works). An id the store does not know is answered with a message saying
 * so, which the model can act on.
 *
 * @param {{ get(id: string): unknown }} store
 */
export function contextReloadTool(store) {
  if (store === null || typeof store !== "object" || typeof store.get !== "function") {
    throw new ReduceError("INVALID_CONFIG", "contextReloadTool needs a store with a get(id) method, such as a Map", undefined, "store");
  }
  return tool({
    description: reloadTool.description,
    // (A copy: the package's definition is frozen, and schema tooling may annotate its input.)
    inputSchema: jsonSchema(structuredClone(reloadTool.parameters)),
    execute: async ({ id }) => {
      const originals = typeof id === "string" ? await store.get(id.trim()) : undefined;
      if (originals === undefined || originals === null) {
        return `No offloaded content has the id ${JSON.stringify(id)}. Ids look like ctx_0123456789abcdef and are shown in the ` +
          "message that was shortened; it may also be gone from the store.";
      }
      return originals;
    },
  });
}
