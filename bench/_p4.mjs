import { generateConversation } from "./generate.mjs";
import { HumanMessage, AIMessage, SystemMessage, ToolMessage, trimMessages } from "@langchain/core/messages";
const conv = generateConversation(10000);
const lc = conv.map(m => m.role === "system" ? new SystemMessage(m.content) : m.role === "user" ? new HumanMessage(m.content) : m.role === "tool" ? new ToolMessage({content: m.content, tool_call_id: m.tool_call_id}) : new AIMessage({content: m.content ?? "", tool_calls: (m.tool_calls ?? []).map(c => ({id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments), type: "tool_call"})), additional_kwargs: m.tool_calls ? {tool_calls: m.tool_calls} : {}}));
const simple = (msgs) => { let s = 0; for (const m of msgs) s += Math.ceil(m.content.length / 4); return s; };
const R = { system: 2, human: 1, ai: 3, tool: 1 };
const typeOnly = (msgs) => { let s = 0; for (let i = 0; i < msgs.length; i++) { const m = msgs[i]; s += 3 + R[m.type] + Math.ceil(m.content.length / 4); } return s; };
const withKw = (msgs) => { let s = 0; for (let i = 0; i < msgs.length; i++) { const m = msgs[i]; s += 3 + Math.ceil(m.content.length / 4); const c = m.additional_kwargs?.tool_calls; if (c) s += c.length; } return s; };
for (const [name, f] of [["simple", simple], ["typeOnly", typeOnly], ["withKw", withKw], ["simple", simple]]) {
  const total = f(lc);
  const t = performance.now();
  const r = await trimMessages(lc, {maxTokens: Math.floor(total / 4), strategy: "last", startOn: "human", includeSystem: true, tokenCounter: f, allowPartial: false});
  console.log(name, (performance.now() - t).toFixed(0), "ms", r.length);
}
console.log(Object.getOwnPropertyDescriptor(lc[1], "type"), Object.getOwnPropertyDescriptor(Object.getPrototypeOf(lc[1]), "type"));
function exactFast(msgs) {
  let sum = 0;
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    sum += 3 + Math.ceil(m.content.length / 4);
    const type = m.type;
    if (type === "ai") {
      sum += 3;
      const calls = m.additional_kwargs.tool_calls;
      if (calls !== undefined) for (let k = 0; k < calls.length; k++) { const c = calls[k]; sum += Math.ceil(c.id.length / 4) + Math.ceil(c.function.name.length / 4) + Math.ceil(c.function.arguments.length / 4); }
    } else if (type === "tool") sum += 1 + Math.ceil(m.tool_call_id.length / 4);
    else if (type === "human") sum += 1;
    else sum += 2;
  }
  return sum;
}
for (let i = 0; i < 3; i++) {
  const total = exactFast(lc);
  const t = performance.now();
  const r = await trimMessages(lc, {maxTokens: Math.floor(total / 4), strategy: "last", startOn: "human", includeSystem: true, tokenCounter: exactFast, allowPartial: false});
  console.log("exactFast", (performance.now() - t).toFixed(0), "ms", r.length);
}
