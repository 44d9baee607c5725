//! `Structure::extend` against `Structure::of`: the structure of a history that grew, made
//! from the structure of its first messages, is the structure made from scratch, whatever
//! the links (results far from their calls, results with no call, calls no result answers,
//! pending or not, one key called twice, messages that attach to the next, sparse keys).
#![cfg(not(target_arch = "wasm32"))]

use chat_history_reducer::{flags, Format, LinkKind, MessageInfo, Role, Structure, Transcript};
use proptest::prelude::*;

/// A message: its role, its flags (whether it attaches to the next, whether it carries
/// calls only), its tokens, and its links (kind, key).
type Message = (u8, (bool, bool), f64, Vec<(bool, u32)>);

fn message(keys: u32) -> impl Strategy<Value = Message> {
    (
        0u8..5,
        (prop::bool::weighted(0.1), prop::bool::weighted(0.3)),
        1.0..100.0f64,
        prop::collection::vec((any::<bool>(), 0..keys), 0..3),
    )
}

fn transcript(messages: &[Message], spread: u32, format: Format) -> Transcript {
    let mut t = Transcript::new(format);
    for (role, (attach, calls_only), tokens, links) in messages {
        let role = Role::from_code(*role).unwrap_or(Role::Other);
        let mut m = MessageInfo::new(role, *tokens);
        if *attach {
            m.flags |= flags::ATTACH_NEXT;
        }
        if *calls_only {
            m.flags |= flags::CALLS_ONLY;
        }
        t.push(m);
        for &(call, key) in links {
            let kind = if call {
                LinkKind::Call
            } else {
                LinkKind::Result
            };
            t.link(kind, key * spread);
        }
    }
    t
}

/// The first `n` messages of `t`, with their links.
fn prefix(t: &Transcript, n: usize) -> Transcript {
    let mut p = Transcript::new(t.format);
    p.messages = t.messages[..n].to_vec();
    p.links = t
        .links
        .iter()
        .filter(|l| (l.message as usize) < n)
        .copied()
        .collect();
    p
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn an_extended_structure_is_the_structure_made_anew(
        messages in prop::collection::vec(message(12), 1..60),
        cut in 0.0..1.0f64,
        spread in prop_oneof![4 => Just(1u32), 1 => Just(5000u32)],
        // (Responses: its call items join the next call item's group.)
        format in prop_oneof![Just(Format::OpenAi), Just(Format::OpenAiResponses)],
    ) {
        let t = transcript(&messages, spread, format);
        let old = ((t.len() as f64 * cut) as usize).max(1);
        let whole = Structure::of(&t);
        if let Some(extended) = Structure::of(&prefix(&t, old)).extend(&t) {
            prop_assert_eq!(extended, whole);
        }
    }
}

#[test]
fn a_conversation_that_grew_by_a_few_messages_is_extended() {
    // A chat: calls answered in the next messages, one result per turn arriving late.
    let mut t = Transcript::new(Format::OpenAi);
    t.push(MessageInfo::new(Role::System, 10.0));
    for k in 0..300u32 {
        t.push(MessageInfo::new(Role::User, 20.0));
        t.push(MessageInfo::new(Role::Assistant, 5.0));
        t.link(LinkKind::Call, 2 * k);
        t.link(LinkKind::Call, 2 * k + 1);
        t.push(MessageInfo::new(Role::Tool, 50.0));
        t.link(LinkKind::Result, 2 * k);
        t.push(MessageInfo::new(Role::Tool, 50.0));
        t.link(LinkKind::Result, 2 * k + 1);
        t.push(MessageInfo::new(Role::Assistant, 30.0));
    }
    let whole = Structure::of(&t);
    for grown in [1, 2, 3, 5, 40] {
        let old = t.len() - grown;
        let extended = Structure::of(&prefix(&t, old)).extend(&t);
        assert_eq!(extended.as_ref(), Some(&whole), "grown by {grown}");
    }
    // The call's message was the last one read: its results join its group.
    let old = t.len() - 3;
    assert_eq!(
        Structure::of(&prefix(&t, old)).extend(&t).as_ref(),
        Some(&whole)
    );
}

#[test]
fn orphan_links_are_results_without_calls_and_calls_never_answered() {
    let mut t = Transcript::new(Format::OpenAi);
    t.push(MessageInfo::new(Role::Tool, 5.0)); // link 0: a result whose call was cut off
    t.link(LinkKind::Result, 9);
    t.push(MessageInfo::new(Role::User, 5.0));
    t.push(MessageInfo::new(Role::Assistant, 5.0)); // links 1 and 2: calls a and b
    t.link(LinkKind::Call, 1);
    t.link(LinkKind::Call, 2);
    t.push(MessageInfo::new(Role::Tool, 5.0)); // link 3 answers a
    t.link(LinkKind::Result, 1);
    t.push(MessageInfo::new(Role::User, 5.0));
    t.push(MessageInfo::new(Role::Assistant, 5.0)); // link 4: the latest answer's call waits
    t.link(LinkKind::Call, 3);
    let s = Structure::of(&t);
    assert_eq!(s.orphan_links, vec![0, 2]);
    assert_eq!(s.pending, 5);
    // Answered by the next message, the latest call is no orphan, and b still is.
    t.push(MessageInfo::new(Role::Tool, 5.0));
    t.link(LinkKind::Result, 3);
    let grown = Structure::of(&prefix(&t, t.len() - 1)).extend(&t);
    assert_eq!(grown.map(|s| s.orphan_links), Some(vec![0, 2]));
}
