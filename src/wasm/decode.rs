//! Reading the arguments: options into a validated [`Config`], messages into a
//! [`Transcript`] (with the token count of each), errors into `ReduceError`.

use std::rc::Rc;

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::estimating::{self, estimate_decisive, Estimating};
use super::js::{
    option_entries, pick, read_messages, read_options, remember, Reading, ReduceError,
};
use crate::config::{Config, OptionValue};
use crate::error;
use crate::estimate::Estimator;
use crate::formats::{Format, FormatChoice};
use crate::structure::Structure;
use crate::transcript::{Link, LinkKind, MessageInfo, Role, Transcript};

impl From<error::ReduceError> for JsValue {
    fn from(e: error::ReduceError) -> JsValue {
        let index = e
            .index
            .map_or(JsValue::UNDEFINED, |i| JsValue::from(i as u32));
        let field = e.field.as_deref().map_or(JsValue::UNDEFINED, JsValue::from);
        ReduceError::new(e.code.as_str(), &e.message, index, field).into()
    }
}

/// The JavaScript callbacks and values of a config that the core does not hold.
#[derive(Default)]
pub struct Callbacks {
    pub count_tokens: JsValue,
    pub token_counts: JsValue,
    pub summarizer: JsValue,
    pub on_event: JsValue,
    signal: JsValue,
    /// `config.store`: where every offload is written (`js/offload.js` `storeOffloads`).
    pub store: JsValue,
    /// `config.summaryCache`: summaries kept by the content they cover (`js/cache.js`).
    pub summary_cache: JsValue,
    /// Whether `reduceEnd` went to `onEvent` (what it throws then is not to be followed by
    /// another, `summarize::ended_with`).
    pub ended: std::cell::Cell<bool>,
}

impl Callbacks {
    /// `config.signal`, if given. `readOptions` checked its shape; unchecked here, as
    /// another realm's signal is no instance of this realm's `AbortSignal`.
    pub fn signal(&self) -> Option<&web_sys::AbortSignal> {
        self.signal.is_object().then(|| self.signal.unchecked_ref())
    }
}

/// What a call needs: the validated config and its callbacks.
pub struct Call {
    pub config: Config,
    pub callbacks: Callbacks,
    /// A `ChatHistory`'s `prepare()`: what it knows of its messages.
    pub trust: Option<Trust>,
}

/// The first `len` messages of a `ChatHistory`'s working history are those `reading` read,
/// the same objects, not changed since (the history pushed them; changing one in place
/// breaks its contract: docs/api.md): their reading is taken over without a look at them.
pub struct Trust {
    pub reading: Reading,
    pub len: u32,
}

/// An object option's value (`estimatorWeights`; `signal` is checked in `readOptions`): its
/// entries, each a number, a string, or neither.
fn object_value(config: &JsValue, key: &'static str, v: JsValue) -> Result<OptionValue, JsValue> {
    let mut entries = Vec::new();
    for entry in option_entries(config, key, &v)?.iter() {
        let pair = Array::from(&entry);
        let name = pair.get(0).as_string().unwrap_or_default();
        let value = pair.get(1);
        let value = match value.as_f64() {
            Some(n) => OptionValue::Number(n),
            None if value.is_string() => OptionValue::Text(value.as_string().unwrap_or_default()),
            None => OptionValue::Other("not a number"),
        };
        entries.push((name, value));
    }
    Ok(OptionValue::Object(entries))
}

/// Kinds of option values as `readOptions` reports them.
mod kind {
    pub use crate::contract::{
        O_ARRAY as ARRAY, O_BIGINT as BIGINT, O_BOOL as BOOL, O_FUNCTION as FUNCTION,
        O_MISSING as MISSING, O_NUMBER as NUMBER, O_OBJECT as OBJECT, O_SYMBOL as SYMBOL,
        O_TEXT as TEXT, O_THREW as THREW,
    };
}

/// Reads and validates `config`. `need_trigger`: whether a missing trigger is an error.
/// Every option is read once, all in one call to `readOptions`; the callbacks are kept as
/// read.
pub fn decode_config(config: &JsValue, need_trigger: bool) -> Result<Call, JsValue> {
    if config.is_undefined() || config.is_null() {
        let config = Config::parse_with(need_trigger, |_| Ok(OptionValue::Missing))?;
        return Ok(Call {
            config,
            callbacks: Callbacks::default(),
            trust: None,
        });
    }
    if !config.is_object() || config.is_function() {
        return Err(error::ReduceError::config(
            "config",
            "config must be an object such as { maxTokens: 8000 }",
        )
        .into());
    }
    let keys = &Config::OPTION_NAMES;
    // (One kind more: `readOptions` marks there a name that is not an option.)
    let mut kinds = vec![kind::MISSING; keys.len() + 1];
    let mut numbers = vec![0.0; keys.len()];
    let values = read_options(config, &mut kinds, &mut numbers);
    if kinds[keys.len()] != kind::MISSING {
        let name = values
            .get(keys.len() as u32)
            .as_string()
            .unwrap_or_default();
        return Err(Config::unknown_option(&name).into());
    }
    let mut js_error: Option<JsValue> = None;
    let mut callbacks = Callbacks::default();
    let mut next = 0;
    let parsed = Config::parse_with(need_trigger, |key| {
        // The parser asks in the recorded order (a native test checks it: every key is
        // among those `readOptions` read).
        let at = if keys.get(next) == Some(&key) {
            Some(next)
        } else {
            keys.iter().position(|k| *k == key)
        };
        let unreadable = |js_error: &mut Option<JsValue>, e: JsValue| {
            *js_error = Some(e);
            error::ReduceError::config(key, "unreadable option")
        };
        let Some(i) = at else {
            return Ok(OptionValue::Missing);
        };
        next = i + 1;
        let k = kinds[i];
        let slot = callback_slot(&mut callbacks, key);
        let raw = if slot.is_some() || matches!(k, kind::TEXT | kind::OBJECT | kind::THREW) {
            values.get(i as u32)
        } else {
            JsValue::UNDEFINED
        };
        if let Some(slot) = slot {
            *slot = raw.clone();
        }
        Ok(match k {
            kind::MISSING => OptionValue::Missing,
            kind::BOOL => OptionValue::Bool(numbers[i] != 0.0),
            kind::NUMBER => OptionValue::Number(numbers[i]),
            kind::TEXT => OptionValue::Text(raw.as_string().unwrap_or_default()),
            kind::FUNCTION => OptionValue::Function,
            kind::ARRAY => OptionValue::Array,
            kind::OBJECT => {
                object_value(config, key, raw).map_err(|e| unreadable(&mut js_error, e))?
            }
            kind::BIGINT => OptionValue::Other("a bigint"),
            kind::SYMBOL => OptionValue::Other("a symbol"),
            kind::THREW => return Err(unreadable(&mut js_error, raw)),
            _ => OptionValue::Other("an unsupported value"),
        })
    });
    match (parsed, js_error) {
        (_, Some(e)) => Err(e),
        (Err(e), None) => Err(e.into()),
        (Ok(config), None) => Ok(Call {
            config,
            callbacks,
            trust: None,
        }),
    }
}

/// Where the value of option `key` is kept as given, when it is a callback (a function,
/// the counts, the signal).
fn callback_slot<'a>(callbacks: &'a mut Callbacks, key: &str) -> Option<&'a mut JsValue> {
    Some(match key {
        "countTokens" => &mut callbacks.count_tokens,
        "tokenCounts" => &mut callbacks.token_counts,
        "summarizer" => &mut callbacks.summarizer,
        "onEvent" => &mut callbacks.on_event,
        "signal" => &mut callbacks.signal,
        "store" => &mut callbacks.store,
        "summaryCache" => &mut callbacks.summary_cache,
        _ => return None,
    })
}

pub fn set(target: &Object, key: &str, value: impl Into<JsValue>) {
    set_value(target, key, &value.into());
}

/// [`set`]'s body, once (not once per type of value).
#[inline(never)]
fn set_value(target: &Object, key: &str, value: &JsValue) {
    // Setting a data property on a fresh plain object cannot fail.
    let _ = Reflect::set(target, &JsValue::from_str(key), value);
}

/// Reads `messages` into a transcript, estimating what has no exact count. The reading
/// keeps the message objects for the result.
pub fn decode_messages(
    messages: &JsValue,
    call: &Call,
) -> Result<(Rc<Transcript>, Reading), JsValue> {
    decode_with(messages, call, None, false)
}

/// [`decode_messages`] for a reduction: what it does not need may stay unestimated until
/// the result's `tokensBefore` is read (see `estimating`), unless `onEvent` is to be told
/// the tokens as the reduction starts.
pub fn decode_for_reduction(
    messages: &JsValue,
    call: &Call,
) -> Result<(Rc<Transcript>, Reading), JsValue> {
    decode_with(messages, call, None, !call.callbacks.on_event.is_function())
}

/// `t` with each message that carries orphans beside other content (SPEC §9.4: a
/// `Structure::STRAY`) counted as the copy without them that a reduction outputs, so that
/// what it keeps is decided and counted as it stands (`Transcript::uncounted` keeps the
/// input's total). Estimated counts only: a caller's (`countTokens`, `tokenCounts`) are of
/// the original, by its index, and stand. (A reading with orphans is never left partly
/// unestimated: see `decode_with`.) A new transcript, not memoised.
#[inline(never)]
pub fn as_output(
    t: Rc<Transcript>,
    reading: &Reading,
    call: &Call,
) -> Result<Rc<Transcript>, JsValue> {
    let counted =
        call.callbacks.count_tokens.is_function() || Array::is_array(&call.callbacks.token_counts);
    if counted || reading.pending() {
        return Ok(t);
    }
    // (The structure kept for these messages: the reduction that follows takes it.)
    let (version, base) = (reading.version(), reading.base_version());
    let s = super::memo::structure(version, base, call.config.calibration, &t);
    if s.orphans == 0 {
        return Ok(t);
    }
    let mut stray = Vec::new();
    for (i, &mark) in s.orphan.iter().enumerate().take(t.len()) {
        if mark == Structure::STRAY {
            stray.push(i as u32);
        }
    }
    if stray.is_empty() {
        return Ok(t);
    }
    let mut out = (*t).clone();
    hand_orphans(reading, &s);
    let copies = pick(reading, &stray);
    for (k, &i) in stray.iter().enumerate() {
        let m = &mut out.messages[i as usize];
        let tokens = count_new_message(&copies.get(k as u32), call, t.format)?;
        out.uncounted += m.tokens - tokens;
        m.tokens = tokens;
    }
    Ok(Rc::new(out))
}

/// Hands `reading` the orphan links of `s`, the structure of its transcript, unless it has
/// them: JavaScript copies a message without its orphans by them (`withoutOrphans`).
pub fn hand_orphans(reading: &Reading, s: &Structure) {
    if !reading.orphans_handed() {
        reading.set_orphans(&s.orphan_links);
    }
}

/// [`hand_orphans`] for a call that has no structure at hand (rare: a result with copies
/// of stray messages, a summary's originals): the structure is made for them.
pub fn hand_orphans_of(reading: &Reading, t: &Transcript) {
    if !reading.orphans_handed() {
        reading.set_orphans(&Structure::of(t).orphan_links);
    }
}

/// The tokens of one message this library wrote (a summary), in `format`, counted as the
/// config counts (`countTokens` or the estimator; `tokenCounts` index the input only).
pub fn count_new_message(message: &JsValue, call: &Call, format: Format) -> Result<f64, JsValue> {
    let (t, _) = decode_with(&Array::of1(message), call, Some(format), false)?;
    Ok(t.total_tokens())
}

fn decode_with(
    messages: &JsValue,
    call: &Call,
    format: Option<Format>,
    decisive: bool,
) -> Result<(Rc<Transcript>, Reading), JsValue> {
    let config = &call.config;
    let input = format.is_none();
    let format = match (format, config.format) {
        (Some(f), _) | (None, FormatChoice::Named(f)) => f.code(),
        (None, FormatChoice::Auto) => AUTO,
    };
    let (length_mode, chars_per_token) = match config.estimator {
        Estimator::Length { chars_per_token } => (true, chars_per_token),
        Estimator::Classes(_) => (false, 4.0),
    };
    let none = JsValue::UNDEFINED;
    let reading = read_messages(
        messages,
        format,
        &config.summary_tag,
        length_mode,
        chars_per_token,
        &count_params(config),
        &call.callbacks.count_tokens,
        if input {
            &call.callbacks.token_counts
        } else {
            &none
        },
        input,
        match &call.trust {
            Some(trust) if input => trust.reading.as_ref(),
            _ => &none,
        },
        call.trust.as_ref().map_or(0, |trust| trust.len),
    )?;
    // A transcript from counts given per call is not memoised (see `memo`).
    let memo = input && reading.keep() && !Array::is_array(&call.callbacks.token_counts);
    let version = reading.version();
    if memo {
        if let Some(t) = super::memo::transcript(version, config.calibration) {
            remember(&reading, &[]);
            return Ok((t, reading));
        }
    }
    let format = Format::ALL
        .get(reading.format_code() as usize)
        .copied()
        .unwrap_or(Format::OpenAi);
    let roles = reading.roles();
    let flags = reading.flags();
    let given = reading.given();
    let mut raw = reading.raw();
    // Counts from the caller's `countTokens` are the model's own: not calibrated.
    let counted = call.callbacks.count_tokens.is_function();
    let est = Estimating::of(config, format, !counted && config.calibration != 1.0);
    // A history that grew: what the transcript of its first messages was, if it was kept.
    let base = memo
        .then(|| super::memo::base_transcript(reading.base_version(), config.calibration))
        .flatten()
        .filter(|t| {
            t.format == format && t.len() == reading.base() as usize && t.len() <= roles.len()
        });
    let mut transcript = Transcript::new(format);
    transcript.messages.reserve(roles.len());
    let known = base.as_ref().map_or(0, |t| t.len());
    if let Some(t) = &base {
        transcript.messages.extend_from_slice(&t.messages);
        transcript.links.extend_from_slice(&t.links);
    }
    // (Slices, not `Vec`s, are indexed and written in this loop: at the inlining threshold
    // of .cargo/config.toml a `Vec`'s indexing and `push` are calls.)
    let (roles, flags, given, raws) = (&*roles, &*flags, &*given, &*raw);
    transcript
        .messages
        .resize(roles.len(), MessageInfo::new(Role::Other, 0.0));
    let messages = transcript.messages.as_mut_slice();
    let (mut missing, mut missed) = (vec![0u32; roles.len() - known], 0);
    for i in known..roles.len() {
        let role = Role::from_code(roles[i]).unwrap_or(Role::Other);
        let tokens = match given.get(i) {
            Some(&c) if c >= 0.0 => c,
            _ if raws[i] >= 0.0 => est.tokens(raws[i]),
            _ => {
                missing[missed] = i as u32;
                missed += 1;
                0.0
            }
        };
        messages[i] = MessageInfo {
            role,
            flags: flags[i],
            tokens,
        };
    }
    missing.truncate(missed);
    let links = reading.links();
    let starts = reading.link_starts();
    // (At most a link for each pair, `linkStarts` never decreasing: written in place, then
    // cut to length.)
    let mut linked = transcript.links.len();
    let blank = Link {
        message: 0,
        key: 0,
        kind: LinkKind::Call,
    };
    transcript.links.resize(linked + links.len() / 2, blank);
    let out = transcript.links.as_mut_slice();
    for (message, span) in starts.windows(2).enumerate().skip(known) {
        let span = links.get(span[0] as usize..span[1] as usize).unwrap_or(&[]);
        for pair in span.chunks_exact(2) {
            out[linked] = Link {
                message: message as u32,
                key: pair[0],
                kind: if pair[1] == crate::contract::CALL as u32 {
                    LinkKind::Call
                } else {
                    LinkKind::Result
                },
            };
            linked += 1;
        }
    }
    transcript.links.truncate(linked);
    let given_any = Array::is_array(&call.callbacks.token_counts);
    let mut offered = None;
    // A few short new messages (a growing history) are cheaper to estimate than to choose
    // among.
    // `Some(left)` when a decisive estimate counted what decides the reduction; with orphans
    // every message is counted (a copy without them is decided at its own size, `as_output`:
    // the result is the same whichever messages a call counted).
    let decided = if decisive
        && estimating::decisive_allowed(config, &reading, counted || given_any)
        && reading.units(&missing, estimating::FEW_UNITS) > estimating::FEW_UNITS
    {
        let (left, structure) =
            estimate_decisive(&reading, &est, &mut transcript, config, &missing, &mut raw);
        (!left || structure.orphans == 0).then(|| {
            offered = Some(structure);
            left
        })
    } else {
        None
    };
    let pending = decided.unwrap_or_else(|| {
        // (All of them: also those a decisive estimate counted, the same again.)
        est.estimate(&reading, &missing, &mut raw);
        let (messages, raw) = (transcript.messages.as_mut_slice(), &*raw);
        for &i in &missing {
            messages[i as usize].tokens = est.tokens(raw[i as usize]);
        }
        false
    });
    reading.set_pending(pending);
    if !pending {
        reading.drop_texts();
    }
    if input {
        remember(&reading, &raw);
    }
    let transcript = Rc::new(transcript);
    if let Some(s) = offered {
        // (The reduction that follows takes it: see `memo::structure`.)
        super::memo::offer_structure(&transcript, s);
    }
    if memo && !pending {
        super::memo::keep_transcript(
            version,
            reading.base_version(),
            config.calibration,
            &transcript,
        );
    }
    Ok((transcript, reading))
}

/// The format number `readMessages` takes for "auto" (no [`Format::code`]).
const AUTO: u32 = Format::ALL.len() as u32;

/// What a cached count depends on besides the message (and the summary tag, passed on its
/// own): the overheads and how it was estimated. `js/reuse.js` takes a reading over only
/// under the same numbers.
fn count_params(config: &Config) -> Vec<f64> {
    let mut p = vec![config.message_overhead, config.image_tokens];
    match config.estimator {
        Estimator::Length { chars_per_token } => p.extend([1.0, chars_per_token]),
        // The profile as chosen (-1 for "auto") and the weights set over it: a reading is
        // taken over only in the format it was read in, which settles the rest.
        Estimator::Classes(profile) => {
            p.push(0.0);
            p.push(profile.tokenizer.map_or(-1.0, |t| t as u8 as f64));
            p.extend(profile.overrides);
        }
    }
    p
}
