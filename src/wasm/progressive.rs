//! The driver of `progressive`: the core's state machine says what to do, this does it —
//! previews, digests, summaries written in the input's format — and reports the tokens of
//! what it wrote. The originals of everything rewritten go to `result.offloaded`.

use js_sys::{Array, JsString, Reflect};
use wasm_bindgen::prelude::*;

use super::decode::{count_new_message, hand_orphans, set, Call};
use super::encode::{core_events, Writings};
use super::js::{
    clear_tool_result, compress_run, holds_reload, index_text, listable_units, now,
    offload_message, pick, rewrite_with_summary, skip_for, tool_index, Reading, Written,
};
use super::summarize::{
    ask, check_abort, failed, failure_error, failure_event, finish, finish_plain, report,
    summary_message, Failure, Input,
};
use super::Finished;
use crate::config::OnSummarizerError;
use crate::strategies::progressive::{Action, IndexCandidates, Progressive};
use crate::strategies::Reduction;
use crate::transcript::Transcript;

/// What one action wrote: the new message, and the originals it stands for (by id).
struct Made {
    message: JsValue,
    offload: Option<(String, Array)>,
}

/// A rewritten message and its original: none when the message has no text to carry the
/// note, or when cutting its texts saves nothing — its size is in a call's arguments, an
/// image (`rewriteTexts`) — which is then left as it is, and not counted as rewritten.
fn rewritten(reading: &Reading, w: Written, message: u32) -> Option<Made> {
    let written = w.message();
    (!written.is_undefined()).then(|| Made {
        message: written,
        offload: Some((w.id(), pick(reading, &[message]))),
    })
}

/// A tool run's digest (with `summary`, or undefined for none) and its originals.
fn digest(reading: &Reading, messages: &[u32], preview: u32, summary: JsValue) -> Made {
    let w = compress_run(reading, messages, preview, summary);
    Made {
        message: w.message(),
        offload: Some((w.id(), pick(reading, messages))),
    }
}

/// What `reduce` does for an action: what it made without the summarizer, or the summary it
/// asks for — its kind, and its messages, earlier summaries and target, or the failure it
/// is without asking.
enum Step<'a> {
    Made(Option<Made>),
    Summary(&'static str, Result<(&'a [u32], &'a [u32], f64), Failure>),
}

/// Records what `action` made and tells the machine its tokens. When it made nothing, or
/// something over the action's limit ([`Progressive::limit`]), the action is skipped:
/// `Some(tokens)` in the second case.
fn record(
    p: &mut Progressive,
    action: &Action,
    made: Option<Made>,
    call: &Call,
    t: &Transcript,
    writings: &mut Writings,
    cap: f64,
) -> Result<Option<f64>, JsValue> {
    let Some(made) = made else {
        p.skip();
        return Ok(None);
    };
    let tokens = count_new_message(&made.message, call, t.format)?;
    if tokens > p.limit(action).min(cap) {
        p.skip();
        return Ok(Some(tokens));
    }
    if let Action::SummarizeRounds { .. } = action {
        writings.summary = made.message.clone();
    }
    match made.offload {
        Some((id, originals)) => {
            set(&writings.offloaded, &id, originals);
            writings.offload_ids.push(&JsValue::from(id));
        }
        None => {
            writings.offload_ids.push(&JsValue::UNDEFINED);
        }
    }
    writings.written.push(&made.message);
    p.done(tokens);
    Ok(None)
}

/// `progressive` without a summarizer (`reduceSync`): stages 1–3 and 5 and, if needed,
/// truncation. It is [`reduce`], which without a summarizer asks nothing and never waits:
/// one poll finishes it. (One loop for both: the module carries it once.)
pub fn reduce_sync(call: &Call, t: &Transcript, reading: &Reading) -> Result<Finished, JsValue> {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    let reducing = std::pin::pin!(reduce(call, t, reading, 0.0));
    match reducing.poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(result) => result,
        // (Not reached: without a summarizer no stage asks one. An error, not a trap, if so.)
        Poll::Pending => Err(crate::error::ReduceError::new(
            crate::error::ErrorCode::SummarizerRequiresAsync,
            "progressive asked for a summarizer in reduceSync: use `await reduce(messages, config)`",
        )
        .into()),
    }
}

/// `progressive` (`reduce`; `reduceSync` through [`reduce_sync`]): stages 1–7, those that
/// summarize when there is a summarizer.
/// `wrapping`: the summary message's ([`super::summarize::wrapping`]).
pub async fn reduce(
    call: &Call,
    t: &Transcript,
    reading: &Reading,
    wrapping: f64,
) -> Result<Finished, JsValue> {
    let config = &call.config;
    let started = now();
    report(call, "reduceStart", |e| {
        set(e, "strategy", "progressive");
        set(e, "messages", t.len() as u32);
        set(e, "tokens", t.total_tokens());
    })?;
    // No trigger fires and there are no orphans: nothing to do.
    if !crate::should_reduce(t, config) {
        return finish_plain(call, reading, t, Reduction::unchanged(t), started);
    }
    let mut p = Progressive::new(t, config);
    hand_orphans(reading, p.structure());
    let mut writings = Writings::none();
    // The failed summaries' events, each with the number of the core's events before it
    // (those of the stages closed when it failed: `result.events` in the order they ran).
    let (failures, places) = (Array::new(), Array::new());
    // The summarizer is asked for no more than `summaryMaxTokens` of text (SPEC §4, §6), and
    // a round summary or a rewritten message with more is too large (the config counts a
    // round summary's tag: see `Started::read`; `cap` a rewrite's note); a tool run's summary
    // has only to be smaller than the run.
    let text_max = config
        .summary_max_tokens
        .map_or(f64::INFINITY, |max| max - wrapping);
    // (And a token for the rounding.)
    let wrapping = wrapping + 1.0;
    // A failed summary: throw, or note it and go on without it; after a timeout the
    // summarizer is asked nothing more (`timeoutMs` bounds the whole reduction's wait by
    // about itself, not by itself for each summary).
    let on_failure =
        |p: &mut Progressive, kind: &str, failure: Failure, fallback: &str, calls: u32| {
            if config.on_summarizer_error == OnSummarizerError::Throw {
                return Err(failure_error(call, &failure));
            }
            failures.push(&failure_event(call, kind, &failure, fallback, calls));
            places.push(&JsValue::from(p.events_so_far() as u32));
            if matches!(failure, Failure::Timeout) {
                p.stop_summarizing();
            }
            Ok::<(), JsValue>(())
        };
    // The summarizer's calls of the summaries each stage took, by the place of its event (a
    // failed summary's are in its own event).
    let mut stage_calls: Vec<(u32, u32)> = Vec::new();
    let preview = config.preview_chars as u32;
    loop {
        let action = p.next_action();
        // The calls this action made.
        let mut calls = 0;
        // The most a rewritten message may have (its note and `text_max`).
        let mut cap = f64::INFINITY;
        // A round summary's messages: earlier summaries, and the rest.
        let (mut previous, mut rounds) = (Vec::new(), Vec::new());
        // What the action made without the summarizer, or what to ask it for.
        let step = match &action {
            Action::Finish => break,
            Action::Offload { message } => {
                let tokens = t.messages[*message as usize].tokens;
                let w = offload_message(reading, *message, preview, tokens);
                Step::Made(rewritten(reading, w, *message))
            }
            Action::Clear { message } => {
                let tokens = t.messages[*message as usize].tokens;
                let w = clear_tool_result(reading, *message, tokens);
                Step::Made(rewritten(reading, w, *message))
            }
            // (What the model asked back stays as it is: a digest of it would have it reload
            // again.)
            Action::CompressRun { messages } if holds_reload(reading, messages) => Step::Made(None),
            Action::CompressRun { messages } if !p.summarizing() => {
                Step::Made(Some(digest(reading, messages, preview, JsValue::UNDEFINED)))
            }
            Action::CompressRun { messages } => {
                let target = messages
                    .iter()
                    .map(|&i| t.messages[i as usize].tokens)
                    .sum::<f64>()
                    * 0.2;
                // (Its text is asked for at most `summaryMaxTokens`, as every summary.)
                let target = target.ceil().max(1.0).min(text_max);
                Step::Summary("toolRun", Ok((messages, &[][..], target)))
            }
            Action::SummarizeRounds {
                messages,
                target_tokens,
            } => {
                // Earlier summaries (single mode) go as `previousSummary`.
                for &i in messages {
                    if t.messages[i as usize].is_summary() {
                        previous.push(i);
                    } else {
                        rounds.push(i);
                    }
                }
                // What is left for the text within the limit, less the wrapping and a token
                // for the rounding (a summary of the tokens it was asked for was over
                // summaryMaxTokens by those of the wrapping). With no room for a token, it is
                // a summary too large without asking (as `summarize`: the summarizer was asked
                // in every reduction of a history left over budget).
                let limit = p.limit(&action);
                let room = limit - wrapping;
                if room < 1.0 {
                    check_abort(call, "round")?;
                    let failure = Failure::TooLarge(wrapping, limit);
                    failed(call, "round", &failure)?;
                    Step::Summary("round", Err(failure))
                } else {
                    let target = (target_tokens - wrapping).max(1.0).min(room.floor());
                    Step::Summary("round", Ok((&rounds, &previous, target)))
                }
            }
            Action::Rewrite {
                message,
                kind,
                target_tokens,
            } => {
                // A message no rewrite can shorten (its note leaves no room for a token of
                // text: a short tool result) is not sent to the summarizer, and one that can is
                // asked for no more than its note leaves (a token less, for the rounding). It
                // was, and failed as too large every time, in every reduction of a history
                // left over budget (SPEC §9.9: a second reduction called the summarizer again).
                let bare = rewrite_with_summary(reading, *message, &JsString::from("")).message();
                let room = if bare.is_undefined() {
                    0.0
                } else {
                    let note = count_new_message(&bare, call, t.format)?;
                    cap = note + text_max;
                    p.limit(&action).min(cap) - note - 1.0
                };
                if room < 1.0 {
                    Step::Made(None)
                } else {
                    let target = target_tokens.min(room.floor());
                    Step::Summary(
                        kind.name(),
                        Ok((std::slice::from_ref(message), &[], target)),
                    )
                }
            }
        };
        // The kind of the summary `made` holds, if any.
        let mut asked = None;
        let made = match step {
            Step::Made(made) => made,
            Step::Summary(kind, question) => {
                let outcome = match question {
                    Ok((indices, previous, target)) => {
                        let input = Input {
                            t,
                            structure: Some(p.structure()),
                            indices,
                            previous,
                        };
                        ask(call, reading, kind, input, target, &mut calls).await?
                    }
                    Err(failure) => Err(failure),
                };
                match outcome {
                    Ok(answer) => {
                        asked = Some(kind);
                        match &action {
                            Action::CompressRun { messages } => {
                                Some(digest(reading, messages, preview, answer.text.into()))
                            }
                            Action::Rewrite { message, .. } => {
                                let w = rewrite_with_summary(reading, *message, &answer.text);
                                rewritten(reading, w, *message)
                            }
                            // (What it covers is `result.summarized`, not offloaded: SPEC §8
                            // counts each input index once, and the input holds them.)
                            _ => Some(Made {
                                message: summary_message(call, reading, &answer.text),
                                offload: None,
                            }),
                        }
                    }
                    Err(failure) => match &action {
                        // A tool run is compressed without its summary.
                        Action::CompressRun { messages } => {
                            on_failure(&mut p, kind, failure, "digest", calls)?;
                            Some(digest(reading, messages, preview, JsValue::UNDEFINED))
                        }
                        _ => {
                            on_failure(&mut p, kind, failure, "none", calls)?;
                            None
                        }
                    },
                }
            }
        };
        // (The stage under way has the next event.)
        let stage = p.events_so_far() as u32;
        match (
            record(&mut p, &action, made, call, t, &mut writings, cap)?,
            asked,
        ) {
            // A summary over its limit is a failed one.
            (Some(tokens), Some(kind)) => {
                let failure = Failure::TooLarge(tokens, p.limit(&action).min(cap));
                failed(call, kind, &failure)?;
                on_failure(&mut p, kind, failure, "none", calls)?;
            }
            (None, Some(_)) => match stage_calls.iter_mut().find(|(s, _)| *s == stage) {
                Some((_, n)) => *n += calls,
                None => stage_calls.push((stage, calls)),
            },
            _ => {}
        }
    }
    if let Some(c) = p.index_candidates() {
        write_index(&mut p, &c, call, reading, t, &mut writings)?;
    }
    let r = p.finish()?;
    let events = core_events(&r);
    for (at, n) in stage_calls {
        set(&events.get(at).unchecked_into(), "summarizerCalls", n);
    }
    for (k, failed) in failures.iter().enumerate() {
        // (After the failures before it.)
        let at = places.get(k as u32).as_f64().unwrap_or(0.0) as u32 + k as u32;
        events.splice(at, 0, &failed);
    }
    finish(call, reading, r, writings, events, started)
}

/// How many characters of lines are written at most for each token of the index's budget:
/// more than fit (a line of the index has some 3.5 characters a token), never every call of
/// a long history.
const INDEX_CHARS_PER_TOKEN: f64 = 5.0;

/// Writes the index of dropped tool calls the core asks for (`c`) in at most its budget, the
/// oldest lines giving way until it fits; the units whose lines stay leave, their originals
/// offloaded under the ids the index names (an earlier digest's are stored already). None
/// is written when no unit's line fits or none gets one (`listableUnits`).
fn write_index(
    p: &mut Progressive,
    c: &IndexCandidates,
    call: &Call,
    reading: &Reading,
    t: &Transcript,
    writings: &mut Writings,
) -> Result<(), JsValue> {
    // (One call for every unit: a long history offers thousands.)
    let (mut messages, mut ends) = (Vec::with_capacity(c.messages.len()), Vec::new());
    for k in listable_units(reading, &c.messages, &c.ends) {
        let k = k as usize;
        let start = if k == 0 { 0 } else { c.ends[k - 1] as usize };
        messages.extend_from_slice(&c.messages[start..c.ends[k] as usize]);
        ends.push(messages.len() as u32);
    }
    let count = ends.len() as u32;
    if count == 0 {
        return Ok(());
    }
    let tag = &call.config.summary_tag;
    let mut chars = c.budget * INDEX_CHARS_PER_TOKEN;
    let mut w = tool_index(reading, &messages, &ends, &c.earlier, tag, chars);
    let mut widened = false;
    let mut skip = 0u32;
    let (mut first, mut all) = (w.first(), w.count());
    loop {
        // The first unit whose line stays.
        let from = first + skip.saturating_sub(w.earlier());
        if skip >= all || from >= count {
            return Ok(());
        }
        let message = summary_message(call, reading, &index_text(&w, skip));
        let tokens = count_new_message(&message, call, t.format)?;
        if tokens > c.budget {
            // The oldest lines give way, about as many characters as the excess takes.
            skip = skip_for(&w, skip, c.budget / tokens);
            continue;
        }
        // A counter that counts fewer tokens a character than the lines were written for
        // leaves room: once, more of the older units get a line.
        if skip == 0 && first > 0 && !widened && tokens < 0.9 * c.budget {
            widened = true;
            chars *= 1.2 * c.budget / tokens;
            w = tool_index(reading, &messages, &ends, &c.earlier, tag, chars);
            (first, all) = (w.first(), w.count());
            continue;
        }
        let (ids, listed) = (w.ids(), Array::new());
        let listed_from = from.checked_sub(1).map_or(0, |k| ends[k as usize] as usize);
        let mut start = listed_from;
        for k in from..count {
            let end = ends[k as usize] as usize;
            // (An id, or "" for an earlier digest, whose originals are stored already.)
            let id = ids.get(k - first);
            if id.is_truthy() {
                let _ = Reflect::set(
                    &writings.offloaded,
                    &id,
                    &pick(reading, &messages[start..end]),
                );
                listed.push(&id);
            }
            start = end;
        }
        while writings.offload_ids.length() < writings.written.length() {
            writings.offload_ids.push(&JsValue::UNDEFINED);
        }
        writings.offload_ids.push(&listed);
        writings.written.push(&message);
        p.indexed(tokens, &messages[listed_from..], &c.earlier);
        return Ok(());
    }
}
