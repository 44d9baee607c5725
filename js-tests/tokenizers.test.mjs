// Tokenizer profiles (SPEC §3, issue 31): `tokenizer: "auto"` picks the profile by the detected
// format (gemini → gemma, the others → o200k), a name wins, and analyze() shows the choice.
import { test } from "node:test";
import assert from "node:assert/strict";
import { analyze, calibrate, estimateTokens, ChatHistory, ReduceError } from "chat-history-reducer";

// Digits: Gemma spends a token on each, o200k one on about three.
const TEXT = "Order 4417 shipped 2026-11-28, tracking 99302118457 (3 parcels).";
const openai = [{ role: "user", content: TEXT }];
const gemini = [{ role: "user", parts: [{ text: TEXT }] }];
const anthropic = [{ role: "user", content: [{ type: "text", text: TEXT }] }];

test("auto picks the profile by format, analyze() shows it, and a name wins", () => {
  assert.equal(analyze(gemini).tokenizer, "gemma");
  assert.equal(analyze(openai).tokenizer, "o200k");
  assert.equal(analyze(anthropic).tokenizer, "o200k");
  assert.equal(analyze(gemini, { tokenizer: "auto" }).tokenizer, "gemma");
  for (const name of ["o200k", "cl100k", "gemma", "llama3"]) {
    assert.equal(analyze(gemini, { tokenizer: name }).tokenizer, name);
    assert.equal(analyze(openai, { tokenizer: name }).tokenizer, name);
  }
  assert.equal("tokenizer" in analyze(gemini, { estimator: "length" }), false, "length mode has no profile");
  // The estimates are the chosen profile's.
  const o200k = estimateTokens(openai, { tokenizer: "o200k" }), gemma = estimateTokens(openai, { tokenizer: "gemma" });
  assert.ok(gemma > o200k, `${gemma} > ${o200k}`);
  assert.equal(estimateTokens(openai), o200k);
  assert.equal(estimateTokens(gemini), gemma);
  assert.equal(estimateTokens(gemini, { tokenizer: "o200k" }), o200k);
  assert.equal(analyze(gemini).totalTokens, gemma);
  assert.ok(estimateTokens(openai, { tokenizer: "llama3" }) > 0);
  // estimatorWeights apply over the chosen profile.
  assert.equal(estimateTokens(gemini, { estimatorWeights: { digit: 0 } }), estimateTokens(openai, { tokenizer: "gemma", estimatorWeights: { digit: 0 } }));
});

test("a profile name is checked: the known ones listed, a misspelt option named", () => {
  assert.throws(() => estimateTokens(openai, { tokenizer: "gemini" }), (e) =>
    e instanceof ReduceError && e.code === "INVALID_CONFIG" && e.field === "tokenizer" &&
    e.message.includes('"auto", "o200k", "cl100k", "gemma", "llama3"'));
  assert.throws(() => estimateTokens(openai, { tokeniser: "gemma" }), (e) =>
    e.code === "INVALID_CONFIG" && e.field === "tokeniser" && e.message.includes("did you mean tokenizer?"));
});

test("calibration learns over the format's profile: calibrate() and ChatHistory.recordUsage", async () => {
  const raw = estimateTokens(gemini);
  assert.ok(Math.abs(calibrate(gemini, raw * 1.25) - 1.25) < 1e-9, "the raw estimate is gemma's");
  const history = new ChatHistory({ maxTokens: 100_000 }, gemini);
  await history.prepare();
  history.recordUsage({ inputTokens: raw * 2 });
  assert.equal(history.toJSON().calibration, 2);
  history.push({ role: "model", parts: [{ text: TEXT }] }, { role: "user", parts: [{ text: TEXT }] });
  const prompt = await history.prepare();
  assert.equal(prompt.length, 3);
  assert.equal(analyze(prompt).tokenizer, "gemma");
});
