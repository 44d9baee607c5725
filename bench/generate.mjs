// Seeded generator of OpenAI-format agent conversations for the benchmarks.
//
//   generateConversation(n, { seed })  → exactly n messages, deterministic for (n, seed)
//   generateTurns(seed)                → an endless iterator of groups (a user message, an
//                                        assistant tool call with its results, or a final
//                                        answer) for the per-turn scenarios
//
// Shape: one system prompt, then rounds of a user input, 0–4 agent steps (an assistant
// message with 1–3 parallel tool_calls followed by one `tool` result per call) and a final
// assistant answer. Lengths are heavy-tailed (log-normal; 10% of tool results are 2–20 KB of
// JSON text); about 10% of user inputs are Chinese or Japanese, some messages carry emoji,
// and assistants sometimes answer with code blocks.
//
// CLI: `node bench/generate.mjs 1000 [seed] > conversation.json` prints a conversation with
// its character and message statistics on stderr.

/** sfc32: small, fast, good enough for benchmark data; seeded through splitmix32. */
export function prng(seed = 42) {
  let s = seed >>> 0;
  const split = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = split(), b = split(), c = split(), d = split();
  const next = () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return next;
}

/** Helpers over one random source. */
function tools(random) {
  const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));
  const pick = (arr) => arr[Math.floor(random() * arr.length)];
  const chance = (p) => random() < p;
  const normal = () => {
    const u = 1 - random();
    const v = random();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  /** Log-normal with the given median, clamped: the heavy tail of real chat lengths. */
  const lognormal = (median, sigma, lo, hi) =>
    Math.max(lo, Math.min(hi, Math.round(median * Math.exp(sigma * normal()))));
  /** Log-uniform in [lo, hi]. */
  const logUniform = (lo, hi) => Math.round(lo * Math.pow(hi / lo, random()));
  return { int, pick, chance, normal, lognormal, logUniform };
}

/** Common English and engineering words: the prose of the generated sessions, and of
 * bench/retention.mjs's (which uses these alone). */
export const CHAT_WORDS = (
  "the a to of and in is it that for on with as this be are was by at or from you can we " +
  "file function error value table user request result data time query server config test " +
  "build page list index order price flight hotel weather city report summary issue change " +
  "module option return string number array object null update delete create read write " +
  "should would could will might need want check look find show run use make take give " +
  "because however therefore instead also only first next last new old large small fast " +
  "slow latency memory budget token message history window context model tool call answer"
).split(" ");
const WORDS = CHAT_WORDS.concat((
  "customer account invoice payment refund shipping delivery warehouse inventory product " +
  "quarterly revenue growth region market forecast metric dashboard alert incident deploy"
).split(" "));
const HAN = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严";
const KANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲン";
const CJK_PUNCT = "，。、；：？！「」（）";
const EMOJI = ["😀", "🙏", "🚀", "✅", "❌", "⚠️", "🔥", "👍", "🎉", "🤔", "📈", "🐛", "💡", "🇯🇵", "👩‍💻"];
const TOOL_NAMES = ["search_web", "read_file", "run_sql", "list_directory", "http_get", "grep_repo",
  "get_weather", "search_flights", "lookup_customer", "create_ticket", "run_tests", "fetch_metrics"];
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Text builders over one random source. */
function textKit(random) {
  const t = tools(random);
  const { int, pick, chance } = t;

  const sentence = () => {
    const n = int(5, 18);
    let s = pick(WORDS);
    s = s[0].toUpperCase() + s.slice(1);
    for (let i = 1; i < n; i++) s += (chance(0.06) ? ", " : " ") + pick(WORDS);
    if (chance(0.08)) s += " " + int(0, 99999);
    return s + (chance(0.12) ? "?" : ".");
  };
  const prose = (len) => {
    const parts = [];
    let size = 0;
    while (size < len) {
      const s = chance(0.1) ? "\n\n" + sentence() : sentence();
      parts.push(s);
      size += s.length + 1;
    }
    return parts.join(" ").slice(0, Math.max(1, len));
  };
  const cjk = (len) => {
    let s = "";
    const kana = chance(0.4);
    while (s.length < len) {
      const run = int(4, 14);
      for (let i = 0; i < run; i++) {
        s += kana && chance(0.5) ? KANA[int(0, KANA.length - 1)] : HAN[int(0, HAN.length - 1)];
      }
      s += CJK_PUNCT[int(0, CJK_PUNCT.length - 1)];
    }
    return s;
  };
  const sprinkleEmoji = (s) => {
    const n = int(1, 3);
    for (let i = 0; i < n; i++) {
      const at = int(0, s.length);
      // Never split a surrogate pair.
      const safe = at > 0 && at < s.length && s.charCodeAt(at - 1) >= 0xd800 && s.charCodeAt(at - 1) < 0xdc00 ? at + 1 : at;
      s = s.slice(0, safe) + " " + pick(EMOJI) + " " + s.slice(safe);
    }
    return s;
  };
  const code = (len) => {
    const lines = [];
    let size = 0;
    while (size < len) {
      const v = pick(WORDS) + int(0, 99);
      const l = pick([
        `const ${v} = await ${pick(TOOL_NAMES)}({ ${pick(WORDS)}: ${int(0, 999)} });`,
        `if (${v}.length > ${int(1, 64)}) {\n  return ${v}.slice(0, ${int(1, 32)});\n}`,
        `for (let i = 0; i < ${v}.length; i++) total += ${v}[i].${pick(WORDS)};`,
        `  // ${sentence()}`,
        `SELECT ${pick(WORDS)}, COUNT(*) FROM ${pick(WORDS)}s WHERE id = ${int(1, 9999)} GROUP BY 1;`,
      ]);
      lines.push(l);
      size += l.length + 1;
    }
    return lines.join("\n");
  };
  const id = (prefix, n) => {
    let s = prefix;
    for (let i = 0; i < n; i++) s += ALNUM[int(0, ALNUM.length - 1)];
    return s;
  };
  /** One JSON record of a tool result (as text): fields of every class of character. */
  const record = (k) => {
    const r = {
      id: int(1, 9_999_999),
      title: prose(int(12, 60)),
      score: Math.round(random() * 1e4) / 1e4,
      tags: [pick(WORDS), pick(WORDS), pick(WORDS)],
      updated_at: `2025-${String(int(1, 12)).padStart(2, "0")}-${String(int(1, 28)).padStart(2, "0")}T${String(int(0, 23)).padStart(2, "0")}:${String(int(0, 59)).padStart(2, "0")}:00Z`,
      snippet: chance(0.05) ? cjk(int(20, 120)) : prose(int(40, 240)),
    };
    if (chance(0.3)) r.metrics = { p50: int(1, 500), p99: int(100, 9000), count: int(0, 1e6) };
    if (chance(0.15)) r.url = `https://example.com/${pick(WORDS)}/${int(1, 99999)}?page=${k}`;
    return JSON.stringify(r);
  };
  return { ...t, sentence, prose, cjk, sprinkleEmoji, code, id, record };
}

/**
 * The endless stream of a generated agent conversation, as groups: the first group is the
 * system prompt; then for every round a user input, its agent steps (an assistant message
 * with 1–3 tool_calls together with their results) and a final answer.
 */
export function* generateTurns(seed = 42) {
  const random = prng(seed);
  const k = textKit(random);
  const { int, pick, chance, lognormal, logUniform } = k;
  // A pool of JSON records (reused at random) keeps generating 100 MB of tool output fast.
  const records = Array.from({ length: 3000 }, (_, i) => k.record(i));
  let callNo = 0;

  const systemPrompt =
    "You are Atlas, an engineering and operations agent. Use the tools to look things up; " +
    "never invent numbers. Answer in the user's language. " + k.prose(lognormal(1500, 0.3, 600, 4000));
  yield [{ role: "system", content: systemPrompt }];

  const toolResult = (name) => {
    const len = chance(0.1) ? logUniform(2048, 20480) : lognormal(400, 1.0, 20, 2000);
    if (chance(0.04)) return JSON.stringify({ error: { code: int(400, 599), message: k.prose(int(20, 90)) } });
    const parts = [`{"tool":"${name}","status":"ok","took_ms":${int(1, 4000)},"results":[`];
    let size = parts[0].length;
    let first = true;
    while (size < len) {
      const r = records[int(0, records.length - 1)];
      parts.push(first ? r : "," + r);
      size += r.length + 1;
      first = false;
    }
    parts.push(`],"next_cursor":${chance(0.3) ? `"${k.id("c_", 16)}"` : "null"}}`);
    return parts.join("");
  };
  const args = (name) => {
    const a = { query: k.prose(int(8, 60)) };
    if (chance(0.5)) a.limit = int(1, 50);
    if (name === "read_file" || name === "grep_repo") a.path = `src/${pick(WORDS)}/${pick(WORDS)}.rs`;
    if (name === "run_sql") a.sql = k.code(int(40, 200));
    return JSON.stringify(a);
  };
  const userText = () => {
    let s;
    if (chance(0.1)) s = k.cjk(lognormal(60, 0.8, 4, 1500));
    else if (chance(0.03)) s = "Here is the log:\n" + k.code(logUniform(1000, 12000)); // a pasted file
    else s = k.prose(lognormal(120, 0.9, 5, 3000));
    return chance(0.12) ? k.sprinkleEmoji(s) : s;
  };
  const answerText = (cjk) => {
    let s = cjk ? k.cjk(lognormal(200, 0.8, 10, 3000)) : k.prose(lognormal(450, 0.9, 20, 8000));
    if (chance(0.15)) s += "\n\n```js\n" + k.code(lognormal(300, 0.7, 40, 3000)) + "\n```\n";
    return chance(0.08) ? k.sprinkleEmoji(s) : s;
  };

  for (;;) {
    const user = userText();
    const cjk = /[\u3040-\u30ff\u4e00-\u9fff]/.test(user.slice(0, 8));
    yield [{ role: "user", content: user }];
    const steps = chance(0.15) ? 0 : Math.min(4, 1 + Math.floor(-Math.log(1 - random()) * 1.2));
    for (let s = 0; s < steps; s++) {
      const calls = chance(0.6) ? 1 : chance(0.6) ? 2 : 3;
      const tool_calls = [];
      for (let c = 0; c < calls; c++) {
        const name = pick(TOOL_NAMES);
        tool_calls.push({ id: k.id("call_", 24), type: "function", function: { name, arguments: args(name) } });
        callNo++;
      }
      const assistant = { role: "assistant", content: chance(0.3) ? k.prose(int(20, 200)) : null, tool_calls };
      const group = [assistant];
      for (const call of tool_calls) {
        group.push({ role: "tool", tool_call_id: call.id, content: toolResult(call.function.name) });
      }
      yield group;
    }
    yield [{ role: "assistant", content: answerText(cjk) }];
  }
}

/**
 * A conversation of exactly `n` messages. When `n` cuts a tool group, the cut assistant
 * message keeps only the calls whose results made it (or becomes a plain answer), so the
 * conversation is always well formed. Strings are flattened through JSON, as a history
 * that arrived in a request body would be.
 */
export function generateConversation(n, { seed = 42 } = {}) {
  const out = [];
  for (const group of generateTurns(seed)) {
    for (const m of group) {
      if (out.length < n) out.push(m);
    }
    if (out.length >= n) break;
  }
  // Repair a tool group cut at the end.
  let j = out.length - 1;
  while (j >= 0 && out[j].role === "tool") j--;
  const last = out[j];
  if (j >= 0 && last.role === "assistant" && Array.isArray(last.tool_calls)) {
    const answered = new Set(out.slice(j + 1).map((m) => m.tool_call_id));
    last.tool_calls = last.tool_calls.filter((c) => answered.has(c.id));
    if (last.tool_calls.length === 0) {
      delete last.tool_calls;
      last.content = last.content ?? "Let me look into that.";
    }
  }
  return JSON.parse(JSON.stringify(out));
}

/** Characters, messages by role, and big tool results: for the benchmark's header. */
export function describeConversation(messages) {
  let chars = 0, bigTools = 0;
  const roles = {};
  for (const m of messages) {
    roles[m.role] = (roles[m.role] ?? 0) + 1;
    const texts = [m.content ?? "", ...(m.tool_calls ?? []).map((c) => c.function.arguments)];
    for (const t of texts) {
      chars += t.length;
    }
    if (m.role === "tool" && m.content.length >= 2048) bigTools++;
  }
  return { messages: messages.length, chars, roles, bigToolResults: bigTools };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(process.argv[2] ?? 100);
  const seed = Number(process.argv[3] ?? 42);
  const conv = generateConversation(n, { seed });
  process.stderr.write(JSON.stringify(describeConversation(conv)) + "\n");
  process.stdout.write(JSON.stringify(conv, null, 1) + "\n");
}
