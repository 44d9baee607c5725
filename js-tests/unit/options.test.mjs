// `readOptions` (src/wasm/js/options.js): every option of OPTION_NAMES read once, its kind
// (contract O_* codes) into `kinds`, numbers and booleans into `numbers`; a getter that
// throws is O_THREW with an INVALID_CONFIG error naming the field; `signal` must be an
// AbortSignal; typed arrays and array-likes are read as arrays. And `optionEntries`.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  OPTION_NAMES, O_ARRAY, O_BIGINT, O_BOOL, O_FUNCTION, O_MISSING, O_NUMBER, O_OBJECT, O_SYMBOL, O_TEXT, O_THREW,
} from "../../src/wasm/js/contract.js";
import { ReduceError } from "../../src/wasm/js/common.js";
import { optionEntries, readOptions } from "../../src/wasm/js/options.js";

const at = (name) => {
  const i = OPTION_NAMES.indexOf(name);
  if (i < 0) throw new Error(`no option ${name}`);
  return i;
};

/** `readOptions(config)` into fresh arrays, as the core hands them (views of its memory). */
function readAll(config) {
  const kinds = new Uint8Array(OPTION_NAMES.length).fill(255);
  const numbers = new Float64Array(OPTION_NAMES.length).fill(-7);
  const values = readOptions(config, kinds, numbers);
  return { kinds, numbers, values, kind: (n) => kinds[at(n)], number: (n) => numbers[at(n)], value: (n) => values[at(n)] };
}

test("each option's kind, number and value", () => {
  const countTokens = () => 1;
  const weights = { word: 1.2 };
  const r = readAll({
    strategy: "truncate", maxTokens: 1000, keepSystem: true, startOn: false, countTokens, tokenCounts: [1, 2],
    estimatorWeights: weights, summaryTag: null, targetTokens: 10n, tokenizer: Symbol("t"),
  });
  assert.equal(r.values.length, OPTION_NAMES.length);
  assert.equal(r.kind("strategy"), O_TEXT);
  assert.equal(r.value("strategy"), "truncate");
  assert.equal(r.kind("maxTokens"), O_NUMBER);
  assert.equal(r.number("maxTokens"), 1000);
  assert.equal(r.kind("keepSystem"), O_BOOL);
  assert.equal(r.number("keepSystem"), 1);
  assert.equal(r.number("startOn"), 0);
  assert.equal(r.kind("countTokens"), O_FUNCTION);
  assert.equal(r.value("countTokens"), countTokens);
  assert.equal(r.kind("tokenCounts"), O_ARRAY);
  assert.equal(r.kind("estimatorWeights"), O_OBJECT);
  assert.equal(r.value("estimatorWeights"), weights);
  assert.equal(r.kind("summaryTag"), O_MISSING); // null as missing
  assert.equal(r.value("summaryTag"), null);
  assert.equal(r.kind("targetTokens"), O_BIGINT);
  assert.equal(r.kind("tokenizer"), O_SYMBOL);
  assert.equal(r.kind("onEvent"), O_MISSING);
  assert.equal(r.value("onEvent"), undefined);
  // Every slot is written.
  assert.ok(Array.from(r.kinds).every((k) => k !== 255));
});

test("an empty config: every option missing", () => {
  const r = readAll({});
  assert.deepEqual(Array.from(r.kinds), OPTION_NAMES.map(() => O_MISSING));
});

test("each option is read exactly once, inherited ones included", () => {
  const reads = new Map();
  const proto = { maxTokens: 50 };
  const config = new Proxy(Object.create(proto), {
    get(target, key, receiver) {
      reads.set(key, (reads.get(key) ?? 0) + 1);
      return Reflect.get(target, key, receiver);
    },
  });
  const r = readAll(config);
  assert.equal(r.number("maxTokens"), 50);
  assert.deepEqual([...reads.keys()], [...OPTION_NAMES]);
  assert.ok([...reads.values()].every((n) => n === 1));
});

test("a getter that throws: O_THREW and an INVALID_CONFIG error with its field; the others are still read", () => {
  const config = { keepLast: 2 };
  Object.defineProperty(config, "maxTokens", { get() { throw new Error("boom"); }, enumerable: true });
  const r = readAll(config);
  assert.equal(r.kind("maxTokens"), O_THREW);
  const e = r.value("maxTokens");
  assert.ok(e instanceof ReduceError);
  assert.equal(e.code, "INVALID_CONFIG");
  assert.equal(e.field, "maxTokens");
  assert.match(e.message, /config\.maxTokens threw: boom/);
  assert.equal(r.kind("keepLast"), O_NUMBER);
  assert.equal(r.number("keepLast"), 2);
});

test("signal: an AbortSignal is an object; an object that is not one is refused with field signal", () => {
  const signal = new AbortController().signal;
  let r = readAll({ signal });
  assert.equal(r.kind("signal"), O_OBJECT);
  assert.equal(r.value("signal"), signal);

  // Duck-typed (each runtime has an AbortSignal class of its own).
  const like = { aborted: false, addEventListener() {}, removeEventListener() {} };
  assert.equal(readAll({ signal: like }).kind("signal"), O_OBJECT);

  for (const bad of [{}, { aborted: "no", addEventListener() {}, removeEventListener() {} }]) {
    r = readAll({ signal: bad });
    assert.equal(r.kind("signal"), O_THREW);
    assert.equal(r.value("signal").code, "INVALID_CONFIG");
    assert.equal(r.value("signal").field, "signal");
  }

  const throwing = { get aborted() { throw new Error("no look"); } };
  r = readAll({ signal: throwing });
  assert.equal(r.kind("signal"), O_THREW);
  assert.equal(r.value("signal").field, "signal");
});

test("typed arrays and array-likes are read as plain arrays; a DataView is an object", () => {
  let r = readAll({ tokenCounts: new Float64Array([1.5, 2]) });
  assert.equal(r.kind("tokenCounts"), O_ARRAY);
  assert.ok(Array.isArray(r.value("tokenCounts")));
  assert.deepEqual(r.value("tokenCounts"), [1.5, 2]);

  r = readAll({ tokenCounts: { length: 3, 0: 5, 2: 7, foo: 1 } });
  assert.equal(r.kind("tokenCounts"), O_ARRAY);
  const counts = r.value("tokenCounts");
  assert.equal(counts.length, 3);
  assert.equal(counts[0], 5);
  assert.equal(1 in counts, false); // a hole, as the object has no index 1
  assert.equal(counts[2], 7);

  r = readAll({ estimatorWeights: new DataView(new ArrayBuffer(8)) });
  assert.equal(r.kind("estimatorWeights"), O_OBJECT);
});

test("optionEntries: an object's entries; what throws is INVALID_CONFIG with the field", () => {
  assert.deepEqual(optionEntries({}, "estimatorWeights", { a: 1, b: 2 }), [["a", 1], ["b", 2]]);
  const hostile = new Proxy({}, { ownKeys() { throw new Error("nope"); } });
  assert.throws(() => optionEntries({}, "estimatorWeights", hostile),
    (e) => e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === "estimatorWeights");
});
