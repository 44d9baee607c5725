//! `progressive` (SPEC §5): stages from light to heavy, stopping as soon as the targets are
//! met, with everything that leaves the context kept retrievable.
//!
//! 1. compress runs of ≥ `minToolRun` old tool messages into one message;
//! 2. offload large messages outside the newest `keepLast` groups (text → preview + id);
//! 3. the same inside them, except the latest assistant reply;
//! 4. summarize previous rounds (kind `"round"`);
//! 5. clear old tool results whatever their size (each a note with its offload id), outside
//!    the current turn and the newest `keepLast` groups, but for the newest
//!    `keepToolResults`: the calls and their arguments stay;
//! 6. summarize large messages of the current round (kind `"largeMessage"`);
//! 7. compress the current round's tool messages to `currentRoundRatio` (`"currentRound"`).
//!
//! Rewriting a message needs its content, which lives at the boundary, and stages 1, 4, 6
//! and 7 may await the summarizer. So this is a state machine: [`Progressive::next_action`] says
//! what to do next, the boundary does it and reports the new message's tokens, and
//! [`Progressive::finish`] builds the reduction. If every stage together is not enough,
//! the oldest removable groups are dropped as `truncate` would.

use super::{
    check_budget, choose_drops, keep, settle, CompressionEvent, Drops, Fate, Reduction, Slot,
};
use crate::budget::{counts_as_message, Targets};
use crate::config::{Config, SummaryMode};
use crate::error::ReduceError;
use crate::protect::{keep_last_from, protect, Protection};
use crate::structure::Structure;
use crate::transcript::{LinkKind, Role, Transcript};

/// What the summarizer is asked to compress, for the stages that ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SummaryKind {
    ToolRun,
    Round,
    LargeMessage,
    CurrentRound,
}

impl SummaryKind {
    pub fn name(self) -> &'static str {
        match self {
            SummaryKind::ToolRun => "toolRun",
            SummaryKind::Round => "round",
            SummaryKind::LargeMessage => "largeMessage",
            SummaryKind::CurrentRound => "currentRound",
        }
    }
}

/// The next thing to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Stage 1: replace these consecutive messages (whole tool groups) by one message: the
    /// summarizer's `"toolRun"` summary when there is one, else a digest of the calls.
    CompressRun { messages: Vec<u32> },
    /// Stages 2–3: rewrite the message with a preview of `preview_chars` and an offload id.
    Offload { message: u32 },
    /// Stage 5: rewrite the tool results of the message as cleared, each a note with the
    /// offload id; what else it holds (a user's text beside Anthropic results), and the
    /// calls it answers, stay as they are.
    Clear { message: u32 },
    /// Stage 4: replace these messages (whole previous rounds) by one summary.
    SummarizeRounds {
        messages: Vec<u32>,
        target_tokens: f64,
    },
    /// Stages 6–7: rewrite one message with the summarizer's text (`LargeMessage`, or
    /// `CurrentRound` for a tool message of the current round), offloading the original.
    Rewrite {
        message: u32,
        kind: SummaryKind,
        target_tokens: f64,
    },
    /// Nothing left to do: call [`Progressive::finish`].
    Finish,
}

/// What a written message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Writing {
    /// One message rewritten in place (a preview, a compressed text).
    InPlace,
    /// A compressed tool run: one message for several, counting as one.
    Digest,
    /// A summary of previous rounds: one message for several which, as any summary, is
    /// protected and counts as no message (SPEC §4).
    Summary,
    /// The index of dropped tool calls (`index.rs`): a summary that stands where summaries
    /// stand, not where its first original stood.
    Index,
}

/// A message the reduction wrote, and where it stands.
#[derive(Clone, Debug, PartialEq)]
struct Written {
    /// The input position it takes (the first message it replaces).
    at: u32,
    tokens: f64,
    /// The input messages it stands for.
    covers: Vec<u32>,
    /// False once a round summary replaced it.
    standing: bool,
    kind: Writing,
}

/// The state of a progressive reduction.
pub struct Progressive<'a> {
    t: &'a Transcript,
    s: Structure,
    protection: Vec<Protection>,
    config: &'a Config,
    targets: Targets,
    has_summarizer: bool,
    stage: u8,
    /// Current tokens of each input message (0 once replaced).
    tokens: Vec<f64>,
    fate: Vec<Fate>,
    /// The written message standing at each input position, if any.
    written_at: Vec<Option<u32>>,
    written: Vec<Written>,
    /// Candidates of the current stage, consumed from the front.
    queue: Vec<Action>,
    events: Vec<CompressionEvent>,
    stage_start: f64,
    stage_count: usize,
    /// The action handed out and not yet reported.
    pending: Option<Action>,
    latest_user: Option<usize>,
    /// The first message of the newest `keepLast` groups.
    keep_last_start: usize,
    /// [`Progressive::total`] and [`Progressive::messages`], kept up to date by `done`, so
    /// that checking the targets after each action is not a pass over every message.
    running_tokens: f64,
    running_messages: usize,
    /// The tokens and messages of the orphans that go whole: in the totals (the input as it
    /// is), never in what is kept.
    orphans: (f64, usize),
    /// The index of dropped tool calls among `written`, once written.
    index: Option<u32>,
}

const STAGE_NAMES: [&str; 8] = [
    "",
    "toolRuns",
    "offloadOld",
    "offloadRecent",
    "summarizeRounds",
    "clearToolResults",
    "summarizeLargeMessages",
    "compressCurrentRound",
];

impl<'a> Progressive<'a> {
    /// The groups, rounds and orphans of the input.
    pub fn structure(&self) -> &Structure {
        &self.s
    }

    /// A progressive reduction of `t`, which [`crate::should_reduce`] (a trigger fires, or it
    /// has orphans: a reduction all the same, which meets the targets, SPEC §9.7).
    pub fn new(t: &'a Transcript, config: &'a Config) -> Progressive<'a> {
        let s = Structure::of(t);
        let protection = protect(t, &s, config);
        // The newest `keepLast` groups counted as `protect` counts them: conversation groups
        // (system messages and summaries among them are no group of theirs). Counted over
        // every group, a run of old tool groups could be one of them for `protect` and a run
        // to compress for stage 1 — and its digest, one group for several, moved the
        // protection of the next reduction back (SPEC §9.9).
        let keep_last_start = s
            .groups
            .get(keep_last_from(t, &s, config.keep_last))
            .map_or(t.len(), |g| g.start as usize);
        // (The messages as counted: copies without their orphans as they stand.)
        let counted = t.total_tokens() - t.uncounted;
        let messages = t.messages.iter().filter(|m| counts_as_message(m)).count();
        let (kept_tokens, kept_messages) = s.kept_at_most(t);
        Progressive {
            protection,
            config,
            targets: Targets::of(config),
            has_summarizer: config.has_summarizer,
            stage: 0,
            tokens: t.messages.iter().map(|m| m.tokens).collect(),
            fate: vec![Fate::Kept; t.len()],
            written_at: vec![None; t.len()],
            written: Vec::new(),
            queue: Vec::new(),
            events: Vec::new(),
            stage_start: counted,
            stage_count: 0,
            pending: None,
            latest_user: t.messages.iter().rposition(|m| m.is_real_user()),
            keep_last_start,
            running_tokens: counted,
            running_messages: messages,
            orphans: (counted - kept_tokens, messages - kept_messages),
            index: None,
            t,
            s,
        }
    }

    fn total(&self) -> f64 {
        self.tokens.iter().sum::<f64>() + self.written.iter().map(|w| w.tokens).sum::<f64>()
    }

    fn messages(&self) -> usize {
        let kept = self
            .t
            .messages
            .iter()
            .zip(&self.fate)
            .filter(|(m, f)| **f != Fate::Summarized && counts_as_message(m))
            .count();
        // A digest stands for one message; a summary for none.
        kept + self
            .written
            .iter()
            .filter(|w| w.standing && w.kind == Writing::Digest)
            .count()
    }

    fn met(&self) -> bool {
        debug_assert_eq!(self.running_messages, self.messages());
        debug_assert!((self.running_tokens - self.total()).abs() < 1e-6 * (1.0 + self.total()));
        self.meets(self.running_tokens, self.running_messages)
    }

    /// Whether a history of these totals meets the targets once its orphans are gone.
    fn meets(&self, tokens: f64, messages: usize) -> bool {
        let (t, m) = self.orphans;
        self.targets.met(tokens - t, messages - m)
    }

    /// The round of the latest real user input: the current round.
    fn current_round(&self) -> u32 {
        self.s.round_of.last().copied().unwrap_or(0)
    }

    /// Whether message `i` may be touched at all: not system, not a summary, not the
    /// latest real user input, not yet rewritten.
    fn touchable(&self, i: usize) -> bool {
        self.fate[i] == Fate::Kept && self.ever_touchable(i)
    }

    /// [`Progressive::touchable`] whatever was done to it: not system, not a summary, not
    /// the latest real user input.
    fn ever_touchable(&self, i: usize) -> bool {
        let m = &self.t.messages[i];
        !(m.is_summary() || m.is_system() && self.config.keep_system) && Some(i) != self.latest_user
    }

    /// Whether message `i` may be rewritten in place (stages 2, 3, 5, 6): touchable, not a
    /// reasoning item, which is never edited (it may go whole with its round or its run),
    /// and not written by an earlier reduction — a preview or a compressed text is as short
    /// as these stages make it (a reduction of their result would rewrite them again,
    /// previews of previews, each bigger than the last: SPEC §9.9) — nor an orphan. (A
    /// message with orphans beside other content is rewritten without them.)
    fn editable(&self, i: usize) -> bool {
        self.touchable(i)
            && !self.reasoning(i)
            && !self.t.messages[i].is_written()
            && !self.orphan(i)
    }

    fn reasoning(&self, i: usize) -> bool {
        self.t.messages[i].flags & crate::transcript::flags::ATTACH_NEXT != 0
    }

    /// Whether stage 7 may compress message `i`: editable, or already rewritten in place by
    /// an earlier stage (a preview, a summary of a large message) but editable otherwise —
    /// a reduction of the result would compress what stands there, so this one does. A
    /// preview an earlier reduction wrote is compressed too; what one compressed is not.
    fn compressible(&self, i: usize) -> bool {
        matches!(self.fate[i], Fate::Kept | Fate::Rewritten)
            && self.ever_touchable(i)
            && !self.reasoning(i)
            && !self.t.messages[i].is_compressed()
            && !self.orphan(i)
    }

    /// Whether message `i` carries only orphans: nothing is written for it, it is in no run
    /// and no summary (what the summarizer is asked about, what a digest reloads), and goes.
    fn orphan(&self, i: usize) -> bool {
        self.s.orphan[i] == Structure::ORPHAN
    }

    /// The tokens message `i` stands for now: its own, or those of what was written for it.
    fn tokens_now(&self, i: usize) -> f64 {
        match self.written_at[i] {
            Some(k) if self.fate[i] == Fate::Rewritten => self.written[k as usize].tokens,
            _ => self.tokens[i],
        }
    }

    fn in_keep_last(&self, i: usize) -> bool {
        let g = self.s.group_of[i] as usize;
        matches!(
            self.protection[g],
            Protection::KeepLast | Protection::LatestUserInput | Protection::StartOnUser
        ) || self.s.groups[g].start as usize >= self.keep_last_start
    }

    /// The candidates of `stage`, oldest first.
    fn plan_stage(&self, stage: u8) -> Vec<Action> {
        let large = self.config.large_message_tokens;
        let current = self.current_round();
        let n = self.t.len();
        match stage {
            1 => {
                let mut runs = Vec::new();
                let mut run: Vec<u32> = Vec::new();
                let keep_from = self.keep_last_start;
                for g in &self.s.groups {
                    let range = g.range();
                    // (A real user input is never part of a run: a digest would stand for
                    // it, and the history could then open on no user input — an Anthropic
                    // tool result beside the user's text, or beside an orphan.)
                    let old = range.end <= keep_from
                        && range.clone().all(|i| {
                            self.s.round_of[i] < current
                                && self.touchable(i)
                                && !self.t.messages[i].is_real_user()
                        });
                    if g.has_tool && old {
                        // (A group of orphans alone adds nothing, and ends no run.)
                        for i in range {
                            if !self.orphan(i) {
                                run.push(i as u32);
                            }
                        }
                    } else {
                        if run.len() >= self.config.min_tool_run {
                            runs.push(Action::CompressRun {
                                messages: std::mem::take(&mut run),
                            });
                        }
                        run.clear();
                    }
                }
                if run.len() >= self.config.min_tool_run {
                    runs.push(Action::CompressRun { messages: run });
                }
                runs
            }
            2 | 3 => {
                let latest_assistant = self
                    .t
                    .messages
                    .iter()
                    .rposition(|m| m.role == Role::Assistant);
                let in_stage = |i| {
                    if stage == 2 {
                        !self.in_keep_last(i)
                    } else {
                        self.in_keep_last(i) && Some(i) != latest_assistant
                    }
                };
                let mut actions = Vec::new();
                for i in 0..n {
                    if self.editable(i) && self.tokens[i] > large && in_stage(i) {
                        actions.push(Action::Offload { message: i as u32 });
                    }
                }
                actions
            }
            4 if self.has_summarizer => {
                let mut chosen = vec![false; n];
                for (i, chosen) in chosen.iter_mut().enumerate() {
                    let round = self.s.round_of[i];
                    let previous = round < current && round > 0 || (round == 0 && current > 0);
                    // What earlier stages wrote for these rounds goes into the summary too;
                    // in single mode, so do earlier summaries: the new one replaces them
                    // (the boundary sends their texts as `previousSummary`).
                    let m = &self.t.messages[i];
                    let kept_system = m.is_system() && self.config.keep_system;
                    *chosen = previous
                        && !(self.fate[i] == Fate::Dropped
                            || kept_system
                            || m.is_summary() && self.config.summary_mode == SummaryMode::Layered
                            // (The index of dropped calls stays: the next one takes it over.)
                            || m.is_tool_index()
                            || self.in_keep_last(i));
                }
                // Whole groups only.
                let mut messages = Vec::new();
                for i in 0..n {
                    let g = &self.s.groups[self.s.group_of[i] as usize];
                    if chosen[i] && g.range().all(|j| chosen[j]) && !self.orphan(i) {
                        messages.push(i as u32);
                    }
                }
                let messages = self.oldest_rounds(messages);
                if messages.len() < 2 {
                    return Vec::new();
                }
                let covered: f64 = messages
                    .iter()
                    .map(|&i| self.t.messages[i as usize].tokens)
                    .sum();
                let target = self
                    .config
                    .summary_max_tokens
                    .unwrap_or((covered * 0.25).ceil())
                    .max(1.0);
                vec![Action::SummarizeRounds {
                    messages,
                    target_tokens: target,
                }]
            }
            5 => self.old_tool_results(),
            6 if self.has_summarizer => {
                let mut actions = Vec::new();
                for i in 0..n {
                    if self.s.round_of[i] == current && self.editable(i) && self.tokens[i] > large {
                        actions.push(Action::Rewrite {
                            message: i as u32,
                            kind: SummaryKind::LargeMessage,
                            target_tokens: (large * 0.5).floor().max(1.0),
                        });
                    }
                }
                actions
            }
            7 if self.has_summarizer => {
                let mut actions = Vec::new();
                for i in 0..n {
                    if self.s.round_of[i] == current
                        && self.compressible(i)
                        && self.t.messages[i].role == Role::Tool
                    {
                        actions.push(Action::Rewrite {
                            message: i as u32,
                            kind: SummaryKind::CurrentRound,
                            target_tokens: (self.tokens_now(i) * self.config.current_round_ratio)
                                .floor()
                                .max(1.0),
                        });
                    }
                }
                actions
            }
            _ => Vec::new(),
        }
    }

    /// Stage 5's candidates, oldest first: the messages that hold tool results (answers to
    /// calls before them), editable, outside the current turn and the newest `keepLast`
    /// groups, but for those that hold one of the newest `keepToolResults` results.
    /// After stage 4: a summary keeps what old results said, a cleared one only its id, and
    /// what a later summary is handed of a cleared result is its note.
    fn old_tool_results(&self) -> Vec<Action> {
        let current = self.current_round();
        let n = self.t.len();
        let mut results = vec![0usize; n];
        for l in &self.t.links {
            let i = l.message as usize;
            if l.kind == LinkKind::Result && !self.orphan(i) {
                results[i] += 1;
            }
        }
        // The messages from `whole` on hold the newest `keepToolResults` results.
        let (mut newer, mut whole) = (0, n);
        while whole > 0 && newer < self.config.keep_tool_results {
            whole -= 1;
            newer += results[whole];
        }
        let mut actions = Vec::new();
        for (i, &results) in results[..whole].iter().enumerate() {
            if results > 0
                && self.s.round_of[i] < current
                && !self.in_keep_last(i)
                && self.editable(i)
            {
                actions.push(Action::Clear { message: i as u32 });
            }
        }
        actions
    }

    /// Of `messages` (stage 4's candidates: whole groups of previous rounds, oldest first),
    /// those of the oldest rounds whose summary meets the targets if it has the most tokens
    /// asked for (`summaryMaxTokens`, which a token target sets), or all of them when none
    /// does. The stage stops as soon as the targets are met (SPEC §5): the rounds after stay
    /// verbatim, as `summarize` keeps its newest messages.
    fn oldest_rounds(&self, mut messages: Vec<u32>) -> Vec<u32> {
        let summary = self.config.summary_max_tokens.unwrap_or(0.0);
        let (mut tokens, mut left) = (self.running_tokens, self.running_messages);
        for k in 0..messages.len() {
            let i = messages[k] as usize;
            let (t, m) = self.replaced(i);
            tokens -= t;
            left -= m;
            // (A cut between rounds, and between groups: a group may span two, as a tool
            // result in a user input's turn, or a user input between a call and its result.)
            let ends_round = messages
                .get(k + 1)
                .is_none_or(|&j| self.s.round_of[j as usize] != self.s.round_of[i]);
            let ends_group = self.s.groups[self.s.group_of[i] as usize].end as usize == i + 1;
            if k >= 1 && ends_round && ends_group && self.meets(tokens + summary, left) {
                messages.truncate(k + 1);
                break;
            }
        }
        messages
    }

    /// What [`Progressive::replace`] takes off for message `i`, in tokens and messages: the
    /// message as it stands, and what was written for it (a digest stands as one message).
    fn replaced(&self, i: usize) -> (f64, usize) {
        let mut tokens = self.tokens[i];
        let mut messages =
            usize::from(self.fate[i] != Fate::Summarized && counts_as_message(&self.t.messages[i]));
        if let Some(w) = self.written_at[i] {
            let w = &self.written[w as usize];
            tokens += w.tokens;
            messages += usize::from(w.kind == Writing::Digest);
        }
        (tokens, messages)
    }

    fn close_stage(&mut self) {
        if self.stage > 0 && self.stage_count > 0 {
            self.events.push(CompressionEvent {
                kind: STAGE_NAMES[self.stage as usize],
                messages: self.stage_count,
                tokens_before: self.stage_start,
                tokens_after: self.total(),
            });
        }
        self.stage_count = 0;
        self.stage_start = self.total();
    }

    /// What to do next.
    pub fn next_action(&mut self) -> Action {
        if let Some(a) = &self.pending {
            return a.clone();
        }
        loop {
            if self.met() {
                self.close_stage();
                return Action::Finish;
            }
            if !self.queue.is_empty() {
                let action = self.queue.remove(0);
                if self.still_applies(&action) {
                    self.pending = Some(action.clone());
                    return action;
                }
                continue;
            }
            self.close_stage();
            if self.stage >= 7 {
                return Action::Finish;
            }
            self.stage += 1;
            self.queue = self.plan_stage(self.stage);
        }
    }

    fn still_applies(&self, a: &Action) -> bool {
        match a {
            Action::CompressRun { messages } => messages
                .iter()
                .all(|&i| self.fate[i as usize] == Fate::Kept),
            Action::SummarizeRounds { messages, .. } => messages
                .iter()
                .all(|&i| self.fate[i as usize] != Fate::Dropped),
            Action::Offload { message } | Action::Clear { message } => {
                self.fate[*message as usize] == Fate::Kept
            }
            Action::Rewrite { message, kind, .. } => match self.fate[*message as usize] {
                Fate::Kept => true,
                Fate::Rewritten => *kind == SummaryKind::CurrentRound,
                _ => false,
            },
            Action::Finish => false,
        }
    }

    /// The most tokens what `action` writes may have: no more than what it replaces now (a
    /// rewrite that saves nothing is not used), and a round summary `summaryMaxTokens`.
    /// Over it, the action is skipped (a summary, as a failed one).
    pub fn limit(&self, action: &Action) -> f64 {
        match action {
            Action::SummarizeRounds { messages, .. } => messages
                .iter()
                .map(|&i| self.replaced(i as usize).0)
                .sum::<f64>()
                .min(self.config.summary_max_tokens.unwrap_or(f64::INFINITY)),
            Action::CompressRun { messages } => {
                messages.iter().map(|&i| self.tokens_now(i as usize)).sum()
            }
            Action::Offload { message }
            | Action::Clear { message }
            | Action::Rewrite { message, .. } => self.tokens_now(*message as usize),
            Action::Finish => 0.0,
        }
    }

    /// The pending action was done: its new message has `tokens`.
    pub fn done(&mut self, tokens: f64) {
        let Some(action) = self.pending.take() else {
            return;
        };
        let k = self.written.len() as u32;
        match action {
            Action::CompressRun { messages } => self.replace(messages, tokens, Writing::Digest),
            Action::SummarizeRounds { messages, .. } => {
                self.replace(messages, tokens, Writing::Summary)
            }
            Action::Offload { message }
            | Action::Clear { message }
            | Action::Rewrite { message, .. } => {
                // What an earlier stage wrote for it (stage 7 compresses previews too) gives
                // way.
                self.retire_written(message as usize);
                self.running_tokens += tokens - self.tokens[message as usize];
                self.fate[message as usize] = Fate::Rewritten;
                self.tokens[message as usize] = 0.0;
                self.written_at[message as usize] = Some(k);
                self.written.push(Written {
                    at: message,
                    tokens,
                    covers: vec![message],
                    standing: true,
                    kind: Writing::InPlace,
                });
                self.stage_count += 1;
            }
            Action::Finish => {}
        }
    }

    /// `messages` are replaced by one new message of `tokens`, standing where the first stood.
    fn replace(&mut self, messages: Vec<u32>, tokens: f64, kind: Writing) {
        let Some(&at) = messages.first() else {
            return;
        };
        let k = self.written.len() as u32;
        for &i in &messages {
            let i = i as usize;
            if self.fate[i] != Fate::Summarized && counts_as_message(&self.t.messages[i]) {
                self.running_messages -= 1;
            }
            self.running_tokens -= self.tokens[i];
            self.fate[i] = Fate::Summarized;
            self.tokens[i] = 0.0;
            // A digest or preview written here before is replaced too.
            self.retire_written(i);
        }
        self.running_tokens += tokens;
        if kind == Writing::Digest {
            self.running_messages += 1;
        }
        self.written_at[at as usize] = Some(k);
        self.stage_count += messages.len();
        self.written.push(Written {
            at,
            tokens,
            covers: messages,
            standing: true,
            kind,
        });
    }

    /// What was written for message `i`, if anything, stands no more: it counts for nothing
    /// (a digest that stood as a message of its own, for one message less).
    fn retire_written(&mut self, i: usize) {
        if let Some(old) = self.written_at[i].take() {
            let w = &mut self.written[old as usize];
            if w.kind == Writing::Digest {
                self.running_messages -= 1;
            }
            self.running_tokens -= w.tokens;
            w.standing = false;
            w.tokens = 0.0;
        }
    }

    /// The pending action could not be done (the summarizer failed): move on.
    pub fn skip(&mut self) {
        self.pending = None;
    }

    /// Asks for no more summaries (the summarizer timed out: a reduction waits for it once):
    /// what is queued that needs one is dropped, later stages that need one are skipped, and
    /// tool runs still to compress get digests.
    pub fn stop_summarizing(&mut self) {
        self.has_summarizer = false;
        self.queue.retain(|a| {
            matches!(
                a,
                Action::Offload { .. } | Action::Clear { .. } | Action::CompressRun { .. }
            )
        });
    }

    /// Whether summaries may be asked for.
    pub fn summarizing(&self) -> bool {
        self.has_summarizer
    }

    /// The number of events of the stages closed so far (a stage's event is made when the
    /// next begins, or by [`Progressive::finish`]).
    pub fn events_so_far(&self) -> usize {
        self.events.len()
    }

    /// The reduction: what the stages wrote, then — if the targets are still missed — the
    /// oldest removable groups dropped, and in any case what the turn rules ask
    /// ([`super::settle`]: `startOn`, an orphan gone from before a Gemini call).
    /// The groups that go to meet `targets`, of the first `groups` (in order), as the stages
    /// left the input: what was written stands where its first original stood, with its
    /// tokens, and goes with that group if the group goes (its originals stay in
    /// `offloaded`); a summary written is protected. With `earlier`, the earlier indexes of
    /// dropped tool calls kept count for nothing, and are listed there. Once the index is
    /// written, what is older than its newest line goes too (it covers a prefix, as any
    /// summary: SPEC §9.12), and the turn rules hold again.
    fn drops_for(&self, targets: &Targets, groups: usize, earlier: Option<&mut Vec<u32>>) -> Drops {
        let mut view = self.t.clone();
        for (i, m) in view.messages.iter_mut().enumerate() {
            m.tokens = self.tokens[i];
            if self.fate[i] == Fate::Summarized && self.written_at[i].is_none() {
                // Replaced and standing nowhere: counts for nothing.
                m.flags |= crate::transcript::flags::SUMMARY;
            }
        }
        // The new summary is a summary as any other: protected, and no message.
        let mut protection = self.protection.clone();
        for w in &self.written {
            // (The index stands at no original: its tokens come off the targets.)
            if w.kind == Writing::Index {
                continue;
            }
            let m = &mut view.messages[w.at as usize];
            m.tokens = w.tokens;
            if w.standing && w.kind == Writing::Summary {
                m.flags |= crate::transcript::flags::SUMMARY;
                protection[self.s.group_of[w.at as usize] as usize] = Protection::Summary;
            }
            // A digest is no call turn (in Gemini a user turn, as the results it covers).
            if w.kind == Writing::Digest {
                m.role = Role::Tool;
            }
        }
        if let Some(earlier) = earlier {
            for (i, m) in view.messages.iter_mut().enumerate() {
                if m.is_tool_index() && self.fate[i] == Fate::Kept {
                    earlier.push(i as u32);
                    m.tokens = 0.0;
                }
            }
        }
        // The same groups, with the tokens they have now.
        let now = Structure::of(&view);
        let mut drops = choose_drops(&view, &now, &protection, self.config, targets, 0..groups);
        if let Some(k) = self.index {
            let w = &self.written[k as usize];
            let end = w.covers.iter().max().map_or(0, |&i| i as usize + 1);
            for (g, group) in self.s.groups.iter().enumerate() {
                if (group.start as usize) < end
                    && !drops.removed[g]
                    && !protection[g].is_protected()
                {
                    drops.remove(&view, &now, g);
                }
            }
            settle(&view, &now, &protection, self.config, &mut drops);
        }
        drops
    }

    /// The tokens of the index of dropped tool calls, once written.
    fn index_tokens(&self) -> f64 {
        self.index.map_or(0.0, |k| self.written[k as usize].tokens)
    }

    pub fn finish(mut self) -> Result<Reduction, ReduceError> {
        self.close_stage();
        let before = self.t.total_tokens();
        let index_tokens = self.index_tokens();
        let drops = {
            // (Met, none goes for the targets; the turn rules still hold.)
            let groups = if self.met() { 0 } else { self.s.groups.len() };
            let targets = Targets {
                tokens: self.targets.tokens.map(|t| t - index_tokens),
                messages: self.targets.messages,
            };
            let mut drops = self.drops_for(&targets, groups, None);
            drops.tokens += index_tokens;
            let mut dropped = 0;
            for (g, group) in self.s.groups.iter().enumerate() {
                if drops.removed[g] {
                    for i in group.range() {
                        if self.fate[i] != Fate::Summarized || self.written_at[i].is_some() {
                            dropped += 1;
                        }
                    }
                }
            }
            if dropped > 0 {
                self.events.push(CompressionEvent {
                    kind: "truncate",
                    messages: dropped,
                    tokens_before: self.total(),
                    tokens_after: drops.tokens,
                });
            }
            drops
        };
        let mut output = Vec::with_capacity(self.t.len());
        // The index stands where summaries stand: before the first message kept that is
        // neither a system message nor a summary.
        let mut index = self.index;
        for (g, group) in self.s.groups.iter().enumerate() {
            for i in group.range() {
                let m = &self.t.messages[i];
                let standing = self.written_at[i].is_some() || self.fate[i] == Fate::Kept;
                if standing && !drops.removed[g] && !(m.is_system() || m.is_summary()) {
                    if let Some(k) = index.take() {
                        output.push(Slot::New(k));
                    }
                }
                if drops.removed[g] {
                    match self.written_at[i] {
                        Some(k) => {
                            for &c in &self.written[k as usize].covers {
                                self.fate[c as usize] = Fate::Dropped;
                            }
                        }
                        None if self.fate[i] == Fate::Kept => self.fate[i] = Fate::Dropped,
                        None => {}
                    }
                    continue;
                }
                if let Some(k) = self.written_at[i] {
                    output.push(Slot::New(k));
                    // A compressed tool run is a rewritten message (SPEC §2), whose
                    // originals are offloaded: its messages are rewritten, not summarized
                    // (SPEC §8 counts each input index once).
                    let w = &self.written[k as usize];
                    if w.kind == Writing::Digest {
                        for &c in &w.covers {
                            self.fate[c as usize] = Fate::Rewritten;
                        }
                    }
                } else if self.fate[i] == Fate::Kept {
                    self.fate[i] = keep(&self.s, i, &mut output);
                }
            }
        }
        if let Some(k) = index {
            output.push(Slot::New(k));
        }
        // What the index lists is rewritten, as a tool run's digest: its originals are
        // offloaded under the ids it names.
        if let Some(k) = self.index {
            for &c in &self.written[k as usize].covers {
                self.fate[c as usize] = Fate::Rewritten;
            }
        }
        let over_budget = check_budget(self.config, &self.targets, drops.tokens, drops.messages)?;
        let reduced = self.fate.iter().any(|f| *f != Fate::Kept);
        Ok(Reduction {
            reduced,
            fate: self.fate,
            output,
            tokens_before: before,
            tokens_after: drops.tokens,
            over_budget,
            events: self.events,
            trace: None,
        }
        .without_orphans(self.t, &self.s.orphan))
    }
}

mod index;
pub use index::IndexCandidates;

#[cfg(test)]
mod tests;
