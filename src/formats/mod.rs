//! The chat formats of SPEC §2, and the rules that differ between them.
//!
//! Reading a message's fields happens at the boundary (the messages are the user's
//! JavaScript objects); what reaches the core is a [`Transcript`](crate::Transcript): a
//! role, flags, a token count and the tool-call links of each message. The rules here are
//! what the core needs to know about a format beyond that.

use crate::error::ReduceError;

/// One of the message formats of SPEC §2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    OpenAi,
    OpenAiResponses,
    Anthropic,
    Vercel,
    VercelUi,
    Gemini,
    LangChain,
}

impl Format {
    pub const ALL: [Format; 7] = [
        Format::OpenAi,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::Vercel,
        Format::VercelUi,
        Format::Gemini,
        Format::LangChain,
    ];

    /// The name used by `config.format` and `analyze().format`.
    pub fn name(self) -> &'static str {
        crate::contract::FORMAT_NAMES[self.code() as usize]
    }

    /// Its place in [`Format::ALL`] and in `contract::FORMAT_NAMES`: how the boundary
    /// names it to JavaScript.
    pub fn code(self) -> u32 {
        self as u32
    }

    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether the history must open on a user turn whatever `startOn` says (Gemini: "a
    /// function call turn comes immediately after a user turn or a function response turn";
    /// Anthropic's Messages API wants the first message to be the user's).
    pub fn requires_user_start(self) -> bool {
        matches!(self, Format::Gemini | Format::Anthropic)
    }

    /// Whether the model's answer is a run of items rather than one message (the Responses
    /// API: its reasoning, text and call items), so that the latest answer, whose calls may
    /// still wait for results, is the whole run of assistant items that ends the history.
    pub fn answers_in_items(self) -> bool {
        self == Format::OpenAiResponses
    }

    /// Whether parallel calls are messages of their own that stay together (the Responses
    /// API's call items of one answer): one with no result still goes with the others.
    pub fn parallel_calls_are_items(self) -> bool {
        self == Format::OpenAiResponses
    }

    /// Whether a turn of calls must follow a user turn or a turn of results (Gemini: "a
    /// function call turn comes immediately after a user turn or a function response
    /// turn"), so that removing what came before it may need a group more to go.
    pub fn calls_follow_user_turns(self) -> bool {
        self == Format::Gemini
    }

    /// Whether its messages can carry a provider's cache breakpoint (`cacheBreakpoints`):
    /// Anthropic's `cache_control`, and the AI SDK's and LangChain's ways of passing it on.
    /// OpenAI and Gemini cache prefixes without marks.
    pub fn takes_cache_breakpoints(self) -> bool {
        matches!(
            self,
            Format::Anthropic | Format::Vercel | Format::VercelUi | Format::LangChain
        )
    }
}

/// `config.format`: a named format or `"auto"` detection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FormatChoice {
    #[default]
    Auto,
    Named(Format),
}

impl FormatChoice {
    pub fn parse(name: &str) -> Result<Self, ReduceError> {
        if name == "auto" {
            return Ok(FormatChoice::Auto);
        }
        Format::from_name(name)
            .map(FormatChoice::Named)
            .ok_or_else(|| {
                let names = Format::ALL.map(Format::name);
                ReduceError::config(
                    "format",
                    crate::error::cat(&[
                        "format \"",
                        name,
                        "\" is not known; use \"auto\" or one of: ",
                        &crate::error::join(&names, ", "),
                    ]),
                )
            })
    }
}
