// The weight of `otherLetter` (letters of alphabets other than Latin and CJK: Greek, Cyrillic,
// Hebrew, Arabic, the Indic scripts, Thai, Georgian…), fitted on real sentences in ten such
// languages: the translations in the gettext catalogs Debian installs under
// /usr/share/locale (the main corpus, from node_modules and the cargo registry, has none).
//
//   node bench/accuracy/scripts.mjs        per language: the best weight for o200k and
//                                          cl100k, and estimate ÷ truth at the built-in one
//
// Environment: CHR_PKG (another build's node.js), SCRIPT_SAMPLES (per language, default 1500).
// A language whose catalogs are missing is skipped (and said so).
import { readFileSync, readdirSync } from "node:fs";
import { CLASS_NAMES, SPEC_WEIGHTS, classCounts, loadPackage, loadTokenizers } from "./lib.mjs";

const LANGUAGES = ["ru", "uk", "bg", "el", "ar", "fa", "he", "hi", "th", "ka"];
const SAMPLES = Number(process.env.SCRIPT_SAMPLES ?? 1500);
const LOCALE = "/usr/share/locale";

/** The translations (msgstr) of a compiled gettext catalog, in file order. */
function catalog(file) {
  const b = readFileSync(file);
  if (b.length < 28) return [];
  const magic = b.readUInt32LE(0);
  if (magic !== 0x950412de && magic !== 0xde120495) return [];
  const u32 = magic === 0x950412de ? (o) => b.readUInt32LE(o) : (o) => b.readUInt32BE(o);
  const n = u32(8), table = u32(16), out = [];
  for (let i = 0; i < n; i++) {
    const length = u32(table + 8 * i), at = u32(table + 8 * i + 4);
    const text = b.subarray(at, at + length).toString("utf8");
    if (!text.startsWith("Project-Id-Version")) out.push(...text.split("\0"));
  }
  return out;
}

/** Up to SAMPLES translations of at least 20 characters in `lang` (catalogs in name order). */
function sentences(lang) {
  const dir = `${LOCALE}/${lang}/LC_MESSAGES`;
  let files;
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(".mo")).sort();
  } catch {
    return [];
  }
  const out = [];
  for (const f of files) {
    for (const s of catalog(`${dir}/${f}`)) if (s.length >= 20) out.push(s);
    if (out.length >= SAMPLES) break;
  }
  return out.slice(0, SAMPLES);
}

const { estimateTokens, path } = await loadPackage();
const tokenizers = await loadTokenizers();
const k = CLASS_NAMES.indexOf("otherLetter");
const content = (text) => ({ role: "user", content: text });
// The estimate without the role and overhead, with otherLetter at 0 (what the other classes
// give), and the number of otherLetter code points.
const zero = { ...SPEC_WEIGHTS, otherLetter: 0 };
const roleOnly = estimateTokens(content(""), { messageOverhead: 0, estimatorWeights: zero });
console.log(`package ${path}; ${SAMPLES} sentences a language from ${LOCALE}\n`);
console.log("lang  sentences  letters   o200k: fit  est÷truth   cl100k: fit  est÷truth");
const fits = { o200k: [], cl100k: [] };
for (const lang of LANGUAGES) {
  const texts = sentences(lang);
  if (texts.length === 0) {
    console.log(`${lang.padEnd(4)}  skipped: no catalogs under ${LOCALE}/${lang}`);
    continue;
  }
  const rows = texts.map((t) => ({
    n: classCounts(estimateTokens, content(t))[k],
    base: estimateTokens(content(t), { messageOverhead: 0, estimatorWeights: zero }) - roleOnly,
    t,
  }));
  const cells = [];
  for (const [name, count] of Object.entries(tokenizers)) {
    const profile = name === "o200k" ? {} : { tokenizer: "cl100k" };
    const truth = rows.map((r) => count(r.t));
    // Least squares for the one weight: Σ n (truth − base) / Σ n².
    let a = 0, b = 0;
    rows.forEach((r, i) => { a += r.n * (truth[i] - r.base); b += r.n * r.n; });
    const estimate = rows.reduce((s, r) => s + estimateTokens(content(r.t), { ...profile, messageOverhead: 0 }) - roleOnly, 0);
    const ratio = estimate / truth.reduce((s, x) => s + x, 0);
    fits[name].push(a / b);
    cells.push(`${(a / b).toFixed(2).padStart(10)}  ${ratio.toFixed(2).padStart(9)}`);
  }
  const letters = rows.reduce((s, r) => s + r.n, 0);
  console.log(`${lang.padEnd(4)}  ${String(texts.length).padStart(9)}  ${String(letters).padStart(7)}  ${cells.join("   ")}`);
}
const median = (x) => x.slice().sort((p, q) => p - q)[x.length >> 1];
if (fits.o200k.length) {
  console.log(`\nmedian fit: o200k ${median(fits.o200k).toFixed(2)}, cl100k ${median(fits.cl100k).toFixed(2)}` +
    ` (built in: ${SPEC_WEIGHTS.otherLetter} for o200k; see Weights::fitted for cl100k)`);
}
