// @eager: every call runs this module, so it is compiled at import (see build.rs).
// What all of the boundary's JavaScript uses: the error it throws, the role codes and flags
// it shares with the core, and small helpers (own keys, values in words, JSON text).

/**
 * The error every function of this package throws for bad input or a failed reduction.
 * `code` is one of SPEC §10's codes; `index` names the message at fault, `field` the
 * config option.
 */
export class ReduceError extends Error {
  constructor(code, message, index, field) {
    super(message);
    this.name = "ReduceError";
    this.code = code;
    if (index !== undefined && index !== null) this.index = index;
    if (field !== undefined && field !== null) this.field = field;
  }
}

/** `map[key]` for own keys only: "toString" is not a role. */
export function own(map, key) {
  return typeof key === "string" && Object.hasOwn(map, key) ? map[key] : undefined;
}

/** A lookup table that knows only its own keys. */
export function table(entries) {
  return new Map(Object.entries(entries));
}

export function describe(value) {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "object": return "an object";
    case "function": return "a function";
    case "symbol": return "a symbol";
    case "string": return value.length === 0 ? "an empty string" : `the string ${JSON.stringify(value.slice(0, 40))}`;
    default: return `the ${typeof value} ${String(value)}`;
  }
}

export function bad(index, what) {
  return new ReduceError("INVALID_MESSAGE", `message ${index}: ${what}`, index);
}

export function jsonText(value) {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  const text = JSON.stringify(value);
  return text === undefined ? "" : text;
}

/** Nesting past this is left to `JSON.stringify` (which reports a cycle). */
const MAX_JSON_DEPTH = 64;

/**
 * Whether `JSON.stringify(value)` of an object or array writes plain data only (objects
 * with Object's prototype or none, arrays, strings, finite or other numbers, booleans, null,
 * and what it skips) and so cannot throw: no `toJSON`, no other prototype, no bigint, no
 * nesting past MAX_JSON_DEPTH (a cycle). A walk over the structure, not the text. Property
 * getters run, as they do for `JSON.stringify`.
 */
export function plainJson(value, depth) {
  if (depth > MAX_JSON_DEPTH || value.toJSON !== undefined) return false;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let k = 0; k < value.length; k++) if (!plainJsonItem(value[k], depth)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key of Object.keys(value)) if (!plainJsonItem(value[key], depth)) return false;
  return true;
}

function plainJsonItem(item, depth) {
  if (item === null || typeof item !== "object") return typeof item !== "bigint";
  return plainJson(item, depth + 1);
}

/** The most messages one call takes: far above any context window, far below memory. */
export const MAX_MESSAGES = 10_000_000;

/** An exception's message, whatever was thrown. */
export function reason(e) {
  try {
    return String(e !== null && typeof e === "object" && "message" in e ? e.message : e);
  } catch {
    return "an unprintable exception";
  }
}
