// A/B of two builds of the package on the same work: `node bench/ab.mjs OLD NEW` (package
// directories, e.g. `OUT=build/pkg-old bash scripts/build.sh` on the commit before).
//
//   N=10000 MODE=default|length ROUNDS=80 node bench/ab.mjs build/pkg-old pkg
//
// Each build's reduceSync runs on new message objects (shallow copies made outside the
// timing) of a generated conversation, trimmed to 25% of its tokens, alternating call by call
// in one process. A process that imports two builds favours the one it imports second (by
// about 6% measured here: the same build under two names read 0.93–0.94×), so this runs two
// processes, one in each import order, and reports NEW ÷ OLD in each and their geometric
// mean, the figure to quote.
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { generateConversation } from "./generate.mjs";

const [first, second, child] = process.argv.slice(2);
if (!first || !second) {
  console.error("usage: node bench/ab.mjs OLD_PACKAGE_DIR NEW_PACKAGE_DIR");
  process.exit(2);
}
const n = Number(process.env.N ?? 10_000);
const mode = process.env.MODE ?? "default";
const rounds = Number(process.env.ROUNDS ?? 80);

/** One process: median ms of `first` and `second`, imported in that order. */
async function measure() {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  const a = await import(pathToFileURL(resolve(first, "node.js")).href);
  const b = await import(pathToFileURL(resolve(second, "node.js")).href);
  const conv = generateConversation(n, { seed: 42 });
  const length = mode === "length";
  const budget = Math.floor(a.estimateTokens(conv, length ? { estimator: "length" } : {}) / 4);
  const config = { maxTokens: budget, targetTokens: budget, ...(length ? { estimator: "length", charsPerToken: 4 } : {}) };
  const times = [[], []];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [0, 1] : [1, 0];
    for (const k of order) {
      const input = conv.map((m) => ({ ...m }));
      gc({ type: "minor" });
      const t = performance.now();
      (k === 0 ? a : b).reduceSync(input, config);
      times[k].push(performance.now() - t);
    }
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
  return times.map(median);
}

if (child === "--child") {
  console.log(JSON.stringify(await measure()));
} else {
  const run = (x, y) => {
    const p = spawnSync(process.execPath, [fileURLToPath(import.meta.url), x, y, "--child"], { encoding: "utf8" });
    if (p.status !== 0) throw new Error(p.stderr);
    return JSON.parse(p.stdout.trim().split("\n").at(-1));
  };
  const [oldFirst, newSecond] = run(first, second);
  const [newFirst, oldSecond] = run(second, first);
  const r1 = newSecond / oldFirst, r2 = newFirst / oldSecond;
  console.log(`${n} messages, ${mode} estimator, new objects, ${rounds} rounds: NEW ÷ OLD ` +
    `${r1.toFixed(3)} (old imported first), ${r2.toFixed(3)} (new imported first), ` +
    `geometric mean ${Math.sqrt(r1 * r2).toFixed(3)}`);
}
