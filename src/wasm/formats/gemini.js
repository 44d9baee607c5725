// ---- gemini: Content -------------------------------------------------------------------
// One format's reader (what each has: the head of formats/content.js).
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).

import { ASSISTANT, bad, describe, REAL_USER, SYSTEM, table, TOOL, USER } from "../common.js";
import { contentFlags, linkId, roleError } from "./content.js";

const GEMINI_ROLES = table({ user: USER, model: ASSISTANT, function: TOOL, tool: TOOL, system: SYSTEM });

export function readGemini(r, i, m) {
  const role = m.role === undefined ? USER : GEMINI_ROLES.get(m.role);
  if (role === undefined) throw roleError(i, m.role, "user, model");
  const parts = m.parts;
  if (!Array.isArray(parts)) throw bad(i, `parts must be an array, got ${describe(parts)}`);
  const responsesOnly = parts.length > 0 && parts.every((p) => p && p.functionResponse);
  const realUser = role === USER && !responsesOnly;
  const flags = contentFlags(r, parts, realUser ? REAL_USER : 0, true);
  r.begin(i, role === USER && responsesOnly ? TOOL : role, flags);
  r.roleText(m.role);
  for (const p of parts) {
    if (p === null || typeof p !== "object") continue;
    if (p.functionCall) {
      const fc = p.functionCall;
      // Matched by id when there is one, else by name and order.
      r.call(linkId(fc.id) ?? `name:${fc.name}`);
      r.text(fc.name);
      r.json(fc.args);
    } else if (p.functionResponse) {
      const fr = p.functionResponse;
      r.namedResult(linkId(fr.id), fr.name);
      r.text(fr.name);
      r.json(fr.response);
    } else if (p.inlineData || p.fileData) {
      r.image();
    } else {
      r.text(p.text);
      if (p.executableCode) r.text(p.executableCode.code);
      if (p.codeExecutionResult) r.text(p.codeExecutionResult.output);
    }
  }
}

export function looksGemini(m) {
  return (m.role === undefined || GEMINI_ROLES.get(m.role) !== undefined) && Array.isArray(m.parts) && m.content === undefined &&
    m.parts.every((p) => p !== null && typeof p === "object" && p.type === undefined);
}
