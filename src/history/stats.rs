//! What a history's reductions did, for `stats()`.

/// The running totals (kept in the state).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub reductions: u32,
    pub summarizer_calls: u32,
    pub tokens_saved: f64,
    /// `rewind`, `remove` and `clear` calls.
    pub edits: u32,
    /// Working messages (summaries, previews, …) an edit undid, their originals back.
    pub undone: u32,
}

/// `stats()`'s answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StatsView {
    pub reductions: u32,
    pub summarizer_calls: u32,
    pub tokens_saved: f64,
    /// The tokens of `original` over those of the working history (1 when it is empty).
    pub compression_ratio: f64,
    /// Whether the last `prepare()` missed a target because of protected messages.
    pub over_budget: bool,
    pub edits: u32,
    pub undone: u32,
}

impl Stats {
    /// Counts one reduction that went from `before` to `after` tokens (the summarizer's
    /// calls are counted as they are made, whether or not a reduction comes of them).
    /// Saved are whole tokens: each total rounded up, as a message's estimate is (counts an
    /// app gives may have fractions).
    pub fn record(&mut self, before: f64, after: f64) {
        self.reductions = self.reductions.saturating_add(1);
        self.tokens_saved += (before.ceil() - after.ceil()).max(0.0);
    }

    /// The view of these totals for a working history of `working` tokens, whose `original`
    /// is counted only when the ratio needs it.
    pub fn view<E>(
        &self,
        working: f64,
        original: impl FnOnce() -> Result<f64, E>,
        over_budget: bool,
    ) -> Result<StatsView, E> {
        let compression_ratio = if working > 0.0 {
            original()? / working
        } else {
            1.0
        };
        Ok(StatsView {
            reductions: self.reductions,
            summarizer_calls: self.summarizer_calls,
            tokens_saved: self.tokens_saved,
            compression_ratio,
            over_budget,
            edits: self.edits,
            undone: self.undone,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_accumulate() {
        let mut s = Stats::default();
        s.record(1000.0, 400.0);
        s.record(900.0, 500.0);
        // Fractional counts: whole tokens saved, each total rounded up.
        s.record(10.25, 4.5);
        assert_eq!(
            s,
            Stats {
                reductions: 3,
                summarizer_calls: 0,
                tokens_saved: 1006.0,
                ..Stats::default()
            }
        );
    }

    #[test]
    fn the_ratio_counts_original_only_when_there_is_a_working_history() {
        let s = Stats::default();
        let view = s.view(0.0, || Err::<f64, ()>(()), true).unwrap();
        assert_eq!((view.compression_ratio, view.over_budget), (1.0, true));
        let view = s.view(50.0, || Ok::<f64, ()>(200.0), false).unwrap();
        assert_eq!(view.compression_ratio, 4.0);
        assert_eq!(
            s.view(50.0, || Err::<f64, &str>("counted"), false),
            Err("counted")
        );
    }
}
