// @eager: every call runs this module, so it is compiled at import (see build.rs).
// The texts the estimator asks for: kept in chunks, and written into wasm memory as UTF-8
// or (in Node) UTF-16.

import { jsonText } from "./common.js";

/** log2 of the texts a chunk of `TextChunks` holds. */
const TEXT_SHIFT = 12;

const TEXT_CHUNK = 1 << TEXT_SHIFT;

/**
 * A list of texts in arrays of TEXT_CHUNK: an array of that many stays in V8's young
 * generation, while one of all a long history's texts (tens of thousands) is a large object,
 * into which every store of a string cost several times as much (measured: 34,000 pushes
 * 1.2–1.5 ms into one array, 0.5 ms into chunks).
 */
export class TextChunks {
  /** `expected`: about how many texts there will be (the first chunk's size). */
  constructor(expected = 0) {
    this.chunks = [];
    this.length = 0;
    this.first = Math.min(TEXT_CHUNK, Math.max(16, expected));
  }

  push(text) {
    const q = this.length++;
    const at = q & (TEXT_CHUNK - 1);
    // (Chunks are made at their size, not grown by pushes, which copy them as they grow;
    // the first one grows past its size if there are more texts than expected.)
    if (at === 0) this.chunks.push(new Array(q === 0 ? this.first : TEXT_CHUNK));
    this.chunks[q >> TEXT_SHIFT][at] = text;
  }

  /** Text number q (< length). */
  at(q) {
    return this.chunks[q >> TEXT_SHIFT][q & (TEXT_CHUNK - 1)];
  }

  /** Text number q as a string: a payload kept as it was (`Reading.json`) is written out
   * once, here. (Called from the core: nothing may throw. Plain data does not, unless a
   * getter that ran once while it was read throws now: it then counts as empty.) */
  text(q) {
    const piece = this.at(q);
    if (typeof piece === "string") return piece;
    let written;
    try {
      written = jsonText(piece);
    } catch {
      written = "";
    }
    this.chunks[q >> TEXT_SHIFT][q & (TEXT_CHUNK - 1)] = written;
    return written;
  }
}

export const ENCODER = new TextEncoder();

/** `piece` as UTF-8 into `dest` from `at`: the bytes written, or -1 if it does not fit. */
export function encodeUtf8(piece, dest, at) {
  const { read, written } = ENCODER.encodeInto(piece, dest.subarray(at));
  return read < piece.length ? -1 : written;
}

/** Node's `Buffer` (undefined elsewhere, and where a page defines one of its own). */
export const NODE_BUFFER = typeof globalThis.process === "object" && globalThis.process !== null &&
  typeof globalThis.process.versions?.node === "string" && typeof globalThis.Buffer?.from === "function"
  ? globalThis.Buffer : undefined;

/** The role names met (`Reading.roleText`), numbered from 1 in the order met: a code
 * keeps its name for good (readings taken over keep their codes). At most 255; a name not
 * among them, or one with a "\0" (the separator of `ROLE_NAMES_TEXT`), is a text. */
const ROLE_NAMES = [];

export let ROLE_NAMES_TEXT = "";

/** The code of role name `name` (0 for none: not a non-empty string, or no room left). */
export function roleCode(name) {
  for (let k = 0; k < ROLE_NAMES.length; k++) if (ROLE_NAMES[k] === name) return k + 1;
  if (typeof name !== "string" || name.length === 0 || ROLE_NAMES.length === 255 || name.includes("\0")) return 0;
  ROLE_NAMES.push(name);
  ROLE_NAMES_TEXT += `${name}\0`;
  return ROLE_NAMES.length;
}

/** Whether `Buffer` has `ucs2Write` (as Node's has had since its first releases): what
 * `write(…, "utf16le")` calls after checking its arguments, which took a sixth of the time. */
export const UCS2_WRITE = typeof NODE_BUFFER?.prototype.ucs2Write === "function";

/** Pieces up to this long are copied by hand (UTF-8: tried as ASCII first). */
export const SHORT_PIECE = 64;

/** Where piece number `p` of the texts of messages `indices` is: `{ k, q, p }`, `q` the
 * text's number in the reading (-1 at a message's start). */
export function pieceAt(starts, indices, p) {
  let k = 0, before = 0;
  for (; k < indices.length; k++) {
    const count = starts[indices[k] + 1] - starts[indices[k]];
    if (before + count > p) return { k, q: starts[indices[k]] + (p - before), p, off: 0 };
    before += count;
  }
  return { k, q: -1, p, off: 0 };
}

/** The UTF-16 length of the texts of messages `indices` (as far as past `limit`). */
export function textUnits(texts, starts, indices, limit = Infinity) {
  let units = 0;
  for (let k = 0; k < indices.length && units <= limit; k++) {
    for (let q = starts[indices[k]], end = starts[indices[k] + 1]; q < end; q++) units += texts.text(q).length;
  }
  return units;
}
