//! `ChatHistory` (SPEC §7): everything it decides, apart from the JavaScript objects it
//! holds. The boundary (`wasm/history.rs`) keeps the message arrays, the config and the
//! events; this keeps one entry per working message (its exact count, if any) and the rest
//! of the bookkeeping, and answers each call with what to do to those arrays.
//!
//! - [`usage`]: provider counts spread over a prompt, and which message takes a reply's.
//! - [`stats`]: what the reductions did, for `stats()`.
//! - [`state`]: the versioned state of `toJSON()` / `fromJSON`, and what a state read back
//!   means.
//! - [`edit`]: `rewind`, `remove`, `clear`: which working messages stay, which are undone.

pub mod edit;
pub mod state;
pub mod stats;
pub mod usage;

pub use edit::{Cover, Edit, Entry};
pub use state::{SavedStats, State, KIND, VERSION};
pub use stats::{Stats, StatsView};
pub use usage::{spread, Reply, MAX_COUNT};

use crate::calibration;
use crate::strategies::{Fate, Reduction, Slot};
use edit::{span, union};

/// A `ChatHistory`'s bookkeeping. Indices are into the working history (the boundary's
/// array `messages`), whose length is `len()`: each push, reduction and restore here
/// matches one on that array.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    /// The exact count of each working message (`recordUsage`), or none.
    counts: Vec<Option<f64>>,
    /// The originals each working message stands for (see [`edit`]).
    covers: Vec<Cover>,
    /// Whether each working message is its original itself (not one a reduction wrote).
    own: Vec<bool>,
    /// How many messages `original` holds.
    originals: usize,
    /// Whether any count was ever recorded: from then on every reduction is given the
    /// counts as `tokenCounts` (nulls included), which also decides how a message that
    /// carries orphans is counted (as it is, not as its copy).
    counted: bool,
    /// How many leading working messages the last prompt (the last `prepare()`) had.
    prompt_len: Option<usize>,
    /// `outputTokens` waiting for the reply to be pushed (until the next `prepare()`).
    pending_output: Option<f64>,
    /// The correction factor learned from `recordUsage` (see `calibration.rs`).
    calibration: Option<f64>,
    /// The formats every message fits (the boundary's bit mask), so that a push of another
    /// format is refused at once.
    formats: u32,
    stats: Stats,
    /// Whether the last `prepare()` missed a target because of protected messages.
    over_budget: bool,
    /// Bumped by every applied reduction, so that a stale `prepare()` does not apply.
    generation: u32,
}

/// One `prepare()` under way: the working history it reduces is the first `len` messages
/// as they were at `generation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prepare {
    generation: u32,
    len: usize,
}

impl History {
    /// A history of `len` messages that all fit `formats` (each its own original).
    pub fn new(len: usize, formats: u32) -> History {
        History {
            counts: vec![None; len],
            covers: (0..len as u32).map(|j| span(j..j + 1)).collect(),
            own: vec![true; len],
            originals: len,
            formats,
            ..History::default()
        }
    }

    /// The working history's length.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The formats a message pushed now must fit.
    pub fn formats(&self) -> u32 {
        self.formats
    }

    /// Whether a push is to be searched for the model's reply (an `outputTokens` waits).
    pub fn awaits_reply(&self) -> bool {
        self.pending_output.is_some()
    }

    /// `n` messages appended, all fitting `formats`; `reply` is where the model's reply is
    /// among them, if [`History::awaits_reply`] (else [`Reply::None`]).
    pub fn push(&mut self, n: usize, formats: u32, reply: Reply) {
        let start = self.counts.len();
        self.formats &= formats;
        self.counts.resize(start + n, None);
        let first = self.originals as u32;
        self.covers
            .extend((first..first + n as u32).map(|j| span(j..j + 1)));
        self.originals += n;
        self.own.resize(start + n, true);
        if let Some(output) = self.pending_output {
            if reply != Reply::None {
                self.pending_output = None;
                self.count_reply(start, reply, output);
            }
        }
    }

    /// A `prepare()` starts: what it reduces.
    pub fn prepare(&self) -> Prepare {
        Prepare {
            generation: self.generation,
            len: self.counts.len(),
        }
    }

    /// The counts a reduction is given as `tokenCounts` (one per working message), once any
    /// was recorded.
    pub fn token_counts(&self) -> Option<&[Option<f64>]> {
        self.counted.then_some(&self.counts[..])
    }

    /// The calibration a reduction is given, once `recordUsage` taught one.
    pub fn calibration(&self) -> Option<f64> {
        self.calibration
    }

    /// `prepare` failed after `summarizer_calls` calls of the summarizer (each counts, whatever
    /// came of it). The history is as it was.
    pub fn prepare_failed(&mut self, summarizer_calls: u32) {
        self.stats.summarizer_calls = self.stats.summarizer_calls.saturating_add(summarizer_calls);
        self.over_budget = false;
    }

    /// `prepare` `p` ended in `r` (its `tokensBefore` complete: `tokens_before`) after
    /// `summarizer_calls` calls of the summarizer. Returns `Some(n)` when the working history's
    /// first `n` messages are to be replaced by the reduction's output (those pushed since it
    /// started stay, after it); `None` when nothing changes: no reduction, or one of a
    /// history another `prepare()` has reduced since.
    pub fn prepared(
        &mut self,
        p: Prepare,
        summarizer_calls: u32,
        r: &Reduction,
        tokens_before: f64,
    ) -> Option<usize> {
        self.prepare_failed(summarizer_calls);
        self.over_budget = r.over_budget;
        let applies = r.reduced && self.current(p);
        if applies {
            // A message the reduction wrote may stand for anything it summarized or rewrote,
            // and a note of the current turn for the steps it names (a copy without orphans
            // too: its calls' results went with them). What it dropped without a trace is
            // covered by none: an edit may bring it back (`edit.rs`).
            let inputs = &self.covers[..p.len];
            let noted = r.trace.as_ref().map_or(&[][..], |t| &t.messages[..]);
            let changed = union(
                inputs
                    .iter()
                    .zip(&r.fate)
                    .enumerate()
                    .filter(|(i, (_, f))| {
                        matches!(f, Fate::Summarized | Fate::Rewritten)
                            || noted.contains(&(*i as u32))
                    })
                    .map(|(_, (c, _))| c),
            );
            let changed = if changed.is_empty() {
                union(inputs)
            } else {
                changed
            };
            // A message kept as it was keeps its count, cover and ownership; one the
            // reduction wrote (a summary, a preview, a copy without orphans) has no count
            // and is no original. (One loop for the three: smaller than three collects.)
            let n = r.output.len() + self.counts.len().saturating_sub(p.len);
            let (mut counts, mut covers, mut own) = (
                Vec::with_capacity(n),
                Vec::with_capacity(n),
                Vec::with_capacity(n),
            );
            for slot in &r.output {
                let (count, cover, owned) = match *slot {
                    Slot::Input(i) => (
                        self.counts.get(i as usize).copied().flatten(),
                        inputs.get(i as usize).cloned().unwrap_or_default(),
                        self.own.get(i as usize).copied().unwrap_or(false),
                    ),
                    Slot::Cleaned(i) => (
                        None,
                        union(inputs.get(i as usize).into_iter().chain([&changed])),
                        false,
                    ),
                    Slot::New(_) => (None, changed.clone(), false),
                };
                counts.push(count);
                covers.push(cover);
                own.push(owned);
            }
            counts.extend_from_slice(&self.counts[p.len..]);
            covers.extend_from_slice(&self.covers[p.len..]);
            own.extend_from_slice(&self.own[p.len..]);
            self.counts = counts;
            self.covers = covers;
            self.own = own;
            self.generation = self.generation.wrapping_add(1);
            self.stats.record(tokens_before, r.tokens_after);
        }
        self.sent();
        applies.then_some(p.len)
    }

    /// A `prepare` found nothing to do (no trigger fired, nothing to remove): what
    /// [`History::prepared`] does with a reduction that changed nothing, without one.
    pub fn unchanged(&mut self) {
        self.over_budget = false;
        self.sent();
    }

    /// Whether the first `p.len` working messages are still those `prepare` `p` read (no
    /// reduction applied and no edit since it started).
    pub fn current(&self, p: Prepare) -> bool {
        p.generation == self.generation && p.len <= self.counts.len()
    }

    /// The working history is the prompt now.
    fn sent(&mut self) {
        self.prompt_len = Some(self.counts.len());
        // (A reply's count that waited for a reply never pushed is not this prompt's.)
        self.pending_output = None;
    }

    /// The messages `recordUsage`'s `inputTokens` is for: the last prompt's, if any.
    pub fn prompt(&self) -> Option<usize> {
        self.prompt_len.map(|n| n.min(self.counts.len()))
    }

    /// Where the model's reply to the last prompt may start: after it. (None before the
    /// first `prepare()`: the reply is then the next one pushed.)
    pub fn reply_from(&self) -> Option<usize> {
        self.prompt_len
    }

    /// `recordUsage`'s `inputTokens` for the first `estimates.len()` working messages (the
    /// prompt), whose uncalibrated estimates are `estimates` (`raw_total` in all): spread over
    /// them as exact counts, and a calibration learned for what is still estimated.
    pub fn record_input(&mut self, estimates: &[f64], raw_total: f64, input: f64) {
        for (k, c) in spread(estimates, input).into_iter().enumerate() {
            if let Some(slot) = self.counts.get_mut(k) {
                *slot = Some(c);
                self.counted = true;
            }
        }
        self.calibration = Some(calibration::update(self.calibration, raw_total, input));
    }

    /// `recordUsage`'s `outputTokens`: for the model's reply, found at `reply` among the
    /// working messages from `from` on ([`History::reply_from`]); when none is there yet, it
    /// waits for the next push.
    pub fn record_output(&mut self, output: f64, from: usize, reply: Reply) {
        self.pending_output = (reply == Reply::None).then_some(output);
        self.count_reply(from, reply, output);
    }

    fn count_reply(&mut self, from: usize, reply: Reply, output: f64) {
        // (A reply that holds more than the model wrote takes no count.)
        if let Reply::At(k) = reply {
            if let Some(slot) = self.counts.get_mut(from + k) {
                *slot = Some(output);
                self.counted = true;
            }
        }
    }

    /// What the reductions did so far (`stats()` adds the ratio: [`Stats::view`]).
    pub fn totals(&self) -> Stats {
        self.stats
    }

    /// Whether the last `prepare()` missed a target because of protected messages.
    pub fn over_budget(&self) -> bool {
        self.over_budget
    }
}

#[cfg(test)]
mod tests;
