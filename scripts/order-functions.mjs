// Orders the functions of a .wasm for gzip: `node scripts/order-functions.mjs FILE` writes
// into FILE a name section whose names are the places it chooses ("000", "001", …);
// `wasm-opt --reorder-functions-by-name --strip-debug` then puts the functions in that order
// (scripts/build.sh). gzip reuses what it finds in the last 32 KB only, so a function placed
// after code it shares byte sequences with costs less. The order is greedy: from the first
// function, the next is the one with the smallest share of 5-byte sequences not in the last
// 32 KB placed. Deterministic, half a second; the code itself is unchanged.
import { readFileSync, writeFileSync } from "node:fs";
import { leb } from "./wasm-leb.mjs";

const K = 5; // bytes in a sequence compared
const WINDOW = 32_768; // gzip's window: the bytes placed last that a function is compared with
const BITS = 22; // sequences are counted by a hash of this many bits

const file = process.argv[2];
if (!file) {
  console.error("usage: node scripts/order-functions.mjs FILE.wasm");
  process.exit(2);
}
const wasm = readFileSync(file);

/** The module's sections: `{ id, start, end, body }` (`body`: where its content starts). */
function sections(b) {
  const out = [];
  let p = 8;
  while (p < b.length) {
    const start = p, id = b[p++];
    const [size, at] = leb(b, p);
    out.push({ id, start, body: at, end: at + size });
    p = at + size;
  }
  return out;
}


function encodeLeb(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return Buffer.from(out);
}

/** The number of imported functions (they come first in the function index space). */
function importedFunctions(b, s) {
  let [count, p] = leb(b, s.body), functions = 0;
  const skipName = () => {
    const [len, at] = leb(b, p);
    p = at + len;
  };
  for (let i = 0; i < count; i++) {
    skipName();
    skipName();
    const kind = b[p++];
    if (kind === 0) {
      [, p] = leb(b, p);
      functions++;
    } else if (kind === 1) {
      p++;
      const flags = b[p++];
      [, p] = leb(b, p);
      if (flags & 1) [, p] = leb(b, p);
    } else if (kind === 2) {
      const flags = b[p++];
      [, p] = leb(b, p);
      if (flags & 1) [, p] = leb(b, p);
    } else if (kind === 3) {
      p += 2;
    } else if (kind === 4) {
      p++;
      [, p] = leb(b, p);
    } else {
      throw new Error(`order-functions: import kind ${kind} not known`);
    }
  }
  return functions;
}

/** The bodies of the code section, in order. */
function bodies(b, s) {
  let [count, p] = leb(b, s.body);
  const out = [];
  for (let i = 0; i < count; i++) {
    const [size, at] = leb(b, p);
    out.push(b.subarray(at, at + size));
    p = at + size;
  }
  return out;
}

/** The hashes of each `K`-byte sequence of `body`. */
function sequences(body) {
  const out = new Uint32Array(Math.max(0, body.length - K + 1));
  for (let i = 0; i < out.length; i++) {
    let h = 2166136261;
    for (let j = 0; j < K; j++) h = Math.imul(h ^ body[i + j], 16777619);
    out[i] = (h >>> 0) & ((1 << BITS) - 1);
  }
  return out;
}

/** The greedy order of `code` (function bodies), as a list of their indices. */
function order(code) {
  const seqs = code.map(sequences);
  const inWindow = new Int32Array(1 << BITS);
  const placed = new Uint8Array(code.length);
  const out = [], window = [];
  let windowBytes = 0;
  const place = (f) => {
    placed[f] = 1;
    out.push(f);
    for (const h of seqs[f]) inWindow[h]++;
    window.push(f);
    windowBytes += code[f].length;
    while (windowBytes - code[window[0]].length >= WINDOW) {
      const old = window.shift();
      windowBytes -= code[old].length;
      for (const h of seqs[old]) inWindow[h]--;
    }
  };
  if (code.length > 0) place(0);
  while (out.length < code.length) {
    let best = -1, bestScore = Infinity;
    for (let f = 0; f < code.length; f++) {
      if (placed[f]) continue;
      let missing = 0;
      for (const h of seqs[f]) if (inWindow[h] === 0) missing++;
      const score = missing / (code[f].length + 1);
      if (score < bestScore) {
        bestScore = score;
        best = f;
      }
    }
    place(best);
  }
  return out;
}

const all = sections(wasm);
const importSection = all.find((s) => s.id === 2);
const codeSection = all.find((s) => s.id === 10);
if (!codeSection) throw new Error("order-functions: no code section");
const imported = importSection ? importedFunctions(wasm, importSection) : 0;
const code = bodies(wasm, codeSection);
const places = order(code);

// The name section: a function-names subsection (id 1) with each function's place.
const width = String(code.length).length;
const names = [encodeLeb(code.length)];
const placeOf = new Array(code.length);
places.forEach((f, k) => {
  placeOf[f] = k;
});
for (let f = 0; f < code.length; f++) {
  const name = Buffer.from(String(placeOf[f]).padStart(width, "0"));
  names.push(encodeLeb(imported + f), encodeLeb(name.length), name);
}
const subsection = Buffer.concat(names);
const sectionName = Buffer.from("name");
const content = Buffer.concat([
  encodeLeb(sectionName.length), sectionName,
  Buffer.from([1]), encodeLeb(subsection.length), subsection,
]);
// (Any name section there was goes: these names replace it.)
const isNames = (s) => {
  if (s.id !== 0) return false;
  const [len, at] = leb(wasm, s.body);
  return wasm.subarray(at, at + len).toString() === "name";
};
writeFileSync(file, Buffer.concat([
  wasm.subarray(0, 8),
  ...all.filter((s) => !isNames(s)).map((s) => wasm.subarray(s.start, s.end)),
  Buffer.from([0]), encodeLeb(content.length), content,
]));
