// @eager: every call runs this module, so it is compiled at import (see build.rs).
// The vercel format: AI SDK ModelMessages, `tool-call` parts and tool messages'
// `tool-result` parts. (What every reader has: the head of content.js.)

import { bad, describe, table } from "../common.js";
import { ASSISTANT, REAL_USER, SYSTEM, TOOL, USER } from "../contract.js";
import {
  APPROVAL, STAMPED, contentFlags, foreignPart, linkId, partsFit, payload, payloadPart, roleError, visible,
} from "./content.js";
import { slot, stampWith } from "./stamps.js";

const VERCEL_ROLES = table({ system: SYSTEM, user: USER, assistant: ASSISTANT, tool: TOOL });

export function readVercel(r, i, m) {
  const role = VERCEL_ROLES.get(m.role);
  if (role === undefined) throw roleError(i, m.role, "system, user, assistant, tool");
  const content = m.content;
  r.begin(i, role, contentFlags(r, content, role === USER ? REAL_USER : 0, role !== TOOL));
  r.roleText(m.role);
  if (typeof content === "string") {
    r.text(content);
    return;
  }
  if (!Array.isArray(content)) throw bad(i, `content must be a string or an array of parts, got ${describe(content)}`);
  // Whether it has parts besides its calls and reasoning (and texts of white space).
  let more = false;
  // Whether an approval response stands alone (its request is not before it).
  let alone = false;
  for (const p of content) {
    if (p === null || typeof p !== "object") continue;
    switch (p.type) {
      case "image":
        more = true;
        r.image();
        break;
      case "file":
        more = true;
        vercelFile(r, p);
        break;
      case "reasoning-file":
        // A file the model's reasoning made (v7): reasoning, weighed as an image.
        r.image();
        break;
      case "tool-call": {
        const id = linkId(p.toolCallId);
        if (id === undefined) throw bad(i, "a tool-call part needs toolCallId");
        r.call(id);
        r.text(id);
        r.text(p.toolName);
        r.json(p.input ?? p.args);
        break;
      }
      case "tool-result": {
        more = true;
        const id = linkId(p.toolCallId);
        if (id === undefined) throw bad(i, "a tool-result part needs toolCallId, the id of the call it answers");
        r.result(id);
        r.text(id);
        r.text(p.toolName);
        const out = p.output ?? p.result;
        // (An output of parts is `{ type: "content", value: [...] }`; the others hold text or
        // JSON: `{ type: "text" | "json" | "error-text" | "error-json", value }`.)
        if (out !== null && typeof out === "object" && "value" in out && typeof out.type === "string") {
          if (out.type === "content") contentOutput(r, out.value);
          else r.json(out.value);
        } else {
          payload(r, out);
        }
        break;
      }
      case "tool-approval-request": {
        const id = linkId(p.approvalId);
        if (id === undefined) throw bad(i, "a tool-approval-request part needs approvalId");
        r.call(APPROVAL + id);
        break;
      }
      case "tool-approval-response": {
        more = true;
        const id = linkId(p.approvalId);
        if (id === undefined) throw bad(i, "a tool-approval-response part needs approvalId");
        // Paired with its request when that is before it; else no orphan: the SDK removes
        // requests from a model's prompt and keeps provider-executed tools' responses.
        if (!r.answer(APPROVAL + id)) alone = true;
        r.text(p.reason);
        break;
      }
      default:
        more = more || (p.type !== "reasoning" && (typeof p.text !== "string" || visible(p.text)));
        if (typeof p.text !== "string") foreignPart(i, p, "vercel");
        r.text(p.text);
    }
  }
  if (!more && role === ASSISTANT && r.linkLength > r.linkStart[i]) r.callsOnly();
  if (alone) {
    // Its reading depends on the messages before it: a stamp the next call never finds the
    // same, so that it is read afresh (and paired, once its request is before it).
    stampWith(r.stamps.writable(i), slot(i), content, m.role, m.type, {});
    return STAMPED;
  }
}

/**
 * An AI SDK file part (a message's, or an item of a tool output of `type: "content"`): an
 * image's weight, or its text when its data is inline text (v7's `{ type: "text", text }`).
 */
function vercelFile(r, p) {
  const data = p.data;
  if (data !== null && typeof data === "object" && data.type === "text" && typeof data.text === "string") r.text(data.text);
  else r.image();
}

/** The items of a tool output of `type: "content"`: a `file` item (v7's recommended image
 * output, `{ type: "file", data, mediaType }`) by `vercelFile`, the others as payload parts
 * (`file-reference`, `image-data`, v5's `media`… are media). */
function contentOutput(r, items) {
  if (!Array.isArray(items)) {
    payload(r, items);
    return;
  }
  for (const item of items) {
    if (item !== null && typeof item === "object" && item.type === "file") vercelFile(r, item);
    else payloadPart(r, item);
  }
}

export function looksVercel(m) {
  return VERCEL_ROLES.get(m.role) !== undefined && m.type === undefined && m.parts === undefined && m.tool_calls === undefined &&
    m.tool_call_id === undefined && (typeof m.content === "string" || Array.isArray(m.content)) &&
    partsFit(m.content, "vercel");
}
