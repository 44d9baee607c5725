//! The compact view of a conversation that the core works on: per message a role, flags,
//! a token count, and the tool-call links between messages. The messages themselves stay
//! with the caller; the core answers with indices.

use crate::contract;
use crate::formats::Format;

/// What a message is, as far as reducing goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// `system` and `developer` (and LangChain `system`).
    System,
    User,
    Assistant,
    /// A message that only carries tool results (OpenAI `tool`, Vercel `tool`, …).
    Tool,
    /// Anything else: an OpenAI Responses `reasoning` item, an unknown item type.
    Other,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Other => "other",
        }
    }

    /// The inverse of [`Role::code`], for the boundary's compact encoding.
    pub fn from_code(code: u8) -> Option<Role> {
        Some(match code {
            contract::SYSTEM => Role::System,
            contract::USER => Role::User,
            contract::ASSISTANT => Role::Assistant,
            contract::TOOL => Role::Tool,
            contract::OTHER => Role::Other,
            _ => return None,
        })
    }

    pub fn code(self) -> u8 {
        match self {
            Role::System => contract::SYSTEM,
            Role::User => contract::USER,
            Role::Assistant => contract::ASSISTANT,
            Role::Tool => contract::TOOL,
            Role::Other => contract::OTHER,
        }
    }
}

/// Bits of [`MessageInfo::flags`].
pub mod flags {
    /// A real user input: a user message that is more than tool results.
    pub const REAL_USER: u8 = crate::contract::REAL_USER;
    /// A summary written by this library (its text opens with `<summaryTag>`).
    pub const SUMMARY: u8 = crate::contract::SUMMARY;
    /// Belongs to the group of the message after it (the Responses API `reasoning` item
    /// before its function calls).
    pub const ATTACH_NEXT: u8 = crate::contract::ATTACH_NEXT;
    /// A preview written by `progressive` (its text opens with `[offloaded N tokens as
    /// ctx_…` or, a cleared tool result, `[cleared N tokens as ctx_…]`): already offloaded,
    /// it is not offloaded again.
    pub const PREVIEW: u8 = crate::contract::PREVIEW;
    /// A message `progressive` compressed: a tool run's digest (`[compressed tool run: …]`)
    /// or a text the summarizer shortened (`[compressed; the original is ctx_…]`). It is
    /// not offloaded or compressed again, and it is no real user input.
    pub const COMPRESSED: u8 = crate::contract::COMPRESSED;
    /// Carries tool calls and nothing else but reasoning: an assistant `tool_calls` message
    /// without text, a Responses `function_call` item. With calls that no result answers
    /// only, it goes whole ([`Structure::ORPHAN`]), and it is no answer that ends a turn.
    ///
    /// [`Structure::ORPHAN`]: crate::structure::Structure::ORPHAN
    pub const CALLS_ONLY: u8 = crate::contract::CALLS_ONLY;
    /// With [`SUMMARY`]: `progressive`'s index of dropped tool calls (its text opens with
    /// [`crate::contract::TOOL_INDEX_HEADER`]), which a later index takes over.
    pub const TOOL_INDEX: u8 = crate::contract::TOOL_INDEX;
}

/// One message, as the core sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MessageInfo {
    pub role: Role,
    pub flags: u8,
    pub tokens: f64,
}

impl MessageInfo {
    pub fn new(role: Role, tokens: f64) -> Self {
        let flags = if role == Role::User {
            flags::REAL_USER
        } else {
            0
        };
        MessageInfo {
            role,
            flags,
            tokens,
        }
    }

    pub fn is_system(&self) -> bool {
        self.role == Role::System
    }
    pub fn is_real_user(&self) -> bool {
        self.flags & flags::REAL_USER != 0
    }
    pub fn is_summary(&self) -> bool {
        self.flags & flags::SUMMARY != 0
    }
    /// Whether an earlier reduction wrote it: a preview or a compressed message.
    pub fn is_written(&self) -> bool {
        self.flags & (flags::PREVIEW | flags::COMPRESSED) != 0
    }
    pub fn is_tool_index(&self) -> bool {
        self.flags & flags::TOOL_INDEX != 0
    }
    pub fn is_compressed(&self) -> bool {
        self.flags & flags::COMPRESSED != 0
    }
}

/// Whether a link opens a tool call (or approval request) or answers one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkKind {
    Call,
    Result,
}

/// A tool-call id (interned to a number) seen in a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    pub message: u32,
    pub key: u32,
    pub kind: LinkKind,
}

/// A conversation in compact form.
#[derive(Clone, Debug, PartialEq)]
pub struct Transcript {
    pub format: Format,
    pub messages: Vec<MessageInfo>,
    /// Sorted by message index.
    pub links: Vec<Link>,
    /// The input's tokens that its messages, as counted here, leave out: the orphans of the
    /// messages counted as their copies without them (see [`Structure::STRAY`]). The total
    /// ([`Transcript::total_tokens`]: triggers, `tokensBefore`) is the input's; what a
    /// reduction keeps is counted as it stands.
    ///
    /// [`Structure::STRAY`]: crate::structure::Structure::STRAY
    pub uncounted: f64,
}

impl Transcript {
    pub fn new(format: Format) -> Self {
        Transcript {
            format,
            messages: Vec::new(),
            links: Vec::new(),
            uncounted: 0.0,
        }
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// Appends a message and returns its index.
    pub fn push(&mut self, message: MessageInfo) -> u32 {
        self.messages.push(message);
        (self.messages.len() - 1) as u32
    }

    /// Records that the last pushed message calls (or answers) the tool call `key`.
    pub fn link(&mut self, kind: LinkKind, key: u32) {
        let message = self.messages.len().saturating_sub(1) as u32;
        self.links.push(Link { message, key, kind });
    }

    /// The tokens of the messages at `indices`.
    pub fn tokens_of(&self, indices: &[u32]) -> f64 {
        let mut sum = 0.0;
        for &i in indices {
            sum += self.messages[i as usize].tokens;
        }
        sum
    }

    /// The input's tokens: the sum of the messages' (0, not the -0 of an empty `f64` sum, for
    /// none), and what they leave out ([`Transcript::uncounted`]).
    pub fn total_tokens(&self) -> f64 {
        self.messages
            .iter()
            .fold(self.uncounted, |sum, m| sum + m.tokens)
    }
}
