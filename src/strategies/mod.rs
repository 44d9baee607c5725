//! The strategies of SPEC §5 and what a reduction returns.

pub mod priority;
pub mod progressive;
pub mod summarize;
pub mod truncate;

use crate::budget::{counts_as_message, Targets};
use crate::config::{Config, OnOverBudget};
use crate::error::{show, ErrorCode, ReduceError};
use crate::protect::{is_conversation, starts_on_user, starts_on_user_required, Protection};
use crate::structure::Structure;
use crate::transcript::Transcript;

/// What became of one input message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// In the output as the same object.
    Kept,
    /// Removed without a trace.
    Dropped,
    /// Covered by a new message: a summary, or a compressed tool run.
    Summarized,
    /// In the output as a rewritten copy (an offloaded preview, a compressed text).
    Rewritten,
}

/// One entry of the output history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The input message at this index, as it was.
    Input(u32),
    /// The k-th message the reduction wrote (a summary, a digest, a rewritten copy).
    New(u32),
    /// The input message at this index, as a shallow copy without its tool results whose
    /// call is not before it (a [`Structure::STRAY`]: SPEC §9.4). (What the boundary writes
    /// for a message, in a `New` slot, is made without them too.)
    Cleaned(u32),
}

/// A step of a reduction, reported in `result.events`.
#[derive(Clone, Debug, PartialEq)]
pub struct CompressionEvent {
    /// `"truncate"`, `"priority"`, `"summarize"`, …
    pub kind: &'static str,
    /// Input messages this step removed or rewrote.
    pub messages: usize,
    pub tokens_before: f64,
    pub tokens_after: f64,
}

/// The outcome of a reduction, in indices: the boundary turns it into `ReduceResult`.
#[derive(Clone, Debug, PartialEq)]
pub struct Reduction {
    pub reduced: bool,
    pub fate: Vec<Fate>,
    pub output: Vec<Slot>,
    pub tokens_before: f64,
    pub tokens_after: f64,
    pub over_budget: bool,
    pub events: Vec<CompressionEvent>,
}

impl Reduction {
    /// The input returned as it is.
    pub fn unchanged(t: &Transcript) -> Reduction {
        let total = t.total_tokens();
        Reduction {
            reduced: false,
            fate: vec![Fate::Kept; t.len()],
            output: (0..t.len() as u32).map(Slot::Input).collect(),
            tokens_before: total,
            tokens_after: total,
            over_budget: false,
            events: Vec::new(),
        }
    }

    /// This reduction of `t`, whose structure's [`Structure::orphan`] is `orphan`, ended
    /// by an event `"orphans"` when some message carries orphans: each is gone from the
    /// output, or stands without them ([`keep`]), or went with its group.
    pub(crate) fn without_orphans(mut self, t: &Transcript, orphan: &[u8]) -> Reduction {
        let (mut count, mut after) = (0, self.tokens_before);
        for (m, &mark) in t.messages.iter().zip(orphan) {
            count += usize::from(mark != 0);
            if mark == Structure::ORPHAN {
                after -= m.tokens;
            }
        }
        if count > 0 {
            self.reduced = true;
            self.events.push(CompressionEvent {
                kind: "orphans",
                messages: count,
                tokens_before: self.tokens_before,
                tokens_after: after,
            });
        }
        self
    }

    pub fn indices(&self, fate: Fate) -> Vec<u32> {
        (0..self.fate.len() as u32)
            .filter(|&i| self.fate[i as usize] == fate)
            .collect()
    }

    /// The input indices of each fate, in `Fate` order (kept, dropped, summarized,
    /// rewritten): `indices` of all four in one pass.
    pub fn indices_by_fate(&self) -> [Vec<u32>; 4] {
        let mut by: [Vec<u32>; 4] = Default::default();
        for (i, &f) in self.fate.iter().enumerate() {
            by[f as usize].push(i as u32);
        }
        by
    }
}

/// What becomes of message `i` of `t` (of structure `s`) in a group a reduction keeps
/// (SPEC §9.4): an orphan ([`Structure::ORPHAN`]) goes all the same, out of what is `left`;
/// a [`Structure::STRAY`] stands as a copy without its orphans ([`Slot::Cleaned`]),
/// `Rewritten`; any other as it was. Its slot, if any, goes onto `output`.
pub(crate) fn keep(
    t: &Transcript,
    s: &Structure,
    i: usize,
    output: &mut Vec<Slot>,
    left: &mut Drops,
) -> Fate {
    let at = i as u32;
    match s.orphan[i] {
        Structure::ORPHAN => {
            let m = &t.messages[i];
            left.tokens -= m.tokens;
            left.messages -= usize::from(counts_as_message(m));
            Fate::Dropped
        }
        Structure::STRAY => {
            output.push(Slot::Cleaned(at));
            Fate::Rewritten
        }
        _ => {
            output.push(Slot::Input(at));
            Fate::Kept
        }
    }
}

/// Which groups a strategy removes, and what is left.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Drops {
    pub removed: Vec<bool>,
    /// Tokens of what is left.
    pub tokens: f64,
    /// Messages of what is left that count toward `targetMessages`.
    pub messages: usize,
}

/// Removes whole groups in `order` until `targets` are met, then keeps removing from the
/// front until the history starts on a user input (`startOn: "user"`). Protected groups are
/// never removed. The shared mechanism of every strategy.
pub(crate) fn choose_drops(
    t: &Transcript,
    s: &Structure,
    protection: &[Protection],
    config: &Config,
    targets: &Targets,
    order: impl Iterator<Item = usize>,
) -> Drops {
    let mut d = Drops {
        removed: vec![false; s.groups.len()],
        tokens: t.total_tokens(),
        messages: t.messages.iter().filter(|m| counts_as_message(m)).count(),
    };
    let remove = |g: usize, d: &mut Drops| {
        d.removed[g] = true;
        let group = &s.groups[g];
        d.tokens -= group.tokens;
        d.messages -= group
            .range()
            .filter(|&i| counts_as_message(&t.messages[i]))
            .count();
    };
    for g in order {
        if targets.met(d.tokens, d.messages) {
            break;
        }
        if !protection[g].is_protected() {
            remove(g, &mut d);
        }
    }
    if starts_on_user_required(t, config) && t.messages.iter().any(|m| m.is_real_user()) {
        for (g, p) in protection.iter().enumerate() {
            if d.removed[g] || !is_conversation(t, s, g) {
                continue;
            }
            if starts_on_user(t, s, g) || p.is_protected() {
                break;
            }
            remove(g, &mut d);
        }
    }
    d
}

/// `BUDGET_UNREACHABLE` when the targets are missed and the config asks for an error.
pub(crate) fn check_budget(
    config: &Config,
    targets: &Targets,
    tokens: f64,
    messages: usize,
) -> Result<bool, ReduceError> {
    let over_budget = !targets.met(tokens, messages);
    if over_budget && config.on_over_budget == OnOverBudget::Error {
        return Err(ReduceError::new(
            ErrorCode::BudgetUnreachable,
            format!(
                "the protected messages alone need {} tokens and {messages} messages, \
                 over the targets ({}); raise the budget, lower keepLast, or use \
                 onOverBudget: \"bestEffort\"",
                show(tokens),
                describe_targets(targets)
            ),
        ));
    }
    Ok(over_budget)
}

/// The reduction that removes `drops` (chosen for `targets`) without a trace; what it
/// keeps, as [`keep`] says.
pub(crate) fn drop_reduction(
    t: &Transcript,
    s: &Structure,
    mut drops: Drops,
    config: &Config,
    targets: &Targets,
    kind: &'static str,
) -> Result<Reduction, ReduceError> {
    let before = t.total_tokens();
    let mut fate = vec![Fate::Kept; t.len()];
    let mut output = Vec::with_capacity(t.len());
    let mut count = 0;
    for (g, group) in s.groups.iter().enumerate() {
        for i in group.range() {
            if drops.removed[g] {
                fate[i] = Fate::Dropped;
                count += 1;
            } else {
                fate[i] = keep(t, s, i, &mut output, &mut drops);
            }
        }
    }
    let over_budget = check_budget(config, targets, drops.tokens, drops.messages)?;
    Ok(Reduction {
        reduced: count > 0,
        fate,
        output,
        tokens_before: before,
        tokens_after: drops.tokens,
        over_budget,
        events: if count > 0 {
            vec![CompressionEvent {
                kind,
                messages: count,
                tokens_before: before,
                tokens_after: drops.tokens,
            }]
        } else {
            Vec::new()
        },
    })
}

fn describe_targets(targets: &Targets) -> String {
    let mut parts = Vec::new();
    if let Some(t) = targets.tokens {
        parts.push(format!("targetTokens {}", show(t)));
    }
    if let Some(m) = targets.messages {
        parts.push(format!("targetMessages {m}"));
    }
    crate::error::join(parts, ", ")
}
