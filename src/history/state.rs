//! The versioned state of `toJSON()` / `fromJSON` (SPEC §7): its parts, and what the
//! numbers of a state read back mean. The state is plain JSON:
//!
//! ```text
//! { kind: "chat-history-reducer/ChatHistory", version: 2,
//!   messages, original, origins, counts, covers, events, offloaded,
//!   stats: { reductions, summarizerCalls, tokensSaved, overBudget, edits, undone },
//!   promptLength, pendingOutputTokens, calibration }
//! ```
//!
//! `messages`, `original`, `events` and `offloaded` are JavaScript values the boundary holds
//! (`L`, `O` here). `origins` (the index in `original` of each working message that is one
//! of its objects) and the indices in `offloaded` (an original that is a message of
//! `original`) are about object identity, made and read by the boundary's JavaScript.
//! Version 1 differs only there: it wrote every offloaded original out.

use super::edit::{read_cover, span};
use super::usage::MAX_COUNT;
use super::{History, Stats};
use crate::calibration;
use crate::error::{cat, ReduceError};

pub use crate::contract::{STATE_KIND as KIND, STATE_VERSION};

/// The version `toJSON()` writes.
pub const VERSION: u32 = STATE_VERSION as u32;

/// A state's parts, as `toJSON()` writes them and as `fromJSON` read them (each number a
/// number of the state, or `None` where it had none).
#[derive(Clone, Debug, PartialEq)]
pub struct State<L, O> {
    /// The working history.
    pub messages: L,
    /// Every message ever pushed.
    pub original: L,
    /// The exact count of each working message, or null (none when read from a state
    /// without an array there).
    pub counts: Option<Vec<Option<f64>>>,
    /// The originals each working message covers: `[j]` for the original `j` itself, else
    /// flattened `[start, end, …]` ranges (none when read from a state without them: then
    /// every message a reduction wrote covers every original, so
    /// that any edit undoes what a reduction wrote).
    pub covers: Option<Vec<Vec<f64>>>,
    pub events: L,
    /// The offloaded originals by offload id.
    pub offloaded: O,
    pub stats: SavedStats,
    pub prompt_length: Option<f64>,
    pub pending_output_tokens: Option<f64>,
    pub calibration: Option<f64>,
}

/// `state.stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SavedStats {
    pub reductions: Option<f64>,
    pub summarizer_calls: Option<f64>,
    pub tokens_saved: Option<f64>,
    pub over_budget: bool,
    pub edits: Option<f64>,
    pub undone: Option<f64>,
}

fn invalid(message: &str) -> ReduceError {
    ReduceError::config("state", cat(&["ChatHistory.fromJSON: ", message]))
}

/// The version of a state whose `kind` and `version` are these (`is_object`: whether it is
/// an object at all): 1 or 2; else `INVALID_CONFIG` (field `state`), a state `toJSON()` did
/// not write.
pub fn version_of(
    is_object: bool,
    kind: Option<&str>,
    version: Option<f64>,
) -> Result<u32, ReduceError> {
    if !is_object {
        return Err(invalid("state must be the object toJSON() returned"));
    }
    if kind != Some(KIND) {
        return Err(invalid(&cat(&[
            "state.kind must be \"",
            KIND,
            "\": this is not a state toJSON() wrote",
        ])));
    }
    match version {
        Some(v) if v == 1.0 || v == VERSION as f64 => Ok(v as u32),
        _ => Err(invalid(
            "state.version must be 1 or 2 (this state was written by another version)",
        )),
    }
}

/// A count a history could have made (`recordUsage` takes 0 to `MAX_COUNT`).
fn count(n: Option<f64>) -> Option<f64> {
    n.filter(|n| (0.0..=MAX_COUNT).contains(n))
}

/// A whole number ≥ 0 (a statistic, a length): 0 for what is not one.
fn whole(n: f64) -> u32 {
    if n >= 0.0 {
        n.floor().min(u32::MAX as f64) as u32
    } else {
        0
    }
}

impl History {
    /// The state of this history, whose JavaScript parts are these.
    pub fn save<L, O>(&self, messages: L, original: L, events: L, offloaded: O) -> State<L, O> {
        State {
            messages,
            original,
            counts: Some(self.counts.clone()),
            covers: Some({
                let mut covers = Vec::with_capacity(self.covers.len());
                for (c, &own) in self.covers.iter().zip(&self.own) {
                    covers.push(match (own, c.first()) {
                        (true, Some(r)) => vec![r.start as f64],
                        _ => super::edit::flat(c),
                    });
                }
                covers
            }),
            events,
            offloaded,
            stats: SavedStats {
                reductions: Some(self.stats.reductions as f64),
                summarizer_calls: Some(self.stats.summarizer_calls as f64),
                tokens_saved: Some(self.stats.tokens_saved),
                over_budget: self.over_budget,
                edits: Some(self.stats.edits as f64),
                undone: Some(self.stats.undone as f64),
            },
            prompt_length: self.prompt_len.map(|n| n as f64),
            pending_output_tokens: self.pending_output,
            calibration: self.calibration,
        }
    }

    /// The history a state read back stands for, whose working history has `len` messages
    /// that all fit `formats`, and `original` `originals`. Whatever no history writes is left
    /// out: a count out of bounds (it would fail every later `prepare()` as `tokenCounts`), a
    /// statistic that is not a whole number ≥ 0 (0), a calibration outside what `calibrate`
    /// keeps it in; covers that are not one per message over `original` are all of it.
    pub fn restore<L, O>(
        state: &State<L, O>,
        len: usize,
        originals: usize,
        formats: u32,
    ) -> History {
        let mut history = History::new(len, formats);
        history.originals = originals;
        // (Plain loops: smaller in the module than collects into an `Option` and `unzip`.)
        history.covers.clear();
        history.own.clear();
        for f in state
            .covers
            .as_ref()
            .filter(|c| c.len() == len)
            .into_iter()
            .flatten()
        {
            let Some((cover, own)) = read_cover(f, originals) else {
                history.covers.clear();
                history.own.clear();
                break;
            };
            history.covers.push(cover);
            history.own.push(own);
        }
        if history.covers.len() != len {
            history.covers = vec![span(0..originals as u32); len];
            history.own = vec![false; len];
        }
        if let Some(counts) = &state.counts {
            for (slot, &c) in history.counts.iter_mut().zip(counts) {
                *slot = count(c);
                history.counted |= slot.is_some();
            }
        }
        let stats = &state.stats;
        history.stats = Stats {
            reductions: stats.reductions.map_or(0, whole),
            summarizer_calls: stats.summarizer_calls.map_or(0, whole),
            // (Whole since stats count whole tokens; a state of before may have fractions.)
            tokens_saved: count(stats.tokens_saved).unwrap_or(0.0).ceil(),
            edits: stats.edits.map_or(0, whole),
            undone: stats.undone.map_or(0, whole),
        };
        history.over_budget = stats.over_budget;
        history.prompt_len = state.prompt_length.map(|n| whole(n) as usize);
        history.pending_output = count(state.pending_output_tokens);
        history.calibration = state
            .calibration
            .filter(|c| (calibration::MIN..=calibration::MAX).contains(c));
        history
    }
}
