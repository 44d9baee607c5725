//! Which groups a reduction may never remove (SPEC §4, §9): system messages, earlier
//! summaries, the newest `keepLast` groups, the latest real user input and the current
//! turn after it — widened back to a real user input when `startOn` is `"user"`, so the
//! kept history can start on one.

use crate::config::{Config, StartOn};
use crate::structure::Structure;
use crate::transcript::Transcript;

/// Why a group must stay, for `analyze` and for the strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    None,
    System,
    Summary,
    KeepLast,
    LatestUserInput,
    /// Kept so that the history starts on a real user input before a protected group.
    StartOnUser,
    /// `priority`'s newest `keepRecentPairs` user/assistant pairs.
    RecentPair,
    /// After the latest real user input: the current turn's steps (SPEC §9.13). A
    /// reduction keeps them, or replaces its oldest tool steps with one note naming their
    /// calls ([`crate::strategies::trace_current_turn`]); never drops them.
    CurrentTurn,
}

impl Protection {
    /// Every protection, `None` first: the boundary names them by their place here.
    pub const ALL: [Protection; 8] = [
        Protection::None,
        Protection::System,
        Protection::Summary,
        Protection::KeepLast,
        Protection::LatestUserInput,
        Protection::StartOnUser,
        Protection::RecentPair,
        Protection::CurrentTurn,
    ];

    /// Its place in [`Protection::ALL`].
    pub fn code(self) -> u8 {
        Protection::ALL.iter().position(|&p| p == self).unwrap_or(0) as u8
    }

    pub fn is_protected(self) -> bool {
        self != Protection::None
    }

    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Protection::None => return None,
            Protection::System => "system",
            Protection::Summary => "summary",
            Protection::KeepLast => "keepLast",
            Protection::LatestUserInput => "latestUserInput",
            Protection::StartOnUser => "startOnUser",
            Protection::RecentPair => "keepRecentPairs",
            Protection::CurrentTurn => "currentTurn",
        })
    }
}

/// Whether a group is part of the conversation proper: it holds a message that is neither a
/// system message, nor a summary, nor an orphan ([`Structure::ORPHAN`], which goes).
pub fn is_conversation(t: &Transcript, s: &Structure, g: usize) -> bool {
    let (messages, orphan) = (t.messages.as_slice(), s.orphan.as_slice());
    s.groups.as_slice()[g].range().any(|i| {
        let m = &messages[i];
        !m.is_system() && !m.is_summary() && orphan[i] != Structure::ORPHAN
    })
}

/// Whether a group opens with a real user input.
pub fn starts_on_user(t: &Transcript, s: &Structure, g: usize) -> bool {
    t.messages.as_slice()[s.groups.as_slice()[g].start as usize].is_real_user()
}

/// Whether the kept history must open on a real user input: `startOn: "user"`, or a format
/// that demands it.
pub fn starts_on_user_required(t: &Transcript, config: &Config) -> bool {
    config.start_on == StartOn::User || t.format.requires_user_start()
}

/// The protection of every group.
/// The first of the newest `keep_last` conversation groups ([`is_conversation`]: system
/// messages and summaries among them do not count), or the number of groups for none.
pub fn keep_last_from(t: &Transcript, s: &Structure, keep_last: usize) -> usize {
    let mut left = keep_last;
    let mut first = s.groups.len();
    for g in (0..s.groups.len()).rev() {
        if left == 0 {
            break;
        }
        if is_conversation(t, s, g) {
            left -= 1;
            first = g;
        }
    }
    first
}

pub fn protect(t: &Transcript, s: &Structure, config: &Config) -> Vec<Protection> {
    let mut p = vec![Protection::None; s.groups.len()];
    // (A slice: at the inlining threshold of .cargo/config.toml a `Vec`'s indexing is a call.)
    let messages = t.messages.as_slice();
    for (group, p) in s.groups.iter().zip(p.iter_mut()) {
        let range = group.range();
        if config.keep_system && range.clone().any(|i| messages[i].is_system()) {
            *p = Protection::System;
        } else if range.clone().any(|i| messages[i].is_summary()) {
            *p = Protection::Summary;
        }
    }
    if let Some(i) = t.messages.iter().rposition(|m| m.is_real_user()) {
        let g = s.group_of[i] as usize;
        if !p[g].is_protected() {
            p[g] = Protection::LatestUserInput;
        }
    }
    let from = keep_last_from(t, s, config.keep_last);
    for (g, protection) in p.iter_mut().enumerate().skip(from) {
        if is_conversation(t, s, g) && !protection.is_protected() {
            *protection = Protection::KeepLast;
        }
    }
    if let Some(i) = t.messages.iter().rposition(|m| m.is_real_user()) {
        for (g, protection) in p.iter_mut().enumerate().skip(s.group_of[i] as usize + 1) {
            if is_conversation(t, s, g) && !protection.is_protected() {
                *protection = Protection::CurrentTurn;
            }
        }
    }
    if starts_on_user_required(t, config) {
        // The oldest protected conversation group must open on a user input; if it does
        // not, keep back to the nearest one before it.
        let first = p
            .iter()
            .enumerate()
            .position(|(g, p)| p.is_protected() && is_conversation(t, s, g));
        if let Some(first) = first {
            if !starts_on_user(t, s, first) {
                match (0..first)
                    .rev()
                    .find(|&g| is_conversation(t, s, g) && starts_on_user(t, s, g))
                {
                    Some(user) => {
                        for slot in &mut p[user..first] {
                            if !slot.is_protected() {
                                *slot = Protection::StartOnUser;
                            }
                        }
                    }
                    // No user input before it: `keepLast` yields to `startOn` up to the
                    // next user input (the latest user input itself always stays) — when
                    // there is one to start on; with none at all, `keepLast` holds.
                    None if t.messages.iter().any(|m| m.is_real_user()) => {
                        for (g, slot) in p.iter_mut().enumerate().skip(first) {
                            if starts_on_user(t, s, g) || *slot == Protection::LatestUserInput {
                                break;
                            }
                            if *slot == Protection::KeepLast {
                                *slot = Protection::None;
                            }
                        }
                    }
                    None => {}
                }
            }
        }
    }
    p
}
