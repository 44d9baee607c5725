//! The strategies of SPEC §5 and what a reduction returns.

pub mod priority;
pub mod truncate;

use crate::budget::{counts_as_message, Targets};
use crate::config::{Config, OnOverBudget};
use crate::error::{ErrorCode, ReduceError};
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
}

/// One entry of the output history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The input message at this index, as it was.
    Input(u32),
}

/// A step of a reduction, reported in `result.events`.
#[derive(Clone, Debug, PartialEq)]
pub struct CompressionEvent {
    /// `"truncate"`, `"priority"`, …
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

    pub fn indices(&self, fate: Fate) -> Vec<u32> {
        (0..self.fate.len() as u32)
            .filter(|&i| self.fate[i as usize] == fate)
            .collect()
    }

    pub fn removed_count(&self) -> usize {
        self.fate.iter().filter(|&&f| f != Fate::Kept).count()
    }
}

/// Removes whole groups in `order` until the targets are met, then keeps removing from the
/// front until the history starts on a user input (`startOn: "user"`). Protected groups are
/// never removed. Shared by the strategies that only drop.
pub(crate) fn drop_groups(
    t: &Transcript,
    s: &Structure,
    protection: &[Protection],
    config: &Config,
    kind: &'static str,
    order: impl Iterator<Item = usize>,
) -> Result<Reduction, ReduceError> {
    let targets = Targets::of(config);
    let before = t.total_tokens();
    let mut tokens = before;
    let mut messages = t.messages.iter().filter(|m| counts_as_message(m)).count();
    let mut removed = vec![false; s.groups.len()];

    let remove = |g: usize, removed: &mut [bool], tokens: &mut f64, messages: &mut usize| {
        removed[g] = true;
        let group = &s.groups[g];
        *tokens -= group.tokens;
        *messages -= group
            .range()
            .filter(|&i| counts_as_message(&t.messages[i]))
            .count();
    };
    for g in order {
        if targets.met(tokens, messages) {
            break;
        }
        if !protection[g].is_protected() {
            remove(g, &mut removed, &mut tokens, &mut messages);
        }
    }
    if starts_on_user_required(t, config) && t.messages.iter().any(|m| m.is_real_user()) {
        for g in 0..s.groups.len() {
            if removed[g] || !is_conversation(t, s, g) {
                continue;
            }
            if starts_on_user(t, s, g) || protection[g].is_protected() {
                break;
            }
            remove(g, &mut removed, &mut tokens, &mut messages);
        }
    }
    let over_budget = !targets.met(tokens, messages);
    if over_budget && config.on_over_budget == OnOverBudget::Error {
        return Err(ReduceError::new(
            ErrorCode::BudgetUnreachable,
            format!(
                "the protected messages alone need {tokens} tokens and {messages} messages, \
                 over the targets ({}); raise the budget, lower keepLast, or use \
                 onOverBudget: \"bestEffort\"",
                describe_targets(&targets)
            ),
        ));
    }

    let mut fate = vec![Fate::Kept; t.len()];
    let mut output = Vec::with_capacity(t.len());
    let mut count = 0;
    for (g, group) in s.groups.iter().enumerate() {
        for i in group.range() {
            if removed[g] {
                fate[i] = Fate::Dropped;
                count += 1;
            } else {
                output.push(Slot::Input(i as u32));
            }
        }
    }
    Ok(Reduction {
        reduced: count > 0,
        fate,
        output,
        tokens_before: before,
        tokens_after: tokens,
        over_budget,
        events: if count > 0 {
            vec![CompressionEvent {
                kind,
                messages: count,
                tokens_before: before,
                tokens_after: tokens,
            }]
        } else {
            Vec::new()
        },
    })
}

fn describe_targets(targets: &Targets) -> String {
    let mut parts = Vec::new();
    if let Some(t) = targets.tokens {
        parts.push(format!("targetTokens {t}"));
    }
    if let Some(m) = targets.messages {
        parts.push(format!("targetMessages {m}"));
    }
    parts.join(", ")
}
