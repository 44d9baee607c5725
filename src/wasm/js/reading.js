// @eager: every call runs this module, so it is compiled at import (see build.rs).
// What one call read of the user's message objects (`Reading`): the typed arrays the core
// takes, the links of tool calls, the texts the estimator asks for, and what the next call
// may take over (read.js makes a reading, reuse.js keeps it between calls).

import { jsonText, plainJson } from "./common.js";
import { CALL, CALLS_ONLY, FORMAT_NAMES, RESULT, SUMMARY, TOOL, TOOL_INDEX, TOOL_INDEX_HEADER } from "./contract.js";
import { linkId, standsAlone } from "./formats/content.js";
import { STAMP, STAMP_SHIFT, Stamps, slot } from "./formats/stamps.js";
import {
  ENCODER, NODE_BUFFER, ROLE_NAMES_TEXT, SHORT_PIECE, TextChunks, UCS2_WRITE, encodeUtf8, pieceAt,
  roleCode, textUnits,
} from "./texts.js";

/** How many links before a result taken over its call is looked for (see `farResult`). */
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
    // Length mode: each message's text lengths, summed as the texts are read (empty
    // otherwise); `lengths` divides and rounds once per message (SPEC §3).
    this.lengthChars = new Float64Array(options.lengthMode ? n : 0);
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
      this.stamps = new Stamps(n);
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
    // Where the orphans are, as offsets into `linkData`: handed over by the core
    // (`setOrphans`) before anything is copied without them (see `withoutOrphans`).
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

  /** The message being read carries tool calls and nothing else but reasoning (see
   * `CALLS_ONLY`): with none of them answered, it goes whole. */
  callsOnly() {
    this.flags[this.index] |= CALLS_ONLY;
  }

  text(value) {
    if (typeof value !== "string" || value.length === 0) return;
    if (this.lengthMode) {
      this.lengthChars[this.index] += value.length;
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

  /**
   * A result that answers the latest call with id `id` before it when there is one, and
   * stands alone when there is none: no link, so no orphan (an AI SDK approval response
   * whose request the prompt does not have: the SDK removes requests from a model's prompt).
   * Returns whether it was linked.
   */
  answer(id) {
    const key = this.findCall(id);
    if (key === undefined) return false;
    this.linkKey(RESULT, key);
    return true;
  }

  /** The key of the latest call with id `id` before the message being read (undefined if
   * none): the calls of the latest message with calls first, else `callKey`. */
  findCall(id) {
    return this.recentKey(id) ?? this.callKey(id);
  }

  /** The key of the latest of the latest calls (see `findCall`) with id `id`, as `callKey`
   * finds it (a result taken over is paired as a fresh one, when a message has two calls of
   * one id); undefined if none. */
  recentKey(id) {
    const recent = this.recentCalls;
    for (let c = this.recentLength - 2; c >= 0; c -= 2) {
      if (recent[c] === id) return recent[c + 1];
    }
    return undefined;
  }

  /**
   * A Gemini `functionResponse` (SPEC §2: matched by id, else by order and name), of the call
   * turn it follows (right before it, or before the response turns between them: parallel
   * calls answered one turn each, as a history converted from OpenAI's has them): the call
   * with its id; else the first call named `name` there that no response before it answered
   * (a call with an id answered by a response without one, as the SDK's examples write them,
   * or the other way round; a response whose id no call has answers no call with another).
   * A response with no call there (one beyond the calls of its name, or of a name or id that
   * turn did not call, or after a user input or model turn) gets a key no call has: an orphan.
   */
  namedResult(id, name) {
    let key;
    if (this.followsCalls()) {
      if (id !== undefined) key = this.recentKey(id);
      // (A response with an id answers by name only a call without one.)
      if (key === undefined) key = this.unansweredCall(name, id !== undefined);
    }
    this.linkKey(RESULT, key !== undefined ? key : this.newKey(id ?? `name:${name}`));
  }

  /**
   * Whether the message being read follows the latest call turn (`recentOf`), right after it
   * or after response turns only (role TOOL), at most NEAR_MESSAGES - 1 messages later: as
   * far back as `recentFrom` finds that turn after a take-over, so a reading taken over and
   * a fresh one pair alike.
   */
  followsCalls() {
    const of = this.recentOf, roles = this.roles;
    if (of < 0) return false;
    let k = this.index - 1;
    for (const stop = Math.max(of, this.index - NEAR_MESSAGES); k > stop && roles[k] === TOOL;) k--;
    return k === of;
  }

  /** The key of the first call named `name` among the latest calls (those of Gemini message
   * `recentOf`, whose functionCall parts made them, in order) with no result yet (`noId`:
   * of those without an id). */
  unansweredCall(name, noId) {
    if (this.recentLength === 0) return undefined;
    const parts = this.items[this.recentOf].parts, recent = this.recentCalls, data = this.linkData;
    let c = 0;
    for (const p of parts) {
      if (p === null || typeof p !== "object" || !p.functionCall) continue;
      if (c >= this.recentLength) break;
      const key = recent[c + 1];
      c += 2;
      if (p.functionCall.name !== name || (noId && linkId(p.functionCall.id) !== undefined)) continue;
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
   * read of them (block copies). Returns how many it took: up to the first message with a
   * result whose call is not in the run shortly before it (`farResult`), which is to be
   * read afresh.
   */
  take(i, from, j, count) {
    const end = j + count;
    this.roles.set(from.roles.subarray(j, end), i);
    this.flags.set(from.flags.subarray(j, end), i);
    this.images.set(from.images.subarray(j, end), i);
    if (this.lengthMode) this.lengthChars.set(from.lengthChars.subarray(j, end), i);
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
    // A result taken over has the key of the call `from` paired it with; unless nothing came
    // before the run in either, that call may not be the latest with its id here: it gets
    // the latest's key. A response Gemini pairs by order and name (one without an id) is
    // paired anew, its message read afresh as a new one would be.
    const far = i > 0 || j > 0 ? this.farResult(at, this.linkLength) : -1;
    if (far >= 0) {
      let took = 0;
      while (this.linkStart[i + took + 1] <= far && took + 1 < count) took++;
      const cut = i + took;
      this.linkLength = this.linkStart[cut];
      this.images.fill(0, cut, i + count);
      if (this.lengthMode) this.lengthChars.fill(0, cut, i + count);
      this.raw.fill(-1, cut, i + count);
      // (The map of calls by id is made again as far as needed: it may have read links
      // that are read afresh.)
      if (this.byIdAt > this.linkLength) {
        this.byId = null;
        this.byIdAt = 0;
      }
      count = took;
    }
    // (None taken: the latest calls are still those read before.)
    if (count > 0) this.recentFrom(i, count);
    return count;
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
   * Results among links `start … end` (a run taken over) whose call is not a few links
   * before them in the run get the key of the latest call with their id before them here
   * (they keep theirs when there is none: orphans still); a result whose call is (the usual
   * case) keeps its key without a lookup: nothing between them changed. Returns the first
   * such Gemini response (paired with the turn before, by order and name: see
   * `namedResult`), or the first such result with no call here that stands alone without
   * one (`answer`: read afresh, it has no link), to be read afresh; else -1.
   */
  farResult(start, end) {
    const data = this.linkData, ids = this.ids;
    for (let at = start; at < end; at += 2) {
      if (data[at + 1] !== RESULT) continue;
      const key = data[at];
      let near = false;
      for (let back = at - 2, stop = Math.max(start, at - 2 * NEAR_LINKS); back >= stop && !near; back -= 2) {
        near = data[back] === key && data[back + 1] === CALL;
      }
      if (near) continue;
      if (this.format === "gemini") return at;
      const call = this.callKey(ids[key], at);
      if (call !== undefined) data[at] = call;
      else if (standsAlone(this.format, ids[key])) return at;
    }
    return -1;
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
    r.lengthChars = this.lengthChars;
    r.roleCodes = this.roleCodes;
    r.raw = this.raw;
    r.stamps = this.stamps;
    r.linkStart = this.linkStart;
    r.linkData = this.linkData;
    r.linkLength = this.linkLength;
    return r;
  }

  /** SUMMARY when `text` is a summary (with TOOL_INDEX when it is `progressive`'s index of
   * dropped tool calls), else 0. */
  summaryFlags(text) {
    if (typeof text !== "string") return 0;
    let at = 0, c = text.charCodeAt(0);
    while (c <= 32) c = text.charCodeAt(++at);
    // (The tag opens with "<": most texts are told apart without a call of startsWith.)
    if (c !== 60 || !text.startsWith(this.openTag, at)) return 0;
    // Wrapped in the tag, not only opened by it: a user's paste of a summary followed by a
    // request is that user's input (it was taken for a summary, and replaced).
    let end = text.length;
    while (end > 0 && text.charCodeAt(end - 1) <= 32) end--;
    if (!text.endsWith(this.closeTag, end)) return 0;
    return text.startsWith(TOOL_INDEX_HEADER, at + this.openTag.length) ? SUMMARY | TOOL_INDEX : SUMMARY;
  }

  /** Takes the orphan links the core found (`Structure::orphan_links`: places in the
   * links, two numbers each in `linkData`). */
  setOrphans(links) {
    const orphans = new Set();
    for (let k = 0; k < links.length; k++) orphans.add(2 * links[k]);
    this.orphans = orphans;
  }

  get orphansHanded() {
    return this.orphans !== undefined;
  }

  /** The format read, as the core numbers it (`FORMAT_NAMES`). */
  get formatCode() {
    return FORMAT_NAMES.indexOf(this.format);
  }

  get links() {
    return this.linkData.subarray(0, this.linkLength);
  }

  /** Message i's links are `links[linkStarts[i] .. linkStarts[i + 1]]`. */
  get linkStarts() {
    return this.linkStart;
  }

  /**
   * Length mode: the estimate of each of messages `indices` before overheads: the length of
   * all its texts (summed as they were read, its payloads kept as they were written out
   * now) over `charsPerToken`, rounded up once, as LangChain's approximate counter rounds.
   */
  lengths(indices) {
    const texts = this.texts, starts = this.pieceStart, out = new Float64Array(indices.length);
    for (let k = 0; k < indices.length; k++) {
      const i = indices[k];
      let chars = this.lengthChars[i];
      for (let q = starts[i], end = starts[i + 1]; q < end; q++) chars += texts.text(q).length;
      out[k] = Math.ceil(chars / this.charsPerToken);
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
              // (The length given: workerd's Buffer under nodejs_compat takes the whole buffer
              // as the default and refuses it past the offset.)
              written = (UCS2_WRITE ? bytes.ucs2Write(piece, 2 * at, 2 * length) : bytes.write(piece, 2 * at, 2 * length, "utf16le")) / 2;
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
