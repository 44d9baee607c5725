//! # chat-history-reducer
//!
//! Keeps an LLM conversation inside its context window: tool-safe truncation, priorities,
//! summaries and offloading, for every common chat format. The crate is a pure core (this
//! module tree, tested with plain `cargo test`) and one boundary to JavaScript
//! ([`wasm`], compiled only for `wasm32`).
//!
//! The core never sees a message object. It works on a [`Transcript`]: per message a role,
//! a few flags, a token count and the tool-call links, and it answers with indices. The
//! boundary reads those fields from the user's objects in one pass and builds the output
//! from the same objects, so kept messages are returned untouched (SPEC §2).
//!
//! ```
//! use chat_history_reducer::{reduce_sync, Config, OptionValue, Transcript, MessageInfo, Role, Format};
//!
//! let mut t = Transcript::new(Format::OpenAi);
//! t.push(MessageInfo::new(Role::System, 10.0));
//! for _ in 0..10 {
//!     t.push(MessageInfo::new(Role::User, 50.0));
//!     t.push(MessageInfo::new(Role::Assistant, 50.0));
//! }
//! let config = Config::from_pairs(&[("maxTokens", OptionValue::Number(500.0))]).unwrap();
//! let r = reduce_sync(&t, &config).unwrap();
//! assert!(r.tokens_after <= 400.0);
//! ```

pub mod analysis;
pub mod breakpoints;
pub mod budget;
pub mod calibration;
pub mod config;
pub mod contract;
pub mod error;
pub mod estimate;
pub mod formats;
pub mod history;
pub mod protect;
pub mod strategies;
pub mod structure;
pub mod suggest;
pub mod transcript;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use analysis::{analyze, Analysis, MessageAnalysis};
pub use config::{Config, OptionValue, Strategy};
pub use error::{ErrorCode, ReduceError};
pub use formats::Format;
pub use strategies::summarize::SummaryPlan;
pub use strategies::{CompressionEvent, Fate, Reduction, Slot};
pub use structure::Structure;
pub use transcript::{flags, Link, LinkKind, MessageInfo, Role, Transcript};

use std::borrow::Borrow;

/// Whether any configured trigger fires (SPEC §4), or the history has orphans to remove
/// (tool results whose call is not before them: SPEC §9.4). One pass over the counts, and
/// when no trigger fires one over the messages and links ([`Structure::of`]).
pub fn should_reduce(t: &Transcript, config: &Config) -> bool {
    should_reduce_with(t, config, || Structure::of(t))
}

/// [`should_reduce`] with the structure of `t` from the caller, asked for only when no
/// trigger fires (a caller that keeps the structure of a history reuses or extends it).
pub fn should_reduce_with<S: Borrow<Structure>>(
    t: &Transcript,
    config: &Config,
    structure: impl FnOnce() -> S,
) -> bool {
    budget::triggers(t, config).any() || structure().borrow().orphans > 0
}

/// Reduces with a strategy that needs no summarizer; the history is returned unchanged
/// when no trigger fires and it has no orphans (see [`reduce_without_summarizer`]).
pub fn reduce_sync(t: &Transcript, config: &Config) -> Result<Reduction, ReduceError> {
    reduce_sync_with(t, config, || Structure::of(t))
}

/// [`reduce_sync`] with the structure of `t` from the caller: a caller that keeps the
/// structure of a history that grows extends it ([`Structure::extend`]) instead of making
/// it anew.
pub fn reduce_sync_with<S: Borrow<Structure>>(
    t: &Transcript,
    config: &Config,
    structure: impl FnOnce() -> S,
) -> Result<Reduction, ReduceError> {
    if config.needs_summarizer() {
        return Err(ReduceError::new(
            ErrorCode::SummarizerRequiresAsync,
            if config.has_summarizer {
                "this config calls a summarizer, which is asynchronous: use `await reduce(messages, config)` instead of reduceSync"
            } else {
                "strategy \"summarize\" needs config.summarizer and `await reduce(messages, config)`: reduceSync cannot call one"
            },
        ));
    }
    reduce_without_summarizer(t, config, structure)
}

/// The strategies that only drop: `truncate` and `priority` (and the fallback of the
/// others). Whatever keeps them, orphans go ([`Structure::ORPHAN`]; a message with orphans
/// beside other content stands without them). When no trigger fires, they go all the same
/// (SPEC §9: every output keeps the invariants), with what `startOn` then asks (a history
/// sliced to start on a tool result starts on the next user input); and as after any
/// reduction, the targets are met (SPEC §9.7: what is left is reduced to them, if over).
fn reduce_without_summarizer<S: Borrow<Structure>>(
    t: &Transcript,
    config: &Config,
    structure: impl FnOnce() -> S,
) -> Result<Reduction, ReduceError> {
    drop_with(t, structure().borrow(), config)
}

/// [`reduce_without_summarizer`] with the structure `s` of `t`.
fn drop_with(t: &Transcript, s: &Structure, config: &Config) -> Result<Reduction, ReduceError> {
    let fired = budget::triggers(t, config).any();
    if !fired && s.orphans == 0 {
        return Ok(Reduction::unchanged(t));
    }
    let protection = protect::protect(t, s, config);
    match config.strategy {
        Strategy::Priority => strategies::priority::priority(t, s, &protection, config),
        _ => {
            strategies::truncate::truncate(t, s, &protection, config, &budget::Targets::of(config))
        }
    }
    .map(|r| r.without_orphans(t, &s.orphan))
}

/// What `reduce` does next with a config that summarizes.
#[derive(Clone, Debug, PartialEq)]
pub enum SummaryStep {
    /// Nothing to summarise: this is the result.
    Done(Reduction),
    /// Ask the summarizer, then [`strategies::summarize::apply`].
    Summarize(SummaryPlan),
}

/// `SUMMARIZER_REQUIRED` for a `summarize` config without a summarizer.
pub fn require_summarizer(config: &Config) -> Result<(), ReduceError> {
    if config.strategy == Strategy::Summarize && !config.has_summarizer {
        return Err(ReduceError::new(
            ErrorCode::SummarizerRequired,
            "strategy \"summarize\" needs config.summarizer: an async function (request) => summary text",
        ));
    }
    Ok(())
}

/// The first half of an asynchronous `summarize` reduction.
pub fn plan_summary(t: &Transcript, config: &Config) -> Result<SummaryStep, ReduceError> {
    require_summarizer(config)?;
    let s = Structure::of(t);
    // (With no trigger, orphans go all the same; a summary only when what is left is over a
    // target.)
    let over = || {
        let (tokens, messages) = s.kept_at_most(t);
        !budget::Targets::of(config).met(tokens, messages)
    };
    if budget::triggers(t, config).any() || s.orphans > 0 && over() {
        let protection = protect::protect(t, &s, config);
        if let Some(plan) = strategies::summarize::plan(t, &s, &protection, config) {
            return Ok(SummaryStep::Summarize(plan));
        }
    }
    // Nothing to summarise, or no trigger (only orphans go): what `truncate` does then.
    drop_with(t, &s, config).map(SummaryStep::Done)
}

/// The reduction when the summarizer failed and `onSummarizerError` is `"fallback"`:
/// `truncate` with the same targets.
pub fn fallback(t: &Transcript, config: &Config) -> Result<Reduction, ReduceError> {
    let mut truncate = config.clone();
    truncate.strategy = Strategy::Truncate;
    reduce_without_summarizer(t, &truncate, || Structure::of(t))
}
