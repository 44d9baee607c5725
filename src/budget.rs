//! Triggers and targets (SPEC §4): when a history needs reducing, and how far.

use crate::config::Config;
use crate::transcript::{MessageInfo, Transcript};

/// Whether a message counts toward `targetMessages`: system messages and summaries don't.
pub fn counts_as_message(m: &MessageInfo) -> bool {
    !m.is_system() && !m.is_summary()
}

/// The message trigger's count: non-system messages after the newest summary.
pub fn messages_since_summary(t: &Transcript) -> usize {
    let start = t
        .messages
        .iter()
        .rposition(MessageInfo::is_summary)
        .map_or(0, |i| i + 1);
    t.messages[start..]
        .iter()
        .filter(|m| !m.is_system())
        .count()
}

/// Which triggers fire for a transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Fired {
    pub tokens: bool,
    pub messages: bool,
}

impl Fired {
    pub fn any(self) -> bool {
        self.tokens || self.messages
    }
}

/// The triggers of `config` that fire for `t` (SPEC §4).
pub fn triggers(t: &Transcript, config: &Config) -> Fired {
    Fired {
        tokens: config.max_tokens.is_some_and(|max| t.total_tokens() > max),
        messages: config.target_messages.is_some_and(|n| {
            messages_since_summary(t) > n.saturating_add(config.threshold_messages)
        }),
    }
}

/// The targets a reduction must meet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Targets {
    pub tokens: Option<f64>,
    pub messages: Option<usize>,
}

impl Targets {
    pub fn of(config: &Config) -> Targets {
        Targets {
            tokens: config.target_tokens,
            messages: config.target_messages,
        }
    }

    pub fn met(&self, tokens: f64, messages: usize) -> bool {
        self.tokens.is_none_or(|t| tokens <= t) && self.messages.is_none_or(|m| messages <= m)
    }
}
