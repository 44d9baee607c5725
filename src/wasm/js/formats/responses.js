// @eager: every call runs this module, so it is compiled at import (see build.rs).
// The openai-responses format: Responses API items, `function_call` and
// `function_call_output` items. (What every reader has: the head of content.js.)

import { bad, describe, table } from "../common.js";
import {
  ASSISTANT, ATTACH_NEXT, CALLS_ONLY, OTHER, REAL_USER, SYSTEM, TOOL, USER,
} from "../contract.js";
import {
  contentFlags, foreignPart, linkId, noted, openingText, partsFit, payload, roleError,
} from "./content.js";
import { LANGCHAIN_TYPES } from "./langchain.js";

const RESPONSES_ROLES = table({ system: SYSTEM, developer: SYSTEM, user: USER, assistant: ASSISTANT });

export const RESPONSES_TYPES = new Set([
  "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
  "custom_tool_call_output", "computer_call", "computer_call_output", "local_shell_call",
  "local_shell_call_output", "shell_call", "shell_call_output", "apply_patch_call",
  "apply_patch_call_output", "web_search_call", "file_search_call", "image_generation_call",
  "code_interpreter_call", "mcp_call", "mcp_list_tools", "mcp_approval_request",
  "mcp_approval_response", "item_reference", "compaction",
]);

export function readResponses(r, i, m) {
  const type = m.type === undefined ? "message" : m.type;
  if (typeof type !== "string") throw bad(i, `type must be a string, got ${describe(type)}`);
  if (type === "message") {
    const role = RESPONSES_ROLES.get(m.role);
    if (role === undefined) throw roleError(i, m.role, "system, developer, user, assistant");
    const content = m.content;
    r.begin(i, role, contentFlags(r, content, role === USER ? REAL_USER : 0, true));
    r.roleText(m.role);
    if (typeof content === "string") r.text(content);
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (part === null || typeof part !== "object") continue;
        if (part.type === "input_image" || part.type === "input_file" || part.type === "input_audio") r.image();
        else if (part.type === "refusal") r.text(part.refusal);
        else if (typeof part.text === "string") r.text(part.text);
        else foreignPart(i, part, "openai-responses");
      }
    } else if (content !== undefined && content !== null) {
      throw bad(i, `content must be a string or an array of parts, got ${describe(content)}`);
    } else if (m.tool_calls !== undefined) {
      throw bad(i, `has tool_calls, as OpenAI Chat Completions messages do (Responses items are function_call items): set config.format to "openai" (or "auto")`);
    }
    return;
  }
  if (type === "reasoning") {
    // Stays with the item after it: the API rejects a reasoning item without it.
    r.begin(i, OTHER, ATTACH_NEXT);
    if (Array.isArray(m.summary)) for (const s of m.summary) if (s) r.text(s.text);
    r.text(m.encrypted_content);
    return;
  }
  if (type === "mcp_approval_request") {
    r.begin(i, ASSISTANT, CALLS_ONLY);
    r.call(`approval:${m.id}`);
    r.text(m.name);
    r.json(m.arguments);
    return;
  }
  if (type === "mcp_approval_response") {
    r.begin(i, TOOL, 0);
    r.result(`approval:${m.approval_request_id}`);
    return;
  }
  if (type.endsWith("_call_output")) {
    // (A local shell call's output names its call by `id`, as the API's type has it.)
    const id = linkId(m.call_id) ?? (type === "local_shell_call_output" ? linkId(m.id) : undefined);
    if (id === undefined) throw bad(i, `a ${type} item needs call_id, the id of the call it answers`);
    r.begin(i, TOOL, noted(0, openingText(m.output)));
    r.result(id);
    r.text(id);
    payload(r, m.output);
    return;
  }
  if (type.endsWith("_call")) {
    r.begin(i, ASSISTANT, 0);
    const id = linkId(m.call_id);
    // Calls the API runs itself (web search, file search, …) have no output item.
    if (id !== undefined) {
      r.callsOnly();
      r.call(id);
      r.text(id);
    }
    r.text(m.name);
    r.json(m.arguments ?? m.input ?? m.action);
    // What a call the API ran itself brought back, in its item: an MCP call's output (or
    // error), file search's results, the code interpreter's code and outputs.
    if (id === undefined) {
      payload(r, m.output ?? m.error);
      payload(r, m.results);
      r.text(m.code);
      payload(r, m.outputs);
      if (type === "image_generation_call" && m.result) r.image();
    }
    return;
  }
  if (LANGCHAIN_TYPES.get(type) !== undefined) {
    throw bad(i, `has type ${JSON.stringify(type)}, a LangChain message type, not a Responses item type: set config.format to "langchain" (or "auto")`);
  }
  r.begin(i, OTHER, 0);
  r.json(m);
}

export function looksResponses(m) {
  if (m.type !== undefined) return RESPONSES_TYPES.has(m.type);
  return RESPONSES_ROLES.get(m.role) !== undefined && m.parts === undefined && m.tool_calls === undefined && partsFit(m.content, "openai-responses");
}

/** A Responses item's stamp: the fields `readResponses` reads of its type (an item of a type
 * it does not know counts as its JSON: the item itself, whose insides are not looked at). */
export function stampResponses(m, s, k, w) {
  const type = m.type;
  if (type === undefined || type === "message") return w(s, k, m.content, type, undefined, m.role);
  if (type === "reasoning") return w(s, k, m.summary, type, m.encrypted_content, undefined);
  if (type === "mcp_approval_request") return w(s, k, m.arguments, type, m.id, m.name);
  if (type === "mcp_approval_response") return w(s, k, undefined, type, m.approval_request_id, undefined);
  if (typeof type === "string" && type.endsWith("_call_output")) return w(s, k, m.output, type, m.call_id, undefined);
  if (typeof type === "string" && type.endsWith("_call")) {
    // (A call the API ran itself has no call_id, and holds what it brought back.)
    return w(s, k, m.arguments ?? m.input ?? m.action, type, m.call_id !== undefined ? m.call_id : m.output ?? m.error ?? m.results ?? m.outputs, m.name);
  }
  return w(s, k, m, type, undefined, undefined);
}
