// @eager: every call runs this module, so it is compiled at import (see build.rs).
// The vercel-ui format: AI SDK UIMessages, whose tool parts hold call and result together.
// (What every reader has: the head of content.js.)

import { bad, describe, table } from "../common.js";
import { ASSISTANT, REAL_USER, SYSTEM, USER } from "../contract.js";
import { contentFlags, isUiTool, linkId, payload, roleError } from "./content.js";

const UI_ROLES = table({ system: SYSTEM, user: USER, assistant: ASSISTANT });

export function readVercelUI(r, i, m) {
  const role = UI_ROLES.get(m.role);
  if (role === undefined) throw roleError(i, m.role, "system, user, assistant");
  const parts = m.parts;
  if (!Array.isArray(parts)) throw bad(i, `parts must be an array, got ${describe(parts)}`);
  const flags = contentFlags(r, parts, role === USER ? REAL_USER : 0, true);
  r.begin(i, role, flags);
  r.roleText(m.role);
  for (const p of parts) {
    if (p === null || typeof p !== "object" || typeof p.type !== "string") continue;
    // (A `reasoning-file`, v7: a file the model's reasoning made.)
    if (p.type === "file" || p.type === "reasoning-file") r.image();
    else if (p.type === "steering-message") steeringParts(r, p.parts);
    else if (isUiTool(p)) {
      // A UI tool part holds the call and its result together: a call answered in its own
      // message (a tool message, for priority and progressive's tool runs), never an orphan.
      const id = linkId(p.toolCallId);
      if (id !== undefined) {
        r.call(id);
        r.result(id);
      }
      r.text(p.toolCallId);
      r.text(p.toolName ?? p.type.slice(5));
      r.json(p.input);
      payload(r, p.output);
      r.text(p.errorText);
    } else if (p.type.startsWith("data-")) r.json(p.data);
    else r.text(p.text);
  }
}

/** A `steering-message` part's own parts (v7: a user message added while the reply was
 * made, inside it): its texts and files. */
function steeringParts(r, parts) {
  if (!Array.isArray(parts)) return;
  for (const q of parts) {
    if (q === null || typeof q !== "object") continue;
    if (q.type === "file") r.image();
    else r.text(q.text);
  }
}

export function looksVercelUI(m) {
  return UI_ROLES.get(m.role) !== undefined && Array.isArray(m.parts) && m.content === undefined &&
    m.parts.every((p) => p !== null && typeof p === "object" && typeof p.type === "string");
}
