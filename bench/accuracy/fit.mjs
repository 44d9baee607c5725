// Fits the 12 class weights of the built-in estimator (SPEC §3) against each tokenizer of
// lib.mjs TOKENIZERS (o200k, cl100k, gemma, llama3) by non-negative least squares, on the train
// half of the corpus; reports the errors on the test half, and prints the weights.
//
//   node bench/accuracy/fit.mjs            fits, errors, literals
//   node bench/accuracy/fit.mjs --write gemma,llama3
//                                          also writes those profiles' rows of
//                                          src/estimate/profiles.rs (the only copy)
//   node bench/accuracy/fit.mjs --classes  also: evidence for classification changes (a JS copy
//                                          of the Rust classifier, checked against it, and
//                                          variants of it refitted; plus a probe of European
//                                          languages from TypeScript's localized messages)
//
// Per-class counts come from the library itself (lib.mjs classCounts: weight 1000 on one class).
// The objective is described at fitWeights.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { KINDS, prepare } from "./data.mjs";
import {
  CLASS_NAMES, OTHER_LETTER, OVERHEAD, REPO, SPEC_WEIGHTS, TOKENIZERS, errors, estimateFromCounts, fmt, loadTokenizers, nnls, table, truthOf,
  weightsFromVector,
} from "./lib.mjs";

/** Tokens per code point of each class, fitted on `split` rows against rows[].truth[truthKey]. */
/**
 * Tokens per code point of each class, fitted against rows[].truth[truthKey] on the train half:
 * one least-squares row per message (target truth − overhead − 0.5, the mean round-up of the
 * ceil; weight 1/√truth) and one per train conversation (sums of 50 messages, per kind and mixed;
 * weight 1/truth², i.e. relative error), the two groups with equal total weight. Messages alone
 * leave per-kind biases that add up in conversations; conversations alone fit short messages badly.
 * fixed: {className: weight} held at a value, the others fitted around it.
 */
export function fitWeights(d, truthKey, { countsOf = (r) => r.counts, fixed: given = {}, power = 0.5, convWeight = 1, roundUp = 0.5 } = {}) {
  // (The corpus has no letters of other alphabets: `otherLetter` is fitted by scripts.mjs.)
  const fixed = { otherLetter: OTHER_LETTER[truthKey], ...given };
  const { rows, convs } = d;
  const free = CLASS_NAMES.map((n, i) => i).filter((i) => !(CLASS_NAMES[i] in fixed));
  const row = (c, truth, n, w) => {
    const pinned = CLASS_NAMES.reduce((s, name, i) => s + (name in fixed ? c[i] * fixed[name] : 0), 0);
    return { a: free.map((i) => c[i]), b: truth - n * (OVERHEAD + roundUp) - pinned, w };
  };
  const data = rows.filter((r) => r.split === "train").map((r) => row(countsOf(r), r.truth[truthKey], 1, 1 / r.truth[truthKey] ** power));
  if (convWeight > 0) {
    const convRows = Object.values(convs.train).flat().map((ids) => {
      const c = CLASS_NAMES.map((_, i) => ids.reduce((s, j) => s + countsOf(rows[j])[i], 0));
      const truth = ids.reduce((s, j) => s + rows[j].truth[truthKey], 0);
      return row(c, truth, ids.length, 1 / truth ** 2);
    });
    const mass = (rs) => rs.reduce((s, x) => s + x.w * x.b * x.b, 0);
    const k = (convWeight * mass(data)) / mass(convRows);
    for (const x of convRows) data.push({ ...x, w: x.w * k });
  }
  const x = nnls(data, free.length);
  return CLASS_NAMES.map((n, i) => (n in fixed ? fixed[n] : x[free.indexOf(i)]));
}

const RUST_FIELDS = {
  letter: "letter", digit: "digit", whitespace: "whitespace", whitespaceRun: "whitespace_run",
  punctuation: "punctuation", han: "han", kana: "kana", hangul: "hangul", cjkPunctuation: "cjk_punctuation",
  emoji: "emoji", other: "other", otherLetter: "other_letter",
};
export function rustLiteral(w) {
  return ["Weights {", ...CLASS_NAMES.map((n) => `    ${RUST_FIELDS[n]}: ${w[n].toFixed(2)},`), "}"].join("\n");
}
export function jsLiteral(w) {
  return `{ ${CLASS_NAMES.map((n) => `${n}: ${w[n].toFixed(2)}`).join(", ")} }`;
}

/**
 * Errors of per-message estimates est[i] against truth, on the test half: per kind and overall
 * (overall conversations = the mixed ones).
 */
export function errorTable(d, est, truthKey, split = "test") {
  const { rows, convs } = d;
  const conv = (ids) => [ids.reduce((s, i) => s + est[i], 0), ids.reduce((s, i) => s + rows[i].truth[truthKey], 0)];
  const out = {};
  for (const kind of [...KINDS, "overall"]) {
    const m = rows
      .map((r, i) => [est[i], r.truth[truthKey], r])
      .filter(([, , r]) => r.split === split && (kind === "overall" || r.kind === kind));
    out[kind] = {
      message: errors(m),
      conversation: errors(convs[split][kind === "overall" ? "mixed" : kind].map(conv)),
    };
  }
  return out;
}

export function printErrorTable(title, t) {
  console.log(`\n${title}`);
  console.log(
    table(
      ["kind", "msg MAPE%", "msg bias%", "conv MAPE%", "conv bias%", "conv under>20%", "worst conv%"],
      Object.entries(t).map(([k, e]) => [
        k, fmt(e.message.mape), fmt(e.message.bias), fmt(e.conversation.mape), fmt(e.conversation.bias),
        fmt(e.conversation.under20), fmt(e.conversation.worstUnder),
      ]),
    ),
  );
}

// ---------------------------------------------------------------- classification evidence

const SPACES = new Set([32, 9, 10, 13, 11, 12, 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f]);
const L = 0, D = 1, S = 2, SR = 3, P = 4, HAN = 5, KANA = 6, HANGUL = 7, CJKP = 8, EMOJI = 9, OTHER = 10;
const isLatinExt = (u) => (u >= 0xc0 && u <= 0x24f) || (u >= 0x1e00 && u <= 0x1eff);

/** A JavaScript copy of class_of/ascii_classes in src/estimate.rs (checked against it below). */
function rustClass(u) {
  if (u < 128) {
    if ((u >= 65 && u <= 90) || (u >= 97 && u <= 122)) return L;
    if (u >= 48 && u <= 57) return D;
    if (SPACES.has(u)) return S;
    if ((u >= 33 && u <= 47) || (u >= 58 && u <= 64) || (u >= 91 && u <= 96) || (u >= 123 && u <= 126)) return P;
    return OTHER;
  }
  if (isLatinExt(u)) return L;
  if ((u >= 0x3040 && u <= 0x30ff) || (u >= 0x31f0 && u <= 0x31ff) || (u >= 0xff66 && u <= 0xff9f)) return KANA;
  if ((u >= 0x3400 && u <= 0x4dbf) || (u >= 0x4e00 && u <= 0x9fff) || (u >= 0xf900 && u <= 0xfaff) || (u >= 0x20000 && u <= 0x3134f)) return HAN;
  if ((u >= 0xac00 && u <= 0xd7af) || (u >= 0x1100 && u <= 0x11ff) || (u >= 0x3130 && u <= 0x318f) || (u >= 0xa960 && u <= 0xa97f)) return HANGUL;
  if ((u >= 0x3000 && u <= 0x303f) || (u >= 0xff00 && u <= 0xff65) || (u >= 0xfe30 && u <= 0xfe4f)) return CJKP;
  if ((u >= 0x1f000 && u <= 0x1faff) || (u >= 0x2600 && u <= 0x27bf) || (u >= 0x2b00 && u <= 0x2bff) || u === 0xfe0f || u === 0x200d) return EMOJI;
  if (SPACES.has(u) || (u >= 0x2000 && u <= 0x200a)) return S;
  return OTHER;
}

/** Variants of the classifier: a code point → class, or S for whitespace. */
const cyrGreek = (u) => u >= 0x370 && u <= 0x52f; // Greek, Cyrillic, Cyrillic Supplement
const latinExtNotSymbol = (u) => isLatinExt(u) && u !== 0xd7 && u !== 0xf7; // not × ÷
const VARIANTS = {
  "current (src/estimate.rs)": rustClass,
  "Cyrillic+Greek → letter": (u) => (cyrGreek(u) ? L : rustClass(u)),
  "Latin-ext → other": (u) => (latinExtNotSymbol(u) ? OTHER : rustClass(u)),
  "both of the above": (u) => (cyrGreek(u) ? L : latinExtNotSymbol(u) ? OTHER : rustClass(u)),
  "both + tags/keycap → emoji": (u) =>
    (u >= 0xe0000 && u <= 0xe007f) || u === 0x20e3 ? EMOJI : cyrGreek(u) ? L : latinExtNotSymbol(u) ? OTHER : rustClass(u),
};

function countsWith(classOf, msg) {
  const c = new Array(CLASS_NAMES.length).fill(0);
  for (const text of [msg.role, msg.content]) {
    let inSpace = false;
    for (const ch of text) {
      let k = classOf(ch.codePointAt(0));
      if (k === S) {
        k = inSpace ? SR : S;
        inSpace = true;
      } else inSpace = false;
      c[k]++;
    }
  }
  return c;
}

const PROBE_LANGS = ["cs", "de", "es", "fr", "it", "pl", "pt-br", "ru", "tr"];
/** Messages of 8 consecutive localized TypeScript diagnostics per European language. */
async function languageProbe() {
  const tok = await loadTokenizers();
  const out = [];
  for (const lang of PROBE_LANGS) {
    const file = path.join(REPO, "node_modules/typescript/lib", lang, "diagnosticMessages.generated.json");
    const values = Object.values(JSON.parse(readFileSync(file, "utf8")));
    for (let i = 0; i + 8 <= values.length && i < 800; i += 8) {
      const message = { role: "user", content: values.slice(i, i + 8).join(" ") };
      out.push({ lang, message, truth: { o200k: truthOf(tok.o200k, message), cl100k: truthOf(tok.cl100k, message) } });
    }
  }
  return out;
}

async function classificationEvidence(d) {
  const mismatches = d.rows.filter((r) => countsWith(rustClass, r.message).join() !== r.counts.join()).length;
  console.log(`\n## Classification evidence (JS copy of the Rust classifier: ${mismatches} of ${d.rows.length} messages differ from the library's counts)`);
  if (mismatches) console.log("   (the copy is stale: the variants below are relative to it, not to the library)");
  const probe = await languageProbe();
  const langBias = (est, truthKey) =>
    PROBE_LANGS.map((l) => {
      const e = errors(probe.map((p, i) => [est[i], p.truth[truthKey], p.lang]).filter((x) => x[2] === l));
      return fmt(e.bias, 0);
    });

  // Tokens per code point of single characters, in context-free strings (first-hand evidence).
  const tok = await loadTokenizers();
  const singles = [
    ["ASCII letter (word 'hello')", "hello", 5], ["Latin-ext (café)", "café", 4], ["Latin-ext (Größe)", "Größe", 5],
    ["Latin-ext (naïve résumé)", "naïve résumé", 12], ["Cyrillic (привет мир)", "привет мир", 10],
    ["Greek (Γειά σου κόσμε)", "Γειά σου κόσμε", 14], ["Hebrew (שלום עולם)", "שלום עולם", 9],
    ["curly quotes “”", "“”", 2], ["em dash —", "—", 1], ["tag flag 🏴 England", "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}", 7],
    ["keycap 1️⃣", "1\uFE0F\u20E3", 3], ["heart ❤️ (with VS16)", "\u2764\uFE0F", 2], ["newline", "\n", 1],
  ];
  console.log("\nSingle strings, tokens:");
  console.log(
    table(
      ["string", "code points", "o200k", "cl100k", "SPEC weights (current classes)"],
      singles.map(([name, s, n]) => {
        const c = countsWith(rustClass, { role: "", content: s });
        return [name, n, tok.o200k(s), tok.cl100k(s), fmt(CLASS_NAMES.reduce((sum, k, i) => sum + c[i] * SPEC_WEIGHTS[k], 0), 2)];
      }),
    ),
  );

  const header = ["variant", "o200k fit: test msg MAPE%", "mixed conv MAPE%", "worst kind conv MAPE%", "probe MAPE%", ...PROBE_LANGS.map((l) => `${l} bias%`)];
  const rowsOut = [];
  const spec = probe.map((p) => estimateFromCounts(countsWith(rustClass, p.message), SPEC_WEIGHTS));
  rowsOut.push(["SPEC weights, current classes", "", "", "", fmt(errors(probe.map((p, i) => [spec[i], p.truth.o200k])).mape), ...langBias(spec, "o200k")]);
  const fitted = {};
  for (const [name, classOf] of Object.entries(VARIANTS)) {
    const counts = new Map(d.rows.map((r) => [r, countsWith(classOf, r.message)]));
    const probeCounts = probe.map((p) => countsWith(classOf, p.message));
    for (const [how, fixed] of [["free", {}], ["other=0.70", { other: 0.7 }]]) {
      const w = weightsFromVector(fitWeights(d, "o200k", { countsOf: (r) => counts.get(r), fixed }));
      fitted[`${name}, ${how}`] = w;
      const t = errorTable(d, d.rows.map((r) => estimateFromCounts(counts.get(r), w)), "o200k");
      const pe = probeCounts.map((c) => estimateFromCounts(c, w));
      rowsOut.push([
        `${name}, ${how}`, fmt(t.overall.message.mape), fmt(t.overall.conversation.mape),
        fmt(Math.max(...KINDS.map((k) => t[k].conversation.mape))),
        fmt(errors(probe.map((p, i) => [pe[i], p.truth.o200k])).mape), ...langBias(pe, "o200k"),
      ]);
    }
  }
  console.log(`\nClassifier variants, each refitted on the train half against o200k (all 11 weights free, or "other" held at 0.70); probe = ${probe.length} messages of TypeScript's localized diagnostics (8 per message), not part of the fit:`);
  console.log(table(header, rowsOut));
  for (const [name, w] of Object.entries(fitted)) console.log(`  ${name}: ${jsLiteral(w)}`);
  return { mismatches, fitted, variants: rowsOut.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]]))) };
}

// ---------------------------------------------------------------- profiles

/** Where the profiles' weights live: one row per tokenizer, written by `--write`. */
export const PROFILES_RS = path.join(REPO, "src", "estimate", "profiles.rs");

/**
 * The weights of tokenizer `truthKey`'s profile as `--write` writes them: the train-half fit
 * with `other` held at 0.70 (~0.1% of the corpus's code points: a free fit gives ~0.2 or 0,
 * which under-counts symbols and unlisted scripts ~4x) and `otherLetter` at scripts.mjs's value.
 */
export function profileWeights(d, truthKey) {
  return weightsFromVector(fitWeights(d, truthKey, { fixed: { other: 0.7 } }));
}

/** Replaces the rows of `weightsByName` in profiles.rs (hundredths, CLASS_NAMES order); the others stay. */
export function writeProfiles(weightsByName) {
  let src = readFileSync(PROFILES_RS, "utf8");
  for (const [name, w] of Object.entries(weightsByName)) {
    const row = new RegExp(`\\(\\s*"${name}",\\s*\\[[^\\]]*\\],?\\s*\\)`);
    if (!row.test(src)) throw new Error(`${PROFILES_RS}: no row for "${name}" (a new profile needs a row and a Tokenizer variant first)`);
    const hundredths = CLASS_NAMES.map((n) => Math.round(w[n] * 100));
    src = src.replace(row, `("${name}", [${hundredths.join(", ")}])`);
  }
  writeFileSync(PROFILES_RS, src);
}

// ---------------------------------------------------------------- main

/** Each tokenizer's profile fit ({weights, errors} by tokenizer name), errors on the test half. */
export async function runFit(d, { print = true } = {}) {
  const result = {};
  for (const truthKey of TOKENIZERS) {
    const w = profileWeights(d, truthKey);
    const est = d.rows.map((r) => d.pkg.estimateTokens(r.message, { estimatorWeights: w }));
    const t = errorTable(d, est, truthKey);
    result[truthKey] = { weights: w, errors: t };
    if (print) {
      console.log(`\n## Weights fitted against ${truthKey} (train half, NNLS; other at 0.70, otherLetter at ${OTHER_LETTER[truthKey]})`);
      console.log(rustLiteral(w));
      console.log(`estimatorWeights: ${jsLiteral(w)}`);
      printErrorTable(`Errors of these weights against ${truthKey}, test half (through estimateTokens):`, t);
    }
  }
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  const d = await prepare({ log: console.log });
  const fits = await runFit(d);
  const at = process.argv.indexOf("--write");
  if (at >= 0) {
    const names = (process.argv[at + 1] ?? "").split(",").filter(Boolean);
    const unknown = names.filter((n) => !TOKENIZERS.includes(n));
    if (!names.length || unknown.length) throw new Error(`--write NAME[,NAME…] of ${TOKENIZERS.join(", ")}${unknown.length ? `; unknown: ${unknown}` : ""}`);
    writeProfiles(Object.fromEntries(names.map((n) => [n, fits[n].weights])));
    console.log(`\nwrote the rows of ${names.join(", ")} into ${path.relative(process.cwd(), PROFILES_RS)}: rebuild (bash scripts/build.sh), then make accuracy`);
  }
  if (process.argv.includes("--classes")) await classificationEvidence(d);
  console.log(`\nfit.mjs: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

export { classificationEvidence };
