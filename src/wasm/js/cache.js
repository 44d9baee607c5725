// Summaries kept across requests (`config.summaryCache`, SPEC §7): the keys, derived from
// the content of the messages a summary covers, and the reads and writes of the cache. What
// a found summary means for the reduction is the core's (`strategies/cached.rs`).

/** The version of the keys and entries: a change of either makes earlier entries unfound. */
const VERSION = 1;

/** How many summaries' ends one index entry remembers (the newest first). */
const INDEX_ENDS = 16;

/**
 * The keys of every prefix of `reading.items` (three 32-bit hashes of each prefix's JSON
 * texts, after the options a summary depends on: `options`, the format, the tag, the role,
 * the mode), and where the conversation starts (`leading` system messages). Undefined when
 * a message has no JSON text (a BigInt, a cycle): such a history is not cached.
 * (The summarizer is no part of the key: a function has no content to hash. A cache shared
 * by summarizers that write differently should be one per summarizer, or name it in a
 * prefix of its own keys.)
 */
export function summaryKeys(reading, options, leading) {
  const items = reading.items, n = items.length;
  const a = new Uint32Array(n + 1), b = new Uint32Array(n + 1), c = new Uint32Array(n + 1);
  let ha = 0x811c9dc5, hb = 0x9747b28c, hc = 5381;
  const mix = (text) => {
    for (let k = 0; k < text.length; k++) {
      const x = text.charCodeAt(k);
      ha = Math.imul(ha ^ x, 0x01000193);
      hb = Math.imul(hb ^ x, 0x5bd1e995);
      hb ^= hb >>> 15;
      hc = (Math.imul(hc, 33) + x) | 0;
    }
  };
  mix(`${VERSION}\u0000${reading.format}\u0000${options}`);
  a[0] = ha, b[0] = hb, c[0] = hc;
  try {
    for (let i = 0; i < n; i++) {
      // (A separator the JSON text cannot contain: ["ab", "c"] is not ["a", "bc"].)
      mix(`\u0001${JSON.stringify(items[i])}`);
      a[i + 1] = ha, b[i + 1] = hb, c[i + 1] = hc;
    }
  } catch {
    return undefined;
  }
  return { a, b, c, leading, length: n };
}

const hex = (x) => x.toString(16).padStart(8, "0");

/** The key of the summary of the messages before `end`. */
function entryKey(keys, end) {
  return `chr-summary:${hex(keys.a[end])}${hex(keys.b[end])}`;
}

/** The key of the list of ends of the summaries stored for this conversation's start (its
 * leading system messages and first message). */
function indexKey(keys) {
  const at = Math.min(keys.leading + 1, keys.length);
  return `chr-summary-index:${hex(keys.a[at])}${hex(keys.b[at])}`;
}

/** `cache.get(key)`, awaited; undefined when it throws or rejects (a cache that fails is
 * a cache that misses: the reduction goes on without it). */
async function read(cache, key) {
  try {
    return await cache.get(key);
  } catch {
    return undefined;
  }
}

/** `cache.set(key, value)`, awaited; false when it throws or rejects. */
async function write(cache, key, value) {
  try {
    await cache.set(key, value);
    return true;
  } catch {
    return false;
  }
}

/**
 * The summary stored for the longest prefix of the history, `{ text, end }` (it covers the
 * messages from the leading system messages to `end`), or undefined. An entry whose digest,
 * start or shape does not match is ignored. At most a message must stay after it.
 */
export async function lookupSummary(cache, keys) {
  if (keys === undefined) return undefined;
  const ends = await read(cache, indexKey(keys));
  if (!Array.isArray(ends)) return undefined;
  const candidates = ends
    .filter((e) => Number.isInteger(e) && e > keys.leading && e < keys.length)
    .sort((x, y) => y - x);
  for (const end of candidates) {
    const entry = await read(cache, entryKey(keys, end));
    if (entry !== null && typeof entry === "object" && entry.v === VERSION && entry.end === end &&
      entry.start === keys.leading && entry.digest === keys.c[end] && typeof entry.text === "string" &&
      entry.text.trim() !== "") {
      return { text: entry.text, end };
    }
  }
  return undefined;
}

/** Stores the summary `text` of the messages `start..end` and adds `end` to the index of
 * this conversation's start. Whether both writes were taken. */
export async function storeSummary(cache, keys, start, end, text) {
  if (keys === undefined || start !== keys.leading) return false;
  const entry = { v: VERSION, start, end, digest: keys.c[end], text };
  if (!(await write(cache, entryKey(keys, end), entry))) return false;
  const known = await read(cache, indexKey(keys));
  const ends = [end];
  if (Array.isArray(known)) for (const e of known) if (e !== end && ends.length < INDEX_ENDS) ends.push(e);
  return write(cache, indexKey(keys), ends);
}

/** The history as `ChatHistory` would hold it: the messages `at..end` replaced by `summary`. */
export function substitute(reading, at, end, summary) {
  const items = reading.items;
  const out = items.slice(0, at);
  out.push(summary);
  for (let i = end; i < items.length; i++) out.push(items[i]);
  return out;
}
