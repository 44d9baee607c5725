//! The tests of `progressive`.

use super::*;
use crate::config::OptionValue::{Bool, Number};
use crate::transcript::{LinkKind, MessageInfo};
use crate::Format;

/// An agent session: per round a user input, `calls` tool calls each with one large
/// result, and an answer.
fn session(rounds: usize, calls: usize, result_tokens: f64) -> Transcript {
    let mut t = Transcript::new(Format::OpenAi);
    t.push(MessageInfo::new(Role::System, 50.0));
    let mut key = 0;
    for _ in 0..rounds {
        t.push(MessageInfo::new(Role::User, 30.0));
        for _ in 0..calls {
            t.push(MessageInfo::new(Role::Assistant, 20.0));
            t.link(LinkKind::Call, key);
            t.push(MessageInfo::new(Role::Tool, result_tokens));
            t.link(LinkKind::Result, key);
            key += 1;
        }
        t.push(MessageInfo::new(Role::Assistant, 60.0));
    }
    t
}

/// Runs the machine with fixed sizes for what it writes.
fn run(t: &Transcript, config: &Config) -> (Reduction, Vec<Action>) {
    let mut p = Progressive::new(t, config);
    let mut actions = Vec::new();
    loop {
        let a = p.next_action();
        let tokens = match &a {
            Action::Finish => break,
            Action::CompressRun { messages } => 20.0 * messages.len() as f64,
            Action::Offload { .. } => 70.0,
            Action::Clear { .. } => 25.0,
            Action::SummarizeRounds { .. } => 100.0,
            Action::Rewrite { target_tokens, .. } => *target_tokens,
        };
        actions.push(a);
        p.done(tokens);
    }
    (p.finish().unwrap(), actions)
}

fn config(pairs: &[(&str, crate::config::OptionValue)]) -> Config {
    Config::from_pairs(pairs).unwrap()
}

#[test]
fn tool_runs_go_first_and_it_stops_when_the_target_is_met() {
    let t = session(6, 4, 300.0);
    let total = t.total_tokens();
    let c = config(&[
        ("maxTokens", Number(total * 0.9)),
        ("targetTokens", Number(total * 0.7)),
    ]);
    let (r, actions) = run(&t, &c);
    assert!(matches!(actions[0], Action::CompressRun { .. }));
    assert!(actions
        .iter()
        .all(|a| matches!(a, Action::CompressRun { .. })));
    assert!(r.tokens_after <= total * 0.7);
    assert_eq!(r.events[0].kind, "toolRuns");
    assert!(r.fate.iter().all(|f| *f != Fate::Dropped));
}

#[test]
fn large_messages_are_offloaded_outside_keep_last_first() {
    let t = session(3, 1, 3000.0);
    let c = config(&[("maxTokens", Number(3000.0)), ("minToolRun", Number(50.0))]);
    let (r, actions) = run(&t, &c);
    let offloaded: Vec<u32> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Offload { message } => Some(*message),
            _ => None,
        })
        .collect();
    assert_eq!(
        offloaded,
        vec![3, 7, 11],
        "the three large tool results, oldest first"
    );
    assert!(r.tokens_after <= 2400.0, "{}", r.tokens_after);
    assert_eq!(r.indices(Fate::Rewritten), vec![3, 7, 11]);
    assert_eq!(
        r.output
            .iter()
            .filter(|s| matches!(s, Slot::New(_)))
            .count(),
        3
    );
    assert!(r.indices(Fate::Dropped).is_empty());
}

#[test]
fn summarizer_stages_run_only_when_the_light_ones_are_not_enough() {
    let t = session(5, 4, 200.0);
    let light = config(&[
        ("maxTokens", Number(t.total_tokens() - 1.0)),
        ("summarizer", crate::config::OptionValue::Function),
    ]);
    let (_, actions) = run(&t, &light);
    assert!(!actions
        .iter()
        .any(|a| matches!(a, Action::SummarizeRounds { .. })));

    let heavy = config(&[
        ("maxTokens", Number(900.0)),
        ("summarizer", crate::config::OptionValue::Function),
        ("keepSystem", Bool(true)),
    ]);
    let t = session(5, 1, 200.0);
    let (r, actions) = run(&t, &heavy);
    assert!(actions
        .iter()
        .any(|a| matches!(a, Action::SummarizeRounds { .. })));
    assert!(
        r.tokens_after <= 720.0 || r.over_budget,
        "{}",
        r.tokens_after
    );
}

#[test]
fn stage_4_summarizes_the_oldest_rounds_until_the_target_is_met() {
    // Ten chat rounds of 400 tokens (no tools, nothing large — as set): only stage 4 can help. A
    // summary is 100 tokens here (`run`).
    let mut t = Transcript::new(Format::OpenAi);
    t.push(MessageInfo::new(Role::System, 50.0));
    for _ in 0..10 {
        t.push(MessageInfo::new(Role::User, 100.0));
        t.push(MessageInfo::new(Role::Assistant, 300.0));
    }
    let summarized = |target: f64| {
        let c = config(&[
            ("maxTokens", Number(4000.0)),
            ("targetTokens", Number(target)),
            ("largeMessageTokens", Number(1250.0)),
            ("summaryMaxTokens", Number(100.0)),
            ("summarizer", crate::config::OptionValue::Function),
        ]);
        let (r, actions) = run(&t, &c);
        let rounds: Vec<&Action> = actions
            .iter()
            .filter(|a| matches!(a, Action::SummarizeRounds { .. }))
            .collect();
        assert_eq!(rounds.len(), 1, "{actions:?}");
        assert!(r.tokens_after <= target, "{} > {target}", r.tokens_after);
        assert!(!r.over_budget);
        assert!(r.indices(Fate::Dropped).is_empty());
        r.indices(Fate::Summarized)
    };
    // 4050 → 3400: the two oldest rounds (800 tokens) give way to 100; the seven rounds
    // after them stay verbatim.
    assert_eq!(summarized(3400.0), vec![1, 2, 3, 4]);
    // (One round would leave 3750.)
    assert_eq!(summarized(3700.0), vec![1, 2, 3, 4]);
    assert_eq!(summarized(3750.0), vec![1, 2]);
    // A target only every previous round meets: all of them (the current round stays).
    assert_eq!(summarized(550.0), (1..19).collect::<Vec<u32>>());
}

#[test]
fn stage_4_cuts_between_groups_where_a_group_spans_two_rounds() {
    // Round 2 calls a tool; the user writes again before its result (round 3): the
    // group [call, user input, result] spans two rounds. Cut after round 2, the summary
    // held the call without its result, and round 3 was dropped, unsummarized.
    let mut t = Transcript::new(Format::OpenAi);
    t.push(MessageInfo::new(Role::System, 50.0));
    t.push(MessageInfo::new(Role::User, 100.0));
    t.push(MessageInfo::new(Role::Assistant, 300.0));
    t.push(MessageInfo::new(Role::User, 100.0));
    t.push(MessageInfo::new(Role::Assistant, 300.0));
    t.link(LinkKind::Call, 0);
    t.push(MessageInfo::new(Role::User, 100.0));
    t.push(MessageInfo::new(Role::Tool, 50.0));
    t.link(LinkKind::Result, 0);
    t.push(MessageInfo::new(Role::Assistant, 300.0));
    for _ in 0..5 {
        t.push(MessageInfo::new(Role::User, 100.0));
        t.push(MessageInfo::new(Role::Assistant, 300.0));
    }
    let total = t.total_tokens();
    // Rounds 1 and 2 (800 tokens) would meet the target beside a summary of 100.
    let c = config(&[
        ("maxTokens", Number(total - 1.0)),
        ("targetTokens", Number(total - 700.0)),
        ("largeMessageTokens", Number(1250.0)),
        ("summaryMaxTokens", Number(100.0)),
        ("summarizer", crate::config::OptionValue::Function),
    ]);
    let (r, _) = run(&t, &c);
    assert_eq!(r.indices(Fate::Summarized), (1..8).collect::<Vec<u32>>());
    assert!(r.indices(Fate::Dropped).is_empty());
    assert!(r.tokens_after <= total - 700.0);
}

#[test]
fn stage_6_compresses_the_previews_of_stage_3_when_they_are_not_enough() {
    // One round: a user input, one call message with 30 large results. Stage 3 turns the
    // results into previews (70 tokens each here), still over the target; stage 6 then
    // compresses what stands there — as a reduction of this result would.
    let mut t = Transcript::new(Format::OpenAi);
    t.push(MessageInfo::new(Role::System, 50.0));
    let mut user = MessageInfo::new(Role::User, 30.0);
    user.flags |= crate::transcript::flags::REAL_USER;
    t.push(user);
    t.push(MessageInfo::new(Role::Assistant, 20.0));
    for key in 0..30 {
        t.link(LinkKind::Call, key);
    }
    for key in 0..30 {
        t.push(MessageInfo::new(Role::Tool, 2000.0));
        t.link(LinkKind::Result, key);
    }
    let c = config(&[
        ("maxTokens", Number(1500.0)),
        ("summarizer", crate::config::OptionValue::Function),
    ]);
    let (r, actions) = run(&t, &c);
    let rewrites: Vec<(u32, f64)> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Rewrite {
                message,
                kind: SummaryKind::CurrentRound,
                target_tokens,
            } => Some((*message, *target_tokens)),
            _ => None,
        })
        .collect();
    assert!(
        actions
            .iter()
            .filter(|a| matches!(a, Action::Offload { .. }))
            .count()
            == 30,
        "{actions:?}"
    );
    assert!(!rewrites.is_empty(), "{actions:?}");
    // Each to the ratio of its preview, not of its original.
    assert!(
        rewrites.iter().all(|&(_, target)| target == 21.0),
        "{rewrites:?}"
    );
    assert!(!r.over_budget);
    assert!(r.tokens_after <= 1200.0, "{}", r.tokens_after);
    // One message out for each result: the latest writing stands.
    let new = r
        .output
        .iter()
        .filter(|s| matches!(s, Slot::New(_)))
        .count();
    assert_eq!(new, 30);
    assert_eq!(r.indices(Fate::Rewritten).len(), 30);
}

#[test]
fn the_new_round_summary_stays_when_the_later_stages_are_not_enough() {
    // Previous rounds summarised (stage 4), the current round compressed (stage 6), and
    // still over the message target: the summary it just wrote stays (protected as any
    // summary, no message), and so does every step of the current turn (SPEC §9.13):
    // over budget.
    let t = session(6, 3, 10.0);
    let c = config(&[
        ("targetMessages", Number(4.0)),
        ("thresholdMessages", Number(0.0)),
        ("summarizer", crate::config::OptionValue::Function),
    ]);
    let (r, actions) = run(&t, &c);
    let (k, covered) = actions
        .iter()
        .filter(|a| !matches!(a, Action::Finish))
        .enumerate()
        .find_map(|(k, a)| match a {
            Action::SummarizeRounds { messages, .. } => Some((k as u32, messages.clone())),
            _ => None,
        })
        .expect("previous rounds summarised");
    assert!(r.output.contains(&Slot::New(k)), "{:?}", r.output);
    assert_eq!(r.indices(Fate::Summarized), covered);
    assert!(r.over_budget);
    let latest_user = t.messages.iter().rposition(|m| m.is_real_user()).unwrap();
    assert!(
        (latest_user..t.len()).all(|i| r.fate[i] != Fate::Dropped),
        "{:?}",
        r.fate
    );
}

#[test]
fn keep_last_counts_the_groups_protect_counts_and_stage_1_leaves_them() {
    // Two system messages at the end (keepSystem false: no protection of their own):
    // the newest three conversation groups are the user input and the two tool groups
    // before it, which stage 1 must not compress — as one digest they would be one group
    // for the next reduction, whose keepLast would then reach back further.
    let mut t = Transcript::new(Format::OpenAi);
    t.push(MessageInfo::new(Role::User, 1.0));
    t.push(MessageInfo::new(Role::Assistant, 1.0));
    t.push(MessageInfo::new(Role::System, 1.0));
    for key in 0..2 {
        t.push(MessageInfo::new(Role::Assistant, 1.0));
        t.link(LinkKind::Call, key);
        t.push(MessageInfo::new(Role::Tool, 1.0));
        t.link(LinkKind::Result, key);
    }
    t.push(MessageInfo::new(Role::User, 1.0));
    t.push(MessageInfo::new(Role::System, 1.0));
    t.push(MessageInfo::new(Role::System, 1.0));
    let c = config(&[
        ("keepLast", Number(3.0)),
        ("keepSystem", Bool(false)),
        ("targetMessages", Number(0.0)),
        ("thresholdMessages", Number(0.0)),
        ("minToolRun", Number(3.0)),
    ]);
    let (r, actions) = run(&t, &c);
    assert!(actions.is_empty(), "{actions:?}");
    assert_eq!(r.indices(Fate::Kept), vec![0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(r.indices(Fate::Dropped), vec![8, 9]);
}

#[test]
fn the_history_starts_on_a_user_input_when_the_stages_meet_the_target() {
    // Anthropic, sliced: an orphan result first, then a long answer. Offloading meets the
    // target; the orphan goes, and the answer then opening the history goes too.
    let mut t = Transcript::new(Format::Anthropic);
    t.push(MessageInfo::new(Role::Tool, 5.0));
    t.link(LinkKind::Result, 99);
    for (role, tokens) in [
        (Role::Assistant, 300.0),
        (Role::User, 300.0),
        (Role::Assistant, 300.0),
        (Role::User, 5.0),
        (Role::Assistant, 5.0),
    ] {
        t.push(MessageInfo::new(role, tokens));
    }
    let c = config(&[
        ("maxTokens", Number(500.0)),
        ("largeMessageTokens", Number(60.0)),
    ]);
    let (r, actions) = run(&t, &c);
    assert!(
        matches!(actions[0], Action::Offload { message: 1 }),
        "{actions:?}"
    );
    assert_eq!(r.indices(Fate::Dropped), vec![0, 1]);
    let first = r
        .output
        .iter()
        .position(|s| matches!(s, Slot::New(k) if *k == 1));
    assert_eq!(first, Some(0), "{:?}", r.output);
    assert!(!r.over_budget);
}

#[test]
fn single_mode_replaces_the_earlier_summary_and_the_limits_are_what_is_replaced() {
    // An earlier summary after the system prompt, then chat rounds.
    let mut t = Transcript::new(Format::OpenAi);
    t.push(MessageInfo::new(Role::System, 10.0));
    let mut summary = MessageInfo::new(Role::User, 40.0);
    summary.flags = crate::transcript::flags::SUMMARY;
    t.push(summary);
    for _ in 0..10 {
        let mut user = MessageInfo::new(Role::User, 20.0);
        user.flags = crate::transcript::flags::REAL_USER;
        t.push(user);
        t.push(MessageInfo::new(Role::Assistant, 40.0));
    }
    let pairs = |mode: &str| {
        config(&[
            ("maxTokens", Number(300.0)),
            ("largeMessageTokens", Number(1250.0)),
            ("summarizer", crate::config::OptionValue::Function),
            ("summaryMode", crate::config::OptionValue::Text(mode.into())),
        ])
    };
    let rounds = |c: &Config| {
        let mut p = Progressive::new(&t, c);
        let a = p.next_action();
        let Action::SummarizeRounds { messages, .. } = &a else {
            panic!("{a:?}")
        };
        (messages.clone(), p.limit(&a))
    };
    let single = pairs("single");
    let (messages, limit) = rounds(&single);
    assert_eq!(messages.first(), Some(&1), "{messages:?}");
    assert_eq!(limit, single.summary_max_tokens.unwrap());
    let (messages, _) = rounds(&pairs("layered"));
    assert_eq!(messages.first(), Some(&2), "{messages:?}");
    // A rewrite, a digest: no more than what they replace.
    let p = Progressive::new(&t, &single);
    let digest = Action::CompressRun {
        messages: vec![2, 3],
    };
    assert_eq!(p.limit(&digest), 60.0);
    assert_eq!(p.limit(&Action::Offload { message: 3 }), 40.0);
    let (r, _) = run(&t, &single);
    assert_eq!(r.indices(Fate::Summarized).first(), Some(&1));
}

#[test]
fn without_a_summarizer_and_not_enough_it_drops_as_truncate() {
    let t = session(8, 1, 100.0);
    let c = config(&[("maxTokens", Number(400.0)), ("minToolRun", Number(50.0))]);
    let (r, _) = run(&t, &c);
    assert!(r.tokens_after <= 320.0 || r.over_budget);
    assert!(!r.indices(Fate::Dropped).is_empty());
    assert_eq!(r.events.last().unwrap().kind, "truncate");
}

/// The messages the actions cleared, in order.
fn cleared(actions: &[Action]) -> Vec<u32> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Clear { message } => Some(*message),
            _ => None,
        })
        .collect()
}

/// Stages 1–4 kept out (nothing large, no run long enough): only clearing can help.
fn clearing(pairs: &[(&str, crate::config::OptionValue)]) -> Config {
    let mut all = vec![
        ("largeMessageTokens", Number(1e6)),
        ("minToolRun", Number(1000.0)),
    ];
    all.extend_from_slice(pairs);
    config(&all)
}

#[test]
fn old_tool_results_are_cleared_oldest_first_until_the_target_is_met() {
    // Six rounds of [user, call, result of 400, answer]: results 3, 7, 11, 15, 19, 23. The
    // last is the current turn's; 15, 19 and 23 are the newest three (keepToolResults).
    let t = session(6, 1, 400.0);
    let total = t.total_tokens();
    // Two results cleared (25 tokens each here) meet the target: the oldest two.
    let c = clearing(&[
        ("maxTokens", Number(total - 1.0)),
        ("targetTokens", Number(total - 700.0)),
    ]);
    let (r, actions) = run(&t, &c);
    assert_eq!(cleared(&actions), vec![3, 7], "{actions:?}");
    assert_eq!(actions.len(), 2, "{actions:?}");
    assert_eq!(r.indices(Fate::Rewritten), vec![3, 7]);
    assert!(r.indices(Fate::Dropped).is_empty());
    assert_eq!(r.events.len(), 1);
    assert_eq!(r.events[0].kind, "clearToolResults");
    assert_eq!(r.events[0].messages, 2);
    assert_eq!(r.events[0].tokens_after, total - 750.0);
    // The calls stay (SPEC §9.4), the results stand where they stood.
    for (call, result) in [(2, 3), (6, 7)] {
        assert_eq!(r.fate[call], Fate::Kept);
        let k = r.output.iter().position(|s| *s == Slot::Input(call as u32));
        assert!(
            matches!(r.output[k.unwrap() + 1], Slot::New(_)),
            "{:?}",
            r.output
        );
        assert_eq!(r.fate[result], Fate::Rewritten);
    }
}

#[test]
fn clearing_leaves_the_newest_results_the_current_turn_and_keep_last_and_comes_before_drops() {
    let t = session(6, 1, 400.0);
    let low = |pairs: &[(&str, crate::config::OptionValue)]| {
        let mut all = vec![("maxTokens", Number(500.0))];
        all.extend_from_slice(pairs);
        let (r, actions) = run(&t, &clearing(&all));
        (cleared(&actions), r)
    };
    // Every old result but the newest three; then groups go, as truncate drops them.
    let (ids, r) = low(&[]);
    assert_eq!(ids, vec![3, 7, 11]);
    let kinds: Vec<&str> = r.events.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, vec!["clearToolResults", "truncate"]);
    // keepToolResults 0: every result outside the current turn (23).
    assert_eq!(
        low(&[("keepToolResults", Number(0.0))]).0,
        vec![3, 7, 11, 15, 19]
    );
    assert_eq!(
        low(&[("keepToolResults", Number(1.0))]).0,
        vec![3, 7, 11, 15, 19]
    );
    assert_eq!(
        low(&[("keepToolResults", Number(2.0))]).0,
        vec![3, 7, 11, 15]
    );
    assert_eq!(
        low(&[("keepToolResults", Number(1e9))]).0,
        Vec::<u32>::new()
    );
    // The newest keepLast groups stay whole: the last eleven reach back to result 11.
    assert_eq!(
        low(&[("keepToolResults", Number(0.0)), ("keepLast", Number(11.0))]).0,
        vec![3, 7]
    );
}

#[test]
fn with_a_summarizer_rounds_are_summarized_first_and_results_cleared_only_if_that_fails() {
    let t = session(6, 1, 400.0);
    let c = clearing(&[
        ("maxTokens", Number(2000.0)),
        ("summarizer", crate::config::OptionValue::Function),
    ]);
    let (r, actions) = run(&t, &c);
    assert!(matches!(actions[0], Action::SummarizeRounds { .. }));
    assert!(cleared(&actions).is_empty(), "{actions:?}");
    assert!(!r.over_budget);
    // The summary failed: the old results are cleared instead.
    let mut p = Progressive::new(&t, &c);
    let mut actions = Vec::new();
    loop {
        match p.next_action() {
            Action::Finish => break,
            a @ Action::SummarizeRounds { .. } => {
                p.skip();
                actions.push(a);
            }
            a => {
                p.done(25.0);
                actions.push(a);
            }
        }
    }
    assert_eq!(cleared(&actions), vec![3, 7, 11], "{actions:?}");
    let r = p.finish().unwrap();
    let kinds: Vec<&str> = r.events.iter().map(|e| e.kind).collect();
    assert_eq!(kinds[0], "clearToolResults", "{kinds:?}");
}

#[test]
fn what_an_earlier_reduction_cleared_is_not_cleared_again() {
    let mut t = session(6, 1, 400.0);
    // Results 3 and 7 are placeholders already (the boundary reads their note as a preview).
    for i in [3, 7] {
        t.messages[i].flags |= crate::transcript::flags::PREVIEW;
        t.messages[i].tokens = 25.0;
    }
    let c = clearing(&[("maxTokens", Number(500.0))]);
    let (_, actions) = run(&t, &c);
    assert_eq!(cleared(&actions), vec![11]);
}
