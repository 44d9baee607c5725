// A Cloudflare-style chat worker: each conversation lives in a Durable Object that keeps a
// ChatHistory, reduces it before every model call (summarizing the oldest turns with the
// same model) and stores it as plain JSON, so it survives the object being evicted.
//
//   POST /chat/:id        {"message": {"role": "user", "content": "..."}}
//     → {reply, messages (the reduced history the model saw), tokens, budget, reduced, stats, ...}
//   GET  /chat/:id        the stored state of the conversation
//   POST /chat/:id/evict  drops the in-memory copy, as the runtime does with an idle object;
//                         the next request restores it from storage
//   GET  /health
//
// Bindings: CONVERSATIONS (the Durable Object namespace), MODEL_URL (an OpenAI-compatible
// chat completions endpoint), optional MODEL, MODEL_API_KEY, MAX_TOKENS, KEEP_LAST.
import { DurableObject } from "cloudflare:workers";
import { ChatHistory, estimateTokens, ReduceError } from "chat-history-reducer";

const SYSTEM_PROMPT = "You are a helpful assistant. Answer briefly.";
const SUMMARY_PROMPT =
  "Summarize the conversation below for the assistant's own memory: the user's goals, facts " +
  "learned, decisions and open questions. Be brief.";

const json = (body, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });

/** One line per message, for the summarizer's prompt. */
function transcript(messages) {
  return messages
    .map((m) => {
      const text = typeof m.content === "string" ? m.content : m.content == null ? "" : JSON.stringify(m.content);
      const calls = (m.tool_calls ?? []).map((c) => ` [calls ${c.function?.name}(${c.function?.arguments})]`).join("");
      return `${m.role}: ${text}${calls}`;
    })
    .join("\n");
}

export class Conversation extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.history = null;
    this.queue = Promise.resolve();
    this.config = {
      strategy: "summarize",
      maxTokens: Number(env.MAX_TOKENS ?? 2000),
      keepLast: Number(env.KEEP_LAST ?? 2),
      summarizer: (request) => this.summarize(request),
      onSummarizerError: "fallback", // a failing summary call falls back to truncation
      timeoutMs: 20_000,
    };
  }

  async callModel(messages, maxTokens) {
    const response = await fetch(this.env.MODEL_URL, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(this.env.MODEL_API_KEY ? { authorization: `Bearer ${this.env.MODEL_API_KEY}` } : {}),
      },
      body: JSON.stringify({ model: this.env.MODEL ?? "stub-model", messages, ...(maxTokens ? { max_tokens: maxTokens } : {}) }),
    });
    if (!response.ok) throw new Error(`model answered ${response.status}: ${await response.text()}`);
    const body = await response.json();
    return { message: body.choices[0].message, usage: body.usage };
  }

  /** The summarizer ChatHistory calls when the history outgrows its budget. */
  async summarize({ messages, previousSummary, targetTokens }) {
    const prompt = previousSummary ? `Summary so far:\n${previousSummary}\n\nNew messages:\n${transcript(messages)}` : transcript(messages);
    const { message, usage } = await this.callModel(
      [{ role: "system", content: SUMMARY_PROMPT }, { role: "user", content: prompt }],
      targetTokens,
    );
    return { text: message.content, usage: usage && { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens } };
  }

  async load() {
    if (!this.history) {
      const state = await this.ctx.storage.get("history");
      this.history = state
        ? ChatHistory.fromJSON(state, this.config)
        : new ChatHistory(this.config, [{ role: "system", content: SYSTEM_PROMPT }]);
      this.restoredFromStorage = Boolean(state);
    }
    return this.history;
  }

  async save() {
    await this.ctx.storage.put("history", this.history.toJSON());
  }

  /** One turn: push the user's message, reduce, call the model, keep its reply. */
  chat(message) {
    // turns of one conversation run one after the other, never interleaved
    const turn = this.queue.then(() => this.turn(message));
    this.queue = turn.catch(() => {});
    return turn;
  }

  async turn(message) {
    try {
      estimateTokens(message); // validates the message before it is stored
    } catch (e) {
      // errors crossing RPC keep only their message: hand the code over as a value
      if (e instanceof ReduceError) return { error: e.message, code: e.code };
      throw e;
    }
    const history = await this.load();
    const restored = this.restoredFromStorage;
    this.restoredFromStorage = false;
    const reductionsBefore = history.stats().reductions;
    let messages;
    let reply;
    try {
      history.push(message);
      messages = await history.prepare();
      const answer = await this.callModel(messages);
      reply = answer.message;
      if (answer.usage) history.recordUsage({ inputTokens: answer.usage.prompt_tokens, outputTokens: answer.usage.completion_tokens });
      history.push(reply);
      await this.save();
    } catch (e) {
      // the turn failed (e.g. the model is down): forget it, the stored state is the last good one
      this.history = null;
      throw e;
    }
    const stats = history.stats();
    return {
      reply,
      messages,
      tokens: estimateTokens(messages),
      budget: { maxTokens: this.config.maxTokens, targetTokens: Math.floor(0.8 * this.config.maxTokens) },
      reduced: stats.reductions > reductionsBefore,
      restoredFromStorage: restored,
      originalCount: history.original.length,
      stats,
      events: history.events,
    };
  }

  async state() {
    const history = await this.load();
    return { ...history.toJSON(), stats: history.stats() };
  }

  evict() {
    this.history = null;
    return { evicted: true };
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/health") return json({ ok: true });
    const match = url.pathname.match(/^\/chat\/([\w-]{1,64})(\/evict)?$/);
    if (!match) return json({ error: "not found" }, 404);
    const conversation = env.CONVERSATIONS.get(env.CONVERSATIONS.idFromName(match[1]));
    try {
      if (match[2]) {
        if (request.method !== "POST") return json({ error: "use POST" }, 405);
        return json(await conversation.evict());
      }
      if (request.method === "GET") return json(await conversation.state());
      if (request.method !== "POST") return json({ error: "use GET or POST" }, 405);
      let body;
      try {
        body = await request.json();
      } catch {
        return json({ error: "the body must be JSON: {\"message\": {\"role\": \"user\", \"content\": \"...\"}}" }, 400);
      }
      if (!body || typeof body.message !== "object" || body.message === null) {
        return json({ error: "expected {\"message\": {...}}" }, 400);
      }
      const result = await conversation.chat(body.message);
      return json(result, result.error ? 400 : 200);
    } catch (e) {
      return json({ error: String(e?.message ?? e) }, 502);
    }
  },
};
