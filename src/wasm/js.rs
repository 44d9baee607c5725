//! What the boundary imports from its JavaScript: reading messages and options, building
//! results, summaries and rewritten messages, calling the summarizer, and `ChatHistory`'s
//! helpers. Nothing here decides anything.
//!
//! The JavaScript is written as modules by domain in `js/`; build.rs writes them as one,
//! `generated/boundary.js`, the module named here (wasm-bindgen's test runner serves each
//! named module as a file, and its server stalled when a browser fetched many at once).

use js_sys::{Array, JsString, Object};
use wasm_bindgen::prelude::*;

mod error_class {
    #![allow(unused_variables)] // the macro leaves `skip_typescript` unused
    use wasm_bindgen::prelude::*;

    // Their typings are `reader.d.ts` (wasm-bindgen declares a reexport as `unknown`; the
    // package's `index.d.ts` exports the real declarations over it).
    #[wasm_bindgen(module = "/src/wasm/generated/boundary.js")]
    extern "C" {
        /// `ReduceError`, defined in `js/common.js` so that it is a real `Error` subclass.
        #[wasm_bindgen(reexport, skip_typescript)]
        pub type ReduceError;
        #[wasm_bindgen(constructor)]
        pub fn new(code: &str, message: &str, index: JsValue, field: JsValue) -> ReduceError;
    }

    #[wasm_bindgen(module = "/src/wasm/generated/boundary.js")]
    extern "C" {
        /// The `context_reload` tool definition, exported as `reloadTool` (a plain object:
        /// re-exported as an imported "type" so that `types.d.ts` can declare it).
        #[wasm_bindgen(reexport, skip_typescript, js_name = reloadTool)]
        pub type ReloadTool;
    }
}
pub use error_class::ReduceError;

#[wasm_bindgen(module = "/src/wasm/generated/boundary.js")]
extern "C" {
    /// What `readMessages` read: typed arrays for the core, and the message objects.
    #[derive(Clone)]
    pub type Reading;
    /// `format`: [`Format::code`](crate::Format::code), or any other number for "auto";
    /// `params`: what a count depends on besides the message (see `decode::count_params`);
    /// `trusted`: a `ChatHistory`'s reading whose first `trusted_length` messages are these
    /// messages' first ones, unchanged by its contract (or undefined: see [`Trust`]).
    ///
    /// [`Trust`]: super::decode::Trust
    #[wasm_bindgen(catch, js_name = readMessages)]
    #[allow(clippy::too_many_arguments)]
    pub fn read_messages(
        messages: &JsValue,
        format: u32,
        tag: &str,
        length_mode: bool,
        chars_per_token: f64,
        params: &[f64],
        count_tokens: &JsValue,
        token_counts: &JsValue,
        keep: bool,
        trusted: &JsValue,
        trusted_length: u32,
    ) -> Result<Reading, JsValue>;
    /// Hands the reading the orphan links the core found ([`Structure::orphan_links`]):
    /// what a copy of a message without its orphans leaves out.
    ///
    /// [`Structure::orphan_links`]: crate::Structure::orphan_links
    #[wasm_bindgen(method, js_name = setOrphans)]
    pub fn set_orphans(this: &Reading, links: &[u32]);
    /// Whether [`Reading::set_orphans`] was called.
    #[wasm_bindgen(method, getter, js_name = orphansHanded)]
    pub fn orphans_handed(this: &Reading) -> bool;
    /// The format read, as [`Format::code`](crate::Format::code).
    #[wasm_bindgen(method, getter, js_name = formatCode)]
    pub fn format_code(this: &Reading) -> u32;
    /// The same for a call that was handed the previous call's reading (nothing changed).
    #[wasm_bindgen(method, getter)]
    pub fn version(this: &Reading) -> f64;
    /// How many of the first messages are those of reading [`Reading::base_version`],
    /// unchanged (a history that grew; 0 otherwise).
    #[wasm_bindgen(method, getter)]
    pub fn base(this: &Reading) -> u32;
    #[wasm_bindgen(method, getter, js_name = baseVersion)]
    pub fn base_version(this: &Reading) -> f64;
    /// Whether the next calls may be handed this reading (an input long enough to keep).
    #[wasm_bindgen(method, getter)]
    pub fn keep(this: &Reading) -> bool;
    #[wasm_bindgen(method, getter)]
    pub fn roles(this: &Reading) -> Vec<u8>;
    #[wasm_bindgen(method, getter)]
    pub fn flags(this: &Reading) -> Vec<u8>;
    /// Each message's count before calibration; -1 where it is to be estimated.
    #[wasm_bindgen(method, getter)]
    pub fn raw(this: &Reading) -> Vec<f64>;
    /// `config.tokenCounts` per message (-1 where none is given); empty without it.
    #[wasm_bindgen(method, getter)]
    pub fn given(this: &Reading) -> Vec<f64>;
    #[wasm_bindgen(method, getter)]
    pub fn images(this: &Reading) -> Vec<u32>;
    /// Length mode: the estimate of each of messages `indices` before overheads (their
    /// payloads written out now).
    #[wasm_bindgen(method)]
    pub fn lengths(this: &Reading, indices: &[u32]) -> Vec<f64>;
    /// Whether some texts wait to be estimated (in length mode: payloads of plain data).
    #[wasm_bindgen(method, getter)]
    pub fn deferred(this: &Reading) -> bool;
    /// How many texts (pieces) each of messages `indices` has to estimate (the low 24
    /// bits), and the code of its role name in [`Reading::role_names`] (the top 8 bits;
    /// 0 for none).
    #[wasm_bindgen(method, js_name = pieceCounts)]
    pub fn piece_counts(this: &Reading, indices: &[u32]) -> Vec<u32>;
    /// The role names that codes 1, 2, … stand for, each followed by `'\0'`.
    #[wasm_bindgen(method, getter, js_name = roleNames)]
    pub fn role_names(this: &Reading) -> String;
    /// Whether texts are best encoded as UTF-16 here ([`Reading::encode_utf16_into`]: Node,
    /// whose `Buffer` writes them several times faster than `TextEncoder` writes UTF-8).
    #[wasm_bindgen(method, getter, js_name = wideTexts)]
    pub fn wide_texts(this: &Reading) -> bool;
    /// Encodes the texts of messages `indices` as UTF-8 into `dest` from its start, in
    /// rounds, from piece number `from` on: each piece's length into `lengths[piece]`; a
    /// round ends at a piece that does not fit in what is left of `dest`. Returns the bytes
    /// written, or minus the room a piece needs when it does not fit in all of `dest`.
    #[wasm_bindgen(method, js_name = encodeInto)]
    pub fn encode_into(
        this: &Reading,
        indices: &[u32],
        from: u32,
        dest: &mut [u8],
        lengths: &mut [u32],
    ) -> f64;
    /// [`Reading::encode_into`] as UTF-16 code units (the same JavaScript method: it tells
    /// by `dest`'s type).
    #[wasm_bindgen(method, js_name = encodeInto)]
    pub fn encode_utf16_into(
        this: &Reading,
        indices: &[u32],
        from: u32,
        dest: &mut [u16],
        lengths: &mut [u32],
    ) -> f64;
    /// The length of the texts of messages `indices` (UTF-16 code units), counted only as
    /// far as past `limit`.
    #[wasm_bindgen(method)]
    pub fn units(this: &Reading, indices: &[u32], limit: f64) -> f64;
    /// Lets the texts go: every message that needs an estimate has one.
    #[wasm_bindgen(method, js_name = dropTexts)]
    pub fn drop_texts(this: &Reading);
    /// Sets the counts before calibration (after a late estimate).
    #[wasm_bindgen(method, js_name = setRaw)]
    pub fn set_raw(this: &Reading, raw: &[f64]);
    /// Whether some messages were left unestimated: the result's `tokensBefore` is then
    /// completed when read (see `decode::complete`).
    #[wasm_bindgen(method, getter)]
    pub fn pending(this: &Reading) -> bool;
    #[wasm_bindgen(method, setter)]
    pub fn set_pending(this: &Reading, pending: bool);
    /// What a late estimate needs of the config: overhead, image tokens, calibration and
    /// the class weights.
    #[wasm_bindgen(method, getter)]
    pub fn estimator(this: &Reading) -> Vec<f64>;
    #[wasm_bindgen(method, js_name = setEstimator)]
    pub fn set_estimator(this: &Reading, params: &[f64]);

    /// `(key, kind)` pairs of every tool-call link, message after message.
    #[wasm_bindgen(method, getter)]
    pub fn links(this: &Reading) -> Vec<u32>;
    /// Message i's links are `links[link_starts[i]..link_starts[i + 1]]`.
    #[wasm_bindgen(method, getter, js_name = linkStarts)]
    pub fn link_starts(this: &Reading) -> Vec<u32>;
    /// Each message's count before calibration (empty: unchanged), and keeps the reading
    /// for the calls after this one.
    pub fn remember(reading: &Reading, tokens: &[f64]);
}

#[wasm_bindgen(module = "/src/wasm/generated/boundary.js")]
extern "C" {
    /// Every option at once (`Config::OPTION_NAMES`, in order): kinds and numbers written
    /// into the slices, the values returned.
    #[wasm_bindgen(js_name = readOptions)]
    pub fn read_options(config: &JsValue, kinds: &mut [u8], numbers: &mut [f64]) -> Array;
    #[wasm_bindgen(catch, js_name = optionEntries)]
    pub fn option_entries(config: &JsValue, key: &str, value: &JsValue) -> Result<Array, JsValue>;
}

#[wasm_bindgen(module = "/src/wasm/generated/boundary.js")]
extern "C" {
    /// The function results call to complete a pending reading's `tokensBefore`.
    #[wasm_bindgen(js_name = setCompleter)]
    pub fn set_completer(complete: &js_sys::Function);

    /// `analyze`'s result from its columns (see `buildAnalysis`, js/results.js).
    #[wasm_bindgen(js_name = buildAnalysis)]
    #[allow(clippy::too_many_arguments)]
    pub fn build_analysis(
        format: &str,
        tokenizer: Option<&str>,
        role_names: &Array,
        protection_names: &Array,
        roles: &[u8],
        tokens: &[f64],
        groups: &[u32],
        rounds: &[u32],
        protections: &[u8],
        marks: &[u8],
        totals: &[f64],
    ) -> JsValue;

    /// `{ type, messages, tokensBefore, tokensAfter }`.
    #[wasm_bindgen(js_name = makeEvent)]
    pub fn make_event(kind: &str, messages: u32, tokens_before: f64, tokens_after: f64) -> Object;

    #[wasm_bindgen(js_name = buildResult)]
    #[allow(clippy::too_many_arguments)]
    pub fn build_result(
        reading: &Reading,
        output: &[u32],
        written: &Array,
        summary: &JsValue,
        offloaded: &Object,
        kept: &[u32],
        dropped: &[u32],
        summarized: &[u32],
        rewritten: &[u32],
        totals: &[f64],
        events: &Array,
    ) -> JsValue;

    /// `cacheBreakpoints`: per output message, its caller's breakpoints, whether one can go
    /// on it, and whether it is a summary (the `SPOT_*` bits of `contract`).
    #[wasm_bindgen(catch, js_name = breakpointSpots)]
    pub fn breakpoint_spots(
        reading: &Reading,
        messages: &Array,
        spots: &mut [u8],
    ) -> Result<(), JsValue>;
    /// Marks a result's messages at `positions` with copies (`inputs`: the input index each
    /// held as it was, or `u32::MAX`): the messages they replaced.
    #[wasm_bindgen(catch, js_name = markBreakpoints)]
    pub fn mark_breakpoints(
        reading: &Reading,
        result: &JsValue,
        positions: &[u32],
        inputs: &[u32],
    ) -> Result<Array, JsValue>;

    pub fn now() -> f64;
    #[wasm_bindgen(catch)]
    pub fn emit(on_event: &JsValue, event: &Object) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, js_name = reportReduction)]
    pub fn report_reduction(
        on_event: &JsValue,
        strategy: &str,
        messages: u32,
        tokens: f64,
        result: &JsValue,
        duration_ms: f64,
    ) -> Result<(), JsValue>;
}

#[wasm_bindgen(module = "/src/wasm/generated/boundary.js")]
extern "C" {
    /// `{ message, id }` of a rewritten or compressed message.
    pub type Written;
    #[wasm_bindgen(method, getter)]
    pub fn message(this: &Written) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub fn id(this: &Written) -> String;
    #[wasm_bindgen(js_name = offloadMessage)]
    pub fn offload_message(
        reading: &Reading,
        index: u32,
        preview_chars: u32,
        tokens: f64,
    ) -> Written;
    #[wasm_bindgen(js_name = clearToolResult)]
    pub fn clear_tool_result(reading: &Reading, index: u32, tokens: f64) -> Written;
    #[wasm_bindgen(js_name = rewriteWithSummary)]
    pub fn rewrite_with_summary(reading: &Reading, index: u32, summary: &JsString) -> Written;
    /// What the summarizer is handed of message `index` when it is too large for one call:
    /// a copy with each text cut to its head and tail, `keep` of its length; undefined when
    /// that saves nothing.
    #[wasm_bindgen(js_name = excerptMessage)]
    pub fn excerpt_message(reading: &Reading, index: u32, keep: f64) -> JsValue;
    /// Writes a result's `offloaded` into `config.store`: a promise when the store's writes
    /// are asynchronous, else undefined (`js/offload.js`).
    #[wasm_bindgen(catch, js_name = storeOffloads)]
    pub fn store_offloads(store: &JsValue, offloaded: &JsValue) -> Result<JsValue, JsValue>;
    /// A reduction's offloads as a store holding `known` keeps them (`js/offload.js`).
    #[wasm_bindgen(js_name = resolveOffloads)]
    pub fn resolve_offloads(known: &Object, added: &Object) -> Object;
    /// `progressive`'s index of dropped tool calls (`js/toolindex.js`): `{ lines, count, ids,
    /// first, earlier }`.
    pub type ToolIndex;
    #[wasm_bindgen(method, getter)]
    pub fn count(this: &ToolIndex) -> u32;
    #[wasm_bindgen(method, getter)]
    pub fn ids(this: &ToolIndex) -> Array;
    #[wasm_bindgen(method, getter)]
    pub fn first(this: &ToolIndex) -> u32;
    #[wasm_bindgen(method, getter)]
    pub fn earlier(this: &ToolIndex) -> u32;
    #[wasm_bindgen(js_name = toolIndex)]
    pub fn tool_index(
        reading: &Reading,
        messages: &[u32],
        ends: &[u32],
        earlier: &[u32],
        tag: &str,
        chars: f64,
    ) -> ToolIndex;
    /// The index's text without its oldest `skip` lines.
    #[wasm_bindgen(js_name = indexText)]
    pub fn index_text(index: &ToolIndex, skip: u32) -> JsString;
    /// How many of the oldest lines to leave out for about `share` of the characters of those
    /// from `skip` on to stay.
    #[wasm_bindgen(js_name = skipFor)]
    pub fn skip_for(index: &ToolIndex, skip: u32, share: f64) -> u32;
    /// Which units of the index get a line (`js/toolindex.js`): their numbers.
    #[wasm_bindgen(js_name = listableUnits)]
    pub fn listable_units(reading: &Reading, messages: &[u32], ends: &[u32]) -> Vec<u32>;
    #[wasm_bindgen(js_name = holdsReload)]
    pub fn holds_reload(reading: &Reading, indices: &[u32]) -> bool;
    #[wasm_bindgen(js_name = compressRun)]
    pub fn compress_run(
        reading: &Reading,
        indices: &[u32],
        preview_chars: u32,
        summary: JsValue,
    ) -> Written;
}

#[wasm_bindgen(module = "/src/wasm/generated/boundary.js")]
extern "C" {
    #[wasm_bindgen(js_name = summaryMessage)]
    pub fn make_summary(reading: &Reading, role: &str, text: &JsString) -> JsValue;
    /// The keys of every prefix of the messages for `summaryCache` (`js/cache.js`), or
    /// undefined when a message has no JSON text.
    #[wasm_bindgen(js_name = summaryKeys)]
    pub fn summary_keys(reading: &Reading, options: &str, leading: u32) -> JsValue;
    /// The stored summary of the longest prefix, `{ text, end }`, or undefined (a promise).
    #[wasm_bindgen(js_name = lookupSummary)]
    pub fn lookup_summary(cache: &JsValue, keys: &JsValue) -> js_sys::Promise;
    /// Stores a summary of the messages `start..end` (a promise of whether it was taken).
    #[wasm_bindgen(js_name = storeSummary)]
    pub fn store_summary(
        cache: &JsValue,
        keys: &JsValue,
        start: u32,
        end: u32,
        text: &JsString,
    ) -> js_sys::Promise;
    /// The messages with `at..end` replaced by `summary`.
    pub fn substitute(reading: &Reading, at: u32, end: u32, summary: &JsValue) -> Array;
    #[wasm_bindgen(js_name = summaryText)]
    pub fn summary_text(reading: &Reading, indices: &[u32], tag: &str) -> JsString;
    #[wasm_bindgen(js_name = wrapSummary)]
    pub fn wrap_summary(text: &JsString, tag: &str) -> JsString;
    pub fn pick(reading: &Reading, indices: &[u32]) -> Array;
    #[wasm_bindgen(js_name = callSummarizer)]
    pub fn call_summarizer(
        summarizer: &JsValue,
        request: &Object,
        timeout_ms: JsValue,
        signal: Option<&web_sys::AbortSignal>,
    ) -> js_sys::Promise;
    /// The usage of two calls of one summary, added.
    #[wasm_bindgen(js_name = addUsage)]
    pub fn add_usage(a: &JsValue, b: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = failureMessage)]
    pub fn failure_message(reason: &str, cause: &JsValue, a: f64, b: f64) -> String;
    #[wasm_bindgen(js_name = summarizerError)]
    pub fn summarizer_error(code: &str, message: &str, cause: &JsValue) -> JsValue;

    /// What `callSummarizer` settled with.
    pub type Outcome;
    #[wasm_bindgen(method, getter)]
    pub fn status(this: &Outcome) -> String;
    #[wasm_bindgen(method, getter)]
    pub fn text(this: &Outcome) -> Option<JsString>;
    #[wasm_bindgen(method, getter)]
    pub fn usage(this: &Outcome) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub fn error(this: &Outcome) -> JsValue;
    #[wasm_bindgen(method, getter, js_name = durationMs)]
    pub fn duration_ms(this: &Outcome) -> f64;
}

#[wasm_bindgen(module = "/src/wasm/generated/boundary.js")]
extern "C" {
    /// The tokens a pending reading owed, estimated once (what its result's `tokensBefore`
    /// getter adds).
    #[wasm_bindgen(js_name = completeReading)]
    pub fn complete_reading(reading: &Reading) -> f64;

    /// The config of one `ChatHistory.prepare()`: `config` with the `token_counts` (one per
    /// message, NaN for none; empty for no `tokenCounts`) and `calibration` a history
    /// learned, and a summarizer that counts its calls in `calls[0]`.
    #[wasm_bindgen(js_name = historyConfig)]
    pub fn history_config(
        config: &JsValue,
        token_counts: &[f64],
        calibration: Option<f64>,
        calls: &js_sys::Uint32Array,
        options: &JsValue,
    ) -> JsValue;
    /// `ChatHistory.toJSON()`'s state from its parts (`history::State`): `counts` NaN for
    /// none; `stats`: reductions, summarizer calls, tokens saved, 1 if over budget.
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = writeState, catch)]
    pub fn write_state(
        messages: &Array,
        original: &Array,
        counts: &[f64],
        covers: &Array,
        events: &Array,
        offloaded: &Object,
        stats: &[f64],
        prompt_length: Option<f64>,
        pending_output_tokens: Option<f64>,
        calibration: Option<f64>,
        options: &JsValue,
    ) -> Result<JsValue, JsValue>;
    /// `recordUsage`'s `[inputTokens, outputTokens]`, each a count or undefined
    /// (`INVALID_CONFIG`, field `usage`, for anything else).
    #[wasm_bindgen(js_name = usageCounts, catch)]
    pub fn usage_counts(usage: &JsValue) -> Result<Array, JsValue>;
    /// A state's `[kind, version]`, read without throwing.
    #[wasm_bindgen(js_name = stateHeader)]
    pub fn state_header(state: &JsValue) -> Array;
    /// The parts of a state of `version` that are objects, and its numbers (NaN for none),
    /// as read (in the order of `readState`'s doc); the objects of its working messages and
    /// offloaded originals linked to `original`'s.
    #[wasm_bindgen(js_name = readState, catch)]
    pub fn read_state(
        state: &JsValue,
        version: u32,
        numbers: &mut [f64],
        options: &JsValue,
    ) -> Result<Array, JsValue>;
    /// `INVALID_CONFIG` (field `state`) for offloaded originals that are not messages of the
    /// history's `formats` (those of `original` are checked as its own).
    #[wasm_bindgen(js_name = checkOffloaded, catch)]
    pub fn check_offloaded(
        offloaded: &Object,
        original: &Array,
        formats: u32,
    ) -> Result<(), JsValue>;
    /// The counts of `read_state`'s parts (NaN for a value that is no number).
    #[wasm_bindgen(js_name = savedCounts)]
    pub fn saved_counts(parts: &Array) -> Vec<f64>;
    /// Deletes the offload ids whose originals hold any of `gone` (an edit removed them).
    #[wasm_bindgen(js_name = pruneOffloaded)]
    pub fn prune_offloaded(offloaded: &Object, gone: &Array);
    /// `ChatHistory.reload(id)`: a copy of the originals offloaded as `id`, or undefined.
    pub fn reloaded(offloaded: &Object, id: &JsValue) -> JsValue;
    /// The first of `values` the model wrote (the start of its reply), null for one that holds
    /// more than the model wrote (tool outputs), or undefined.
    #[wasm_bindgen(js_name = replyOf)]
    pub fn reply_of(values: &Array) -> JsValue;
    #[wasm_bindgen(catch, js_name = startingMessages)]
    pub fn starting_messages(value: &JsValue) -> Result<Array, JsValue>;
    /// Whether a history that holds `before` messages, all of the formats `formats` (a bit
    /// mask of the formats (`js/formats/index.js`); under a named format its code with the flag 1 << 30), may take
    /// `values`: an error if one is not a message, not of those formats, or refused by their
    /// reader (naming, when `pushed`, the argument of `push` too); else the formats all its
    /// messages fit then.
    #[wasm_bindgen(catch, js_name = checkMessages)]
    pub fn check_messages(
        values: &Array,
        before: u32,
        by: &str,
        formats: u32,
        pushed: bool,
    ) -> Result<u32, JsValue>;
}

#[wasm_bindgen]
extern "C" {
    /// A `ReduceResult` (`buildResult`): the JavaScript parts a `ChatHistory` takes of it
    /// (what it decides comes from the core's reduction, see `Finished`).
    pub type ReduceResult;
    #[wasm_bindgen(method, getter)]
    pub fn messages(this: &ReduceResult) -> Array;
    #[wasm_bindgen(method, getter)]
    pub fn events(this: &ReduceResult) -> Array;
    #[wasm_bindgen(method, getter)]
    pub fn offloaded(this: &ReduceResult) -> Object;
}
