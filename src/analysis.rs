//! `analyze` (SPEC §1): what a UI needs to show why each message stays.

use crate::config::Config;
use crate::estimate::Tokenizer;
use crate::protect::{protect, Protection};
use crate::structure::Structure;
use crate::transcript::{Role, Transcript};
use crate::{budget, formats::Format};

/// One input message, explained.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageAnalysis {
    pub index: usize,
    pub role: Role,
    pub tokens: f64,
    pub group: usize,
    pub round: usize,
    /// Why no reduction may remove it, if none may.
    pub protected: Protection,
    pub summary: bool,
    pub real_user: bool,
}

/// Every message explained, with totals.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    pub format: Format,
    /// The tokenizer profile that estimated the messages without a count (`None` in length
    /// mode): `tokenizer: "auto"` decided by the format.
    pub tokenizer: Option<Tokenizer>,
    pub messages: Vec<MessageAnalysis>,
    pub total_tokens: f64,
    pub groups: usize,
    pub rounds: usize,
    pub should_reduce: bool,
    pub over_max_tokens: bool,
    pub over_message_trigger: bool,
}

pub fn analyze(t: &Transcript, config: &Config) -> Analysis {
    let s = Structure::of(t);
    let mut protection = protect(t, &s, config);
    // What `priority` protects (its newest user/assistant pairs besides).
    if config.strategy == crate::config::Strategy::Priority {
        crate::strategies::priority::protect_for_priority(
            t,
            &s,
            &mut protection,
            config.keep_recent_pairs,
        );
    }
    let fired = budget::triggers(t, config);
    // (A plain loop: smaller in the wasm build than a collect.)
    let mut messages = Vec::with_capacity(t.len());
    for (i, m) in t.messages.iter().enumerate() {
        let group = s.group_of[i] as usize;
        messages.push(MessageAnalysis {
            index: i,
            role: m.role,
            tokens: m.tokens,
            group,
            round: s.round_of[i] as usize,
            protected: protection[group],
            summary: m.is_summary(),
            real_user: m.is_real_user(),
        });
    }
    Analysis {
        format: t.format,
        tokenizer: config.estimator.tokenizer(t.format),
        messages,
        total_tokens: t.total_tokens(),
        groups: s.groups.len(),
        rounds: s.round_of.last().copied().unwrap_or(0) as usize,
        should_reduce: fired.any() || s.orphans > 0,
        over_max_tokens: fired.tokens,
        over_message_trigger: fired.messages,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OptionValue::{Number, Text};
    use crate::transcript::MessageInfo;

    fn tokenizer_of(
        format: Format,
        pairs: &[(&str, crate::config::OptionValue)],
    ) -> Option<Tokenizer> {
        let mut t = Transcript::new(format);
        t.push(MessageInfo::new(Role::User, 5.0));
        let mut pairs = pairs.to_vec();
        pairs.push(("maxTokens", Number(100.0)));
        analyze(&t, &Config::from_pairs(&pairs).unwrap()).tokenizer
    }

    #[test]
    fn shows_the_profile_the_format_chose_or_the_one_named() {
        assert_eq!(tokenizer_of(Format::Gemini, &[]), Some(Tokenizer::Gemma));
        assert_eq!(tokenizer_of(Format::OpenAi, &[]), Some(Tokenizer::O200k));
        assert_eq!(tokenizer_of(Format::Anthropic, &[]), Some(Tokenizer::O200k));
        let llama = [("tokenizer", Text("llama3".into()))];
        assert_eq!(
            tokenizer_of(Format::Gemini, &llama),
            Some(Tokenizer::Llama3)
        );
        let length = [("estimator", Text("length".into()))];
        assert_eq!(tokenizer_of(Format::Gemini, &length), None);
    }
}
