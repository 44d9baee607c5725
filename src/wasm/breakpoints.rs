//! `cacheBreakpoints` at the boundary: what each output message carries (`breakpointSpots`),
//! the core's placement ([`crate::breakpoints::place`]), the marked copies
//! (`markBreakpoints`, `js/breakpoints.js`).

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::decode::Call;
use super::js::{self, Reading, ReduceResult};
use super::Finished;
use crate::breakpoints::{is_stable, place, Spot};
use crate::contract::{SPOT_MARKABLE, SPOT_MARKS, SPOT_SUMMARY};
use crate::strategies::Slot;
use crate::transcript::Transcript;

/// `finished`, a reduction of `t` (read as `reading`), with its result's messages marked
/// when the config asks for breakpoints and the format takes them; the messages the marks
/// replaced are in `finished.unmarked`, with their places.
pub fn mark(
    call: &Call,
    t: &Transcript,
    reading: &Reading,
    mut finished: Finished,
) -> Result<Finished, JsValue> {
    if !call.config.cache_breakpoints || !t.format.takes_cache_breakpoints() {
        return Ok(finished);
    }
    let output = &finished.reduction.0.output;
    let result: &ReduceResult = finished.result.unchecked_ref();
    let messages = result.messages();
    if messages.length() as usize != output.len() {
        return Ok(finished);
    }
    let mut facts = vec![0u8; output.len()];
    js::breakpoint_spots(reading, &messages, &mut facts)?;
    let mut spots = Vec::with_capacity(output.len());
    for (slot, &f) in output.iter().zip(&facts) {
        spots.push(Spot {
            stable: match *slot {
                Slot::Input(i) | Slot::Cleaned(i) => {
                    t.messages.get(i as usize).is_some_and(is_stable)
                }
                // (A message the reduction wrote: its summary, as the reader tells one.)
                Slot::New(_) => f & SPOT_SUMMARY != 0,
            },
            marks: f & SPOT_MARKS,
            markable: f & SPOT_MARKABLE != 0,
        });
    }
    let at = place(&spots);
    if at.is_empty() {
        return Ok(finished);
    }
    let mut inputs = Vec::with_capacity(at.len());
    for &p in &at {
        inputs.push(match output[p as usize] {
            Slot::Input(i) => i,
            Slot::New(_) | Slot::Cleaned(_) => u32::MAX,
        });
    }
    let replaced = js::mark_breakpoints(reading, &finished.result, &at, &inputs)?;
    finished.unmarked = Some((at, replaced));
    Ok(finished)
}
