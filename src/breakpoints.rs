//! `cacheBreakpoints` (SPEC §4): which messages of a reduction's output carry a provider
//! cache breakpoint (Anthropic's `cache_control`). Anthropic caches a prompt's prefix only
//! up to a breakpoint, and finds an earlier request's entry only at a block no more than
//! about 20 blocks before one of its own. Two breakpoints serve a history that stays
//! reduced: one at the end of the stable prefix (the system messages and summaries that
//! open it, the same bytes from one reduction to the next) and one on the newest message,
//! which the next call finds a few blocks behind its own newest.
//!
//! The decision is made here, on what the boundary reports of each output message; the
//! boundary writes the marked copies.

use crate::transcript::MessageInfo;

/// The most breakpoints one Anthropic request may carry (its tools and system included).
pub const MAX_BREAKPOINTS: u32 = 4;

/// What the placement knows of one output message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spot {
    /// A system message or a summary: part of the stable prefix while it opens the output.
    pub stable: bool,
    /// Breakpoints the caller already placed on it.
    pub marks: u8,
    /// Whether one can go on it: it has a block that takes one (not reasoning, not an empty
    /// text, not a tool result nested where the provider refuses it).
    pub markable: bool,
}

/// Whether a message belongs to the stable prefix when it opens the output.
pub fn is_stable(m: &MessageInfo) -> bool {
    m.is_system() || m.is_summary()
}

/// The output positions that get a breakpoint, ascending: the newest markable message,
/// then the last markable one of the stable prefix (the run of stable messages that opens
/// the output), as far as the caller's own marks leave room under [`MAX_BREAKPOINTS`]. A
/// message the caller marked keeps its mark and takes no second one.
pub fn place(spots: &[Spot]) -> Vec<u32> {
    let caller: u32 = spots.iter().map(|s| u32::from(s.marks)).sum();
    let mut left = MAX_BREAKPOINTS.saturating_sub(caller);
    let stable_len = spots.iter().take_while(|s| s.stable).count();
    let newest = spots.iter().rposition(|s| s.markable);
    let stable = spots[..stable_len].iter().rposition(|s| s.markable);
    let mut at: Vec<u32> = Vec::with_capacity(2);
    for p in [newest, stable].into_iter().flatten() {
        if left == 0 {
            break;
        }
        if spots[p].marks > 0 || at.contains(&(p as u32)) {
            continue;
        }
        left -= 1;
        at.push(p as u32);
    }
    // (Two at most: no sort, whose code the module would carry for this alone.)
    if at.len() == 2 && at[0] > at[1] {
        at.swap(0, 1);
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spots from a pattern: `S` stable, `m` plain, `x` not markable, `!` marked already,
    /// `$` stable and marked already.
    fn spots(pattern: &str) -> Vec<Spot> {
        pattern
            .chars()
            .map(|c| Spot {
                stable: matches!(c, 'S' | '$'),
                marks: u8::from(matches!(c, '!' | '$')),
                markable: c != 'x',
            })
            .collect()
    }

    #[test]
    fn the_end_of_the_stable_prefix_and_the_newest_message() {
        assert_eq!(place(&spots("SSmmm")), vec![1, 4]);
        // A summary after the system message is part of the prefix; a system message after
        // the conversation started is not.
        assert_eq!(place(&spots("SSmSm")), vec![1, 4]);
        // No stable prefix: the newest only.
        assert_eq!(place(&spots("mmm")), vec![2]);
        // All stable: one mark.
        assert_eq!(place(&spots("SS")), vec![1]);
        assert_eq!(place(&[]), Vec::<u32>::new());
    }

    #[test]
    fn a_message_that_takes_no_mark_passes_it_on_to_the_one_before() {
        assert_eq!(place(&spots("Smmx")), vec![0, 2]);
        assert_eq!(place(&spots("Sxmm")), vec![0, 3]);
        assert_eq!(place(&spots("xmm")), vec![2]);
        assert_eq!(place(&spots("xx")), Vec::<u32>::new());
    }

    #[test]
    fn the_callers_marks_count_toward_four_and_are_not_doubled() {
        // Three of the caller's: room for the newest only.
        assert_eq!(place(&spots("S!!!mm")), vec![5]);
        assert_eq!(place(&spots("S!!!!m")), Vec::<u32>::new());
        // The caller marked the newest or the prefix already: no second mark there.
        assert_eq!(place(&spots("Smm!")), vec![0]);
        assert_eq!(place(&spots("$mm")), vec![2]);
        // Never more than four in all.
        for pattern in ["S!m!m!m", "$!!m", "!!!!!", "SSSS"] {
            let s = spots(pattern);
            let caller: u32 = s.iter().map(|s| u32::from(s.marks)).sum();
            assert!(place(&s).len() as u32 + caller <= MAX_BREAKPOINTS.max(caller));
        }
    }

    #[test]
    fn the_same_prefix_gets_the_same_mark_as_the_history_grows() {
        // A history that grows by a message keeps its prefix's mark where it was: the
        // prompt up to it is the same bytes from one call to the next.
        let mut pattern = String::from("SS");
        let mut previous = None;
        for _ in 0..6 {
            pattern.push('m');
            let at = place(&spots(&pattern));
            assert_eq!(at[0], 1);
            assert_eq!(*at.last().unwrap() as usize, pattern.len() - 1);
            if let Some(p) = previous {
                assert_eq!(p, at[0]);
            }
            previous = Some(at[0]);
        }
    }
}
