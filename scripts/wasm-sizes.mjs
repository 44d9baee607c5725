// The size of each function's code in a .wasm that keeps its names (`NAMES=1 OUT=DIR bash
// scripts/build.sh`), to see where a size pass should look and what a change did:
//
//   node scripts/wasm-sizes.mjs A.wasm          bytes and name of each function, largest first
//   node scripts/wasm-sizes.mjs A.wasm B.wasm   what changed from A to B, by name, largest first
//
// Names lose their hash (`::h0123…`), so that the same function matches in two builds; the
// copies of a generic add up under one name. A function without a name (wasm-opt made it)
// is `f<index>`.
import { readFileSync } from "node:fs";
import { leb } from "./wasm-leb.mjs";

/** `[name, bytes]` of each function body of `file`. */
function functionSizes(file) {
  const b = readFileSync(file);
  let p = 8;
  const next = () => {
    const [value, at] = leb(b, p);
    p = at;
    return value;
  };
  let imported = 0;
  const sizes = [], names = new Map();
  while (p < b.length) {
    const id = b[p++], size = next(), end = p + size;
    if (id === 2) {
      const skip = () => {
        const len = next();
        p += len;
      };
      for (let i = next(); i > 0; i--) {
        skip(); // module
        skip(); // name
        const kind = b[p++];
        if (kind === 0) {
          next();
          imported++;
        } else if (kind === 1) {
          p++;
          if (b[p++] & 1) next();
          next();
        } else if (kind === 2) {
          if (b[p++] & 1) next();
          next();
        } else if (kind === 3) {
          p += 2;
        } else {
          p++;
          next();
        }
      }
    } else if (id === 10) {
      for (let i = next(); i > 0; i--) {
        const body = next();
        sizes.push(body);
        p += body;
      }
    } else if (id === 0) {
      const len = next();
      const section = b.subarray(p, p + len).toString();
      p += len;
      while (section === "name" && p < end) {
        const sub = b[p++], subEnd = next() + p;
        if (sub === 1) {
          for (let i = next(); i > 0; i--) {
            const index = next(), len = next();
            names.set(index, b.subarray(p, p + len).toString());
            p += len;
          }
        }
        p = subEnd;
      }
    }
    p = end;
  }
  return sizes.map((size, i) => {
    const name = names.get(imported + i) ?? `f${imported + i}`;
    return [name.replace(/::h[0-9a-f]{16}$/, ""), size];
  });
}

/** Bytes by name (the copies of a name added up). */
function byName(file) {
  const out = new Map();
  for (const [name, size] of functionSizes(file)) out.set(name, (out.get(name) ?? 0) + size);
  return out;
}

const [a, b] = process.argv.slice(2);
if (!a) {
  console.error("usage: node scripts/wasm-sizes.mjs A.wasm [B.wasm]");
  process.exit(2);
}
if (!b) {
  const rows = functionSizes(a).sort((x, y) => y[1] - x[1]);
  const total = rows.reduce((sum, [, size]) => sum + size, 0);
  console.log(`${total}\tin ${rows.length} functions`);
  for (const [name, size] of rows) console.log(`${size}\t${name}`);
} else {
  const before = byName(a), after = byName(b);
  const rows = [];
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const x = before.get(name) ?? 0, y = after.get(name) ?? 0;
    if (x !== y) rows.push([name, x, y]);
  }
  rows.sort((p, q) => Math.abs(q[2] - q[1]) - Math.abs(p[2] - p[1]));
  const sum = (m) => [...m.values()].reduce((s, v) => s + v, 0);
  console.log(`${sum(after) - sum(before)}\tin all (${sum(before)} -> ${sum(after)})`);
  for (const [name, x, y] of rows) console.log(`${y - x > 0 ? "+" : ""}${y - x}\t${x} -> ${y}\t${name}`);
}
