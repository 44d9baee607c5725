//! The known option nearest to a name that is not one (SPEC §4: `keepLats` → "did you mean
//! keepLast?"), for the `INVALID_CONFIG` error of an unknown option.

use crate::contract::OPTION_NAMES;

/// Options of the peers' reducers that mean one of ours (LangChain.js `trimMessages`,
/// Microsoft.Extensions.AI's reducers): too far apart to be found by spelling.
const ALIASES: [(&str, &str); 8] = [
    ("tokenCounter", "countTokens"),
    ("includeSystem", "keepSystem"),
    ("targetCount", "targetMessages"),
    ("thresholdCount", "thresholdMessages"),
    ("maxMessages", "targetMessages"),
    ("contextWindow", "maxTokens"),
    ("maxContextTokens", "maxTokens"),
    ("onError", "onSummarizerError"),
];

/// The known option `name` most likely stands for: an alias's, else the one at the
/// smallest edit distance (ignoring ASCII case) if that is at most a third of the name's
/// length (and at least 2); `None` when none is that near.
pub fn nearest_option(name: &str) -> Option<&'static str> {
    if let Some((_, to)) = ALIASES.iter().find(|(from, _)| *from == name) {
        return Some(to);
    }
    let limit = (name.len() / 3).max(2);
    let mut best: Option<(usize, &'static str)> = None;
    for known in OPTION_NAMES {
        let d = distance(name.as_bytes(), known.as_bytes());
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, known));
        }
    }
    best.map(|(_, known)| known)
}

/// Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`, ASCII
/// letters compared without case (bytes: the option names are ASCII).
fn distance(a: &[u8], b: &[u8]) -> usize {
    let same = |x: u8, y: u8| x.eq_ignore_ascii_case(&y);
    // Three rows of the table: the one before last, the last, and the one being filled.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut last: Vec<usize> = vec![0; b.len() + 1];
    for (j, slot) in last.iter_mut().enumerate() {
        *slot = j;
    }
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(!same(a[i - 1], b[j - 1]));
            row[j] = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + cost);
            if i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]) {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut last);
        std::mem::swap(&mut last, &mut row);
    }
    last[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_the_option_meant() {
        assert_eq!(nearest_option("keepLats"), Some("keepLast"));
        assert_eq!(nearest_option("maxToken"), Some("maxTokens"));
        assert_eq!(nearest_option("maxtokens"), Some("maxTokens"));
        assert_eq!(nearest_option("summariser"), Some("summarizer"));
        assert_eq!(nearest_option("stratgy"), Some("strategy"));
        assert_eq!(nearest_option("targetToken"), Some("targetTokens"));
        assert_eq!(nearest_option("keepsystem"), Some("keepSystem"));
    }

    #[test]
    fn the_peers_names_find_ours() {
        assert_eq!(nearest_option("tokenCounter"), Some("countTokens"));
        assert_eq!(nearest_option("includeSystem"), Some("keepSystem"));
        assert_eq!(nearest_option("targetCount"), Some("targetMessages"));
        for (_, to) in ALIASES {
            assert!(OPTION_NAMES.contains(&to), "{to} is an option");
        }
    }

    #[test]
    fn far_names_suggest_nothing() {
        assert_eq!(nearest_option("model"), None);
        assert_eq!(nearest_option("x"), None);
        assert_eq!(nearest_option("temperature"), None);
    }

    #[test]
    fn distance_counts_edits() {
        assert_eq!(distance(b"keepLats", b"keepLast"), 1);
        assert_eq!(distance(b"", b"abc"), 3);
        assert_eq!(distance(b"abc", b"ABC"), 0);
        assert_eq!(distance(b"kitten", b"sitting"), 3);
    }
}
