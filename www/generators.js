// Deterministic sample conversations in four provider shapes: the same travel-assistant
// story (questions, tool calls with JSON results, answers) rendered as OpenAI Chat
// Completions, Anthropic Messages, Vercel AI SDK ModelMessage and Gemini Content arrays.

const SYSTEM = "You are Atlas, a concise travel assistant. Use the tools for facts; never invent prices.";

const TOPICS = [
  { q: "I'm planning a long weekend in Lisbon in May. What's the weather usually like?", tool: "get_weather", args: { city: "Lisbon", month: "May" },
    result: { city: "Lisbon", month: "May", avgHighC: 22, avgLowC: 14, rainyDays: 6, sunshineHours: 10, note: "Mild, mostly dry; evenings can be windy by the river." },
    a: "May in Lisbon is pleasant: highs around 22 °C, lows near 14 °C, and only about six rainy days. Pack a light jacket for windy evenings by the river." },
  { q: "Find me flights from Berlin to Lisbon on May 16, returning the 19th.", tool: "search_flights", args: { from: "BER", to: "LIS", depart: "2025-05-16", return: "2025-05-19" },
    result: { offers: [{ carrier: "TAP", depart: "07:05", arrive: "09:40", priceEur: 212, stops: 0 }, { carrier: "easyJet", depart: "13:20", arrive: "15:55", priceEur: 148, stops: 0 }, { carrier: "Lufthansa", depart: "10:10", arrive: "15:30", priceEur: 265, stops: 1 }] },
    a: "Three options: easyJet at 13:20 for €148 (direct), TAP at 07:05 for €212 (direct), or Lufthansa at 10:10 for €265 with one stop. easyJet is the best value." },
  { q: "Book the easyJet one, aisle seat if possible.", tool: "book_flight", args: { offer: "easyJet-1320", seat: "aisle" },
    result: { status: "confirmed", reference: "EZY7Q2K", seat: "14C", totalEur: 148, baggage: "cabin bag only" },
    a: "Booked: easyJet, reference EZY7Q2K, seat 14C (aisle), €148 with a cabin bag only." },
  { q: "Now a hotel in Alfama or Baixa, under 150 a night, three nights.", tool: "search_hotels", args: { city: "Lisbon", areas: ["Alfama", "Baixa"], maxEur: 150, nights: 3 },
    result: { hotels: [{ name: "Memmo Alfama", area: "Alfama", nightEur: 145, rating: 4.7 }, { name: "Lisboa Pessoa", area: "Baixa", nightEur: 132, rating: 4.5 }, { name: "My Story Rossio", area: "Baixa", nightEur: 118, rating: 4.3 }] },
    a: "Under €150 a night: Memmo Alfama (€145, 4.7★, rooftop views), Lisboa Pessoa in Baixa (€132, 4.5★) and My Story Rossio (€118, 4.3★). Memmo has the best location for evening walks." },
  { q: "What should I not miss if I only have two full days?", tool: null,
    a: "Day one: Alfama in the morning (São Jorge castle, Miradouro de Santa Luzia), tram 28 to Baixa, sunset at Miradouro da Graça. Day two: Belém — the Jerónimos Monastery, the tower, and pastéis de Belém — then LX Factory for dinner. If you have energy left, a fado evening back in Alfama." },
  { q: "How do I get from the airport to Alfama at night?", tool: "get_transit", args: { from: "LIS airport", to: "Alfama", time: "21:00" },
    result: { options: [{ mode: "metro", minutes: 35, eur: 1.85, note: "red line then green line, runs until 01:00" }, { mode: "taxi", minutes: 20, eur: 18 }, { mode: "ride-hailing", minutes: 20, eur: 12 }] },
    a: "At 21:00 the metro works (35 min, €1.85, change from red to green line). A ride-hailing car takes about 20 minutes for roughly €12; a taxi costs about €18." },
  { q: "Is it worth doing a day trip to Sintra instead of Belém?", tool: "get_weather", args: { city: "Sintra", month: "May" },
    result: { city: "Sintra", month: "May", avgHighC: 19, avgLowC: 11, rainyDays: 8, note: "Often misty in the hills; cooler than Lisbon." },
    a: "Sintra is worth it if you love palaces and gardens (Pena, Quinta da Regaleira), but it is cooler and often misty in May. With only two days, Belém is the easier choice; Sintra needs a full day." },
  { q: "Convert my budget of 600 euros to US dollars, please.", tool: "convert_currency", args: { amount: 600, from: "EUR", to: "USD" },
    result: { amount: 600, from: "EUR", to: "USD", rate: 1.0842, converted: 650.52, asOf: "2025-04-30" },
    a: "€600 is about $650.52 at today's rate of 1.0842." },
  { q: "Any restaurants near the hotel for a quiet dinner on Saturday?", tool: "search_restaurants", args: { near: "Memmo Alfama", day: "Saturday", vibe: "quiet" },
    result: { restaurants: [{ name: "Santo António de Alfama", cuisine: "Portuguese", priceLevel: 2, walkMin: 4 }, { name: "Taberna Sal Grosso", cuisine: "petiscos", priceLevel: 2, walkMin: 7 }, { name: "Prado", cuisine: "seasonal", priceLevel: 3, walkMin: 12 }] },
    a: "Close by: Santo António de Alfama (4 min walk, classic Portuguese), Taberna Sal Grosso (7 min, small plates; book ahead) and Prado (12 min, seasonal tasting menu, pricier)." },
  { q: "Put it all in a short itinerary I can save.", tool: null,
    a: "Fri 16 May: easyJet 13:20 BER→LIS (ref EZY7Q2K, seat 14C), metro or ride to Memmo Alfama. Sat: Alfama, castle, tram 28, dinner at Taberna Sal Grosso. Sun: Belém and LX Factory. Mon 19: checkout, flight home. Budget ≈ €600 ($650)." },
];

function turns(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = TOPICS[i % TOPICS.length];
    const round = Math.floor(i / TOPICS.length);
    out.push({ ...t, id: `${i + 1}`, q: round ? `${t.q} (again, for trip #${round + 1})` : t.q });
  }
  return out;
}

function openai(n) {
  const m = [{ role: "system", content: SYSTEM }];
  for (const t of turns(n)) {
    m.push({ role: "user", content: t.q });
    if (t.tool) {
      const id = `call_${t.id}`;
      m.push({ role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: t.tool, arguments: JSON.stringify(t.args) } }] });
      m.push({ role: "tool", tool_call_id: id, content: JSON.stringify(t.result) });
    }
    m.push({ role: "assistant", content: t.a });
  }
  return m;
}

function anthropic(n) {
  // Anthropic takes the system prompt as a top-level field; a leading system message is
  // accepted and kept first too, which is what a chat UI usually stores.
  const m = [{ role: "system", content: SYSTEM }];
  for (const t of turns(n)) {
    m.push({ role: "user", content: t.q });
    if (t.tool) {
      const id = `toolu_${t.id.padStart(4, "0")}`;
      m.push({ role: "assistant", content: [{ type: "text", text: "Let me check." }, { type: "tool_use", id, name: t.tool, input: t.args }] });
      m.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: JSON.stringify(t.result) }] });
    }
    m.push({ role: "assistant", content: [{ type: "text", text: t.a }] });
  }
  return m;
}

function vercel(n) {
  const m = [{ role: "system", content: SYSTEM }];
  for (const t of turns(n)) {
    m.push({ role: "user", content: [{ type: "text", text: t.q }] });
    if (t.tool) {
      const toolCallId = `tc_${t.id}`;
      m.push({ role: "assistant", content: [{ type: "tool-call", toolCallId, toolName: t.tool, input: t.args }] });
      m.push({ role: "tool", content: [{ type: "tool-result", toolCallId, toolName: t.tool, output: { type: "json", value: t.result } }] });
    }
    m.push({ role: "assistant", content: [{ type: "text", text: t.a }] });
  }
  return m;
}

function gemini(n) {
  // Gemini has no system role in `contents` (it goes in systemInstruction).
  const m = [];
  for (const t of turns(n)) {
    m.push({ role: "user", parts: [{ text: t.q }] });
    if (t.tool) {
      m.push({ role: "model", parts: [{ functionCall: { name: t.tool, args: t.args } }] });
      m.push({ role: "user", parts: [{ functionResponse: { name: t.tool, response: t.result } }] });
    }
    m.push({ role: "model", parts: [{ text: t.a }] });
  }
  return m;
}

export const GENERATORS = {
  openai: { label: "OpenAI", make: openai },
  anthropic: { label: "Anthropic", make: anthropic },
  vercel: { label: "Vercel AI SDK", make: vercel },
  gemini: { label: "Gemini", make: gemini },
};

/** One line of readable text for a message of any supported shape. */
export function preview(m) {
  if (m == null || typeof m !== "object") return String(m);
  const bits = [];
  const push = (s) => { if (s != null && s !== "") bits.push(String(s)); };
  const part = (p) => {
    if (typeof p === "string") return push(p);
    if (!p || typeof p !== "object") return;
    if (p.type === "text" || p.type === "input_text" || p.type === "output_text" || (p.text && !p.type)) return push(p.text);
    if (p.type === "tool_use") return push(`→ ${p.name}(${JSON.stringify(p.input)})`);
    if (p.type === "tool_result") return push(`← ${typeof p.content === "string" ? p.content : JSON.stringify(p.content)}`);
    if (p.type === "tool-call") return push(`→ ${p.toolName}(${JSON.stringify(p.input)})`);
    if (p.type === "tool-result") return push(`← ${JSON.stringify(p.output?.value ?? p.output)}`);
    if (p.functionCall) return push(`→ ${p.functionCall.name}(${JSON.stringify(p.functionCall.args ?? {})})`);
    if (p.functionResponse) return push(`← ${JSON.stringify(p.functionResponse.response)}`);
    if (p.type === "image" || p.type === "image_url" || p.inlineData) return push("[image]");
    push(JSON.stringify(p));
  };
  if (typeof m.content === "string") push(m.content);
  else if (Array.isArray(m.content)) m.content.forEach(part);
  if (Array.isArray(m.parts)) m.parts.forEach(part);
  for (const c of m.tool_calls ?? []) push(`→ ${c.function?.name}(${c.function?.arguments})`);
  if (m.role === "tool" && typeof m.content === "string") bits[0] = `← ${bits[0]}`;
  return bits.join("  ").replace(/\s+/g, " ").trim() || JSON.stringify(m);
}
