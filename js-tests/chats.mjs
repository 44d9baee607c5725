// Conversations and helpers the summarizer tests share (imported as the package's
// consumer imports them, beside the test files).

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function chat(turns, system = true) {
  const m = system ? [{ role: "system", content: "You help with gardening." }] : [];
  for (let t = 0; t < turns; t++) {
    m.push({ role: "user", content: `Turn ${t}: how do I care for plant number ${t}?` });
    m.push({ role: "assistant", content: `Plant ${t} needs water every ${t % 5 + 1} days and some sun.` });
  }
  return m;
}

/** A 300-message agent session with 20 KB tool results. */
export function agentSession() {
  const m = [{ role: "system", content: "You are a data agent." }];
  let k = 0;
  for (let r = 0; m.length < 290; r++) {
    m.push({ role: "user", content: `Task ${r}: summarise dataset ${r}.` });
    for (let c = 0; c < 4; c++) {
      const id = `call_${k++}`;
      m.push({ role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "fetch_rows", arguments: JSON.stringify({ dataset: r, page: c }) } }] });
      const rows = Array.from({ length: 400 }, (_, i) => ({ i, value: `row ${i} of dataset ${r} page ${c}` }));
      m.push({ role: "tool", tool_call_id: id, content: JSON.stringify({ rows }).slice(0, 20_000) });
    }
    m.push({ role: "assistant", content: `Dataset ${r}: ${"a clear trend, ".repeat(10)}` });
  }
  while (m.length < 300) m.push({ role: "user", content: `Follow-up ${m.length}` }, { role: "assistant", content: "Noted." });
  return m.slice(0, 300);
}

export const byLength = (m) => m.content.length;

/** Pushes `messages` (after the first) into ChatHistory `h` four at a time, as an agent loop
 * does with turns of a question, a call, its result and an answer: `prepare()` before each
 * model call; `after()` once a turn is in. */
export async function playTurns(h, messages, after = () => {}) {
  for (let i = 1; i < messages.length; i += 4) {
    h.push(messages[i]);
    await h.prepare();
    h.push(messages[i + 1], messages[i + 2]);
    await h.prepare();
    h.push(messages[i + 3]);
    after();
  }
}
