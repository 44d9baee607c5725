//! What the last calls computed, for a call on the same, unchanged messages. `reader.js`
//! hands such a call the reading of the call before (the same `version`), so its transcript
//! is the same, and so is its reduction under the same config (SPEC §9, determinism): a
//! chat that reduces an unchanged history again (every render, `shouldReduce` then
//! `reduce`) pays for reading and checking its messages, not for the core again.
//! Counts given per call (`tokenCounts`) are never memoised. As many readings as
//! `reader.js` keeps (several conversations, or calls with other options, may alternate).

use std::cell::RefCell;
use std::rc::Rc;

use crate::config::Config;
use crate::strategies::Reduction;
use crate::transcript::Transcript;

/// Readings of a few conversations (or of one, under other options).
const KEEP: usize = 6;
/// At most this many messages in all (wasm memory does not shrink once grown).
const KEEP_MESSAGES: usize = 120_000;

struct Memo {
    version: f64,
    /// What the transcript depends on besides the reading: the calibration applied.
    calibration: u64,
    transcript: Transcript,
    reduction: Option<(Config, Rc<Reduction>)>,
}

thread_local! {
    /// Most recent first.
    static MEMOS: RefCell<Vec<Memo>> = const { RefCell::new(Vec::new()) };
}

/// The transcript of reading `version` under `calibration`, if it was kept.
pub fn transcript(version: f64, calibration: f64) -> Option<Transcript> {
    MEMOS.with_borrow(|memos| {
        memos
            .iter()
            .find(|m| m.version == version && m.calibration == calibration.to_bits())
            .map(|m| m.transcript.clone())
    })
}

/// Keeps `t`, the transcript of reading `version` under `calibration`.
pub fn keep_transcript(version: f64, calibration: f64, t: &Transcript) {
    MEMOS.with_borrow_mut(|memos| {
        memos.retain(|m| m.version != version);
        memos.insert(
            0,
            Memo {
                version,
                calibration: calibration.to_bits(),
                transcript: t.clone(),
                reduction: None,
            },
        );
        memos.truncate(KEEP);
        let mut total = 0;
        memos.retain(|m| {
            total += m.transcript.len();
            total <= KEEP_MESSAGES
        });
    })
}

/// The reduction of reading `version` under `config`, if it was kept.
pub fn reduction(version: f64, config: &Config) -> Option<Rc<Reduction>> {
    MEMOS.with_borrow(|memos| {
        let (c, r) = memos
            .iter()
            .find(|m| m.version == version)?
            .reduction
            .as_ref()?;
        (c == config).then(|| Rc::clone(r))
    })
}

/// Keeps `r`, the reduction of reading `version` under `config`.
pub fn keep_reduction(version: f64, config: &Config, r: &Rc<Reduction>) {
    MEMOS.with_borrow_mut(|memos| {
        if let Some(m) = memos.iter_mut().find(|m| m.version == version) {
            m.reduction = Some((config.clone(), Rc::clone(r)));
        }
    })
}
