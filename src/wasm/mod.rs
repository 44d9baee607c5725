//! The boundary to JavaScript: decodes the arguments, calls the core, encodes the result.
//! The only module that touches `JsValue`. Messages stay JavaScript objects: `reader.js`
//! reads the few fields the core needs in one loop, and results are built from the input
//! objects themselves.

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use crate::config::{Config, OptionValue};
use crate::estimate::{self, Estimator};
use crate::formats::{Format, FormatChoice};
use crate::strategies::{Fate, Reduction, Slot};
use crate::transcript::{Link, LinkKind, MessageInfo, Role, Transcript};
use crate::{analysis, error};

mod error_class {
    #![allow(unused_variables)] // the macro leaves `skip_typescript` unused
    use wasm_bindgen::prelude::*;

    // `skip_typescript`: `types.d.ts` declares the class with its fields.
    #[wasm_bindgen(module = "/src/wasm/reader.js")]
    extern "C" {
        /// `ReduceError`, defined in `reader.js` so that it is a real `Error` subclass.
        #[wasm_bindgen(reexport, skip_typescript)]
        pub type ReduceError;
        #[wasm_bindgen(constructor)]
        pub fn new(code: &str, message: &str, index: JsValue, field: JsValue) -> ReduceError;
    }
}
use error_class::ReduceError;

#[wasm_bindgen(module = "/src/wasm/reader.js")]
extern "C" {
    type Reading;
    #[wasm_bindgen(catch, js_name = readMessages)]
    fn read_messages(messages: &JsValue, options: &Object) -> Result<Reading, JsValue>;
    #[wasm_bindgen(method, getter)]
    fn format(this: &Reading) -> String;
    #[wasm_bindgen(method, getter)]
    fn roles(this: &Reading) -> Vec<u8>;
    #[wasm_bindgen(method, getter)]
    fn flags(this: &Reading) -> Vec<u8>;
    #[wasm_bindgen(method, getter)]
    fn exact(this: &Reading) -> Vec<f64>;
    #[wasm_bindgen(method, getter)]
    fn images(this: &Reading) -> Vec<u32>;
    #[wasm_bindgen(method, getter, js_name = lengthTokens)]
    fn length_tokens(this: &Reading) -> Vec<f64>;
    #[wasm_bindgen(method, getter, js_name = pieceCounts)]
    fn piece_counts(this: &Reading) -> Vec<u32>;
    #[wasm_bindgen(method, getter, js_name = pieceLengths)]
    fn piece_lengths(this: &Reading) -> Vec<u32>;
    #[wasm_bindgen(method, getter)]
    fn text(this: &Reading) -> String;
    #[wasm_bindgen(method, getter)]
    fn links(this: &Reading) -> Vec<u32>;

    #[wasm_bindgen(catch, js_name = readOption)]
    fn read_option(config: &JsValue, key: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = optionEntries)]
    fn option_entries(config: &JsValue, key: &str, value: &JsValue) -> Result<Array, JsValue>;

    #[wasm_bindgen(js_name = buildResult)]
    fn build_result(
        reading: &Reading,
        output: &[u32],
        kept: &[u32],
        dropped: &[u32],
        summarized: &[u32],
        meta: &Object,
        events: &Array,
    ) -> JsValue;
}

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("types.d.ts");

#[wasm_bindgen(start, private)]
fn install_panic_hook() {
    console_error_panic_hook::set_once();
}

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
struct Callbacks {
    count_tokens: JsValue,
    token_counts: JsValue,
}

/// What a call needs: the validated config and its callbacks.
struct Call {
    config: Config,
    callbacks: Callbacks,
}

fn option_value(config: &JsValue, key: &'static str, v: JsValue) -> Result<OptionValue, JsValue> {
    Ok(if v.is_undefined() || v.is_null() {
        OptionValue::Missing
    } else if let Some(b) = v.as_bool() {
        OptionValue::Bool(b)
    } else if let Some(n) = v.as_f64() {
        OptionValue::Number(n)
    } else if let Some(s) = v.as_string() {
        OptionValue::Text(s)
    } else if v.is_function() {
        OptionValue::Function
    } else if Array::is_array(&v) {
        OptionValue::Array
    } else if v.is_object() {
        let mut entries = Vec::new();
        for entry in option_entries(config, key, &v)?.iter() {
            let pair = Array::from(&entry);
            let name = pair.get(0).as_string().unwrap_or_default();
            let value = pair.get(1);
            let value = match value.as_f64() {
                Some(n) => OptionValue::Number(n),
                None if value.is_string() => {
                    OptionValue::Text(value.as_string().unwrap_or_default())
                }
                None => OptionValue::Other("not a number"),
            };
            entries.push((name, value));
        }
        OptionValue::Object(entries)
    } else if v.is_bigint() {
        OptionValue::Other("a bigint")
    } else if v.is_symbol() {
        OptionValue::Other("a symbol")
    } else {
        OptionValue::Other("an unsupported value")
    })
}

/// Reads and validates `config`. `need_trigger`: whether a missing trigger is an error.
/// Every option is read once; the callbacks are kept as read.
fn decode_config(config: &JsValue, need_trigger: bool) -> Result<Call, JsValue> {
    if config.is_undefined() || config.is_null() {
        let config = Config::parse_with(need_trigger, |_| Ok(OptionValue::Missing))?;
        return Ok(Call {
            config,
            callbacks: Callbacks::default(),
        });
    }
    if !config.is_object() || config.is_function() {
        return Err(error::ReduceError::config(
            "config",
            "config must be an object such as { maxTokens: 8000 }",
        )
        .into());
    }
    let mut js_error: Option<JsValue> = None;
    let mut callbacks = Callbacks::default();
    let parsed = Config::parse_with(need_trigger, |key| {
        let raw = read_option(config, key).map_err(|e| {
            js_error = Some(e);
            error::ReduceError::config(key, "unreadable option")
        })?;
        match key {
            "countTokens" => callbacks.count_tokens = raw.clone(),
            "tokenCounts" => callbacks.token_counts = raw.clone(),
            _ => {}
        }
        option_value(config, key, raw).map_err(|e| {
            js_error = Some(e);
            error::ReduceError::config(key, "unreadable option")
        })
    });
    match (parsed, js_error) {
        (_, Some(e)) => Err(e),
        (Err(e), None) => Err(e.into()),
        (Ok(config), None) => Ok(Call { config, callbacks }),
    }
}

fn set(target: &Object, key: &str, value: impl Into<JsValue>) {
    // Setting a data property on a fresh plain object cannot fail.
    let _ = Reflect::set(target, &JsValue::from_str(key), &value.into());
}

/// Reads `messages` into a transcript, estimating what has no exact count. The reading
/// keeps the message objects for the result.
fn decode_messages(messages: &JsValue, call: &Call) -> Result<(Transcript, Reading), JsValue> {
    let config = &call.config;
    let options = Object::new();
    let format = match config.format {
        FormatChoice::Auto => "auto",
        FormatChoice::Named(f) => f.name(),
    };
    set(&options, "format", format);
    set(&options, "tag", config.summary_tag.as_str());
    let (length_mode, chars_per_token) = match config.estimator {
        Estimator::Length { chars_per_token } => (true, chars_per_token),
        Estimator::Classes(_) => (false, 4.0),
    };
    set(&options, "lengthMode", length_mode);
    set(&options, "charsPerToken", chars_per_token);
    set(&options, "estimate", true);
    set(&options, "countTokens", call.callbacks.count_tokens.clone());
    set(&options, "tokenCounts", call.callbacks.token_counts.clone());

    let reading = read_messages(messages, &options)?;
    let format = Format::from_name(&reading.format()).unwrap_or(Format::OpenAi);
    let roles = reading.roles();
    let flags = reading.flags();
    let exact = reading.exact();
    let images = reading.images();
    let mut transcript = Transcript::new(format);
    transcript.messages.reserve(roles.len());

    let estimates: Vec<f64> = match config.estimator {
        Estimator::Length { .. } => reading.length_tokens(),
        Estimator::Classes(weights) => {
            let counts = reading.piece_counts();
            let lengths = reading.piece_lengths();
            let text = reading.text();
            let mut pieces = Pieces::new(&text, &lengths);
            counts
                .iter()
                .map(|&n| {
                    (0..n)
                        .map(|_| estimate::text_weight(pieces.next_piece(), &weights))
                        .sum()
                })
                .collect()
        }
    };
    for i in 0..roles.len() {
        let role = Role::from_code(roles[i]).unwrap_or(Role::Other);
        let tokens = if exact[i] >= 0.0 {
            exact[i]
        } else {
            let images = images.get(i).copied().unwrap_or(0);
            let weight = estimates.get(i).copied().unwrap_or(0.0);
            match config.estimator {
                Estimator::Length { .. } => {
                    config.message_overhead + images as f64 * config.image_tokens + weight
                }
                Estimator::Classes(_) => estimate::message_tokens(
                    weight,
                    images,
                    config.message_overhead,
                    config.image_tokens,
                ),
            }
        };
        transcript.messages.push(MessageInfo {
            role,
            flags: flags[i],
            tokens,
        });
    }
    transcript.links = reading
        .links()
        .chunks_exact(3)
        .map(|c| Link {
            message: c[0],
            key: c[1],
            kind: if c[2] == 0 {
                LinkKind::Call
            } else {
                LinkKind::Result
            },
        })
        .collect();
    Ok((transcript, reading))
}

/// Splits the joined texts of `reader.js` back into pieces by their UTF-16 lengths.
struct Pieces<'a> {
    text: &'a str,
    lengths: &'a [u32],
    next: usize,
}

impl<'a> Pieces<'a> {
    fn new(text: &'a str, lengths: &'a [u32]) -> Self {
        Pieces {
            text,
            lengths,
            next: 0,
        }
    }

    fn next_piece(&mut self) -> &'a str {
        let want = self.lengths.get(self.next).copied().unwrap_or(0) as usize;
        self.next += 1;
        let mut units = 0;
        let mut end = self.text.len();
        for (at, c) in self.text.char_indices() {
            if units >= want {
                end = at;
                break;
            }
            units += c.len_utf16();
        }
        let (piece, rest) = self.text.split_at(end);
        self.text = rest;
        piece
    }
}

fn encode_result(reading: &Reading, r: &Reduction) -> JsValue {
    let output: Vec<u32> = r
        .output
        .iter()
        .map(|slot| match slot {
            Slot::Input(i) => *i,
        })
        .collect();
    let meta = Object::new();
    set(&meta, "reduced", r.reduced);
    set(&meta, "removedCount", r.removed_count() as u32);
    set(&meta, "tokensBefore", r.tokens_before);
    set(&meta, "tokensAfter", r.tokens_after);
    set(&meta, "overBudget", r.over_budget);
    let events = Array::new();
    for e in &r.events {
        let event = Object::new();
        set(&event, "type", e.kind);
        set(&event, "messages", e.messages as u32);
        set(&event, "tokensBefore", e.tokens_before);
        set(&event, "tokensAfter", e.tokens_after);
        events.push(&event);
    }
    build_result(
        reading,
        &output,
        &r.indices(Fate::Kept),
        &r.indices(Fate::Dropped),
        &[],
        &meta,
        &events,
    )
}

/// Reduces `messages` with a strategy that needs no summarizer.
///
/// Kept messages are the input objects themselves; a tool call never loses its results.
///
/// ```javascript
/// import { reduceSync } from "chat-history-reducer";
/// const { messages: trimmed, tokensAfter } = reduceSync(history, { maxTokens: 8000 });
/// ```
#[wasm_bindgen(js_name = reduceSync, unchecked_return_type = "ReduceResult")]
pub fn reduce_sync(
    #[wasm_bindgen(unchecked_param_type = "Message[]")] messages: &JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ReduceConfig")] config: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let call = decode_config(&config.unwrap_or(JsValue::UNDEFINED), true)?;
    let (transcript, reading) = decode_messages(messages, &call)?;
    let reduction = crate::reduce_sync(&transcript, &call.config)?;
    Ok(encode_result(&reading, &reduction))
}

/// Reduces `messages`; awaits `config.summarizer` for the strategies that summarize.
///
/// ```javascript
/// import { reduce } from "chat-history-reducer";
/// const result = await reduce(history, { maxTokens: 8000, strategy: "truncate" });
/// send(result.messages);
/// ```
#[wasm_bindgen(unchecked_return_type = "ReduceResult")]
pub async fn reduce(
    #[wasm_bindgen(unchecked_param_type = "Message[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ReduceConfig")] config: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    reduce_sync(&messages, config)
}

/// Whether any configured trigger fires: `maxTokens` exceeded, or more than
/// `targetMessages + thresholdMessages` messages since the newest summary.
///
/// ```javascript
/// import { shouldReduce, reduce } from "chat-history-reducer";
/// if (shouldReduce(history, config)) history = (await reduce(history, config)).messages;
/// ```
#[wasm_bindgen(js_name = shouldReduce)]
pub fn should_reduce(
    #[wasm_bindgen(unchecked_param_type = "Message[]")] messages: &JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ReduceConfig")] config: Option<JsValue>,
) -> Result<bool, JsValue> {
    let call = decode_config(&config.unwrap_or(JsValue::UNDEFINED), true)?;
    let (transcript, _) = decode_messages(messages, &call)?;
    Ok(crate::should_reduce(&transcript, &call.config))
}

/// The estimated (or counted) tokens of a message or an array of messages.
///
/// ```javascript
/// import { estimateTokens } from "chat-history-reducer";
/// estimateTokens({ role: "user", content: "Hello there" }); // 5
/// ```
#[wasm_bindgen(js_name = estimateTokens)]
pub fn estimate_tokens(
    #[wasm_bindgen(unchecked_param_type = "Message | Message[]")] messages: &JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ReduceConfig")] config: Option<JsValue>,
) -> Result<f64, JsValue> {
    let call = decode_config(&config.unwrap_or(JsValue::UNDEFINED), false)?;
    let (transcript, _) = if Array::is_array(messages) {
        decode_messages(messages, &call)?
    } else {
        decode_messages(&Array::of1(messages), &call)?
    };
    Ok(transcript.total_tokens())
}

/// Explains every message: role, tokens, group, round and why it is protected, with the
/// totals and the detected format.
///
/// ```javascript
/// import { analyze } from "chat-history-reducer";
/// const { messages, totalTokens, format } = analyze(history, { maxTokens: 8000 });
/// ```
#[wasm_bindgen(unchecked_return_type = "Analysis")]
pub fn analyze(
    #[wasm_bindgen(unchecked_param_type = "Message[]")] messages: &JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ReduceConfig")] config: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let call = decode_config(&config.unwrap_or(JsValue::UNDEFINED), false)?;
    let (transcript, _) = decode_messages(messages, &call)?;
    let a = analysis::analyze(&transcript, &call.config);
    let list = Array::new_with_length(a.messages.len() as u32);
    for (k, m) in a.messages.iter().enumerate() {
        let o = Object::new();
        set(&o, "index", m.index as u32);
        set(&o, "role", m.role.name());
        set(&o, "tokens", m.tokens);
        set(&o, "group", m.group as u32);
        set(&o, "round", m.round as u32);
        set(&o, "protected", m.protected.is_protected());
        if let Some(reason) = m.protected.name() {
            set(&o, "protectedBy", reason);
        }
        set(&o, "summary", m.summary);
        set(&o, "realUser", m.real_user);
        list.set(k as u32, o.into());
    }
    let out = Object::new();
    set(&out, "format", a.format.name());
    set(&out, "messages", list);
    set(&out, "totalTokens", a.total_tokens);
    set(&out, "totalMessages", a.messages.len() as u32);
    set(&out, "groups", a.groups as u32);
    set(&out, "rounds", a.rounds as u32);
    set(&out, "shouldReduce", a.should_reduce);
    Ok(out.into())
}
