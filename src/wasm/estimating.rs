//! Estimating the messages that have no count yet, from their texts (`reader.js` encodes
//! them to UTF-8 on request) — all of them, or, for a `truncate` reduction, only those that
//! decide it (the core chooses: `truncate::count_decisive`). Every older message is then
//! removed whatever its size, so it is estimated only if the result's `tokensBefore` is
//! read ([`complete`]).

use wasm_bindgen::prelude::*;

use super::js::Reading;
use crate::config::Config;
use crate::estimate::{self, Estimator, Scanner, Weights};
use crate::strategies::truncate;
use crate::transcript::Transcript;

/// What estimating a message takes from the config.
pub struct Estimating {
    pub estimator: Estimator,
    pub overhead: f64,
    pub image_tokens: f64,
    /// Applied to estimates (not to the caller's counts): 1 for none.
    pub calibration: f64,
}

impl Estimating {
    pub fn of(config: &Config, calibrate: bool) -> Estimating {
        Estimating {
            estimator: config.estimator,
            overhead: config.message_overhead,
            image_tokens: config.image_tokens,
            calibration: if calibrate { config.calibration } else { 1.0 },
        }
    }

    /// The count a message's raw estimate stands for.
    pub fn tokens(&self, raw: f64) -> f64 {
        if self.calibration == 1.0 {
            raw
        } else {
            (raw * self.calibration).ceil()
        }
    }

    /// Estimates messages `indices` into `raw` (counts before calibration).
    pub fn estimate(&self, reading: &Reading, indices: &[u32], raw: &mut [f64]) {
        if indices.is_empty() {
            return;
        }
        let images = reading.images();
        let count = |i: usize, weight: f64| {
            let images = images.get(i).copied().unwrap_or(0);
            estimate::message_tokens(weight, images, self.overhead, self.image_tokens)
        };
        match self.estimator {
            // Length mode's weights are whole already (a sum of ceils), read with the fields.
            Estimator::Length { .. } => {
                let weights = reading.length_tokens();
                for &i in indices {
                    let i = i as usize;
                    raw[i] = count(i, weights.get(i).copied().unwrap_or(0.0));
                }
            }
            Estimator::Classes(weights) => {
                let scanner = Scanner::new(&weights);
                let starts = reading.piece_start();
                let pieces_of = |i: usize| match (starts.get(i), starts.get(i + 1)) {
                    (Some(&a), Some(&b)) => b.saturating_sub(a) as usize,
                    _ => 0,
                };
                let pieces: usize = indices.iter().map(|&i| pieces_of(i as usize)).sum();
                encoded(reading, indices, pieces, |bytes, lengths| {
                    let (mut at, mut piece) = (0, 0);
                    for &i in indices {
                        let i = i as usize;
                        let mut weight = 0.0;
                        for _ in 0..pieces_of(i) {
                            let len = lengths.get(piece).copied().unwrap_or(0) as usize;
                            let end = (at + len).min(bytes.len());
                            weight += scanner.weigh_bytes(&bytes[at..end]);
                            at = end;
                            piece += 1;
                        }
                        raw[i] = count(i, weight);
                    }
                });
            }
        }
    }

    /// The numbers [`complete`] rebuilds this from.
    fn params(&self) -> Vec<f64> {
        let mut p = vec![self.overhead, self.image_tokens, self.calibration];
        if let Estimator::Classes(w) = self.estimator {
            p.extend(w.values());
        }
        p
    }
}

/// Room for the texts' UTF-8 kept from one estimate to the next, up to [`KEEP_ROOM`] bytes:
/// a history's texts are encoded into the same memory every call, not into a new buffer
/// sized by a pass over them first.
const KEEP_ROOM: usize = 4 << 20;

/// The room a first estimate starts with (it grows as the texts need; a first call on a
/// short conversation grows no memory).
const FIRST_ROOM: usize = 1 << 10;

thread_local! {
    static ROOM: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `weigh(bytes, lengths)`: the texts of messages `indices` as UTF-8 (JavaScript encodes
/// them straight into this memory), and the byte length of each of their `pieces`.
fn encoded<R>(
    reading: &Reading,
    indices: &[u32],
    pieces: usize,
    weigh: impl FnOnce(&[u8], &[u32]) -> R,
) -> R {
    let mut lengths = vec![0u32; pieces];
    let mut bytes = ROOM.with(|room| room.take());
    if bytes.len() < FIRST_ROOM {
        bytes.resize(FIRST_ROOM, 0);
    }
    let written = loop {
        let written = reading.encode_into(indices, &mut bytes, &mut lengths);
        if written >= 0.0 {
            break written as usize;
        }
        // (The encoding goes on from where it ran out of room.)
        bytes.resize(bytes.len() + (-written) as usize, 0);
    };
    let result = weigh(&bytes[..written.min(bytes.len())], &lengths);
    if bytes.len() <= KEEP_ROOM {
        ROOM.with(|room| room.replace(bytes));
    }
    result
}

/// Messages without a count whose texts are this short in all (UTF-16 code units: tens of
/// microseconds to encode and weigh) are all estimated: choosing costs a pass over the
/// history's structure and a result whose `tokensBefore` is completed late.
pub const FEW_UNITS: f64 = 8192.0;

/// Whether a reduction under `config` may leave the oldest messages unestimated: a
/// `truncate` that allows it (`truncate::can_leave_oldest_uncounted`), the built-in class
/// estimator, whole overheads (so that sums do not depend on their order), and no counts
/// from the caller.
pub fn decisive_allowed(config: &Config, counted: bool) -> bool {
    truncate::can_leave_oldest_uncounted(config)
        && matches!(config.estimator, Estimator::Classes(_))
        && config.message_overhead.fract() == 0.0
        && config.image_tokens.fract() == 0.0
        && !counted
}

/// Estimates what a `truncate` reduction needs of `missing` (messages without a count, at
/// token 0 in `t`; see `truncate::count_decisive`). Returns whether some stay unestimated;
/// the reading then keeps what [`complete`] needs to estimate them later.
pub fn estimate_decisive(
    reading: &Reading,
    est: &Estimating,
    t: &mut Transcript,
    config: &Config,
    missing: &[u32],
    raw: &mut [f64],
) -> bool {
    let mut known = vec![true; t.len()];
    for &i in missing {
        known[i as usize] = false;
    }
    let pending = truncate::count_decisive(t, config, &mut known, |indices, t| {
        est.estimate(reading, indices, raw);
        for &i in indices {
            t.messages[i as usize].tokens = est.tokens(raw[i as usize]);
        }
    });
    if pending {
        install();
        reading.set_estimator(&est.params());
    }
    pending
}

/// Estimates the messages a reduction left unestimated (see [`estimate_decisive`]) and
/// returns their tokens: what the result's `tokensBefore` lacks. Called from JavaScript
/// the first time it is read.
pub fn complete(reading: &Reading) -> f64 {
    let p = reading.estimator();
    let Some(values) = p
        .get(3..)
        .and_then(|w| <[f64; Weights::NAMES.len()]>::try_from(w).ok())
    else {
        return 0.0;
    };
    if !reading.pending() {
        return 0.0;
    }
    let est = Estimating {
        estimator: Estimator::Classes(Weights::from_values(values)),
        overhead: p[0],
        image_tokens: p[1],
        calibration: p[2],
    };
    let mut raw = reading.raw();
    let missing: Vec<u32> = (0..raw.len())
        .filter(|&i| raw[i] < 0.0)
        .map(|i| i as u32)
        .collect();
    est.estimate(reading, &missing, &mut raw);
    reading.set_raw(&raw);
    reading.set_pending(false);
    reading.drop_texts();
    missing.iter().map(|&i| est.tokens(raw[i as usize])).sum()
}

/// Installs [`complete`] for `reader.js`, once: when a reading is first left pending (most
/// programs never need it, and a module starts faster without it).
fn install() {
    thread_local! {
        static INSTALLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if INSTALLED.with(|done| done.replace(true)) {
        return;
    }
    let complete = Closure::<dyn Fn(JsValue) -> f64>::new(|reading: JsValue| {
        complete(&reading.unchecked_into())
    });
    super::js::set_completer(complete.as_ref().unchecked_ref());
    complete.forget();
}
