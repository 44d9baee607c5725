// `progressive`'s index of dropped tool calls: a line for each tool group the core chose
// (strategies/progressive/index.rs), its calls with their arguments cut short and the
// offload id its originals are kept under, after the lines of the earlier index it takes
// over. Written as a summary, so that it is read back as one (protected, no message).

import { jsonText } from "./common.js";
import { COMPRESSED, TOOL_INDEX_HEADER } from "./contract.js";
import { RUN_NOTE, openingText } from "./formats/content.js";
import { contentOf } from "./formats/index.js";
import { callsOf, holdsReload, offloadId, previewOf } from "./offload.js";
import { pick, summaryText } from "./summaries.js";

/** How much of a call's arguments a line shows. */
const ARGS_CHARS = 60;

/** A call as the index lists it: `name(key=value, …)`, strings without their quotes (a
 * line is read by the model, and JSON's quotes and braces cost tokens it does not need). */
function indexCall(name, args) {
  let value = args;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      // Arguments that are no JSON are shown as they are.
    }
  }
  const text = value !== null && typeof value === "object" && !Array.isArray(value)
    ? Object.entries(value).map(([k, v]) => `${k}=${typeof v === "string" ? v : jsonText(v)}`).join(", ")
    : typeof value === "string" ? value : jsonText(value) ?? "";
  return `${name ?? "tool"}(${previewOf(text, ARGS_CHARS)})`;
}

/** How many characters of calls a line shows: a step of many parallel calls, a long run's
 * digest, is one line of the size of a few, not one that alone takes the index's room. */
const LINE_CHARS = 200;

/** `calls` joined with "; ", as many as fit `LINE_CHARS`, and how many more there are. */
function joinCalls(calls) {
  let text = calls[0] ?? "", k = 1;
  while (k < calls.length && text.length + calls[k].length + 2 <= LINE_CHARS) text += `; ${calls[k++]}`;
  return k < calls.length ? `${text}; … (+${calls.length - k} more)` : text;
}

/** The lines (`- …`) of the earlier indexes at `indices`, oldest first. */
function earlierLines(reading, indices, tag) {
  if (indices.length === 0) return [];
  return summaryText(reading, indices, tag).split("\n").filter((line) => line.startsWith("- "));
}

/** A tool run's digest an earlier reduction wrote (`compressRun`): its id, and its calls as
 * it lists them (none when a summary stands for them). */
function runDigest(reading, indices) {
  if (indices.length !== 1) return undefined;
  const text = openingText(contentOf(reading.format, reading.items[indices[0]]));
  const match = typeof text === "string" ? RUN_NOTE.exec(text) : null;
  if (match === null) return undefined;
  const calls = text.split("\n").filter((l) => l.startsWith("- called ")).map((l) => l.slice(9));
  return { id: match[2], calls: calls.length > 0 ? calls : [`a tool run of ${match[1]} messages`] };
}

/**
 * Whether the messages at `indices` (a unit the core chose) get a line: not what answered a
 * `context_reload` call (the model would reload it again), and a compressed message only
 * when it is a tool run's digest (a compressed text holds no call).
 */
export function listable(reading, indices) {
  if (holdsReload(reading, indices)) return false;
  return !(indices.length === 1 && (reading.flags[indices[0]] & COMPRESSED) !== 0) || runDigest(reading, indices) !== undefined;
}

/** Which of the units of `messages` (the k-th `messages[ends[k - 1] .. ends[k]]`) get a line
 * (`listable`): their numbers, in one call for all of them. */
export function listableUnits(reading, messages, ends) {
  const kept = [];
  for (let k = 0; k < ends.length; k++) {
    if (listable(reading, Array.from(messages.subarray(k === 0 ? 0 : ends[k - 1], ends[k])))) kept.push(k);
  }
  return Uint32Array.from(kept);
}

/**
 * What the index lists: units of `messages` (the k-th `messages[ends[k - 1] .. ends[k]]`),
 * oldest first; the newest get a line each until their characters pass `chars` (the driver
 * has more than fit, never all of a long history's), after the lines of the earlier indexes
 * at `earlier`. `{ lines, count, ids, first, earlier }`: `ids[k]` is the offload id of unit
 * `first + k` (its messages as `pick` hands them), or "" for an earlier digest, whose own id
 * the line names; `earlier` the number of earlier lines.
 */
export function toolIndex(reading, messages, ends, earlier, tag, chars) {
  const before = earlierLines(reading, earlier, tag);
  const lines = [], ids = [];
  let first = ends.length, written = 0;
  while (first > 0 && written <= chars) {
    const k = --first;
    const indices = Array.from(messages.subarray(k === 0 ? 0 : ends[k - 1], ends[k]));
    const digest = runDigest(reading, indices);
    const id = digest !== undefined ? digest.id : offloadId(pick(reading, indices));
    const calls = digest !== undefined ? digest.calls : indices.flatMap((i) => callsOf(reading.format, reading.items[i], indexCall));
    const line = `- ${joinCalls(calls)} → ${id}`;
    lines.push(line);
    ids.push(digest !== undefined ? "" : id);
    written += line.length + 1;
  }
  lines.reverse();
  ids.reverse();
  const all = before.concat(lines);
  return { lines: all, count: all.length, ids, first, earlier: before.length };
}

/** The index's text: its opening line, and its lines but the oldest `skip`. */
export function indexText(index, skip) {
  return `${TOOL_INDEX_HEADER} Call context_reload with {"id": "ctx_…"} to get one back with its results.\n${index.lines.slice(skip).join("\n")}`;
}

/** How many of the oldest lines to leave out so that about `share` (0–1) of the characters of
 * the lines from `skip` on stay: more than `skip`. */
export function skipFor(index, skip, share) {
  const lines = index.lines;
  let left = 0;
  for (let k = skip; k < lines.length; k++) left += lines[k].length + 1;
  const keep = left * share;
  let s = skip;
  do {
    left -= lines[s].length + 1;
    s++;
  } while (s < lines.length && left > keep);
  return s;
}
