//! The asynchronous half of `summarize`: ask the core what to summarise, await the user's
//! summarizer, then let the core build the reduction — or fall back to `truncate`, or
//! throw, as `onSummarizerError` says. A failing summarizer never loses a message.

use js_sys::{Array, Object};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::decode::{count_new_message, set, Call};
use super::encode::{core_events, encode_result};
use super::js::{
    call_summarizer, emit, make_message, now, pick, summarizer_error, summary_text, wrap_summary,
    Outcome, Reading,
};
use crate::config::{OnSummarizerError, SummaryRole};
use crate::error::{ErrorCode, ReduceError};
use crate::strategies::{summarize, Reduction};
use crate::transcript::Transcript;
use crate::{plan_summary, SummaryStep};

/// Calls `config.onEvent` with `{ type, ...fields }`.
fn report(call: &Call, kind: &str, fields: impl FnOnce(&Object)) -> Result<(), JsValue> {
    if call.callbacks.on_event.is_function() {
        let event = Object::new();
        set(&event, "type", kind);
        fields(&event);
        emit(&call.callbacks.on_event, &event)?;
    }
    Ok(())
}

fn role_name(role: SummaryRole) -> &'static str {
    match role {
        SummaryRole::User => "user",
        SummaryRole::System => "system",
        SummaryRole::Assistant => "assistant",
    }
}

/// Why a summary was not used.
enum Failure {
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

    fn message(&self, timeout: Option<f64>) -> String {
        match self {
            Failure::Rejected(e) => format!("the summarizer rejected: {}", describe_error(e)),
            Failure::Timeout => format!(
                "the summarizer did not answer within timeoutMs ({} ms)",
                timeout.unwrap_or_default()
            ),
            Failure::Invalid(e) => describe_error(e),
            Failure::TooLarge(tokens, max) => format!(
                "the summary has {tokens} tokens, over summaryMaxTokens ({max}); ask the summarizer for less, or raise summaryMaxTokens"
            ),
        }
    }

    fn cause(&self) -> JsValue {
        match self {
            Failure::Rejected(e) | Failure::Invalid(e) => e.clone(),
            _ => JsValue::UNDEFINED,
        }
    }
}

fn describe_error(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "a value that is not an Error".to_string())
}

/// `reduce` for a config with a summarizer.
pub async fn reduce_with_summarizer(
    call: &Call,
    t: &Transcript,
    reading: &Reading,
) -> Result<JsValue, JsValue> {
    let config = &call.config;
    let started = now();
    report(call, "reduceStart", |e| {
        set(e, "strategy", "summarize");
        set(e, "messages", t.len() as u32);
        set(e, "tokens", t.total_tokens());
    })?;
    let plan = match plan_summary(t, config)? {
        SummaryStep::Done(r) => {
            return finish(
                call,
                reading,
                &r,
                &JsValue::UNDEFINED,
                core_events(&r),
                started,
            )
        }
        SummaryStep::Summarize(plan) => plan,
    };

    let request = Object::new();
    set(&request, "kind", "history");
    set(&request, "messages", pick(reading, &plan.messages));
    if !plan.replaces.is_empty() {
        let previous: Vec<String> = plan
            .replaces
            .iter()
            .map(|&i| summary_text(reading, i, &config.summary_tag))
            .collect();
        set(&request, "previousSummary", previous.join("\n\n"));
    }
    set(&request, "targetTokens", plan.target_tokens);
    report(call, "summarizeStart", |e| {
        set(e, "kind", "history");
        set(e, "messages", plan.messages.len() as u32);
        set(e, "targetTokens", plan.target_tokens);
    })?;
    let timeout = config.timeout_ms.map_or(JsValue::UNDEFINED, JsValue::from);
    let promise = call_summarizer(
        &call.callbacks.summarizer,
        &request,
        timeout,
        &call.callbacks.signal,
    );
    let outcome: Outcome = JsFuture::from(promise).await?.unchecked_into();

    let failure = match outcome.status().as_str() {
        "ok" => {
            let text = wrap_summary(&outcome.text().unwrap_or_default(), &config.summary_tag);
            let summary = make_message(reading, role_name(config.summary_role), &text);
            let tokens = count_new_message(&summary, call, t.format)?;
            match config.summary_max_tokens {
                Some(max) if tokens > max => Failure::TooLarge(tokens, max),
                _ => {
                    let r = summarize::apply(t, &plan, tokens, config)?;
                    let events = core_events(&r);
                    let usage = outcome.usage();
                    let duration = outcome.duration_ms();
                    for e in events.iter() {
                        let e: Object = e.unchecked_into();
                        set(&e, "kind", "history");
                        set(&e, "summaryTokens", tokens);
                        set(&e, "durationMs", duration);
                        if !usage.is_undefined() {
                            set(&e, "usage", usage.clone());
                        }
                    }
                    report(call, "summarizeEnd", |e| {
                        set(e, "kind", "history");
                        set(e, "summaryTokens", tokens);
                        set(e, "durationMs", duration);
                        set(e, "usage", usage.clone());
                    })?;
                    return finish(call, reading, &r, &summary, events, started);
                }
            }
        }
        "aborted" => {
            let e = ReduceError::new(
                ErrorCode::Aborted,
                "the reduction was aborted through config.signal; the input is untouched",
            );
            return Err(summarizer_error(
                e.code.as_str(),
                &e.message,
                &outcome.error(),
            ));
        }
        "timeout" => Failure::Timeout,
        "rejected" => Failure::Rejected(outcome.error()),
        _ => Failure::Invalid(outcome.error()),
    };

    let message = failure.message(config.timeout_ms);
    report(call, "summarizeFailed", |e| {
        set(e, "kind", "history");
        set(e, "reason", failure.reason());
        set(e, "message", message.as_str());
    })?;
    if config.on_summarizer_error == OnSummarizerError::Throw {
        return Err(summarizer_error(
            failure.code().as_str(),
            &message,
            &failure.cause(),
        ));
    }
    let r = crate::fallback(t, config)?;
    let failed = Object::new();
    set(&failed, "type", "summarizeFailed");
    set(&failed, "kind", "history");
    set(&failed, "reason", failure.reason());
    set(&failed, "message", message.as_str());
    set(&failed, "fallback", "truncate");
    let events = Array::of1(&failed);
    for e in core_events(&r).iter() {
        events.push(&e);
    }
    finish(call, reading, &r, &JsValue::UNDEFINED, events, started)
}

fn finish(
    call: &Call,
    reading: &Reading,
    r: &Reduction,
    summary: &JsValue,
    events: Array,
    started: f64,
) -> Result<JsValue, JsValue> {
    report(call, "reduceEnd", |e| {
        set(e, "reduced", r.reduced);
        set(e, "tokensBefore", r.tokens_before);
        set(e, "tokensAfter", r.tokens_after);
        set(e, "durationMs", now() - started);
    })?;
    Ok(encode_result(reading, r, summary, &events))
}
