// Two providers' prompt-caching rules, as bills of one prompt after another (cost.mjs).
// A prompt is a list of messages, each described as { key, tokens, blocks, marked }: `key`
// names its bytes (equal keys, equal bytes; a breakpoint's mark is not part of them),
// `blocks` its content blocks, `marked` whether it carries a cache breakpoint on its last
// block. Prices are in units of the input price: a token read from cache costs 0.1.
//
// - OpenAI (automatic prefix caching): the longest prefix a prompt shares with earlier
//   ones is read from cache when it has at least 1,024 tokens, in steps of 128 tokens.
//   Every prompt's prefixes are cached for the next (the session's calls are seconds
//   apart: within the 5–10 minutes a prefix stays).
// - Anthropic: only a prefix that ends at a breakpoint is written (when it has at least
//   1,024 tokens), at 1.25. A prompt reads the longest entry found at one of its breakpoints
//   or up to 20 blocks before one, and writes everything from there to its last breakpoint;
//   what follows that is billed at 1. With no breakpoint nothing is read or written. The
//   5-minute lifetime is not modelled (each read renews it; the calls are seconds apart).
//
// Granularity: messages. A prompt that differs from an earlier one inside a message is
// taken to share nothing of that message (a reduction's change opens a message: a new
// summary, a preview, or the next message kept).

export const READ = 0.1;
export const WRITE = 1.25;
export const MIN_CACHED = 1024;
export const OPENAI_STEP = 128;
export const LOOKBACK_BLOCKS = 20;

/** Prefixes as nodes of a trie of message keys: a prompt's i-th node names its first i + 1
 * messages. */
class Prefixes {
  constructor() {
    this.nodes = new Map();
  }

  of(prompt) {
    const out = new Array(prompt.length);
    let node = 0;
    for (let i = 0; i < prompt.length; i++) {
      const edge = `${node}:${prompt[i].key}`;
      let next = this.nodes.get(edge);
      if (next === undefined) {
        next = this.nodes.size + 1;
        this.nodes.set(edge, next);
      }
      out[i] = node = next;
    }
    return out;
  }
}

/** Running sums: `tokens[i]`, `blocks[i]` of the first i + 1 messages. */
function sums(prompt) {
  const tokens = new Array(prompt.length), blocks = new Array(prompt.length);
  let t = 0, b = 0;
  for (let i = 0; i < prompt.length; i++) {
    t += prompt[i].tokens;
    b += prompt[i].blocks;
    tokens[i] = t;
    blocks[i] = b;
  }
  return { tokens, blocks, total: t };
}

export class OpenAICache {
  constructor() {
    this.prefixes = new Prefixes();
    this.seen = new Set();
  }

  /** `{ tokens, read, written, billed }` of one prompt. */
  bill(prompt) {
    const nodes = this.prefixes.of(prompt), s = sums(prompt);
    let shared = 0;
    while (shared < nodes.length && this.seen.has(nodes[shared])) shared++;
    const common = shared > 0 ? s.tokens[shared - 1] : 0;
    const read = common >= MIN_CACHED ? Math.floor(common / OPENAI_STEP) * OPENAI_STEP : 0;
    for (const n of nodes) this.seen.add(n);
    return { tokens: s.total, read, written: 0, billed: READ * read + (s.total - read) };
  }
}

export class AnthropicCache {
  constructor() {
    this.prefixes = new Prefixes();
    this.entries = new Set();
  }

  bill(prompt) {
    const nodes = this.prefixes.of(prompt), s = sums(prompt);
    const marks = [];
    for (let i = 0; i < prompt.length; i++) if (prompt[i].marked) marks.push(i);
    if (marks.length === 0) return { tokens: s.total, read: 0, written: 0, billed: s.total };
    let hit = -1;
    for (const b of marks) {
      for (let j = b; j > hit && s.blocks[b] - s.blocks[j] <= LOOKBACK_BLOCKS; j--) {
        if (this.entries.has(nodes[j])) {
          hit = j;
          break;
        }
      }
    }
    const last = marks[marks.length - 1];
    const read = hit >= 0 ? s.tokens[hit] : 0;
    let written = 0;
    if (s.tokens[last] >= MIN_CACHED) {
      written = s.tokens[last] - read;
      for (const b of marks) if (s.tokens[b] >= MIN_CACHED) this.entries.add(nodes[b]);
    }
    return { tokens: s.total, read, written, billed: READ * read + WRITE * written + (s.total - read - written) };
  }
}

/** The rules on small prompts whose bills are known: run before a bench relies on them. */
export function checkRules() {
  const m = (key, tokens, marked = false, blocks = 1) => ({ key, tokens, blocks, marked });
  const eq = (a, b, what) => {
    if (Math.abs(a - b) > 1e-9) throw new Error(`caching.mjs: ${what}: ${a}, expected ${b}`);
  };
  const openai = new OpenAICache();
  eq(openai.bill([m("s", 1000), m("a", 500)]).billed, 1500, "a first prompt");
  // 1,500 shared: 1,408 of them (11 steps of 128) read.
  eq(openai.bill([m("s", 1000), m("a", 500), m("b", 100)]).read, 1408, "a prefix in steps of 128");
  eq(openai.bill([m("s", 1000), m("c", 500)]).read, 0, "under 1,024 shared");
  const anthropic = new AnthropicCache();
  eq(anthropic.bill([m("s", 1000), m("a", 500)]).billed, 1500, "no breakpoint");
  const first = anthropic.bill([m("s", 1000), m("a", 500, true), m("q", 10)]);
  eq(first.written, 1500, "written up to the breakpoint");
  eq(first.billed, 1.25 * 1500 + 10, "the rest at the input price");
  const second = anthropic.bill([m("s", 1000), m("a", 500), m("r", 100), m("q2", 20, true)]);
  eq(second.read, 1500, "the entry found a few blocks before the breakpoint");
  eq(second.written, 120, "the rest written");
  // More than 20 blocks after the entry: not found.
  eq(anthropic.bill([m("s", 1000), m("a", 500), m("r", 100), m("q2", 20), m("big", 50, true, 21)]).read, 0, "beyond the lookback");
  eq(anthropic.bill([m("t", 600, true), m("u", 100, true)]).written, 0, "under 1,024 nothing is cached");
}
