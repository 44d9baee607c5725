//! The built-in token estimator (SPEC §3): a per-character-class weighted sum, or plain
//! `ceil(length / charsPerToken)`. One pass over the text, no allocation.

use crate::formats::Format;

/// Tokens per code point for each character class. The defaults were fitted by least
/// squares against OpenAI's o200k tokenizer on a mixed corpus (prose, code, JSON, CJK, chat);
/// each tokenizer profile's are in `estimate/profiles.rs`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    pub letter: f64,
    pub digit: f64,
    /// A whitespace character that starts a run.
    pub whitespace: f64,
    /// A whitespace character that continues a run.
    pub whitespace_run: f64,
    pub punctuation: f64,
    pub han: f64,
    pub kana: f64,
    pub hangul: f64,
    pub cjk_punctuation: f64,
    pub emoji: f64,
    pub other: f64,
    /// A letter of another alphabet: Greek, Cyrillic, Armenian, Hebrew, Arabic, the Indic
    /// scripts, Thai, Georgian… (not Latin, not CJK).
    pub other_letter: f64,
}

impl Default for Weights {
    /// o200k's: letters of other alphabets (`other_letter`, 0.30) were fitted against o200k on
    /// sentences of ten such languages (`bench/accuracy/scripts.mjs`): 0.19 (Russian) to 0.44
    /// (Thai) each. One weight for all leaves Thai 21% under and Russian 31% over, the other
    /// eight within ±10%, where "letter" under-counted Cyrillic and Greek by 30–50% and
    /// "other" over-counted Arabic and Hindi about twofold.
    fn default() -> Self {
        Weights::fitted(Tokenizer::O200k)
    }
}

impl Weights {
    /// The option names of `estimatorWeights`, in class order ([`Weights::values`]).
    pub const NAMES: [&'static str; CLASSES] = [
        "letter",
        "digit",
        "whitespace",
        "whitespaceRun",
        "punctuation",
        "han",
        "kana",
        "hangul",
        "cjkPunctuation",
        "emoji",
        "other",
        "otherLetter",
    ];

    /// The weights in class order.
    pub fn values(&self) -> [f64; CLASSES] {
        self.by_class()
    }

    /// The weights from [`Weights::values`].
    pub fn from_values(values: [f64; CLASSES]) -> Weights {
        Weights {
            letter: values[0],
            digit: values[1],
            whitespace: values[2],
            whitespace_run: values[3],
            punctuation: values[4],
            han: values[5],
            kana: values[6],
            hangul: values[7],
            cjk_punctuation: values[8],
            emoji: values[9],
            other: values[10],
            other_letter: values[11],
        }
    }

    fn by_class(&self) -> [f64; CLASSES] {
        [
            self.letter,
            self.digit,
            self.whitespace,
            self.whitespace_run,
            self.punctuation,
            self.han,
            self.kana,
            self.hangul,
            self.cjk_punctuation,
            self.emoji,
            self.other,
            self.other_letter,
        ]
    }
}

mod profiles;

/// A tokenizer family with weights fitted for it (`config.tokenizer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tokenizer {
    /// OpenAI's o200k (GPT-4o, GPT-4.1, o-series, GPT-5): the default but for Gemini's format.
    O200k,
    /// OpenAI's cl100k (GPT-4, GPT-3.5).
    Cl100k,
    /// Gemma's (SentencePiece; the closest public one to Gemini's).
    Gemma,
    /// Llama 3's.
    Llama3,
}

impl Tokenizer {
    /// Every profile, in the order of the rows of `estimate/profiles.rs`.
    pub const ALL: [Tokenizer; 4] = [
        Tokenizer::O200k,
        Tokenizer::Cl100k,
        Tokenizer::Gemma,
        Tokenizer::Llama3,
    ];

    /// The profile `tokenizer: "auto"` picks for messages in `format`: Gemini's messages go
    /// to a Gemini model, whose tokenizer Gemma's is closest to; the others to o200k.
    pub fn for_format(format: Format) -> Tokenizer {
        match format {
            Format::Gemini => Tokenizer::Gemma,
            _ => Tokenizer::O200k,
        }
    }

    /// Its `config.tokenizer` name.
    pub fn name(self) -> &'static str {
        profiles::PROFILES[self as usize].0
    }
}

impl Weights {
    /// The weights fitted for `tokenizer` (see `bench/accuracy/`).
    #[inline(never)]
    pub fn fitted(tokenizer: Tokenizer) -> Weights {
        let hundredths = profiles::PROFILES[tokenizer as usize].1;
        Weights::from_values(hundredths.map(|w| f64::from(w) / 100.0))
    }
}

/// The class weights of a config: a tokenizer profile's, with the caller's
/// `estimatorWeights` over them.
#[derive(Clone, Copy, Debug)]
pub struct Profile {
    /// `None` for `tokenizer: "auto"`: the format's ([`Tokenizer::for_format`]).
    pub tokenizer: Option<Tokenizer>,
    /// The weights the caller set, by class ([`Weights::NAMES`] order); NaN for those not
    /// set (a weight is a number from 0 to 1000).
    pub overrides: [f64; CLASSES],
}

impl Default for Profile {
    fn default() -> Self {
        Profile {
            tokenizer: None,
            overrides: [f64::NAN; CLASSES],
        }
    }
}

/// (By bits: the NaN of a weight not set equals itself, so that a config equals its copy.)
impl PartialEq for Profile {
    fn eq(&self, other: &Profile) -> bool {
        self.tokenizer == other.tokenizer
            && self.overrides.map(f64::to_bits) == other.overrides.map(f64::to_bits)
    }
}

impl Profile {
    /// The tokenizer whose weights estimate messages in `format`.
    pub fn tokenizer(&self, format: Format) -> Tokenizer {
        self.tokenizer
            .unwrap_or_else(|| Tokenizer::for_format(format))
    }

    /// The weights that estimate messages in `format`.
    pub fn weights(&self, format: Format) -> Weights {
        let mut values = Weights::fitted(self.tokenizer(format)).values();
        for (w, set) in values.iter_mut().zip(self.overrides) {
            if !set.is_nan() {
                *w = set;
            }
        }
        Weights::from_values(values)
    }
}

/// How texts become tokens when no count is given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Estimator {
    /// Weighted by character class (the default).
    Classes(Profile),
    /// `ceil(utf16_length / chars_per_token)` of a message's texts together, rounded once
    /// per message (SPEC §3; `js/reading.js` `lengths`).
    Length { chars_per_token: f64 },
}

impl Default for Estimator {
    fn default() -> Self {
        Estimator::Classes(Profile::default())
    }
}

impl Estimator {
    /// The class weights that estimate messages in `format` (`None` in length mode).
    pub fn weights(&self, format: Format) -> Option<Weights> {
        match self {
            Estimator::Classes(p) => Some(p.weights(format)),
            Estimator::Length { .. } => None,
        }
    }

    /// The tokenizer profile that estimates messages in `format` (`None` in length mode).
    pub fn tokenizer(&self, format: Format) -> Option<Tokenizer> {
        match self {
            Estimator::Classes(p) => Some(p.tokenizer(format)),
            Estimator::Length { .. } => None,
        }
    }
}

const LETTER: u8 = 0;
const DIGIT: u8 = 1;
const SPACE: u8 = 2;
const SPACE_RUN: u8 = 3;
const PUNCT: u8 = 4;
const HAN: u8 = 5;
const KANA: u8 = 6;
const HANGUL: u8 = 7;
const CJK_PUNCT: u8 = 8;
const EMOJI: u8 = 9;
const OTHER: u8 = 10;
const OTHER_LETTER: u8 = 11;
/// How many classes there are.
pub const CLASSES: usize = 12;

const fn ascii_classes() -> [u8; 128] {
    let mut table = [OTHER; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        table[b] = if c.is_ascii_alphabetic() {
            LETTER
        } else if c.is_ascii_digit() {
            DIGIT
        } else if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
            SPACE
        } else if c.is_ascii_punctuation() {
            PUNCT
        } else {
            OTHER
        };
        b += 1;
    }
    table
}

static ASCII: [u8; 128] = ascii_classes();

/// The class of a non-ASCII code point (one that is not a valid `char` is "other").
const fn class_of(u: u32) -> u8 {
    match u {
        // Latin with diacritics: o200k spends about as little on them as on ASCII letters.
        0x00C0..=0x024F | 0x1E00..=0x1EFF => LETTER,
        // The letters of other alphabets (with the marks and signs of their blocks): Greek,
        // Cyrillic, Armenian, Hebrew, Arabic, Syriac, Thaana, the Indic scripts, Thai, Lao,
        // Tibetan, Myanmar, Georgian, Ethiopic; Greek Extended, Cyrillic Extended, Arabic
        // and Hebrew presentation forms.
        0x0370..=0x07BF
        | 0x0900..=0x109F
        | 0x10A0..=0x10FF
        | 0x1200..=0x139F
        | 0x1C80..=0x1C8F
        | 0x1F00..=0x1FFF
        | 0x2DE0..=0x2DFF
        | 0xA640..=0xA69F
        | 0xFB1D..=0xFDFF
        | 0xFE70..=0xFEFE => OTHER_LETTER,
        0x3040..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F => KANA,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3134F => HAN,
        0xAC00..=0xD7AF | 0x1100..=0x11FF | 0x3130..=0x318F | 0xA960..=0xA97F => HANGUL,
        0x3000..=0x303F | 0xFF00..=0xFF65 | 0xFE30..=0xFE4F => CJK_PUNCT,
        0x1F000..=0x1FAFF | 0x2600..=0x27BF | 0x2B00..=0x2BFF | 0xFE0F | 0x200D => EMOJI,
        0x85 | 0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F => SPACE,
        _ => OTHER,
    }
}

/// Weights are summed as whole millionths of a token: exact for weights with up to six
/// decimals (ten letters at 0.10 are exactly 1 token), deterministic, and an integer add per
/// byte in the hot loop.
const SCALE: f64 = 1_000_000.0;

fn fixed(w: f64) -> i64 {
    (w * SCALE).round() as i64
}

static IS_SPACE: [bool; 128] = {
    let mut t = [false; 128];
    let mut b = 0;
    while b < 128 {
        t[b] = ascii_classes()[b] == SPACE;
        b += 1;
    }
    t
};

/// A weight table made once per call: one pass over a text is then a table lookup and an
/// integer add per ASCII byte.
#[derive(Clone, Debug)]
pub struct Scanner {
    /// ASCII byte → weight; whitespace carries its run-continuation weight.
    ascii: [i64; 128],
    /// What a whitespace run's first character adds over a continuation.
    run_start: i64,
    by_class: [i64; CLASSES],
}

impl Scanner {
    pub fn new(weights: &Weights) -> Scanner {
        let by_class = weights.by_class().map(fixed);
        let mut ascii = [0i64; 128];
        for (b, slot) in ascii.iter_mut().enumerate() {
            let class = ASCII[b] as usize;
            *slot = if class == SPACE as usize {
                by_class[SPACE_RUN as usize]
            } else {
                by_class[class]
            };
        }
        Scanner {
            ascii,
            run_start: by_class[SPACE as usize] - by_class[SPACE_RUN as usize],
            by_class,
        }
    }

    /// The estimated tokens of `text`, before rounding: the sum of its code points' weights.
    pub fn weigh(&self, text: &str) -> f64 {
        self.weigh_bytes(text.as_bytes())
    }

    /// The estimated tokens of UTF-8 `bytes` (one text, as `TextEncoder` wrote it), before
    /// rounding.
    pub fn weigh_bytes(&self, bytes: &[u8]) -> f64 {
        self.weigh_text(bytes)
    }

    /// The estimated tokens of UTF-16 code `units` (one text, as a JavaScript string holds
    /// it), before rounding: the same as its UTF-8 weighs, a lone surrogate counting as
    /// U+FFFD (what `TextEncoder` writes for it).
    pub fn weigh_units(&self, units: &[u16]) -> f64 {
        self.weigh_text(units)
    }

    /// [`Scanner::weigh_bytes`] or [`Scanner::weigh_units`], by the type of unit.
    pub(crate) fn weigh_text<T: Unit>(&self, text: &[T]) -> f64 {
        let mut tally = Tally::default();
        self.weigh_part(text, &mut tally);
        self.total(&tally)
    }

    /// Adds `part` of a text to `tally`: a text weighed in parts, cut between code points,
    /// weighs what it weighs whole ([`Scanner::total`]).
    pub(crate) fn weigh_part<T: Unit>(&self, part: &[T], tally: &mut Tally) {
        self.add(part, tally, true);
    }

    /// The estimated tokens of the text weighed into `tally`, before rounding.
    pub(crate) fn total(&self, tally: &Tally) -> f64 {
        (tally.sum + tally.starts * self.run_start).max(0) as f64 / SCALE
    }

    /// [`Scanner::weigh_bytes`] without the SIMD path, to check the SIMD path against.
    #[doc(hidden)]
    pub fn weigh_bytes_scalar(&self, bytes: &[u8]) -> f64 {
        self.weigh_with(bytes, false)
    }

    /// [`Scanner::weigh_units`] without the SIMD path, to check the SIMD path against.
    #[doc(hidden)]
    pub fn weigh_units_scalar(&self, units: &[u16]) -> f64 {
        self.weigh_with(units, false)
    }

    fn weigh_with<T: Unit>(&self, text: &[T], simd: bool) -> f64 {
        let mut tally = Tally::default();
        self.add(text, &mut tally, simd);
        self.total(&tally)
    }

    fn add<T: Unit>(&self, text: &[T], tally: &mut Tally, simd: bool) {
        let Tally {
            mut sum,
            mut starts,
            mut prev_space,
        } = *tally;
        let mut i = 0;
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        let mut counts = AsciiCounts::default();
        // Where the text is known to be ASCII up to (scalar steps until there, then SIMD
        // again): past the ASCII units before a non-ASCII one, no block is tried twice, and
        // none starts on a non-ASCII unit (CJK text goes on scalar).
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        let mut ascii_to = 0;
        while i < text.len() {
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            if simd && i >= ascii_to && i + 16 <= text.len() && text[i].value() < 0x80 {
                // SAFETY: i + 16 <= text.len() (just checked).
                let non_ascii = unsafe { T::non_ascii(text, i) };
                if non_ascii == 0 {
                    i = counts.run(text, i, &mut prev_space);
                    continue;
                }
                // The units before the first non-ASCII one are ASCII.
                ascii_to = i + non_ascii.trailing_zeros() as usize;
            }
            let _ = simd;
            let u = text[i].value();
            if u < 0x80 {
                sum += self.ascii[u as usize];
                let space = IS_SPACE[u as usize];
                starts += i64::from(space && !prev_space);
                prev_space = space;
                i += 1;
                continue;
            }
            let (c, width) = T::decode(text, i);
            i += width;
            let class = class_in_blocks(c);
            if class == SPACE {
                sum += self.by_class[SPACE_RUN as usize];
                starts += i64::from(!prev_space);
                prev_space = true;
            } else {
                sum += self.by_class[class as usize];
                prev_space = false;
            }
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            let w = &self.by_class;
            sum += counts.letters * w[LETTER as usize]
                + counts.digits * w[DIGIT as usize]
                + counts.puncts * w[PUNCT as usize]
                + counts.others * w[OTHER as usize]
                + counts.spaces * w[SPACE_RUN as usize];
            starts += counts.starts;
        }
        *tally = Tally {
            sum,
            starts,
            prev_space,
        };
    }
}

/// A text's weight so far, in the scanner's fixed point: what a text weighed in parts
/// carries from one part to the next.
#[derive(Clone, Copy, Default)]
pub(crate) struct Tally {
    sum: i64,
    /// Whitespace runs started.
    starts: i64,
    /// Whether the part so far ends in whitespace.
    prev_space: bool,
}

/// The code units of an encoded text: UTF-8 bytes or UTF-16 units.
pub(crate) trait Unit: Copy {
    /// The unit as a number (below 0x80: an ASCII character).
    fn value(self) -> u32;

    /// The code point that starts at non-ASCII `text[i]` and how many units it takes.
    fn decode(text: &[Self], i: usize) -> (u32, usize);

    /// One bit for each of `text[i..i + 16]` that is not ASCII.
    ///
    /// # Safety
    /// `i + 16 <= text.len()`.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    unsafe fn non_ascii(text: &[Self], i: usize) -> u32;

    /// `text[i..i + 16]` as sixteen bytes when all are ASCII. `limit`: `u16x8_splat(0x80)`,
    /// which UTF-16 units are clamped to (passed in: V8 would make a constant anew on each
    /// block).
    ///
    /// # Safety
    /// `i + 16 <= text.len()`.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    unsafe fn ascii_block(
        text: &[Self],
        i: usize,
        limit: core::arch::wasm32::v128,
    ) -> Option<core::arch::wasm32::v128>;
}

impl Unit for u8 {
    #[inline(always)]
    fn value(self) -> u32 {
        u32::from(self)
    }

    /// (Valid UTF-8, as `TextEncoder` writes it; anything else decodes to some code point.)
    #[inline(always)]
    fn decode(bytes: &[u8], i: usize) -> (u32, usize) {
        let at = |k: usize| u32::from(bytes.get(i + k).copied().unwrap_or(0x80) & 0x3F);
        let b = u32::from(bytes[i]);
        match b {
            0xF0..=0xFF => (((b & 0x07) << 18) | (at(1) << 12) | (at(2) << 6) | at(3), 4),
            0xE0..=0xEF => (((b & 0x0F) << 12) | (at(1) << 6) | at(2), 3),
            _ => (((b & 0x1F) << 6) | at(1), 2),
        }
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[inline(always)]
    unsafe fn non_ascii(bytes: &[u8], i: usize) -> u32 {
        use core::arch::wasm32::*;
        // SAFETY: the caller's.
        u32::from(u8x16_bitmask(unsafe { load(bytes, i) }))
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[inline(always)]
    unsafe fn ascii_block(
        bytes: &[u8],
        i: usize,
        _limit: core::arch::wasm32::v128,
    ) -> Option<core::arch::wasm32::v128> {
        use core::arch::wasm32::*;
        // SAFETY: the caller's.
        let v = unsafe { load(bytes, i) };
        (u8x16_bitmask(v) == 0).then_some(v)
    }
}

impl Unit for u16 {
    #[inline(always)]
    fn value(self) -> u32 {
        u32::from(self)
    }

    #[inline(always)]
    fn decode(units: &[u16], i: usize) -> (u32, usize) {
        let u = u32::from(units[i]);
        match u {
            0xD800..=0xDBFF => match units.get(i + 1).map(|&low| u32::from(low)) {
                Some(low @ 0xDC00..=0xDFFF) => (0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00), 2),
                _ => (0xFFFD, 1),
            },
            0xDC00..=0xDFFF => (0xFFFD, 1),
            _ => (u, 1),
        }
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[inline(always)]
    unsafe fn non_ascii(units: &[u16], i: usize) -> u32 {
        use core::arch::wasm32::*;
        let ascii = u16x8_splat(0x7F);
        // SAFETY: the caller's (16 units from i).
        let (a, b) = unsafe { (load(units, i), load(units, i + 8)) };
        u32::from(i16x8_bitmask(u16x8_gt(a, ascii)))
            | (u32::from(i16x8_bitmask(u16x8_gt(b, ascii))) << 8)
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[inline(always)]
    unsafe fn ascii_block(
        units: &[u16],
        i: usize,
        limit: core::arch::wasm32::v128,
    ) -> Option<core::arch::wasm32::v128> {
        use core::arch::wasm32::*;
        // SAFETY: the caller's (16 units from i).
        let (a, b) = unsafe { (load(units, i), load(units, i + 8)) };
        // Each unit at most 0x80, so that narrowing keeps it (and LLVM adds no clamps of its
        // own before it): a non-ASCII unit becomes 0x80, whose top bit the bitmask sees.
        let v = u8x16_narrow_i16x8(u16x8_min(a, limit), u16x8_min(b, limit));
        (u8x16_bitmask(v) == 0).then_some(v)
    }
}

/// The 16 bytes at `text[i]`.
///
/// # Safety
/// The 16 bytes are within `text`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
unsafe fn load<T>(text: &[T], i: usize) -> core::arch::wasm32::v128 {
    use core::arch::wasm32::*;
    debug_assert!((i * core::mem::size_of::<T>()) + 16 <= core::mem::size_of_val(text));
    // SAFETY: the caller's; v128_load takes unaligned addresses.
    unsafe { v128_load(text.as_ptr().add(i).cast::<v128>()) }
}

/// Class counts of ASCII text taken sixteen units at a time (weighted once, at the end).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[derive(Default)]
struct AsciiCounts {
    letters: i64,
    digits: i64,
    puncts: i64,
    spaces: i64,
    others: i64,
    starts: i64,
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
impl AsciiCounts {
    /// Counts the classes of the all-ASCII blocks of 16 units that follow one another from
    /// `text[i]`, in per-lane counters (flushed every 255 blocks); returns where they end
    /// (`i` itself when the first block is not all ASCII).
    #[inline(always)]
    fn run<T: Unit>(&mut self, text: &[T], mut i: usize, prev_space: &mut bool) -> usize {
        use core::arch::wasm32::*;
        let zero = u8x16_splat(0);
        let mut carry = if *prev_space { u8x16_splat(1) } else { zero };
        // SAFETY: 16 bytes each; v128_load takes unaligned addresses.
        let (by_low, by_high) = unsafe {
            (
                v128_load(NIBBLE_CLASSES.0.as_ptr().cast::<v128>()),
                v128_load(NIBBLE_CLASSES.1.as_ptr().cast::<v128>()),
            )
        };
        // The constants as values LLVM cannot see through: it would otherwise rewrite the
        // counting below into compares that V8 turns into more instructions, and V8 makes
        // a constant anew inside the loop each time it is used.
        let [by_low, by_high, low_nibble, one, space_bits, other_bits] = core::hint::black_box([
            by_low,
            by_high,
            u8x16_splat(0x0F),
            u8x16_splat(C_DIGIT),
            u8x16_splat(C_SPACE),
            u8x16_splat(C_OTHER),
        ]);
        let limit = u16x8_splat(0x80);
        loop {
            let (mut classed, mut digits, mut others, mut spaces, mut starts) =
                (zero, zero, zero, zero, zero);
            let mut blocks = 0i64;
            while blocks < 255 && i + 16 <= text.len() {
                // SAFETY: i + 16 <= text.len() (the loop's condition).
                let Some(v) = (unsafe { T::ascii_block(text, i, limit) }) else {
                    break;
                };
                // Each byte's class as one bit (`NIBBLE_CLASSES`), then 1 in the lanes of
                // each class counted: of any class but punctuation, digits (the bit of 1),
                // whitespace and others (letters are what is left of the first).
                let class = v128_and(
                    i8x16_swizzle(by_low, v128_and(v, low_nibble)),
                    i8x16_swizzle(by_high, v128_and(u16x8_shr(v, 4), low_nibble)),
                );
                let is = |bits| u8x16_min(v128_and(class, bits), one);
                let (any, digit, space, other) = (
                    u8x16_min(class, one),
                    v128_and(class, one),
                    is(space_bits),
                    is(other_bits),
                );
                // Each lane's space flag next to the one before it (the last of the previous block).
                let before = i8x16_shuffle::<
                    15,
                    16,
                    17,
                    18,
                    19,
                    20,
                    21,
                    22,
                    23,
                    24,
                    25,
                    26,
                    27,
                    28,
                    29,
                    30,
                >(carry, space);
                classed = i8x16_add(classed, any);
                digits = i8x16_add(digits, digit);
                others = i8x16_add(others, other);
                spaces = i8x16_add(spaces, space);
                starts = i8x16_add(starts, v128_andnot(space, before));
                carry = space;
                blocks += 1;
                i += 16;
            }
            let (c, d, o, w) = (sum(classed), sum(digits), sum(others), sum(spaces));
            self.letters += c - d - o - w;
            self.digits += d;
            self.others += o;
            self.spaces += w;
            self.puncts += 16 * blocks - c;
            self.starts += sum(starts);
            if blocks < 255 {
                break;
            }
        }
        *prev_space = u8x16_extract_lane::<15>(carry) != 0;
        i
    }
}

/// Class bits of an ASCII byte in the SIMD scan: each class is one or more sets of bytes
/// whose high nibbles and low nibbles each lie in a set of their own, one bit a set, so
/// that `by_low[b & 15] & by_high[b >> 4]` holds exactly the bit of b's set.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
const C_LETTER: u8 = 0b1100_0000; // A–O a–o (high 4, 6) and P–Z p–z (high 5, 7)
/// (The bit of 1: counted by a mask alone.)
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
const C_DIGIT: u8 = 0b0000_0001;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
const C_SPACE: u8 = 0b0000_0110; // ' ', and \t to \r
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
const C_OTHER: u8 = 0b0011_1000; // the other controls, and DEL (punctuation is the rest)
                                 // (The classes share no bit, and the eight sets' bits are all of a byte's.)
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
const _: () = assert!(
    C_LETTER ^ C_DIGIT ^ C_SPACE ^ C_OTHER == 0xFF
        && C_LETTER | C_DIGIT | C_SPACE | C_OTHER == 0xFF
);

/// The class bits by low nibble and by high nibble (see [`C_LETTER`]).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
static NIBBLE_CLASSES: ([u8; 16], [u8; 16]) = {
    // (bit, high nibbles, low nibbles) of each set.
    const SETS: [(u8, [bool; 8], [bool; 16]); 8] = {
        const fn highs(list: &[usize]) -> [bool; 8] {
            let mut t = [false; 8];
            let mut k = 0;
            while k < list.len() {
                t[list[k]] = true;
                k += 1;
            }
            t
        }
        const fn lows(from: usize, to: usize, except: bool) -> [bool; 16] {
            let mut t = [false; 16];
            let mut k = 0;
            while k < 16 {
                t[k] = (k >= from && k <= to) != except;
                k += 1;
            }
            t
        }
        [
            (0b0100_0000, highs(&[4, 6]), lows(1, 15, false)),
            (0b1000_0000, highs(&[5, 7]), lows(0, 10, false)),
            (C_DIGIT, highs(&[3]), lows(0, 9, false)),
            (0b0000_0010, highs(&[2]), lows(0, 0, false)),
            (0b0000_0100, highs(&[0]), lows(9, 13, false)),
            (0b0000_1000, highs(&[0]), lows(9, 13, true)),
            (0b0001_0000, highs(&[1]), lows(0, 15, false)),
            (0b0010_0000, highs(&[7]), lows(15, 15, false)),
        ]
    };
    let (mut low, mut high) = ([0u8; 16], [0u8; 16]);
    let mut s = 0;
    while s < SETS.len() {
        let (bit, highs, lows) = SETS[s];
        let mut k = 0;
        while k < 16 {
            if lows[k] {
                low[k] |= bit;
            }
            if k < 8 && highs[k] {
                high[k] |= bit;
            }
            k += 1;
        }
        s += 1;
    }
    (low, high)
};

/// The sum of the 16 byte lanes of `v`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn sum(v: core::arch::wasm32::v128) -> i64 {
    use core::arch::wasm32::*;
    let quads = u32x4_extadd_pairwise_u16x8(u16x8_extadd_pairwise_u8x16(v));
    i64::from(u32x4_extract_lane::<0>(quads))
        + i64::from(u32x4_extract_lane::<1>(quads))
        + i64::from(u32x4_extract_lane::<2>(quads))
        + i64::from(u32x4_extract_lane::<3>(quads))
}

/// Marks a block of [`BLOCK_CLASS`] whose code points are not all of one class.
const MIXED: u8 = u8::MAX;

/// The class of each block of 256 code points of the Basic Multilingual Plane whose code
/// points all share one ([`MIXED`] for the others): Han, Hangul and most scripts are
/// classed in one lookup.
static BLOCK_CLASS: [u8; 256] = {
    let mut table = [MIXED; 256];
    let mut block = 0;
    while block < 256 {
        let first = class_of((block as u32) << 8);
        let mut c = 1;
        while c < 256 && class_of(((block as u32) << 8) | c) == first {
            c += 1;
        }
        if c == 256 {
            table[block] = first;
        }
        block += 1;
    }
    table
};

/// [`class_of`], through [`BLOCK_CLASS`] first.
#[inline(always)]
fn class_in_blocks(u: u32) -> u8 {
    if let Some(&class) = BLOCK_CLASS.get(u as usize >> 8) {
        if class != MIXED {
            return class;
        }
    }
    class_of(u)
}

/// Estimated tokens of one text, before rounding, by the class weights.
pub fn text_weight(text: &str, weights: &Weights) -> f64 {
    Scanner::new(weights).weigh(text)
}

/// The estimate of a whole message from its texts' raw weight: overhead, images, and the
/// texts rounded up.
pub fn message_tokens(text_weight: f64, images: u32, overhead: f64, image_tokens: f64) -> f64 {
    overhead + images as f64 * image_tokens + text_weight.ceil()
}

#[cfg(test)]
mod tests;
