//! `progressive`'s index of dropped tool calls. When every stage together leaves the targets
//! missed and old groups go as `truncate` drops them, the tool groups among them leave a
//! line each in one index: the calls with their arguments and an offload id the reload tool
//! fetches the call and its results by. The index stands where summaries stand and takes at
//! most `toolIndexRatio` of the token target; an earlier index is taken over (its lines
//! first, the oldest giving way when there is no room), so the newest dropped calls stay
//! reachable over a long session where any strategy keeps only a share of the turns.

use super::{Progressive, Writing, Written};
use crate::budget::{counts_as_message, Targets};
use crate::config::TOOL_INDEX_RATIO;
use crate::strategies::Fate;
use crate::transcript::LinkKind;

/// The most tokens of the index when there is no token target (as `summaryMaxTokens`'
/// default then).
const NO_TARGET_BUDGET: f64 = 1000.0;

/// Below this budget an index holds next to nothing (its opening line alone takes a dozen
/// tokens): none is written.
const MIN_BUDGET: f64 = 48.0;

/// What the boundary is asked to write: the index of `units` (oldest first; each the
/// messages `messages[ends[k - 1]..ends[k]]`) after the lines of the `earlier` indexes, in at
/// most `budget` tokens. A unit is a tool group (a call with its results), the messages a
/// tool run's digest of this reduction stands for, or a digest an earlier one wrote. Lines
/// that do not fit go, oldest first.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexCandidates {
    pub messages: Vec<u32>,
    pub ends: Vec<u32>,
    pub earlier: Vec<u32>,
    pub budget: f64,
}

impl Progressive<'_> {
    /// The index to write before [`Progressive::finish`], if any: the targets are missed, and
    /// the groups that go to meet them with the index's room left free hold tool calls with
    /// their results, or tool runs' digests.
    pub fn index_candidates(&self) -> Option<IndexCandidates> {
        if self.met() || self.config.tool_index_ratio <= 0.0 {
            return None;
        }
        let budget = self.config.tool_index_ratio
            * self
                .targets
                .tokens
                .unwrap_or(NO_TARGET_BUDGET / TOOL_INDEX_RATIO);
        if budget < MIN_BUDGET {
            return None;
        }
        // An earlier index gives way to the new one, which holds its lines.
        let mut earlier = Vec::new();
        let targets = Targets {
            tokens: self.targets.tokens.map(|t| t - budget),
            messages: self.targets.messages,
        };
        let drops = self.drops_for(&targets, self.s.groups.len(), Some(&mut earlier));
        // No more than the room those drops leave under the target: where what must stay
        // takes it, the index would push the result over (or take what truncation meets).
        let budget = self
            .targets
            .tokens
            .map_or(budget, |t| budget.min(t - drops.tokens));
        if budget < MIN_BUDGET {
            return None;
        }
        // Which messages hold calls (1), and which results (2).
        let mut holds = vec![0u8; self.t.len()];
        for l in &self.t.links {
            holds[l.message as usize] |= if l.kind == LinkKind::Call { 1 } else { 2 };
        }
        let current = self.current_round();
        let (mut messages, mut ends) = (Vec::new(), Vec::new());
        for (g, group) in self.s.groups.iter().enumerate() {
            if !drops.removed[g] {
                continue;
            }
            let (start, end) = (group.start as usize, group.end as usize);
            let (mut links, mut whole) = (0, true);
            // (A range: smaller in the wasm build than an enumerated, skipped iterator.)
            #[allow(clippy::needless_range_loop)]
            for i in start..end {
                links |= holds[i];
                whole &= self.indexable(i) && self.s.round_of[i] < current;
            }
            let m = &self.t.messages[start];
            if group.has_tool && whole && links == 3 {
                for i in start..end {
                    messages.push(i as u32);
                }
            } else if let Some(k) = self.written_at[start] {
                // A tool run's digest of this reduction goes with this group: what it stands for.
                let w = &self.written[k as usize];
                if !(w.standing && w.kind == Writing::Digest) {
                    continue;
                }
                messages.extend_from_slice(&w.covers);
            } else if end == start + 1
                && m.is_compressed()
                && holds[start] == 0
                && !m.is_summary()
                && self.fate[start] == Fate::Kept
            {
                // A digest an earlier reduction wrote (the boundary tells a tool run's from a
                // compressed text, which it does not list).
                messages.push(start as u32);
            } else {
                continue;
            }
            ends.push(messages.len() as u32);
        }
        (!ends.is_empty()).then_some(IndexCandidates {
            messages,
            ends,
            earlier,
            budget,
        })
    }

    /// Whether message `i` may be listed in the index: as the input has it, or rewritten in
    /// place by a stage (a preview, a cleared result: the index reloads the original); not a
    /// real user input (its words would go with it), a summary, or an orphan.
    fn indexable(&self, i: usize) -> bool {
        let m = &self.t.messages[i];
        let in_place = match self.written_at[i] {
            Some(k) => self.written[k as usize].kind == Writing::InPlace,
            None => self.fate[i] == Fate::Kept,
        };
        in_place && !m.is_real_user() && !m.is_summary() && !self.orphan(i)
    }

    /// The index was written with `tokens`: it lists `messages` (units of
    /// [`IndexCandidates`]) and takes over the indexes `earlier`. Those messages leave; what a
    /// stage wrote for them gives way.
    pub fn indexed(&mut self, tokens: f64, messages: &[u32], earlier: &[u32]) {
        let before = self.running_tokens;
        let mut covers = Vec::with_capacity(earlier.len() + messages.len());
        covers.extend_from_slice(earlier);
        covers.extend_from_slice(messages);
        for &i in &covers {
            let i = i as usize;
            self.retire_written(i);
            if self.fate[i] != Fate::Summarized && counts_as_message(&self.t.messages[i]) {
                self.running_messages -= 1;
            }
            self.running_tokens -= self.tokens[i];
            self.tokens[i] = 0.0;
            self.fate[i] = Fate::Summarized;
        }
        self.running_tokens += tokens;
        self.index = Some(self.written.len() as u32);
        self.written.push(Written {
            at: covers.first().copied().unwrap_or(0),
            tokens,
            covers,
            standing: true,
            kind: Writing::Index,
        });
        self.events.push(crate::strategies::CompressionEvent {
            kind: "indexToolCalls",
            messages: messages.len(),
            tokens_before: before,
            tokens_after: self.running_tokens,
        });
    }
}

#[cfg(test)]
mod tests;
