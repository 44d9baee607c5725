// The measured corpus: every message with its per-class counts (through the Rust classifier),
// its true size under each tokenizer of lib.mjs TOKENIZERS, and the library's own estimates.
import { buildCorpus, fingerprint, KINDS } from "./corpus.mjs";
import { CLASS_NAMES, TOKENIZERS, classCounts, conversations, loadPackage, loadTokenizers, truthOf } from "./lib.mjs";

export { KINDS };

/**
 * rows: [{kind, split, message, counts[12], truth: {o200k, cl100k, gemma, llama3}, est: {default, length}}]
 * convs: {train|test: {kind|"mixed": [[row index...], ...]}} — sums of CONV_SIZE messages.
 */
export const CONV_SIZE = 50;
export const CONV_COUNT = 200;

export async function prepare({ log = () => {} } = {}) {
  const t0 = Date.now();
  const pkg = await loadPackage();
  const tok = await loadTokenizers();
  const corpus = buildCorpus();
  log(`corpus ${fingerprint(corpus.samples)} (${corpus.samples.length} messages, seed ${corpus.seed}) in ${Date.now() - t0} ms; package ${pkg.path}`);
  const t1 = Date.now();
  const rows = corpus.samples.map((s) => ({
    kind: s.kind,
    split: s.split,
    message: s.message,
    counts: classCounts(pkg.estimateTokens, s.message),
    truth: Object.fromEntries(TOKENIZERS.map((name) => [name, truthOf(tok[name], s.message)])),
    est: {
      default: pkg.estimateTokens(s.message, {}),
      length: pkg.estimateTokens(s.message, { estimator: "length" }),
    },
  }));
  log(`class counts, truths of ${TOKENIZERS.join(", ")} in ${Date.now() - t1} ms`);
  const convs = {};
  for (const split of ["train", "test"]) {
    convs[split] = {};
    const ids = rows.map((r, i) => i).filter((i) => rows[i].split === split);
    for (const kind of KINDS)
      convs[split][kind] = conversations(ids.filter((i) => rows[i].kind === kind), CONV_COUNT, CONV_SIZE, `${split}/${kind}`);
    convs[split].mixed = conversations(ids, CONV_COUNT, CONV_SIZE, `${split}/mixed`);
  }
  // estimateTokens of an array must be the sum of its messages (what the conversation figures assume).
  const c = convs.test.mixed[0];
  const whole = pkg.estimateTokens(c.map((i) => rows[i].message), {});
  const sum = c.reduce((s, i) => s + rows[i].est.default, 0);
  if (whole !== sum) throw new Error(`estimateTokens(array) ${whole} != sum of messages ${sum}`);
  return { pkg, corpus, rows, convs, classNames: CLASS_NAMES };
}
