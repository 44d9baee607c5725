//! `ChatHistory` (SPEC §7) at the boundary: the holder of what is JavaScript — the working
//! and original messages (arrays), the config, the events and the offloaded originals. What
//! to do with them is the core's (`crate::history::History`): each method asks it, then
//! applies the answer to the arrays.

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;

use js_sys::{Array, Object, Uint32Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::decode::{decode_config, decode_messages, set, Trust};
use super::js::{self as boundary, Reading, ReduceResult};
use super::Prepared;
use crate::formats::FormatChoice;
use crate::history::edit::edit_index;
use crate::history::{Entry, History, Reply, SavedStats, State, VERSION};
use crate::structure::Structure;

struct Held {
    config: JsValue,
    /// The working history and every message ever pushed: JavaScript arrays, one reference
    /// each however long (a message held in Rust takes a slot of the module's reference
    /// table, and histories that held millions of them in all ran it out: a trap, for good).
    messages: Array,
    original: Array,
    events: Array,
    offloaded: Object,
    /// The decisions: one entry per message of `messages`, kept in step with it.
    history: History,
    /// The latest `prepare()`: the next one starts when it has settled, on the history it
    /// left (two at once would call the summarizer twice for the same messages).
    preparing: Option<js_sys::Promise>,
    /// The reading of the last `prepare()` and how many of the working messages it read
    /// (those messages, unchanged: the history holds them and pushes only append), until a
    /// reduction or an edit changes them: the next `prepare()` reads only what came after.
    trusted: Option<(Reading, u32)>,
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
    state: Rc<RefCell<Held>>,
}

/// Counts as the boundary's JavaScript takes them: NaN for none.
fn nan_for_none(counts: &[Option<f64>]) -> Vec<f64> {
    counts.iter().map(|c| c.unwrap_or(f64::NAN)).collect()
}

/// Where the model's reply is among `values` (`replyOf`, js/history.js).
fn reply_in(values: &Array) -> Reply {
    let reply = boundary::reply_of(values);
    if reply.is_undefined() {
        Reply::None
    } else if reply.is_object() {
        // (The first message that is the reply object is the reply: the one found.)
        usize::try_from(values.index_of(&reply, 0)).map_or(Reply::Uncountable, Reply::At)
    } else {
        Reply::Uncountable
    }
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
        let formats = boundary::check_messages(&list, 0, by, all, false)?;
        Ok(ChatHistory {
            state: Rc::new(RefCell::new(Held {
                config,
                // (`list` is the history's own copy: `startingMessages` or `readState` made it.)
                original: Array::from(&list),
                history: History::new(list.length() as usize, formats),
                messages: list,
                events: Array::new(),
                offloaded: Object::new(),
                preparing: None,
                trusted: None,
            })),
        })
    }
}

impl ChatHistory {
    /// The messages of `original` in `removed` are gone (`kind`: the method): the core says
    /// what stays of the working history; an event says what went.
    fn edit(&self, kind: &str, removed: Range<usize>) -> Result<(), JsValue> {
        let (config, before, original) = {
            let s = self.state.borrow();
            (s.config.clone(), s.messages.clone(), s.original.clone())
        };
        let call = decode_config(&config, true)?;
        let working = decode_messages(&before, &call)?.0;
        let tokens_before = working.total_tokens();
        let original = decode_messages(&original, &call)?.0;
        let after = {
            let mut held = self.state.borrow_mut();
            let s = &mut *held;
            let gone = s.original.slice(removed.start as u32, removed.end as u32);
            let e = s
                .history
                .edit(removed.clone(), &original, &working, &call.config);
            let messages: Array = e
                .entries
                .iter()
                .map(|entry| match *entry {
                    Entry::Kept(i) => s.messages.get(i),
                    Entry::Restored(j) => s.original.get(j),
                })
                .collect();
            let rest = s.original.slice(removed.end as u32, s.original.length());
            s.original = s.original.slice(0, removed.start as u32).concat(&rest);
            s.messages = messages.clone();
            s.trusted = None;
            // (An offload of a message that is gone is gone: `reload` would hand it back.)
            boundary::prune_offloaded(&s.offloaded, &gone);
            let event = Object::new();
            set(&event, "type", kind);
            set(&event, "messages", e.removed as u32);
            set(&event, "undone", e.undone as u32);
            set(&event, "restored", e.restored as u32);
            s.events.push(&event);
            (messages, event)
        };
        let (messages, event) = after;
        let tokens_after = decode_messages(&messages, &call)?.0.total_tokens();
        set(&event, "tokensBefore", tokens_before);
        set(&event, "tokensAfter", tokens_after);
        Ok(())
    }
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
        let messages = boundary::starting_messages(&messages)?;
        ChatHistory::with_state(config, messages, "new ChatHistory")
    }

    /// Appends messages to the working history and to `original`; throws (appending none)
    /// `INVALID_MESSAGE` if one is not a message object, and `INVALID_MESSAGES` if one is of
    /// another format than the history's (with `format: "auto"`), naming the argument and
    /// the index it would have had in `messages` (the error's `index`).
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
        let (len, formats, awaits_reply) = {
            let s = self.state.borrow();
            (
                s.messages.length(),
                s.history.formats(),
                s.history.awaits_reply(),
            )
        };
        let list: Array = messages.iter().collect();
        // (Nothing is appended unless all are messages of the history's format.)
        let formats = boundary::check_messages(&list, len, "ChatHistory.push", formats, true)?;
        let reply = if awaits_reply {
            reply_in(&list)
        } else {
            Reply::None
        };
        let mut s = self.state.borrow_mut();
        s.history.push(messages.len(), formats, reply);
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
        Array::from(&self.state.borrow().events)
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
            let calls = Uint32Array::new_with_length(1);
            let (messages, config, counts, calibration, started, trusted) = {
                let s = state.borrow();
                let h = &s.history;
                let counts = h.token_counts().map_or_else(Vec::new, nan_for_none);
                let messages = Array::from(&s.messages);
                (
                    messages,
                    s.config.clone(),
                    counts,
                    h.calibration(),
                    h.prepare(),
                    s.trusted.clone(),
                )
            };
            // (Reads the caller's config and messages: not while the state is held.)
            let config = boundary::history_config(&config, &counts, calibration, &calls, &options);
            let read = decode_config(&config, true).and_then(|mut call| {
                call.trust = trusted.map(|(reading, len)| Trust { reading, len });
                Prepared::read(&messages, call)
            });
            let read = match read {
                Ok(read) => read,
                Err(e) => {
                    state.borrow_mut().history.prepare_failed(0);
                    return Err(e);
                }
            };
            // Nothing to do (the usual turn): what came since was read, nothing else.
            if let Some(reading) = read.unchanged() {
                let mut s = state.borrow_mut();
                // (Unless a getter or countTokens edited the history while it was read.)
                s.trusted = s
                    .history
                    .current(started)
                    .then(|| (reading.clone(), messages.length()));
                s.history.unchanged();
                return Ok(Array::from(&s.messages).into());
            }
            let finished = read.finish().await;
            // Every call of the summarizer counts, whatever came of it (a rejection under
            // `onSummarizerError: "throw"`, a reduction that no longer applies).
            let calls = calls.get_index(0);
            let finished = match finished {
                Ok(finished) => finished,
                Err(e) => {
                    state.borrow_mut().history.prepare_failed(calls);
                    return Err(e);
                }
            };
            let tokens_before = finished.tokens_before();
            let mut s = state.borrow_mut();
            let r = &finished.reduction.0;
            // (What it read stands for the working messages unless they changed meanwhile or
            // change now.)
            s.trusted = s
                .history
                .current(started)
                .then(|| (finished.reading.clone(), messages.length()));
            let result: &ReduceResult = finished.result.unchecked_ref();
            if let Some(n) = s.history.prepared(started, calls, r, tokens_before) {
                s.trusted = None;
                // The reduced history, then the messages pushed while the summarizer ran.
                let reduced = Array::from(&result.messages());
                // (It holds the messages themselves; only what is sent carries breakpoints.)
                if let Some((at, replaced)) = &finished.unmarked {
                    for (k, &p) in at.iter().enumerate() {
                        reduced.set(p, replaced.get(k as u32));
                    }
                }
                for i in n as u32..s.messages.length() {
                    reduced.push(&s.messages.get(i));
                }
                s.messages = reduced;
                for e in result.events().iter() {
                    s.events.push(&e);
                }
                // (A digest made over earlier previews stands for their originals.)
                let added = super::js::resolve_offloads(&s.offloaded, &result.offloaded());
                Object::assign(&s.offloaded, &added);
            }
            // What is sent: the working history with the result's breakpoints, where it still
            // holds what they marked (a reduction another `prepare()` applied first moved it;
            // messages pushed while this one ran come after its newest mark).
            let sent = Array::from(&s.messages);
            if let Some((at, replaced)) = &finished.unmarked {
                let marked = result.messages();
                for (k, &p) in at.iter().enumerate() {
                    if Object::is(&sent.get(p), &replaced.get(k as u32)) {
                        sent.set(p, marked.get(p));
                    }
                }
            }
            Ok(sent.into())
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
        let counts = boundary::usage_counts(&usage)?;
        let (input, output) = (counts.get(0).as_f64(), counts.get(1).as_f64());
        // (The state is not held while messages are read or counted: the caller's code, a
        // getter or countTokens, may call this history.)
        let (config, messages, prompt, reply_from) = {
            let s = self.state.borrow();
            let h = &s.history;
            (
                s.config.clone(),
                s.messages.clone(),
                h.prompt(),
                h.reply_from(),
            )
        };
        if let (Some(input), Some(len)) = (input, prompt) {
            // The prompt's estimates without calibration or counts: what the provider counted.
            let mut call = decode_config(&config, true)?;
            call.callbacks.token_counts = JsValue::UNDEFINED;
            call.config.calibration = 1.0;
            let (t, _) = decode_messages(&messages.slice(0, len as u32), &call)?;
            let estimates: Vec<f64> = t.messages.iter().map(|m| m.tokens).collect();
            let mut s = self.state.borrow_mut();
            s.history.record_input(&estimates, t.total_tokens(), input);
        }
        if let Some(output) = output {
            let reply = match reply_from {
                Some(from) => reply_in(&messages.slice(from as u32, messages.length())),
                None => Reply::None,
            };
            let mut s = self.state.borrow_mut();
            s.history
                .record_output(output, reply_from.unwrap_or(0), reply);
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
        boundary::reloaded(&self.state.borrow().offloaded, &id)
    }

    /// `{ reductions, summarizerCalls, tokensSaved, compressionRatio, overBudget, edits,
    /// undone }`: every call of the summarizer counts, whatever its outcome; the tokens saved
    /// are whole; the ratio is the tokens of `original` over those of the working history;
    /// `overBudget`: the last `prepare()` missed a target because of protected messages;
    /// `edits`: `rewind`/`remove`/`clear` calls; `undone`: the summaries, previews and other
    /// messages a reduction wrote that an edit undid (their originals back).
    ///
    /// ```javascript
    /// const { summarizerCalls, compressionRatio } = history.stats();
    /// ```
    #[wasm_bindgen(
        unchecked_return_type = "{ reductions: number; summarizerCalls: number; tokensSaved: number; compressionRatio: number; overBudget: boolean; edits: number; undone: number }"
    )]
    pub fn stats(&self) -> Result<JsValue, JsValue> {
        // (Counted without holding the state: countTokens may call this history.)
        let (config, messages, original) = {
            let s = self.state.borrow();
            (s.config.clone(), s.messages.clone(), s.original.clone())
        };
        let call = decode_config(&config, true)?;
        let tokens = |list: &Array| -> Result<f64, JsValue> {
            Ok(decode_messages(list, &call)?.0.total_tokens())
        };
        let working = tokens(&messages)?;
        let (totals, over_budget) = {
            let h = &self.state.borrow().history;
            (h.totals(), h.over_budget())
        };
        let view = totals.view(working, || tokens(&original), over_budget)?;
        let out = Object::new();
        set(&out, "reductions", view.reductions);
        set(&out, "summarizerCalls", view.summarizer_calls);
        set(&out, "tokensSaved", view.tokens_saved);
        set(&out, "compressionRatio", view.compression_ratio);
        set(&out, "overBudget", view.over_budget);
        set(&out, "edits", view.edits);
        set(&out, "undone", view.undone);
        Ok(out.into())
    }

    /// Drops `original[index]` and every message after it (edit-and-resend: `rewind(i)` then
    /// `push(edited)`; regenerate: `rewind` to the last reply). The working history keeps what
    /// covers only earlier messages; a summary or preview that covered a dropped one is
    /// undone, its other originals back (the next `prepare()` reduces again if a trigger
    /// fires). A `prepare()` under way no longer applies. `INVALID_MESSAGE` for an index that
    /// is not one of `original`'s.
    ///
    /// ```javascript
    /// history.rewind(i); // the user edited message i
    /// history.push({ role: "user", content: edited });
    /// ```
    pub fn rewind(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] index: JsValue,
    ) -> Result<(), JsValue> {
        let originals = self.state.borrow().original.length() as usize;
        let i = edit_index("ChatHistory.rewind", index.as_f64(), originals)?;
        self.edit("rewind", i..originals)
    }

    /// Drops `original[index]` with the rest of its group (a tool call with its results, a
    /// result with its call), as `rewind` does for what it drops.
    ///
    /// ```javascript
    /// history.remove(3);
    /// ```
    pub fn remove(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] index: JsValue,
    ) -> Result<(), JsValue> {
        let (config, original) = {
            let s = self.state.borrow();
            (s.config.clone(), s.original.clone())
        };
        let i = edit_index(
            "ChatHistory.remove",
            index.as_f64(),
            original.length() as usize,
        )?;
        // (Read without holding the state: countTokens may call this history.)
        let call = decode_config(&config, true)?;
        let (t, _) = decode_messages(&original, &call)?;
        let group = Structure::of(&t).group_range(i);
        self.edit("remove", group)
    }

    /// Drops every message: `original`, the working history, the offloaded originals.
    ///
    /// ```javascript
    /// history.clear();
    /// ```
    pub fn clear(&self) -> Result<(), JsValue> {
        let originals = self.state.borrow().original.length() as usize;
        self.edit("clear", 0..originals)
    }

    /// The whole state as plain, versioned JSON: for localStorage, a KV store or a
    /// Durable Object. With `{ original: "omit" }` it leaves `original` out (the app keeps
    /// those messages, e.g. useChat's) and holds their digest instead: `fromJSON` then takes
    /// them as `{ original }`. `INVALID_CONFIG` (field `original`) for another value.
    ///
    /// ```javascript
    /// await env.KV.put(chatId, JSON.stringify(history.toJSON()));
    /// localStorage.setItem("chat", JSON.stringify(history.toJSON({ original: "omit" })));
    /// ```
    #[wasm_bindgen(js_name = toJSON, unchecked_return_type = "ChatHistoryState<M>")]
    pub fn to_json(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "{ original?: \"omit\" | \"include\" }")]
        options: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        let s = self.state.borrow();
        let state = s
            .history
            .save(&s.messages, &s.original, &s.events, &s.offloaded);
        let stats = &state.stats;
        boundary::write_state(
            state.messages,
            state.original,
            &nan_for_none(state.counts.as_deref().unwrap_or_default()),
            &state
                .covers
                .unwrap_or_default()
                .iter()
                .map(|c| c.iter().map(|&n| JsValue::from(n)).collect::<Array>())
                .collect(),
            state.events,
            state.offloaded,
            &[
                stats.reductions.unwrap_or(0.0),
                stats.summarizer_calls.unwrap_or(0.0),
                stats.tokens_saved.unwrap_or(0.0),
                f64::from(u8::from(stats.over_budget)),
                stats.edits.unwrap_or(0.0),
                stats.undone.unwrap_or(0.0),
            ],
            state.prompt_length,
            state.pending_output_tokens,
            state.calibration,
            &options.unwrap_or(JsValue::UNDEFINED),
        )
    }

    /// A history from `toJSON()`'s state (after a JSON round trip) and a config, which
    /// holds what JSON cannot (the summarizer, countTokens). A state no history wrote (its
    /// messages or offloaded originals are not what `toJSON()` writes) is `INVALID_CONFIG`,
    /// field `state`. A state written with `{ original: "omit" }` takes the messages as
    /// `options.original`: the same as `original` then (count and JSON, by the state's
    /// digest), else `INVALID_CONFIG`, field `state`.
    ///
    /// ```javascript
    /// const history = ChatHistory.fromJSON(JSON.parse(localStorage.getItem("chat")), config, { original: messages });
    /// ```
    #[wasm_bindgen(js_name = fromJSON, unchecked_return_type = "ChatHistory<M>")]
    pub fn from_json(
        #[wasm_bindgen(unchecked_param_type = "ChatHistoryState<M>")] state: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ReduceConfig<M>")] config: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "{ original?: readonly M[] }")]
        options: Option<JsValue>,
    ) -> Result<ChatHistory, JsValue> {
        let header = boundary::state_header(&state);
        let kind = header.get(0).as_string();
        let version = crate::history::state::version_of(
            state.is_object(),
            kind.as_deref(),
            header.get(1).as_f64(),
        )?;
        // (Read in JavaScript, before the history holds anything.)
        let mut numbers = [f64::NAN; 10];
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let parts = boundary::read_state(&state, version, &mut numbers, &options)?;
        let part = |k: u32| parts.get(k);
        let number = |k: usize| Some(numbers[k]).filter(|n| !n.is_nan());
        let saved = State {
            messages: part(0).unchecked_into(),
            original: part(1).unchecked_into(),
            events: part(2).dyn_into::<Array>().unwrap_or_default(),
            offloaded: part(3).dyn_into::<Object>().ok(),
            counts: (numbers[7] == 1.0).then(|| {
                let counts = boundary::saved_counts(&parts);
                let mut out = Vec::with_capacity(counts.len());
                for c in counts {
                    out.push(Some(c));
                }
                out
            }),
            covers: part(5).dyn_into::<Array>().ok().map(|covers| {
                // (Plain loops: smaller in the module than nested collects.)
                let mut out = Vec::with_capacity(covers.length() as usize);
                for c in covers.iter() {
                    let mut flat = Vec::new();
                    match c.dyn_into::<Array>() {
                        Ok(c) => {
                            for n in c.iter() {
                                flat.push(n.as_f64().unwrap_or(f64::NAN));
                            }
                        }
                        Err(_) => flat.push(f64::NAN),
                    }
                    out.push(flat);
                }
                out
            }),
            stats: SavedStats {
                reductions: number(0),
                summarizer_calls: number(1),
                tokens_saved: number(2),
                over_budget: numbers[3] == 1.0,
                edits: number(8),
                undone: number(9),
            },
            prompt_length: number(4),
            pending_output_tokens: number(5),
            calibration: number(6),
        };
        let by = "ChatHistory.fromJSON";
        let history = ChatHistory::with_state(config, saved.messages.clone(), by)?;
        // `original` is of the working messages' format too (a state that mixes them made
        // every later push of one of them fail).
        let formats = history.state.borrow().history.formats();
        let formats = boundary::check_messages(&saved.original, 0, by, formats, false)?;
        if let Some(offloaded) = &saved.offloaded {
            boundary::check_offloaded(offloaded, &saved.original, formats)?;
        }
        {
            let mut s = history.state.borrow_mut();
            let (len, originals) = (s.messages.length(), saved.original.length());
            s.history = History::restore(&saved, len as usize, originals as usize, formats);
            s.original = saved.original;
            s.events = saved.events;
            if let Some(offloaded) = saved.offloaded {
                s.offloaded = offloaded;
            }
        }
        Ok(history)
    }
}

const _: () = assert!(
    VERSION == 2,
    "ChatHistoryState in types.d.ts says version 2"
);
