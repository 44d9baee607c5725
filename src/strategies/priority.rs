//! `priority`: whole tool groups go first (oldest first), then the oldest other groups;
//! the newest `keepRecentPairs` user/assistant pairs stay.

use super::{choose_drops, drop_reduction, trace_current_turn, Reduction};
use crate::budget::Targets;
use crate::config::Config;
use crate::error::ReduceError;
use crate::protect::{starts_on_user, Protection};
use crate::structure::Structure;
use crate::transcript::{Role, Transcript};

pub fn priority(
    t: &Transcript,
    s: &Structure,
    protection: &[Protection],
    config: &Config,
) -> Result<Reduction, ReduceError> {
    let mut protection = protection.to_vec();
    protect_for_priority(t, s, &mut protection, config.keep_recent_pairs);
    let tools = (0..s.groups.len()).filter(|&g| s.groups[g].has_tool);
    let others = (0..s.groups.len()).filter(|&g| !s.groups[g].has_tool);
    let targets = Targets::of(config);
    let mut drops = choose_drops(t, s, &protection, config, &targets, tools.chain(others));
    trace_current_turn(t, s, &protection, &targets, &mut drops);
    drop_reduction(t, s, drops, config, &targets, "priority")
}

/// What `priority` protects, from what every strategy protects (`p`): the newest `pairs`
/// user/assistant pairs besides; and of the groups kept for `startOn` only, the user input
/// that the history starts on, not the groups between it and the protected one after it
/// (a `truncate` cuts a prefix only, but `priority` removes tool groups from the middle).
pub(crate) fn protect_for_priority(
    t: &Transcript,
    s: &Structure,
    p: &mut [Protection],
    pairs: usize,
) {
    for (g, slot) in p.iter_mut().enumerate() {
        if *slot == Protection::StartOnUser && !starts_on_user(t, s, g) {
            *slot = Protection::None;
        }
    }
    protect_recent_pairs(t, s, p, pairs);
}

/// Protects the newest `pairs` user inputs, each with the assistant's answer in its round
/// (the round's last assistant group without tool calls; a Responses reasoning item before
/// the answer is part of its group).
fn protect_recent_pairs(t: &Transcript, s: &Structure, p: &mut [Protection], pairs: usize) {
    let mut left = pairs;
    let mut answer: Option<usize> = None;
    for g in (0..s.groups.len()).rev() {
        if left == 0 {
            break;
        }
        let group = &s.groups[g];
        let first = &t.messages[group.start as usize];
        if first.is_real_user() {
            if !p[g].is_protected() {
                p[g] = Protection::RecentPair;
            }
            if let Some(a) = answer.take() {
                if !p[a].is_protected() {
                    p[a] = Protection::RecentPair;
                }
            }
            left -= 1;
        } else if answer.is_none()
            // (An AI SDK UIMessage answers its own tool calls: a group of one.)
            && (!group.has_tool || group.end - group.start == 1)
            && group.range().any(|i| t.messages[i].role == Role::Assistant)
        {
            answer = Some(g);
        }
    }
}
