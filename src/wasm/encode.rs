//! Writing the answers: a [`Reduction`] into `ReduceResult`, events into plain objects.

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::js::{build_result, make_event, Reading};
use crate::contract::{CLEANED, NEW};
use crate::strategies::{CompressionEvent, Reduction, Slot};

/// A core event as a plain object: `{ type, messages, tokensBefore, tokensAfter }`.
pub fn event_object(e: &CompressionEvent) -> Object {
    make_event(e.kind, e.messages as u32, e.tokens_before, e.tokens_after)
}

/// What a reduction wrote besides indices: the new messages (`Slot::New(k)` is
/// `written[k]`), the summary among them, and the originals each stands for, by offload id
/// (`offload_ids[k]`: undefined for none, an array of ids for an index of dropped calls).
pub struct Writings {
    pub written: Array,
    pub summary: JsValue,
    pub offloaded: Object,
    pub offload_ids: Array,
}

impl Writings {
    pub fn none() -> Writings {
        Writings {
            written: Array::new(),
            summary: JsValue::UNDEFINED,
            offloaded: Object::new(),
            offload_ids: Array::new(),
        }
    }

    /// The originals of the written messages in `r`'s output only: one a later stage
    /// replaced, or the final truncation removed, stands for nothing (its originals are
    /// then dropped or summarized: SPEC §8 counts each input index once).
    fn offloaded_in(&self, r: &Reduction) -> Object {
        if self.offload_ids.length() == 0 {
            return self.offloaded.clone();
        }
        let out = Object::new();
        let copy = |id: &JsValue| {
            if id.is_string() {
                let originals = Reflect::get(&self.offloaded, id).unwrap_or_default();
                let _ = Reflect::set(&out, id, &originals);
            }
        };
        for slot in &r.output {
            if let Slot::New(k) = *slot {
                // (An index of dropped tool calls stands for several ids.)
                let id = self.offload_ids.get(k);
                if Array::is_array(&id) {
                    let ids = Array::from(&id);
                    for j in 0..ids.length() {
                        copy(&ids.get(j));
                    }
                } else {
                    copy(&id);
                }
            }
        }
        out
    }
}

/// A reduction's indices as `buildResult` takes them: the output (input indices, `NEW + k`
/// for the k-th written message, `CLEANED + i` for input i without its orphan results) and
/// the input indices by fate. Kept with a
/// reduction that is memoised (`memo`): a call that gets it again does not list them again.
pub struct Indices {
    output: Vec<u32>,
    by_fate: [Vec<u32>; 4],
    /// A number of its own once memoised (0 before): `buildResult` keeps the lists it made
    /// of the last one, and copies them when it gets the same again.
    listed: u32,
}

/// The last number given by [`Indices::memoised`].
static NUMBERED: super::Local<std::cell::Cell<u32>> = super::Local(std::cell::Cell::new(0));

impl Indices {
    /// Whether the output has messages without their orphans ([`Slot::Cleaned`]).
    pub fn has_cleaned(&self) -> bool {
        self.output.iter().any(|e| (CLEANED..NEW).contains(e))
    }

    /// Numbers these indices (see `listed`).
    pub fn memoised(mut self) -> Indices {
        self.listed = NUMBERED.get().wrapping_add(1).max(1);
        NUMBERED.set(self.listed);
        self
    }

    pub fn of(r: &Reduction) -> Indices {
        let output = r
            .output
            .iter()
            .map(|slot| match slot {
                Slot::Input(i) => *i,
                Slot::New(k) => NEW + k,
                Slot::Cleaned(i) => CLEANED + i,
            })
            .collect();
        Indices {
            output,
            by_fate: r.indices_by_fate(),
            listed: 0,
        }
    }
}

/// The `ReduceResult` of `r` (whose indices are `indices`), built from the input objects.
/// `events` are the result's events (the core's, with what the boundary added).
pub fn encode_result(
    reading: &Reading,
    r: &Reduction,
    indices: &Indices,
    writings: &Writings,
    events: &Array,
) -> JsValue {
    let output = &indices.output;
    let [kept, dropped, summarized, rewritten] = &indices.by_fate;
    // The totals in the order `buildResult` takes them.
    let totals = [
        f64::from(u8::from(r.reduced)),
        (r.fate.len() - kept.len()) as f64,
        r.tokens_before,
        r.tokens_after,
        f64::from(u8::from(r.over_budget)),
        f64::from(indices.listed),
    ];
    build_result(
        reading,
        output,
        &writings.written,
        &writings.summary,
        &writings.offloaded_in(r),
        kept,
        dropped,
        summarized,
        rewritten,
        &totals,
        events,
    )
}

/// The core's events of `r` as an array.
pub fn core_events(r: &Reduction) -> Array {
    r.events
        .iter()
        .map(|e| JsValue::from(event_object(e)))
        .collect()
}
