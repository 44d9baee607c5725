//! Estimating the messages that have no count yet, from their texts (`js/reading.js` writes
//! them into wasm memory on request, round after round: [`Encoded`]) — all of them, or, for a `truncate` reduction, only those that
//! decide it (the core chooses: `truncate::count_decisive`). Every older message is then
//! removed whatever its size, so it is estimated only if the result's `tokensBefore` is
//! read ([`complete`]).

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use super::js::Reading;
use crate::config::Config;
use crate::estimate::{self, Estimator, Scanner, Tally, Weights};
use crate::formats::Format;
use crate::strategies::truncate;
use crate::structure::Structure;
use crate::transcript::Transcript;

/// What estimating a message takes from the config.
pub struct Estimating {
    /// The class weights for the messages' format; `None` in length mode.
    pub weights: Option<Weights>,
    pub overhead: f64,
    pub image_tokens: f64,
    /// Applied to estimates (not to the caller's counts): 1 for none.
    pub calibration: f64,
}

impl Estimating {
    pub fn of(config: &Config, format: Format, calibrate: bool) -> Estimating {
        Estimating {
            weights: config.estimator.weights(format),
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
        let weights = match self.weights {
            // Length mode's weights are whole already (each message's lengths, summed as the
            // fields were read — payloads of plain data written out now — divided and rounded
            // once: `Reading.lengths`).
            None => reading.lengths(indices),
            Some(weights) => {
                let scanner = Scanner::new(&weights);
                if reading.wide_texts() {
                    weigh_texts::<u16>(reading, indices, &scanner)
                } else {
                    weigh_texts::<u8>(reading, indices, &scanner)
                }
            }
        };
        for (&i, &weight) in indices.iter().zip(&weights) {
            raw[i as usize] = count(i as usize, weight);
        }
    }

    /// The numbers [`complete`] rebuilds this from ([`Estimating::from_params`]).
    fn params(&self) -> Vec<f64> {
        let mut p = vec![self.overhead, self.image_tokens, self.calibration];
        if let Some(w) = self.weights {
            p.extend(w.values());
        }
        p
    }

    /// What [`Estimating::params`] wrote (None for anything else).
    fn from_params(p: &[f64]) -> Option<Estimating> {
        let weights = match p.get(3..)? {
            [] => None,
            w => Some(Weights::from_values(w.try_into().ok()?)),
        };
        Some(Estimating {
            weights,
            overhead: p[0],
            image_tokens: p[1],
            calibration: p[2],
        })
    }
}

/// The weight of the texts of each of messages `indices`, in order: its role name's (weighed
/// once for all, by its code), then its pieces'.
fn weigh_texts<T: Encoding>(reading: &Reading, indices: &[u32], scanner: &Scanner) -> Vec<f64> {
    let counts = reading.piece_counts(indices);
    let pieces = counts.iter().map(|&c| (c & 0xFF_FFFF) as usize).sum();
    let names = role_weights(&reading.role_names(), scanner);
    let mut texts = Encoded::<T>::new(reading, indices, pieces);
    let mut weights = vec![0.0; indices.len()];
    for (k, out) in weights.iter_mut().enumerate() {
        let c = counts.get(k).copied().unwrap_or(0);
        // (Added first, as the first text was: the sum is the same to the bit.)
        let mut weight = 0.0;
        if let Some(role) = (c >> 24).checked_sub(1).and_then(|n| names.get(n as usize)) {
            weight += role;
        }
        for _ in 0..c & 0xFF_FFFF {
            weight += texts.next(scanner);
        }
        *out = weight;
    }
    weights
}

/// The weight of each name of `names` (each followed by a 0 byte).
fn role_weights(names: &str, scanner: &Scanner) -> Vec<f64> {
    let (bytes, mut weights, mut start) = (names.as_bytes(), Vec::new(), 0);
    for (at, &b) in bytes.iter().enumerate() {
        if b == 0 {
            weights.push(scanner.weigh_bytes(&bytes[start..at]));
            start = at + 1;
        }
    }
    weights
}

/// How JavaScript writes texts into wasm memory: UTF-8 (`TextEncoder`, everywhere) or
/// UTF-16 (Node's `Buffer`, several times faster: [`Reading::wide_texts`]).
trait Encoding: estimate::Unit + Default + 'static {
    /// The room kept between estimates.
    fn room() -> &'static super::Local<RefCell<Vec<Self>>>;
    /// [`Reading::encode_into`] in this encoding.
    fn encode(
        r: &Reading,
        indices: &[u32],
        from: u32,
        dest: &mut [Self],
        lengths: &mut [u32],
    ) -> f64;
}

static BYTES: super::Local<RefCell<Vec<u8>>> = super::Local(RefCell::new(Vec::new()));
static UNITS: super::Local<RefCell<Vec<u16>>> = super::Local(RefCell::new(Vec::new()));

impl Encoding for u8 {
    fn room() -> &'static super::Local<RefCell<Vec<u8>>> {
        &BYTES
    }
    fn encode(
        r: &Reading,
        indices: &[u32],
        from: u32,
        dest: &mut [u8],
        lengths: &mut [u32],
    ) -> f64 {
        r.encode_into(indices, from, dest, lengths)
    }
}

impl Encoding for u16 {
    fn room() -> &'static super::Local<RefCell<Vec<u16>>> {
        &UNITS
    }
    fn encode(
        r: &Reading,
        indices: &[u32],
        from: u32,
        dest: &mut [u16],
        lengths: &mut [u32],
    ) -> f64 {
        r.encode_utf16_into(indices, from, dest, lengths)
    }
}

/// The room a first estimate starts with, in units (it grows as rounds fill it, up to
/// [`ROUND`]: a first call on a short conversation grows no memory).
const FIRST_ROOM: usize = 1 << 10;

/// The most units one round encodes: a round is weighed while it is still in the
/// processor's cache, and no history, however long its texts, needs more memory than that
/// (a longer piece is written and weighed in parts).
const ROUND: usize = 1 << 16;

/// Marks the length of a piece not encoded yet.
const UNWRITTEN: u32 = u32::MAX;

/// The texts of some messages, encoded by JavaScript into the room kept between estimates,
/// in rounds: [`Encoded::next`] weighs them piece after piece.
struct Encoded<'r, T: Encoding> {
    reading: &'r Reading,
    indices: &'r [u32],
    room: Vec<T>,
    /// Each piece's length in units ([`UNWRITTEN`] until its round).
    lengths: Vec<u32>,
    /// The next piece, and where it starts in the room.
    next: usize,
    at: usize,
    /// The pieces in the room end here.
    end: usize,
    /// Whether the room holds a part of piece `next` only (the rest comes in the next
    /// rounds).
    part: bool,
}

impl<'r, T: Encoding> Encoded<'r, T> {
    fn new(reading: &'r Reading, indices: &'r [u32], pieces: usize) -> Self {
        let mut room = T::room().take();
        if room.len() < FIRST_ROOM {
            room.resize(FIRST_ROOM, T::default());
        }
        Encoded {
            reading,
            indices,
            room,
            lengths: vec![UNWRITTEN; pieces],
            next: 0,
            at: 0,
            end: 0,
            part: false,
        }
    }

    /// The weight of the next piece, before rounding (0 past the last; what JavaScript
    /// could not write weighs nothing).
    fn next(&mut self, scanner: &Scanner) -> f64 {
        let mut tally = Tally::default();
        while self.next < self.end || self.round() {
            let len = self.lengths[self.next] as usize;
            let end = (self.at + len).min(self.room.len());
            scanner.weigh_part(&self.room[self.at..end], &mut tally);
            self.at = end;
            if !self.part {
                self.next += 1;
                break;
            }
            // The piece goes on in the next round.
            self.end = self.next;
        }
        scanner.total(&tally)
    }

    /// Encodes the next round into the room (which grows as rounds fill it, up to
    /// [`ROUND`]): whether a piece, or a part of one, was written.
    fn round(&mut self) -> bool {
        if self.next >= self.lengths.len() {
            return false;
        }
        if (self.end > 0 || self.part) && self.room.len() < ROUND {
            // The last round filled the room.
            self.room
                .resize((4 * self.room.len()).min(ROUND), T::default());
        }
        // (Unwritten again, should JavaScript write nothing of the rest of a piece.)
        self.lengths[self.next] = UNWRITTEN;
        let written = T::encode(
            self.reading,
            self.indices,
            self.next as u32,
            &mut self.room,
            &mut self.lengths,
        );
        self.part = written < 0.0;
        self.end = self.lengths[self.next..]
            .iter()
            .position(|&len| len == UNWRITTEN)
            .map_or(self.lengths.len(), |k| self.next + k);
        self.at = 0;
        self.end > self.next
    }
}

impl<T: Encoding> Drop for Encoded<'_, T> {
    fn drop(&mut self) {
        let room = std::mem::take(&mut self.room);
        T::room().set(room);
    }
}

/// Messages without a count whose texts are this short in all (UTF-16 code units: tens of
/// microseconds to encode and weigh) are all estimated: choosing costs a pass over the
/// history's structure and a result whose `tokensBefore` is completed late.
pub const FEW_UNITS: f64 = 8192.0;

/// Whether a reduction under `config` may leave the oldest messages of `reading`
/// unestimated: a `truncate` that allows it (`truncate::can_leave_oldest_uncounted`), the
/// built-in class estimator (or length mode with payloads still to write out: the rest of
/// its counts are sums made while reading), whole overheads (so that sums do not depend on
/// their order), and no counts from the caller.
pub fn decisive_allowed(config: &Config, reading: &Reading, counted: bool) -> bool {
    truncate::can_leave_oldest_uncounted(config)
        && (matches!(config.estimator, Estimator::Classes(_)) || reading.deferred())
        && config.message_overhead.fract() == 0.0
        && config.image_tokens.fract() == 0.0
        && !counted
}

/// Estimates what a `truncate` reduction needs of `missing` (messages without a count, at
/// token 0 in `t`; see `truncate::count_decisive`). Returns whether some stay unestimated
/// (the reading then keeps what [`complete`] needs to estimate them later), and the
/// structure of `t`.
pub fn estimate_decisive(
    reading: &Reading,
    est: &Estimating,
    t: &mut Transcript,
    config: &Config,
    missing: &[u32],
    raw: &mut [f64],
) -> (bool, Structure) {
    let mut known = vec![true; t.len()];
    for &i in missing {
        known[i as usize] = false;
    }
    let (pending, structure) = truncate::count_decisive(t, config, &mut known, |indices, t| {
        est.estimate(reading, indices, raw);
        for &i in indices {
            t.messages[i as usize].tokens = est.tokens(raw[i as usize]);
        }
    });
    if pending {
        install();
        reading.set_estimator(&est.params());
    }
    (pending, structure)
}

/// Estimates the messages a reduction left unestimated (see [`estimate_decisive`]) and
/// returns their tokens: what the result's `tokensBefore` lacks. Called from JavaScript
/// the first time it is read.
pub fn complete(reading: &Reading) -> f64 {
    let Some(est) = Estimating::from_params(&reading.estimator()) else {
        return 0.0;
    };
    if !reading.pending() {
        return 0.0;
    }
    let mut raw = reading.raw();
    let mut missing = Vec::new();
    for (i, &r) in raw.iter().enumerate() {
        if r < 0.0 {
            missing.push(i as u32);
        }
    }
    est.estimate(reading, &missing, &mut raw);
    reading.set_raw(&raw);
    reading.set_pending(false);
    reading.drop_texts();
    missing
        .iter()
        .fold(0.0, |sum, &i| sum + est.tokens(raw[i as usize]))
}

/// Installs [`complete`] for `js/reading.js` (`setCompleter`), once: when a reading is first left pending (most
/// programs never need it, and a module starts faster without it).
fn install() {
    static INSTALLED: super::Local<std::cell::Cell<bool>> =
        super::Local(std::cell::Cell::new(false));
    if INSTALLED.replace(true) {
        return;
    }
    let complete = Closure::<dyn Fn(JsValue) -> f64>::new(|reading: JsValue| {
        complete(&reading.unchecked_into())
    });
    super::js::set_completer(complete.as_ref().unchecked_ref());
    complete.forget();
}
