//! `summarize` (SPEC §5, §6): the oldest removable groups are replaced by one summary
//! message, placed right after the leading system messages (and, in layered mode, after the
//! earlier summaries). The newest messages stay verbatim within the targets left after the
//! summary's own budget (`summaryMaxTokens`).
//!
//! Summarizing is asynchronous and happens at the boundary, so this is two steps: [`plan`]
//! says what to summarise; [`apply`] builds the reduction once the summary exists.

use super::{
    check_budget, choose_drops, prefix_end, settle, trace_current_turn, CompressionEvent, Fate,
    Reduction, Slot, Trace,
};
use crate::budget::{counts_as_message, Targets};
use crate::config::{Config, SummaryMode};
use crate::error::ReduceError;
use crate::protect::Protection;
use crate::structure::Structure;
use crate::transcript::Transcript;

/// What the summarizer is asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryPlan {
    /// The messages to summarise, in order (input indices); one with orphans beside other
    /// content ([`Structure::STRAY`]) goes to the summarizer without them, as it would be
    /// output.
    pub messages: Vec<u32>,
    /// Single mode: the earlier summaries the new one replaces.
    pub replaces: Vec<u32>,
    /// The most tokens the summary message may have: `summaryMaxTokens`, and no more than
    /// the token target leaves beside the verbatim tail; without either, the tokens of what
    /// it replaces (a longer summary would grow the history). A longer summary is a failed
    /// one (`SUMMARY_TOO_LARGE`).
    pub limit: f64,
    /// What the summary message should aim for: the limit, or, when no option bounds it in
    /// tokens, a quarter of what it replaces.
    pub target_tokens: f64,
    /// The limit when what must stay leaves no room for a summary beside it: the target is
    /// missed whatever happens, and a summary still saves tokens (`overBudget`, SPEC §9.7).
    /// Below 0 when a summary of `summaryMaxTokens` would save none.
    pub over_budget_limit: f64,
    /// What becomes of each input message: kept (or, with orphans beside other content,
    /// cleaned: `strategies::keep`), summarized, or (an orphan) dropped.
    fate: Vec<Fate>,
    /// Where the summary goes: before the kept input message at this output position.
    position: usize,
    /// [`Structure::orphan`] (see [`Reduction::without_orphans`]).
    orphan: Vec<u8>,
    /// The current turn's oldest tool steps that a note stands for, and what it was
    /// counted at ([`super::trace_current_turn`]), when the tail needs them gone.
    trace: Option<(Vec<u32>, f64)>,
}

/// What to summarise, or `None` when there is nothing the summary could replace.
pub fn plan(
    t: &Transcript,
    s: &Structure,
    protection: &[Protection],
    config: &Config,
) -> Option<SummaryPlan> {
    let mut protection = protection.to_vec();
    let mut replaces = Vec::new();
    if config.summary_mode == SummaryMode::Single {
        for (i, m) in t.messages.iter().enumerate() {
            if m.is_summary() {
                replaces.push(i as u32);
            }
        }
    }
    for &i in &replaces {
        let g = s.group_of[i as usize] as usize;
        if protection[g] == Protection::Summary {
            protection[g] = Protection::None;
        }
    }
    // The summaries it replaces leave with the summarised groups: their tokens are no part
    // of the verbatim tail's budget.
    let budget = config.summary_max_tokens.unwrap_or(0.0)
        - replaces
            .iter()
            .map(|&i| t.messages[i as usize].tokens)
            .sum::<f64>();
    let targets = Targets {
        tokens: config.target_tokens.map(|t| (t - budget).max(0.0)),
        messages: config.target_messages,
    };
    // Earlier summaries are not summarised again: they are replaced (single) or kept.
    // (A prefix: up to the first conversation group that stays, SPEC §9.12.)
    let end = prefix_end(t, s, &protection);
    let order = (0..end).filter(|&g| s.groups[g].range().all(|i| !t.messages[i].is_summary()));
    let mut drops = choose_drops(t, s, &protection, config, &targets, order.clone());
    let replaced: f64 = replaces
        .iter()
        .map(|&i| t.messages[i as usize].tokens)
        .sum();
    if !drops.removed.contains(&true)
        && !replaces.is_empty()
        && !Targets::of(config).met(drops.tokens, drops.messages)
    {
        // The tail fits beside a summary, but the earlier one is too long: it is replaced
        // with the oldest group that may go (it would otherwise stay, and the history be
        // truncated around it).
        if let Some(g) = order.into_iter().find(|&g| !protection[g].is_protected()) {
            drops.remove(t, s, g);
            settle(t, s, &protection, config, &mut drops);
        }
    }
    trace_current_turn(t, s, &protection, &targets, &mut drops);
    let mut fate = vec![Fate::Kept; t.len()];
    let mut messages = Vec::new();
    let mut noted = Vec::new();
    for (g, group) in s.groups.iter().enumerate() {
        for i in group.range() {
            // An orphan goes, in a summarised group or a kept one: the summarizer is not
            // asked about it (an app may send the request's messages to a model, which
            // refuses a tool result without its call).
            fate[i] = match s.orphan[i] {
                Structure::ORPHAN => Fate::Dropped,
                _ if drops.removed[g] => {
                    messages.push(i as u32);
                    Fate::Summarized
                }
                _ if drops.traced[g] => {
                    noted.push(i as u32);
                    Fate::Rewritten
                }
                Structure::STRAY => Fate::Rewritten,
                _ => Fate::Kept,
            };
        }
    }
    if messages.is_empty() {
        return None;
    }
    for &i in &replaces {
        fate[i as usize] = Fate::Summarized;
    }
    // After the leading system messages, and after the earlier summaries kept there.
    let position = t
        .messages
        .iter()
        .enumerate()
        .filter(|&(i, _)| matches!(fate[i], Fate::Kept | Fate::Rewritten))
        .take_while(|(_, m)| m.is_system() || m.is_summary())
        .count();
    let covered = replaced
        + messages
            .iter()
            .map(|&i| t.messages[i as usize].tokens)
            .sum::<f64>();
    let (limit, target_tokens) = match (config.target_tokens, config.summary_max_tokens) {
        (Some(target), max) => {
            // What the target leaves beside the tail (the summaries replaced are no part of it).
            let room = target - (drops.tokens - replaced);
            let limit = max.map_or(room, |max| max.min(room));
            (limit, limit)
        }
        (None, Some(max)) => (max, max),
        (None, None) => (covered, (covered * 0.25).ceil()),
    };
    let over_budget_limit = match config.summary_max_tokens {
        Some(max) if max < covered => max,
        _ => -1.0,
    };
    Some(SummaryPlan {
        messages,
        replaces,
        limit,
        target_tokens,
        over_budget_limit,
        fate,
        position,
        orphan: s.orphan.clone(),
        trace: (!noted.is_empty()).then_some((noted, drops.note_tokens)),
    })
}

/// The reduction once the summary exists, with its token count.
pub fn apply(
    t: &Transcript,
    plan: &SummaryPlan,
    summary_tokens: f64,
    config: &Config,
) -> Result<Reduction, ReduceError> {
    let before = t.total_tokens();
    let mut output = Vec::with_capacity(t.len() + 1);
    let mut tokens = summary_tokens;
    let mut messages = 0;
    let (noted, note_tokens) = plan
        .trace
        .as_ref()
        .map_or((&[][..], 0.0), |(m, tokens)| (&m[..], *tokens));
    for (i, m) in t.messages.iter().enumerate() {
        let slot = match plan.fate[i] {
            Fate::Kept => Slot::Input(i as u32),
            // (The note stands where the first step it names stood.)
            Fate::Rewritten if noted.first() == Some(&(i as u32)) => {
                output.push(Slot::New(1));
                tokens += note_tokens;
                messages += 1;
                continue;
            }
            Fate::Rewritten if noted.contains(&(i as u32)) => continue,
            Fate::Rewritten => Slot::Cleaned(i as u32),
            Fate::Dropped | Fate::Summarized => continue,
        };
        if output.len() == plan.position {
            output.push(Slot::New(0));
        }
        output.push(slot);
        tokens += m.tokens;
        messages += usize::from(counts_as_message(m));
    }
    if !output.contains(&Slot::New(0)) {
        output.insert(plan.position.min(output.len()), Slot::New(0));
    }
    let over_budget = check_budget(config, &Targets::of(config), tokens, messages)?;
    let count = plan.messages.len() + plan.replaces.len();
    // (The summary's step, then the note's, each from where the one before ended.)
    let noted_tokens: f64 = noted.iter().map(|&i| t.messages[i as usize].tokens).sum();
    let summarized = tokens - note_tokens + noted_tokens;
    let mut events = vec![CompressionEvent {
        kind: "summarize",
        messages: count,
        tokens_before: before,
        tokens_after: summarized,
    }];
    let trace = plan.trace.as_ref().map(|(messages, estimate)| {
        events.push(CompressionEvent {
            kind: "currentTurn",
            messages: messages.len(),
            tokens_before: summarized,
            tokens_after: tokens,
        });
        Trace {
            slot: 1,
            messages: messages.clone(),
            estimate: *estimate,
        }
    });
    Ok(Reduction {
        reduced: true,
        fate: plan.fate.clone(),
        output,
        tokens_before: before,
        tokens_after: tokens,
        over_budget,
        events,
        trace,
    }
    .without_orphans(t, &plan.orphan))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OptionValue::{Number, Text};
    use crate::protect::protect;
    use crate::transcript::{flags, MessageInfo, Role};
    use crate::Format;

    fn chat(turns: usize, summary: bool) -> Transcript {
        let mut t = Transcript::new(Format::OpenAi);
        t.push(MessageInfo::new(Role::System, 10.0));
        if summary {
            let mut m = MessageInfo::new(Role::User, 30.0);
            m.flags = flags::SUMMARY;
            t.push(m);
        }
        for _ in 0..turns {
            t.push(MessageInfo::new(Role::User, 20.0));
            t.push(MessageInfo::new(Role::Assistant, 40.0));
        }
        t
    }

    fn planned(t: &Transcript, config: &Config) -> Option<SummaryPlan> {
        let s = Structure::of(t);
        let p = protect(t, &s, config);
        plan(t, &s, &p, config)
    }

    #[test]
    fn keeps_the_newest_messages_and_places_the_summary_after_the_system_prompt() {
        let t = chat(20, false);
        let c = Config::from_pairs(&[("targetMessages", Number(6.0))]).unwrap();
        let p = planned(&t, &c).unwrap();
        assert_eq!(p.messages, (1..35).collect::<Vec<u32>>());
        let r = apply(&t, &p, 25.0, &c).unwrap();
        assert_eq!(r.output[0], Slot::Input(0));
        assert_eq!(r.output[1], Slot::New(0));
        assert_eq!(r.output[2], Slot::Input(35));
        assert_eq!(r.output.len(), 8);
        assert_eq!(r.indices(Fate::Summarized).len(), 34);
        assert_eq!(r.tokens_after, 10.0 + 25.0 + 3.0 * 60.0);
    }

    #[test]
    fn single_mode_replaces_the_earlier_summary_and_layered_keeps_it() {
        let t = chat(20, true);
        let single = Config::from_pairs(&[("targetMessages", Number(6.0))]).unwrap();
        let p = planned(&t, &single).unwrap();
        assert_eq!(p.replaces, vec![1]);
        let r = apply(&t, &p, 25.0, &single).unwrap();
        assert_eq!(r.fate[1], Fate::Summarized);
        assert_eq!(r.output[1], Slot::New(0));

        let layered = Config::from_pairs(&[
            ("targetMessages", Number(6.0)),
            ("summaryMode", Text("layered".into())),
        ])
        .unwrap();
        let p = planned(&t, &layered).unwrap();
        assert!(p.replaces.is_empty());
        let r = apply(&t, &p, 25.0, &layered).unwrap();
        assert_eq!(
            &r.output[..3],
            &[Slot::Input(0), Slot::Input(1), Slot::New(0)]
        );
    }

    #[test]
    fn the_token_target_leaves_room_for_the_summary() {
        let t = chat(20, false);
        let c = Config::from_pairs(&[("maxTokens", Number(1000.0))]).unwrap();
        // target 800, summary budget 200: the verbatim tail fits in 600.
        let p = planned(&t, &c).unwrap();
        assert_eq!(p.target_tokens, 200.0);
        let r = apply(&t, &p, 200.0, &c).unwrap();
        assert!(r.tokens_after <= 800.0, "{}", r.tokens_after);
        assert!(!r.over_budget);
    }

    #[test]
    fn with_only_a_message_target_the_summary_is_judged_by_summary_max_tokens() {
        // By the tokens of what it replaces (120 here), a summary of a few short messages
        // was refused, and they went with no summary at all.
        let t = chat(3, false);
        let c = Config::from_pairs(&[
            ("strategy", Text("summarize".into())),
            ("targetMessages", Number(2.0)),
            ("thresholdMessages", Number(0.0)),
        ])
        .unwrap();
        let p = planned(&t, &c).unwrap();
        assert_eq!(p.messages, vec![1, 2, 3, 4]);
        assert_eq!(p.limit, crate::config::DEFAULT_SUMMARY_MAX_TOKENS);
        assert_eq!(p.target_tokens, p.limit);
    }

    #[test]
    fn a_replaced_summary_leaves_the_tail_its_room() {
        // Single mode: the earlier summary goes, so the same tail stays as without it.
        let c = Config::from_pairs(&[("maxTokens", Number(1000.0))]).unwrap();
        let without = planned(&chat(20, false), &c).unwrap();
        let mut t = chat(20, true);
        t.messages[1].tokens = 100.0;
        let with = planned(&t, &c).unwrap();
        assert_eq!(with.messages.len(), without.messages.len());
        let r = apply(&t, &with, 200.0, &c).unwrap();
        assert!(r.tokens_after <= 800.0, "{}", r.tokens_after);
    }

    #[test]
    fn nothing_to_summarise_is_no_plan() {
        let t = chat(1, false);
        let c = Config::from_pairs(&[("targetMessages", Number(6.0))]).unwrap();
        assert!(planned(&t, &c).is_none());
    }
}
