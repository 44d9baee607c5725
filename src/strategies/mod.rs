//! The strategies of SPEC §5 and what a reduction returns.

pub mod cached;
pub mod chunks;
pub mod priority;
pub mod progressive;
pub mod summarize;
pub mod truncate;

use crate::budget::{counts_as_message, Targets};
use crate::config::{Config, OnOverBudget};
use crate::error::{cat, show, ErrorCode, ReduceError};
use crate::protect::{is_conversation, starts_on_user, starts_on_user_required, Protection};
use crate::structure::{Group, Structure};
use crate::transcript::{LinkKind, Role, Transcript};

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
    /// The note that stands for the current turn's oldest tool steps, when the targets
    /// needed them gone (SPEC §9.13): the boundary writes it.
    pub trace: Option<Trace>,
}

/// A note of the current turn: written in the input's format for `messages` (whole tool
/// groups, in order), it names each of their calls and where its result went. It stands
/// at `Slot::New(slot)`; the reduction counted it at `estimate` tokens until it is written.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub slot: u32,
    pub messages: Vec<u32>,
    pub estimate: f64,
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
            trace: None,
        }
    }

    /// This reduction of `t`, whose structure's [`Structure::orphan`] is `orphan`, ended
    /// by an event `"orphans"` when some message carries orphans: each is gone from the
    /// output, or stands without them ([`keep`]), or went with its group.
    pub(crate) fn without_orphans(mut self, t: &Transcript, orphan: &[u8]) -> Reduction {
        // (From the input to the input without any orphan: cut from copies, or gone whole.)
        let (mut count, mut after) = (0, self.tokens_before - t.uncounted);
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
        let mut out = Vec::new();
        for (i, &f) in self.fate.iter().enumerate() {
            if f == fate {
                out.push(i as u32);
            }
        }
        out
    }

    /// The input indices of each fate, in `Fate` order (kept, dropped, summarized,
    /// rewritten): `indices` of all four in one pass.
    pub fn indices_by_fate(&self) -> [Vec<u32>; 4] {
        // (Counted, then written: at the inlining threshold of .cargo/config.toml a `push`
        // is a call, one for each message here.)
        let mut counts = [0; 4];
        for &f in &self.fate {
            counts[f as usize] += 1;
        }
        let [a, b, c, d] = counts;
        let mut by = [vec![0u32; a], vec![0; b], vec![0; c], vec![0; d]];
        let mut next = [0; 4];
        for (i, &f) in self.fate.iter().enumerate() {
            let f = f as usize;
            by[f].as_mut_slice()[next[f]] = i as u32;
            next[f] += 1;
        }
        by
    }
}

/// What becomes of message `i` of structure `s` in a group a reduction keeps (SPEC §9.4):
/// an orphan ([`Structure::ORPHAN`]) goes all the same (what is left never counted it);
/// a [`Structure::STRAY`] stands as a copy without its orphans ([`Slot::Cleaned`]),
/// `Rewritten`; any other as it was. Its slot, if any, goes onto `output`.
pub(crate) fn keep(s: &Structure, i: usize, output: &mut Vec<Slot>) -> Fate {
    let at = i as u32;
    match s.orphan.as_slice()[i] {
        Structure::ORPHAN => Fate::Dropped,
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
    /// The groups a current-turn note stands for ([`trace_current_turn`]).
    pub traced: Vec<bool>,
    /// What the note was counted at (0 without one).
    pub note_tokens: f64,
    /// Tokens of what is left.
    pub tokens: f64,
    /// Messages of what is left that count toward `targetMessages`.
    pub messages: usize,
}

/// Removes whole groups in `order` until `targets` are met, then what the format's turn
/// rules ask ([`settle`]). Protected groups are never removed. The shared mechanism of
/// every strategy.
pub(crate) fn choose_drops(
    t: &Transcript,
    s: &Structure,
    protection: &[Protection],
    config: &Config,
    targets: &Targets,
    order: impl Iterator<Item = usize>,
) -> Drops {
    let (tokens, messages) = s.kept_at_most(t);
    let mut d = Drops {
        removed: vec![false; s.groups.len()],
        traced: vec![false; s.groups.len()],
        note_tokens: 0.0,
        tokens,
        messages,
    };
    for g in order {
        if targets.met(d.tokens, d.messages) {
            break;
        }
        if !protection[g].is_protected() {
            d.remove(t, s, g);
        }
    }
    settle(t, s, protection, config, &mut d);
    d
}

/// Where the prefix a `truncate` or `summarize` may remove ends (SPEC §5): at the first
/// conversation group that must stay (the latest user input at the latest). A summary so
/// never covers a message later than one kept verbatim after it (SPEC §9.12).
pub(crate) fn prefix_end(t: &Transcript, s: &Structure, protection: &[Protection]) -> usize {
    (0..s.groups.len())
        .find(|&g| protection[g].is_protected() && is_conversation(t, s, g))
        .unwrap_or(s.groups.len())
}

/// What a current-turn note is counted at before it is written: its opening line, and a
/// line for each call with its arguments and one for its result, both cut short.
const NOTE_TOKENS: f64 = 45.0;
const NOTE_TOKENS_PER_CALL: f64 = 60.0;

/// When the targets are still missed, the current turn's oldest tool steps go into one
/// note (SPEC §9.13), oldest first while they are unbroken tool groups the turn protects
/// ([`Protection::CurrentTurn`]: not the latest groups `keepLast` keeps), until the targets
/// are met with the note counted. A turn whose steps cannot go keeps them: `overBudget`.
pub(crate) fn trace_current_turn(
    t: &Transcript,
    s: &Structure,
    protection: &[Protection],
    targets: &Targets,
    d: &mut Drops,
) {
    if targets.met(d.tokens, d.messages) {
        return;
    }
    let Some(first) = (0..s.groups.len()).find(|&g| protection[g] == Protection::CurrentTurn)
    else {
        return;
    };
    let mut calls = 0usize;
    let mut traced = Vec::new();
    let mut left = d.clone();
    for (g, group) in s.groups.iter().enumerate().skip(first) {
        if protection[g] != Protection::CurrentTurn || !group.has_tool || left.removed[g] {
            break;
        }
        left.remove(t, s, g);
        traced.push(g);
        calls += t
            .links
            .iter()
            .filter(|l| l.kind == LinkKind::Call && s.group_of[l.message as usize] as usize == g)
            .count();
        let note = NOTE_TOKENS + NOTE_TOKENS_PER_CALL * calls as f64;
        // (The note is a message of its own.)
        if targets.met(left.tokens + note, left.messages + 1) {
            break;
        }
    }
    if traced.is_empty() {
        return;
    }
    let note = NOTE_TOKENS + NOTE_TOKENS_PER_CALL * calls as f64;
    for g in traced {
        d.remove(t, s, g);
        d.removed[g] = false;
        d.traced[g] = true;
    }
    d.tokens += note;
    d.messages += 1;
    d.note_tokens = note;
}

impl Drops {
    /// Removes group `g` of `s` (a structure of `t`): its tokens and messages are no longer
    /// left.
    fn remove(&mut self, t: &Transcript, s: &Structure, g: usize) {
        self.removed[g] = true;
        let group = &s.groups.as_slice()[g];
        self.tokens -= group.tokens;
        let (orphan, messages) = (s.orphan.as_slice(), t.messages.as_slice());
        self.messages -= group
            .range()
            .filter(|&i| orphan[i] != Structure::ORPHAN && counts_as_message(&messages[i]))
            .count();
    }
}

/// What the turn rules ask of what `d` leaves, removing groups (only ever fewer tokens and
/// messages, so targets met stay met):
/// - `startOn: "user"` (and Anthropic, Gemini): removing from the front until the history
///   starts on a real user input;
/// - Gemini (SPEC §9.4): a `functionCall` turn follows a user or `functionResponse` turn.
///   A call group that follows one in the input but would not in the output — the turn
///   before it went: an orphan `functionResponse` ([`Structure::ORPHAN`]), or the group of
///   a call that went for this — goes too (it answered what is gone); when it is protected,
///   the model turns between it and the user turn before it go instead, `keepLast` or not
///   (the rule comes first; a system message or a summary stays). Kept for `startOn` only
///   counts as unprotected here: nothing that goes is a user input. A call group after a
///   model turn whose calls were orphans (it stands without them: a model turn) has the
///   model turns before it go.
///   (An input that breaks the rule itself is left as it is.)
pub(crate) fn settle(
    t: &Transcript,
    s: &Structure,
    protection: &[Protection],
    config: &Config,
    d: &mut Drops,
) {
    if starts_on_user_required(t, config) && t.messages.iter().any(|m| m.is_real_user()) {
        for (g, p) in protection.iter().enumerate() {
            if d.removed[g] || !is_conversation(t, s, g) {
                continue;
            }
            if starts_on_user(t, s, g) || p.is_protected() {
                break;
            }
            d.remove(t, s, g);
        }
    }
    if !t.format.calls_follow_user_turns() {
        return;
    }
    // Whether each message keeps a call: one of a message without orphans, or one a
    // response answers (a message that carries orphans stands without its orphan calls;
    // its group holds the responses of those it keeps: in Gemini they follow it).
    let mut calls = vec![false; t.len()];
    for l in t.links.iter().filter(|l| l.kind == LinkKind::Call) {
        let m = l.message as usize;
        calls[m] |= s.orphan[m] == 0 || s.groups[s.group_of[m] as usize].end as usize > m + 1;
    }
    let after_user = |i: usize| matches!(t.messages[i].role, Role::User | Role::Tool);
    // The last message of a kept group, but for orphans (which go whatever keeps them).
    let last_kept = |g: &Group| g.range().rev().find(|&i| s.orphan[i] != Structure::ORPHAN);
    // (A group kept only for the history to start on a user input may go: what goes here
    // is no user input.)
    let bound = |g: usize| !matches!(protection[g], Protection::None | Protection::StartOnUser);
    let system = |g: usize| matches!(protection[g], Protection::System | Protection::Summary);
    let mut before: Option<usize> = None;
    for (g, group) in s.groups.iter().enumerate() {
        if d.removed[g] {
            continue;
        }
        let start = group.start as usize;
        // (A model turn before it whose calls were orphans stands without them: it goes.)
        let lost =
            start > 0 && t.messages[start - 1].role == Role::Assistant && s.orphan[start - 1] != 0;
        let broken = calls[start]
            && t.messages[start].role == Role::Assistant
            && start > 0
            && (after_user(start - 1) || lost)
            && !before.is_some_and(after_user);
        if broken && !lost && !bound(g) {
            d.remove(t, s, g);
            continue;
        }
        if broken {
            for b in (0..g).rev() {
                match last_kept(&s.groups[b]) {
                    _ if d.removed[b] => {}
                    None => {}
                    Some(i) if after_user(i) || system(b) => break,
                    Some(_) => d.remove(t, s, b),
                }
            }
        }
        before = last_kept(group).or(before);
    }
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
            cat(&[
                "the protected messages alone need ",
                &show(tokens),
                " tokens and ",
                &show(messages as f64),
                if messages == 1 {
                    " message"
                } else {
                    " messages"
                },
                ", over the targets (",
                &describe_targets(targets),
                "); raise the budget, lower keepLast, or use onOverBudget: \"bestEffort\"",
            ]),
        ));
    }
    Ok(over_budget)
}

/// The reduction that removes `drops` (chosen for `targets`) without a trace; what it
/// keeps, as [`keep`] says.
pub(crate) fn drop_reduction(
    t: &Transcript,
    s: &Structure,
    drops: Drops,
    config: &Config,
    targets: &Targets,
    kind: &'static str,
) -> Result<Reduction, ReduceError> {
    let before = t.total_tokens();
    let mut fate = vec![Fate::Kept; t.len()];
    let mut output = Vec::with_capacity(t.len());
    let mut count = 0;
    let mut noted = Vec::new();
    // (Slices, not `Vec`s, are indexed in this loop: at the inlining threshold of
    // .cargo/config.toml a `Vec`'s indexing is a call.)
    let (fates, orphan) = (fate.as_mut_slice(), s.orphan.as_slice());
    let (removed, traced) = (drops.removed.as_slice(), drops.traced.as_slice());
    for (g, group) in s.groups.iter().enumerate() {
        if traced[g] && noted.is_empty() {
            output.push(Slot::New(0));
        }
        for i in group.range() {
            if removed[g] {
                fates[i] = Fate::Dropped;
                count += 1;
            } else if traced[g] {
                fates[i] = if orphan[i] == Structure::ORPHAN {
                    Fate::Dropped
                } else {
                    noted.push(i as u32);
                    Fate::Rewritten
                };
            } else {
                fates[i] = keep(s, i, &mut output);
            }
        }
    }
    let over_budget = check_budget(config, targets, drops.tokens, drops.messages)?;
    let mut events = Vec::new();
    // (What the strategy removed, then the note: each step from where the one before ended.)
    let after_removal = drops.tokens - drops.note_tokens + noted_tokens(t, &noted);
    if count > 0 {
        events.push(CompressionEvent {
            kind,
            messages: count,
            tokens_before: before,
            tokens_after: after_removal,
        });
    }
    let trace = (!noted.is_empty()).then(|| {
        events.push(CompressionEvent {
            kind: "currentTurn",
            messages: noted.len(),
            tokens_before: after_removal,
            tokens_after: drops.tokens,
        });
        Trace {
            slot: 0,
            messages: noted,
            estimate: drops.note_tokens,
        }
    });
    Ok(Reduction {
        reduced: count > 0 || trace.is_some(),
        fate,
        output,
        tokens_before: before,
        tokens_after: drops.tokens,
        over_budget,
        events,
        trace,
    })
}

fn noted_tokens(t: &Transcript, noted: &[u32]) -> f64 {
    noted.iter().map(|&i| t.messages[i as usize].tokens).sum()
}

fn describe_targets(targets: &Targets) -> String {
    let mut out = String::new();
    if let Some(t) = targets.tokens {
        out = cat(&["targetTokens ", &show(t)]);
    }
    if let Some(m) = targets.messages {
        let sep = if out.is_empty() { "" } else { ", " };
        out = cat(&[&out, sep, "targetMessages ", &show(m as f64)]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OptionValue::{Number, Text};
    use crate::formats::Format;
    use crate::transcript::{LinkKind, MessageInfo, Role};

    /// Gemini `[user q1, model a1, user{functionResponse b} (an orphan), model{functionCall c},
    /// user{functionResponse c}, model done, user q2]`, with a second call group after the
    /// first when `chained`.
    fn gemini(chained: bool) -> Transcript {
        let mut t = Transcript::new(Format::Gemini);
        let push = |t: &mut Transcript, role, link: Option<(LinkKind, u32)>| {
            t.push(MessageInfo::new(role, 10.0));
            if let Some((kind, key)) = link {
                t.link(kind, key);
            }
        };
        push(&mut t, Role::User, None);
        push(&mut t, Role::Assistant, None);
        push(&mut t, Role::Tool, Some((LinkKind::Result, 99)));
        push(&mut t, Role::Assistant, Some((LinkKind::Call, 1)));
        push(&mut t, Role::Tool, Some((LinkKind::Result, 1)));
        if chained {
            push(&mut t, Role::Assistant, Some((LinkKind::Call, 2)));
            push(&mut t, Role::Tool, Some((LinkKind::Result, 2)));
        }
        push(&mut t, Role::Assistant, None);
        push(&mut t, Role::User, None);
        t
    }

    fn kept(t: &Transcript, pairs: &[(&str, crate::config::OptionValue)]) -> Vec<u32> {
        let c = Config::from_pairs(pairs).unwrap();
        let r = crate::reduce_sync(t, &c).unwrap();
        r.output
            .iter()
            .map(|s| match s {
                Slot::Input(i) | Slot::Cleaned(i) => *i,
                Slot::New(_) => u32::MAX,
            })
            .collect()
    }

    #[test]
    fn a_gemini_call_whose_turn_before_was_an_orphan_goes_with_it() {
        // Not `model a1, model{functionCall c}` (SPEC §9.4): the call answered the orphan.
        let big = [("maxTokens", Number(1e5))];
        assert_eq!(kept(&gemini(false), &big), vec![0, 1, 5, 6]);
        // So does a call that followed that call's results.
        assert_eq!(kept(&gemini(true), &big), vec![0, 1, 7, 8]);
        // Protected by keepLast, the call stays and the model turn before it goes.
        for strategy in ["truncate", "priority", "progressive"] {
            let keep = [
                ("maxTokens", Number(1e5)),
                ("keepLast", Number(3.0)),
                ("strategy", Text(strategy.into())),
            ];
            assert_eq!(
                kept(&gemini(false), &keep),
                vec![0, 3, 4, 5, 6],
                "{strategy}"
            );
        }
    }
}
