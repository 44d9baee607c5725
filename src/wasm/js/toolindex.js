// `progressive`'s index of dropped tool calls: a line for each tool group the core chose
// (strategies/progressive/index.rs), its calls with their arguments cut short and the
// offload id its originals are kept under, after the lines of the earlier index it takes
// over. Written as a summary, so that it is read back as one (protected, no message).

import { jsonText } from "./common.js";
import { TOOL_INDEX_HEADER } from "./contract.js";
import { callsOf, offloadId, previewOf } from "./offload.js";
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

/**
 * The index's text and what it lists: `groups` holds each tool group's first and
 * one-past-last message, oldest first; of those, the newest `newest` get a line each, after
 * the lines of the earlier indexes at `earlier`; the oldest `skip` of all these lines are
 * left out (no room). `{ text, ids, first, earlier, lines }`: `ids[k]` is the offload id of
 * group `first + k` (its messages as `pick` hands them), `earlier` the number of earlier
 * lines, `lines` the number in the text.
 */
export function toolIndex(reading, groups, earlier, tag, newest, skip) {
  const lines = earlierLines(reading, earlier, tag);
  const before = lines.length;
  const count = groups.length / 2;
  const first = Math.max(0, count - newest);
  const ids = [];
  for (let g = first; g < count; g++) {
    const indices = [];
    for (let i = groups[2 * g]; i < groups[2 * g + 1]; i++) indices.push(i);
    const id = offloadId(pick(reading, indices));
    const calls = indices.flatMap((i) => callsOf(reading.format, reading.items[i], indexCall));
    lines.push(`- ${calls.join("; ")} → ${id}`);
    ids.push(id);
  }
  const kept = lines.slice(skip);
  const text = `${TOOL_INDEX_HEADER} Call context_reload with {"id": "ctx_…"} to get one back with its results.\n${kept.join("\n")}`;
  return { text, ids, first, earlier: before, lines: kept.length };
}
