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
    reduce_sync, should_reduce, Config, Fate, Format, LinkKind, MessageInfo, OptionValue,
    Reduction, Role, Slot, Transcript,
};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

/// One step of a generated conversation.
#[derive(Clone, Debug)]
enum Step {
    User(f64),
    Answer(f64),
    /// Parallel tool calls: the call message's tokens, one entry per result, the tokens of
    /// an orphan result among them, if any (inside the call's group), and whether the last
    /// call's result is missing (an orphan call, once the conversation goes on).
    Tools(f64, Vec<f64>, Option<f64>, bool),
    /// A developer message in the middle.
    System(f64),
    /// An orphan result of its own: a tool message, or (`true`, where the format has them)
    /// a block of a real user input, beside its text.
    Orphan(f64, bool),
    /// A tool call no result answers: an assistant message of the call alone (`true`), or
    /// of the call beside its text. (Pending when no user input or answer follows.)
    Unanswered(f64, bool),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (1.0..200.0f64).prop_map(Step::User),
        3 => (1.0..300.0f64).prop_map(Step::Answer),
        3 => (
            (1.0..80.0f64),
            prop::collection::vec(1.0..2000.0f64, 1..4),
            prop::option::weighted(0.15, 1.0..500.0f64),
            prop::bool::weighted(0.1)
        )
            .prop_map(|(c, r, o, m)| Step::Tools(c, r, o, m)),
        1 => (1.0..50.0f64).prop_map(Step::System),
        1 => ((1.0..500.0f64), any::<bool>()).prop_map(|(t, u)| Step::Orphan(t, u)),
        1 => ((1.0..300.0f64), any::<bool>()).prop_map(|(t, u)| Step::Unanswered(t, u)),
    ]
}

/// `steps` without orphans (`None`), or with them and (`Some(true)`) one leading.
fn with_orphans(mut steps: Vec<Step>, orphans: Option<bool>) -> Vec<Step> {
    match orphans {
        None => {
            steps.retain(|s| !matches!(s, Step::Orphan(..) | Step::Unanswered(..)));
            for s in &mut steps {
                if let Step::Tools(_, _, o, m) = s {
                    *o = None;
                    *m = false;
                }
            }
        }
        Some(true) => steps.insert(0, Step::Orphan(100.0, false)),
        Some(false) => {}
    }
    steps
}

/// Keys no call has: orphan results answer them.
const ORPHAN_KEYS: u32 = 5_000_000;

/// A message that carries only an orphan result.
fn orphan(t: &mut Transcript, orphans: &mut u32, tokens: f64) {
    t.push(MessageInfo::new(Role::Tool, tokens));
    t.link(LinkKind::Result, *orphans);
    *orphans += 1;
}

/// A tool call with parallel results, shaped as `t.format` shapes it; with an orphan result
/// (`stray`) among them: an orphan message between them, or in Anthropic and Gemini a block
/// of their message.
fn tools(
    t: &mut Transcript,
    key: &mut u32,
    orphans: &mut u32,
    call: f64,
    results: &[f64],
    stray: Option<f64>,
    missing: bool,
) {
    let first = *key;
    *key += results.len() as u32;
    let calls = first..*key;
    // The calls that get their results.
    let answered = first..*key - u32::from(missing);
    match t.format {
        Format::VercelUi => {
            // Call and result live in the one assistant message.
            t.push(MessageInfo::new(
                Role::Assistant,
                call + results.iter().sum::<f64>(),
            ));
        }
        Format::Anthropic | Format::Gemini => {
            // All results in the one user turn right after the call.
            t.push(MessageInfo::new(Role::Assistant, call));
            for k in calls.clone() {
                t.link(LinkKind::Call, k);
            }
            t.push(MessageInfo {
                role: Role::Tool,
                flags: 0,
                tokens: results.iter().sum::<f64>() + stray.unwrap_or(0.0),
            });
            for k in answered {
                t.link(LinkKind::Result, k);
            }
            if stray.is_some() {
                t.link(LinkKind::Result, *orphans);
                *orphans += 1;
            }
        }
        Format::OpenAiResponses => {
            // A reasoning item, one item per call, then one per output.
            t.push(MessageInfo {
                role: Role::Other,
                flags: chat_history_reducer::flags::ATTACH_NEXT,
                tokens: 5.0,
            });
            for k in calls.clone() {
                let mut m = MessageInfo::new(Role::Assistant, call);
                m.flags |= chat_history_reducer::flags::CALLS_ONLY;
                t.push(m);
                t.link(LinkKind::Call, k);
            }
            if let Some(tokens) = stray {
                orphan(t, orphans, tokens);
            }
            for (k, tokens) in answered.zip(results) {
                t.push(MessageInfo::new(Role::Tool, *tokens));
                t.link(LinkKind::Result, k);
            }
        }
        Format::Vercel => {
            // The calls wait for an approval, answered in its own tool message.
            t.push(MessageInfo::new(Role::Assistant, call));
            for k in calls.clone() {
                t.link(LinkKind::Call, k);
            }
            let approval = 1_000_000 + first;
            t.link(LinkKind::Call, approval);
            t.push(MessageInfo::new(Role::Tool, 4.0));
            t.link(LinkKind::Result, approval);
            if let Some(tokens) = stray {
                orphan(t, orphans, tokens);
            }
            for (k, tokens) in answered.zip(results) {
                t.push(MessageInfo::new(Role::Tool, *tokens));
                t.link(LinkKind::Result, k);
            }
        }
        Format::OpenAi | Format::LangChain => {
            t.push(MessageInfo::new(Role::Assistant, call));
            for k in calls.clone() {
                t.link(LinkKind::Call, k);
            }
            for (n, (k, tokens)) in answered.zip(results).enumerate() {
                t.push(MessageInfo::new(Role::Tool, *tokens));
                t.link(LinkKind::Result, k);
                if let (0, Some(tokens)) = (n, stray) {
                    orphan(t, orphans, tokens);
                }
            }
        }
    }
}

fn build(format: Format, system: Option<f64>, summary: Option<f64>, steps: &[Step]) -> Transcript {
    let mut t = Transcript::new(format);
    if let Some(tokens) = system {
        t.push(MessageInfo::new(Role::System, tokens));
    }
    if let Some(tokens) = summary {
        let mut m = MessageInfo::new(Role::User, tokens);
        m.flags = chat_history_reducer::flags::SUMMARY;
        t.push(m);
    }
    let (mut key, mut orphans) = (0, ORPHAN_KEYS);
    for s in steps {
        match s {
            Step::User(tokens) => {
                t.push(MessageInfo::new(Role::User, *tokens));
            }
            Step::Answer(tokens) => {
                t.push(MessageInfo::new(Role::Assistant, *tokens));
            }
            Step::System(tokens) => {
                t.push(MessageInfo::new(Role::System, *tokens));
            }
            Step::Tools(call, results, stray, missing) => {
                let missing = *missing && t.format != Format::VercelUi;
                tools(
                    &mut t,
                    &mut key,
                    &mut orphans,
                    *call,
                    results,
                    *stray,
                    missing,
                )
            }
            // (A UI message holds a call with its result: it has no orphan.)
            Step::Orphan(..) if t.format == Format::VercelUi => {}
            Step::Orphan(tokens, true)
                if matches!(t.format, Format::Anthropic | Format::Gemini) =>
            {
                t.push(MessageInfo::new(Role::User, *tokens));
                t.link(LinkKind::Result, orphans);
                orphans += 1;
            }
            Step::Orphan(tokens, _) => orphan(&mut t, &mut orphans, *tokens),
            Step::Unanswered(..) if t.format == Format::VercelUi => {}
            Step::Unanswered(tokens, alone) => {
                let alone = *alone || t.format == Format::OpenAiResponses;
                if t.format == Format::OpenAiResponses {
                    t.push(MessageInfo {
                        role: Role::Other,
                        flags: chat_history_reducer::flags::ATTACH_NEXT,
                        tokens: 5.0,
                    });
                }
                let mut m = MessageInfo::new(Role::Assistant, *tokens);
                if alone {
                    m.flags |= chat_history_reducer::flags::CALLS_ONLY;
                }
                t.push(m);
                t.link(LinkKind::Call, orphans);
                orphans += 1;
            }
        }
    }
    t
}

#[derive(Clone, Debug)]
struct Case {
    transcript: Transcript,
    pairs: Vec<(&'static str, OptionValue)>,
}

fn case() -> impl Strategy<Value = Case> {
    let format = prop::sample::select(Format::ALL.to_vec());
    let system = prop::option::of(1.0..300.0f64);
    let summary = prop::option::weighted(0.2, 10.0..200.0f64);
    let steps = (
        prop::collection::vec(step(), 0..60),
        prop::option::weighted(0.35, any::<bool>()),
    )
        .prop_map(|(steps, orphans)| with_orphans(steps, orphans));
    let max_tokens = prop::option::of(50.0..6000.0f64);
    let target_messages = prop::option::of(0usize..30);
    let keep_last = 0usize..4;
    let strategy = prop_oneof![Just("truncate"), Just("priority")];
    let start_on = prop_oneof![Just("user"), Just("any")];
    let keep_system = any::<bool>();
    let threshold = 0usize..6;
    let pairs = 0usize..3;
    (
        (format, system, summary, steps),
        (max_tokens, target_messages, keep_last, strategy),
        (start_on, keep_system, threshold, pairs),
    )
        .prop_filter("a trigger", |(_, (m, t, _, _), _)| {
            m.is_some() || t.is_some()
        })
        .prop_map(
            |(
                (format, system, summary, steps),
                (max, target, keep_last, strategy),
                (start_on, keep_system, threshold, pairs),
            )| {
                let transcript = build(format, system, summary, &steps);
                let mut p: Vec<(&'static str, OptionValue)> = vec![
                    ("keepLast", OptionValue::Number(keep_last as f64)),
                    ("strategy", OptionValue::Text(strategy.into())),
                    ("startOn", OptionValue::Text(start_on.into())),
                    ("keepSystem", OptionValue::Bool(keep_system)),
                    ("thresholdMessages", OptionValue::Number(threshold as f64)),
                    ("keepRecentPairs", OptionValue::Number(pairs as f64)),
                ];
                if let Some(m) = max {
                    p.push(("maxTokens", OptionValue::Number(m.floor().max(1.0))));
                }
                if let Some(t) = target {
                    p.push(("targetMessages", OptionValue::Number(t as f64)));
                }
                Case {
                    transcript,
                    pairs: p,
                }
            },
        )
}

/// The orphans of `t`, as `(message, key)`, found as a provider finds them, by id, in
/// order (the generated calls have keys of their own): results whose call is not before
/// them, and calls that no result answers, but for the pending calls of the latest turn
/// (after the last user input or assistant answer).
fn orphan_links(t: &Transcript) -> HashSet<(u32, u32)> {
    let mut called = HashSet::new();
    let mut answered = HashSet::new();
    let mut orphans = HashSet::new();
    for l in &t.links {
        match l.kind {
            LinkKind::Call => {
                called.insert(l.key);
            }
            LinkKind::Result if !called.contains(&l.key) => {
                orphans.insert((l.message, l.key));
            }
            LinkKind::Result => {
                answered.insert(l.key);
            }
        }
    }
    // The latest step: the last user input or assistant message (in Responses, the run of
    // assistant and reasoning items it ends: the model's last answer).
    let mut turn = t
        .messages
        .iter()
        .rposition(|m| matches!(m.role, Role::User | Role::Assistant));
    while let Some(k) = turn.filter(|&k| {
        k > 0
            && t.format == Format::OpenAiResponses
            && t.messages[k].role == Role::Assistant
            && matches!(t.messages[k - 1].role, Role::Assistant | Role::Other)
    }) {
        turn = Some(k - 1);
    }
    for l in &t.links {
        if l.kind == LinkKind::Call
            && !answered.contains(&l.key)
            && turn.is_some_and(|turn| (l.message as usize) < turn)
        {
            orphans.insert((l.message, l.key));
        }
    }
    orphans
}

/// The messages of `t` that carry orphans, with whether they carry nothing else (a tool
/// message, a message of calls alone, and a reasoning item before one): those go; the
/// others stand without them (`Slot::Cleaned`).
fn orphans_of(t: &Transcript) -> HashMap<u32, bool> {
    let orphans = orphan_links(t);
    let mut of: HashMap<u32, bool> = orphans.iter().map(|&(i, _)| (i, true)).collect();
    for l in &t.links {
        let Some(only) = of.get_mut(&l.message) else {
            continue;
        };
        let m = &t.messages[l.message as usize];
        *only &= orphans.contains(&(l.message, l.key))
            && match l.kind {
                // (A tool message carries nothing but results; a call alone, nothing but calls.)
                LinkKind::Result => m.role == Role::Tool,
                LinkKind::Call => m.flags & chat_history_reducer::flags::CALLS_ONLY != 0,
            };
    }
    // A reasoning item goes when every call item after it (up to the next other message)
    // goes.
    let calls_only = |i: usize| {
        t.messages
            .get(i)
            .is_some_and(|m| m.flags & chat_history_reducer::flags::CALLS_ONLY != 0)
    };
    for (i, m) in t.messages.iter().enumerate() {
        if m.flags & chat_history_reducer::flags::ATTACH_NEXT != 0 && calls_only(i + 1) {
            let run = (i + 1..t.len()).take_while(|&k| calls_only(k));
            if run.clone().all(|k| of.get(&(k as u32)) == Some(&true)) {
                of.insert(i as u32, true);
            }
        }
    }
    of
}

/// The output of a reduction that writes nothing but a summary as a transcript of its own,
/// links renumbered: a kept message as it was, a cleaned one without its orphan results.
fn output_transcript(t: &Transcript, r: &Reduction) -> Transcript {
    let orphans = orphan_links(t);
    let mut out = Transcript::new(t.format);
    let mut new_index = vec![(u32::MAX, false); t.len()];
    for slot in &r.output {
        let (i, cleaned) = match *slot {
            Slot::Input(i) => (i, false),
            Slot::Cleaned(i) => (i, true),
            Slot::New(k) if r.trace.as_ref().is_some_and(|n| n.slot == k) => {
                // (The current turn's note: a digest of its tool steps, no call and no
                // user input; Gemini has it as a user turn, as the results it covers.)
                out.push(MessageInfo {
                    role: if t.format == Format::Gemini {
                        Role::User
                    } else {
                        Role::Assistant
                    },
                    flags: chat_history_reducer::flags::COMPRESSED,
                    tokens: r.trace.as_ref().map_or(0.0, |n| n.estimate),
                });
                continue;
            }
            Slot::New(_) => {
                // (A summary: it calls and answers nothing.)
                out.push(MessageInfo {
                    role: Role::User,
                    flags: chat_history_reducer::flags::SUMMARY,
                    tokens: 0.0,
                });
                continue;
            }
        };
        new_index[i as usize] = (out.push(t.messages[i as usize]), cleaned);
    }
    for l in &t.links {
        let (at, cleaned) = new_index[l.message as usize];
        if at != u32::MAX && !(cleaned && orphans.contains(&(l.message, l.key))) {
            let mut l = *l;
            l.message = at;
            out.links.push(l);
        }
    }
    out
}

/// SPEC §9.4: no output has a result without its call before it.
fn no_orphans(out: &Transcript) -> Result<(), TestCaseError> {
    let orphans = orphan_links(out);
    prop_assert!(orphans.is_empty(), "orphans in the output: {:?}", orphans);
    Ok(())
}

/// Gemini (SPEC §9.4): a function-call turn of `out` (the output of a reduction of `t`,
/// whose k-th message stands for input `origin[k]`, if any) follows a user or
/// function-response turn — when it did in `t`, orphans included (an input that breaks the
/// rule is left as it is), and but for a system message or a summary before it, which
/// stays (Gemini has neither in its contents), or no user input at all to open on.
fn calls_follow_user_turns(
    t: &Transcript,
    out: &Transcript,
    origin: &[Option<u32>],
) -> Result<(), TestCaseError> {
    if t.format != Format::Gemini {
        return Ok(());
    }
    let after_user = |m: &MessageInfo| matches!(m.role, Role::User | Role::Tool);
    // (A model turn whose calls were orphans counts as gone before a call turn after it.)
    let orphans = orphans_of(t);
    let lost =
        |i: usize| t.messages[i].role == Role::Assistant && orphans.contains_key(&(i as u32));
    let calls: HashSet<u32> = out
        .links
        .iter()
        .filter(|l| l.kind == LinkKind::Call)
        .map(|l| l.message)
        .collect();
    let any_user = out.messages.iter().any(|m| m.is_real_user());
    for (k, m) in out.messages.iter().enumerate() {
        let Some(i) = origin[k] else { continue };
        if !calls.contains(&(k as u32))
            || m.role != Role::Assistant
            || i == 0
            || !(after_user(&t.messages[i as usize - 1]) || lost(i as usize - 1))
        {
            continue;
        }
        let prev = k.checked_sub(1).map(|p| &out.messages[p]);
        prop_assert!(
            prev.map_or(!any_user, |p| after_user(p)
                || p.is_system()
                || p.is_summary()),
            "function call turn {} (input {}) after {:?}",
            k,
            i,
            prev
        );
    }
    Ok(())
}

/// Call message → result messages, matched the way providers match them (by id).
fn tool_pairs(t: &Transcript) -> Vec<(u32, u32)> {
    let mut calls = std::collections::HashMap::new();
    let mut pairs = Vec::new();
    for l in &t.links {
        match l.kind {
            LinkKind::Call => {
                calls.insert(l.key, l.message);
            }
            LinkKind::Result => {
                if let Some(&c) = calls.get(&l.key) {
                    pairs.push((c, l.message));
                }
            }
        }
    }
    pairs
}

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
    ) {
        let t = &case.transcript;
        let mut pairs = case.pairs.clone();
        pairs.retain(|(k, _)| *k != "strategy");
        pairs.push(("strategy", OptionValue::Text("progressive".into())));
        pairs.push(("largeMessageTokens", OptionValue::Number(large)));
        pairs.push(("minToolRun", OptionValue::Number(3.0)));
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
        prop_assert!(written >= rewritten);
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
            Action::Offload { .. } => preview,
            Action::CompressRun { messages } => preview.min(20.0 * messages.len() as f64),
            Action::SummarizeRounds { target_tokens, .. } => target_tokens.min(preview),
            Action::Rewrite { target_tokens, .. } => *target_tokens,
        };
        p.done(tokens);
        done.push((action, tokens));
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
                    Action::Offload { message } => {
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
                    Action::Finish => {}
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
                Action::Offload { message } | Action::Rewrite { message, .. } => Some(message),
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
