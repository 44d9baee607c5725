// @eager: every call runs this module, so it is compiled at import (see build.rs).
// The openai format: Chat Completions messages, `tool_calls` and tool messages (and the
// legacy `function_call`). (What every reader has: the head of content.js.)

import { bad, describe } from "../common.js";
import { ASSISTANT, REAL_USER, SYSTEM, TOOL, USER } from "../contract.js";
import {
  MISFIT, STAMPED, contentFlags, foreignPart, linkId, partsFit, roleError, shows, visible,
} from "./content.js";
import { sameInside, slot, stampWith } from "./stamps.js";

function openaiContent(r, i, content) {
  if (typeof content === "string") {
    r.text(content);
  } else if (Array.isArray(content)) {
    for (const part of content) {
      if (part === null || typeof part !== "object") {
        r.text(part);
        continue;
      }
      switch (part.type) {
        case "image_url": case "input_audio": case "file": case "image":
          r.image();
          break;
        case "refusal":
          r.text(part.refusal);
          break;
        default:
          if (typeof part.text !== "string") foreignPart(i, part, "openai");
          r.text(part.text);
      }
    }
  } else if (content !== null && content !== undefined) {
    throw bad(i, `content must be a string, an array of parts or null, got ${describe(content)}`);
  }
}

/** The role code of an OpenAI role (a switch: faster than a table on the hot path). */
export function openaiRole(role) {
  switch (role) {
    case "user": return USER;
    case "assistant": return ASSISTANT;
    case "tool": case "function": return TOOL;
    case "system": case "developer": return SYSTEM;
    default: return undefined;
  }
}

/**
 * `check`: first whether m fits the format at all (`looksOpenAI` on the fields read here:
 * `MISFIT` when not). Writes its stamp from the same loads (`STAMPED`; `sameOpenAI` checks
 * it).
 *
 * Each field is read once, and every field but the role in a branch of the message's own
 * role: messages from several sources have many shapes (V8's hidden classes), and a read
 * that has met more than four of them is a generic lookup, several times slower; the
 * messages of one role have few (measured: 10,000 messages of six shapes read 1.6–2.7×
 * faster so).
 */
export function readOpenAI(r, i, m, check) {
  const name = m.role;
  switch (name) {
    case "user":
      return readOpenAIFields(r, i, check, name, USER, m.content, m.type, m.parts, m.name, undefined, undefined, undefined, undefined);
    case "assistant":
      return readOpenAIFields(r, i, check, name, ASSISTANT, m.content, m.type, m.parts, m.name, m.refusal, m.tool_calls, m.function_call, undefined);
    case "tool":
      return readOpenAIFields(r, i, check, name, TOOL, m.content, m.type, m.parts, m.name, undefined, undefined, undefined, m.tool_call_id);
    default:
      return readOpenAIFields(r, i, check, name, openaiRole(name), m.content, m.type, m.parts, m.name, undefined, undefined, undefined, undefined);
  }
}

/** `readOpenAI` on the fields it read: `calls` and `legacy` (`function_call`) of an
 * assistant, `callId` of a tool result. */
function readOpenAIFields(r, i, check, name, role, content, type, parts, author, refusal, calls, legacy, callId) {
  if (check && (role === undefined || type !== undefined || parts !== undefined ||
    (typeof content !== "string" && !partsFit(content, "openai")))) return MISFIT;
  if (role === undefined) throw roleError(i, name, "system, developer, user, assistant, tool");
  const flags = contentFlags(r, content, role === USER ? REAL_USER : 0, role !== TOOL);
  if ((content === undefined || content === null) && role !== ASSISTANT && name !== "function") {
    throw bad(i, `a ${name} message needs content (a string or an array of parts)${parts !== undefined ? "; it has parts, as Gemini or UI messages do: set config.format" : ""}`);
  }
  r.begin(i, role, flags);
  r.roleText(name);
  r.text(author);
  openaiContent(r, i, content);
  r.text(refusal);
  if (calls !== undefined && calls !== null) {
    if (!Array.isArray(calls)) throw bad(i, `tool_calls must be an array, got ${describe(calls)}`);
    for (const call of calls) {
      const id = call !== null && typeof call === "object" ? linkId(call.id) : undefined;
      if (id === undefined) throw bad(i, "every entry of tool_calls needs an id");
      r.call(id);
      r.text(id);
      const fn = call.function;
      if (fn !== null && typeof fn === "object") {
        r.text(fn.name);
        r.json(fn.arguments);
      } else {
        // A custom (freeform) tool's call: `{ type: "custom", custom: { name, input } }`.
        const custom = call.custom;
        if (custom !== null && typeof custom === "object") {
          r.text(custom.name);
          r.json(custom.input);
        }
      }
    }
  }
  if (legacy !== null && typeof legacy === "object") {
    r.call(`function:${legacy.name}`);
    r.text(legacy.name);
    r.json(legacy.arguments);
  }
  if (role === ASSISTANT && r.linkLength > r.linkStart[i] && !shows(content) && !visible(refusal)) r.callsOnly();
  if (name === "tool") {
    const id = linkId(callId);
    if (id === undefined) throw bad(i, "a tool message needs tool_call_id, the id of the call it answers");
    r.result(id);
    r.text(id);
  } else if (name === "function") {
    r.result(`function:${author}`);
  }
  // (An assistant's name, refusal and legacy call in one slot, none the usual case; another
  // message's name where an assistant's calls are: see `sameOpenAI`.)
  if (role === ASSISTANT) stampWith(r.stamps.writable(i), slot(i), content, name, calls, extras(author, refusal, legacy));
  else stampWith(r.stamps.writable(i), slot(i), content, name, author, callId);
  return STAMPED;
}

/**
 * Whether message m's fields are those `readOpenAI` stamped at `s[k]` (as `sameWith`
 * compares them): read by role, as `readOpenAI` reads them, and only those of its role (its
 * calls for an assistant, the call it answers for a tool result; for the others those
 * slots hold `undefined` and -1).
 */
export function sameOpenAI(m, s, k) {
  const name = m.role;
  if (!Object.is(name, s[k + 1])) return false;
  let content, calls;
  switch (name) {
    case "user":
      content = m.content;
      if (!Object.is(m.name, s[k + 2])) return false;
      break;
    case "assistant":
      content = m.content;
      calls = m.tool_calls;
      if (!Object.is(calls, s[k + 2]) || !sameExtras(s[k + 3], m.name, m.refusal, m.function_call)) return false;
      break;
    case "tool":
      content = m.content;
      if (!Object.is(m.tool_call_id, s[k + 3]) || !Object.is(m.name, s[k + 2])) return false;
      break;
    default:
      content = m.content;
      if (!Object.is(m.name, s[k + 2])) return false;
  }
  return Object.is(content, s[k]) && sameInside(s, k, content, calls);
}

/** An assistant's `name`, `refusal` and legacy `function_call` for its stamp: undefined when
 * it has none of them (no array made for most messages). */
function extras(name, refusal, legacy) {
  return name === undefined && refusal === undefined && legacy === undefined ? undefined : [name, refusal, legacy];
}

function sameExtras(stamped, name, refusal, legacy) {
  if (stamped === undefined) return name === undefined && refusal === undefined && legacy === undefined;
  return Object.is(stamped[0], name) && Object.is(stamped[1], refusal) && Object.is(stamped[2], legacy);
}

export function looksOpenAI(m) {
  if (m.type !== undefined || m.parts !== undefined || openaiRole(m.role) === undefined) return false;
  const content = m.content;
  return typeof content === "string" || partsFit(content, "openai");
}
