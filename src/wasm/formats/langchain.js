// ---- langchain: LangChain.js messages --------------------------------------------------
// One format's reader (what each has: the head of formats/content.js).
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).

import { ASSISTANT, bad, OTHER, REAL_USER, SYSTEM, table, TOOL, USER } from "../common.js";
import { contentFlags, documentBlock, linkId } from "./content.js";
import { openaiRole } from "./openai.js";

export const LANGCHAIN_TYPES = table({ system: SYSTEM, developer: SYSTEM, human: USER, ai: ASSISTANT, tool: TOOL, function: TOOL, generic: OTHER, remove: OTHER });

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

export function readLangChain(r, i, m) {
  const [type, d] = langchainShape(m);
  let role = LANGCHAIN_TYPES.get(type);
  if (role === undefined) throw bad(i, `has an unknown LangChain message type ${JSON.stringify(String(type))}`);
  if (type === "generic") role = openaiRole(d.role) ?? OTHER;
  const content = d.content;
  const flags = contentFlags(r, content, role === USER ? REAL_USER : 0, role !== TOOL);
  r.begin(i, role, flags);
  r.roleText(type);
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
    const calls = d.tool_calls;
    if (Array.isArray(calls)) {
      for (const c of calls) {
        if (c === null || typeof c !== "object") continue;
        // (LangChain's `id` is optional: a call without one is answered, if at all, by a
        // FunctionMessage of its name.)
        const id = linkId(c.id);
        if (id !== undefined) {
          r.call(id);
          r.text(id);
        } else {
          r.call(`function:${c.name}`);
        }
        r.text(c.name);
        r.json(c.args);
      }
    }
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
