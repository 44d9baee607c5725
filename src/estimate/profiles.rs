// Written by `node bench/accuracy/fit.mjs --write NAME…` (issue 31), which replaces the rows it
// names and keeps the others: refit, do not edit by hand. Errors of each row against its
// tokenizer: `make accuracy`, and docs/performance.md.

/// Each tokenizer profile's name and class weights, in hundredths of a token per code point,
/// in `Weights::NAMES` order; the rows in `Tokenizer::ALL` order.
#[rustfmt::skip]
pub(super) const PROFILES: [(&str, [u16; super::CLASSES]); 4] = [
    ("o200k", [10, 73, 66, 12, 64, 86, 66, 64, 106, 156, 70, 30]),
    ("cl100k", [13, 89, 58, 12, 63, 107, 82, 86, 237, 225, 70, 95]),
    ("gemma", [14, 139, 53, 32, 69, 63, 33, 60, 124, 52, 70, 33]),
    ("llama3", [12, 94, 57, 17, 61, 83, 52, 56, 127, 223, 70, 40]),
];
