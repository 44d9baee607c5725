// @eager: every call runs this module, so it is compiled at import (see build.rs).
// Reading the config's options for the core: all of them in one pass, each by its kind.

import { MAX_MESSAGES, ReduceError, reason } from "./common.js";
import {
  OPTION_NAMES, O_ARRAY, O_BIGINT, O_BOOL, O_FUNCTION, O_MISSING, O_NUMBER, O_OBJECT, O_OTHER,
  O_SYMBOL, O_TEXT, O_THREW,
} from "./contract.js";

/** The INVALID_CONFIG error of an option whose getter threw. */
function optionError(key, e) {
  return new ReduceError("INVALID_CONFIG", `reading config.${key} threw: ${reason(e)}`, undefined, key);
}

/** The option names, to tell an unknown one. */
const KNOWN = new Set(OPTION_NAMES);

/** Where `signal` is in `OPTION_NAMES`. */
const SIGNAL = OPTION_NAMES.indexOf("signal");

/** Where `store` is in `OPTION_NAMES`. */
const STORE = OPTION_NAMES.indexOf("store");

/** Where `summaryCache` is in `OPTION_NAMES`. */
const SUMMARY_CACHE = OPTION_NAMES.indexOf("summaryCache");

/**
 * Reads every option of `config` in one pass (one crossing a call, not a few per option):
 * each one's kind into `kinds`, numbers and booleans (1/0) into `numbers` (both views of wasm
 * memory), and returns the values by index (undefined or null as given; the error of an
 * option whose getter threw), then the first name of `config` that is not an option, if any
 * (its kind, after the options', marks it).
 */
export function readOptions(config, kinds, numbers) {
  const keys = OPTION_NAMES;
  const values = new Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    let v;
    try {
      v = config[keys[i]];
    } catch (e) {
      kinds[i] = O_THREW;
      values[i] = optionError(keys[i], e);
      continue;
    }
    let kind;
    const type = typeof v;
    if (v === undefined || v === null) kind = O_MISSING;
    else if (type === "boolean") {
      kind = O_BOOL;
      numbers[i] = v ? 1 : 0;
    } else if (type === "number") {
      kind = O_NUMBER;
      numbers[i] = v;
    } else if (type === "string") kind = O_TEXT;
    else if (type === "function") kind = O_FUNCTION;
    else if (Array.isArray(v)) kind = O_ARRAY;
    else if (type === "object" && arrayLike(v)) {
      // (A typed array, or another array-like: as an array, what the core reads.)
      try {
        v = arrayOf(v);
        kind = O_ARRAY;
      } catch (e) {
        kind = O_THREW;
        v = optionError(keys[i], e);
      }
    } else if (type === "object") kind = O_OBJECT;
    else if (type === "bigint") kind = O_BIGINT;
    else if (type === "symbol") kind = O_SYMBOL;
    else kind = O_OTHER;
    kinds[i] = kind;
    values[i] = v;
  }
  // The first name that is not an option goes after the values, marked in the kind after
  // theirs: the core refuses it (a typo silently ignored would leave the app without the
  // option it meant).
  try {
    for (const key in config) {
      if (!KNOWN.has(key)) {
        values[keys.length] = key;
        kinds[keys.length] = O_TEXT;
        break;
      }
    }
  } catch {
    // (Keys a proxy will not list: only the options are read.)
  }
  // (Any other kind of value is refused by the core.)
  if (kinds[SIGNAL] === O_OBJECT) {
    const e = notASignal(values[SIGNAL]);
    if (e !== undefined) {
      kinds[SIGNAL] = O_THREW;
      values[SIGNAL] = e;
    }
  }
  for (const [at, shape] of [[STORE, "get(id) and set(id, messages)"], [SUMMARY_CACHE, "get(key) and set(key, value)"]]) {
    if (kinds[at] === O_OBJECT) {
      const e = notAStore(values[at], keys[at], shape);
      if (e !== undefined) {
        kinds[at] = O_THREW;
        values[at] = e;
      }
    }
  }
  return values;
}

/** The INVALID_CONFIG error of object option `key` (`store`, `summaryCache`) if it has no get
 * and set methods (a `Map`, Durable Object storage, KV or an IndexedDB wrapper have them),
 * else undefined. */
function notAStore(store, key, shape) {
  try {
    if (typeof store.get === "function" && typeof store.set === "function") return undefined;
  } catch (e) {
    return optionError(key, e);
  }
  return new ReduceError("INVALID_CONFIG", `${key} must be an object with ${shape} methods, such as a Map`, undefined, key);
}

/** The INVALID_CONFIG error of object `signal` if it is not an AbortSignal, else undefined.
 * Duck-typed (what `callSummarizer` uses of it): browsers, Node, Deno and workerd each have an
 * AbortSignal class of their own. */
function notASignal(signal) {
  try {
    if (typeof signal.aborted === "boolean" && typeof signal.addEventListener === "function" &&
      typeof signal.removeEventListener === "function") return undefined;
  } catch (e) {
    return optionError("signal", e);
  }
  return new ReduceError("INVALID_CONFIG", "signal must be an AbortSignal (such as an AbortController's signal), " +
    "got an object without a boolean aborted and addEventListener and removeEventListener methods", undefined, "signal");
}

/** Array-like `v` as an array: a typed array's values (no more than a call can have
 * messages), or another's own index keys, in a sparse array of its length: a `length` of
 * 2^32 - 1 makes no slots (copied whole, it took all the memory there is). */
function arrayOf(v) {
  if (ArrayBuffer.isView(v)) return Array.from(v.length > MAX_MESSAGES ? v.subarray(0, MAX_MESSAGES) : v);
  const out = [];
  out.length = v.length;
  for (const key of Object.keys(v)) {
    const k = Number(key);
    if (Number.isInteger(k) && k >= 0 && k < out.length && String(k) === key) out[k] = v[key];
  }
  return out;
}

/** Whether object `v` is a typed array, or has a whole `length` an array could have (and
 * no `length` getter that throws). */
function arrayLike(v) {
  if (ArrayBuffer.isView(v)) return !(v instanceof DataView);
  try {
    const n = v.length;
    return Number.isInteger(n) && n >= 0 && n < 2 ** 32;
  } catch {
    return false;
  }
}

export function optionEntries(config, key, value) {
  try {
    return Object.entries(value);
  } catch (e) {
    throw optionError(key, e);
  }
}
