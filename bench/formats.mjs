// The benchmarks' OpenAI conversations (generate.mjs) in the other formats of SPEC §2, as
// each provider's API or SDK writes them: the same texts, calls and results. Converted
// once, outside any timing (run.mjs), or once per session (cost.mjs).
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";

/** OpenAI → LangChain.js messages (done once, outside the timings). */
export function toLangChain(messages) {
  return messages.map((m) => {
    switch (m.role) {
      case "system": return new SystemMessage(m.content);
      case "user": return new HumanMessage(m.content);
      case "tool": return new ToolMessage({ content: m.content, tool_call_id: m.tool_call_id });
      default: return new AIMessage({
        content: m.content ?? "",
        tool_calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments), type: "tool_call" })),
        // As LangChain's OpenAI adapter keeps them: the raw calls, arguments as text.
        additional_kwargs: m.tool_calls ? { tool_calls: m.tool_calls } : {},
      });
    }
  });
}

/** OpenAI → AI SDK `ModelMessage` (done once, outside the timings). */
export function toModelMessages(messages) {
  const names = new Map();
  return messages.map((m) => {
    switch (m.role) {
      case "system": return { role: "system", content: m.content };
      case "user": return { role: "user", content: m.content };
      case "tool": return {
        role: "tool",
        content: [{ type: "tool-result", toolCallId: m.tool_call_id, toolName: names.get(m.tool_call_id), output: { type: "text", value: m.content } }],
      };
      default: {
        if (!m.tool_calls) return { role: "assistant", content: m.content ?? "" };
        const parts = m.content ? [{ type: "text", text: m.content }] : [];
        for (const c of m.tool_calls) {
          names.set(c.id, c.function.name);
          parts.push({ type: "tool-call", toolCallId: c.id, toolName: c.function.name, input: JSON.parse(c.function.arguments) });
        }
        return { role: "assistant", content: parts };
      }
    }
  });
}
/** The OpenAI conversation in another format of SPEC §2 (done once, outside the timings):
 * the same texts, calls and results, as that provider's API or SDK writes them. */
export function toFormat(messages, format) {
  const names = new Map();
  for (const m of messages) for (const c of m.tool_calls ?? []) names.set(c.id, c.function.name);
  const args = (c) => JSON.parse(c.function.arguments);
  switch (format) {
    case "openai": return messages;
    case "vercel": return toModelMessages(messages);
    case "langchain": return toLangChain(messages);
    case "openai-responses": return messages.flatMap((m) => {
      if (m.role === "tool") return [{ type: "function_call_output", call_id: m.tool_call_id, output: m.content }];
      if (m.role !== "assistant") return [{ type: "message", role: m.role, content: [{ type: "input_text", text: m.content }] }];
      const items = m.content ? [{ type: "message", role: "assistant", content: [{ type: "output_text", text: m.content }] }] : [];
      for (const c of m.tool_calls ?? []) items.push({ type: "function_call", call_id: c.id, name: c.function.name, arguments: c.function.arguments });
      return items;
    });
    case "anthropic": {
      const out = [];
      for (const m of messages) {
        if (m.role === "tool") {
          const block = { type: "tool_result", tool_use_id: m.tool_call_id, content: m.content };
          const last = out[out.length - 1];
          if (last.role === "user" && Array.isArray(last.content) && last.content.every((b) => b.type === "tool_result")) last.content.push(block);
          else out.push({ role: "user", content: [block] });
        } else if (m.role === "assistant" && m.tool_calls) {
          const blocks = m.content ? [{ type: "text", text: m.content }] : [];
          for (const c of m.tool_calls) blocks.push({ type: "tool_use", id: c.id, name: c.function.name, input: args(c) });
          out.push({ role: "assistant", content: blocks });
        } else out.push({ role: m.role, content: m.content ?? "" });
      }
      return out;
    }
    case "gemini": return messages.filter((m) => m.role !== "system").map((m) => {
      if (m.role === "tool") return { role: "user", parts: [{ functionResponse: { id: m.tool_call_id, name: names.get(m.tool_call_id), response: { output: m.content } } }] };
      if (m.role === "user") return { role: "user", parts: [{ text: m.content }] };
      const parts = m.content ? [{ text: m.content }] : [];
      for (const c of m.tool_calls ?? []) parts.push({ functionCall: { id: c.id, name: c.function.name, args: args(c) } });
      return { role: "model", parts };
    });
    default: throw new Error(`no converter for ${format}`);
  }
}
