//! The asynchronous half of `summarize`: ask the core what to summarise, await the user's
//! summarizer, then let the core build the reduction — or fall back to `truncate`, or
//! throw, as `onSummarizerError` says. A failing summarizer never loses a message.

use std::borrow::Cow;

use js_sys::{Array, JsString, Object};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::decode::{count_new_message, decode_for_reduction, hand_orphans_of, set, Call};
use super::encode::{core_events, encode_result, Indices, Writings};
use super::js::{
    add_usage, call_summarizer, emit, excerpt_message, failure_message, lookup_summary,
    make_summary, now, pick, store_summary, substitute, summarizer_error, summary_keys,
    summary_text, wrap_summary, Outcome, Reading,
};
use super::Finished;
use crate::config::{OnOverBudget, OnSummarizerError, SummaryMode, SummaryRole};
use crate::error::{ErrorCode, ReduceError};
use crate::strategies::cached::{self, Cached};
use crate::strategies::chunks::{chunks_of, InputBudget};
use crate::strategies::{summarize, Fate, Reduction};
use crate::structure::Structure;
use crate::transcript::Transcript;
use crate::{plan_summary, SummaryStep};

/// Calls `config.onEvent` with `{ type, ...fields }`.
pub fn report(call: &Call, kind: &str, fields: impl FnOnce(&Object)) -> Result<(), JsValue> {
    if call.callbacks.on_event.is_function() {
        let event = Object::new();
        set(&event, "type", kind);
        fields(&event);
        emit(&call.callbacks.on_event, &event)?;
    }
    Ok(())
}

pub fn role_name(role: SummaryRole) -> &'static str {
    match role {
        SummaryRole::User => "user",
        SummaryRole::System => "system",
        SummaryRole::Assistant => "assistant",
    }
}

/// Why a summary was not used.
pub enum Failure {
    Rejected(JsValue),
    Timeout,
    Invalid(JsValue),
    TooLarge(f64, f64),
}

impl Failure {
    fn reason(&self) -> &'static str {
        match self {
            Failure::Rejected(_) => "rejected",
            Failure::Timeout => "timeout",
            Failure::Invalid(_) => "invalid",
            Failure::TooLarge(..) => "tooLarge",
        }
    }

    fn code(&self) -> ErrorCode {
        match self {
            Failure::TooLarge(..) => ErrorCode::SummaryTooLarge,
            _ => ErrorCode::SummarizerFailed,
        }
    }

    /// What went wrong, in words (written by `failureMessage`, js/summaries.js).
    fn message(&self, timeout: Option<f64>) -> String {
        let (a, b) = match self {
            Failure::TooLarge(tokens, max) => (*tokens, *max),
            _ => (timeout.unwrap_or_default(), 0.0),
        };
        failure_message(self.reason(), &self.cause(), a, b)
    }

    fn cause(&self) -> JsValue {
        match self {
            Failure::Rejected(e) | Failure::Invalid(e) => e.clone(),
            _ => JsValue::UNDEFINED,
        }
    }
}

/// A summary the summarizer wrote.
pub struct Answer {
    pub text: JsString,
    pub usage: JsValue,
    pub duration_ms: f64,
}

/// The summary message of `text`: wrapped in the tag, in the configured role.
pub fn summary_message(call: &Call, reading: &Reading, text: &JsString) -> JsValue {
    let config = &call.config;
    make_summary(
        reading,
        role_name(config.summary_role),
        &wrap_summary(text, &config.summary_tag),
    )
}

/// The tokens of the summary message around its text (the tag, its role, the overhead).
pub fn wrapping(call: &Call, reading: &Reading, t: &Transcript) -> Result<f64, JsValue> {
    let empty = summary_message(call, reading, &JsString::from(""));
    count_new_message(&empty, call, t.format)
}

/// What a summary is of: the messages at `indices` of `t`, oldest first, and (single mode)
/// the earlier summaries at `previous`, whose texts go as `previousSummary`.
pub struct Input<'a> {
    pub t: &'a Transcript,
    /// The structure of `t` where the caller has it; made when the input is chunked.
    pub structure: Option<&'a Structure>,
    pub indices: &'a [u32],
    pub previous: &'a [u32],
}

/// Asks the summarizer for a summary of `input`, in as many calls as
/// `summarizerInputTokens` needs (`strategies::chunks`: oldest first, each call handed the
/// summary so far as `previousSummary`, a message too large for a call as an excerpt),
/// reporting `summarizeStart` / `summarizeEnd` / `summarizeFailed` for each. `calls` counts
/// them. `Ok(Err(failure))` is a failed call, which fails the summary (the caller may fall
/// back from it); `Err` is an abort (or an exception from `onEvent`).
pub async fn ask(
    call: &Call,
    reading: &Reading,
    kind: &str,
    input: Input<'_>,
    target_tokens: f64,
    calls: &mut u32,
) -> Result<Result<Answer, Failure>, JsValue> {
    let config = &call.config;
    let t = input.t;
    let budget = InputBudget {
        limit: config.summarizer_input_tokens,
        previous: t.tokens_of(input.previous),
        summary: target_tokens,
    };
    let chunks = chunks_of(
        t,
        input.indices,
        || match input.structure {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(Structure::of(t)),
        },
        &budget,
    );
    let mut previous: Option<JsValue> = (!input.previous.is_empty())
        .then(|| summary_text(reading, input.previous, &config.summary_tag).into());
    let mut answer = Answer {
        text: JsString::from(""),
        usage: JsValue::UNDEFINED,
        duration_ms: 0.0,
    };
    for (k, chunk) in chunks.iter().enumerate() {
        let indices = &input.indices[chunk.start..chunk.end];
        let messages = pick(reading, indices);
        for &(at, room) in &chunk.excerpts {
            let excerpt = excerpt(call, reading, t, input.indices[at], room)?;
            messages.set((at - chunk.start) as u32, excerpt);
        }
        *calls += 1;
        let part = (k as u32 + 1, chunks.len() as u32);
        let asked = ask_once(call, kind, messages, previous.as_ref(), target_tokens, part);
        match asked.await? {
            Ok(a) => {
                previous = Some(a.text.clone().into());
                answer = Answer {
                    text: a.text,
                    usage: add_usage(&answer.usage, &a.usage),
                    duration_ms: answer.duration_ms + a.duration_ms,
                };
            }
            Err(failure) => return Ok(Err(failure)),
        }
    }
    Ok(Ok(answer))
}

/// Message `i` of `t`, more than `room` tokens, as a head-and-tail excerpt of about `room`
/// tokens as the config counts them; the original when it has no text to cut.
fn excerpt(
    call: &Call,
    reading: &Reading,
    t: &Transcript,
    i: u32,
    room: f64,
) -> Result<JsValue, JsValue> {
    let mut keep = room / t.messages[i as usize].tokens.max(1.0);
    let mut written = JsValue::UNDEFINED;
    // (Its texts are not all of its tokens, nor equally dense: cut again by what the count
    // says, a few times at most.)
    for _ in 0..4 {
        let cut = excerpt_message(reading, i, keep);
        if cut.is_undefined() {
            break;
        }
        let tokens = count_new_message(&cut, call, t.format)?;
        written = cut;
        if tokens <= room {
            break;
        }
        keep *= 0.9 * room / tokens;
    }
    Ok(if written.is_undefined() {
        pick(reading, &[i]).get(0)
    } else {
        written
    })
}

/// One call of the summarizer with `messages` (`part`: its number among the calls of this
/// summary, and how many there are).
async fn ask_once(
    call: &Call,
    kind: &str,
    messages: Array,
    previous: Option<&JsValue>,
    target_tokens: f64,
    part: (u32, u32),
) -> Result<Result<Answer, Failure>, JsValue> {
    let config = &call.config;
    let request = Object::new();
    let count = messages.length();
    set(&request, "kind", kind);
    set(&request, "messages", messages);
    if let Some(previous) = previous {
        set(&request, "previousSummary", previous.clone());
    }
    set(&request, "targetTokens", target_tokens);
    report(call, "summarizeStart", |e| {
        set(e, "kind", kind);
        set(e, "messages", count);
        set(e, "targetTokens", target_tokens);
        set(e, "chunk", part.0);
        set(e, "chunks", part.1);
    })?;
    let timeout = config.timeout_ms.map_or(JsValue::UNDEFINED, JsValue::from);
    let promise = call_summarizer(
        &call.callbacks.summarizer,
        &request,
        timeout,
        call.callbacks.signal(),
    );
    let outcome: Outcome = JsFuture::from(promise).await?.unchecked_into();
    let failure = match outcome.status().as_str() {
        "ok" => {
            let answer = Answer {
                text: outcome.text().unwrap_or_default(),
                usage: outcome.usage(),
                duration_ms: outcome.duration_ms(),
            };
            report(call, "summarizeEnd", |e| {
                set(e, "kind", kind);
                set(e, "durationMs", answer.duration_ms);
                set(e, "usage", answer.usage.clone());
            })?;
            return Ok(Ok(answer));
        }
        "aborted" => return Err(abort_error(call, kind, &outcome.error())),
        "timeout" => Failure::Timeout,
        "rejected" => Failure::Rejected(outcome.error()),
        _ => Failure::Invalid(outcome.error()),
    };
    failed(call, kind, &failure)?;
    Ok(Err(failure))
}

/// The `ABORTED` error of a summary of `kind` (its cause the signal's reason), reported
/// through `onEvent` as a failed summary.
fn abort_error(call: &Call, kind: &str, cause: &JsValue) -> JsValue {
    let e = ReduceError::new(
        ErrorCode::Aborted,
        "the reduction was aborted through its signal (config.signal, or prepare's); the input is untouched",
    );
    // (The abort is the error, whatever onEvent throws now.)
    let _ = report(call, "summarizeFailed", |ev| {
        set(ev, "kind", kind);
        set(ev, "reason", "aborted");
        set(ev, "message", e.message.as_str());
    });
    summarizer_error(e.code.as_str(), &e.message, cause)
}

/// `ABORTED` when the signal is aborted already: where a summary is given up without asking
/// the summarizer (too large before it is written), as an abort while asking would be.
pub fn check_abort(call: &Call, kind: &str) -> Result<(), JsValue> {
    match call.callbacks.signal() {
        Some(signal) if signal.aborted() => Err(abort_error(call, kind, &signal.reason())),
        _ => Ok(()),
    }
}

/// Reports a failure through `onEvent`.
pub fn failed(call: &Call, kind: &str, failure: &Failure) -> Result<(), JsValue> {
    let message = failure.message(call.config.timeout_ms);
    report(call, "summarizeFailed", |e| {
        set(e, "kind", kind);
        set(e, "reason", failure.reason());
        set(e, "message", message.as_str());
    })
}

/// The event of a failed summary in `result.events`, after `calls` calls of the summarizer.
pub fn failure_event(
    call: &Call,
    kind: &str,
    failure: &Failure,
    fallback: &str,
    calls: u32,
) -> Object {
    let e = Object::new();
    set(&e, "type", "summarizeFailed");
    set(&e, "kind", kind);
    set(&e, "reason", failure.reason());
    set(
        &e,
        "message",
        failure.message(call.config.timeout_ms).as_str(),
    );
    set(&e, "fallback", fallback);
    set(&e, "summarizerCalls", calls);
    e
}

/// `summarizer_error` for a failure under `onSummarizerError: "throw"`.
pub fn failure_error(call: &Call, failure: &Failure) -> JsValue {
    summarizer_error(
        failure.code().as_str(),
        &failure.message(call.config.timeout_ms),
        &failure.cause(),
    )
}

/// What `summaryCache` brings to a reduction: the keys of the input's prefixes
/// (`js/cache.js`), and the summary found for its oldest messages, if any.
pub struct CacheUse<'a> {
    keys: JsValue,
    hit: Option<Hit<'a>>,
}

/// A summary found in the cache: the reduction works on the input with it in place of the
/// messages it covers (as `ChatHistory` holds its history), and its result is the input's.
struct Hit<'a> {
    t: &'a Transcript,
    reading: &'a Reading,
    cached: Cached,
    summary: JsValue,
}

/// `reduce` for `summarize` with a `summaryCache`: the summary stored for the longest prefix
/// of the history stands for it, then the triggers decide as on any history; a new summary
/// of a prefix is stored.
pub async fn reduce_with_cache(
    call: &Call,
    t: &Transcript,
    reading: &Reading,
    wrapping: f64,
) -> Result<Finished, JsValue> {
    let config = &call.config;
    let leading = leading_systems(t);
    let mode = match config.summary_mode {
        SummaryMode::Single => "single",
        SummaryMode::Layered => "layered",
    };
    let role = role_name(config.summary_role);
    let options = crate::error::cat(&[&config.summary_tag, "\u{0}", role, "\u{0}", mode]);
    let keys = summary_keys(reading, &options, leading);
    let cache = &call.callbacks.summary_cache;
    let found = JsFuture::from(lookup_summary(cache, &keys)).await?;
    let end = js_sys::Reflect::get(&found, &JsValue::from_str("end"))
        .ok()
        .and_then(|e| e.as_f64());
    let text = js_sys::Reflect::get(&found, &JsValue::from_str("text"))
        .ok()
        .and_then(|e| e.dyn_into::<JsString>().ok());
    // (One call below, awaited at one point: the history with the cached summary in place,
    // or the input as it is.)
    let (replaced, hit) = match (end, text) {
        (Some(end), Some(text)) => {
            let summary = summary_message(call, reading, &text);
            let items = substitute(reading, leading, end as u32, &summary);
            let (t2, reading2) = decode_for_reduction(&items, call)?;
            let t2 = super::decode::as_output(t2, &reading2, call)?;
            let hit = Hit {
                t,
                reading,
                cached: Cached {
                    at: leading,
                    covered: end as u32 - leading,
                },
                summary,
            };
            (Some((t2, reading2)), Some(hit))
        }
        _ => (None, None),
    };
    let cache = CacheUse { keys, hit };
    let (t, reading) = match &replaced {
        Some((t2, reading2)) => (&**t2, reading2),
        None => (t, reading),
    };
    reduce_with_summarizer(call, t, reading, wrapping, Some(&cache)).await
}

/// How many system messages open `t`.
fn leading_systems(t: &Transcript) -> u32 {
    t.messages.iter().take_while(|m| m.is_system()).count() as u32
}

/// [`finish`] for a reduction that may have a cache: with a cached summary, `r` (of the
/// history with it in place) becomes the input's (`cached::with_cached`) with the summary
/// as written and a step for it first in the events; a new summary `text` of a prefix of
/// the input is stored.
#[allow(clippy::too_many_arguments)]
async fn finish_cached(
    call: &Call,
    reading: &Reading,
    t: &Transcript,
    cache: Option<&CacheUse<'_>>,
    r: Reduction,
    mut writings: Writings,
    events: Array,
    started: f64,
    text: Option<&JsString>,
) -> Result<Finished, JsValue> {
    let Some(cache) = cache else {
        return finish(call, reading, r, writings, events, started);
    };
    let (r, reading, input, events) = match &cache.hit {
        None => (r, reading, t, events),
        Some(hit) => {
            let at = hit.cached.at as usize;
            let written = writings.written.length();
            writings.written.push(&hit.summary);
            if r.fate.get(at) == Some(&Fate::Kept) && writings.summary.is_undefined() {
                writings.summary = hit.summary.clone();
            }
            let tokens_before = hit.t.total_tokens();
            // The cached summary's step: what it stands for, at no summarizer call.
            let e = Object::new();
            set(&e, "type", "summarize");
            set(&e, "kind", "history");
            set(&e, "messages", hit.cached.covered);
            set(&e, "tokensBefore", tokens_before);
            set(&e, "tokensAfter", r.tokens_before);
            set(&e, "summaryTokens", t.messages[at].tokens);
            set(&e, "summarizerCalls", 0);
            set(&e, "cached", true);
            let all = Array::of1(&e);
            for x in events.iter() {
                all.push(&x);
            }
            let r = cached::with_cached(r, hit.cached, written, tokens_before);
            (r, hit.reading, hit.t, all)
        }
    };
    if let Some(text) = text {
        if let Some((start, end)) = cached::span(&r, leading_systems(input)) {
            let cache_object = &call.callbacks.summary_cache;
            JsFuture::from(store_summary(cache_object, &cache.keys, start, end, text)).await?;
        }
    }
    finish(call, reading, r, writings, events, started)
}

/// `reduce` for the `summarize` strategy.
pub async fn reduce_with_summarizer(
    call: &Call,
    t: &Transcript,
    reading: &Reading,
    wrapping: f64,
    cache: Option<&CacheUse<'_>>,
) -> Result<Finished, JsValue> {
    let config = &call.config;
    let started = now();
    // (The input's size: with a cached summary, `t` is the history with it in place.)
    let input = cache.and_then(|c| c.hit.as_ref()).map_or(t, |hit| hit.t);
    report(call, "reduceStart", |e| {
        set(e, "strategy", "summarize");
        set(e, "messages", input.len() as u32);
        set(e, "tokens", input.total_tokens());
    })?;
    hand_orphans_of(reading, t);
    // (Every way ends in one call of `finish_cached`, awaited at one point: what it takes.)
    let (r, writings, events, text) = match plan_summary(t, config)? {
        SummaryStep::Done(r) => noted(with_note(call, reading, t, r)?),
        SummaryStep::Summarize(plan) => summarized(call, reading, t, wrapping, plan).await?,
    };
    finish_cached(
        call,
        reading,
        t,
        cache,
        r,
        writings,
        events,
        started,
        text.as_ref(),
    )
    .await
}

/// What [`reduce_with_summarizer`] hands [`finish_cached`]: the reduction, what it wrote,
/// its events, and the new summary's text (stored when there is a cache).
type Summarized = (Reduction, Writings, Array, Option<JsString>);

fn noted((r, writings, events): (Reduction, Writings, Array)) -> Summarized {
    (r, writings, events, None)
}

/// [`reduce_with_summarizer`] for a `plan` to summarize.
async fn summarized(
    call: &Call,
    reading: &Reading,
    t: &Transcript,
    wrapping: f64,
    mut plan: crate::SummaryPlan,
) -> Result<Summarized, JsValue> {
    let config = &call.config;
    // What must stay leaves no room for a summary beside it: the target is missed anyway,
    // and a summary of what may go still saves tokens (`overBudget`); unless the config asks
    // for an error, or a summary would save nothing: then what truncate does.
    let squeezed = plan.limit - wrapping - 1.0 < 1.0;
    if squeezed && config.on_over_budget != OnOverBudget::Error && plan.over_budget_limit > 0.0 {
        plan.limit = plan.over_budget_limit;
        plan.target_tokens = plan.limit;
    }
    if plan.limit < 0.0 {
        let r = crate::fallback(t, config)?;
        return Ok(noted(with_note(call, reading, t, r)?));
    }
    // What the summarizer is asked for: its aim, but no more than is left for the text
    // within the limit (less the wrapping, and a token for the rounding).
    let room = plan.limit - wrapping - 1.0;
    let target = plan.target_tokens.min(room).max(1.0);
    let mut calls = 0;
    let asked = if room < 1.0 {
        // Not even the shortest summary fits beside what must stay: one too large, without
        // asking.
        check_abort(call, "history")?;
        let failure = Failure::TooLarge(wrapping + 1.0, plan.limit);
        failed(call, "history", &failure)?;
        Err(failure)
    } else {
        let input = Input {
            t,
            structure: None,
            indices: &plan.messages,
            previous: &plan.replaces,
        };
        ask(call, reading, "history", input, target, &mut calls).await?
    };
    let failure = match asked {
        Ok(answer) => {
            let summary = summary_message(call, reading, &answer.text);
            let tokens = count_new_message(&summary, call, t.format)?;
            match plan.limit {
                limit if tokens > limit => {
                    let failure = Failure::TooLarge(tokens, limit);
                    failed(call, "history", &failure)?;
                    failure
                }
                _ => {
                    let r = summarize::apply(t, &plan, tokens, config)?;
                    let writings = Writings {
                        written: Array::of1(&summary),
                        summary: summary.clone(),
                        ..Writings::none()
                    };
                    let noted = super::trace::write_note(call, reading, t, &r, &writings)?;
                    let r = noted.unwrap_or(r);
                    let events = core_events(&r);
                    // The summary's event (the first: one for orphans may follow).
                    let e: Object = events.get(0).unchecked_into();
                    set(&e, "kind", "history");
                    set(&e, "summaryTokens", tokens);
                    set(&e, "summarizerCalls", calls);
                    if squeezed && r.over_budget {
                        // (What must stay missed the target by itself: summarized all the same.)
                        set(&e, "overBudget", true);
                    }
                    // (Not its duration: the result is the same for the same input, SPEC §9.10;
                    // `onEvent`'s `summarizeEnd` tells it.)
                    if !answer.usage.is_undefined() {
                        set(&e, "usage", answer.usage.clone());
                    }
                    return Ok((r, writings, events, Some(answer.text)));
                }
            }
        }
        Err(failure) => failure,
    };
    if config.on_summarizer_error == OnSummarizerError::Throw {
        return Err(failure_error(call, &failure));
    }
    let r = crate::fallback(t, config)?;
    let writings = Writings::none();
    let r = super::trace::write_note(call, reading, t, &r, &writings)?.unwrap_or(r);
    let events = Array::of1(&failure_event(call, "history", &failure, "truncate", calls));
    for e in core_events(&r).iter() {
        events.push(&e);
    }
    Ok((r, writings, events, None))
}

/// [`finish`] for a reduction that wrote nothing but, maybe, the current turn's note.
pub fn finish_plain(
    call: &Call,
    reading: &Reading,
    t: &Transcript,
    r: Reduction,
    started: f64,
) -> Result<Finished, JsValue> {
    let (r, writings, events) = with_note(call, reading, t, r)?;
    finish(call, reading, r, writings, events, started)
}

/// A reduction that wrote nothing else with its current-turn note written (if it has one),
/// the writings that hold it, and its events.
fn with_note(
    call: &Call,
    reading: &Reading,
    t: &Transcript,
    r: Reduction,
) -> Result<(Reduction, Writings, Array), JsValue> {
    let writings = Writings::none();
    let r = super::trace::write_note(call, reading, t, &r, &writings)?.unwrap_or(r);
    let events = core_events(&r);
    Ok((r, writings, events))
}

/// Reports `reduceEnd` for a reduction that ended in `error` after its `reduceStart` (so
/// that they stay a pair): nothing reduced, and the error. Returns the error (not what
/// `onEvent` may throw now).
#[cold]
#[inline(never)]
pub fn ended_with(call: &Call, t: &Transcript, started: f64, error: JsValue) -> JsValue {
    if call.callbacks.ended.get() {
        return error;
    }
    let tokens = t.total_tokens();
    let _ = report(call, "reduceEnd", |e| {
        set(e, "reduced", false);
        set(e, "tokensBefore", tokens);
        set(e, "tokensAfter", tokens);
        set(e, "durationMs", now() - started);
        set(e, "error", error.clone());
    });
    error
}

/// Reports `reduceEnd` and encodes the result.
pub fn finish(
    call: &Call,
    reading: &Reading,
    r: Reduction,
    writings: Writings,
    events: Array,
    started: f64,
) -> Result<Finished, JsValue> {
    call.callbacks.ended.set(true);
    report(call, "reduceEnd", |e| {
        set(e, "reduced", r.reduced);
        set(e, "tokensBefore", r.tokens_before);
        set(e, "tokensAfter", r.tokens_after);
        set(e, "overBudget", r.over_budget);
        set(e, "durationMs", now() - started);
    })?;
    let indices = Indices::of(&r);
    let result = encode_result(reading, &r, &indices, &writings, &events);
    Ok(Finished::new(
        result,
        std::rc::Rc::new((r, indices)),
        reading,
    ))
}
