//! What the last calls computed, kept by reading `version`. `js/reuse.js` hands a call on the
//! same, unchanged messages the reading of the call before (the same `version`), so its
//! transcript is the same, and so is its reduction under the same config (SPEC §9,
//! determinism): a chat that reduces an unchanged history again (every render,
//! `shouldReduce` then `reduce`) pays for reading and checking its messages, not for the
//! core again. A history that grew goes on from the reading before it (`Reading.base`): its
//! transcript copies that reading's for the messages they share, and its structure extends
//! that reading's ([`Structure::extend`]). Counts given per call (`tokenCounts`) are never
//! memoised. As many readings as `js/reuse.js` keeps (several conversations, or calls with
//! other options, may alternate).

use std::cell::RefCell;
use std::rc::Rc;

use super::encode::Indices;
use crate::config::Config;
use crate::strategies::Reduction;
use crate::structure::Structure;
use crate::transcript::Transcript;

/// Readings of a few conversations (or of one, under other options).
const KEEP: usize = 6;
/// At most this many messages in all, and a base a history that grew goes on from (wasm
/// memory does not shrink once grown).
const KEEP_MESSAGES: usize = 120_000;

struct Memo {
    version: f64,
    /// What the transcript depends on besides the reading: the calibration applied.
    calibration: u64,
    transcript: Rc<Transcript>,
    /// Its groups and rounds, once a reduction needed them.
    structure: Option<Rc<Structure>>,
    reduction: Option<(Config, Rc<(Reduction, Indices)>)>,
    /// Whether a call used it again (only those outlive a burst of one-off calls).
    used: bool,
    /// A base: the reading another went on from, which no call gets again (see
    /// [`keep_transcript`]).
    superseded: bool,
}

/// Most recently used first.
static MEMOS: super::Local<RefCell<Vec<Memo>>> = super::Local(RefCell::new(Vec::new()));

/// The transcript of reading `version` under `calibration`, if it was kept (it becomes the
/// most recently used: a conversation reduced again and again outlives one-off calls).
pub fn transcript(version: f64, calibration: f64) -> Option<Rc<Transcript>> {
    MEMOS.with_borrow_mut(|memos| {
        let k = memos
            .iter()
            .position(|m| m.version == version && m.calibration == calibration.to_bits())?;
        let mut m = memos.remove(k);
        m.used = true;
        memos.insert(0, m);
        Some(Rc::clone(&memos[0].transcript))
    })
}

/// The transcript of reading `base` under `calibration`, if it was kept, for a reading that
/// goes on from it (left where it is: see [`keep_transcript`]).
pub fn base_transcript(base: f64, calibration: f64) -> Option<Rc<Transcript>> {
    MEMOS.with_borrow(|memos| {
        memos
            .iter()
            .find(|m| m.version == base && m.calibration == calibration.to_bits())
            .map(|m| Rc::clone(&m.transcript))
    })
}

/// Keeps `t`, the transcript of reading `version` under `calibration`. `base`: the reading
/// it goes on from (a history that grew), which no call gets again (`js/reuse.js` keeps the
/// new reading in its place): its entry only serves [`structure`] now.
pub fn keep_transcript(version: f64, base: f64, calibration: f64, t: &Rc<Transcript>) {
    MEMOS.with_borrow_mut(|memos| {
        // The bases of earlier calls go: what a base is kept for, the reduction of the call
        // that went on from it, is over (or was one that extends no structure: a summary).
        memos.retain(|m| m.version != version && !m.superseded);
        // This call's base goes last of all but the new one, and first of those used again:
        // it is kept until the reduction that comes next extends its structure (measured:
        // with the entries full of one-off readings, letting it go first made every turn of
        // a growing 10,000-message history build its structure anew, a fifth of the turn).
        if let Some(k) = memos.iter().position(|m| m.version == base) {
            let mut superseded = memos.remove(k);
            superseded.used = true;
            superseded.superseded = true;
            memos.push(superseded);
        }
        memos.insert(
            0,
            Memo {
                version,
                calibration: calibration.to_bits(),
                transcript: Rc::clone(t),
                structure: None,
                reduction: None,
                used: false,
                superseded: false,
            },
        );
        // Over the limits: the least recently used of those never used again goes first
        // (new message objects every call, a one-off reduction), then the least recently
        // used; the new one last.
        // (Not the base just superseded, in the count or as a victim: the next call extends
        // its structure and lets it go. Counted, a history over half the message limit, or
        // beside five other readings, built its structure anew every turn.)
        loop {
            let (count, total) = memos
                .iter()
                .filter(|m| !m.superseded)
                .fold((0, 0), |(c, n), m| (c + 1, n + m.transcript.len()));
            if count <= KEEP && total <= KEEP_MESSAGES {
                break;
            }
            let other = |m: &Memo| !m.superseded;
            let victim = match memos.iter().rposition(|m| other(m) && !m.used) {
                Some(k) if k > 0 => k,
                _ => match memos.iter().rposition(other) {
                    Some(k) if k > 0 => k,
                    _ => 0,
                },
            };
            memos.remove(victim);
        }
    })
}

/// Whether `m` was kept for transcript `t` itself. What is kept with a transcript (its
/// structure, a reduction) serves that transcript only: a call may decode the same reading
/// into another one (a transcript left partly unestimated is never kept, and a call that
/// awaited may find an entry another call made since).
fn kept_for(m: &Memo, t: &Transcript) -> bool {
    std::ptr::eq(Rc::as_ptr(&m.transcript), t)
}

/// The reduction of `t`, the transcript of reading `version`, under `config` (with its
/// indices), if it was kept.
pub fn reduction(
    version: f64,
    config: &Config,
    t: &Transcript,
) -> Option<Rc<(Reduction, Indices)>> {
    MEMOS.with_borrow(|memos| {
        let (c, r) = memos
            .iter()
            .find(|m| m.version == version && kept_for(m, t))?
            .reduction
            .as_ref()?;
        (c == config).then(|| Rc::clone(r))
    })
}

/// Keeps `r`, the reduction of `t`, the transcript of reading `version`, under `config`
/// (with its indices).
pub fn keep_reduction(version: f64, config: &Config, t: &Transcript, r: &Rc<(Reduction, Indices)>) {
    MEMOS.with_borrow_mut(|memos| {
        if let Some(m) = memos
            .iter_mut()
            .find(|m| m.version == version && kept_for(m, t))
        {
            m.reduction = Some((config.clone(), Rc::clone(r)));
        }
    })
}

/// The structure made while a transcript was being decoded (a decisive estimate needs
/// one), with that transcript: for its reduction, which comes next ([`structure`]).
#[allow(clippy::type_complexity)]
static OFFERED: super::Local<RefCell<Option<(Rc<Transcript>, Rc<Structure>)>>> =
    super::Local(RefCell::new(None));

/// Offers `s`, the structure of `t`, to the next [`structure`] call (it replaces what an
/// earlier call offered; a call that takes none, such as a `shouldReduce` whose trigger
/// fired, leaves it to the next).
pub fn offer_structure(t: &Rc<Transcript>, s: Structure) {
    OFFERED.set(Some((Rc::clone(t), Rc::new(s))));
}

/// The structure of `t`, the transcript of reading `version` under `calibration`: the one
/// offered for `t` itself ([`offer_structure`]) or kept with it; else made from the
/// structure kept for reading `base` (the first messages of a history that grew:
/// [`Structure::extend`]), or anew; kept with `t` if `t` is kept.
pub fn structure(version: f64, base: f64, calibration: f64, t: &Transcript) -> Rc<Structure> {
    let calibration = calibration.to_bits();
    let offered = OFFERED
        .take()
        .filter(|(of, _)| std::ptr::eq(Rc::as_ptr(of), t));
    let find = |memos: &[Memo], v: f64| {
        memos
            .iter()
            .position(|m| m.version == v && m.calibration == calibration)
    };
    MEMOS.with_borrow_mut(|memos| {
        let own = find(memos, version).filter(|&k| kept_for(&memos[k], t));
        if let Some(s) = own.and_then(|k| memos[k].structure.clone()) {
            return s;
        }
        let s = match offered {
            Some((_, s)) => s,
            None => {
                // (The base's entry is let go: what it was kept for is done.)
                let extended = find(memos, base)
                    .map(|k| memos.remove(k))
                    .and_then(|m| m.structure)
                    .and_then(|s| s.extend(t));
                Rc::new(extended.unwrap_or_else(|| Structure::of(t)))
            }
        };
        if let Some(k) = find(memos, version).filter(|&k| kept_for(&memos[k], t)) {
            memos[k].structure = Some(Rc::clone(&s));
        }
        s
    })
}
