// Shared by the unit tests: `readMessages` called as the core calls it (src/wasm/js.rs,
// src/wasm/decode.rs), and what a reading hands the core, in words a test can compare.
// Imports the boundary's source modules only: no wasm build is needed.

import { readMessages } from "../../src/wasm/js/read.js";
import { CALL, FORMAT_NAMES } from "../../src/wasm/js/contract.js";

export const TAG = "conversation-summary";

/** decode.rs's `AUTO`: any number that is no format's code. */
export const AUTO = FORMAT_NAMES.length;

/** `count_params`: messageOverhead, imageTokens, length estimator (1), charsPerToken. */
const PARAMS = new Float64Array([3, 85, 1, 4]);

/**
 * `messages` read as the core reads them: `format` a name of FORMAT_NAMES or "auto";
 * options: `lengthMode` (default false: texts collected), `countTokens`, `tokenCounts`.
 */
export function read(messages, format = "auto", { lengthMode = false, countTokens, tokenCounts } = {}) {
  const code = format === "auto" ? AUTO : FORMAT_NAMES.indexOf(format);
  if (code < 0) throw new Error(`no format ${format}`);
  return readMessages(messages, code, TAG, lengthMode, 4, PARAMS, countTokens, tokenCounts, false);
}

/** Message i's links as `[id, "call" | "result", key]` (a call and its result share a key). */
export function linksOf(r, i) {
  const out = [];
  const links = r.links, starts = r.linkStarts;
  for (let at = starts[i]; at < starts[i + 1]; at += 2) {
    out.push([r.ids[links[at]], links[at + 1] === CALL ? "call" : "result", links[at]]);
  }
  return out;
}

/** Every message's links (see `linksOf`). */
export function allLinks(r) {
  return Array.from({ length: r.n }, (_, i) => linksOf(r, i));
}

/** The texts of message i the estimator is handed (its role name aside: see `roleNameOf`). */
export function textsOf(r, i) {
  const out = [];
  for (let q = r.pieceStart[i]; q < r.pieceStart[i + 1]; q++) out.push(r.texts.text(q));
  return out;
}

/** The role name message i counts as a text (a code into `roleNames`), or undefined. */
export function roleNameOf(r, i) {
  const code = r.roleCodes[i];
  return code === 0 ? undefined : r.roleNames.split("\0")[code - 1];
}

/** `[...typed]`: a plain array to compare. */
export const list = (typed) => Array.from(typed);

/** Runs `fn`, expecting a ReduceError; returns it. */
export function reduceError(fn) {
  try {
    fn();
  } catch (e) {
    if (e === null || typeof e !== "object" || e.name !== "ReduceError") throw e;
    return e;
  }
  throw new Error("expected a ReduceError, nothing was thrown");
}
