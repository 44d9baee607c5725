//! Groups and rounds (SPEC §2): what is kept or removed together, and where each real
//! user input starts a round.

use crate::transcript::{flags, LinkKind, Transcript};

/// A run of messages that is kept or removed whole: a tool call with every message that
/// answers it (and whatever lies between them), or a single message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Group {
    /// First message index.
    pub start: u32,
    /// One past the last message index.
    pub end: u32,
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
}

impl Structure {
    /// Linear in messages and links.
    pub fn of(transcript: &Transcript) -> Structure {
        let messages = &transcript.messages;
        let n = messages.len();
        // reach[i]: the last message that must stay with message i (itself, the results of
        // its calls, the message after it when it attaches to it).
        let mut reach: Vec<u32> = (0..n as u32).collect();
        let mut linked = vec![false; n];
        let mut last_call: Vec<u32> = Vec::new();
        for link in &transcript.links {
            let m = link.message as usize;
            if m >= n {
                continue;
            }
            let key = link.key as usize;
            if key >= last_call.len() {
                last_call.resize(key + 1, u32::MAX);
            }
            linked[m] = true;
            match link.kind {
                LinkKind::Call => last_call[key] = link.message,
                LinkKind::Result => {
                    let call = last_call[key];
                    if call != u32::MAX && call < link.message {
                        let r = &mut reach[call as usize];
                        *r = (*r).max(link.message);
                    }
                }
            }
        }

        // One pass over the messages: groups, the group of each, and rounds.
        let mut groups = Vec::new();
        let mut group_of = Vec::with_capacity(n);
        let mut round_of = Vec::with_capacity(n);
        let mut round = 0;
        let mut start = 0;
        let mut end = 0;
        let (mut tokens, mut has_tool) = (0.0, false);
        for (j, m) in messages.iter().enumerate() {
            if m.is_real_user() {
                round += 1;
            }
            round_of.push(round);
            group_of.push(groups.len() as u32);
            end = end.max(reach[j] as usize);
            if m.flags & flags::ATTACH_NEXT != 0 && j + 1 < n {
                end = end.max(j + 1);
            }
            tokens += m.tokens;
            has_tool |= linked[j];
            if j == end {
                groups.push(Group {
                    start: start as u32,
                    end: (j + 1) as u32,
                    tokens,
                    has_tool,
                });
                start = j + 1;
                end = j + 1;
                tokens = 0.0;
                has_tool = false;
            }
        }

        Structure {
            groups,
            group_of,
            round_of,
        }
    }
}
