//! Editing a history by index into `original` (SPEC §7: `rewind`, `remove`, `clear`): which
//! working messages stay and which are undone, their originals coming back.
//!
//! Each working message covers the originals it stands for ([`Cover`]): a message of
//! `original` itself, that one; a message a reduction wrote (a summary, a preview, a digest,
//! a copy without orphans), every original that reduction removed or rewrote — more than it
//! may need, so that nothing it could depend on is ever gone while it stays.

use std::ops::Range;

use super::History;
use crate::config::Config;
use crate::error::{cat, show, ErrorCode, ReduceError};
use crate::protect::starts_on_user_required;
use crate::transcript::Transcript;

/// The originals a working message stands for: sorted, disjoint, non-adjacent ranges of
/// indices into `original`.
pub type Cover = Vec<Range<u32>>;

/// One message of the working history after an edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// The working message that was at this index.
    Kept(u32),
    /// The message of `original` at this index (as numbered before the edit), back in
    /// place of what covered it.
    Restored(u32),
}

/// What an edit does to the working history: its new messages, in order, and how many
/// originals went, messages a reduction wrote were undone (covering originals that remain),
/// and originals came back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub entries: Vec<Entry>,
    pub removed: usize,
    pub undone: usize,
    pub restored: usize,
}

/// The cover of the originals `range`.
pub fn span(range: Range<u32>) -> Cover {
    if range.start < range.end {
        vec![range]
    } else {
        Cover::new()
    }
}

/// The union of covers (normalized).
pub fn union<'a>(covers: impl IntoIterator<Item = &'a Cover>) -> Cover {
    // (A plain loop: the generic part of each caller's copy stays small.)
    let mut ranges = Cover::new();
    for cover in covers {
        ranges.extend_from_slice(cover);
    }
    normalize(&mut ranges);
    ranges
}

fn normalize(ranges: &mut Cover) {
    ranges.retain(|r| r.start < r.end);
    // An insertion sort: covers have a few ranges, and the slice sort would bring its own
    // code into the module.
    for i in 1..ranges.len() {
        let mut j = i;
        while j > 0 && ranges[j - 1].start > ranges[j].start {
            ranges.swap(j - 1, j);
            j -= 1;
        }
    }
    let mut out: Cover = Vec::with_capacity(ranges.len());
    for r in ranges.drain(..) {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    *ranges = out;
}

fn intersects(cover: &Cover, removed: &Range<u32>) -> bool {
    cover
        .iter()
        .any(|r| r.start < removed.end && removed.start < r.end)
}

/// `cover` numbered as `original` is once `removed` is gone.
fn remap(cover: &Cover, removed: &Range<u32>) -> Cover {
    let n = removed.end - removed.start;
    let mut out = Cover::new();
    for r in cover {
        if r.start < removed.start {
            out.push(r.start..r.end.min(removed.start));
        }
        if r.end > removed.end {
            out.push(r.start.max(removed.end) - n..r.end - n);
        }
    }
    normalize(&mut out);
    out
}

/// A cover read back from a state (`[j]`: the original `j` itself, then `true`; else
/// flattened `[start, end, …]`), if it is one over `originals` messages.
pub fn read_cover(flat: &[f64], originals: usize) -> Option<(Cover, bool)> {
    if let [j] = *flat {
        let ok = j >= 0.0 && j.fract() == 0.0 && j < originals as f64;
        return ok.then(|| (span(j as u32..j as u32 + 1), true));
    }
    if flat.len() % 2 != 0 {
        return None;
    }
    let mut cover = Cover::new();
    let mut end = 0.0;
    for pair in flat.chunks(2) {
        let (a, b) = (pair[0], pair[1]);
        let whole = |n: f64| n.fract() == 0.0 && n <= originals as f64;
        if !(whole(a) && whole(b) && a >= end && a < b) {
            return None;
        }
        cover.push(a as u32..b as u32);
        end = b;
    }
    normalize(&mut cover);
    Some((cover, false))
}

/// A cover written out for a state.
pub fn flat(cover: &Cover) -> Vec<f64> {
    let mut out = Vec::with_capacity(2 * cover.len());
    for r in cover {
        out.push(r.start as f64);
        out.push(r.end as f64);
    }
    out
}

impl History {
    /// How many messages `original` holds.
    pub fn originals(&self) -> usize {
        self.originals
    }

    /// The originals each working message covers.
    pub fn covers(&self) -> &[Cover] {
        &self.covers
    }

    /// The messages of `original` in `removed` are gone (`rewind`, `remove`, `clear`); the
    /// messages are read as `original` (before the edit) and `working` (the working history)
    /// are. A working message that covers none of them stays (with its count); one that
    /// covers any is undone, and the originals it covered that remain and that no staying
    /// message covers come back, uncounted, each before the first staying message that covers
    /// only later ones. The latest real user input that remains: every reduction kept it as
    /// it is, so a message that covers it with others is undone too, and where a reduction
    /// dropped it, it comes back (SPEC §9.6: a rewind past the later inputs makes it the
    /// latest again). Unless the edit only cuts the working history's tail, what reductions
    /// dropped comes back as well. Where the history must open on a user input
    /// ([`starts_on_user_required`]) and a summary was followed by one, a summary that the
    /// edit would leave before anything else is undone (SPEC §9.5). A `prepare()` under way
    /// no longer applies; the last prompt is no longer the working history's (`recordUsage`
    /// waits for the next `prepare()`).
    pub fn edit(
        &mut self,
        removed: Range<usize>,
        original: &Transcript,
        working: &Transcript,
        config: &Config,
    ) -> Edit {
        let end = removed.end.min(self.originals);
        let removed = removed.start.min(end) as u32..end as u32;
        let latest = latest_user(original, &removed).filter(|&j| (j as usize) < self.originals);
        let mut stays = Vec::with_capacity(self.covers.len());
        for (c, &own) in self.covers.iter().zip(&self.own) {
            // (A message that covers nothing, of a state with messages but no `original`,
            // goes with any edit.)
            let hides_latest = !own && latest.is_some_and(|j| intersects(c, &(j..j + 1)));
            stays.push(!c.is_empty() && !intersects(c, &removed) && !hides_latest);
        }
        let mut before = Vec::with_capacity(self.len());
        for i in 0..self.len() as u32 {
            before.push(Entry::Kept(i));
        }
        let opened_on_user = starts_on_user_required(original, config)
            && self.opening(&before, original, working).1 == Some(true);
        let entries = loop {
            self.close(&mut stays);
            let entries = self.entries(&stays, &removed, latest);
            // A summary was followed by a user input and is now followed by what is not
            // one (the removed input's answer): undone, its originals open the history.
            match self.opening(&entries, original, working) {
                (Some(summary), Some(false)) if opened_on_user => stays[summary] = false,
                _ => break entries,
            }
        };
        let edit = Edit {
            removed: removed.len(),
            // (A message whose originals are all removed is removed, not undone.)
            undone: self
                .covers
                .iter()
                .zip(&stays)
                .filter(|(c, &s)| {
                    !s && c
                        .iter()
                        .any(|r| r.start < removed.start || r.end > removed.end)
                })
                .count(),
            restored: entries
                .iter()
                .filter(|e| matches!(e, Entry::Restored(_)))
                .count(),
            entries,
        };
        // (One loop for the three: smaller in the module than `unzip`.)
        let n = edit.entries.len();
        let (mut counts, mut covers, mut own) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for e in &edit.entries {
            match *e {
                Entry::Kept(i) => {
                    own.push(self.own[i as usize]);
                    counts.push(self.counts[i as usize]);
                    covers.push(remap(&self.covers[i as usize], &removed));
                }
                Entry::Restored(j) => {
                    own.push(true);
                    counts.push(None);
                    covers.push(remap(&span(j..j + 1), &removed));
                }
            }
        }
        self.counts = counts;
        self.covers = covers;
        self.own = own;
        self.originals -= edit.removed;
        self.generation = self.generation.wrapping_add(1);
        self.prompt_len = None;
        self.pending_output = None;
        self.over_budget = false;
        self.stats.edits = self.stats.edits.saturating_add(1);
        self.stats.undone = self.stats.undone.saturating_add(edit.undone as u32);
        edit
    }

    /// Covers over-approximate: a message written beside one that is undone may stand for
    /// some of the same originals, which come back; so it is undone too (a message of
    /// `original` itself, covering one, stays: that one does not come back).
    fn close(&self, stays: &mut [bool]) {
        loop {
            let undone = union(
                self.covers
                    .iter()
                    .zip(stays.iter())
                    .filter(|(_, &s)| !s)
                    .map(|(c, _)| c),
            );
            let mut more = false;
            for ((c, s), &own) in self.covers.iter().zip(stays.iter_mut()).zip(&self.own) {
                if *s && !own && c.iter().any(|r| intersects(&undone, r)) {
                    *s = false;
                    more = true;
                }
            }
            if !more {
                return;
            }
        }
    }

    /// The working history once the messages that do not `stay` are gone: those that stay,
    /// and in their place the originals that come back.
    fn entries(&self, stays: &[bool], removed: &Range<u32>, latest: Option<u32>) -> Vec<Entry> {
        // The originals that come back: covered by an undone message, neither removed nor
        // covered by one that stays.
        let mut back = vec![false; self.originals];
        for (c, _) in self.covers.iter().zip(stays).filter(|(_, &s)| !s) {
            for j in c.iter().flat_map(|r| r.clone()) {
                back[j as usize] = !removed.contains(&j);
            }
        }
        if let Some(j) = latest {
            back[j as usize] = true;
        }
        // What the reductions dropped was decided with the messages kept after it: unless
        // the edit only cut the working history's tail (regenerate, a rewind of the latest
        // messages), it all comes back (SPEC §9.5: a history that a removal left starting on
        // an answer; the next `prepare()` drops again what it must).
        let first_gone = stays.iter().position(|&s| !s).unwrap_or(stays.len());
        let tail =
            stays[first_gone..].iter().all(|&s| !s) && self.own[first_gone..].iter().all(|&o| o);
        if !tail {
            let mut dropped = vec![true; self.originals];
            for j in self.covers.iter().flatten().flat_map(|r| r.clone()) {
                dropped[j as usize] = false;
            }
            for (j, d) in dropped.into_iter().enumerate() {
                back[j] |= d && !removed.contains(&(j as u32));
            }
        }
        for (c, _) in self.covers.iter().zip(stays).filter(|(_, &s)| s) {
            for j in c.iter().flat_map(|r| r.clone()) {
                back[j as usize] = false;
            }
        }
        let mut restored = (0..self.originals as u32)
            .filter(|&j| back[j as usize])
            .peekable();
        let mut entries = Vec::new();
        for (i, c) in self.covers.iter().enumerate() {
            if !stays[i] {
                continue;
            }
            let first = c.first().map_or(u32::MAX, |r| r.start);
            while let Some(j) = restored.next_if(|&j| j < first) {
                entries.push(Entry::Restored(j));
            }
            entries.push(Entry::Kept(i as u32));
        }
        entries.extend(restored.map(Entry::Restored));
        entries
    }

    /// How `entries` open, past the system messages and summaries (SPEC §9.5): the last
    /// summary a reduction wrote among them (its index in the working history), and whether
    /// the message after them is a real user input (none when there is none).
    fn opening(
        &self,
        entries: &[Entry],
        original: &Transcript,
        working: &Transcript,
    ) -> (Option<usize>, Option<bool>) {
        let mut summary = None;
        for e in entries {
            let (m, written) = match *e {
                Entry::Kept(i) => (
                    working.messages.get(i as usize),
                    !self.own.get(i as usize).copied().unwrap_or(true),
                ),
                Entry::Restored(j) => (original.messages.get(j as usize), false),
            };
            let Some(m) = m else { continue };
            if m.is_summary() {
                if let (Entry::Kept(i), true) = (*e, written) {
                    summary = Some(i as usize);
                }
            } else if !m.is_system() {
                return (summary, Some(m.is_real_user()));
            }
        }
        (summary, None)
    }
}

/// The index into `original` (of `originals` messages) that `rewind` / `remove` (`by`) was
/// given: `INVALID_MESSAGE` for one that is no message of `original` (with `index` when it
/// is a whole number ≥ 0: the message it would have been).
pub fn edit_index(by: &str, index: Option<f64>, originals: usize) -> Result<usize, ReduceError> {
    let message = |what: &str| {
        cat(&[
            by,
            ": ",
            what,
            " is not an index of original (",
            &show(originals as f64),
            " messages)",
        ])
    };
    match index {
        Some(i) if i >= 0.0 && i.fract() == 0.0 && i < originals as f64 => Ok(i as usize),
        Some(i) if i >= 0.0 && i.fract() == 0.0 && i <= usize::MAX as f64 => {
            Err(ReduceError::message_at(i as usize, message(&show(i))))
        }
        Some(i) => Err(ReduceError::new(
            ErrorCode::InvalidMessage,
            message(&show(i)),
        )),
        None => Err(ReduceError::new(
            ErrorCode::InvalidMessage,
            message("an index that is not a number"),
        )),
    }
}

/// The latest real user input of `t` (`original`) outside `removed`, which
/// [`History::edit`] keeps in the working history.
fn latest_user(t: &Transcript, removed: &Range<u32>) -> Option<u32> {
    t.messages
        .iter()
        .enumerate()
        .rev()
        .find(|(j, m)| !removed.contains(&(*j as u32)) && m.is_real_user())
        .map(|(j, _)| j as u32)
}
