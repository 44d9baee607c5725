//! `truncate`: remove the oldest removable groups until every set target is met.

use super::{choose_drops, drop_reduction, prefix_end, trace_current_turn, Reduction};
use crate::budget::Targets;
use crate::config::{Config, Strategy};
use crate::error::ReduceError;
use crate::protect::{protect, Protection};
use crate::structure::Structure;
use crate::transcript::Transcript;

/// `truncate` to `targets` (those of `config`, or none: only orphans go, and what `startOn`
/// then asks).
pub fn truncate(
    t: &Transcript,
    s: &Structure,
    protection: &[Protection],
    config: &Config,
    targets: &Targets,
) -> Result<Reduction, ReduceError> {
    let end = prefix_end(t, s, protection);
    let mut drops = choose_drops(t, s, protection, config, targets, 0..end);
    trace_current_turn(t, s, protection, targets, &mut drops);
    drop_reduction(t, s, drops, config, targets, "truncate")
}

/// Whether a reduction under `config` is a `truncate` that [`count_decisive`] can decide
/// without the counts of its oldest messages: a token trigger and no message target.
pub fn can_leave_oldest_uncounted(config: &Config) -> bool {
    config.strategy == Strategy::Truncate
        && config.max_tokens.is_some()
        && config.target_messages.is_none()
}

/// Counts what decides a `truncate` under `config` of a transcript whose messages are not
/// all counted (`known[i]`; an uncounted message stands at 0 tokens in `t`): the messages
/// of protected groups, then whole groups from the newest back until the protected and
/// newer groups alone exceed `maxTokens`. `count(indices, t)` puts the counts of messages
/// `indices` into `t` (one call per batch; batches are sized by the tokens still missing
/// at the average so far). Returns whether some messages stay uncounted, and the structure
/// of `t` as counted (the one [`Structure::of`] makes of it then: made once, for the
/// reduction too).
///
/// Why that decides the reduction: `truncate` removes unprotected groups oldest first while
/// the total is over the target (≤ `maxTokens`); with the counted groups alone over it,
/// every older unprotected group is removed whatever its count, and what follows depends
/// only on the counted ones. Protection does not depend on counts. So [`truncate`] of `t`
/// keeps the messages, `tokens_after` and `over_budget` of the fully counted transcript;
/// only `tokens_before` lacks the uncounted messages.
pub fn count_decisive(
    t: &mut Transcript,
    config: &Config,
    known: &mut [bool],
    mut count: impl FnMut(&[u32], &mut Transcript),
) -> (bool, Structure) {
    let max = config.max_tokens.unwrap_or(f64::INFINITY);
    let mut s = Structure::of(t);
    let p = protect(t, &s, config);
    // What stays whatever the counts: the protected groups, and every group after the
    // prefix a truncate may remove.
    let end = prefix_end(t, &s, &p);
    let mut stays = vec![false; s.groups.len()];
    for (g, (stay, p)) in stays.iter_mut().zip(&p).enumerate() {
        *stay = p.is_protected() || g >= end;
    }
    // (Slices, not `Vec`s, are indexed below: at the inlining threshold of
    // .cargo/config.toml a `Vec`'s indexing is a call.)
    let (groups, orphan, stays) = (s.groups.as_slice(), s.orphan.as_slice(), stays.as_slice());
    let mut fill = |indices: &[u32], t: &mut Transcript, known: &mut [bool]| {
        count(indices, t);
        for &i in indices {
            known[i as usize] = true;
        }
    };
    let unknown_in = |g: usize, known: &[bool], out: &mut Vec<u32>| {
        for i in groups[g].range() {
            if !known[i] {
                out.push(i as u32);
            }
        }
    };
    // (As `Structure::of` sums them: without the orphans that go whole.)
    let kept = |i: &usize| orphan[*i] != Structure::ORPHAN;
    let group_tokens = |g: usize, t: &Transcript| -> f64 {
        let messages = t.messages.as_slice();
        groups[g]
            .range()
            .filter(kept)
            .map(|i| messages[i].tokens)
            .sum()
    };

    // The protected groups, and those with orphans that go whole (the `orphans` event counts
    // them: the same whichever messages a call counted).
    let mut want = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        if stays[g] || group.range().any(|i| orphan[i] == Structure::ORPHAN) {
            unknown_in(g, known, &mut want);
        }
    }
    fill(&want, t, known);
    let mut counted: f64 = (0..groups.len())
        .filter(|&g| stays[g])
        .map(|g| group_tokens(g, t))
        .sum();
    let mut g = groups.len();
    // The first batch: a few newest groups' worth (a short history is not mostly estimated
    // before the average tells how far to go).
    let first = (groups.len() / 16).clamp(16, 64);
    let (mut batch, mut estimated, mut suffix) = (first, 0usize, 0.0);
    while counted <= max && g > 0 {
        want.clear();
        let newest = g;
        while g > 0 && want.len() < batch {
            g -= 1;
            if !stays[g] {
                unknown_in(g, known, &mut want);
            }
        }
        fill(&want, t, known);
        let added: f64 = (g..newest)
            .filter(|&g| !stays[g])
            .map(|g| group_tokens(g, t))
            .sum();
        counted += added;
        suffix += added;
        estimated += want.len();
        let per_message = suffix / estimated.max(1) as f64;
        let needed = if per_message > 0.0 {
            ((max - counted).max(0.0) / per_message * 1.1) as usize
        } else {
            batch * 2
        };
        batch = needed.clamp(16, 1 << 20);
    }
    // The groups' tokens as counted now (summed in message order, as `Structure::of` sums).
    let (messages, orphan) = (t.messages.as_slice(), s.orphan.as_slice());
    for group in &mut s.groups {
        group.tokens = group
            .range()
            .filter(|&i| orphan[i] != Structure::ORPHAN)
            .fold(0.0, |sum, i| sum + messages[i].tokens);
    }
    (known.iter().any(|&k| !k), s)
}
