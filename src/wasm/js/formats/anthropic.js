// @eager: every call runs this module, so it is compiled at import (see build.rs).
// The anthropic format: Messages API messages, `tool_use` blocks and the `tool_result`
// blocks of the next user message. (What every reader has: the head of content.js.)

import { bad, describe, table } from "../common.js";
import { ASSISTANT, REAL_USER, SYSTEM, TOOL, USER } from "../contract.js";
import {
  contentFlags, documentBlock, foreignPart, linkId, partsFit, payload, roleError, visible,
} from "./content.js";

const ANTHROPIC_ROLES = table({ system: SYSTEM, user: USER, assistant: ASSISTANT });

export function readAnthropic(r, i, m) {
  const role = ANTHROPIC_ROLES.get(m.role);
  if (role === undefined) throw roleError(i, m.role, "user, assistant");
  const content = m.content;
  let realUser = role === USER;
  if (Array.isArray(content) && role === USER) {
    realUser = content.length === 0 || content.some((b) => !(b && b.type === "tool_result"));
  }
  const flags = contentFlags(r, content, realUser ? REAL_USER : 0, true);
  r.begin(i, realUser || role !== USER ? role : TOOL, flags);
  r.roleText(m.role);
  if (typeof content === "string") {
    r.text(content);
    return;
  }
  if (!Array.isArray(content)) {
    if (role === SYSTEM && content === undefined) return;
    throw bad(i, `content must be a string or an array of content blocks, got ${describe(content)}`);
  }
  // Whether it has blocks besides its calls and reasoning (and texts of white space).
  let more = false;
  for (const b of content) {
    if (b === null || typeof b !== "object") continue;
    switch (b.type) {
      case "document":
        more = true;
        documentBlock(r, b);
        break;
      case "image": case "container_upload":
        more = true;
        r.image();
        break;
      case "tool_use": case "server_tool_use": case "mcp_tool_use": {
        const id = linkId(b.id);
        if (id === undefined) throw bad(i, `a ${b.type} block needs an id`);
        r.call(id);
        r.text(id);
        r.text(b.name);
        r.json(b.input);
        break;
      }
      case "tool_result": case "web_search_tool_result": case "mcp_tool_result": {
        more = true;
        const id = linkId(b.tool_use_id);
        if (id === undefined) throw bad(i, `a ${b.type} block needs tool_use_id, the id of its tool_use`);
        r.result(id);
        r.text(id);
        payload(r, b.content);
        break;
      }
      case "thinking":
        r.text(b.thinking);
        break;
      case "redacted_thinking":
        r.text(b.data);
        break;
      default:
        // (Anthropic refuses a text block of white space alone.)
        more = more || typeof b.text !== "string" || visible(b.text);
        if (typeof b.text === "string") r.text(b.text);
        else if (b.type && b.type.endsWith("_tool_result")) {
          const id = linkId(b.tool_use_id);
          if (id !== undefined) r.result(id);
          payload(r, b.content);
        } else {
          foreignPart(i, b, "anthropic");
        }
    }
  }
  if (!more && role === ASSISTANT && r.linkLength > r.linkStart[i]) r.callsOnly();
}

export function looksAnthropic(m) {
  return ANTHROPIC_ROLES.get(m.role) !== undefined && m.type === undefined && m.parts === undefined && m.tool_calls === undefined &&
    (typeof m.content === "string" || Array.isArray(m.content) || (m.role === "system" && m.content === undefined)) &&
    partsFit(m.content, "anthropic");
}
