//! The random conversations and configs the property tests reduce.

use chat_history_reducer::{Format, LinkKind, MessageInfo, OptionValue, Role, Transcript};
use proptest::prelude::*;

/// One step of a generated conversation.
#[derive(Clone, Debug)]
pub(crate) enum Step {
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

pub(crate) fn step() -> impl Strategy<Value = Step> {
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
pub(crate) fn with_orphans(mut steps: Vec<Step>, orphans: Option<bool>) -> Vec<Step> {
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
pub(crate) const ORPHAN_KEYS: u32 = 5_000_000;

/// A message that carries only an orphan result.
pub(crate) fn orphan(t: &mut Transcript, orphans: &mut u32, tokens: f64) {
    t.push(MessageInfo::new(Role::Tool, tokens));
    t.link(LinkKind::Result, *orphans);
    *orphans += 1;
}

/// A tool call with parallel results, shaped as `t.format` shapes it; with an orphan result
/// (`stray`) among them: an orphan message between them, or in Anthropic and Gemini a block
/// of their message.
pub(crate) fn tools(
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
            // Call and result live in the one assistant message, which links both (as the
            // format's reader does).
            t.push(MessageInfo::new(
                Role::Assistant,
                call + results.iter().sum::<f64>(),
            ));
            for k in calls.clone() {
                t.link(LinkKind::Call, k);
                t.link(LinkKind::Result, k);
            }
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

pub(crate) fn build(
    format: Format,
    system: Option<f64>,
    summary: Option<f64>,
    steps: &[Step],
) -> Transcript {
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
pub(crate) struct Case {
    pub(crate) transcript: Transcript,
    pub(crate) pairs: Vec<(&'static str, OptionValue)>,
}

pub(crate) fn case() -> impl Strategy<Value = Case> {
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
