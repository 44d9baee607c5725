// `progressive`'s index of dropped tool calls: a line for each tool group the core chose
// (strategies/progressive/index.rs), its calls with their arguments cut short and the
// offload id its originals are kept under, after the lines of the earlier index it takes
// over. Written as a summary, so that it is read back as one (protected, no message).

import { jsonText } from "./common.js";
import { COMPRESSED, TOOL_INDEX_HEADER } from "./contract.js";
import { openingText } from "./formats/content.js";
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

/** The lines (`- …`) of the earlier indexes at `indices`, oldest first. */
function earlierLines(reading, indices, tag) {
  if (indices.length === 0) return [];
  return summaryText(reading, indices, tag).split("\n").filter((line) => line.startsWith("- "));
}

/** A tool run's digest an earlier reduction wrote (`compressRun`): its id, and its calls as
 * it lists them (none when a summary stands for them). */
const DIGEST = /^\[compressed tool run: (\d+) messages, stored as (ctx_[0-9a-f]{16}); /;

function runDigest(reading, indices) {
  if (indices.length !== 1) return undefined;
  const text = openingText(contentOf(reading.format, reading.items[indices[0]]));
  const match = typeof text === "string" ? DIGEST.exec(text) : null;
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

/**
 * The index's text and what it lists: units of `messages` (the k-th `messages[ends[k - 1]
 * .. ends[k]]`), oldest first; of those, the newest `newest` get a line each, after the
 * lines of the earlier indexes at `earlier`; the oldest `skip` of all these lines are left
 * out (no room). `{ text, ids, first, earlier, lines }`: `ids[k]` is the offload id of unit
 * `first + k` (its messages as `pick` hands them), or "" for an earlier digest, whose own id
 * the line names; `earlier` the number of earlier lines, `lines` the number in the text.
 */
export function toolIndex(reading, messages, ends, earlier, tag, newest, skip) {
  const lines = earlierLines(reading, earlier, tag);
  const before = lines.length;
  const first = Math.max(0, ends.length - newest);
  const ids = [];
  for (let k = first; k < ends.length; k++) {
    const indices = Array.from(messages.subarray(k === 0 ? 0 : ends[k - 1], ends[k]));
    const digest = runDigest(reading, indices);
    const id = digest !== undefined ? digest.id : offloadId(pick(reading, indices));
    const calls = digest !== undefined ? digest.calls : indices.flatMap((i) => callsOf(reading.format, reading.items[i], indexCall));
    lines.push(`- ${calls.join("; ")} → ${id}`);
    ids.push(digest !== undefined ? "" : id);
  }
  const kept = lines.slice(skip);
  const text = `${TOOL_INDEX_HEADER} Call context_reload with {"id": "ctx_…"} to get one back with its results.\n${kept.join("\n")}`;
  return { text, ids, first, earlier: before, lines: kept.length };
}
