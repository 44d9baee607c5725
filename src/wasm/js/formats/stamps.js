// @eager: every call runs this module, so it is compiled at import (see build.rs).
// Stamps: the fields of each message that its reading depends on, which the next call
// compares by identity to take that reading over.

/**
 * A message's stamp: the fields its reading depends on most, compared by identity: `a` its
 * content (or parts), `b` its role (or type), `c` its calls (an array, when the format has
 * one), `d` another field; `stampWith` writes them at `s[k]` (from each format's `stamp`, or
 * from what its `read` loaded), with the length of `c` and, for parts, what they were
 * (`partsStamp`); `sameWith` (or a format's `same`) checks them. A message read before is
 * taken over only while its stamp is the same, so replacing a message's content, calls or
 * role (or the message) is always seen, and so is a call pushed onto its calls, and a part
 * pushed, removed or replaced or its text replaced. The slots:
 */
export const STAMP = 6;

/** log2 of the messages whose stamps a chunk of `Stamps` holds. */
export const STAMP_SHIFT = 10;

/** Where message i's stamp starts in its chunk of `Stamps`. */
export function slot(i) {
  return (i & ((1 << STAMP_SHIFT) - 1)) * STAMP;
}

/**
 * The stamps of a reading's messages, in chunks of 1 << STAMP_SHIFT messages: message i's
 * are `chunks[i >> STAMP_SHIFT][slot(i) …]`. Chunks are small enough to stay out of V8's
 * large-object space (see `TextChunks`), and a reading that goes on from another shares
 * its chunks.
 */
export class Stamps {
  /** `n`: the messages of the reading that makes it. (Its first chunk is made for them
   * only: a chunk for 1 << STAMP_SHIFT messages, 48 KB, was most of what a call on a short
   * history allocated, and so of its time collecting garbage. Written in order, it grows as
   * an array does when the history grows.) */
  constructor(n) {
    this.chunks = [];
    this.first = Math.max(1, Math.min(n, 1 << STAMP_SHIFT)) * STAMP;
  }

  /** The chunk for message i, made when it is the first of its chunk to be written
   * (messages are written in order). */
  writable(i) {
    const c = i >> STAMP_SHIFT;
    const chunks = this.chunks;
    while (c >= chunks.length) chunks.push(new Array(chunks.length === 0 ? this.first : STAMP << STAMP_SHIFT));
    return chunks[c];
  }

  /** Keeps the chunks of the first n messages (what is written after them is let go). */
  truncate(n) {
    this.chunks.length = (n + (1 << STAMP_SHIFT) - 1) >> STAMP_SHIFT;
  }
}

export function stampWith(s, k, a, b, c, d) {
  s[k] = a;
  s[k + 1] = b;
  s[k + 2] = c;
  s[k + 3] = d;
  s[k + 4] = Array.isArray(a) ? partsStamp(a) : -1;
  s[k + 5] = Array.isArray(c) ? c.length : -1;
}

/**
 * Whether `stampWith(s, k, a, b, c, d)` would write what `s[k …]` holds. `a` and `c` are
 * the objects stamped (or the test fails before), so each is an array exactly when its
 * count slot is not -1: a string is not touched again (a content string is far away in
 * memory, on a long history one cache miss each).
 */
export function sameWith(s, k, a, b, c, d) {
  // (`Object.is`, not `!==`: both compare a string by identity first, but `!==` looks at its
  // type before, and a message's text is far from it in memory: a cache miss per message,
  // measured as a quarter of a turn on a 10,000-message history.)
  return Object.is(a, s[k]) && Object.is(b, s[k + 1]) && Object.is(c, s[k + 2]) && Object.is(d, s[k + 3]) &&
    sameInside(s, k, a, c);
}

/** For a stamp whose fields `a` and `c` are the same objects: what is inside them (the
 * number of calls of `c`; the parts of `a`, by `sameParts`). */
export function sameInside(s, k, a, c) {
  const parts = s[k + 4], calls = s[k + 5];
  return (parts === -1 || sameParts(a, parts)) && (calls === -1 || c.length === calls);
}

/**
 * What a message's parts were, for its stamp: each part's text (a string part is its own),
 * or the part itself when it has none. Compared by identity (`sameParts`), so a part
 * pushed, removed or replaced, or its text replaced, is seen, with no text looked at.
 */
function partsStamp(parts) {
  const out = new Array(parts.length);
  for (let k = 0; k < parts.length; k++) out[k] = partMark(parts[k]);
  return out;
}

function sameParts(parts, stamp) {
  if (parts.length !== stamp.length) return false;
  for (let k = 0; k < parts.length; k++) if (!Object.is(partMark(parts[k]), stamp[k])) return false;
  return true;
}

function partMark(p) {
  if (p === null || typeof p !== "object") return p;
  const text = p.text;
  return text !== undefined ? text : p;
}

/** Whether message m's stamp is `chunk[k …]`; false when reading it throws (it is then
 * read afresh, which reports what throws). */
export function sameStamp(same, m, chunk, k) {
  try {
    return same(m, chunk, k);
  } catch {
    return false;
  }
}
