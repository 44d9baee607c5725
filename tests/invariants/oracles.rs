//! What the property tests check outputs against: orphans and tool pairs found as a
//! provider finds them, and the output as a transcript.

use chat_history_reducer::{Format, LinkKind, MessageInfo, Reduction, Role, Slot, Transcript};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

/// The orphans of `t`, as `(message, key)`, found as a provider finds them, by id, in
/// order (the generated calls have keys of their own): results whose call is not before
/// them, and calls that no result answers, but for the pending calls of the latest turn
/// (after the last user input or assistant answer).
pub(crate) fn orphan_links(t: &Transcript) -> HashSet<(u32, u32)> {
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
pub(crate) fn orphans_of(t: &Transcript) -> HashMap<u32, bool> {
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
pub(crate) fn output_transcript(t: &Transcript, r: &Reduction) -> Transcript {
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
pub(crate) fn no_orphans(out: &Transcript) -> Result<(), TestCaseError> {
    let orphans = orphan_links(out);
    prop_assert!(orphans.is_empty(), "orphans in the output: {:?}", orphans);
    Ok(())
}

/// Gemini (SPEC §9.4): a function-call turn of `out` (the output of a reduction of `t`,
/// whose k-th message stands for input `origin[k]`, if any) follows a user or
/// function-response turn — when it did in `t`, orphans included (an input that breaks the
/// rule is left as it is), and but for a system message or a summary before it, which
/// stays (Gemini has neither in its contents), or no user input at all to open on.
pub(crate) fn calls_follow_user_turns(
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
pub(crate) fn tool_pairs(t: &Transcript) -> Vec<(u32, u32)> {
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
