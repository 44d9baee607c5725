// summaryCache's keys and cache traffic (src/wasm/js/cache.js): keys follow the content and
// the options, a found entry is verified, a failing cache is a miss.
import { test } from "node:test";
import assert from "node:assert/strict";
import { lookupSummary, storeSummary, substitute, summaryKeys } from "../../src/wasm/js/cache.js";

const reading = (items, format = "openai") => ({ items, format });
const chat = [
  { role: "system", content: "s" },
  { role: "user", content: "a" },
  { role: "assistant", content: "b" },
  { role: "user", content: "c" },
];

test("keys follow the messages' content and the options, not the objects", () => {
  const a = summaryKeys(reading(chat), "tag\0user\0single", 1);
  const b = summaryKeys(reading(structuredClone(chat)), "tag\0user\0single", 1);
  const c = summaryKeys(reading(chat), "tag\0system\0single", 1);
  assert.deepEqual(a.a, b.a);
  assert.notEqual(a.a[3], c.a[3]);
  assert.equal(summaryKeys(reading([{ role: "user", content: "x", n: 1n }]), "", 0), undefined);
});

test("a stored summary is found for a longer history, verified, and a failing cache misses", async () => {
  const cache = new Map();
  const keys = summaryKeys(reading(chat), "o", 1);
  assert.equal(await storeSummary(cache, keys, 1, 3, "S"), true);
  const longer = [...chat, { role: "assistant", content: "d" }];
  assert.deepEqual(await lookupSummary(cache, summaryKeys(reading(longer), "o", 1)), { text: "S", end: 3 });
  // Another first message: not found; an entry whose digest differs: ignored.
  const other = [chat[0], { role: "user", content: "z" }, ...chat.slice(2)];
  assert.equal(await lookupSummary(cache, summaryKeys(reading(other), "o", 1)), undefined);
  for (const [k, v] of cache) if (!Array.isArray(v)) cache.set(k, { ...v, digest: v.digest + 1 });
  assert.equal(await lookupSummary(cache, keys), undefined);
  const broken = { get() { throw new Error("x"); }, set: async () => { throw new Error("y"); } };
  assert.equal(await lookupSummary(broken, keys), undefined);
  assert.equal(await storeSummary(broken, keys, 1, 3, "S"), false);
});

test("substitute puts the summary in place of the messages it covers", () => {
  const s = { role: "user", content: "<t>S</t>" };
  assert.deepEqual(substitute(reading(chat), 1, 3, s), [chat[0], s, chat[3]]);
});
