//! A summary read back from `summaryCache` (SPEC §7): a stateless `reduce` reuses what an
//! earlier request's reduction wrote, as `ChatHistory` keeps its summary between reductions.
//!
//! The boundary finds the summary by the content of the messages it covers and hands the
//! core the history as `ChatHistory` would hold it: those messages replaced by the summary.
//! What is decided here: what a reduction of that history is for the input itself
//! ([`with_cached`]), and which messages a new summary covers, to be stored ([`span`]).

use super::{Fate, Reduction, Slot};

/// The cached summary stands at `at` for the input's messages `at..at + covered`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cached {
    pub at: u32,
    pub covered: u32,
}

impl Cached {
    /// The input index of index `j` of the history with the summary in place.
    fn input(&self, j: u32) -> u32 {
        if j > self.at {
            j + self.covered - 1
        } else {
            j
        }
    }
}

/// `r`, a reduction of the history with the cached summary at `cached.at`, as a reduction
/// of the input: the covered messages are summarized (dropped, if the summary was), the
/// summary where it stays is `Slot::New(written)` (the boundary writes it there: it is no
/// input message), and the later indices move back. `tokens_before` is the input's.
pub fn with_cached(r: Reduction, cached: Cached, written: u32, tokens_before: f64) -> Reduction {
    let at = cached.at as usize;
    let covered = match r.fate.get(at) {
        Some(Fate::Dropped) => Fate::Dropped,
        _ => Fate::Summarized,
    };
    let mut fate = Vec::with_capacity(r.fate.len() + cached.covered as usize);
    fate.extend_from_slice(&r.fate[..at.min(r.fate.len())]);
    fate.extend(std::iter::repeat_n(covered, cached.covered as usize));
    fate.extend_from_slice(r.fate.get(at + 1..).unwrap_or(&[]));
    let mut output = r.output;
    for slot in &mut output {
        *slot = match *slot {
            Slot::Input(j) if j == cached.at => Slot::New(written),
            Slot::Cleaned(j) if j == cached.at => Slot::New(written),
            Slot::Input(j) => Slot::Input(cached.input(j)),
            Slot::Cleaned(j) => Slot::Cleaned(cached.input(j)),
            new => new,
        };
    }
    let trace = r.trace.map(|mut trace| {
        for i in &mut trace.messages {
            *i = cached.input(*i);
        }
        trace
    });
    Reduction {
        reduced: true,
        fate,
        output,
        tokens_before,
        trace,
        ..r
    }
}

/// The input messages a new summary of `r` covers, `start..end`, when they are what a
/// later request can find again by content: every message after the `leading` system
/// messages up to `end` summarized (an orphan among them dropped), the leading ones kept,
/// none after `end` summarized or dropped. `None` for any other shape (a system message
/// kept between summarized ones, a truncation beside the summary): nothing is stored.
pub fn span(r: &Reduction, leading: u32) -> Option<(u32, u32)> {
    let leading = leading as usize;
    if r.fate.get(..leading)?.iter().any(|f| *f != Fate::Kept) {
        return None;
    }
    let end = leading
        + r.fate[leading..]
            .iter()
            .take_while(|f| matches!(f, Fate::Summarized | Fate::Dropped))
            .count();
    let covers = r.fate[leading..end].contains(&Fate::Summarized);
    let rest = r.fate[end..]
        .iter()
        .all(|f| matches!(f, Fate::Kept | Fate::Rewritten));
    (covers && rest && end < r.fate.len()).then_some((leading as u32, end as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reduction(fate: Vec<Fate>, output: Vec<Slot>) -> Reduction {
        Reduction {
            reduced: true,
            fate,
            output,
            tokens_before: 50.0,
            tokens_after: 40.0,
            over_budget: false,
            events: Vec::new(),
            trace: None,
        }
    }

    #[test]
    fn a_kept_cached_summary_covers_its_messages_and_becomes_a_written_one() {
        use Fate::*;
        // [system, summary, a, b] standing for [system, x, y, z, a, b].
        let r = reduction(
            vec![Kept; 4],
            vec![
                Slot::Input(0),
                Slot::Input(1),
                Slot::Input(2),
                Slot::Input(3),
            ],
        );
        let r = with_cached(r, Cached { at: 1, covered: 3 }, 0, 90.0);
        assert_eq!(
            r.fate,
            vec![Kept, Summarized, Summarized, Summarized, Kept, Kept]
        );
        assert_eq!(
            r.output,
            vec![Slot::Input(0), Slot::New(0), Slot::Input(4), Slot::Input(5)]
        );
        assert!(r.reduced);
        assert_eq!(r.tokens_before, 90.0);
    }

    #[test]
    fn a_folded_cached_summary_leaves_its_messages_summarized() {
        use Fate::*;
        // Single mode: the cached summary and `a` went into a new summary (New(0)).
        let r = reduction(
            vec![Kept, Summarized, Summarized, Kept],
            vec![Slot::Input(0), Slot::New(0), Slot::Input(3)],
        );
        let r = with_cached(r, Cached { at: 1, covered: 2 }, 1, 90.0);
        assert_eq!(r.fate, vec![Kept, Summarized, Summarized, Summarized, Kept]);
        assert_eq!(r.output, vec![Slot::Input(0), Slot::New(0), Slot::Input(4)]);
        assert_eq!(span(&r, 1), Some((1, 4)));
    }

    #[test]
    fn only_a_prefix_summary_beside_kept_messages_is_a_span() {
        use Fate::*;
        let r = |fate| reduction(fate, Vec::new());
        assert_eq!(
            span(&r(vec![Kept, Summarized, Dropped, Kept]), 1),
            Some((1, 3))
        );
        assert_eq!(
            span(&r(vec![Summarized, Summarized, Kept]), 0),
            Some((0, 2))
        );
        // A system message kept between summarized ones; a truncation after the summary;
        // nothing left after it; nothing summarized.
        assert_eq!(span(&r(vec![Summarized, Kept, Summarized, Kept]), 0), None);
        assert_eq!(
            span(&r(vec![Kept, Summarized, Kept, Dropped, Kept]), 1),
            None
        );
        assert_eq!(span(&r(vec![Kept, Summarized]), 1), None);
        assert_eq!(span(&r(vec![Kept, Dropped, Kept]), 1), None);
        assert_eq!(span(&r(vec![Summarized, Kept]), 1), None);
    }
}
