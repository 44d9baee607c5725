// The weight of `otherLetter` (letters of alphabets other than Latin and CJK: Greek, Cyrillic,
// Hebrew, Arabic, the Indic scripts, Thai, Georgian…), fitted on real sentences in ten such
// languages: the translations in the gettext catalogs Debian installs under
// /usr/share/locale (the main corpus, from node_modules and the cargo registry, has none).
//
//   node bench/accuracy/scripts.mjs        per language: the best weight for each tokenizer
//                                          (lib.mjs TOKENIZERS), and estimate ÷ truth at its
//                                          profile's built-in one
//
// Environment: CHR_PKG (another build's node.js), SCRIPT_SAMPLES (per language, default 1500).
// A language whose catalogs are missing is skipped (and said so).
import { readFileSync, readdirSync } from "node:fs";
import { CLASS_NAMES, classCounts, loadPackage, loadTokenizers } from "./lib.mjs";

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
const names = Object.keys(tokenizers);
const k = CLASS_NAMES.indexOf("otherLetter");
const content = (text) => ({ role: "user", content: text });
// Each profile's estimate without the role and overhead, with otherLetter at 0 (what the
// other classes give), and the number of otherLetter code points.
const zero = (name) => ({ tokenizer: name, messageOverhead: 0, estimatorWeights: { otherLetter: 0 } });
const roleOnly = Object.fromEntries(names.map((n) => [n, estimateTokens(content(""), zero(n))]));
console.log(`package ${path}; ${SAMPLES} sentences a language from ${LOCALE}\n`);
console.log(`lang  sentences  letters${names.map((n) => `   ${n.padStart(7)}: fit  est÷truth`).join("")}`);
const fits = Object.fromEntries(names.map((n) => [n, []]));
for (const lang of LANGUAGES) {
  const texts = sentences(lang);
  if (texts.length === 0) {
    console.log(`${lang.padEnd(4)}  skipped: no catalogs under ${LOCALE}/${lang}`);
    continue;
  }
  const counts = texts.map((t) => classCounts(estimateTokens, content(t))[k]);
  const cells = [];
  for (const [name, count] of Object.entries(tokenizers)) {
    const rows = texts.map((t, i) => ({ n: counts[i], base: estimateTokens(content(t), zero(name)) - roleOnly[name], t }));
    const truth = rows.map((r) => count(r.t));
    // Least squares for the one weight: Σ n (truth − base) / Σ n².
    let a = 0, b = 0;
    rows.forEach((r, i) => { a += r.n * (truth[i] - r.base); b += r.n * r.n; });
    const estimate = rows.reduce((s, r) => s + estimateTokens(content(r.t), { tokenizer: name, messageOverhead: 0 }) - roleOnly[name], 0);
    const ratio = estimate / truth.reduce((s, x) => s + x, 0);
    fits[name].push(a / b);
    cells.push(`${(a / b).toFixed(2).padStart(12)}  ${ratio.toFixed(2).padStart(9)}`);
  }
  const letters = counts.reduce((s, n) => s + n, 0);
  console.log(`${lang.padEnd(4)}  ${String(texts.length).padStart(9)}  ${String(letters).padStart(7)}${cells.map((c) => `   ${c}`).join("")}`);
}
const median = (x) => x.slice().sort((p, q) => p - q)[x.length >> 1];
if (fits.o200k.length) {
  console.log(`\nmedian fit: ${names.map((n) => `${n} ${median(fits[n]).toFixed(2)}`).join(", ")}` +
    ` (built in: lib.mjs OTHER_LETTER, src/estimate/profiles.rs)`);
}
