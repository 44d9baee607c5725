// A stateless server against ChatHistory (SPEC §7 `summaryCache`): 200 requests of one
// growing session, each a new parse of the JSON body; summarizer calls and changes of the
// prompt prefix (the summary message) for ChatHistory, reduce with a Map as summaryCache,
// and reduce without one. `node bench/stateless.mjs [requests]` after `make build`.
import { reduce, ChatHistory } from "../pkg/node.js";

const requests = Number(process.argv[2] ?? 200);
const system = { role: "system", content: "You help with gardening." };
const turn = (t) => [
  { role: "user", content: `Turn ${t}: how do I care for plant number ${t}? It has ${t % 7} leaves.` },
  { role: "assistant", content: `Plant ${t} needs water every ${t % 5 + 1} days and some sun, and repotting in spring.` },
];
const counted = () => {
  const c = { calls: 0 };
  c.summarizer = async (req) => `Summary ${++c.calls} of ${req.messages.length} messages.`;
  return c;
};
const base = { strategy: "summarize", maxTokens: 600 };
const held = counted(), cached = counted(), plain = counted();
const history = new ChatHistory({ ...base, summarizer: held.summarizer }, [system]);
const cache = new Map();
const prefix = { held: [], cached: [], plain: [] };
let body = [system];
const t0 = performance.now();
for (let t = 0; t < requests; t++) {
  const [question, answer] = turn(t);
  history.push(question);
  body = [...body, question];
  prefix.held.push(JSON.stringify((await history.prepare())[1]));
  const json = JSON.stringify(body);
  const a = await reduce(JSON.parse(json), { ...base, summarizer: cached.summarizer, summaryCache: cache });
  prefix.cached.push(JSON.stringify(a.messages[1]));
  const b = await reduce(JSON.parse(json), { ...base, summarizer: plain.summarizer });
  prefix.plain.push(JSON.stringify(b.messages[1]));
  history.push(answer);
  body = [...body, answer];
}
const changes = (p) => p.filter((x, k) => k > 0 && x !== p[k - 1]).length;
console.log(`${requests} requests, ${body.length} messages at the end (${(performance.now() - t0).toFixed(0)} ms in all)`);
console.log(`ChatHistory:                 ${held.calls} summarizer calls, ${changes(prefix.held)} prefix changes`);
console.log(`reduce + summaryCache (Map): ${cached.calls} summarizer calls, ${changes(prefix.cached)} prefix changes, ${cache.size} cache entries`);
console.log(`reduce, no cache:            ${plain.calls} summarizer calls, ${changes(prefix.plain)} prefix changes`);
console.log(`prefixes byte-identical to ChatHistory's: ${prefix.cached.every((p, k) => p === prefix.held[k])}`);
