//! What one summarizer call is handed (SPEC §6, `summarizerInputTokens`). A summary's input
//! larger than that is summarized in chunks, oldest first, each call getting the summary of
//! the chunks before it as `previousSummary`; a chunk cuts only between groups (a call
//! handed a tool call without its result, or a result without its call, may hand them to a
//! model that refuses them), and a group larger than a chunk is handed with its largest
//! messages as head-and-tail excerpts, which the boundary writes.

use std::borrow::Borrow;

use crate::structure::Structure;
use crate::transcript::Transcript;

/// What a summarizer call may be handed, in tokens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InputBudget {
    /// `summarizerInputTokens`: the messages and the `previousSummary` of one call.
    pub limit: f64,
    /// The earlier summaries the first call gets as `previousSummary` (single mode).
    pub previous: f64,
    /// What a chunk's summary may have: the next call gets it as `previousSummary`.
    pub summary: f64,
}

impl InputBudget {
    /// The tokens of messages the call of chunk `k` may be handed: the limit less its
    /// `previousSummary`, but at least half of it (a summary near the limit would leave
    /// a call nothing to summarize).
    pub fn room(&self, k: usize) -> f64 {
        let previous = if k == 0 { self.previous } else { self.summary };
        (self.limit - previous).max(self.limit / 2.0)
    }
}

/// One summarizer call's share of a summary's input.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    /// Positions in the input, oldest first: `start..end`.
    pub start: usize,
    pub end: usize,
    /// The positions handed as a head-and-tail excerpt, each with the tokens it may have.
    pub excerpts: Vec<(usize, f64)>,
}

/// The chunks of an input of `len` messages, position k having `tokens(k)` and being of
/// group `group(k)` (a chunk never ends inside a group), each as full as its room allows
/// ([`InputBudget::room`]). A group larger than a call's room takes what the chunk's other
/// groups leave, at least half of it (one such group a chunk), its largest messages cut to
/// that ([`Chunk::excerpts`]). One chunk, with no excerpt, when everything fits in one call.
pub fn chunks(
    len: usize,
    tokens: impl Fn(usize) -> f64,
    group: impl Fn(usize) -> u32,
    budget: &InputBudget,
) -> Vec<Chunk> {
    let mut out = Vec::new();
    // The chunk being filled: where it starts, the tokens of its groups but a too large one,
    // and that one's positions.
    let (mut start, mut fixed, mut large) = (0, 0.0, None);
    let mut k = 0;
    while k < len {
        // The group at k, whole.
        let (mut end, mut size) = (k + 1, tokens(k));
        while end < len && group(end) == group(k) {
            size += tokens(end);
            end += 1;
        }
        let room = budget.room(out.len());
        let full = if size > room {
            large.is_some() || fixed > room / 2.0
        } else {
            fixed + size + large.map_or(0.0, |_| room / 2.0) > room
        };
        if k > start && full {
            out.push(close(&tokens, start, k, fixed, large, room));
            (start, fixed, large) = (k, 0.0, None);
        }
        if size > budget.room(out.len()) {
            large = Some((k, end));
        } else {
            fixed += size;
        }
        k = end;
    }
    if start < len {
        let room = budget.room(out.len());
        out.push(close(&tokens, start, len, fixed, large, room));
    }
    out
}

/// The chunk of positions `start..end` with `room` tokens, of which its groups take `fixed`
/// but the too large one at `large`, whose largest messages share what is left, each cut to
/// an equal share.
fn close(
    tokens: &impl Fn(usize) -> f64,
    start: usize,
    end: usize,
    fixed: f64,
    large: Option<(usize, usize)>,
    room: f64,
) -> Chunk {
    let mut excerpts = Vec::new();
    if let Some((a, b)) = large {
        // The messages within an equal share of what is left stay whole, which leaves the
        // others more: again until no more stay whole; those are cut to the share.
        let (mut share, mut whole) = ((room - fixed) / (b - a) as f64, 0);
        loop {
            let (mut n, mut sum) = (0, 0.0);
            for k in a..b {
                if tokens(k) <= share {
                    (n, sum) = (n + 1, sum + tokens(k));
                }
            }
            if n == whole || n == b - a {
                break;
            }
            (share, whole) = ((room - fixed - sum) / (b - a - n) as f64, n);
        }
        for k in a..b {
            if tokens(k) > share {
                excerpts.push((k, share));
            }
        }
    }
    Chunk {
        start,
        end,
        excerpts,
    }
}

/// [`chunks`] of the messages at `indices` of `t` (oldest first) by their tokens, with the
/// groups of `structure`, asked for only when the input does not fit in one call.
pub fn chunks_of<S: Borrow<Structure>>(
    t: &Transcript,
    indices: &[u32],
    structure: impl FnOnce() -> S,
    budget: &InputBudget,
) -> Vec<Chunk> {
    let tokens = |k: usize| t.messages[indices[k] as usize].tokens;
    if t.tokens_of(indices) <= budget.room(0) {
        return vec![Chunk {
            start: 0,
            end: indices.len(),
            excerpts: Vec::new(),
        }];
    }
    let s = structure();
    let group = |k: usize| s.borrow().group_of[indices[k] as usize];
    chunks(indices.len(), tokens, group, budget)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{LinkKind, MessageInfo, Role};
    use crate::Format;

    fn budget(limit: f64) -> InputBudget {
        InputBudget {
            limit,
            previous: 0.0,
            summary: 0.0,
        }
    }

    fn split(tokens: &[f64], group: &[u32], budget: &InputBudget) -> Vec<Chunk> {
        chunks(tokens.len(), |k| tokens[k], |k| group[k], budget)
    }

    fn ranges(c: &[Chunk]) -> Vec<(usize, usize)> {
        c.iter().map(|c| (c.start, c.end)).collect()
    }

    #[test]
    fn an_input_that_fits_is_one_chunk() {
        let c = split(&[10.0, 20.0, 30.0], &[0, 1, 2], &budget(60.0));
        assert_eq!(ranges(&c), [(0, 3)]);
        assert!(c[0].excerpts.is_empty());
        assert_eq!(split(&[], &[], &budget(60.0)), []);
    }

    #[test]
    fn chunks_fill_up_oldest_first() {
        let c = split(&[40.0; 5], &[0, 1, 2, 3, 4], &budget(100.0));
        assert_eq!(ranges(&c), [(0, 2), (2, 4), (4, 5)]);
        assert!(c.iter().all(|c| c.excerpts.is_empty()));
    }

    #[test]
    fn each_call_after_the_first_keeps_room_for_the_summary_before_it() {
        let b = InputBudget {
            limit: 100.0,
            previous: 30.0,
            summary: 20.0,
        };
        // 70 for the first call (an earlier summary of 30 beside it), 80 for the others.
        let c = split(&[35.0, 35.0, 40.0, 40.0, 10.0], &[0, 1, 2, 3, 4], &b);
        assert_eq!(ranges(&c), [(0, 2), (2, 4), (4, 5)]);
        // A summary near the limit leaves the messages half of it.
        let b = InputBudget {
            limit: 100.0,
            previous: 90.0,
            summary: 90.0,
        };
        assert_eq!(b.room(0), 50.0);
        assert_eq!(
            ranges(&split(&[30.0; 4], &[0, 1, 2, 3], &b)),
            [(0, 1), (1, 2), (2, 3), (3, 4)]
        );
    }

    #[test]
    fn a_chunk_never_cuts_a_group() {
        // A call (position 1) and its two results (2, 3) go together.
        let c = split(
            &[50.0, 20.0, 20.0, 20.0, 50.0],
            &[0, 1, 1, 1, 2],
            &budget(100.0),
        );
        assert_eq!(ranges(&c), [(0, 1), (1, 4), (4, 5)]);
    }

    #[test]
    fn a_message_over_the_room_is_an_excerpt_of_what_the_others_leave() {
        let c = split(&[10.0, 65_000.0, 10.0], &[0, 1, 2], &budget(32_000.0));
        assert_eq!(ranges(&c), [(0, 3)]);
        assert_eq!(c[0].excerpts, [(1, 31_980.0)]);
        // At least half the room: what does not fit beside that goes to the next call.
        let c = split(
            &[10_000.0, 5_000.0, 65_000.0, 9_000.0],
            &[0, 1, 2, 3],
            &budget(32_000.0),
        );
        assert_eq!(ranges(&c), [(0, 3), (3, 4)]);
        assert_eq!(c[0].excerpts, [(2, 17_000.0)]);
        let c = split(
            &[10_000.0, 9_000.0, 65_000.0, 9_000.0],
            &[0, 1, 2, 3],
            &budget(32_000.0),
        );
        assert_eq!(ranges(&c), [(0, 2), (2, 4)]);
        assert_eq!(c[1].excerpts, [(2, 23_000.0)]);
        let c = split(
            &[10_000.0, 65_000.0, 9_000.0, 9_000.0],
            &[0, 1, 2, 3],
            &budget(32_000.0),
        );
        assert_eq!(ranges(&c), [(0, 2), (2, 4)]);
        assert_eq!(c[0].excerpts, [(1, 22_000.0)]);
        let c = split(&[20_000.0, 65_000.0], &[0, 1], &budget(32_000.0));
        assert_eq!(ranges(&c), [(0, 1), (1, 2)]);
        assert_eq!(c[1].excerpts, [(1, 32_000.0)]);
        // One such message a call.
        let c = split(&[65_000.0, 40_000.0], &[0, 1], &budget(32_000.0));
        assert_eq!(ranges(&c), [(0, 1), (1, 2)]);
        assert_eq!(c[0].excerpts, [(0, 32_000.0)]);
        assert_eq!(c[1].excerpts, [(1, 32_000.0)]);
    }

    #[test]
    fn a_group_over_the_room_cuts_its_largest_messages_to_what_the_others_leave() {
        // A call of 100 tokens and two results of 5,000 and 3,000: the call stays whole,
        // the results share the rest.
        let c = split(&[100.0, 5000.0, 3000.0], &[7, 7, 7], &budget(2100.0));
        assert_eq!(ranges(&c), [(0, 3)]);
        assert_eq!(c[0].excerpts, [(1, 1000.0), (2, 1000.0)]);
        // One result small enough stays whole too.
        let c = split(&[100.0, 5000.0, 300.0], &[7, 7, 7], &budget(2100.0));
        assert_eq!(c[0].excerpts, [(1, 1700.0)]);
    }

    #[test]
    fn the_structure_is_asked_for_only_when_the_input_does_not_fit() {
        let mut t = Transcript::new(Format::OpenAi);
        t.push(MessageInfo::new(Role::User, 40.0));
        t.push(MessageInfo::new(Role::Assistant, 10.0));
        t.link(LinkKind::Call, 1);
        t.push(MessageInfo::new(Role::Tool, 60.0));
        t.link(LinkKind::Result, 1);
        t.push(MessageInfo::new(Role::Assistant, 40.0));
        let whole = chunks_of(
            &t,
            &[0, 1, 2, 3],
            || -> Structure { unreachable!() },
            &budget(150.0),
        );
        assert_eq!(ranges(&whole), [(0, 4)]);
        let c = chunks_of(&t, &[0, 1, 2, 3], || Structure::of(&t), &budget(100.0));
        assert_eq!(ranges(&c), [(0, 1), (1, 3), (3, 4)]);
    }
}
