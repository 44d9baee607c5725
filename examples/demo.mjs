// `make demo`: reduces the bundled agent conversation with the built package, the way an
// app would before each model call, and shows what was kept.
import { readFileSync } from "node:fs";
import { reduceSync, analyze, estimateTokens } from "../pkg/node.js";

const conversation = JSON.parse(readFileSync(new URL("./agent-conversation.json", import.meta.url), "utf8"));
const maxTokens = Number(process.argv[2] ?? 2500);
const config = { maxTokens };

const preview = (m) => {
  const text = typeof m.content === "string" ? m.content
    : m.tool_calls ? `→ ${m.tool_calls.map((c) => `${c.function.name}(${c.function.arguments})`).join(", ")}`
    : JSON.stringify(m.content);
  return text.replace(/\s+/g, " ").slice(0, 72);
};
const line = (m, info, mark) =>
  `${mark} #${String(info.index).padStart(2)} ${info.role.padEnd(9)} ${String(info.tokens).padStart(5)} tok  g${String(info.group).padEnd(3)} ${preview(m)}`;

const before = analyze(conversation, config);
const result = reduceSync(conversation, config);
const kept = new Set(result.kept);

console.log(`Conversation: ${conversation.length} messages, ${before.totalTokens} estimated tokens (format: ${before.format}).`);
console.log(`Budget: maxTokens ${maxTokens} → target ${Math.floor(0.8 * maxTokens)} tokens, strategy "truncate".\n`);
for (const info of before.messages) {
  console.log(line(conversation[info.index], info, kept.has(info.index) ? "keep" : "drop"));
}
console.log(`\nAfter: ${result.messages.length} messages, ${result.tokensAfter} tokens ` +
  `(was ${result.tokensBefore}; re-estimated: ${estimateTokens(result.messages)}).`);
console.log(`Dropped ${result.dropped.length} messages in whole tool groups; ` +
  `first kept after the system prompt: ${result.messages[1].role}; over budget: ${result.overBudget}.`);
console.log(`Kept messages are the input objects: ${result.messages.every((m, k) => m === conversation[result.kept[k]])}.`);

// The same conversation under the other strategies, in one line each.
const { reduce } = await import("../pkg/node.js");
const stubSummarizer = async ({ kind, messages }) =>
  `(${kind}) The user planned trips to ${messages.filter((m) => m.role === "user").length} places; flights, weather and hotels were checked.`;
console.log("\nOther strategies with the same budget:");
for (const strategy of ["priority", "summarize", "progressive"]) {
  const config = { maxTokens, strategy };
  if (strategy === "summarize") config.summarizer = stubSummarizer;
  // This conversation's tool outputs are ~300 tokens: call them large, runs of 3 worth compressing.
  if (strategy === "progressive") Object.assign(config, { largeMessageTokens: 250, minToolRun: 3 });
  const r = await reduce(conversation, config);
  const parts = [`${r.messages.length} messages`, `${r.tokensBefore} → ${r.tokensAfter} tokens`];
  if (r.dropped.length) parts.push(`${r.dropped.length} dropped`);
  if (r.summarized.length) parts.push(`${r.summarized.length} summarized`);
  if (r.rewritten.length) parts.push(`${r.rewritten.length} offloaded as previews`);
  if (Object.keys(r.offloaded).length) parts.push(`${Object.keys(r.offloaded).length} reloadable ids`);
  console.log(`  ${strategy.padEnd(11)} ${parts.join(", ")}; events: ${r.events.map((e) => e.type).join(", ")}`);
}
