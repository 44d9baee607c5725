// The sample conversation of the Vite app (also imported by the test, in Node).
export function conversation(turns) {
  const messages = [{ role: "system", content: "You are terse." }];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: "user", content: `Question ${t}: how far is ${t * 17} km in miles?` });
    messages.push({ role: "assistant", content: null, tool_calls: [{ id: `call_${t}`, type: "function", function: { name: "convert", arguments: JSON.stringify({ km: t * 17 }) } }] });
    messages.push({ role: "tool", tool_call_id: `call_${t}`, content: JSON.stringify({ miles: +(t * 10.563).toFixed(2), note: "x".repeat(120) }) });
    messages.push({ role: "assistant", content: `${t * 17} km is ${(t * 10.563).toFixed(1)} miles.` });
  }
  return messages;
}
