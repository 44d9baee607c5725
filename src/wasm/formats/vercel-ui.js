// ---- vercel-ui: AI SDK UIMessage -------------------------------------------------------
// One format's reader (what each has: the head of formats/content.js).
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).

import { ASSISTANT, bad, describe, REAL_USER, SYSTEM, table, USER } from "../common.js";
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
    if (p.type === "file") r.image();
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

export function looksVercelUI(m) {
  return UI_ROLES.get(m.role) !== undefined && Array.isArray(m.parts) && m.content === undefined &&
    m.parts.every((p) => p !== null && typeof p === "object" && typeof p.type === "string");
}
