//! The boundary to JavaScript: decodes the arguments, calls the core, encodes the result.
//! The only module that touches `JsValue`. Messages stay JavaScript objects: the boundary's
//! JavaScript (`js/`, a reader per format in `js/formats/`) reads the few fields the core
//! needs in one loop, and results are built from the input objects themselves
//! (`js/results.js`).

mod breakpoints;
mod decode;
mod encode;
mod estimating;
mod history;
mod js;
mod memo;
mod progressive;
mod summarize;
mod trace;

pub use history::ChatHistory;

use js_sys::Array;
use wasm_bindgen::prelude::*;

use crate::analysis;
use crate::config::Strategy;
use crate::protect::Protection;
use crate::transcript::{Role, Transcript};
use decode::{decode_config, decode_for_reduction, decode_messages, Call};
use encode::{core_events, encode_result, Indices};
use js::{build_analysis, Reading};

/// A static of the module's, as `thread_local!` gives one without its checks: the module
/// runs on one thread (wasm32 without atomics), so a `static` serves. (`thread_local!`'s
/// access checks, their panic and its formatting cost 632 B of the gzipped .wasm.) The
/// methods are those of `LocalKey` the code calls.
pub(crate) struct Local<T>(pub T);

#[cfg(target_feature = "atomics")]
compile_error!("`Local` assumes one thread: use `thread_local!` with atomics");

// SAFETY: without atomics a wasm module has one thread only.
unsafe impl<T> Sync for Local<T> {}

impl<T> Local<std::cell::RefCell<T>> {
    pub fn with_borrow<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.0.borrow())
    }
    pub fn with_borrow_mut<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut self.0.borrow_mut())
    }
    pub fn take(&self) -> T
    where
        T: Default,
    {
        self.0.take()
    }
    pub fn set(&self, value: T) {
        self.0.replace(value);
    }
}

impl<T: Copy> Local<std::cell::Cell<T>> {
    pub fn get(&self) -> T {
        self.0.get()
    }
    pub fn set(&self, value: T) {
        self.0.set(value);
    }
    pub fn replace(&self, value: T) -> T {
        self.0.replace(value)
    }
}

/// The allocator: talc in place of Rust's default dlmalloc, a third of its size and faster
/// (the module is single-threaded).
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("types.d.ts");

/// When the module starts: a panic is a bug (SPEC §9.11: bad input is a `ReduceError`), so
/// say so on the console before the module traps.
#[wasm_bindgen(start, private)]
fn start() {
    set_panic_hook();
}

/// With the `console_error_panic_hook` feature (the default, as wasm-pack's template), the
/// panic's message and stack: what a test or a debug build needs to read. (Its hook set
/// without `set_once`, so that a test can set it again over the test runner's.)
#[cfg(feature = "console_error_panic_hook")]
#[doc(hidden)]
pub fn set_panic_hook() {
    std::panic::set_hook(Box::new(console_error_panic_hook::hook));
}

/// Without it (the package build): where the panic is, not its message, which would bring
/// the formatting of every payload into the module.
#[cfg(not(feature = "console_error_panic_hook"))]
#[doc(hidden)]
pub fn set_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let (file, line) = info.location().map_or(("?", 0), |l| (l.file(), l.line()));
        web_sys::console::error_1(&JsValue::from_str(&crate::error::cat(&[
            "chat-history-reducer: a bug (a panic) at ",
            file,
            ":",
            &crate::error::show(line as f64),
            "; please report it",
        ])));
    }));
}

/// Reduces `messages` with a strategy that needs no summarizer.
///
/// Kept messages are the input objects themselves; a tool call never loses its results.
///
/// ```javascript
/// import { reduceSync } from "chat-history-reducer";
/// const { messages: trimmed, tokensAfter } = reduceSync(history, { maxTokens: 8000 });
/// ```
#[wasm_bindgen(js_name = reduceSync, unchecked_return_type = "ReduceResult<M>")]
pub fn reduce_sync(
    #[wasm_bindgen(unchecked_param_type = "readonly M[]")] messages: &JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ReduceConfig<M>")] config: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let call = decode_config(&config.unwrap_or(JsValue::UNDEFINED), true)?;
    let (transcript, reading) = decode_for_reduction(messages, &call)?;
    let transcript = decode::as_output(transcript, &reading, &call)?;
    let finished = reduce_now(&call, &transcript, &reading)?;
    let result = breakpoints::mark(&call, &transcript, &reading, finished)?.result;
    // (A store whose writes are asynchronous: `result.stored` is their promise.)
    if let Some(pending) = store_offloads(&call, &result)? {
        decode::set(result.unchecked_ref(), "stored", pending);
    }
    Ok(result)
}

/// Writes the offloads of `result` into `config.store`, if one is given: the promise of
/// the writes when they are asynchronous.
fn store_offloads(call: &Call, result: &JsValue) -> Result<Option<js_sys::Promise>, JsValue> {
    let store = &call.callbacks.store;
    if !store.is_object() {
        return Ok(None);
    }
    let offloaded = js_sys::Reflect::get(result, &JsValue::from_str("offloaded"))?;
    let pending = js::store_offloads(store, &offloaded)?;
    Ok(pending.is_object().then(|| pending.unchecked_into()))
}

/// A reduction done: its `ReduceResult`, and the core's reduction it was built from, which
/// a `ChatHistory` applies to its arrays (it reads no decision back from the result).
pub(crate) struct Finished {
    pub result: JsValue,
    pub reduction: std::rc::Rc<(crate::Reduction, Indices)>,
    /// The reading of the input (a `ChatHistory` trusts it next time: [`decode::Trust`]).
    pub reading: Reading,
    /// Whether it owed the estimate of messages the reduction did not need (`estimating`).
    owing: bool,
    /// With `cacheBreakpoints`: where in the result's `messages` marked copies stand, and
    /// the messages they replaced, in order (a `ChatHistory` keeps these, and sends the
    /// copies).
    pub unmarked: Option<(Vec<u32>, Array)>,
}

impl Finished {
    pub fn new(
        result: JsValue,
        reduction: std::rc::Rc<(crate::Reduction, Indices)>,
        reading: &Reading,
    ) -> Finished {
        Finished {
            result,
            reduction,
            reading: reading.clone(),
            owing: reading.pending(),
            unmarked: None,
        }
    }

    /// The reduction's `tokensBefore`, complete: what the result reads when asked (its
    /// getter and this estimate the rest once, in `completeReading`).
    pub fn tokens_before(&self) -> f64 {
        let known = self.reduction.0.tokens_before;
        if self.owing {
            known + js::complete_reading(&self.reading)
        } else {
            known
        }
    }
}

/// The strategies without a summarizer (`SUMMARIZER_REQUIRES_ASYNC` for the others).
fn reduce_now(call: &Call, t: &Transcript, reading: &Reading) -> Result<Finished, JsValue> {
    let started = js::now();
    reduce_reported(call, t, reading).map_err(|e| summarize::ended_with(call, t, started, e))
}

/// [`reduce_now`], which reports `reduceEnd` when this fails after `reduceStart`.
fn reduce_reported(call: &Call, t: &Transcript, reading: &Reading) -> Result<Finished, JsValue> {
    if call.config.strategy == Strategy::Progressive && !call.config.needs_summarizer() {
        return progressive::reduce_sync(call, t, reading);
    }
    // `onEvent`: `reduceStart`, then `reduceEnd` with the result, as the strategies that
    // summarize report them (a pair, whether a trigger fires or not).
    let on_event = &call.callbacks.on_event;
    let reporting = on_event.is_function();
    let started = js::now();
    if reporting {
        let strategy = match call.config.strategy {
            Strategy::Priority => "priority",
            _ => "truncate",
        };
        let (messages, tokens) = (t.len() as u32, t.total_tokens());
        js::report_reduction(
            on_event,
            strategy,
            messages,
            tokens,
            &JsValue::UNDEFINED,
            0.0,
        )?;
    }
    // Counts given per call are not memoised (see `memo`), nor a transcript with copies
    // counted without their orphans (see `decode::as_output`).
    let memo = !Array::is_array(&call.callbacks.token_counts) && t.uncounted == 0.0;
    let version = reading.version();
    let reduction = match memo
        .then(|| memo::reduction(version, &call.config, t))
        .flatten()
    {
        Some(r) => r,
        None => {
            let r = if memo {
                crate::reduce_sync_with(t, &call.config, || {
                    memo::structure(version, reading.base_version(), call.config.calibration, t)
                })?
            } else {
                crate::reduce_sync(t, &call.config)?
            };
            let indices = Indices::of(&r);
            let indices = if memo { indices.memoised() } else { indices };
            let r = std::rc::Rc::new((r, indices));
            if memo {
                memo::keep_reduction(version, &call.config, t, &r);
            }
            r
        }
    };
    let (r, indices) = &*reduction;
    if indices.has_cleaned() {
        decode::hand_orphans_of(reading, t);
    }
    let (noted, writings) = trace::note_or_none(call, reading, t, r)?;
    // (With the current turn's note, the reduction as written: its tokens counted.)
    let reduction = match noted {
        Some(noted) => {
            let indices = Indices::of(&noted);
            std::rc::Rc::new((noted, indices))
        }
        None => reduction,
    };
    let (r, indices) = &*reduction;
    let result = encode_result(reading, r, indices, &writings, &core_events(r));
    if reporting {
        // (Its tokensBefore is completed as it is read, see `estimating`.)
        call.callbacks.ended.set(true);
        js::report_reduction(on_event, "", 0, 0.0, &result, js::now() - started)?;
    }
    Ok(Finished::new(result, reduction, reading))
}

/// Reduces `messages`; awaits `config.summarizer` for the strategies that summarize. The
/// messages and the config are read when it is called: what the caller changes in them
/// afterwards (a reply appended while the summarizer runs) is not part of this reduction.
///
/// ```javascript
/// import { reduce } from "chat-history-reducer";
/// const result = await reduce(history, { maxTokens: 8000, strategy: "truncate" });
/// send(result.messages);
/// ```
#[wasm_bindgen(unchecked_return_type = "Promise<ReduceResult<M>>")]
pub fn reduce(
    #[wasm_bindgen(unchecked_param_type = "readonly M[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ReduceConfig<M>")] config: Option<JsValue>,
) -> js_sys::Promise {
    match Started::read(&messages, &config.unwrap_or(JsValue::UNDEFINED)) {
        Ok(started) => {
            wasm_bindgen_futures::future_to_promise(async { Ok(started.finish().await?.result) })
        }
        Err(e) => js_sys::Promise::reject(&e),
    }
}

/// A reduction whose input has been read.
struct Started {
    call: Call,
    transcript: std::rc::Rc<Transcript>,
    reading: Reading,
    /// The summary message's wrapping ([`summarize::wrapping`]), when a summarizer is used.
    wrapping: f64,
}

impl Started {
    fn read(messages: &JsValue, config: &JsValue) -> Result<Started, JsValue> {
        Started::read_call(messages, decode_config(config, true)?)
    }

    /// [`Started::read`] with the config read.
    fn read_call(messages: &JsValue, mut call: Call) -> Result<Started, JsValue> {
        let (transcript, reading) = decode_for_reduction(messages, &call)?;
        let transcript = decode::as_output(transcript, &reading, &call)?;
        let mut wrapping = 0.0;
        if call.config.needs_summarizer() {
            // `summaryMaxTokens` bounds the summary the summarizer writes (SPEC §4: "a longer
            // summary is `SUMMARY_TOO_LARGE`"); the core counts the summary message, which
            // may have that and its wrapping (the tag, its role and overhead: at a target of
            // 40 tokens the tag alone took the 10 of the default).
            wrapping = summarize::wrapping(&call, &reading, &transcript)?;
            if let Some(max) = call.config.summary_max_tokens.as_mut() {
                *max += wrapping;
            }
        }
        Ok(Started {
            call,
            transcript,
            reading,
            wrapping,
        })
    }

    async fn finish(self) -> Result<Finished, JsValue> {
        let Started {
            call,
            transcript,
            reading,
            wrapping,
        } = self;
        let started = js::now();
        // (Each strategy's future boxed: its state machine stays its own, not inlined in
        // this one.)
        let result = match call.config.strategy {
            Strategy::Progressive if call.config.needs_summarizer() => {
                boxed(progressive::reduce(&call, &transcript, &reading, wrapping)).await
            }
            Strategy::Summarize if call.callbacks.summary_cache.is_object() => {
                boxed(summarize::reduce_with_cache(
                    &call,
                    &transcript,
                    &reading,
                    wrapping,
                ))
                .await
            }
            Strategy::Summarize => {
                boxed(summarize::reduce_with_summarizer(
                    &call,
                    &transcript,
                    &reading,
                    wrapping,
                    None,
                ))
                .await
            }
            _ => reduce_now(&call, &transcript, &reading),
        };
        let finished = result.map_err(|e| summarize::ended_with(&call, &transcript, started, e))?;
        let finished = breakpoints::mark(&call, &transcript, &reading, finished)?;
        // Every offload is in the store before the result is returned (SPEC §4 `store`).
        if let Some(pending) = store_offloads(&call, &finished.result)? {
            wasm_bindgen_futures::JsFuture::from(pending).await?;
        }
        Ok(finished)
    }
}

type Reducing<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Finished, JsValue>> + 'a>>;

fn boxed<'a>(f: impl std::future::Future<Output = Result<Finished, JsValue>> + 'a) -> Reducing<'a> {
    Box::pin(f)
}

/// What `ChatHistory.prepare` reduces: its messages read with the history's [`Call`] (its
/// [`decode::Trust`] too), then [`Prepared::finish`] — unless nothing would change.
pub(crate) struct Prepared(Started);

impl Prepared {
    pub fn read(messages: &JsValue, call: Call) -> Result<Prepared, JsValue> {
        Started::read_call(messages, call).map(Prepared)
    }

    /// The reading, when the reduction would return the messages unchanged and tell no one:
    /// no trigger fires and there are no orphans (`crate::should_reduce`, as every strategy
    /// decides it), no `onEvent` to tell, no `summaryCache` to look up, no breakpoints to mark. Found with the
    /// structure kept for the messages (a history that grew extends it).
    pub fn unchanged(&self) -> Option<&Reading> {
        let Started {
            call,
            transcript: t,
            reading,
            ..
        } = &self.0;
        let callbacks = &call.callbacks;
        if callbacks.on_event.is_function()
            || callbacks.summary_cache.is_object()
            || call.config.cache_breakpoints
            || Array::is_array(&callbacks.token_counts)
            || t.uncounted != 0.0
        {
            return None;
        }
        let (version, base) = (reading.version(), reading.base_version());
        let quiet = !crate::should_reduce_with(t, &call.config, || {
            memo::structure(version, base, call.config.calibration, t)
        });
        quiet.then_some(reading)
    }

    pub async fn finish(self) -> Result<Finished, JsValue> {
        self.0.finish().await
    }
}

/// Whether any configured trigger fires: `maxTokens` exceeded, or more than
/// `targetMessages + thresholdMessages` messages since the newest summary; or the history
/// has tool results whose call is not in it, or calls that no result answers before its
/// latest turn, which a reduction removes.
///
/// ```javascript
/// import { shouldReduce, reduce } from "chat-history-reducer";
/// if (shouldReduce(history, config)) history = (await reduce(history, config)).messages;
/// ```
#[wasm_bindgen(js_name = shouldReduce)]
pub fn should_reduce(
    #[wasm_bindgen(unchecked_param_type = "readonly M[]")] messages: &JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ReduceConfig<M>")] config: Option<JsValue>,
) -> Result<bool, JsValue> {
    let call = decode_config(&config.unwrap_or(JsValue::UNDEFINED), true)?;
    let (t, reading) = decode_for_reduction(messages, &call)?;
    // Orphans are found by the structure: the one kept for these messages (a chat asks every
    // turn, of a history that grew), as a reduction takes it (`reduce_now`).
    Ok(crate::should_reduce_with(&t, &call.config, || {
        if Array::is_array(&call.callbacks.token_counts) {
            std::rc::Rc::new(crate::structure::Structure::of(&t))
        } else {
            let (version, base) = (reading.version(), reading.base_version());
            memo::structure(version, base, call.config.calibration, &t)
        }
    }))
}

/// The estimated (or counted) tokens of a message or an array of messages.
///
/// ```javascript
/// import { estimateTokens } from "chat-history-reducer";
/// estimateTokens({ role: "user", content: "Hello there" }); // 6
/// ```
#[wasm_bindgen(js_name = estimateTokens)]
pub fn estimate_tokens(
    #[wasm_bindgen(unchecked_param_type = "M | readonly M[]")] messages: &JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ReduceConfig<M>")] config: Option<JsValue>,
) -> Result<f64, JsValue> {
    let call = decode_config(&config.unwrap_or(JsValue::UNDEFINED), false)?;
    let (transcript, _) = if Array::is_array(messages) {
        decode_messages(messages, &call)?
    } else {
        decode_messages(&Array::of1(messages), &call)?
    };
    Ok(transcript.total_tokens())
}

/// The next calibration factor after the provider counted `inputTokens` for exactly
/// `messages`: pass it back as `config.calibration` so that later estimates follow the
/// model's own tokenizer. The first call takes the observed ratio as it is; later calls
/// (with `config.calibration` set) move halfway toward it. Bounded to [0.5, 2].
///
/// ```javascript
/// import { calibrate, reduceSync } from "chat-history-reducer";
/// let calibration;
/// const sent = reduceSync(history, { maxTokens, calibration }).messages;
/// const reply = await model(sent);
/// calibration = calibrate(sent, reply.usage.prompt_tokens, { calibration });
/// ```
#[wasm_bindgen]
pub fn calibrate(
    #[wasm_bindgen(unchecked_param_type = "readonly M[]")] messages: &JsValue,
    // (Not an `f64`: the glue would turn a string into a number, where every other number
    // this package takes must be one.)
    #[wasm_bindgen(js_name = inputTokens, unchecked_param_type = "number")] input_tokens: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ReduceConfig<M>")] config: Option<JsValue>,
) -> Result<f64, JsValue> {
    let call = decode_config(&config.unwrap_or(JsValue::UNDEFINED), false)?;
    let Some(input_tokens) = input_tokens.as_f64().filter(|n| n.is_finite() && *n > 0.0) else {
        return Err(crate::ReduceError::config(
            "inputTokens",
            "calibrate: inputTokens must be the provider's positive prompt token count",
        )
        .into());
    };
    let previous = call
        .config
        .calibration_given
        .then_some(call.config.calibration);
    let mut raw = call;
    raw.config.calibration = 1.0;
    raw.callbacks.token_counts = JsValue::UNDEFINED;
    let (t, _) = decode_messages(messages, &raw)?;
    Ok(crate::calibration::update(
        previous,
        t.total_tokens(),
        input_tokens,
    ))
}

/// Explains every message: role, tokens, group, round and why it is protected, with the
/// totals, the detected format and the tokenizer profile that estimated it.
///
/// ```javascript
/// import { analyze } from "chat-history-reducer";
/// const { messages, totalTokens, format, tokenizer } = analyze(history, { maxTokens: 8000 });
/// ```
#[wasm_bindgen(unchecked_return_type = "Analysis")]
pub fn analyze(
    #[wasm_bindgen(unchecked_param_type = "readonly M[]")] messages: &JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ReduceConfig<M>")] config: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let call = decode_config(&config.unwrap_or(JsValue::UNDEFINED), false)?;
    let (transcript, _) = decode_messages(messages, &call)?;
    let a = analysis::analyze(&transcript, &call.config);
    // (One loop filling the columns: smaller in the module than a collect for each.)
    let n = a.messages.len();
    let (mut roles, mut tokens, mut groups) = (vec![0u8; n], vec![0.0; n], vec![0u32; n]);
    let (mut rounds, mut protections, mut marks) = (vec![0u32; n], vec![0u8; n], vec![0u8; n]);
    for (k, m) in a.messages.iter().enumerate() {
        roles[k] = m.role.code();
        tokens[k] = m.tokens;
        groups[k] = m.group as u32;
        rounds[k] = m.round as u32;
        protections[k] = m.protected.code();
        marks[k] = u8::from(m.summary) | u8::from(m.real_user) << 1;
    }
    let (role_names, protection_names) = (Array::new(), Array::new());
    for code in 0..=u8::MAX {
        let Some(role) = Role::from_code(code) else {
            break;
        };
        role_names.push(&JsValue::from_str(role.name()));
    }
    for p in Protection::ALL {
        protection_names.push(&JsValue::from_str(p.name().unwrap_or("")));
    }
    let totals = [
        a.total_tokens,
        a.groups as f64,
        a.rounds as f64,
        f64::from(u8::from(a.should_reduce)),
    ];
    Ok(build_analysis(
        a.format.name(),
        a.tokenizer.map(|t| t.name()),
        &role_names,
        &protection_names,
        &roles,
        &tokens,
        &groups,
        &rounds,
        &protections,
        &marks,
        &totals,
    ))
}
