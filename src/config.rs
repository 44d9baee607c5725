//! `ReduceConfig` (SPEC §4): parsed from plain option values and validated, with every
//! default resolved, so the strategies read settled numbers.

use crate::error::{cat, join, show, ReduceError};
use crate::estimate::{Estimator, Profile, Tokenizer, Weights};
use crate::formats::FormatChoice;
use crate::history::MAX_COUNT;

/// The most tokens a character may weigh (`estimatorWeights`; the largest fitted weight is
/// 2.37): the estimator's fixed-point sum of the longest JavaScript string stays exact.
const MAX_WEIGHT: f64 = 1000.0;

/// The fewest characters a token may take (`charsPerToken`): no estimate of a text becomes
/// `Infinity`.
const MIN_CHARS_PER_TOKEN: f64 = 0.01;

/// `summaryMaxTokens` of `summarize` without a token target (else a quarter of the target):
/// a summary judged by what it replaces would be refused where a few short messages go.
pub const DEFAULT_SUMMARY_MAX_TOKENS: f64 = 1000.0;

/// `summarizerInputTokens` unless set: a summary of a chat is rarely handed more, any
/// hosted model takes it with room for its instructions and reply, and a tool output of a
/// few hundred thousand characters goes as an excerpt instead of whole.
pub const DEFAULT_SUMMARIZER_INPUT_TOKENS: f64 = 32_000.0;

/// `largeMessageTokens` and `minToolRun` at a large window: their defaults at a token target
/// of 25,000 and more (a 32k window or larger). Below, they shrink with the target
/// ([`Config::large_message_default`], [`Config::min_tool_run_default`]).
pub const LARGE_MESSAGE_TOKENS: f64 = 1250.0;
pub const MIN_TOOL_RUN: usize = 6;

/// `keepToolResults` unless set: the newest tool results that `progressive`'s stage
/// `clearToolResults` leaves whole, as Anthropic's context editing (`keep`) and LangChain's
/// `ClearToolUsesEdit` keep by default.
pub const KEEP_TOOL_RESULTS: usize = 3;

/// `toolIndexRatio` unless set: the share of the token target that `progressive`'s index
/// of dropped tool calls may take.
pub const TOOL_INDEX_RATIO: f64 = 0.1;

/// An option's value as the caller gave it, before validation. The boundary turns
/// JavaScript values into these; tests build them directly.
#[derive(Clone, Debug, PartialEq)]
pub enum OptionValue {
    /// `undefined` or `null`: the default applies.
    Missing,
    Bool(bool),
    Number(f64),
    Text(String),
    Function,
    Array,
    /// A plain object, with its own enumerable entries.
    Object(Vec<(String, OptionValue)>),
    /// Any other value, by its JavaScript type name (`"bigint"`, `"symbol"`, …).
    Other(&'static str),
}

impl OptionValue {
    /// `INVALID_CONFIG`: option `key` must be `what`, and is this value.
    #[inline(never)]
    fn wrong(&self, key: &'static str, what: &str) -> ReduceError {
        ReduceError::config(
            key,
            cat(&[key, " must be ", what, ", got ", self.type_name()]),
        )
    }

    fn type_name(&self) -> &'static str {
        match self {
            OptionValue::Missing => "undefined",
            OptionValue::Bool(_) => "a boolean",
            OptionValue::Number(_) => "a number",
            OptionValue::Text(_) => "a string",
            OptionValue::Function => "a function",
            OptionValue::Array => "an array",
            OptionValue::Object(_) => "an object",
            OptionValue::Other(t) => t,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    Truncate,
    Priority,
    Summarize,
    Progressive,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartOn {
    User,
    Any,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SummaryMode {
    Single,
    Layered,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SummaryRole {
    User,
    System,
    Assistant,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnSummarizerError {
    Fallback,
    Throw,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnOverBudget {
    BestEffort,
    Error,
}

/// A validated configuration with every default resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub strategy: Strategy,
    pub format: FormatChoice,
    /// Token trigger.
    pub max_tokens: Option<f64>,
    /// Token target (set exactly when `max_tokens` is).
    pub target_tokens: Option<f64>,
    /// Message target, and with `threshold_messages` the message trigger.
    pub target_messages: Option<usize>,
    pub threshold_messages: usize,
    pub keep_system: bool,
    pub keep_last: usize,
    pub start_on: StartOn,
    pub keep_recent_pairs: usize,
    pub estimator: Estimator,
    /// Multiplies every built-in estimate (not given counts): see [`crate::calibration`].
    pub calibration: f64,
    /// Whether `calibration` was given (a first observation is taken as it is).
    pub calibration_given: bool,
    pub message_overhead: f64,
    pub image_tokens: f64,
    pub has_count_tokens: bool,
    pub has_summarizer: bool,
    pub has_on_event: bool,
    pub summary_mode: SummaryMode,
    pub summary_role: SummaryRole,
    pub summary_tag: String,
    pub summary_max_tokens: Option<f64>,
    pub on_summarizer_error: OnSummarizerError,
    pub timeout_ms: Option<f64>,
    pub large_message_tokens: f64,
    pub preview_chars: usize,
    pub min_tool_run: usize,
    /// `progressive`: the newest tool results its stage `clearToolResults` leaves whole.
    pub keep_tool_results: usize,
    pub current_round_ratio: f64,
    /// `progressive`: the share of the token target its index of dropped tool calls may
    /// take (0: no index).
    pub tool_index_ratio: f64,
    pub on_over_budget: OnOverBudget,
    /// The most one summarizer call is handed (`strategies::chunks`).
    pub summarizer_input_tokens: f64,
    /// Mark the output for provider prompt caching (`breakpoints.rs`).
    pub cache_breakpoints: bool,
}

impl Default for Config {
    /// The defaults of SPEC §4, with no trigger set (not valid on its own).
    fn default() -> Self {
        Config {
            strategy: Strategy::Truncate,
            format: FormatChoice::Auto,
            max_tokens: None,
            target_tokens: None,
            target_messages: None,
            threshold_messages: 5,
            keep_system: true,
            keep_last: 1,
            start_on: StartOn::User,
            keep_recent_pairs: 2,
            estimator: Estimator::default(),
            calibration: 1.0,
            calibration_given: false,
            message_overhead: 3.0,
            image_tokens: 1000.0,
            has_count_tokens: false,
            has_summarizer: false,
            has_on_event: false,
            summary_mode: SummaryMode::Single,
            summary_role: SummaryRole::User,
            summary_tag: "conversation-summary".to_string(),
            summary_max_tokens: None,
            on_summarizer_error: OnSummarizerError::Fallback,
            timeout_ms: None,
            large_message_tokens: LARGE_MESSAGE_TOKENS,
            preview_chars: 200,
            min_tool_run: MIN_TOOL_RUN,
            keep_tool_results: KEEP_TOOL_RESULTS,
            current_round_ratio: 0.3,
            tool_index_ratio: TOOL_INDEX_RATIO,
            on_over_budget: OnOverBudget::BestEffort,
            summarizer_input_tokens: DEFAULT_SUMMARIZER_INPUT_TOKENS,
            cache_breakpoints: false,
        }
    }
}

/// How `Config::parse` reads the value of one option.
type ReadOption<'a> = dyn FnMut(&'static str) -> Result<OptionValue, ReduceError> + 'a;

/// Reads options one by one and says precisely which one is wrong. (Not generic over the
/// reading function: one copy of the parser in the binary, whoever calls it.)
struct Reader<'a, 'b> {
    read: &'a mut ReadOption<'b>,
}

impl Reader<'_, '_> {
    #[inline(never)]
    fn get(&mut self, key: &'static str) -> Result<OptionValue, ReduceError> {
        (self.read)(key)
    }

    fn number(&mut self, key: &'static str) -> Result<Option<f64>, ReduceError> {
        self.number_above(key, false)
    }

    fn positive(&mut self, key: &'static str) -> Result<Option<f64>, ReduceError> {
        self.number_above(key, true)
    }

    /// A number ≥ 0, or > 0 when `positive`, and at most [`MAX_COUNT`] (so that no sum of
    /// tokens, counts or overheads becomes `Infinity`).
    #[inline(never)]
    fn number_above(
        &mut self,
        key: &'static str,
        positive: bool,
    ) -> Result<Option<f64>, ReduceError> {
        match self.get(key)? {
            OptionValue::Missing => Ok(None),
            OptionValue::Number(n) if n <= MAX_COUNT && (n > 0.0 || (n == 0.0 && !positive)) => {
                Ok(Some(n))
            }
            OptionValue::Number(n) => Err(ReduceError::config(
                key,
                cat(&[
                    key,
                    " must be a finite number ",
                    if positive { "greater than 0" } else { "≥ 0" },
                    " and at most 9007199254740991 (Number.MAX_SAFE_INTEGER), got ",
                    &show(n),
                ]),
            )),
            other => Err(other.wrong(key, "a number")),
        }
    }

    /// A whole number within a number option's bounds: a count of messages, groups, pairs
    /// or characters. Held as at most `u32::MAX` (on every target alike), more than any
    /// history or text has, so a larger one means the same: `keepLast` 2^40 keeps every
    /// group.
    #[inline(never)]
    fn count(&mut self, key: &'static str) -> Result<Option<usize>, ReduceError> {
        match self.number(key)? {
            Some(n) if n.fract() != 0.0 => Err(ReduceError::config(
                key,
                cat(&[key, " must be a whole number, got ", &show(n)]),
            )),
            // (`as` saturates.)
            n => Ok(n.map(|n| n as u32 as usize)),
        }
    }

    /// A number from 0 to 1: a share.
    #[inline(never)]
    fn ratio(&mut self, key: &'static str) -> Result<Option<f64>, ReduceError> {
        match self.number(key)? {
            Some(x) if x > 1.0 => Err(ReduceError::config(
                key,
                cat(&[key, " must be between 0 and 1, got ", &show(x)]),
            )),
            x => Ok(x),
        }
    }

    #[inline(never)]
    fn boolean(&mut self, key: &'static str) -> Result<Option<bool>, ReduceError> {
        match self.get(key)? {
            OptionValue::Missing => Ok(None),
            OptionValue::Bool(b) => Ok(Some(b)),
            other => Err(other.wrong(key, "true or false")),
        }
    }

    #[inline(never)]
    fn text(&mut self, key: &'static str) -> Result<Option<String>, ReduceError> {
        match self.get(key)? {
            OptionValue::Missing => Ok(None),
            OptionValue::Text(s) => Ok(Some(s)),
            other => Err(other.wrong(key, "a string")),
        }
    }

    fn choice<T: Copy>(
        &mut self,
        key: &'static str,
        choices: &[(&'static str, T)],
    ) -> Result<Option<T>, ReduceError> {
        Ok(self
            .choose(key, &|k| choices.get(k).map(|c| c.0))?
            .map(|k| choices[k].1))
    }

    /// The index of option `key`'s value among the names `name(0)`, `name(1)`, … (until
    /// `None`): the part of the generic `choice` that is not generic.
    #[inline(never)]
    fn choose(
        &mut self,
        key: &'static str,
        name: &dyn Fn(usize) -> Option<&'static str>,
    ) -> Result<Option<usize>, ReduceError> {
        let Some(s) = self.text(key)? else {
            return Ok(None);
        };
        let names = || (0..).map_while(name);
        match names().position(|n| n == s) {
            Some(k) => Ok(Some(k)),
            None => {
                let mut list = cat(&[key, " \"", &s, "\" is not one of "]);
                for (k, n) in names().enumerate() {
                    let sep = if k > 0 { ", \"" } else { "\"" };
                    list = cat(&[&list, sep, n, "\""]);
                }
                Err(ReduceError::config(key, list))
            }
        }
    }

    #[inline(never)]
    fn function(&mut self, key: &'static str) -> Result<bool, ReduceError> {
        match self.get(key)? {
            OptionValue::Missing => Ok(false),
            OptionValue::Function => Ok(true),
            other => Err(other.wrong(key, "a function")),
        }
    }
}

impl Config {
    /// Every option, in the order the parser reads them (whatever their values: a native
    /// test checks it). The boundary reads them all in one pass, in this order, from the
    /// list build.rs generates from the same constant.
    pub const OPTION_NAMES: [&'static str; crate::contract::OPTION_NAMES.len()] =
        crate::contract::OPTION_NAMES;

    /// Parses and validates options; `read(key)` gives the value of one option. A config
    /// for reducing must set a trigger.
    pub fn parse(
        read: impl FnMut(&'static str) -> Result<OptionValue, ReduceError>,
    ) -> Result<Config, ReduceError> {
        Config::parse_with(true, read)
    }

    /// [`Config::parse`], where `need_trigger: false` accepts a config without a trigger
    /// (for `estimateTokens` and `analyze`).
    pub fn parse_with(
        need_trigger: bool,
        mut read: impl FnMut(&'static str) -> Result<OptionValue, ReduceError>,
    ) -> Result<Config, ReduceError> {
        let mut c = Config::default();
        c.parse_reading(need_trigger, &mut read)?;
        Ok(c)
    }

    /// [`Config::parse_with`] into this config, the default. (Not returning it: a `?` that
    /// returns drops nothing here.)
    fn parse_reading(
        &mut self,
        need_trigger: bool,
        read: &mut ReadOption,
    ) -> Result<(), ReduceError> {
        let mut r = Reader { read };
        let c = self;

        if let Some(s) = r.choice(
            "strategy",
            &[
                ("truncate", Strategy::Truncate),
                ("priority", Strategy::Priority),
                ("summarize", Strategy::Summarize),
                ("progressive", Strategy::Progressive),
            ],
        )? {
            c.strategy = s;
        }
        if let Some(f) = r.text("format")? {
            c.format = FormatChoice::parse(&f)?;
        }

        c.max_tokens = r.positive("maxTokens")?;
        let target_tokens = r.number("targetTokens")?;
        c.target_messages = r.count("targetMessages")?;
        match (c.max_tokens, target_tokens) {
            (Some(max), Some(t)) if t > max => {
                return Err(ReduceError::config(
                    "targetTokens",
                    cat(&[
                        "targetTokens (",
                        &show(t),
                        ") must not exceed maxTokens (",
                        &show(max),
                        ")",
                    ]),
                ))
            }
            (Some(_), Some(t)) => c.target_tokens = Some(t),
            (Some(max), None) => c.target_tokens = Some((0.8 * max).floor()),
            (None, Some(_)) => {
                return Err(ReduceError::config(
                    "targetTokens",
                    "targetTokens needs maxTokens: set maxTokens (the trigger) as well",
                ))
            }
            (None, None) => {}
        }
        if need_trigger && c.max_tokens.is_none() && c.target_messages.is_none() {
            return Err(ReduceError::config(
                "maxTokens",
                "set maxTokens (a token budget) or targetMessages (a message count): \
                 without a trigger there is nothing to reduce to",
            ));
        }
        if let Some(n) = r.count("thresholdMessages")? {
            c.threshold_messages = n;
        }
        if let Some(b) = r.boolean("keepSystem")? {
            c.keep_system = b;
        }
        if let Some(n) = r.count("keepLast")? {
            c.keep_last = n;
        }
        if let Some(s) = r.choice("startOn", &[("user", StartOn::User), ("any", StartOn::Any)])? {
            c.start_on = s;
        }
        if let Some(n) = r.count("keepRecentPairs")? {
            c.keep_recent_pairs = n;
        }

        match r.get("tokenCounts")? {
            OptionValue::Missing | OptionValue::Array => {}
            other => return Err(other.wrong("tokenCounts", "an array of numbers")),
        }
        c.has_count_tokens = r.function("countTokens")?;

        let estimator = r.choice("estimator", &[("classes", true), ("length", false)])?;
        let chars_per_token = r.positive("charsPerToken")?;
        if let Some(c) = chars_per_token.filter(|&c| c < MIN_CHARS_PER_TOKEN) {
            return Err(ReduceError::config(
                "charsPerToken",
                cat(&["charsPerToken must be at least 0.01, got ", &show(c)]),
            ));
        }
        // (Auto first: "auto", then each profile by its name.)
        let tokenizer = r.choose("tokenizer", &|k| match k {
            0 => Some("auto"),
            k => Tokenizer::ALL.get(k - 1).map(|t| t.name()),
        })?;
        let mut profile = Profile {
            tokenizer: tokenizer
                .and_then(|k| k.checked_sub(1))
                .map(|k| Tokenizer::ALL[k]),
            ..Profile::default()
        };
        match r.get("estimatorWeights")? {
            OptionValue::Missing => {}
            OptionValue::Object(entries) => {
                for (name, value) in entries {
                    let Some(slot) = Weights::NAMES
                        .iter()
                        .position(|n| *n == name)
                        .map(|k| &mut profile.overrides[k])
                    else {
                        return Err(ReduceError::config(
                            "estimatorWeights",
                            cat(&[
                                "estimatorWeights has no class \"",
                                &name,
                                "\"; the classes are ",
                                &join(&Weights::NAMES, ", "),
                            ]),
                        ));
                    };
                    match value {
                        OptionValue::Number(w) if (0.0..=MAX_WEIGHT).contains(&w) => *slot = w,
                        other => return Err(ReduceError::config(
                            "estimatorWeights",
                            cat(&[
                                "estimatorWeights.",
                                &name,
                                " must be a number of tokens per character from 0 to 1000, got ",
                                &match other {
                                    OptionValue::Number(n) => show(n),
                                    o => o.type_name().to_string(),
                                },
                            ]),
                        )),
                    }
                }
            }
            other => return Err(other.wrong("estimatorWeights", "an object of class weights")),
        }
        c.estimator = match estimator {
            Some(false) => Estimator::Length {
                chars_per_token: chars_per_token.unwrap_or(4.0),
            },
            _ => Estimator::Classes(profile),
        };
        if let Some(x) = r.positive("calibration")? {
            use crate::calibration::{MAX, MIN};
            if !(MIN..=MAX).contains(&x) {
                return Err(ReduceError::config(
                    "calibration",
                    cat(&[
                        "calibration must be between ",
                        &show(MIN),
                        " and ",
                        &show(MAX),
                        " (what calibrate() returns), got ",
                        &show(x),
                    ]),
                ));
            }
            c.calibration = x;
            c.calibration_given = true;
        }
        if let Some(n) = r.number("messageOverhead")? {
            c.message_overhead = n;
        }
        if let Some(n) = r.number("imageTokens")? {
            c.image_tokens = n;
        }

        c.has_summarizer = r.function("summarizer")?;
        if let Some(m) = r.choice(
            "summaryMode",
            &[
                ("single", SummaryMode::Single),
                ("layered", SummaryMode::Layered),
            ],
        )? {
            c.summary_mode = m;
        }
        if let Some(role) = r.choice(
            "summaryRole",
            &[
                ("user", SummaryRole::User),
                ("system", SummaryRole::System),
                ("assistant", SummaryRole::Assistant),
            ],
        )? {
            c.summary_role = role;
        }
        if let Some(tag) = r.text("summaryTag")? {
            let valid = !tag.is_empty()
                && tag
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_');
            if !valid {
                return Err(ReduceError::config(
                    "summaryTag",
                    cat(&[
                        "summaryTag must be a tag name of letters, digits, - and _, got \"",
                        &tag,
                        "\"",
                    ]),
                ));
            }
            c.summary_tag = tag;
        }
        let summary_max = r.positive("summaryMaxTokens")?;
        let summary_max_given = summary_max.is_some();
        c.summary_max_tokens = summary_max
            .or(c.target_tokens.map(|t| (0.25 * t).floor()))
            .or((c.strategy == Strategy::Summarize).then_some(DEFAULT_SUMMARY_MAX_TOKENS));
        if let Some(e) = r.choice(
            "onSummarizerError",
            &[
                ("fallback", OnSummarizerError::Fallback),
                ("throw", OnSummarizerError::Throw),
            ],
        )? {
            c.on_summarizer_error = e;
        }
        c.timeout_ms = r.positive("timeoutMs")?;
        match r.get("signal")? {
            OptionValue::Missing | OptionValue::Object(_) => {}
            other => return Err(other.wrong("signal", "an AbortSignal")),
        }
        let large = r.positive("largeMessageTokens")?;
        if let Some(n) = r.count("previewChars")? {
            c.preview_chars = n;
        }
        let min_tool_run = r.count("minToolRun")?;
        if let Some(n) = r.count("keepToolResults")? {
            c.keep_tool_results = n;
        }
        if let Some(x) = r.ratio("currentRoundRatio")? {
            c.current_round_ratio = x;
        }
        if let Some(o) = r.choice(
            "onOverBudget",
            &[
                ("bestEffort", OnOverBudget::BestEffort),
                ("error", OnOverBudget::Error),
            ],
        )? {
            c.on_over_budget = o;
        }
        c.has_on_event = r.function("onEvent")?;
        if let Some(reserved) = r.number("reservedTokens")?.filter(|&n| n > 0.0) {
            c.reserve(reserved, summary_max_given)?;
        }
        // (After `reservedTokens`: relative to the target left for the messages.)
        c.large_message_tokens = large.unwrap_or_else(|| c.large_message_default());
        c.min_tool_run = min_tool_run.map_or_else(|| c.min_tool_run_default(), |n| n.max(1));
        match r.get("store")? {
            OptionValue::Missing | OptionValue::Object(_) => {}
            other => {
                return Err(other.wrong("store", "an object with get(id) and set(id, messages)"))
            }
        }
        if let Some(n) = r.positive("summarizerInputTokens")? {
            c.summarizer_input_tokens = n;
        }
        match r.get("summaryCache")? {
            OptionValue::Missing | OptionValue::Object(_) => {}
            other => {
                return Err(other.wrong(
                    "summaryCache",
                    "an object with get(key) and set(key, value)",
                ))
            }
        }
        if let Some(b) = r.boolean("cacheBreakpoints")? {
            c.cache_breakpoints = b;
        }
        if let Some(x) = r.ratio("toolIndexRatio")? {
            c.tool_index_ratio = x;
        }
        Ok(())
    }

    /// `reservedTokens`: what the request spends outside the messages (instructions, tool
    /// schemas) comes off the token trigger and target, which then bound the messages; a
    /// default `summaryMaxTokens` follows the target left. Refused when nothing is left.
    fn reserve(&mut self, reserved: f64, summary_max_given: bool) -> Result<(), ReduceError> {
        let (Some(max), Some(target)) = (self.max_tokens, self.target_tokens) else {
            return Ok(());
        };
        if reserved >= target {
            return Err(ReduceError::config(
                "reservedTokens",
                cat(&[
                    "reservedTokens (",
                    &show(reserved),
                    ") leaves no room for the messages under targetTokens (",
                    &show(target),
                    "): raise maxTokens or lower reservedTokens",
                ]),
            ));
        }
        self.max_tokens = Some(max - reserved);
        self.target_tokens = Some(target - reserved);
        if !summary_max_given {
            self.summary_max_tokens = Some((0.25 * (target - reserved)).floor());
        }
        Ok(())
    }

    /// `largeMessageTokens` unless set: a twentieth of the token target, at most
    /// [`LARGE_MESSAGE_TOKENS`] (reached at a 25,000-token target). A message is large when
    /// it alone takes a noticeable share of the window: 1,250 tokens is 0.8% of a 200k
    /// window's target but 20% of an 8k window's, where every message under it stayed whole
    /// and stage `offloadOld` never applied. Without a token target, the large-window value.
    pub fn large_message_default(&self) -> f64 {
        self.target_tokens.map_or(LARGE_MESSAGE_TOKENS, |t| {
            (t / 20.0).floor().clamp(1.0, LARGE_MESSAGE_TOKENS)
        })
    }

    /// `minToolRun` unless set: one message of run per 4,000 tokens of target, from 3 to
    /// [`MIN_TOOL_RUN`] (reached at a 24,000-token target). At the few hundred tokens an
    /// agent's tool message has, a run of six is a sixth of a 30k window's target; at an 8k
    /// window a history of a few tool groups is reduced before six tool messages in a row
    /// ever stand in it, so stage `toolRuns` never applied. Not below 3: a "run" of one call
    /// and its result is better cleared and, once it goes, listed in the index of dropped
    /// calls, which a digest is not (docs/performance.md, Retention). Without a token
    /// target, the large-window value.
    pub fn min_tool_run_default(&self) -> usize {
        self.target_tokens.map_or(MIN_TOOL_RUN, |t| {
            ((t / 4000.0).floor() as usize).clamp(3, MIN_TOOL_RUN)
        })
    }

    /// Parses from a list of `(key, value)` pairs; absent keys are [`OptionValue::Missing`].
    pub fn from_pairs(pairs: &[(&str, OptionValue)]) -> Result<Config, ReduceError> {
        if let Some((name, _)) = pairs
            .iter()
            .find(|(k, _)| !Config::OPTION_NAMES.contains(k))
        {
            return Err(Config::unknown_option(name));
        }
        Config::parse(|key| {
            Ok(pairs
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.clone())
                .unwrap_or(OptionValue::Missing))
        })
    }

    /// The `INVALID_CONFIG` error of `name`, which is not an option: a typo or another
    /// library's name is named, with the option it most likely stands for.
    pub fn unknown_option(name: &str) -> ReduceError {
        let hint = match crate::suggest::nearest_option(name) {
            Some(known) => cat(&["; did you mean ", known, "?"]),
            None => String::from(" of chat-history-reducer"),
        };
        ReduceError::config(name, cat(&["config.", name, " is not an option", &hint]))
    }

    /// Whether this config needs the async `reduce` (a summarizer will be called).
    pub fn needs_summarizer(&self) -> bool {
        matches!(self.strategy, Strategy::Summarize)
            || (self.strategy == Strategy::Progressive && self.has_summarizer)
    }
}

#[cfg(test)]
mod tests;
