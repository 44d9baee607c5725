// Self-calibration experiment: the library learns a correction factor c from the prompt sizes a
// provider reports (usage.input_tokens) and multiplies its estimates by c afterwards. Here the
// estimator uses o200k-fitted weights while the "unknown" model counts with cl100k.
//
// After turn t (prompt estimate e_t, reported size y_t, ratio r_t = y_t / e_t, uncalibrated):
//   c_t = clamp(c_{t-1} + a_t · (r_t − c_{t-1}), lo, hi)     ("linear"; "log" does the same on ln c)
//   a_t = α ("ema"), 1 then α ("jump"), or max(1/t, α) ("avg": a running mean that becomes an EMA)
// and the prompt of turn t+1 is estimated as c_t · e_{t+1}. c_0 = 1.
//
// Scenarios (test half of the corpus; sessions per kind and mixed):
//   independent — each turn's prompt is a fresh conversation of 50 messages of the session's kind;
//   growing     — one chat: turn t's prompt is its first 40 + 10·t messages;
//   drift       — 5 turns of one kind, then turns of another kind (error on the 3 turns after it).
// The reported figure is the error of turn 6's estimate after 5 calibrated turns.
//
//   node bench/accuracy/calibrate.mjs      grid of rules, the best ones, convergence per turn
import { KINDS, prepare } from "./data.mjs";
import { fitWeights, jsLiteral } from "./fit.mjs";
import { errors, fmt, rng, table, weightsFromVector } from "./lib.mjs";

export const TURNS = 5; // calibrated turns before the measured one
const SESSIONS = 200;

/** Sessions: {kind: [[{est, truth}, ...turns], ...]} of one scenario, of `turns` + 1 turns. */
export function buildSessions(d, est, truthKey, scenario, seed = "calibration", turns = TURNS) {
  const { rows } = d;
  const test = rows.map((r, i) => i).filter((i) => rows[i].split === "test");
  const pools = Object.fromEntries([...KINDS.map((k) => [k, test.filter((i) => rows[i].kind === k)]), ["mixed", test]]);
  const sum = (ids) => ({ est: ids.reduce((s, i) => s + est[i], 0), truth: ids.reduce((s, i) => s + rows[i].truth[truthKey], 0) });
  const draw = (r, pool, n) => {
    const idx = pool.slice();
    for (let i = 0; i < n; i++) {
      const j = i + r.int(idx.length - i);
      [idx[i], idx[j]] = [idx[j], idx[i]];
    }
    return idx.slice(0, n);
  };
  const out = {};
  for (const kind of Object.keys(pools)) {
    const r = rng(`${seed}/${scenario}/${kind}`);
    out[kind] = [];
    for (let s = 0; s < SESSIONS; s++) {
      if (scenario === "independent") {
        out[kind].push(Array.from({ length: turns + 1 }, () => sum(draw(r, pools[kind], 50))));
      } else if (scenario === "growing") {
        const chat = draw(r, pools[kind], 40 + 10 * (turns + 1));
        out[kind].push(Array.from({ length: turns + 1 }, (_, t) => sum(chat.slice(0, 40 + 10 * (t + 1)))));
      } else if (scenario === "drift") {
        const other = r.pick(KINDS.filter((k) => k !== kind));
        out[kind].push([
          ...Array.from({ length: TURNS }, () => sum(draw(r, pools[kind], 50))),
          ...Array.from({ length: 3 }, () => sum(draw(r, pools[other], 50))),
        ]);
      }
    }
  }
  return out;
}

/** The update of c after one turn. rule: {mode, alpha, space, lo, hi}. */
export function update(c, ratio, turn, { mode, alpha, space, lo, hi }) {
  const a = mode === "ema" ? alpha : mode === "jump" ? (turn === 1 ? 1 : alpha) : Math.max(1 / turn, alpha);
  const next = space === "log" ? Math.exp(Math.log(c) + a * (Math.log(ratio) - Math.log(c))) : c + a * (ratio - c);
  return Math.min(hi, Math.max(lo, next));
}

/** Per-turn signed errors of calibrated estimates: errs[t] = [[estimate, truth], ...]. */
export function simulate(sessions, rule) {
  const turns = sessions[0].length;
  const errs = Array.from({ length: turns }, () => []);
  for (const session of sessions) {
    let c = 1;
    session.forEach((turn, t) => {
      errs[t].push([c * turn.est, turn.truth]);
      if (rule) c = update(c, turn.truth / turn.est, t + 1, rule);
    });
  }
  return errs;
}

export function ruleName(r) {
  if (!r) return "none (c = 1)";
  const a = r.mode === "ema" ? `EMA α=${r.alpha}` : r.mode === "jump" ? `first c=r, then EMA α=${r.alpha}` : `a=max(1/t, ${r.alpha})`;
  return `${a}, ${r.space}, clamp [${r.lo}, ${r.hi}]`;
}

export function ruleGrid() {
  const rules = [];
  for (const mode of ["ema", "jump", "avg"])
    for (const alpha of [0.1, 0.2, 0.3, 0.5, 0.7, 1])
      for (const space of ["linear", "log"])
        for (const [lo, hi] of [[0.8, 1.25], [0.67, 1.5], [0.5, 2], [0.25, 4]]) {
          if (alpha === 1 && mode !== "ema") continue;
          rules.push({ mode, alpha, space, lo, hi });
        }
  return rules;
}

/** Errors of turn 6 (independent, growing), and of the 3 turns after a change of kind (drift). */
export function scoreRule(scen, rule) {
  const out = {};
  for (const [name, byKind] of Object.entries(scen)) {
    out[name] = {};
    for (const [kind, sessions] of Object.entries(byKind)) {
      const errs = simulate(sessions, rule);
      out[name][kind] = errors(name === "drift" ? errs.slice(TURNS).flat() : errs[TURNS]);
    }
  }
  // Ranking: mean MAPE over kinds+mixed of independent and growing; drift as a tie-breaker.
  const mean = (o) => Object.values(o).reduce((s, e) => s + e.mape, 0) / Object.values(o).length;
  out.score = (mean(out.independent) + mean(out.growing)) / 2;
  out.driftScore = mean(out.drift);
  return out;
}

export const RECOMMENDED_RULE = { mode: "jump", alpha: 0.5, space: "linear", lo: 0.5, hi: 2 };

export function runCalibration(d, est, truthKey = "cl100k", { print = true } = {}) {
  const scen = Object.fromEntries(["independent", "growing", "drift"].map((s) => [s, buildSessions(d, est, truthKey, s)]));
  const none = scoreRule(scen, null);
  const scored = ruleGrid().map((rule) => ({ rule, ...scoreRule(scen, rule) }));
  scored.sort((a, b) => a.score - b.score || a.driftScore - b.driftScore);
  const rec = { rule: RECOMMENDED_RULE, ...scoreRule(scen, RECOMMENDED_RULE) };
  const kinds = [...KINDS, "mixed"];
  const row = (name, s) => [name, ...kinds.map((k) => fmt(s.independent[k].mape)), fmt(s.independent.mixed.bias), ...["growing", "drift"].map((sc) => fmt(s[sc].mixed.mape)), fmt(s.score, 2), fmt(s.driftScore, 2)];
  const header = ["rule", ...kinds.map((k) => `${k}%`), "mixed bias%", "growing mixed%", "drift mixed%", "score", "drift score"];
  // Convergence: error of each turn's estimate with the recommended rule (independent, mixed).
  const conv = (rule) => simulate(scen.independent.mixed, rule).map((e) => fmt(errors(e).mape));
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const shown = scored.filter((s) => s.rule.space === "linear" && s.rule.lo === 0.5);
  const bounds = scored.filter((s) => ["mode", "alpha"].every((k) => s.rule[k] === RECOMMENDED_RULE[k]));
  if (print === "brief") {
    console.log(`\n## Self-calibration vs ${truthKey} (o200k-fitted weights): MAPE% of turn ${TURNS + 1} after ${TURNS} calibrated turns; rule: ${ruleName(RECOMMENDED_RULE)}`);
    console.log(table(header, [row("none (c = 1)", none), row("recommended rule", rec)]));
    console.log(`  per turn 1..${TURNS + 1} (independent mixed): none ${conv(null).join(" ")} | calibrated ${conv(RECOMMENDED_RULE).join(" ")}`);
  } else if (print) {
    console.log(`\n## Self-calibration: estimates with o200k-fitted weights, truth ${truthKey}; MAPE% of turn ${TURNS + 1} after ${TURNS} calibrated turns (${SESSIONS} sessions each)`);
    console.log("   columns prose..mixed: independent prompts of that kind; growing: one chat growing 10 messages a turn; drift: the 3 turns after a change of kind");
    console.log("   score = mean MAPE of independent (6 columns) and growing; drift score = mean MAPE after a change of kind");
    console.log(table(header, [row("none (c = 1)", none), ...shown.map((s) => row((same(s.rule, RECOMMENDED_RULE) ? "* " : "  ") + ruleName(s.rule), s))]));
    console.log(`\nBounds and log space, for the recommended smoothing:`);
    console.log(table(header, bounds.map((s) => row((same(s.rule, RECOMMENDED_RULE) ? "* " : "  ") + ruleName(s.rule), s))));
    const rank = scored.findIndex((s) => same(s.rule, RECOMMENDED_RULE)) + 1;
    console.log(`(${scored.length} rules tried; best score ${fmt(scored[0].score, 2)}: ${ruleName(scored[0].rule)}; recommended (*) ranks ${rank} with ${fmt(rec.score, 2)})`);
    console.log(`\nError per turn (independent mixed prompts), turn 1..${TURNS + 1}:`);
    console.log(`  none:        ${conv(null).join("  ")}`);
    console.log(`  recommended: ${conv(RECOMMENDED_RULE).join("  ")}`);
  }
  return {
    truth: truthKey,
    turns: TURNS,
    none: strip(none),
    recommended: { rule: RECOMMENDED_RULE, name: ruleName(RECOMMENDED_RULE), ...strip(rec) },
    best: scored.slice(0, 8).map((s) => ({ rule: s.rule, name: ruleName(s.rule), ...strip(s) })),
    perTurn: { none: conv(null).map(Number), recommended: conv(RECOMMENDED_RULE).map(Number) },
  };
}
const strip = ({ rule, ...rest }) => rest;

/**
 * How many recorded turns the built-in rule (`calibration.rs`) needs before estimates with
 * `est` (a profile's, for a model whose tokenizer is unknown) come within `limit`% of
 * `truthKey`'s counts: per turn, the MAPE of that turn's prompt estimate over 200 sessions
 * (mixed kinds) of a growing chat and of independent prompts; `within` is the number of
 * turns recorded before the first turn at or under the limit (null: not within `turns`).
 */
export function turnsToWithin(d, est, truthKey, { limit = 3, turns = 8 } = {}) {
  const out = {};
  for (const scenario of ["growing", "independent"]) {
    const sessions = buildSessions(d, est, truthKey, scenario, "calibration", turns)[`mixed`];
    const perTurn = simulate(sessions, RECOMMENDED_RULE).map((e) => errors(e).mape);
    const first = perTurn.findIndex((m) => m <= limit);
    out[scenario] = { perTurn: perTurn.map((m) => Math.round(m * 100) / 100), within: first < 0 ? null : first };
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const d = await prepare({ log: console.log });
  const w = weightsFromVector(fitWeights(d, "o200k", { fixed: { other: 0.7 } }));
  console.log(`estimator weights (o200k fit, other held at 0.70): ${jsLiteral(w)}`);
  const est = d.rows.map((r) => d.pkg.estimateTokens(r.message, { estimatorWeights: w }));
  runCalibration(d, est, "cl100k");
}
