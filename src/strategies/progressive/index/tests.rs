//! The tests of the index of dropped tool calls: which units, within what budget, and what
//! `finish` makes of them.

use super::super::*;
use crate::config::OptionValue::Number;
use crate::transcript::{LinkKind, MessageInfo};
use crate::Format;

/// Per round a user input of 30 tokens, one call (20) with its result (`result`), an answer
/// (60), after a system message; the last round is the current one.
fn session(rounds: usize, result: f64) -> Transcript {
    let mut t = Transcript::new(Format::OpenAi);
    t.push(MessageInfo::new(Role::System, 50.0));
    for key in 0..rounds as u32 {
        t.push(MessageInfo::new(Role::User, 30.0));
        t.push(MessageInfo::new(Role::Assistant, 20.0));
        t.link(LinkKind::Call, key);
        t.push(MessageInfo::new(Role::Tool, result));
        t.link(LinkKind::Result, key);
        t.push(MessageInfo::new(Role::Assistant, 60.0));
    }
    t
}

/// The stages, then the index as the boundary writes it (`line` tokens a unit, 12 more), then
/// the reduction; the candidates the core offered, and the messages the index lists.
fn reduce(
    t: &Transcript,
    config: &Config,
    line: f64,
) -> (Reduction, Option<IndexCandidates>, Vec<u32>) {
    let mut p = Progressive::new(t, config);
    while p.next_action() != Action::Finish {
        p.done(10.0);
    }
    let c = p.index_candidates();
    let mut listed = Vec::new();
    if let Some(c) = &c {
        let fit = (((c.budget - 12.0) / line).floor() as usize).min(c.ends.len());
        let from = c.ends.len() - fit;
        let start = if from == 0 {
            0
        } else {
            c.ends[from - 1] as usize
        };
        listed = c.messages[start..].to_vec();
        p.indexed(12.0 + line * fit as f64, &listed, &c.earlier);
    }
    (p.finish().unwrap(), c, listed)
}

/// Nothing is large and no run long enough: results are cleared (stage 5), then groups go.
fn config(max: f64) -> Config {
    Config::from_pairs(&[
        ("maxTokens", Number(max)),
        ("minToolRun", Number(50.0)),
        ("largeMessageTokens", Number(1e9)),
    ])
    .unwrap()
}

#[test]
fn the_groups_that_go_are_offered_whole_oldest_first_and_the_index_stands_after_the_system_message()
{
    let t = session(30, 200.0);
    let c = config(2000.0);
    let (r, candidates, listed) = reduce(&t, &c, 15.0);
    let candidates = candidates.expect("groups with calls go");
    // Each unit a call (4k + 2) with its result (4k + 3), of rounds before the current one.
    let mut start = 0;
    for &end in &candidates.ends {
        let unit = &candidates.messages[start..end as usize];
        assert_eq!(unit.len(), 2);
        assert_eq!(unit[0] % 4, 2);
        assert_eq!(unit[1], unit[0] + 1);
        assert!(unit[1] < 4 * 29);
        start = end as usize;
    }
    assert!(candidates.budget <= 0.1 * 1600.0);
    // The index right after the system message; what it lists rewritten; nothing older than
    // its newest line kept (a prefix).
    assert_eq!(r.output[0], Slot::Input(0));
    assert!(matches!(r.output[1], Slot::New(_)));
    assert!(listed.len() >= 4);
    assert!(listed
        .iter()
        .all(|&i| r.fate[i as usize] == Fate::Rewritten));
    let newest = *listed.iter().max().unwrap();
    assert!(r.indices(Fate::Kept).iter().all(|&i| i == 0 || i > newest));
    assert!(r.tokens_after <= 1600.0 && !r.over_budget);
    let kinds: Vec<&str> = r.events.iter().map(|e| e.kind).collect();
    assert_eq!(kinds[kinds.len() - 2..], ["indexToolCalls", "truncate"]);
}

#[test]
fn the_budget_is_no_more_than_the_room_what_must_stay_leaves() {
    // The current round's result, protected, takes all but 100 tokens of the target.
    let mut t = session(20, 200.0);
    let last = t.len() - 2;
    t.messages[last].tokens = 1600.0 - 100.0 - 50.0 - 30.0 - 20.0 - 60.0;
    let c = config(2000.0);
    let (r, candidates, _) = reduce(&t, &c, 15.0);
    let budget = candidates.map_or(0.0, |c| c.budget);
    assert!(budget <= 100.0 + 1e-9, "{budget}");
    assert!(
        r.tokens_after <= 1600.0 && !r.over_budget,
        "{}",
        r.tokens_after
    );
    // Less room than an index needs at all: none.
    t.messages[last].tokens += 70.0;
    let (_, candidates, _) = reduce(&t, &c, 15.0);
    assert_eq!(candidates, None);
}

#[test]
fn no_index_without_a_share_nor_when_no_group_with_calls_goes() {
    let t = session(30, 200.0);
    let off = Config::from_pairs(&[
        ("maxTokens", Number(2000.0)),
        ("minToolRun", Number(50.0)),
        ("toolIndexRatio", Number(0.0)),
    ])
    .unwrap();
    assert_eq!(reduce(&t, &off, 15.0).1, None);
    // A chat without tools.
    let mut chat = Transcript::new(Format::OpenAi);
    for _ in 0..40 {
        chat.push(MessageInfo::new(Role::User, 30.0));
        chat.push(MessageInfo::new(Role::Assistant, 60.0));
    }
    assert_eq!(reduce(&chat, &config(2000.0), 15.0).1, None);
}
