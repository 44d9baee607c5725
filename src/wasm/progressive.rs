//! The driver of `progressive`: the core's state machine says what to do, this does it —
//! previews, digests, summaries written in the input's format — and reports the tokens of
//! what it wrote. The originals of everything rewritten go to `result.offloaded`.

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::decode::{count_new_message, set, Call};
use super::encode::{core_events, Writings};
use super::js::{
    compress_run, make_message, now, offload_id, offload_message, pick, rewrite_with_summary,
    wrap_summary, Reading, Written,
};
use super::summarize::{
    ask, failure_error, failure_event, finish, finish_plain, report, role_name, Failure,
};
use crate::config::OnSummarizerError;
use crate::strategies::progressive::{Action, Progressive};
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

/// The actions that need no summarizer: previews and digests.
fn light(reading: &Reading, t: &Transcript, call: &Call, action: &Action) -> Option<Made> {
    let preview = call.config.preview_chars as u32;
    match action {
        Action::Offload { message } => {
            let tokens = t.messages[*message as usize].tokens;
            let w = offload_message(reading, *message, preview, tokens);
            rewritten(reading, w, *message)
        }
        Action::CompressRun { messages } => {
            let w = compress_run(reading, messages, preview, JsValue::UNDEFINED);
            Some(Made {
                message: w.message(),
                offload: Some((w.id(), pick(reading, messages))),
            })
        }
        _ => None,
    }
}

/// Records what an action made and tells the machine its tokens.
fn record(
    p: &mut Progressive,
    made: Made,
    call: &Call,
    t: &Transcript,
    writings: &Writings,
) -> Result<(), JsValue> {
    let tokens = count_new_message(&made.message, call, t.format)?;
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
    Ok(())
}

/// After `reduceStart`: the result when no trigger fires and there are no orphans (nothing
/// to do), else `None`.
fn unchanged_or_start(
    call: &Call,
    t: &Transcript,
    reading: &Reading,
    started: f64,
) -> Result<Option<JsValue>, JsValue> {
    report(call, "reduceStart", |e| {
        set(e, "strategy", "progressive");
        set(e, "messages", t.len() as u32);
        set(e, "tokens", t.total_tokens());
    })?;
    if !crate::should_reduce(t, &call.config) {
        return finish_plain(call, reading, &Reduction::unchanged(t), started).map(Some);
    }
    Ok(None)
}

/// `progressive` without a summarizer (`reduceSync`): stages 1–3 and, if needed, truncation.
pub fn reduce_sync(call: &Call, t: &Transcript, reading: &Reading) -> Result<JsValue, JsValue> {
    let started = now();
    if let Some(result) = unchanged_or_start(call, t, reading, started)? {
        return Ok(result);
    }
    let mut p = Progressive::new(t, &call.config);
    let writings = Writings::none();
    loop {
        let action = p.next_action();
        if action == Action::Finish {
            break;
        }
        match light(reading, t, call, &action) {
            Some(made) => record(&mut p, made, call, t, &writings)?,
            None => p.skip(),
        }
    }
    let r = p.finish()?;
    let events = core_events(&r);
    finish(call, reading, &r, writings, events, started)
}

/// `progressive` with the summarizer (`reduce`): stages 1–6.
pub async fn reduce(call: &Call, t: &Transcript, reading: &Reading) -> Result<JsValue, JsValue> {
    let config = &call.config;
    let started = now();
    if let Some(result) = unchanged_or_start(call, t, reading, started)? {
        return Ok(result);
    }
    let mut p = Progressive::new(t, config);
    let mut writings = Writings::none();
    let failures = Array::new();
    // A failed summary: throw, or note it and go on without it.
    let on_failure = |kind: &str, failure: Failure, fallback: &str| -> Result<(), JsValue> {
        if config.on_summarizer_error == OnSummarizerError::Throw {
            return Err(failure_error(call, &failure));
        }
        failures.push(&failure_event(call, kind, &failure, fallback));
        Ok(())
    };
    loop {
        let action = p.next_action();
        let made = match &action {
            Action::Finish => break,
            Action::Offload { .. } => light(reading, t, call, &action),
            Action::CompressRun { messages } => {
                let target = messages
                    .iter()
                    .map(|&i| t.messages[i as usize].tokens)
                    .sum::<f64>()
                    * 0.2;
                let summary = if config.has_summarizer {
                    match ask(
                        call,
                        reading,
                        "toolRun",
                        messages,
                        None,
                        target.ceil().max(1.0),
                    )
                    .await?
                    {
                        Ok(answer) => JsValue::from(answer.text),
                        Err(failure) => {
                            on_failure("toolRun", failure, "digest")?;
                            JsValue::UNDEFINED
                        }
                    }
                } else {
                    JsValue::UNDEFINED
                };
                let w = compress_run(reading, messages, config.preview_chars as u32, summary);
                Some(Made {
                    message: w.message(),
                    offload: Some((w.id(), pick(reading, messages))),
                })
            }
            Action::SummarizeRounds {
                messages,
                target_tokens,
            } => match ask(call, reading, "round", messages, None, *target_tokens).await? {
                Ok(answer) => {
                    let text = wrap_summary(&answer.text, &config.summary_tag);
                    let summary = make_message(reading, role_name(config.summary_role), &text);
                    writings.summary = summary.clone();
                    let originals = pick(reading, messages);
                    Some(Made {
                        message: summary,
                        offload: Some((offload_id(&originals), originals)),
                    })
                }
                Err(failure) => {
                    on_failure("round", failure, "none")?;
                    None
                }
            },
            Action::Rewrite {
                message,
                kind,
                target_tokens,
            } => match ask(
                call,
                reading,
                kind.name(),
                &[*message],
                None,
                *target_tokens,
            )
            .await?
            {
                Ok(answer) => {
                    let w = rewrite_with_summary(reading, *message, &answer.text);
                    rewritten(reading, w, *message)
                }
                Err(failure) => {
                    on_failure(kind.name(), failure, "none")?;
                    None
                }
            },
        };
        match made {
            Some(made) => record(&mut p, made, call, t, &writings)?,
            None => p.skip(),
        }
    }
    let r = p.finish()?;
    let events = failures;
    for e in core_events(&r).iter() {
        events.push(&e);
    }
    finish(call, reading, &r, writings, events, started)
}
