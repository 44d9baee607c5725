//! Property tests of SPEC §9 over random conversations: every output of `truncate` and
//! `priority` keeps order, system messages, tool integrity, `startOn`, the latest user
//! input, the budget, the accounting, stability and determinism. Some conversations carry
//! orphans (tool results whose call is not in them, as an app that sliced its history
//! leaves them: leading, in the middle, inside a call's group, beside a user's text): no
//! output of any strategy has one.
#![cfg(not(target_arch = "wasm32"))]

use chat_history_reducer::protect::starts_on_user_required;
use chat_history_reducer::strategies::progressive;
use chat_history_reducer::structure::Structure;
use chat_history_reducer::{
    reduce_sync, should_reduce, Config, Fate, Format, MessageInfo, OptionValue, Reduction, Role,
    Slot, Transcript,
};
use proptest::prelude::*;

#[path = "invariants/cases.rs"]
mod cases;
#[path = "invariants/oracles.rs"]
mod oracles;

use cases::*;
use oracles::*;

fn check(case: &Case) -> Result<(), TestCaseError> {
    let t = &case.transcript;
    let config = Config::from_pairs(&case.pairs).expect("valid config");
    let r = reduce_sync(t, &config).expect("no error in bestEffort mode");
    // In the output: as it was, or (a message with orphans beside other content) cleaned.
    let kept: Vec<bool> = r
        .fate
        .iter()
        .map(|f| matches!(f, Fate::Kept | Fate::Rewritten))
        .collect();
    let latest_user = t.messages.iter().rposition(|m| m.is_real_user());
    let orphans = orphans_of(t);

    // 8. Accounting: every input exactly once; the output is the kept inputs, and the
    // cleaned ones (rewritten).
    prop_assert_eq!(r.fate.len(), t.len());
    // (The one message a strategy that drops may write: the current turn's note.)
    let noted: Vec<u32> = r.trace.as_ref().map_or(Vec::new(), |n| n.messages.clone());
    let note_tokens = r.trace.as_ref().map_or(0.0, |n| n.estimate);
    // (In the output as themselves: not the messages the note stands for.)
    let kept: Vec<bool> = kept
        .iter()
        .enumerate()
        .map(|(i, &k)| k && !noted.contains(&(i as u32)))
        .collect();
    let out: Vec<u32> = r
        .output
        .iter()
        .filter_map(|slot| match slot {
            Slot::Input(i) | Slot::Cleaned(i) => Some(Ok(*i)),
            Slot::New(k) if r.trace.as_ref().is_some_and(|n| n.slot == *k) => None,
            Slot::New(_) => Some(Err(TestCaseError::fail(
                "a summary from a strategy that only drops",
            ))),
        })
        .collect::<Result<_, _>>()?;
    prop_assert_eq!(
        r.output.len() - out.len(),
        usize::from(r.trace.is_some()),
        "one note at most"
    );
    let as_is: Vec<u32> = r
        .output
        .iter()
        .filter_map(|s| match s {
            Slot::Input(i) => Some(*i),
            _ => None,
        })
        .collect();
    prop_assert_eq!(as_is, r.indices(Fate::Kept));
    for (i, fate) in r.fate.iter().enumerate() {
        let cleaned = r.output.contains(&Slot::Cleaned(i as u32));
        let in_note = noted.contains(&(i as u32));
        prop_assert_eq!(
            *fate == Fate::Rewritten,
            cleaned || in_note,
            "message {}",
            i
        );
    }
    // 12. Prefix: what a truncate removes is a prefix of the conversation (the turn rules
    // of Gemini aside, which remove a call turn that lost its user turn).
    if config.strategy == chat_history_reducer::config::Strategy::Truncate
        && t.format != Format::Gemini
    {
        let first_kept = (0..t.len()).find(|&i| {
            let m = &t.messages[i];
            r.fate[i] == Fate::Kept && !m.is_system() && !m.is_summary()
        });
        if let Some(first_kept) = first_kept {
            for i in first_kept..t.len() {
                prop_assert!(
                    r.fate[i] != Fate::Dropped || orphans.contains_key(&(i as u32)),
                    "message {} dropped after message {}, kept",
                    i,
                    first_kept
                );
            }
        }
    }
    // 13. Trace: a tool step of the current turn stays, or the note names it; only orphans
    // go.
    if let Some(u) = latest_user {
        for i in u..t.len() {
            if !t.links.iter().any(|l| l.message as usize == i) {
                continue;
            }
            prop_assert!(
                r.fate[i] != Fate::Dropped || orphans.contains_key(&(i as u32)),
                "message {} of the current turn dropped",
                i
            );
        }
    }
    if let Some(note) = &r.trace {
        prop_assert!(latest_user.is_some_and(|u| note.messages.iter().all(|&i| i > u as u32)));
    }
    // 4. No orphan: a message that carries only orphans goes; one that carries more is
    // cleaned (or goes with its group); every other message stays as it was.
    no_orphans(&output_transcript(t, &r))?;
    for (&i, &only) in &orphans {
        let fate = r.fate[i as usize];
        prop_assert!(
            fate == Fate::Dropped || !only && fate == Fate::Rewritten,
            "orphan {} is {:?}",
            i,
            fate
        );
    }
    if !orphans.is_empty() {
        prop_assert!(should_reduce(t, &config) && r.reduced);
    }
    // The one-pass partition the boundary writes results from.
    let by_fate = r.indices_by_fate();
    for (k, fate) in [Fate::Kept, Fate::Dropped, Fate::Summarized, Fate::Rewritten]
        .into_iter()
        .enumerate()
    {
        prop_assert_eq!(&by_fate[k], &r.indices(fate));
    }
    // 1. Order.
    prop_assert!(out.windows(2).all(|w| w[0] < w[1]));
    // 3. System messages stay.
    if config.keep_system {
        for (i, m) in t.messages.iter().enumerate() {
            if m.is_system() {
                prop_assert!(kept[i], "system message {} removed", i);
            }
        }
    }
    // 4. Tool integrity, and Anthropic adjacency.
    for (c, res) in tool_pairs(t) {
        prop_assert_eq!(
            kept[c as usize],
            kept[res as usize],
            "call {} / result {} split",
            c,
            res
        );
        if matches!(t.format, Format::Anthropic | Format::Gemini) && kept[c as usize] {
            let pos = out.iter().position(|&i| i == c).unwrap();
            prop_assert_eq!(
                out.get(pos + 1).copied(),
                Some(res),
                "tool_result not right after tool_use"
            );
        }
    }
    // A Responses reasoning item keeps the item after it.
    for (k, &i) in out.iter().enumerate() {
        if t.messages[i as usize].flags & chat_history_reducer::flags::ATTACH_NEXT != 0 {
            prop_assert_eq!(
                out.get(k + 1).copied(),
                Some(i + 1),
                "reasoning item without its call"
            );
        }
    }
    // Gemini: a function-call turn follows a user or function-response turn.
    let origin: Vec<Option<u32>> = r
        .output
        .iter()
        .map(|slot| match slot {
            Slot::Input(i) | Slot::Cleaned(i) => Some(*i),
            Slot::New(_) => None,
        })
        .collect();
    calls_follow_user_turns(t, &output_transcript(t, &r), &origin)?;

    // 6. The latest real user input stays.
    if let Some(u) = latest_user {
        prop_assert!(kept[u], "latest user input {} removed", u);
    }
    // keepLast: the newest conversation message always stays (with its group).
    if config.keep_last >= 1 {
        if let Some(last) = (0..t.len()).rposition(|i| {
            let m = &t.messages[i];
            !m.is_system() && !m.is_summary() && orphans.get(&(i as u32)) != Some(&true)
        }) {
            prop_assert!(kept[last], "the newest message {} was removed", last);
        }
    }
    // 5. startOn user.
    if r.reduced
        && config.start_on == chat_history_reducer::config::StartOn::User
        && latest_user.is_some()
    {
        let first = out
            .iter()
            .map(|&i| &t.messages[i as usize])
            .find(|m| !m.is_system() && !m.is_summary());
        if let Some(first) = first {
            prop_assert!(first.is_real_user(), "starts on {:?}", first.role);
        }
    }
    // 7. Budget: every reduction meets the targets (one for orphans alone too), or says it
    // could not.
    let after: f64 = out
        .iter()
        .map(|&i| t.messages[i as usize].tokens)
        .sum::<f64>()
        + note_tokens;
    prop_assert!((after - r.tokens_after).abs() < 1e-6);
    if r.reduced && !r.over_budget {
        if let Some(target) = config.target_tokens {
            prop_assert!(after <= target + 1e-9, "{} > {}", after, target);
        }
        if let Some(target) = config.target_messages {
            let n = out
                .iter()
                .filter(|&&i| {
                    chat_history_reducer::budget::counts_as_message(&t.messages[i as usize])
                })
                .count()
                + usize::from(r.trace.is_some());
            prop_assert!(n <= target, "{} messages > {}", n, target);
        }
    }
    if !should_reduce(t, &config) {
        prop_assert!(!r.reduced);
        prop_assert_eq!(out.len(), t.len());
        prop_assert!(r.trace.is_none());
    }
    // 10. Determinism.
    prop_assert_eq!(&reduce_sync(t, &config).unwrap(), &r);
    // 9. Stability: the reduced history is left as it is.
    if !r.over_budget {
        let again = reduce_sync(&output_transcript(t, &r), &config).unwrap();
        prop_assert!(!again.reduced, "a reduced history was reduced again");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn every_reduction_keeps_the_invariants(case in case()) {
        check(&case)?;
    }
}

#[test]
fn budget_unreachable_is_an_error_when_asked() {
    let mut t = Transcript::new(Format::OpenAi);
    t.push(MessageInfo::new(Role::System, 500.0));
    t.push(MessageInfo::new(Role::User, 10.0));
    let config = Config::from_pairs(&[
        ("maxTokens", OptionValue::Number(100.0)),
        ("onOverBudget", OptionValue::Text("error".into())),
    ])
    .unwrap();
    let e = reduce_sync(&t, &config).unwrap_err();
    assert_eq!(e.code, chat_history_reducer::ErrorCode::BudgetUnreachable);
    let best = Config::from_pairs(&[("maxTokens", OptionValue::Number(100.0))]).unwrap();
    let r = reduce_sync(&t, &best).unwrap();
    assert!(r.over_budget);
    assert_eq!(
        r.output.len(),
        2,
        "protected messages are kept even over budget"
    );
}

// ---- summarize and progressive: the strategies that write messages ----------------------

/// Whether message `i` is in the output in some form (as it was, or rewritten in place).
fn present(fate: Fate) -> bool {
    matches!(fate, Fate::Kept | Fate::Rewritten)
}

/// The invariants every writing strategy keeps: accounting, order, system messages, tool
/// integrity (a call and its results are both present, or both gone), the latest user
/// input verbatim (but for orphan results beside its text), orphans gone, and the budget
/// unless over it.
fn check_written(t: &Transcript, config: &Config, r: &Reduction) -> Result<(), TestCaseError> {
    prop_assert_eq!(r.fate.len(), t.len());
    let inputs: Vec<u32> = r
        .output
        .iter()
        .filter_map(|s| match s {
            Slot::Input(i) => Some(*i),
            Slot::New(_) | Slot::Cleaned(_) => None,
        })
        .collect();
    let orphans = orphans_of(t);
    for (&i, &only) in &orphans {
        let fate = r.fate[i as usize];
        // (One that carries more may also go with its group, or into a summary.)
        prop_assert!(
            if only {
                fate == Fate::Dropped
            } else {
                fate != Fate::Kept
            },
            "orphan {} ({}) is {:?}",
            i,
            only,
            fate
        );
    }
    for s in &r.output {
        if let Slot::Cleaned(i) = *s {
            prop_assert_eq!(orphans.get(&i), Some(&false), "cleaned {}", i);
            prop_assert_eq!(r.fate[i as usize], Fate::Rewritten);
        }
    }
    prop_assert!(inputs.windows(2).all(|w| w[0] < w[1]), "order");
    prop_assert_eq!(
        inputs,
        r.indices(Fate::Kept),
        "the output holds exactly the kept inputs"
    );
    for (i, m) in t.messages.iter().enumerate() {
        if m.is_system() && config.keep_system {
            prop_assert_eq!(r.fate[i], Fate::Kept, "system message {}", i);
        }
    }
    for (c, res) in tool_pairs(t) {
        let (fc, fr) = (r.fate[c as usize], r.fate[res as usize]);
        prop_assert_eq!(
            present(fc),
            present(fr),
            "call {} is {:?} but its result {} is {:?}",
            c,
            fc,
            res,
            fr
        );
    }
    if let Some(u) = t.messages.iter().rposition(|m| m.is_real_user()) {
        let cleaned = r.output.contains(&Slot::Cleaned(u as u32));
        prop_assert!(
            r.fate[u] == Fate::Kept || cleaned,
            "the latest user input {} is {:?}",
            u,
            r.fate[u]
        );
    }
    if r.reduced && !r.over_budget {
        if let Some(target) = config.target_tokens {
            prop_assert!(
                r.tokens_after <= target + 1e-6,
                "{} > {}",
                r.tokens_after,
                target
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 800, ..ProptestConfig::default() })]

    #[test]
    fn summaries_keep_the_invariants(case in case(), layered in any::<bool>(), summary in 1.0..400.0f64) {
        let t = &case.transcript;
        let mut pairs = case.pairs.clone();
        pairs.retain(|(k, _)| *k != "strategy");
        pairs.push(("strategy", OptionValue::Text("summarize".into())));
        pairs.push(("summarizer", OptionValue::Function));
        if layered {
            pairs.push(("summaryMode", OptionValue::Text("layered".into())));
        }
        let config = Config::from_pairs(&pairs).unwrap();
        let r = match chat_history_reducer::plan_summary(t, &config).unwrap() {
            chat_history_reducer::SummaryStep::Done(r) => r,
            chat_history_reducer::SummaryStep::Summarize(plan) => {
                let tokens = config.summary_max_tokens.map_or(summary, |m| summary.min(m));
                chat_history_reducer::strategies::summarize::apply(t, &plan, tokens, &config).unwrap()
            }
        };
        check_written(t, &config, &r)?;
        no_orphans(&output_transcript(t, &r))?;
        let origin: Vec<Option<u32>> = r
            .output
            .iter()
            .map(|s| match *s {
                Slot::Input(i) | Slot::Cleaned(i) => Some(i),
                Slot::New(_) => None,
            })
            .collect();
        calls_follow_user_turns(t, &output_transcript(t, &r), &origin)?;
        // The summary stands after the leading system messages (and earlier summaries).
        let note = r.trace.as_ref().map(|n| n.slot);
        if let Some(at) = r.output.iter().position(|s| matches!(*s, Slot::New(k) if Some(k) != note)) {
            for s in &r.output[..at] {
                let Slot::Input(i) = *s else { unreachable!() };
                let m = &t.messages[i as usize];
                prop_assert!(m.is_system() || (layered && m.is_summary()), "message {} before the summary", i);
            }
            prop_assert!(r.fate.contains(&Fate::Summarized));
        }
    }

    #[test]
    fn progressive_keeps_the_invariants(
        case in case(),
        preview in 1.0..300.0f64,
        large in prop_oneof![Just(500.0f64), 20.0..600.0f64],
        with_summarizer in any::<bool>(),
        keep_results in prop_oneof![Just(3usize), 0usize..5],
    ) {
        let t = &case.transcript;
        let mut pairs = case.pairs.clone();
        pairs.retain(|(k, _)| *k != "strategy");
        pairs.push(("strategy", OptionValue::Text("progressive".into())));
        pairs.push(("largeMessageTokens", OptionValue::Number(large)));
        pairs.push(("minToolRun", OptionValue::Number(3.0)));
        pairs.push(("keepToolResults", OptionValue::Number(keep_results as f64)));
        if with_summarizer {
            pairs.push(("summarizer", OptionValue::Function));
        }
        let config = Config::from_pairs(&pairs).unwrap();
        if !should_reduce(t, &config) {
            return Ok(());
        }
        let (r, done) = run_progressive(t, &config, preview)?;
        check_written(t, &config, &r)?;
        // The new summary is protected as any summary: it stands, covering what it covers.
        let summary = done.iter().enumerate().find_map(|(k, (a, _))| match a {
            progressive::Action::SummarizeRounds { messages, .. } => Some((k as u32, messages)),
            _ => None,
        });
        if let Some((k, covered)) = summary {
            prop_assert!(r.output.contains(&Slot::New(k)), "the new summary was dropped");
            for &i in covered {
                prop_assert_eq!(r.fate[i as usize], Fate::Summarized, "message {} covered by the summary", i);
            }
        }
        // Written messages stand where what they replace stood: nothing written is lost (a
        // digest stands for the messages of its tool run, which are rewritten).
        let stands_for = |s: &Slot| match s {
            Slot::New(k) => match &done[*k as usize].0 {
                progressive::Action::CompressRun { messages } => messages.len(),
                _ => 1,
            },
            Slot::Cleaned(_) => 1,
            Slot::Input(_) => 0,
        };
        let written: usize = r.output.iter().map(stands_for).sum();
        let rewritten = r.indices(Fate::Rewritten).len();
        prop_assert!(written >= rewritten || done.last().is_some_and(|(a, _)| *a == progressive::Action::Finish));
        // The index of dropped tool calls stands where summaries stand, and lists tool groups
        // of earlier turns, which are rewritten.
        if let Some(k) = done.iter().position(|(a, _)| *a == progressive::Action::Finish) {
            let at = r.output.iter().position(|s| *s == Slot::New(k as u32));
            prop_assert!(at.is_some(), "the index stands");
            for s in &r.output[..at.unwrap()] {
                let m = match *s {
                    Slot::Input(i) | Slot::Cleaned(i) => t.messages[i as usize],
                    // (A system message may be offloaded when `keepSystem` is off.)
                    Slot::New(j) => match done[j as usize].0 {
                        progressive::Action::SummarizeRounds { .. } => continue,
                        progressive::Action::Offload { message } | progressive::Action::Rewrite { message, .. } => t.messages[message as usize],
                        ref a => {
                            prop_assert!(false, "{:?} before the index", a);
                            unreachable!()
                        }
                    },
                };
                prop_assert!(m.is_system() || m.is_summary(), "{:?} before the index", m);
            }
            let latest_user = t.messages.iter().rposition(|m| m.is_real_user());
            let listed: Vec<u32> = r.indices(Fate::Rewritten).into_iter().filter(|&i| {
                !r.output.iter().any(|s| matches!(*s, Slot::Cleaned(c) if c == i))
                    && !done.iter().any(|(a, _)| match a {
                        progressive::Action::Offload { message } | progressive::Action::Clear { message } | progressive::Action::Rewrite { message, .. } => *message == i,
                        progressive::Action::CompressRun { messages } => messages.contains(&i),
                        _ => false,
                    })
            }).collect();
            for &i in &listed {
                prop_assert!(latest_user.is_some_and(|u| (i as usize) < u), "indexed {} is of the current turn", i);
            }
            // A prefix, as any summary (SPEC §9.12): nothing older than its newest line stays
            // but what is protected.
            if let Some(&newest) = listed.iter().max() {
                let s = Structure::of(t);
                let protection = chat_history_reducer::protect::protect(t, &s, &config);
                for i in 0..newest as usize {
                    let m = &t.messages[i];
                    let protected = protection[s.group_of[i] as usize].is_protected();
                    prop_assert!(
                        r.fate[i] != Fate::Kept || m.is_system() || m.is_summary() || protected,
                        "{} kept before the index's newest line {}", i, newest
                    );
                }
            }
        }
        // 9. Stability: the output, read back as the next reduction reads it, is left as it is
        // — previews, digests and compressed texts are not rewritten again, even over budget.
        let (again, origin) = read_back(t, &r, &done);
        no_orphans(&again)?;
        calls_follow_user_turns(t, &again, &origin)?;
        // 5. startOn user (with the stages' target met or not).
        if r.reduced && starts_on_user_required(t, &config) && t.messages.iter().any(|m| m.is_real_user()) {
            let first = again.messages.iter().find(|m| !m.is_system() && !m.is_summary());
            prop_assert!(first.is_none_or(|m| m.is_real_user()), "starts on {:?}", first);
        }
        if should_reduce(&again, &config) {
            let (r2, done2) = run_progressive(&again, &config, preview)?;
            prop_assert!(done2.is_empty(), "reduced again: {:?}", done2);
            prop_assert!(!r2.reduced, "reduced again: {:?}", r2.fate);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 800, ..ProptestConfig::default() })]

    /// Stage `clearToolResults` alone (nothing large, no run long enough, no summarizer):
    /// what it clears is old tool results only — never one of the current turn, of the
    /// newest `keepLast` groups or holding one of the newest `keepToolResults` results — and
    /// the output keeps the invariants (a cleared result answers its call, which stays),
    /// accounts for every input once, and is left as it is by the next reduction.
    #[test]
    fn clearing_old_tool_results_keeps_the_invariants(
        case in case(),
        keep in prop_oneof![Just(3usize), 0usize..6],
        placeholder in 1.0..40.0f64,
    ) {
        let t = &case.transcript;
        let mut pairs = case.pairs.clone();
        pairs.retain(|(k, _)| *k != "strategy");
        pairs.push(("strategy", OptionValue::Text("progressive".into())));
        pairs.push(("largeMessageTokens", OptionValue::Number(1e9)));
        pairs.push(("minToolRun", OptionValue::Number(1e6)));
        pairs.push(("keepToolResults", OptionValue::Number(keep as f64)));
        let config = Config::from_pairs(&pairs).unwrap();
        if !should_reduce(t, &config) {
            return Ok(());
        }
        let (r, done) = run_progressive(t, &config, placeholder)?;
        check_written(t, &config, &r)?;
        // Which messages may be cleared, told apart here from the transcript alone.
        let orphans = orphans_of(t);
        let latest_user = t.messages.iter().rposition(|m| m.is_real_user());
        let results = |i: usize| {
            if orphans.get(&(i as u32)) == Some(&true) {
                return 0;
            }
            t.links
                .iter()
                .filter(|l| l.message as usize == i && l.kind == chat_history_reducer::transcript::LinkKind::Result)
                .count()
        };
        let (mut newer, mut whole) = (0, t.len());
        while whole > 0 && newer < keep {
            whole -= 1;
            newer += results(whole);
        }
        let s = Structure::of(t);
        let keep_last = chat_history_reducer::protect::keep_last_from(t, &s, config.keep_last);
        let keep_last_start = s.groups.get(keep_last).map_or(t.len(), |g| g.start as usize);
        let mut cleared = Vec::new();
        for (action, _) in &done {
            // (The index of dropped tool calls: see `run_progressive`.)
            if *action == progressive::Action::Finish {
                continue;
            }
            let progressive::Action::Clear { message } = action else {
                prop_assert!(false, "only clearing: {:?}", action);
                unreachable!()
            };
            let i = *message as usize;
            prop_assert!(results(i) > 0, "message {} holds no result", i);
            prop_assert!(i < whole, "message {} holds one of the newest {} results", i, keep);
            prop_assert!(latest_user.is_some_and(|u| i < u), "message {} is of the current turn", i);
            let start = s.groups[s.group_of[i] as usize].start as usize;
            prop_assert!(start < keep_last_start, "message {} is in the newest keepLast groups", i);
            prop_assert!(!t.messages[i].is_written() && !t.messages[i].is_summary());
            prop_assert!(cleared.last().is_none_or(|&c| c < i), "oldest first");
            cleared.push(i);
        }
        // Accounting: a cleared result stands rewritten, or went with its group, never kept.
        for &i in &cleared {
            prop_assert!(matches!(r.fate[i], Fate::Rewritten | Fate::Dropped), "{} is {:?}", i, r.fate[i]);
        }
        // Pairing: no cleared result without its call, nor a call without its results.
        let (again, origin) = read_back(t, &r, &done);
        no_orphans(&again)?;
        calls_follow_user_turns(t, &again, &origin)?;
        // 9. Stability: nothing is cleared again.
        if should_reduce(&again, &config) {
            let (r2, done2) = run_progressive(&again, &config, placeholder)?;
            prop_assert!(done2.is_empty(), "reduced again: {:?}", done2);
            prop_assert!(!r2.reduced, "reduced again: {:?}", r2.fate);
        }
    }
}

/// Runs `progressive` with fixed sizes for what it writes; the actions done, with the tokens
/// of what each wrote (the k-th wrote `Slot::New(k)`).
fn run_progressive(
    t: &Transcript,
    config: &Config,
    preview: f64,
) -> Result<(Reduction, Vec<(progressive::Action, f64)>), TestCaseError> {
    use progressive::Action;
    let mut p = progressive::Progressive::new(t, config);
    let mut done = Vec::new();
    loop {
        prop_assert!(done.len() < 10_000, "the machine does not stop");
        let action = p.next_action();
        let tokens = match &action {
            Action::Finish => break,
            Action::Offload { .. } | Action::Clear { .. } => preview,
            Action::CompressRun { messages } => preview.min(20.0 * messages.len() as f64),
            Action::SummarizeRounds { target_tokens, .. } => target_tokens.min(preview),
            Action::Rewrite { target_tokens, .. } => *target_tokens,
        };
        p.done(tokens);
        done.push((action, tokens));
    }
    // The index of dropped tool calls, as the boundary writes it: an opening line and a line
    // a group, the oldest lines giving way to fit. (In `done` as `Finish`, which no action
    // is: the k-th written message.)
    if let Some(c) = p.index_candidates() {
        let (opening, line) = (12.0, preview.clamp(4.0, 30.0));
        let fits = ((c.budget - opening) / line).floor().max(0.0) as usize;
        let from = c.ends.len() - fits.min(c.ends.len());
        if from < c.ends.len() {
            let tokens = opening + line * (c.ends.len() - from) as f64;
            prop_assert!(tokens <= c.budget);
            let mut start = if from == 0 {
                0
            } else {
                c.ends[from - 1] as usize
            };
            let listed = &c.messages[start..];
            for &end in &c.ends[from..] {
                let unit = &c.messages[start..end as usize];
                let (calls, results) = unit.iter().fold((0, 0), |(c, r), &i| {
                    let links = t.links.iter().filter(|l| l.message == i);
                    links.fold((c, r), |(c, r), l| match l.kind {
                        chat_history_reducer::transcript::LinkKind::Call => (c + 1, r),
                        _ => (c, r + 1),
                    })
                });
                // A call with its results (a tool group), the run a digest stands for (calls,
                // their results but for orphans), or a digest an earlier reduction wrote.
                let digest = unit.len() == 1 && t.messages[unit[0] as usize].is_compressed();
                prop_assert!(
                    calls > 0 || digest && calls + results == 0,
                    "indexed unit {:?}",
                    unit
                );
                start = end as usize;
            }
            p.indexed(tokens, listed, &c.earlier);
            done.push((Action::Finish, tokens));
        }
    }
    Ok((p.finish().unwrap(), done))
}

/// The output of a progressive reduction as the boundary reads it back: kept messages as
/// they were, a preview or compressed text as its original with that flag (and its calls
/// and results), a digest and a summary as new messages, a cleaned message without its
/// orphan results; with the input each message stands for (in place), if any.
fn read_back(
    t: &Transcript,
    r: &Reduction,
    done: &[(progressive::Action, f64)],
) -> (Transcript, Vec<Option<u32>>) {
    use chat_history_reducer::flags;
    use progressive::Action;
    let mut out = Transcript::new(t.format);
    let mut links_of: Vec<Vec<_>> = vec![Vec::new(); t.len()];
    let mut cleaned_links_of: Vec<Vec<_>> = vec![Vec::new(); t.len()];
    let orphans = orphan_links(t);
    for l in &t.links {
        links_of[l.message as usize].push(*l);
        if !orphans.contains(&(l.message, l.key)) {
            cleaned_links_of[l.message as usize].push(*l);
        }
    }
    // (What is written for a message is written without its orphan results.)
    let copy = |out: &mut Transcript, i: usize, m: MessageInfo| {
        out.push(m);
        for l in &cleaned_links_of[i] {
            out.link(l.kind, l.key);
        }
    };
    for slot in &r.output {
        match *slot {
            Slot::Input(i) => {
                out.push(t.messages[i as usize]);
                for l in &links_of[i as usize] {
                    out.link(l.kind, l.key);
                }
            }
            Slot::Cleaned(i) => copy(&mut out, i as usize, t.messages[i as usize]),
            Slot::New(k) => {
                let (action, tokens) = &done[k as usize];
                match action {
                    Action::Offload { message } | Action::Clear { message } => {
                        let mut m = t.messages[*message as usize];
                        m.flags |= flags::PREVIEW;
                        m.tokens = *tokens;
                        copy(&mut out, *message as usize, m);
                    }
                    Action::Rewrite { message, .. } => {
                        let mut m = t.messages[*message as usize];
                        m.flags =
                            (m.flags & !(flags::REAL_USER | flags::PREVIEW)) | flags::COMPRESSED;
                        m.tokens = *tokens;
                        copy(&mut out, *message as usize, m);
                    }
                    Action::CompressRun { .. } => {
                        // An assistant message; in Gemini a user turn, no user input.
                        let role = if t.format == Format::Gemini {
                            Role::User
                        } else {
                            Role::Assistant
                        };
                        out.push(MessageInfo {
                            role,
                            flags: flags::COMPRESSED,
                            tokens: *tokens,
                        });
                    }
                    Action::SummarizeRounds { .. } => {
                        out.push(MessageInfo {
                            role: Role::User,
                            flags: flags::SUMMARY,
                            tokens: *tokens,
                        });
                    }
                    // The index of dropped tool calls (see `run_progressive`).
                    Action::Finish => {
                        out.push(MessageInfo {
                            role: Role::User,
                            flags: flags::SUMMARY | flags::TOOL_INDEX,
                            tokens: *tokens,
                        });
                    }
                }
            }
        }
    }
    let origin = r
        .output
        .iter()
        .map(|slot| match *slot {
            Slot::Input(i) | Slot::Cleaned(i) => Some(i),
            Slot::New(k) => match done[k as usize].0 {
                Action::Offload { message }
                | Action::Clear { message }
                | Action::Rewrite { message, .. } => Some(message),
                _ => None,
            },
        })
        .collect();
    (out, origin)
}

#[test]
fn with_no_user_input_at_all_keep_last_still_holds() {
    let mut t = Transcript::new(Format::OpenAi);
    t.push(MessageInfo::new(Role::Assistant, 100.0));
    t.push(MessageInfo::new(Role::Assistant, 100.0));
    let config = Config::from_pairs(&[("maxTokens", OptionValue::Number(20.0))]).unwrap();
    let r = reduce_sync(&t, &config).unwrap();
    assert_eq!(r.output, vec![Slot::Input(1)], "the newest group stays");
    assert!(r.over_budget);
}

/// `truncate` of a transcript counted only where `count_decisive` asked, against the fully
/// counted one. Whole counts, so that sums do not depend on their order (as the boundary
/// requires of the estimator it uses this with).
fn check_decisive(case: &Case, known_share: f64, target_share: f64) -> Result<(), TestCaseError> {
    use chat_history_reducer::strategies::truncate::{can_leave_oldest_uncounted, count_decisive};
    let mut pairs: Vec<(&'static str, OptionValue)> = case
        .pairs
        .iter()
        .filter(|(k, _)| *k != "strategy" && *k != "targetMessages")
        .cloned()
        .collect();
    let Some(max) = pairs
        .iter()
        .find(|(k, _)| *k == "maxTokens")
        .and_then(|(_, v)| match v {
            OptionValue::Number(n) => Some(*n),
            _ => None,
        })
    else {
        return Ok(());
    };
    pairs.push((
        "targetTokens",
        OptionValue::Number((max * target_share).floor()),
    ));
    let config = Config::from_pairs(&pairs).expect("valid config");
    prop_assert!(can_leave_oldest_uncounted(&config));
    let mut full = case.transcript.clone();
    for m in &mut full.messages {
        m.tokens = m.tokens.floor() + 1.0;
    }
    // Some messages counted already (as taken over from an earlier call), the others at 0.
    let mut known: Vec<bool> = (0..full.len())
        .map(|i| ((i as u64 * 2_654_435_761) % 1000) as f64 / 1000.0 < known_share)
        .collect();
    let mut partial = full.clone();
    for (i, m) in partial.messages.iter_mut().enumerate() {
        if !known[i] {
            m.tokens = 0.0;
        }
    }
    let (_, structure) = count_decisive(&mut partial, &config, &mut known, |indices, t| {
        for &i in indices {
            t.messages[i as usize].tokens = full.messages[i as usize].tokens;
        }
    });
    prop_assert_eq!(&structure, &Structure::of(&partial));
    let uncounted: f64 = (0..full.len())
        .filter(|&i| !known[i])
        .map(|i| full.messages[i].tokens)
        .sum();
    match (reduce_sync(&full, &config), reduce_sync(&partial, &config)) {
        (Ok(a), Ok(b)) => {
            prop_assert_eq!(&a.fate, &b.fate);
            prop_assert_eq!(&a.output, &b.output);
            prop_assert_eq!(a.tokens_after, b.tokens_after);
            prop_assert_eq!(a.over_budget, b.over_budget);
            prop_assert_eq!(a.reduced, b.reduced);
            prop_assert_eq!(a.tokens_before, b.tokens_before + uncounted);
            for (i, fate) in b.fate.iter().enumerate() {
                prop_assert!(
                    known[i] || *fate == Fate::Dropped,
                    "message {} uncounted but kept",
                    i
                );
            }
        }
        (Err(a), Err(b)) => prop_assert_eq!(a.code, b.code),
        (a, b) => prop_assert!(false, "{:?} vs {:?}", a.map(|_| ()), b.map(|_| ())),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn a_truncation_is_decided_by_what_count_decisive_counts(
        case in case(),
        known_share in prop_oneof![Just(0.0), 0.0..1.0f64],
        target_share in prop_oneof![Just(0.8), 0.0..1.0f64],
    ) {
        check_decisive(&case, known_share, target_share)?;
    }
}
