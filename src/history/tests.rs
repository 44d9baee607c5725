//! The decisions of a `ChatHistory`, as the boundary drives them: pushes, prepares and their
//! generations, usage, and the state read back.

use super::*;
use crate::strategies::{Fate, Reduction, Slot};

/// A reduction of `len` messages whose output is `output`.
fn reduction(len: usize, output: Vec<Slot>, before: f64, after: f64) -> Reduction {
    Reduction {
        reduced: true,
        fate: vec![Fate::Kept; len],
        output,
        tokens_before: before,
        tokens_after: after,
        over_budget: false,
        events: Vec::new(),
        trace: None,
    }
}

fn counts(h: &History) -> Vec<Option<f64>> {
    h.save((), (), (), ()).counts.unwrap()
}

#[test]
fn a_push_narrows_the_formats_and_adds_messages_without_counts() {
    let mut h = History::new(2, 0b1111);
    assert_eq!((h.len(), h.formats()), (2, 0b1111));
    h.push(3, 0b0110, Reply::None);
    assert_eq!((h.len(), h.formats()), (5, 0b0110));
    assert_eq!(counts(&h), vec![None; 5]);
    assert_eq!(h.token_counts(), None, "no count recorded: no tokenCounts");
}

#[test]
fn a_reduction_replaces_what_it_reduced_and_keeps_what_was_pushed_meanwhile() {
    let mut h = History::new(4, 1);
    let p = h.prepare();
    let input = [10.0, 20.0, 30.0, 40.0];
    h.record_input(&input, 100.0, 100.0); // counts on the 4 messages
    h.push(2, 1, Reply::None); // pushed while the summarizer ran
                               // A summary (New 0) for messages 0–1, message 2 as a copy, message 3 kept.
    let r = reduction(
        4,
        vec![Slot::New(0), Slot::Cleaned(2), Slot::Input(3)],
        100.4,
        60.0,
    );
    assert_eq!(h.prepared(p, 2, &r, 100.4), Some(4));
    assert_eq!(h.len(), 5);
    assert_eq!(counts(&h), vec![None, None, Some(40.0), None, None]);
    let stats = h.totals();
    assert_eq!(
        (stats.reductions, stats.summarizer_calls, stats.tokens_saved),
        (1, 2, 41.0)
    );
    // The next prompt is the whole working history; nothing waits for a reply.
    assert_eq!(h.prompt(), Some(5));
}

#[test]
fn a_stale_or_empty_reduction_changes_nothing_but_the_counters() {
    let mut h = History::new(3, 1);
    let (first, second) = (h.prepare(), h.prepare());
    let r = reduction(3, vec![Slot::Input(2)], 30.0, 10.0);
    assert_eq!(h.prepared(first, 1, &r, 30.0), Some(3));
    // The second was of the history before: it does not apply.
    assert_eq!(h.prepared(second, 1, &r, 30.0), None);
    assert_eq!(h.len(), 1);
    assert_eq!(h.totals().reductions, 1);
    assert_eq!(h.totals().summarizer_calls, 2);
    // Not reduced: nothing changes, and over budget is the last prepare's.
    let mut unchanged = Reduction::unchanged(&crate::Transcript::new(crate::Format::OpenAi));
    unchanged.over_budget = true;
    assert_eq!(h.prepared(h.prepare(), 0, &unchanged, 0.0), None);
    assert!(h.over_budget());
    h.prepare_failed(3);
    assert!(!h.over_budget(), "a failed prepare() met no target");
    assert_eq!(h.totals().summarizer_calls, 5);
    assert_eq!(h.len(), 1);
}

#[test]
fn input_tokens_are_spread_over_the_last_prompt_and_calibrate() {
    let mut h = History::new(3, 1);
    assert_eq!(h.prompt(), None, "no prompt before the first prepare()");
    let p = h.prepare();
    h.prepared(p, 0, &Reduction::unchanged(&transcript(3)), 0.0);
    assert_eq!(h.prompt(), Some(3));
    h.push(1, 1, Reply::None);
    h.record_input(&[10.0, 30.0, 60.0], 100.0, 150.0);
    assert_eq!(counts(&h), vec![Some(15.0), Some(45.0), Some(90.0), None]);
    assert_eq!(h.calibration(), Some(1.5));
    assert_eq!(h.token_counts().map(<[_]>::len), Some(4));
}

fn transcript(n: usize) -> crate::Transcript {
    let mut t = crate::Transcript::new(crate::Format::OpenAi);
    for _ in 0..n {
        t.push(crate::MessageInfo::new(crate::Role::User, 10.0));
    }
    t
}

#[test]
fn output_tokens_go_to_the_reply_now_or_when_it_is_pushed() {
    let mut h = History::new(1, 1);
    let p = h.prepare();
    h.prepared(p, 0, &Reduction::unchanged(&transcript(1)), 0.0);
    // The user typed meanwhile (message 1), then the reply came (message 2).
    h.push(1, 1, Reply::None);
    let from = h.reply_from().unwrap();
    h.record_output(500.0, from, Reply::None);
    assert!(h.awaits_reply());
    h.push(1, 1, Reply::At(0));
    assert!(!h.awaits_reply());
    assert_eq!(counts(&h), vec![None, None, Some(500.0)]);
    // Already pushed: counted at once.
    h.push(2, 1, Reply::None);
    h.record_output(40.0, 3, Reply::At(1));
    assert_eq!(counts(&h)[4], Some(40.0));
    // A reply that holds tool outputs takes none, and none waits.
    h.record_output(7.0, 3, Reply::Uncountable);
    assert!(!h.awaits_reply());
    // A count that waits is dropped by the next prepare().
    h.record_output(77.0, 5, Reply::None);
    let p = h.prepare();
    h.prepared(p, 0, &Reduction::unchanged(&transcript(5)), 0.0);
    assert!(!h.awaits_reply());
    h.push(1, 1, Reply::At(0));
    assert_eq!(counts(&h)[5], None);
}

#[test]
fn before_the_first_prepare_the_reply_is_the_next_one_pushed() {
    let mut h = History::new(1, 1);
    assert_eq!(h.reply_from(), None);
    h.record_output(9.0, 0, Reply::None);
    h.push(1, 1, Reply::At(0));
    assert_eq!(counts(&h), vec![None, Some(9.0)]);
}

#[test]
fn a_state_saves_and_restores_the_bookkeeping() {
    let mut h = History::new(2, 0b11);
    let p = h.prepare();
    h.prepared(p, 1, &reduction(2, vec![Slot::Input(1)], 10.5, 4.0), 10.5);
    h.record_input(&[5.0], 5.0, 6.0);
    h.record_output(3.0, 1, Reply::None);
    let state = h.save((), (), (), ());
    assert_eq!(state.counts, Some(vec![Some(6.0)]));
    assert_eq!(
        state.stats,
        SavedStats {
            reductions: Some(1.0),
            summarizer_calls: Some(1.0),
            tokens_saved: Some(7.0),
            over_budget: false,
            edits: Some(0.0),
            undone: Some(0.0),
        }
    );
    assert_eq!(
        (state.prompt_length, state.pending_output_tokens),
        (Some(1.0), Some(3.0))
    );
    let back = History::restore(&state, 1, 2, 0b11);
    assert_eq!(back.save((), (), (), ()), state);
    assert_eq!(back.formats(), 0b11);
    assert!(back.token_counts().is_some());
    // (The generation is the process's own: a restored history starts again.)
    assert_eq!(back.prompt(), Some(1));
}

/// A state as a JSON round trip may leave it, with `what` changed.
fn read(what: impl FnOnce(&mut State<(), ()>)) -> History {
    let mut state = History::new(2, 1).save((), (), (), ());
    what(&mut state);
    History::restore(&state, 2, 2, 1)
}

#[test]
fn a_state_read_back_keeps_only_what_a_history_writes() {
    // Counts out of bounds, or for messages it does not have, are none.
    let h = read(|s| s.counts = Some(vec![Some(-1.0), Some(f64::NAN), Some(4.0), Some(5.0)]));
    assert_eq!(counts(&h), vec![None, None]);
    assert_eq!(h.token_counts(), None);
    let h = read(|s| s.counts = Some(vec![Some(MAX_COUNT + 2.0), Some(MAX_COUNT)]));
    assert_eq!(counts(&h), vec![None, Some(MAX_COUNT)]);
    let h = read(|s| s.counts = None);
    assert_eq!(counts(&h), vec![None, None]);
    // Statistics: whole numbers ≥ 0, tokens saved rounded up.
    for n in [f64::NAN, -5.0, f64::NEG_INFINITY] {
        let h = read(|s| {
            s.stats = SavedStats {
                reductions: Some(n),
                summarizer_calls: Some(n),
                tokens_saved: Some(n),
                over_budget: false,
                edits: Some(n),
                undone: Some(n),
            }
        });
        assert_eq!(h.totals(), Stats::default(), "{n}");
    }
    let h = read(|s| {
        s.stats = SavedStats {
            reductions: Some(1e300),
            summarizer_calls: Some(2.7),
            tokens_saved: Some(12.5),
            over_budget: true,
            edits: None,
            undone: None,
        }
    });
    let t = h.totals();
    assert_eq!(
        (t.reductions, t.summarizer_calls, t.tokens_saved),
        (u32::MAX, 2, 13.0)
    );
    assert!(h.over_budget());
    assert_eq!(
        read(|s| s.stats.tokens_saved = Some(1e300))
            .totals()
            .tokens_saved,
        0.0
    );
    // A calibration only within [0.5, 2]; a pending count only within bounds.
    for (c, kept) in [
        (0.0, None),
        (2.5, None),
        (f64::INFINITY, None),
        (1.5, Some(1.5)),
        (0.5, Some(0.5)),
    ] {
        assert_eq!(read(|s| s.calibration = Some(c)).calibration(), kept, "{c}");
    }
    assert!(!read(|s| s.pending_output_tokens = Some(-3.0)).awaits_reply());
    assert!(read(|s| s.pending_output_tokens = Some(3.0)).awaits_reply());
    // A prompt length: a whole number (at most the working history, when used).
    assert_eq!(read(|s| s.prompt_length = Some(-4.0)).prompt(), Some(0));
    assert_eq!(read(|s| s.prompt_length = Some(9.5)).prompt(), Some(2));
    assert_eq!(read(|s| s.prompt_length = None).prompt(), None);
}

#[test]
fn only_a_state_to_json_wrote_is_taken() {
    use state::version_of;
    assert_eq!(version_of(true, Some(KIND), Some(2.0)), Ok(2));
    assert_eq!(version_of(true, Some(KIND), Some(1.0)), Ok(1));
    for (is_object, kind, version, says) in [
        (false, None, None, "state must be the object"),
        (
            true,
            Some("some-other-lib/Memory"),
            Some(2.0),
            "state.kind must be",
        ),
        (true, None, Some(2.0), "state.kind must be"),
        (true, Some(KIND), Some(3.0), "state.version must be 1 or 2"),
        (true, Some(KIND), None, "state.version"),
    ] {
        let e = version_of(is_object, kind, version).unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::InvalidConfig);
        assert_eq!(e.field.as_deref(), Some("state"));
        assert!(
            e.message.starts_with("ChatHistory.fromJSON: "),
            "{}",
            e.message
        );
        assert!(e.message.contains(says), "{}", e.message);
    }
    assert_eq!(VERSION, 2);
    assert_eq!(KIND, "chat-history-reducer/ChatHistory");
}

/// The covers of a history's working messages, as lists of original indices.
fn covered(h: &History) -> Vec<Vec<u32>> {
    h.covers()
        .iter()
        .map(|c| c.iter().flat_map(|r| r.clone()).collect())
        .collect()
}

/// Messages of the roles `roles` (system, user, assistant, tool: `s`, `u`, `a`, `t`).
fn roles(roles: &str) -> crate::Transcript {
    let mut t = crate::Transcript::new(crate::Format::OpenAi);
    for c in roles.chars() {
        let role = match c {
            's' => crate::Role::System,
            'u' => crate::Role::User,
            'a' => crate::Role::Assistant,
            _ => crate::Role::Tool,
        };
        t.push(crate::MessageInfo::new(role, 10.0));
    }
    t
}

/// `h.edit` of `removed`, its originals of the roles `original` (as [`roles`]), its working
/// messages read as such: one of `original` as that one, one a reduction wrote as a summary.
fn edit_with(
    h: &mut History,
    removed: std::ops::Range<usize>,
    original: &str,
    config: &crate::Config,
) -> Edit {
    let original = roles(original);
    assert_eq!(original.len(), h.originals());
    let mut working = crate::Transcript::new(crate::Format::OpenAi);
    for (c, &own) in h.covers.iter().zip(&h.own) {
        let at = c.first().map(|r| r.start as usize);
        working.push(match at.and_then(|j| original.messages.get(j)) {
            Some(&m) if own => m,
            _ => crate::MessageInfo {
                role: crate::Role::User,
                flags: crate::flags::SUMMARY,
                tokens: 10.0,
            },
        });
    }
    h.edit(removed, &original, &working, config)
}

fn edit(h: &mut History, removed: std::ops::Range<usize>, original: &str) -> Edit {
    edit_with(h, removed, original, &crate::Config::default())
}

/// A history of 6 originals (0 system, 1–4 older turns, 5 the latest) whose messages 1–3
/// a summary replaced, with message 4 dropped, a count on 5.
fn summarized() -> History {
    let mut h = History::new(6, 1);
    let p = h.prepare();
    let mut r = reduction(
        6,
        vec![Slot::Input(0), Slot::New(0), Slot::Input(5)],
        100.0,
        40.0,
    );
    r.fate = vec![
        Fate::Kept,
        Fate::Summarized,
        Fate::Summarized,
        Fate::Summarized,
        Fate::Dropped,
        Fate::Kept,
    ];
    h.prepared(p, 1, &r, 100.0);
    h.record_input(&[1.0, 2.0, 3.0], 6.0, 6.0);
    h
}

#[test]
fn a_written_message_covers_what_its_reduction_removed_or_rewrote() {
    let h = summarized();
    // (Message 4, dropped without a trace, is covered by none.)
    assert_eq!(covered(&h), vec![vec![0], vec![1, 2, 3], vec![5]]);
    let mut h = h;
    h.push(2, 1, Reply::None);
    assert_eq!(h.originals(), 8);
    assert_eq!(covered(&h)[3..], [vec![6], vec![7]]);
}

#[test]
fn an_edit_after_what_a_summary_covers_keeps_it() {
    let mut h = summarized();
    h.push(2, 1, Reply::None); // originals 6, 7
    let p = h.prepare();
    let e = edit(&mut h, 6..8, "suauauua"); // rewind(6)
    assert_eq!(
        e,
        Edit {
            entries: vec![Entry::Kept(0), Entry::Kept(1), Entry::Kept(2)],
            removed: 2,
            undone: 0,
            restored: 0,
        }
    );
    assert_eq!(covered(&h), vec![vec![0], vec![1, 2, 3], vec![5]]);
    // The counts stay with their messages; the prompt is no longer this history's.
    assert_eq!(counts(&h), vec![Some(1.0), Some(2.0), Some(3.0)]);
    assert_eq!(h.prompt(), None);
    // A prepare() started before the edit does not apply.
    let r = reduction(5, vec![Slot::Input(4)], 10.0, 1.0);
    assert_eq!(h.prepared(p, 0, &r, 10.0), None);
    assert_eq!(h.len(), 3);
    assert_eq!((h.totals().edits, h.totals().undone), (1, 0));
}

#[test]
fn an_edit_of_a_covered_message_undoes_the_summary_and_brings_back_the_rest() {
    let mut h = summarized();
    let e = edit(&mut h, 2..3, "suauau"); // remove(2)
    assert_eq!(
        e.entries,
        vec![
            Entry::Kept(0),
            Entry::Restored(1),
            Entry::Restored(3),
            Entry::Restored(4),
            Entry::Kept(2)
        ]
    );
    assert_eq!((e.removed, e.undone, e.restored), (1, 1, 3));
    // Renumbered as `original` is now: 0, 1, 2 (was 3), 3 (was 4), 4 (was 5).
    assert_eq!(
        covered(&h),
        vec![vec![0], vec![1], vec![2], vec![3], vec![4]]
    );
    assert_eq!(counts(&h), vec![Some(1.0), None, None, None, Some(3.0)]);
    assert_eq!(h.originals(), 5);
    assert_eq!((h.totals().edits, h.totals().undone), (1, 1));
}

#[test]
fn a_rewind_into_a_summary_and_a_clear_leave_only_what_remains() {
    let mut h = summarized();
    let e = edit(&mut h, 3..6, "suauau"); // rewind(3)
    assert_eq!(
        e.entries,
        vec![Entry::Kept(0), Entry::Restored(1), Entry::Restored(2)]
    );
    assert_eq!(covered(&h), vec![vec![0], vec![1], vec![2]]);
    let e = edit(&mut h, 0..3, "sua"); // clear()
    assert_eq!(
        (e.entries.len(), e.removed, h.len(), h.originals()),
        (0, 3, 0, 0)
    );
    h.push(1, 1, Reply::None);
    assert_eq!(covered(&h), vec![vec![0]]);
}

#[test]
fn covers_survive_a_state_and_a_state_without_them_undoes_on_any_edit() {
    let h = summarized();
    let state = h.save((), (), (), ());
    assert_eq!(
        state.covers,
        Some(vec![vec![0.0], vec![1.0, 4.0], vec![5.0]])
    );
    let back = History::restore(&state, 3, 6, 1);
    assert_eq!(covered(&back), covered(&h));
    // Covers that are not over `original` (or none): every message covers all of it.
    for bad in [
        None,
        Some(vec![vec![0.0, 1.0]; 2]),
        Some(vec![vec![0.0, 7.0]; 3]),
    ] {
        let mut s = state.clone();
        s.covers = bad;
        let mut back = History::restore(&s, 3, 6, 1);
        let e = edit(&mut back, 5..6, "suauau");
        assert_eq!(
            e.entries,
            (0..5).map(Entry::Restored).collect::<Vec<_>>(),
            "{:?}",
            s.covers
        );
    }
}

#[test]
fn the_latest_user_input_that_remains_is_in_the_working_history_as_itself() {
    // Originals 1–4 under one summary, 4 dropped; rewinding 5 (the latest input) makes 3
    // the latest: the summary that covers it is undone, and a dropped latest comes back.
    let mut h = summarized();
    let e = edit(&mut h, 5..6, "suauau");
    assert_eq!(
        e.entries,
        vec![
            Entry::Kept(0),
            Entry::Restored(1),
            Entry::Restored(2),
            Entry::Restored(3),
            Entry::Restored(4)
        ]
    );
    let mut h = summarized();
    h.push(1, 1, Reply::None); // original 6
    let e = edit(&mut h, 5..6, "suauuua");
    // (4, dropped, comes back; the summary does not cover it and stays.)
    assert_eq!(
        e.entries,
        vec![
            Entry::Kept(0),
            Entry::Kept(1),
            Entry::Restored(4),
            Entry::Kept(3)
        ]
    );
    assert_eq!(e.undone, 0);
    // A latest input the working history holds as itself changes nothing.
    let mut h = summarized();
    h.push(1, 1, Reply::None);
    let e = edit(&mut h, 6..7, "suauaua");
    assert_eq!(
        e.entries,
        vec![Entry::Kept(0), Entry::Kept(1), Entry::Kept(2)]
    );
}

#[test]
fn a_summary_of_one_message_is_not_that_message() {
    // A summary (New 0) of message 0 alone, message 1 kept; rewinding 1 makes 0 the latest
    // input: the summary is undone, 0 comes back as itself.
    let mut h = History::new(2, 1);
    let p = h.prepare();
    let mut r = reduction(2, vec![Slot::New(0), Slot::Input(1)], 10.0, 5.0);
    r.fate[0] = Fate::Summarized;
    h.prepared(p, 1, &r, 10.0);
    assert_eq!(covered(&h), vec![vec![0], vec![1]]);
    let e = edit(&mut h, 1..2, "uu");
    assert_eq!(e.entries, vec![Entry::Restored(0)]);
    assert_eq!(e.undone, 1);
    // Written and own messages survive a state apart.
    let mut h = History::new(2, 1);
    h.prepared(h.prepare(), 1, &r, 10.0);
    let mut back = History::restore(&h.save((), (), (), ()), 2, 2, 1);
    assert_eq!(
        edit(&mut back, 1..2, "uu").entries,
        vec![Entry::Restored(0)]
    );
}

#[test]
fn what_a_reduction_dropped_comes_back_unless_only_the_tail_is_cut() {
    // Originals 0–3 dropped by a truncation, 4–6 kept.
    let truncated = || {
        let mut h = History::new(7, 1);
        let p = h.prepare();
        let mut r = reduction(7, (4..7).map(Slot::Input).collect(), 70.0, 30.0);
        r.fate[..4].fill(Fate::Dropped);
        h.prepared(p, 0, &r, 70.0);
        h
    };
    // Regenerate: the tail goes, the drops stay dropped.
    let mut h = truncated();
    assert_eq!(
        edit(&mut h, 6..7, "uauauau").entries,
        vec![Entry::Kept(0), Entry::Kept(1)]
    );
    // A removal inside: the drops come back (the history may have started on message 4).
    let mut h = truncated();
    let e = edit(&mut h, 4..5, "uauauau");
    assert_eq!(
        e.entries,
        vec![
            Entry::Restored(0),
            Entry::Restored(1),
            Entry::Restored(2),
            Entry::Restored(3),
            Entry::Kept(1),
            Entry::Kept(2)
        ]
    );
    assert_eq!((e.undone, e.restored), (0, 4));
}

#[test]
fn a_removal_of_the_input_after_a_kept_summary_does_not_leave_an_answer_after_it() {
    // Originals 0 system, 1–4 two turns under a summary, 5 user, 6 assistant, 7 user,
    // 8 assistant; remove(5) would leave the summary followed by the answer 6 (SPEC §9.5).
    let mut h = History::new(9, 1);
    let p = h.prepare();
    let mut output = vec![Slot::Input(0), Slot::New(0)];
    output.extend((5..9).map(Slot::Input));
    let mut r = reduction(9, output, 90.0, 50.0);
    r.fate[1..5].fill(Fate::Summarized);
    h.prepared(p, 1, &r, 90.0);
    let e = edit(&mut h, 5..6, "suauauaua");
    assert_eq!(
        e.entries,
        vec![
            Entry::Kept(0),
            Entry::Restored(1),
            Entry::Restored(2),
            Entry::Restored(3),
            Entry::Restored(4),
            Entry::Kept(3),
            Entry::Kept(4),
            Entry::Kept(5)
        ]
    );
    assert_eq!((e.undone, e.restored), (1, 4));
}

#[test]
fn only_the_summary_that_the_removed_input_followed_is_undone_and_only_if_user_first() {
    // Originals as above; a first summary of 1–2, then a layered one of 3–4 after it.
    let layered = || {
        let mut h = History::new(9, 1);
        let p = h.prepare();
        let mut output = vec![Slot::Input(0), Slot::New(0)];
        output.extend((3..9).map(Slot::Input));
        let mut r = reduction(9, output, 90.0, 70.0);
        r.fate[1..3].fill(Fate::Summarized);
        h.prepared(p, 1, &r, 90.0);
        let p = h.prepare();
        let mut output = vec![Slot::Input(0), Slot::Input(1), Slot::New(0)];
        output.extend((4..8).map(Slot::Input));
        let mut r = reduction(8, output, 70.0, 50.0);
        r.fate[2..4].fill(Fate::Summarized);
        h.prepared(p, 1, &r, 70.0);
        assert_eq!(covered(&h)[..3], [vec![0], vec![1, 2], vec![3, 4]]);
        h
    };
    let mut h = layered();
    let e = edit(&mut h, 5..6, "suauauaua");
    assert_eq!(
        e.entries,
        vec![
            Entry::Kept(0),
            Entry::Kept(1),
            Entry::Restored(3),
            Entry::Restored(4),
            Entry::Kept(4),
            Entry::Kept(5),
            Entry::Kept(6)
        ]
    );
    assert_eq!((e.undone, e.restored), (1, 2));
    // With `startOn: "any"` the history may open on an answer: both summaries stay.
    let mut h = layered();
    let any = crate::Config {
        start_on: crate::config::StartOn::Any,
        ..crate::Config::default()
    };
    let e = edit_with(&mut h, 5..6, "suauauaua", &any);
    assert_eq!(e.undone, 0);
    assert_eq!(e.entries.len(), 6);
    // A history that opened on an answer after its summary before the edit is left so.
    let mut h = layered();
    let e = edit(&mut h, 5..6, "suauaaaua");
    assert_eq!((e.undone, e.entries.len()), (0, 6));
}

#[test]
fn a_prepare_that_finds_nothing_to_do_makes_the_history_the_prompt_and_what_it_read_stays_current()
{
    let mut h = History::new(3, 1);
    let p = h.prepare();
    h.record_output(7.0, 3, Reply::None); // waits for a reply that never comes
    h.push(1, 1, Reply::None); // pushed while it ran (the reply is searched for only in push)
    assert!(
        h.current(p),
        "a push appends: the 3 messages read are still the first 3"
    );
    h.unchanged();
    assert_eq!(h.prompt(), Some(4));
    assert!(
        !h.awaits_reply(),
        "the count that waited is not this prompt's"
    );
    assert!(!h.over_budget());
    // An edit, or an applied reduction, and they are not.
    let p = h.prepare();
    edit(&mut h, 1..4, "suau");
    assert!(!h.current(p));
    let p = h.prepare();
    let r = reduction(1, vec![Slot::New(0)], 10.0, 5.0);
    assert_eq!(h.prepared(p, 0, &r, 10.0), Some(1));
    assert!(!h.current(p));
}
