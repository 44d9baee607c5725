//! The note that stands for the current turn's oldest tool steps (SPEC §9.13): the core
//! chose them ([`crate::strategies::Trace`]); it is written in the input's format as a tool
//! run's digest (each call with its arguments, its result cut short, the originals under an
//! offload id the reload tool fetches) and counted as written.

use wasm_bindgen::prelude::*;

use super::decode::{count_new_message, hand_orphans_of, set, Call};
use super::encode::Writings;
use super::js::{compress_run, pick, Reading};
use crate::strategies::Reduction;
use crate::transcript::Transcript;

/// `r` with its note written and counted (its tokens in place of the estimate), added to
/// `writings` (which hold what `r` wrote before it); `None` when `r` has no note.
pub fn write_note(
    call: &Call,
    reading: &Reading,
    t: &Transcript,
    r: &Reduction,
    writings: &Writings,
) -> Result<Option<Reduction>, JsValue> {
    let Some(trace) = &r.trace else {
        return Ok(None);
    };
    hand_orphans_of(reading, t);
    let preview = call.config.preview_chars as u32;
    let w = compress_run(reading, &trace.messages, preview, JsValue::UNDEFINED);
    let message = w.message();
    let tokens = count_new_message(&message, call, t.format)?;
    let mut r = r.clone();
    let change = tokens - trace.estimate;
    r.tokens_after += change;
    if let Some(e) = r.events.iter_mut().find(|e| e.kind == "currentTurn") {
        e.tokens_after += change;
    }
    if let Some(target) = call.config.target_tokens {
        r.over_budget |= r.tokens_after > target;
    }
    // (What was written before it without an offload id stands for none.)
    while writings.offload_ids.length() < trace.slot {
        writings.offload_ids.push(&JsValue::UNDEFINED);
    }
    let id = w.id();
    set(&writings.offloaded, &id, pick(reading, &trace.messages));
    writings.offload_ids.push(&JsValue::from(id));
    writings.written.push(&message);
    Ok(Some(r))
}

/// The writings of a reduction that wrote nothing but, maybe, its note.
pub fn note_or_none(
    call: &Call,
    reading: &Reading,
    t: &Transcript,
    r: &Reduction,
) -> Result<(Option<Reduction>, Writings), JsValue> {
    let writings = Writings::none();
    Ok((write_note(call, reading, t, r, &writings)?, writings))
}
