// @eager: every call runs this module, so it is compiled at import (see build.rs).
// The gemini format: Content turns, `functionCall` parts and the `functionResponse` parts of
// the turns after them. (What every reader has: the head of content.js.)

import { bad, describe, table } from "../common.js";
import { ASSISTANT, REAL_USER, SYSTEM, TOOL, USER } from "../contract.js";
import { contentFlags, linkId, roleError, visible } from "./content.js";
import { ROLE_TEXTS } from "./langchain.js";

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
  r.roleText(ROLE_TEXTS.get(m.role) ?? m.role);
  // Whether it has parts besides its calls and thoughts (and empty texts).
  let more = false;
  for (const p of parts) {
    if (p === null || typeof p !== "object") continue;
    more = more || Boolean(p.functionResponse || p.inlineData || p.fileData || p.executableCode || p.codeExecutionResult ||
      (visible(p.text) && !p.thought));
    if (p.functionCall) {
      const fc = p.functionCall;
      // Matched by id when there is one, else by name and order.
      r.call(linkId(fc.id) ?? `name:${fc.name}`);
      r.text(fc.id);
      r.text(fc.name);
      r.json(fc.args);
    } else if (p.functionResponse) {
      const fr = p.functionResponse;
      r.namedResult(linkId(fr.id), fr.name);
      r.text(fr.id);
      r.text(fr.name);
      r.json(fr.response);
      // (A multimodal response: its media, in parts of its own.)
      if (Array.isArray(fr.parts)) for (const q of fr.parts) if (q && (q.inlineData || q.fileData)) r.image();
    } else if (p.inlineData || p.fileData) {
      r.image();
    } else {
      r.text(p.text);
      if (p.executableCode) r.text(p.executableCode.code);
      if (p.codeExecutionResult) r.text(p.codeExecutionResult.output);
    }
  }
  if (!more && role === ASSISTANT && r.linkLength > r.linkStart[i]) r.callsOnly();
}

export function looksGemini(m) {
  return (m.role === undefined || GEMINI_ROLES.get(m.role) !== undefined) && Array.isArray(m.parts) && m.content === undefined &&
    m.parts.every((p) => p !== null && typeof p === "object" && p.type === undefined);
}
