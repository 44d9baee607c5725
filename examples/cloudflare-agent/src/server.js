// A Cloudflare Agents chat agent (AIChatAgent, one Durable Object per conversation) whose
// model calls stay inside the context window: chat-history-reducer's AI SDK middleware
// reduces every call's prompt, keeps what it offloads in the agent's own Durable Object
// storage, and the context_reload tool brings it back, in this request or a later one.
//
// The agent keeps every message (this.messages, in its SQLite); only the prompt is reduced.
import { createOpenAI } from "@ai-sdk/openai";
import { AIChatAgent } from "@cloudflare/ai-chat";
import { routeAgentRequest } from "agents";
import { convertToModelMessages, isStepCount, streamText, wrapLanguageModel } from "ai";
import { contextReloadTool, contextWindowMiddleware } from "chat-history-reducer/ai-sdk";
import { stubModel } from "./stub-model.js";

const PREFIX = "offload:";

/**
 * The offload store over Durable Object storage: the adapter writes with `set`, the storage
 * with `put`. Values are structured clones; a SQLite-backed object takes up to 2 MB a key.
 * @param {DurableObjectStorage} storage
 */
const offloadStore = (storage) => ({
  get: (id) => storage.get(PREFIX + id),
  set: (id, messages) => storage.put(PREFIX + id, messages),
});

export class ChatAgent extends AIChatAgent {
  async onChatMessage(_onFinish, options) {
    const store = offloadStore(this.ctx.storage);
    const model = wrapLanguageModel({
      model: this.baseModel(),
      middleware: contextWindowMiddleware({ maxTokens: Number(this.env.MAX_TOKENS ?? 100_000), strategy: "progressive", store }),
    });
    const result = streamText({
      model,
      instructions: "You are a helpful assistant. Answer briefly.",
      messages: await convertToModelMessages(this.messages),
      tools: { context_reload: contextReloadTool(store) },
      stopWhen: isStepCount(5),
      abortSignal: options?.abortSignal,
    });
    return result.toUIMessageStreamResponse();
  }

  /** The model: MODEL=stub runs offline (./stub-model.js); anything else is an OpenAI model. */
  baseModel() {
    if (this.env.MODEL === "stub") {
      // Each prompt the stub is sent is kept beside the offloads, for GET …/model-calls.
      return stubModel({
        record: async (call) => this.ctx.storage.put("stub:calls", [...((await this.ctx.storage.get("stub:calls")) ?? []), call]),
      });
    }
    return createOpenAI({ apiKey: this.env.OPENAI_API_KEY })(this.env.MODEL ?? "gpt-4o-mini");
  }

  /**
   * HTTP beside the chat WebSocket (AIChatAgent answers …/get-messages itself):
   * GET /agents/chat-agent/<name>/offloads lists what this conversation offloaded, by id;
   * with the stub model, …/model-calls the prompts it was sent.
   */
  async onRequest(request) {
    const path = new URL(request.url).pathname;
    if (path.endsWith("/offloads")) {
      const entries = await this.ctx.storage.list({ prefix: PREFIX });
      return Response.json(Object.fromEntries([...entries].map(([key, value]) => [key.slice(PREFIX.length), value])));
    }
    if (path.endsWith("/model-calls") && this.env.MODEL === "stub") {
      return Response.json((await this.ctx.storage.get("stub:calls")) ?? []);
    }
    return super.onRequest(request);
  }
}

export default {
  async fetch(request, env) {
    // /agents/chat-agent/<name>: the agent named <name> of the ChatAgent binding (WebSocket or HTTP)
    return (await routeAgentRequest(request, env)) ?? new Response("Not found", { status: 404 });
  },
};
