// What the demo's panels share to show things: element helpers, numbers, event lines.

export const $ = (id) => document.getElementById(id);
export const fmt = (n) => Number(n).toLocaleString("en-US");
export const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
};

/** One line for a CompressionEvent (a reduction's) or an edit's event of a ChatHistory. */
export function eventText(e) {
  const extra = Object.entries(e)
    .filter(([k]) => !["type", "messages", "tokensBefore", "tokensAfter"].includes(k))
    .map(([k, v]) => `${k} ${typeof v === "object" ? JSON.stringify(v) : v}`);
  return `${e.type}: ${e.messages} messages, ${fmt(e.tokensBefore)} → ${fmt(e.tokensAfter)} tokens${extra.length ? ` (${extra.join(", ")})` : ""}`;
}
