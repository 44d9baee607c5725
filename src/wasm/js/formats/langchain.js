// @eager: every call runs this module, so it is compiled at import (see build.rs).
// The langchain format: LangChain.js message instances, their plain and `toDict()` forms,
// `tool_calls` and tool messages. (What every reader has: the head of content.js.)

import { bad, table } from "../common.js";
import { ASSISTANT, OTHER, REAL_USER, SYSTEM, TOOL, USER } from "../contract.js";
import { contentFlags, documentBlock, linkId, shows } from "./content.js";
import { openaiRole } from "./openai.js";

export const LANGCHAIN_TYPES = table({ system: SYSTEM, developer: SYSTEM, human: USER, ai: ASSISTANT, tool: TOOL, function: TOOL, generic: OTHER, remove: OTHER });

/** The role name a message counts as its text (SPEC §3: the inputs of LangChain's
 * approximate counter, which counts a message's OpenAI role), where a format names it
 * otherwise: LangChain's types, Gemini's `model`. */
export const ROLE_TEXTS = table({ human: "user", ai: "assistant", model: "assistant" });

const LANGCHAIN_CLASSES = table({
  SystemMessage: "system", HumanMessage: "human", AIMessage: "ai", ToolMessage: "tool",
  FunctionMessage: "function", ChatMessage: "generic", AIMessageChunk: "ai",
  HumanMessageChunk: "human", SystemMessageChunk: "system", ToolMessageChunk: "tool",
});

/** `[type, fields]` of a LangChain message in any of its three shapes. */
export function langchainShape(m) {
  if (typeof m.getType === "function") return [m.getType(), m];
  if (typeof m._getType === "function") return [m._getType(), m];
  if (m.lc === 1 && Array.isArray(m.id) && m.kwargs && typeof m.kwargs === "object") {
    return [LANGCHAIN_CLASSES.get(m.id[m.id.length - 1]), m.kwargs]; // the serialized form
  }
  if (m.data !== null && typeof m.data === "object" && m.content === undefined) return [m.type, m.data];
  return [m.type, m];
}

/**
 * An AI message's calls, as `[calls, raw, legacy]`: its `tool_calls`; without any, OpenAI's
 * raw ones in `additional_kwargs.tool_calls` (`raw`: a plain message stored before LangChain
 * parsed them, as its OpenAI client writes them); and a legacy `function_call` there (which
 * a `FunctionMessage` of its name answers).
 */
export function langchainCalls(d) {
  const extra = d.additional_kwargs !== null && typeof d.additional_kwargs === "object" ? d.additional_kwargs : {};
  const own = Array.isArray(d.tool_calls) ? d.tool_calls : [];
  const raw = own.length === 0 && Array.isArray(extra.tool_calls) && extra.tool_calls.length > 0;
  const legacy = extra.function_call !== null && typeof extra.function_call === "object" ? extra.function_call : undefined;
  return [raw ? extra.tool_calls : own, raw, legacy];
}

export function readLangChain(r, i, m) {
  const [type, d] = langchainShape(m);
  let role = LANGCHAIN_TYPES.get(type);
  if (role === undefined) throw bad(i, `has an unknown LangChain message type ${JSON.stringify(String(type))}`);
  if (type === "generic") role = openaiRole(d.role) ?? OTHER;
  const content = d.content;
  const flags = contentFlags(r, content, role === USER ? REAL_USER : 0, role !== TOOL);
  r.begin(i, role, flags);
  r.roleText(type === "generic" ? d.role : ROLE_TEXTS.get(type) ?? type);
  r.text(d.name);
  if (typeof content === "string") r.text(content);
  else if (Array.isArray(content)) {
    for (const b of content) {
      if (b === null || typeof b !== "object") r.text(b);
      else if (b.type === "document") documentBlock(r, b);
      else if (/image|file|audio|document/.test(String(b.type))) r.image();
      else if (b.type === "tool_use" || b.type === "tool_call") r.json(b.input ?? b.args);
      else if (b.type === "thinking") r.text(b.thinking);
      else r.text(b.text);
    }
  }
  if (role === ASSISTANT) {
    const [calls, raw, legacy] = langchainCalls(d);
    for (const c of calls) {
      if (c === null || typeof c !== "object") continue;
      // (LangChain's `id` is optional: a call without one is answered, if at all, by a
      // FunctionMessage of its name.)
      const id = linkId(c.id);
      const fn = raw && c.function !== null && typeof c.function === "object" ? c.function : c;
      if (id !== undefined) {
        r.call(id);
        r.text(id);
      } else {
        r.call(`function:${fn.name}`);
      }
      r.text(fn.name);
      r.json(raw ? fn.arguments : c.args);
    }
    if (legacy !== undefined) {
      r.call(`function:${legacy.name}`);
      r.text(legacy.name);
      r.json(legacy.arguments);
    }
    if (r.linkLength > r.linkStart[i] && !shows(content)) r.callsOnly();
  } else if (type === "tool") {
    const id = linkId(d.tool_call_id);
    if (id === undefined) throw bad(i, "a ToolMessage needs tool_call_id, the id of the call it answers");
    r.result(id);
    r.text(id);
  } else if (type === "function") {
    r.result(`function:${d.name}`);
  }
}

export function looksLangChain(m) {
  if (typeof m.getType === "function" || typeof m._getType === "function") return true;
  if (m.lc === 1 && Array.isArray(m.id)) return LANGCHAIN_CLASSES.get(m.id[m.id.length - 1]) !== undefined;
  const type = m.type;
  // (A ChatMessage, `generic`, has a role; a RemoveMessage may have no content.)
  return LANGCHAIN_TYPES.get(type) !== undefined && (m.role === undefined || type === "generic") &&
    (m.content !== undefined || type === "remove" || (m.data !== null && typeof m.data === "object"));
}
