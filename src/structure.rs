//! Groups and rounds (SPEC §2): what is kept or removed together, and where each real
//! user input starts a round.

use crate::transcript::{flags, Link, LinkKind, Role, Transcript};

/// A run of messages that is kept or removed whole: a tool call with every message that
/// answers it (and whatever lies between them), or a single message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Group {
    /// First message index.
    pub start: u32,
    /// One past the last message index.
    pub end: u32,
    /// Its messages' tokens but for the orphans that go whole ([`Structure::ORPHAN`]).
    pub tokens: f64,
    /// Whether the group holds tool calls or tool results.
    pub has_tool: bool,
}

impl Group {
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// The groups and rounds of a transcript.
#[derive(Clone, Debug, PartialEq)]
pub struct Structure {
    pub groups: Vec<Group>,
    /// The group of each message.
    pub group_of: Vec<u32>,
    /// The round of each message: 0 before the first real user input, then 1, 2, …
    pub round_of: Vec<u32>,
    /// Whether each message carries orphans (SPEC §9.4: tool results whose call is not
    /// before them, as an app that sliced its history leaves them, or calls that no result
    /// answers): [`Structure::ORPHAN`] for a message that carries nothing else,
    /// [`Structure::STRAY`] for one that carries more, else 0.
    pub orphan: Vec<u8>,
    /// How many messages carry orphans.
    pub orphans: usize,
    /// The orphan links, by their place in the transcript's links: each result whose call
    /// is not before it and each call no result answers before the latest step. The
    /// boundary hands them to JavaScript, which writes a stray message's copy without them.
    pub orphan_links: Vec<u32>,
    /// The first message with a pending call (one no result answers yet, after which no
    /// user input or assistant answer came: not an orphan, see [`Structure::ORPHAN`]), or
    /// `u32::MAX`. A message the history grows by may make it an orphan.
    pub pending: u32,
}

impl Structure {
    /// The messages of the group of message `i` (`ChatHistory.remove`): `i` alone for an
    /// index it does not have.
    pub fn group_range(&self, i: usize) -> std::ops::Range<usize> {
        self.group_of
            .get(i)
            .and_then(|&g| self.groups.get(g as usize))
            .map_or(i..i + 1, Group::range)
    }

    /// In [`Structure::orphan`]: a message that carries only orphans: a tool message whose
    /// results' call is not before it, or a message of calls alone ([`flags::CALLS_ONLY`])
    /// that no result answers and that a user input or an assistant answer follows (the
    /// calls of the latest turn may still be waiting for theirs), or the Responses
    /// `reasoning` item before such a call. Every reduction drops it, whatever keeps its
    /// group; it is in no run or summary, nothing is written for it, and it takes no
    /// `keepLast` place. It counts toward the triggers as the input has it, and for nothing
    /// toward the targets ([`Group::tokens`] leave it out: what is kept never holds it).
    pub const ORPHAN: u8 = 1;
    /// In [`Structure::orphan`]: a message that carries orphans beside other content (a user
    /// message with a stray `tool_result` block and text, an assistant's text with a call no
    /// result answers). A reduction that keeps it outputs a copy without them
    /// ([`Slot::Cleaned`]), and so is every copy written for it (a preview).
    ///
    /// [`Slot::Cleaned`]: crate::Slot::Cleaned
    pub const STRAY: u8 = 2;

    /// The tokens and `targetMessages` messages of `t` (of which this is the structure) that
    /// a reduction may keep: its messages as counted (without what [`Transcript::uncounted`]
    /// holds) but for the orphans that go whole.
    pub fn kept_at_most(&self, t: &Transcript) -> (f64, usize) {
        let (mut tokens, mut messages) = (0.0, 0);
        for (m, &mark) in t.messages.iter().zip(&self.orphan) {
            if mark != Structure::ORPHAN {
                tokens += m.tokens;
                messages += usize::from(crate::budget::counts_as_message(m));
            }
        }
        (tokens, messages)
    }

    /// Linear in messages and links.
    pub fn of(transcript: &Transcript) -> Structure {
        let mut s = Structure {
            groups: Vec::new(),
            group_of: Vec::with_capacity(transcript.len()),
            round_of: Vec::with_capacity(transcript.len()),
            orphan: Vec::with_capacity(transcript.len()),
            orphans: 0,
            orphan_links: Vec::new(),
            pending: u32::MAX,
        };
        s.build(transcript, 0, &transcript.links, 0);
        s
    }

    /// The number of messages it is the structure of.
    pub fn len(&self) -> usize {
        self.group_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.group_of.is_empty()
    }

    /// The structure of `t`, from this one, the structure of its first [`Structure::len`]
    /// messages (the same messages and links: a history that grew). Only the groups that
    /// the new messages join are made again: the new ones, and an old one whose call the
    /// new messages answer or that had a pending call (with every group after it). `None` when that is not cheaper
    /// than [`Structure::of`]: more new messages than old, results whose calls take more
    /// than a few thousand links in all to find, or keys too sparse to index.
    pub fn extend(&self, t: &Transcript) -> Option<Structure> {
        let old = self.len();
        let n = t.len();
        if old == 0 || old > n || n - old > old {
            return None;
        }
        let first_new = t.links.partition_point(|l| (l.message as usize) < old);
        let (old_links, new_links) = t.links.split_at(first_new);
        // The first old group that a new message joins.
        let mut from = self.groups.len();
        if n > old && joins_next(t, old - 1) {
            from = self.group_of[old - 1] as usize;
        }
        if let Some(&g) = self.group_of.get(self.pending as usize) {
            from = from.min(g as usize);
        }
        let mut budget = SCAN_BUDGET;
        for (k, result) in new_links.iter().enumerate() {
            if result.kind != LinkKind::Result {
                continue;
            }
            // Its call: the latest link before it that calls its key (as `of` finds it).
            let mut call = None;
            for link in new_links[..k].iter().rev().chain(old_links.iter().rev()) {
                budget = budget.checked_sub(1)?;
                if link.kind == LinkKind::Call && link.key == result.key {
                    call = Some(link.message as usize);
                    break;
                }
            }
            if let Some(c) = call.filter(|&c| c < old) {
                from = from.min(self.group_of[c] as usize);
            }
        }
        let start = self.groups.get(from).map_or(old, |g| g.start as usize);
        let mut s = Structure {
            groups: self.groups[..from].to_vec(),
            group_of: Vec::with_capacity(n),
            round_of: Vec::with_capacity(n),
            orphan: self.orphan[..start].to_vec(),
            orphans: self.orphan[..start].iter().filter(|&&m| m != 0).count(),
            orphan_links: Vec::new(),
            pending: u32::MAX,
        };
        s.group_of.extend_from_slice(&self.group_of[..start]);
        s.round_of.extend_from_slice(&self.round_of[..start]);
        // No link before `start` reaches past it: it starts a group, and no new result
        // answers a call before it.
        let first_link = t.links.partition_point(|l| (l.message as usize) < start);
        let links = &t.links[first_link..];
        for &k in &self.orphan_links {
            if (k as usize) < first_link {
                s.orphan_links.push(k);
            }
        }
        let round = start.checked_sub(1).map_or(0, |i| self.round_of[i]);
        s.build(t, start, links, round)?;
        Some(s)
    }

    /// Appends the groups, rounds and orphans of messages `start..` of `t`, whose links are
    /// `links` (a result among them whose call is not is an orphan); `round`: the round
    /// before `start`. `None` when the links' keys are too sparse to index (only from `extend`:
    /// from 0 every key is indexed).
    fn build(
        &mut self,
        t: &Transcript,
        start: usize,
        links: &[Link],
        mut round: u32,
    ) -> Option<()> {
        // (Slices, not `Vec`s, are indexed in this loop and those below: at the inlining
        // threshold of .cargo/config.toml a `Vec`'s indexing is a call.)
        let messages = t.messages.as_slice();
        let n = messages.len();
        // (`links` runs to the end of the transcript's: where it starts in them.)
        let offset = (t.links.len() - links.len()) as u32;
        let orphan_links_before = self.orphan_links.len();
        // Keys index `last_call` from the lowest one of the links (from 0 for all of them).
        let low = if start == 0 {
            0
        } else {
            let (low, high) = links
                .iter()
                .fold((u32::MAX, 0), |(lo, hi), l| (lo.min(l.key), hi.max(l.key)));
            if high >= low && (high - low) as usize > 4 * links.len() + 1024 {
                return None;
            }
            low.min(high)
        };
        // reach[i - start]: the last message that must stay with message i (itself, the
        // results of its calls, the message after it when it attaches to it).
        let mut reach = vec![0u32; n - start];
        let reach = reach.as_mut_slice();
        for (k, r) in reach.iter_mut().enumerate() {
            *r = (start + k) as u32;
        }
        let mut linked = vec![false; n - start];
        let linked = linked.as_mut_slice();
        // Until the pass over the messages, orphan[i]: whether message i has a result whose
        // call is not before it (ORPHANED), a call no result answers (DANGLING), a link that
        // is neither (LINKED), or several.
        const LINKED: u8 = 4;
        const ORPHANED: u8 = 8;
        const DANGLING: u8 = 16;
        self.orphan.resize(n, 0);
        let orphan = self.orphan.as_mut_slice();
        // The latest call of each key, as its place in `links`; whether each call is answered.
        let mut last_call: Vec<u32> = Vec::new();
        let mut answered = vec![false; links.len()];
        let answered = answered.as_mut_slice();
        for (at, link) in links.iter().enumerate() {
            let m = link.message as usize;
            if m >= n || m < start {
                continue;
            }
            let key = (link.key - low) as usize;
            if key >= last_call.len() {
                last_call.resize(key + 1, u32::MAX);
            }
            linked[m - start] = true;
            match link.kind {
                // (Marked below, once it is known whether a result answers it.)
                LinkKind::Call => last_call.as_mut_slice()[key] = at as u32,
                LinkKind::Result => {
                    let call = last_call.as_slice()[key] as usize;
                    let mark = if let Some(c) = links.get(call) {
                        answered[call] = true;
                        let r = &mut reach[c.message as usize - start];
                        *r = (*r).max(link.message);
                        LINKED
                    } else {
                        self.orphan_links.push(offset + at as u32);
                        ORPHANED
                    };
                    orphan[m] |= mark;
                }
            }
        }
        // A call no result answers is pending in the latest step (the last user input or
        // assistant message; in Responses, the items of the model's last answer: the run of
        // assistant items it ends); before it, an orphan.
        let mut last_turn = messages
            .iter()
            .rposition(|m| matches!(m.role, Role::User | Role::Assistant))
            .unwrap_or(0);
        while last_turn > 0
            && t.format.answers_in_items()
            && messages[last_turn].role == Role::Assistant
            && matches!(messages[last_turn - 1].role, Role::Assistant | Role::Other)
        {
            last_turn -= 1;
        }
        let calls_from = self.orphan_links.len();
        for (at, (link, &answered)) in links.iter().zip(answered.iter()).enumerate() {
            let m = link.message as usize;
            if link.kind == LinkKind::Result || m >= n || m < start {
                continue;
            }
            orphan[m] |= if answered {
                LINKED
            } else if m < last_turn {
                self.orphan_links.push(offset + at as u32);
                DANGLING
            } else {
                self.pending = self.pending.min(link.message);
                LINKED
            };
        }
        // What each message's marks make it, from the last: a message with only orphans (a
        // tool message, a message of calls alone) goes whole, any other keeps the rest; a
        // reasoning item goes when every call item after it goes. (`calls_go`: the messages
        // of calls alone from j + 1 on, up to the next other one or the group's end, all go;
        // there is one.)
        // In link order: the orphan results and the dangling calls, each in order, merged.
        if calls_from > orphan_links_before && calls_from < self.orphan_links.len() {
            let calls = self.orphan_links.split_off(calls_from);
            let results = self.orphan_links.split_off(orphan_links_before);
            let (mut r, mut c) = (results.iter().peekable(), calls.iter().peekable());
            while let Some(&next) = match (r.peek(), c.peek()) {
                (Some(a), Some(b)) if a < b => r.next(),
                (Some(_), Some(_)) | (None, Some(_)) => c.next(),
                (Some(_), None) => r.next(),
                (None, None) => None,
            } {
                self.orphan_links.push(next);
            }
        }
        let mut calls_go = false;
        for j in (start..n).rev() {
            let m = &messages[j];
            let bits = orphan[j];
            let mark = if bits & (ORPHANED | DANGLING) == 0 {
                if m.flags & flags::ATTACH_NEXT != 0 && calls_go {
                    Structure::ORPHAN
                } else {
                    0
                }
            } else if bits & LINKED == 0
                && (bits & ORPHANED == 0 || m.role == Role::Tool)
                && (bits & DANGLING == 0 || m.flags & flags::CALLS_ONLY != 0)
            {
                Structure::ORPHAN
            } else {
                Structure::STRAY
            };
            orphan[j] = mark;
            // (Through the messages of one group only: `extend` makes a group again whole.)
            calls_go = m.flags & flags::CALLS_ONLY != 0
                && mark == Structure::ORPHAN
                && (calls_go || !joins_next(t, j));
        }

        // One pass over the messages: groups, the group of each, and rounds.
        let mut first = start;
        let mut end = start;
        let (mut tokens, mut has_tool) = (0.0, false);
        self.round_of.resize(n, 0);
        self.group_of.resize(n, 0);
        let (round_of, group_of) = (self.round_of.as_mut_slice(), self.group_of.as_mut_slice());
        for (j, m) in messages.iter().enumerate().skip(start) {
            if m.is_real_user() {
                round += 1;
            }
            round_of[j] = round;
            group_of[j] = self.groups.len() as u32;
            end = end.max(reach[j - start] as usize);
            if j + 1 < n && joins_next(t, j) {
                end = end.max(j + 1);
            }
            self.orphans += usize::from(orphan[j] != 0);
            // (An orphan that goes whole counts for nothing: see `Structure::ORPHAN`.)
            if orphan[j] != Structure::ORPHAN {
                tokens += m.tokens;
            }
            has_tool |= linked[j - start];
            if j == end {
                self.groups.push(Group {
                    start: first as u32,
                    end: (j + 1) as u32,
                    tokens,
                    has_tool,
                });
                first = j + 1;
                end = j + 1;
                tokens = 0.0;
                has_tool = false;
            }
        }
        Some(())
    }
}

/// Whether message `j` of `t` is in the group of the message after it: a Responses
/// `reasoning` item ([`flags::ATTACH_NEXT`]), and a Responses call item before another
/// (the parallel calls of one answer stay together, with their reasoning, when some get no
/// result).
fn joins_next(t: &Transcript, j: usize) -> bool {
    let calls = |m: &crate::transcript::MessageInfo| m.flags & flags::CALLS_ONLY != 0;
    let messages = t.messages.as_slice();
    messages[j].flags & flags::ATTACH_NEXT != 0
        || t.format.parallel_calls_are_items()
            && calls(&messages[j])
            && messages.get(j + 1).is_some_and(calls)
}

/// How many links [`Structure::extend`] looks through for the calls of new results before
/// it leaves the work to [`Structure::of`].
const SCAN_BUDGET: usize = 4096;
