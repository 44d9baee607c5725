//! `ChatHistory` (SPEC §7): a conversation that stays reduced. The working history is
//! reduced in place, so a summary is computed once and reused until a trigger fires again;
//! `original` keeps everything ever pushed; provider usage becomes exact counts.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Map, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::decode::{decode_config, decode_messages, set, Call};
use super::reduce_value;
use crate::calibration::update;
use crate::formats::FormatChoice;
use crate::history::{spread, Stats};

struct State {
    config: JsValue,
    /// The working history and every message ever pushed: JavaScript arrays, one reference
    /// each however long (a message held in Rust takes a slot of the module's reference
    /// table, and histories that held millions of them in all ran it out: a trap, for good).
    messages: Array,
    original: Array,
    /// Exact token counts by message object (from `recordUsage`).
    counts: Map,
    events: Vec<JsValue>,
    offloaded: Object,
    stats: Stats,
    /// How many leading messages the last prompt (the last `prepare()`) had.
    prompt_len: Option<u32>,
    /// `outputTokens` waiting for the reply to be pushed (until the next `prepare()`).
    pending_output: Option<f64>,
    /// The correction factor learned from `recordUsage` (see `calibration.rs`).
    calibration: Option<f64>,
    /// The formats every message pushed fits (`checkMessages`), so that `push` refuses one
    /// of another format at once; 0 under a named `config.format`.
    formats: u32,
    /// Whether the last `prepare()` missed a target because of protected messages.
    over_budget: bool,
    /// Bumped by every applied reduction, so a stale `prepare()` does not apply.
    generation: u32,
    /// The latest `prepare()`: the next one starts when it has settled, on the history it
    /// left (two at once would call the summarizer twice for the same messages).
    preparing: Option<js_sys::Promise>,
}

/// A conversation that stays reduced: push messages, `await prepare()` before each model
/// call, send what it returns.
///
/// ```javascript
/// import { ChatHistory } from "chat-history-reducer";
/// const history = new ChatHistory({ maxTokens: 100_000, strategy: "summarize", summarizer });
/// history.push({ role: "user", content: "Hi!" });
/// const reply = await model(await history.prepare());
/// history.recordUsage({ inputTokens: reply.usage.input_tokens, outputTokens: reply.usage.output_tokens });
/// history.push(reply.message);
/// localStorage.setItem("chat", JSON.stringify(history));
/// ```
#[wasm_bindgen]
pub struct ChatHistory {
    state: Rc<RefCell<State>>,
}

fn array(values: &[JsValue]) -> Array {
    values.iter().collect()
}

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

impl ChatHistory {
    /// A history of `messages` (for `by`: an error if one is not a message, or they mix
    /// formats) with `config`.
    fn with_state(config: JsValue, list: Array, by: &str) -> Result<ChatHistory, JsValue> {
        // Fail at construction on a bad config or messages, not at the first prepare().
        let call = decode_config(&config, true)?;
        crate::require_summarizer(&call.config)?;
        // (`checkMessages` reads a named format's code from the low bits under this flag.)
        let all = match call.config.format {
            FormatChoice::Auto => u32::MAX,
            FormatChoice::Named(f) => 1 << 30 | f.code(),
        };
        // (Checked before they are held: an array of holes or of non-messages is an error,
        // not millions of references taken.)
        let formats = super::js::check_messages(&list, 0, by, all)?;
        Ok(ChatHistory {
            state: Rc::new(RefCell::new(State {
                config,
                // (`list` is the history's own copy: `startingMessages` or `readState` made it.)
                original: Array::from(&list),
                messages: list,
                counts: Map::new(),
                events: Vec::new(),
                offloaded: Object::new(),
                stats: Stats::default(),
                prompt_len: None,
                pending_output: None,
                calibration: None,
                formats,
                over_budget: false,
                generation: 0,
                preparing: None,
            })),
        })
    }
}

/// The recorded count of each working message, or `null`: `tokenCounts` and `toJSON`.
fn counts_array(state: &State) -> Array {
    state
        .messages
        .iter()
        .map(|m| {
            let c = state.counts.get(&m);
            if c.as_f64().is_some() {
                c
            } else {
                JsValue::NULL
            }
        })
        .collect()
}

/// What the config of one `prepare()` is made of (by `historyConfig`, js/history.js): the
/// user's, with the exact counts and the calibration learned so far (and a summarizer that
/// counts its calls).
fn prepare_config(state: &State) -> (JsValue, JsValue, Option<f64>) {
    let counts = if state.counts.size() > 0 {
        counts_array(state).into()
    } else {
        JsValue::UNDEFINED
    };
    (state.config.clone(), counts, state.calibration)
}

#[wasm_bindgen]
impl ChatHistory {
    /// A history with `config` (validated now) and optional starting `messages`.
    ///
    /// ```javascript
    /// const history = new ChatHistory({ targetMessages: 20 }, previousMessages);
    /// ```
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "ReduceConfig<M>")] config: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "readonly M[]")] messages: JsValue,
    ) -> Result<ChatHistory, JsValue> {
        let messages = super::js::starting_messages(&messages)?;
        ChatHistory::with_state(config, messages, "new ChatHistory")
    }

    /// Appends messages to the working history and to `original`; throws (appending none)
    /// `INVALID_MESSAGE` if one is not a message object, and `INVALID_MESSAGES` if one is of
    /// another format than the history's (with `format: "auto"`).
    ///
    /// ```javascript
    /// history.push({ role: "user", content: "Hello" }, { role: "assistant", content: "Hi" });
    /// ```
    #[wasm_bindgen(variadic)]
    pub fn push(
        &self,
        #[wasm_bindgen(unchecked_param_type = "M[]")] messages: Vec<JsValue>,
    ) -> Result<(), JsValue> {
        // (The state is not held while the messages are read: a getter may call this history.)
        let (len, formats, pending) = {
            let s = self.state.borrow();
            (s.messages.length(), s.formats, s.pending_output)
        };
        let list = array(&messages);
        // (Nothing is appended unless all are messages of the history's format.)
        let formats = super::js::check_messages(&list, len, "ChatHistory.push", formats)?;
        let reply = match pending {
            Some(_) => super::js::reply_of(&list),
            None => JsValue::UNDEFINED,
        };
        let mut s = self.state.borrow_mut();
        s.formats &= formats;
        // (A reply that holds more than the model wrote, null, takes no count.)
        if let (Some(output), false) = (s.pending_output, reply.is_undefined()) {
            if reply.is_object() {
                s.counts.set(&reply, &JsValue::from(output));
            }
            s.pending_output = None;
        }
        for m in &messages {
            s.messages.push(m);
            s.original.push(m);
        }
        Ok(())
    }

    /// The working history: what is sent to the model.
    ///
    /// ```javascript
    /// render(history.messages); // summaries and previews included, as the model sees them
    /// ```
    #[wasm_bindgen(getter, unchecked_return_type = "M[]")]
    pub fn messages(&self) -> Array {
        Array::from(&self.state.borrow().messages)
    }

    /// Every message ever pushed, in order (append-only).
    ///
    /// ```javascript
    /// exportTranscript(history.original); // nothing a reduction removed is missing here
    /// ```
    #[wasm_bindgen(getter, unchecked_return_type = "M[]")]
    pub fn original(&self) -> Array {
        Array::from(&self.state.borrow().original)
    }

    /// Every event of every reduction so far.
    ///
    /// ```javascript
    /// for (const e of history.events) console.log(e.type, e.tokensBefore, "→", e.tokensAfter);
    /// ```
    #[wasm_bindgen(getter, unchecked_return_type = "CompressionEvent[]")]
    pub fn events(&self) -> Array {
        array(&self.state.borrow().events)
    }

    /// Reduces the working history if a trigger fires, applies the reduction in place, and
    /// resolves to the messages to send. A `prepare()` called while another runs starts when
    /// that one has settled, from the history it left. `options.signal` bounds this one's
    /// summarizer instead of `config.signal` (a history outlives a request's signal).
    ///
    /// ```javascript
    /// const messages = await history.prepare({ signal: request.signal });
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Promise<M[]>")]
    pub fn prepare(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "{ signal?: AbortSignal }")] options: Option<
            JsValue,
        >,
    ) -> js_sys::Promise {
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let state = self.state.clone();
        let before = self.state.borrow_mut().preparing.take();
        let promise = future_to_promise(async move {
            if let Some(before) = before {
                // (Its outcome is its caller's.)
                let _ = JsFuture::from(before).await;
            }
            let calls = Object::new();
            let (messages, (config, counts, calibration), generation, len) = {
                let s = state.borrow();
                (
                    Array::from(&s.messages),
                    prepare_config(&s),
                    s.generation,
                    s.messages.length(),
                )
            };
            // (Reads the caller's config: not while the state is held.)
            let config = super::js::history_config(&config, &counts, calibration, &calls, &options);
            let result = reduce_value(messages.into(), config).await;
            let mut s = state.borrow_mut();
            // Every call of the summarizer counts, whatever came of it (a rejection under
            // `onSummarizerError: "throw"`, a reduction that no longer applies).
            s.stats.summarizer_calls += get(&calls, "n").as_f64().unwrap_or(0.0) as u32;
            s.over_budget = false;
            let result = result?;
            s.over_budget = get(&result, "overBudget").as_bool() == Some(true);
            if s.generation == generation && get(&result, "reduced").as_bool() == Some(true) {
                let reduced = Array::from(&get(&result, "messages"));
                // Messages pushed while the summarizer ran stay, after the reduced history.
                for i in len..s.messages.length() {
                    reduced.push(&s.messages.get(i));
                }
                s.messages = reduced;
                s.generation += 1;
                let events = Array::from(&get(&result, "events"));
                let before = get(&result, "tokensBefore").as_f64().unwrap_or(0.0);
                let after = get(&result, "tokensAfter").as_f64().unwrap_or(0.0);
                s.stats.record(before, after);
                s.events.extend(events.iter());
                Object::assign(&s.offloaded, &Object::from(get(&result, "offloaded")));
            }
            s.prompt_len = Some(s.messages.length());
            // (A reply's count that waited for a reply never pushed is not this prompt's.)
            s.pending_output = None;
            Ok(Array::from(&s.messages).into())
        });
        self.state.borrow_mut().preparing = Some(promise.clone());
        promise
    }

    /// The provider's counts for the last prompt (`inputTokens`, spread over its messages)
    /// and its reply (`outputTokens`: the model's first message after the prompt, now or
    /// when it is pushed): later decisions use them instead of estimates.
    ///
    /// ```javascript
    /// history.recordUsage({ inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens });
    /// ```
    #[wasm_bindgen(js_name = recordUsage)]
    pub fn record_usage(
        &self,
        #[wasm_bindgen(unchecked_param_type = "{ inputTokens?: number; outputTokens?: number }")]
        usage: JsValue,
    ) -> Result<(), JsValue> {
        // (Checked in JavaScript: `INVALID_CONFIG`, field `usage`, for a count out of bounds.)
        let counts = super::js::usage_counts(&usage)?;
        let (input, output) = (counts.get(0).as_f64(), counts.get(1).as_f64());
        // (The state is not held while messages are read or counted: the caller's code, a
        // getter or countTokens, may call this history.)
        let (config, messages, prompt_len, counts) = {
            let s = self.state.borrow();
            let m = s.messages.clone();
            (s.config.clone(), m, s.prompt_len, s.counts.clone())
        };
        if let (Some(input), Some(len)) = (input, prompt_len) {
            let prompt: Vec<JsValue> = (0..len.min(messages.length()))
                .map(|i| messages.get(i))
                .collect();
            let mut call: Call = decode_config(&config, true)?;
            call.callbacks.token_counts = JsValue::UNDEFINED;
            call.config.calibration = 1.0;
            let (t, _) = decode_messages(&array(&prompt), &call)?;
            let estimates: Vec<f64> = t.messages.iter().map(|m| m.tokens).collect();
            for (m, c) in prompt.iter().zip(spread(&estimates, input)) {
                counts.set(m, &JsValue::from(c));
            }
            // Later estimates follow this model's tokenizer.
            let mut s = self.state.borrow_mut();
            s.calibration = Some(update(s.calibration, t.total_tokens(), input));
        }
        if let Some(output) = output {
            // The reply is the model's first message after the prompt (not one the user
            // pushed meanwhile): now, or when it is pushed.
            let after = Array::new();
            for i in prompt_len.unwrap_or(u32::MAX)..messages.length() {
                after.push(&messages.get(i));
            }
            let reply = super::js::reply_of(&after);
            if reply.is_object() {
                counts.set(&reply, &JsValue::from(output));
            }
            self.state.borrow_mut().pending_output = reply.is_undefined().then_some(output);
        }
        Ok(())
    }

    /// The originals of an offloaded message (what the `context_reload` tool returns), in
    /// an array of the caller's own; undefined for an id it does not know, or one that is
    /// not a string (a model's tool call may leave it out).
    ///
    /// ```javascript
    /// // the model called context_reload({ id })
    /// const originals = history.reload(id) ?? [];
    /// ```
    #[wasm_bindgen(unchecked_return_type = "M[] | undefined")]
    pub fn reload(&self, #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue) -> JsValue {
        super::js::reloaded(&self.state.borrow().offloaded, &id)
    }

    /// `{ reductions, summarizerCalls, tokensSaved, compressionRatio, overBudget }`: every
    /// call of the summarizer counts, whatever its outcome; the tokens saved are whole; the
    /// ratio is the tokens of `original` over those of the working history; `overBudget`:
    /// the last `prepare()` missed a target because of protected messages.
    ///
    /// ```javascript
    /// const { summarizerCalls, compressionRatio } = history.stats();
    /// ```
    #[wasm_bindgen(
        unchecked_return_type = "{ reductions: number; summarizerCalls: number; tokensSaved: number; compressionRatio: number; overBudget: boolean }"
    )]
    pub fn stats(&self) -> Result<JsValue, JsValue> {
        // (Counted without holding the state: countTokens may call this history.)
        let (config, messages, original, stats) = {
            let s = self.state.borrow();
            let lists = (s.messages.clone(), s.original.clone());
            (s.config.clone(), lists.0, lists.1, s.stats)
        };
        let call = decode_config(&config, true)?;
        let tokens = |list: &Array| -> Result<f64, JsValue> {
            Ok(decode_messages(list, &call)?.0.total_tokens())
        };
        let working = tokens(&messages)?;
        let ratio = if working > 0.0 {
            tokens(&original)? / working
        } else {
            1.0
        };
        let out = Object::new();
        set(&out, "reductions", stats.reductions);
        set(&out, "summarizerCalls", stats.summarizer_calls);
        set(&out, "tokensSaved", stats.tokens_saved);
        set(&out, "compressionRatio", ratio);
        set(&out, "overBudget", self.state.borrow().over_budget);
        Ok(out.into())
    }

    /// The whole state as plain, versioned JSON: for localStorage, a KV store or a
    /// Durable Object.
    ///
    /// ```javascript
    /// await env.KV.put(chatId, JSON.stringify(history.toJSON()));
    /// ```
    #[wasm_bindgen(js_name = toJSON, unchecked_return_type = "ChatHistoryState<M>")]
    pub fn to_json(&self) -> JsValue {
        let s = self.state.borrow();
        let or_null = |n: Option<f64>| n.map_or(JsValue::NULL, JsValue::from);
        super::js::write_state(
            &s.messages,
            &s.original,
            &counts_array(&s),
            &array(&s.events),
            &s.offloaded,
            &[
                s.stats.reductions as f64,
                s.stats.summarizer_calls as f64,
                s.stats.tokens_saved,
                f64::from(u8::from(s.over_budget)),
            ],
            &or_null(s.prompt_len.map(|n| n as f64)),
            &or_null(s.pending_output),
            &or_null(s.calibration),
        )
    }

    /// A history from `toJSON()`'s state (after a JSON round trip) and a config, which
    /// holds what JSON cannot (the summarizer, countTokens).
    ///
    /// ```javascript
    /// const history = ChatHistory.fromJSON(JSON.parse(localStorage.getItem("chat")), config);
    /// ```
    #[wasm_bindgen(js_name = fromJSON, unchecked_return_type = "ChatHistory<M>")]
    pub fn from_json(
        #[wasm_bindgen(unchecked_param_type = "ChatHistoryState<M>")] state: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ReduceConfig<M>")] config: JsValue,
    ) -> Result<ChatHistory, JsValue> {
        // (Read and checked in JavaScript, before the history holds anything.)
        let parts = super::js::read_state(&state)?;
        let part = |k: u32| parts.get(k);
        let number = |k: u32| part(k).as_f64();
        let list = |k: u32| {
            Some(part(k))
                .filter(|v| !v.is_undefined())
                .map(JsCast::unchecked_into::<Array>)
        };
        let by = "ChatHistory.fromJSON";
        let history = ChatHistory::with_state(config, part(0).into(), by)?;
        // `original` is of the working messages' format too (a state that mixes them made
        // every later push of one of them fail).
        let original: Array = part(1).into();
        let formats = super::js::check_messages(&original, 0, by, history.state.borrow().formats)?;
        {
            let mut s = history.state.borrow_mut();
            s.original = original;
            s.formats = formats;
            if let Some(counts) = list(2) {
                for (m, c) in s.messages.iter().zip(counts.iter()) {
                    // (Only a count recordUsage could have made: another would fail every
                    // later prepare() as tokenCounts.)
                    if c.as_f64().is_some() {
                        s.counts.set(&m, &c);
                    }
                }
            }
            if let Some(events) = list(3) {
                s.events = events.iter().collect();
            }
            if part(4).is_object() {
                s.offloaded = part(4).into();
            }
            s.stats = Stats {
                reductions: number(5).unwrap_or(0.0) as u32,
                summarizer_calls: number(6).unwrap_or(0.0) as u32,
                tokens_saved: number(7).unwrap_or(0.0),
            };
            s.prompt_len = number(8).map(|n| n as u32);
            s.pending_output = number(9);
            s.calibration = number(10);
            s.over_budget = part(11).is_truthy();
        }
        Ok(history)
    }
}
