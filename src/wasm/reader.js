// The JavaScript half of the boundary: reads the few fields the core needs from the
// user's message objects in one loop (`readMessages`: a `Reading`, whose texts and counts
// the core asks for), and keeps what it read for the next calls. The formats' readers are
// formats/*.js; results, summaries, offloading, options and ChatHistory's helpers have
// modules of their own.
// Shipped through wasm-bindgen's `module` attribute, as every module of src/wasm/ is (see
// src/wasm/js.rs), and in the package bundled with them into one (scripts/bundle.mjs).
//
// The modules import one another without a cycle: common.js, formats/stamps.js and
// formats/content.js <- each format's reader <- formats/index.js <- results.js <- reader.js
// <- history.js, and results.js <- summaries.js <- offload.js; options.js needs common.js only.

import {
  bad, CALL, describe, jsonText, MAX_MESSAGES, own, plainJson, reason, ReduceError, RESULT,
} from "./common.js";
import { sameStamp, slot, STAMP, STAMP_SHIFT, Stamps, stampWith } from "./formats/stamps.js";
import { MISFIT, STAMPED } from "./formats/content.js";
import { checkDeferred, detect, fitMask, FORMAT_CODES, misfit, READERS } from "./formats/index.js";
import { completeReading } from "./results.js";

/** How many links before a result taken over its call is looked for (see `rekeyResults`). */
const NEAR_LINKS = 64;

/** How many messages taken over are looked through for the latest calls (see `recentFrom`). */
const NEAR_MESSAGES = 8;

/** The number of readings made, for their `version`. */
let VERSIONS = 0;

/**
 * What one call read, per message, in typed arrays for the core: role, flags, images, the
 * count of each message (`raw`, before calibration; -1 while it is still to be estimated
 * from its texts), tool-call links, and the formats it fits. It also keeps, per message, a
 * stamp of the fields its reading came from, so that the next call can take over what it
 * read about the same, unchanged message objects (see `readMessages`).
 */
export class Reading {
  /** `continued`: the reading of the same first messages (a history that grew), whose
   * stamps go on with this one's. */
  constructor(n, options, ids, continued) {
    this.format = "";
    this.items = null;
    // Shared by the readings of calls on the same, unchanged messages (see `again`).
    this.version = ++VERSIONS;
    this.n = n;
    // A reading that goes on from another (a history that grew): its first `base` messages
    // are those of reading `baseVersion`, unchanged, read the same (the core goes on from
    // what it made of them).
    this.base = continued !== undefined ? continued.n : 0;
    this.baseVersion = continued !== undefined ? continued.version : 0;
    this.roles = new Uint8Array(n);
    this.flags = new Uint8Array(n);
    this.images = new Uint32Array(n);
    // The formats each message fits, of those checked (set by readMessages).
    this.masks = null;
    this.checked = null;
    // Where auto-detection ended (see `detect`).
    this.detected = undefined;
    // Length mode's estimates, summed as the texts are read (empty otherwise).
    this.lengthTokens = new Float64Array(options.lengthMode ? n : 0);
    this.raw = new Float64Array(n).fill(-1);
    this.given = new Float64Array(0);
    // Message i's texts to estimate are texts[pieceStart[i] .. pieceStart[i + 1]] (in
    // length mode only its payloads of plain data: its texts are summed as they are read).
    this.pieceStart = new Uint32Array(n + 1);
    // Room for all (a grown array is copied as it grows); written in message order. A
    // continued reading reads only its own first n stamps, and this one writes every one
    // after them before it reads them (what a call that failed wrote there is let go).
    if (continued !== undefined) {
      continued.stamps.truncate(continued.n);
      this.stamps = continued.stamps;
    } else {
      this.stamps = new Stamps();
    }
    // (key, kind) pairs; message i's are linkData[linkStart[i] .. linkStart[i + 1]].
    this.linkStart = new Uint32Array(n + 1);
    this.linkData = new Uint32Array(Math.max(32, n * 2));
    this.linkLength = 0;
    // Link keys: one number per call read, `ids[key]` its id; shared with the readings this
    // one takes over from or is taken over by (their links keep their meaning).
    this.ids = ids;
    // (id, key) of the calls of the latest message read with calls (see `call`).
    // (`recentLength` of `recentCalls` hold them: the array is reused, not emptied, which
    // would let its storage go and make it anew for every message with calls.)
    this.recentCalls = [];
    this.recentLength = 0;
    this.recentOf = -1;
    // The key of the latest call of each id among the links before `byIdAt` (see `callKey`).
    this.byId = null;
    this.byIdAt = 0;
    // Where the orphan results are, once asked (see `withoutOrphans`).
    this.orphans = undefined;
    // The texts to estimate, in chunks of TEXT_CHUNK (see `TextChunks`).
    this.texts = new TextChunks(options.lengthMode ? 16 : 4 * n);
    // Each message's role name as its code in `ROLE_NAMES` (0: none, or one of its texts):
    // the core weighs each name once (see `roleText`).
    this.roleCodes = new Uint8Array(options.lengthMode ? 0 : n);
    // Where the last round of an estimate stopped (see `encodeInto`).
    this.cursor = undefined;
    // Some messages left unestimated (a reduction that did not need them), and what
    // estimating them later takes (set by the core's boundary).
    this.pending = false;
    this.estimator = null;
    this.rest = undefined;
    this.lengthMode = options.lengthMode;
    this.charsPerToken = options.charsPerToken;
    this.collectTexts = false;
    this.index = 0;
    this.openTag = `<${options.tag}>`;
    this.closeTag = `</${options.tag}>`;
    // What it was read with (see `madeWith`).
    this.options = options;
    this.countTokens = undefined;
    // Whether the next calls may take over from it, and the reading it took over from.
    this.keep = false;
    this.previous = undefined;
  }

  begin(i, role, flags) {
    this.index = i;
    this.roles[i] = role;
    this.flags[i] = flags;
  }

  text(value) {
    if (typeof value !== "string" || value.length === 0) return;
    if (this.lengthMode) {
      this.lengthTokens[this.index] += Math.ceil(value.length / this.charsPerToken);
    } else if (this.collectTexts) {
      this.texts.push(value);
    }
  }

  /**
   * The message's role name (or type), which counts as a text of its own (SPEC §3): the
   * first of its texts. To estimate, it is a code (`roleCode`), whose name the core weighs
   * once a call, not a text to hand over and weigh for every message (a tenth of a first
   * call's time with the class estimator).
   */
  roleText(name) {
    if (this.collectTexts && !this.lengthMode) {
      const code = roleCode(name);
      if (code !== 0) {
        this.roleCodes[this.index] = code;
        return;
      }
    }
    this.text(name);
  }

  /**
   * A payload that counts as its JSON text (SPEC §3). An object or array of plain data
   * (`plainJson`) is kept as it is and written out only if it is estimated
   * (`TextChunks.text`; in length mode by `lengths`): a truncation estimates the newest
   * messages only. Anything else is written out now, and what `JSON.stringify` throws is
   * the reading's error.
   */
  json(value) {
    if (value === null || typeof value !== "object" || !plainJson(value, 0)) {
      this.text(jsonText(value));
    } else if (this.collectTexts) {
      this.texts.push(value);
    }
  }

  image() {
    this.images[this.index] += 1;
  }

  /** A new key, for id `id`. */
  newKey(id) {
    const key = this.ids.length;
    this.ids.push(id);
    return key;
  }

  /**
   * A call of the message being read: a key of its own (no lookup), remembered with the
   * other calls of its message, which the results after it find without a lookup.
   */
  call(id) {
    const recent = this.recentCalls;
    if (this.recentOf !== this.index) {
      this.recentLength = 0;
      this.recentOf = this.index;
    }
    const key = this.newKey(id);
    this.linkKey(CALL, key);
    const at = this.recentLength;
    recent[at] = id;
    recent[at + 1] = key;
    this.recentLength = at + 2;
  }

  /**
   * A result for call `id`: the key of the latest call with that id before it. The calls of
   * the latest message with calls are looked at first (where results usually are); else
   * `callKey`. A result with no call gets a key no call has.
   */
  result(id) {
    const key = this.findCall(id);
    this.linkKey(RESULT, key !== undefined ? key : this.newKey(id));
  }

  /** The key of the latest call with id `id` before the message being read (undefined if
   * none): the calls of the latest message with calls first, else `callKey`. */
  findCall(id) {
    const recent = this.recentCalls;
    for (let c = 0; c < this.recentLength; c += 2) {
      if (recent[c] === id) return recent[c + 1];
    }
    return this.callKey(id);
  }

  /**
   * A Gemini `functionResponse` (SPEC §2: matched by id, else by order and name): the call
   * with its id; else the first call named `name` of the latest message with calls that no
   * response before it answered (a call with an id answered by a response without one, as
   * the SDK's examples write them, or the other way round); else the latest call of that
   * name without an id. A result with no call gets a key no call has.
   */
  namedResult(id, name) {
    let key = id !== undefined ? this.findCall(id) : undefined;
    if (key === undefined) key = this.unansweredCall(name);
    if (key === undefined) key = this.findCall(`name:${name}`);
    this.linkKey(RESULT, key !== undefined ? key : this.newKey(id ?? `name:${name}`));
  }

  /** The key of the first call named `name` among the latest calls (those of Gemini message
   * `recentOf`, whose functionCall parts made them, in order) with no result yet. */
  unansweredCall(name) {
    if (this.recentLength === 0) return undefined;
    const parts = this.items[this.recentOf].parts, recent = this.recentCalls, data = this.linkData;
    let c = 0;
    for (const p of parts) {
      if (p === null || typeof p !== "object" || !p.functionCall) continue;
      if (c >= this.recentLength) break;
      const key = recent[c + 1];
      c += 2;
      if (p.functionCall.name !== name) continue;
      let answered = false;
      for (let at = this.linkStart[this.recentOf]; at < this.linkLength && !answered; at += 2) {
        answered = data[at] === key && data[at + 1] === RESULT;
      }
      if (!answered) return key;
    }
    return undefined;
  }

  /** The key of the latest call with id `id` among the links before `end` (read here or
   * taken over), by a map built as far as needed on the first lookup and extended after;
   * `end` never goes back. */
  callKey(id, end = this.linkLength) {
    if (this.byId === null) this.byId = new Map();
    const byId = this.byId, data = this.linkData, ids = this.ids;
    for (let at = this.byIdAt; at < end; at += 2) {
      if (data[at + 1] === CALL) byId.set(ids[data[at]], data[at]);
    }
    this.byIdAt = end;
    return byId.get(id);
  }

  linkKey(kind, key) {
    let data = this.linkData;
    const at = this.linkLength;
    if (at + 2 > data.length) data = this.growLinks(at + 2);
    data[at] = key;
    data[at + 1] = kind;
    this.linkLength = at + 2;
  }

  growLinks(least) {
    const grown = new Uint32Array(Math.max(least, this.linkData.length * 2));
    grown.set(this.linkData.subarray(0, this.linkLength));
    this.linkData = grown;
    return grown;
  }

  /**
   * Messages i … i + count - 1 are messages j … of `from`, unchanged: take over what was
   * read of them (block copies).
   */
  take(i, from, j, count) {
    const end = j + count;
    this.roles.set(from.roles.subarray(j, end), i);
    this.flags.set(from.flags.subarray(j, end), i);
    this.images.set(from.images.subarray(j, end), i);
    if (this.lengthMode) this.lengthTokens.set(from.lengthTokens.subarray(j, end), i);
    this.raw.set(from.raw.subarray(j, end), i);
    const stamps = this.stamps, old = from.stamps;
    // (A continued reading has the stamps of `from` in place already.)
    if (old !== stamps) {
      for (let x = 0; x < count; x++) {
        const to = stamps.writable(i + x), src = old.chunks[(j + x) >> STAMP_SHIFT];
        for (let s = slot(i + x), t = slot(j + x), e = t + STAMP; t < e; s++, t++) to[s] = src[t];
      }
    }
    const first = from.linkStart[j], last = from.linkStart[end];
    const at = this.linkLength;
    if (at + last - first > this.linkData.length) this.growLinks(at + last - first);
    this.linkData.set(from.linkData.subarray(first, last), at);
    if (at === first) this.linkStart.set(from.linkStart.subarray(j, end), i);
    else for (let k = 0; k < count; k++) this.linkStart[i + k] = at + from.linkStart[j + k] - first;
    this.linkLength = at + last - first;
    // A result taken over has the key of the latest call with its id before it in `from`;
    // unless nothing came before the run in either, that call may not be the latest here.
    if (i > 0 || j > 0) this.rekeyResults(at, this.linkLength);
    this.recentFrom(i, count);
  }

  /** After messages `i … i + count - 1` were taken over: the latest calls are those of the
   * last of them with calls, when it is one of the last few (else `callKey` finds them). */
  recentFrom(i, count) {
    const recent = this.recentCalls, data = this.linkData, ids = this.ids;
    this.recentLength = 0;
    this.recentOf = -1;
    for (let k = i + count - 1, stop = Math.max(i, i + count - NEAR_MESSAGES); k >= stop; k--) {
      const last = k + 1 < i + count ? this.linkStart[k + 1] : this.linkLength;
      for (let at = this.linkStart[k]; at < last; at += 2) {
        if (data[at + 1] === CALL) {
          recent[this.recentLength++] = ids[data[at]];
          recent[this.recentLength++] = data[at];
        }
      }
      if (this.recentLength > 0) {
        this.recentOf = k;
        return;
      }
    }
  }

  /**
   * Results among links `start … end` (a run taken over) get the key of the latest call
   * with their id before them here (they keep theirs when there is none). A result whose
   * call is in the same run, a few links before it (the usual case), keeps its key without
   * a lookup: nothing between them changed.
   */
  rekeyResults(start, end) {
    const data = this.linkData, ids = this.ids;
    for (let at = start; at < end; at += 2) {
      if (data[at + 1] !== RESULT) continue;
      const key = data[at];
      let near = false;
      for (let back = at - 2, stop = Math.max(start, at - 2 * NEAR_LINKS); back >= stop; back -= 2) {
        if (data[back] === key && data[back + 1] === CALL) {
          near = true;
          break;
        }
      }
      if (near) continue;
      const call = this.callKey(ids[key], at);
      if (call !== undefined) data[at] = call;
    }
  }

  /** A reading for another call on the same messages, sharing what was read. */
  again(options) {
    const r = new Reading(0, options, this.ids);
    r.version = this.version;
    r.n = this.n;
    r.roles = this.roles;
    r.flags = this.flags;
    r.images = this.images;
    r.masks = this.masks;
    r.checked = this.checked;
    r.detected = this.detected;
    r.lengthTokens = this.lengthTokens;
    r.roleCodes = this.roleCodes;
    r.raw = this.raw;
    r.stamps = this.stamps;
    r.linkStart = this.linkStart;
    r.linkData = this.linkData;
    r.linkLength = this.linkLength;
    return r;
  }

  isSummaryText(text) {
    if (typeof text !== "string") return false;
    let at = 0, c = text.charCodeAt(0);
    while (c <= 32) c = text.charCodeAt(++at);
    // (The tag opens with "<": most texts are told apart without a call of startsWith.)
    if (c !== 60 || !text.startsWith(this.openTag, at)) return false;
    // Wrapped in the tag, not only opened by it: a user's paste of a summary followed by a
    // request is that user's input (it was taken for a summary, and replaced).
    let end = text.length;
    while (end > 0 && text.charCodeAt(end - 1) <= 32) end--;
    return text.endsWith(this.closeTag, end);
  }

  /** The format read, as the core numbers it (`FORMAT_CODES`). */
  get formatCode() {
    return FORMAT_CODES.indexOf(this.format);
  }

  get links() {
    return this.linkData.subarray(0, this.linkLength);
  }

  /** Message i's links are `links[linkStarts[i] .. linkStarts[i + 1]]`. */
  get linkStarts() {
    return this.linkStart;
  }

  /**
   * Length mode: the estimate of each of messages `indices` before overheads, its texts'
   * summed as they were read and its payloads' (kept as they were) written out now.
   */
  lengths(indices) {
    const texts = this.texts, starts = this.pieceStart, out = new Float64Array(indices.length);
    for (let k = 0; k < indices.length; k++) {
      const i = indices[k];
      let tokens = this.lengthTokens[i];
      for (let q = starts[i], end = starts[i + 1]; q < end; q++) tokens += Math.ceil(texts.text(q).length / this.charsPerToken);
      out[k] = tokens;
    }
    return out;
  }

  /** Whether some texts wait to be estimated (in length mode: payloads, see `lengths`). */
  get deferred() {
    return this.texts.length > 0;
  }

  /** The length of the texts of messages `indices` (UTF-16 code units), counted only as far
   * as past `limit`, when given. */
  units(indices, limit) {
    return textUnits(this.texts, this.pieceStart, indices, limit);
  }

  /** How many texts each of messages `indices` has to estimate, and the code of its role
   * name (`roleText`) in the top 8 bits. */
  pieceCounts(indices) {
    const starts = this.pieceStart, codes = this.roleCodes, counts = new Uint32Array(indices.length);
    for (let k = 0; k < indices.length; k++) {
      const i = indices[k];
      // (A message of 2^24 texts would need gigabytes.)
      counts[k] = (starts[i + 1] - starts[i]) | ((codes.length > i ? codes[i] : 0) << 24);
    }
    return counts;
  }

  /** The role names that `roleCodes` number, from 1, each followed by "\0". */
  get roleNames() {
    return ROLE_NAMES_TEXT;
  }

  /** Whether the core asks for texts as UTF-16 (a Uint16Array `dest` for `encodeInto`):
   * where Node's `Buffer` writes them (several times faster than `TextEncoder` writes
   * UTF-8). */
  get wideTexts() {
    return NODE_BUFFER !== undefined;
  }

  /**
   * The texts of messages `indices` (in that order), piece after piece from piece number
   * `from`, into `dest` (a view of wasm memory) from its start: UTF-16 code units into a
   * Uint16Array (see `wideTexts`), UTF-8 into a Uint8Array; each piece's length in `dest`'s
   * units into `lengths[piece]`. A round ends at the piece that does not fit in what is
   * left of `dest`: returns the units written (the core weighs them, then asks for the
   * next round). A piece that does not fit in all of `dest` is written in parts, cut
   * between code points, one round each: such a round returns minus the part's units, and
   * the next round (asked from the same piece) goes on with the rest. So `dest`, the
   * memory the core keeps for texts, never grows to fit the longest text.
   */
  encodeInto(indices, from, dest, lengths) {
    const wide = dest.BYTES_PER_ELEMENT === 2;
    const texts = this.texts, starts = this.pieceStart;
    // Where piece `from` is: where the last round of this estimate stopped (else found),
    // and `off`, the units of it written already (by rounds that wrote a part of it).
    let { k, q, p, off } = this.cursor !== undefined && this.cursor.p === from ? this.cursor : pieceAt(starts, indices, from);
    this.cursor = undefined;
    let at = 0;
    // (A Buffer over `dest`, made for the first long piece: most first calls have none.)
    let bytes;
    for (; k < indices.length; k++, q = -1) {
      const end = starts[indices[k] + 1];
      if (q < 0) q = starts[indices[k]];
      for (; q < end; q++, off = 0) {
        let piece = texts.text(q);
        if (off > 0) piece = piece.substring(off);
        const length = piece.length;
        let written = -1;
        if (wide) {
          if (length <= dest.length - at) {
            if (length <= SHORT_PIECE) {
              for (let c = 0; c < length; c++) dest[at + c] = piece.charCodeAt(c);
              written = length;
            } else {
              bytes ??= NODE_BUFFER.from(dest.buffer, dest.byteOffset, dest.byteLength);
              written = (UCS2_WRITE ? bytes.ucs2Write(piece, 2 * at) : bytes.write(piece, 2 * at, "utf16le")) / 2;
            }
          }
        } else if (length <= SHORT_PIECE && length <= dest.length - at) {
          // A short ASCII piece (a role, an id, a name) is copied faster than encoded.
          let c = 0;
          while (c < length) {
            const unit = piece.charCodeAt(c);
            if (unit >= 0x80) break;
            dest[at + c++] = unit;
          }
          written = c === length ? c : encodeUtf8(piece, dest, at);
        } else if (length <= dest.length - at) {
          written = encodeUtf8(piece, dest, at);
        }
        // (Else it cannot fit: UTF-8 takes a byte a code unit at least.)
        if (written < 0 && at > 0) {
          this.cursor = { k, q, p, off };
          return at;
        }
        if (written < 0) {
          // A part of the piece, all that `dest` holds.
          let read = dest.length;
          if (wide) {
            // (Not between the two halves of a surrogate pair.)
            if ((piece.charCodeAt(read - 1) & 0xFC00) === 0xD800) read--;
            bytes ??= NODE_BUFFER.from(dest.buffer, dest.byteOffset, dest.byteLength);
            written = (UCS2_WRITE ? bytes.ucs2Write(piece, 0, 2 * read) : bytes.write(piece, 0, 2 * read, "utf16le")) / 2;
          } else {
            ({ read, written } = ENCODER.encodeInto(piece, dest));
          }
          this.cursor = { k, q, p, off: off + read };
          lengths[p] = written;
          return -written;
        }
        at += written;
        lengths[p++] = written;
      }
    }
    return at;
  }

  setRaw(raw) {
    this.raw.set(raw);
  }

  /** What a late estimate needs (`params` is a view of wasm memory: copied). */
  setEstimator(params) {
    this.estimator = Float64Array.from(params);
  }

  /** Done with the texts: every message that needs an estimate has one. */
  dropTexts() {
    this.texts = new TextChunks();
  }

}

// ---- Readings kept between calls ------------------------------------------------------
//
// A chat calls the reducer on every turn with the same message objects and a few new
// ones. A call takes over from an earlier reading of the same conversation what it read
// of every message object that is still there with the same stamp, and reads only the
// others. Readings are found by the conversation's first message object, and kept only
// as long as that object is alive (a conversation the app dropped takes its readings with
// it), a few per conversation (calls with other options may alternate); the latest are
// also held on their own, for a reduced history that no longer starts with the same
// message. Counts the caller gives (`tokenCounts`) are never kept; `countTokens`' counts
// are, for the same function.

/** Readings by their first message object, most recent first. */
const BY_FIRST = new WeakMap();

/** How many readings one first message keeps (one per set of estimator options, or two:
 * a whole history's and the shorter one of its prompt, see `keepReading`). */
const PER_FIRST = 4;

/** Calls that found their reading among those of their first message, and how many of
 * them a reading may go unused before it goes (`keepReading`). */
let CALLS = 0;
const KEEP_UNUSED = 8;

/** How far from its end a call's messages are searched for a kept reading's last one. */
const LAST_LOOKED_AT = 64;

/** The latest readings, most recent first. */
const RECENT = [];

const KEEP_RECENT = 2;

/** Shorter inputs are read afresh every time (unless a `countTokens` counts them): cheaper
 * than a lookup. */
const KEEP_MIN_MESSAGES = 32;

/** Whether reading `r` was made with these options (format, tag, the numbers its counts
 * depend on) and this `countTokens`. */
function madeWith(r, options, countTokens) {
  const a = r.options;
  if (a.format !== options.format || a.tag !== options.tag || r.countTokens !== countTokens) return false;
  const x = a.params, y = options.params;
  if (x.length !== y.length) return false;
  for (let k = 0; k < x.length; k++) if (!Object.is(x[k], y[k])) return false;
  return true;
}

/** The kept reading for this call, and where in it the call's first message is. */
function previousReading(items, options, countTokens) {
  if (items.length === 0) return undefined;
  const first = items[0];
  const own = BY_FIRST.get(first);
  if (own !== undefined) {
    // Of those made with these options, the one whose last message is latest among this
    // call's (looked for among the last few): the history it grew from, or the reduced one
    // an app went on with, or the whole history whose prompt this call checks; of two, the
    // longer.
    let best, bestAt = -2;
    for (const r of own) {
      if (!madeWith(r, options, countTokens)) continue;
      const last = r.items[r.items.length - 1];
      let at = items.length - 1;
      const stop = Math.max(0, items.length - LAST_LOOKED_AT);
      while (at >= stop && items[at] !== last) at--;
      if (at < stop) at = -1;
      if (at > bestAt || (at === bestAt && r.items.length > best.items.length)) {
        best = r;
        bestAt = at;
      }
    }
    if (best !== undefined) {
      best.used = ++CALLS;
      return { reading: best, at: 0 };
    }
  }
  for (const r of RECENT) {
    if (!madeWith(r, options, countTokens)) continue;
    const at = r.items.indexOf(first);
    if (at >= 0) return { reading: r, at };
  }
  return undefined;
}

/** Whether reading `r`'s link keys are mostly those of calls long gone (it is then not
 * taken over: a fresh reading numbers its calls from 0). */
function staleKeys(r) {
  return r.ids.length > r.linkLength + 4096;
}

/** Keeps `reading` for the next calls, in place of the one it took over from. */
function keepReading(reading) {
  const first = reading.items[0];
  const before = reading.previous;
  reading.previous = undefined;
  let own = BY_FIRST.get(first);
  if (own === undefined) BY_FIRST.set(first, (own = []));
  // It replaces the reading it took over from, unless it read fewer messages: the prompt a
  // reduction made, estimated or checked before the next turn, must not take the place of
  // the whole history's reading (whose every dropped message the next turn would count
  // again: `countTokens` called for each).
  const k = own.findIndex((r) => (r === before || (before === undefined && madeWith(r, reading.options, reading.countTokens))) &&
    r.items.length <= reading.items.length);
  if (k >= 0) own.splice(k, 1);
  // (A reading no call took over from for a while goes: the longer one kept beside a
  // shorter, once the app went on with the reduced history.)
  reading.used = CALLS;
  for (let j = own.length - 1; j >= 0; j--) if (CALLS - own[j].used > KEEP_UNUSED) own.splice(j, 1);
  own.unshift(reading);
  if (own.length > PER_FIRST) own.length = PER_FIRST;
  const j = RECENT.indexOf(before);
  if (j >= 0) RECENT.splice(j, 1);
  RECENT.unshift(reading);
  if (RECENT.length > KEEP_RECENT) RECENT.length = KEEP_RECENT;
}

/**
 * For each message, the index of the same unchanged message object in `prev` (-1: read it).
 * Walks both in order; a message that is not next in `prev` is searched for (removed
 * messages, a reduced history), by a scan and past a budget by a map.
 */
function align(items, prev, start, same, from, counts) {
  const old = prev.items, raw = prev.raw, stamps = prev.stamps;
  const n = items.length, m = old.length;
  let j = start, scanned = 0, where;
  for (let i = 0; i < n; i++) {
    // Messages in their places, unchanged (the usual case: a history that grew): one loop.
    const end = sameRun(items, i, prev, j, same, from, counts);
    if (end > i) {
      j += end - i;
      i = end - 1;
      continue;
    }
    const msg = items[i];
    let k = -1;
    if (j < m && old[j] === msg) k = j;
    else if (where !== undefined) k = where.get(msg) ?? -1;
    else if (scanned < 4 * m + 1024) {
      k = old.indexOf(msg, j);
      scanned += (k < 0 ? m : k) - j + 1;
    } else {
      where = new Map();
      for (let x = 0; x < m; x++) where.set(old[x], x);
      k = where.get(msg) ?? -1;
    }
    if (k < 0) continue;
    // A count is taken over when there is one (a count given by tokenCounts is not kept).
    if (raw[k] < 0 && !(counts !== undefined && counts[i] >= 0)) continue;
    if (!sameStamp(same, msg, stamps.chunks[k >> STAMP_SHIFT], slot(k))) continue;
    from[i] = k;
    j = k + 1;
  }
}

/**
 * How far messages `items[i …]` are messages `prev.items[j …]`, each unchanged (its stamp)
 * and counted (by `prev`, or by `counts`); `from` (if given) records them. Stops at the
 * first that is not, or whose fields throw (it is then read afresh, which reports it).
 */
function sameRun(items, i, prev, j, same, from, counts) {
  const old = prev.items, raw = prev.raw, stamps = prev.stamps;
  const n = items.length, m = old.length;
  try {
    for (; i < n && j < m; i++, j++) {
      const msg = items[i];
      if (msg !== old[j] || (raw[j] < 0 && !(counts !== undefined && counts[i] >= 0)) || !same(msg, stamps.chunks[j >> STAMP_SHIFT], slot(j))) break;
      if (from !== undefined) from[i] = j;
    }
  } catch {
    // items[i] is read afresh
  }
  return i;
}

/** Whether `items` are the messages `prev` read, in order, each unchanged and counted. */
function allUnchanged(items, prev, given) {
  return prev.n === items.length && sameRun(items, 0, prev, 0, READERS[prev.format].same, undefined, given) === items.length;
}

/** The largest token count taken from `tokenCounts` or `countTokens` (as from
 * `recordUsage`: `MAX_COUNT` in history.rs): a sum of any number of them stays finite, where
 * two counts of 1e308 made the totals Infinity. No context window comes near it. */
const MAX_COUNT = Number.MAX_SAFE_INTEGER;

const AT_MOST = `at most ${MAX_COUNT} (Number.MAX_SAFE_INTEGER)`;

/** `tokenCounts[i]` for every message: the count, or -1 where none is given (SPEC §3: what
 * is not a finite number ≥ 0 leaves the message to the next source). A finite count above
 * `MAX_COUNT` is INVALID_CONFIG. */
function givenCounts(tokenCounts, n) {
  const given = new Float64Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    let c;
    try {
      c = tokenCounts[i];
    } catch (e) {
      throw new ReduceError("INVALID_CONFIG", `reading tokenCounts[${i}] threw: ${reason(e)}`, i, "tokenCounts");
    }
    if (typeof c !== "number" || !(c >= 0) || c === Infinity) continue;
    if (c > MAX_COUNT) {
      throw new ReduceError("INVALID_CONFIG", `tokenCounts[${i}] is ${c}: a token count must be ${AT_MOST}`, i, "tokenCounts");
    }
    given[i] = c;
  }
  return given;
}

/**
 * Reads `messages` for the core: in format `formatCode` (of `FORMAT_CODES`; else "auto"),
 * recognising summaries by `tag`, in length mode (`charsPerToken`) or not. `params`: the
 * numbers a count depends on besides the message (a reading is taken over only under the
 * same ones). `tokenCounts`, `countTokens`: the caller's, or undefined. `keep`: whether
 * this reading may serve the next calls (the input of a call, not a message this library
 * wrote).
 */
export function readMessages(messages, formatCode, tag, lengthMode, charsPerToken, params, countTokens, tokenCounts, keep) {
  const options = {
    format: FORMAT_CODES[formatCode] ?? "auto", tag, lengthMode, charsPerToken,
    params: Float64Array.from(params), // (a view of wasm memory)
  };
  const items = messageList(messages);
  const n = items.length;
  if (typeof countTokens !== "function") countTokens = undefined;
  const given = Array.isArray(tokenCounts) ? givenCounts(tokenCounts, n) : undefined;
  keep = keep === true && (n >= KEEP_MIN_MESSAGES || countTokens !== undefined);
  let prev = keep ? previousReading(items, options, countTokens) : undefined;
  if (prev !== undefined && staleKeys(prev.reading)) prev = undefined;
  // Messages a reduction left unestimated are estimated now, once: the calls after this one
  // take every count over.
  if (prev !== undefined && prev.reading.pending) completeReading(prev.reading);

  // The same messages as last time, all unchanged: the same reading, for this call.
  if (prev !== undefined && prev.at === 0 && allUnchanged(items, prev.reading, given)) {
    const before = prev.reading;
    const r = before.again(options);
    r.format = before.format;
    r.items = before.items; // the same objects: the copy dies young
    r.countTokens = countTokens;
    if (given !== undefined) r.given = given;
    r.keep = keep;
    r.previous = before;
    return r;
  }

  // Which messages were read before, unchanged.
  const from = new Int32Array(n).fill(-1);
  if (prev !== undefined) {
    align(items, prev.reading, prev.at, READERS[prev.reading.format].same, from, given);
  }
  checkObjects(items, from);
  // Whether the messages start with all those of the reading taken over, in place (a
  // history that grew): what was read of them goes on (see `take`, and `detect` below).
  let first = 0;
  while (first < n && from[first] === first) first++;
  const continues = prev !== undefined && prev.reading.n > 0 && first >= prev.reading.n;
  // The format: for auto, from every message's fit mask (kept ones are known; fresh ones,
  // once one format is left, are checked by their reader).
  const masks = new Uint8Array(n), checked = new Uint8Array(n);
  let format = options.format;
  let detected;
  if (format === "auto") {
    let start;
    if (prev !== undefined) {
      const oldMasks = prev.reading.masks, oldChecked = prev.reading.checked;
      masks.set(oldMasks.subarray(0, first));
      checked.set(oldChecked.subarray(0, first));
      for (let i = first; i < n; i++) {
        const k = from[i];
        if (k >= 0) {
          masks[i] = oldMasks[k];
          checked[i] = oldChecked[k];
        }
      }
      // Detection over the same messages ends as it did: it goes on from there.
      if (continues && prev.reading.detected !== undefined) start = prev.reading.detected;
    }
    detected = detect(items, masks, checked, countTokens === undefined ? from : undefined, start);
    format = detected.format;
  }
  const deferFrom = detected !== undefined ? detected.deferFrom : n;
  if (prev !== undefined && format !== prev.reading.format) {
    from.fill(-1);
    prev = undefined;
  }
  const reader = own(READERS, format);
  const before = prev !== undefined ? prev.reading : undefined;
  const r = new Reading(n, options, before !== undefined ? before.ids : [], before !== undefined && continues ? before : undefined);
  r.format = format;
  r.items = items;
  r.masks = masks;
  r.checked = checked;
  r.detected = detected;
  r.countTokens = countTokens;
  if (given !== undefined) r.given = given;
  r.keep = keep;
  r.previous = before;
  for (let i = 0; i < n;) {
    const k = from[i];
    if (k >= 0) {
      let run = 1;
      while (i + run < n && from[i + run] === k + run) run++;
      r.take(i, before, k, run);
      r.pieceStart.fill(r.texts.length, i, i + run);
      i += run;
    } else {
      const check = i >= deferFrom;
      let fits;
      try {
        fits = readFresh(r, reader, i, items[i], given !== undefined && given[i] >= 0, countTokens, check);
      } catch (e) {
        // Which error `detect` would have reported first: this message's own check (it
        // could not be read, or does not fit), else a later message's, else the reading's.
        if (deferFrom < n) {
          if (check && fitMask(i, items[i], detected.possible) === 0) throw misfit(i, items[i], detected);
          checkDeferred(items, from, i, detected);
        }
        throw e;
      }
      if (!fits) throw misfit(i, items[i], detected);
      i++;
    }
  }
  r.linkStart[n] = r.linkLength;
  r.pieceStart[n] = r.texts.length;
  return r;
}

/** Reads message i afresh (`counted`: its count is given), with its stamp and, from the
 * caller's `countTokens`, its count. `check`: whether it is first to be checked to fit the
 * reader's format (false, nothing read, when it does not). */
function readFresh(r, reader, i, m, counted, countTokens, check) {
  r.linkStart[i] = r.linkLength;
  r.pieceStart[i] = r.texts.length;
  r.collectTexts = !counted && countTokens === undefined;
  const read = readOne(reader, r, i, m, check);
  if (read === MISFIT) return false;
  if (read !== STAMPED) {
    try {
      reader.stamp(m, r.stamps.writable(i), slot(i), stampWith);
    } catch (e) {
      throw bad(i, `could not be read: ${reason(e)}`);
    }
  }
  if (counted || countTokens === undefined) return true;
  // The user's own function: what it throws reaches the caller unchanged.
  const c = countTokens(m, i);
  if (typeof c !== "number" || !(c >= 0 && c <= MAX_COUNT)) {
    throw new ReduceError("INVALID_CONFIG",
      `countTokens returned ${describe(c)} for message ${i}; it must return a finite number ≥ 0, ${AT_MOST}`,
      i, "countTokens");
  }
  r.raw[i] = c;
  return true;
}

/**
 * `tokens[i]`: message i's count before calibration, estimated where `raw` had none (empty:
 * nothing changed). The reading becomes the one the next calls take over from.
 */
export function remember(reading, tokens) {
  if (tokens.length > 0) reading.raw.set(tokens);
  if (reading.keep && reading.n > 0) keepReading(reading);
}

/** Reads message i (`check`: if it fits the reader's format); what `read` returns, or
 * `MISFIT`. */
export function readOne(reader, r, i, m, check) {
  try {
    if (!check) return reader.read(r, i, m);
    if (reader.readChecked !== undefined) return reader.readChecked(r, i, m);
    return reader.looks(m) ? reader.read(r, i, m) : MISFIT;
  } catch (e) {
    if (e instanceof ReduceError) throw e;
    throw bad(i, `could not be read: ${reason(e)}`);
  }
}

/** log2 of the texts a chunk of `TextChunks` holds. */
const TEXT_SHIFT = 12;

const TEXT_CHUNK = 1 << TEXT_SHIFT;

/**
 * A list of texts in arrays of TEXT_CHUNK: an array of that many stays in V8's young
 * generation, while one of all a long history's texts (tens of thousands) is a large object,
 * into which every store of a string cost several times as much (measured: 34,000 pushes
 * 1.2–1.5 ms into one array, 0.5 ms into chunks).
 */
class TextChunks {
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

const ENCODER = new TextEncoder();

/** `piece` as UTF-8 into `dest` from `at`: the bytes written, or -1 if it does not fit. */
function encodeUtf8(piece, dest, at) {
  const { read, written } = ENCODER.encodeInto(piece, dest.subarray(at));
  return read < piece.length ? -1 : written;
}

/** Node's `Buffer` (undefined elsewhere, and where a page defines one of its own). */
const NODE_BUFFER = typeof globalThis.process === "object" && globalThis.process !== null &&
  typeof globalThis.process.versions?.node === "string" && typeof globalThis.Buffer?.from === "function"
  ? globalThis.Buffer : undefined;

/** The role names met (`Reading.roleText`), numbered from 1 in the order met: a code
 * keeps its name for good (readings taken over keep their codes). At most 255; a name not
 * among them, or one with a "\0" (the separator of `ROLE_NAMES_TEXT`), is a text. */
const ROLE_NAMES = [];

let ROLE_NAMES_TEXT = "";

/** The code of role name `name` (0 for none: not a non-empty string, or no room left). */
function roleCode(name) {
  for (let k = 0; k < ROLE_NAMES.length; k++) if (ROLE_NAMES[k] === name) return k + 1;
  if (typeof name !== "string" || name.length === 0 || ROLE_NAMES.length === 255 || name.includes("\0")) return 0;
  ROLE_NAMES.push(name);
  ROLE_NAMES_TEXT += `${name}\0`;
  return ROLE_NAMES.length;
}

/** Whether `Buffer` has `ucs2Write` (as Node's has had since its first releases): what
 * `write(…, "utf16le")` calls after checking its arguments, which took a sixth of the time. */
const UCS2_WRITE = typeof NODE_BUFFER?.prototype.ucs2Write === "function";

/** Pieces up to this long are copied by hand (UTF-8: tried as ASCII first). */
const SHORT_PIECE = 64;

/** Where piece number `p` of the texts of messages `indices` is: `{ k, q, p }`, `q` the
 * text's number in the reading (-1 at a message's start). */
function pieceAt(starts, indices, p) {
  let k = 0, before = 0;
  for (; k < indices.length; k++) {
    const count = starts[indices[k] + 1] - starts[indices[k]];
    if (before + count > p) return { k, q: starts[indices[k]] + (p - before), p, off: 0 };
    before += count;
  }
  return { k, q: -1, p, off: 0 };
}

/** The UTF-16 length of the texts of messages `indices` (as far as past `limit`). */
function textUnits(texts, starts, indices, limit = Infinity) {
  let units = 0;
  for (let k = 0; k < indices.length && units <= limit; k++) {
    for (let q = starts[indices[k]], end = starts[indices[k] + 1]; q < end; q++) units += texts.text(q).length;
  }
  return units;
}

/**
 * The message objects, each read once: whatever getters or proxies the array has, the
 * result is built from these same objects (`checkObjects` checks they are objects). `by`
 * opens an error's message (who was given the messages).
 */
export function messageList(messages, by = "") {
  let items;
  try {
    // (Inside: `Array.isArray` throws for a revoked proxy.)
    if (!Array.isArray(messages)) {
      throw new ReduceError("INVALID_MESSAGES", `${by}messages must be an array of messages, got ${describe(messages)}`);
    }
    const n = messages.length;
    if (!(n <= MAX_MESSAGES)) {
      throw new ReduceError("INVALID_MESSAGES", `${by}messages has ${n} entries; at most ${MAX_MESSAGES} are accepted`);
    }
    // A native copy (a proxy's traps run here, once).
    items = Array.prototype.slice.call(messages);
  } catch (e) {
    if (e instanceof ReduceError) throw e;
    throw new ReduceError("INVALID_MESSAGES", `${by}messages could not be read: ${reason(e)}`);
  }
  return items;
}

/** Every message not taken over from an earlier reading must be an object. */
function checkObjects(items, from) {
  for (let i = 0; i < items.length; i++) {
    if (from[i] >= 0) continue; // the same object as one read before
    const m = items[i];
    if (m === null || typeof m !== "object") throw bad(i, `expected a message object, got ${describe(m)}`);
  }
}
