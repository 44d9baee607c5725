use super::*;

fn est(text: &str) -> f64 {
    text_weight(text, &Weights::default())
}

#[test]
fn the_block_table_classes_every_code_point_as_the_ranges_do() {
    for u in 0x80..0x11_0000 {
        assert_eq!(class_in_blocks(u), class_of(u), "U+{u:04X}");
    }
    assert!(BLOCK_CLASS.iter().filter(|&&c| c != MIXED).count() > 150);
}

#[test]
fn letters_are_cheap_and_digits_dense() {
    assert!((est("hello") - 0.5).abs() < 1e-9);
    assert!((est("12345") - 5.0 * 0.73).abs() < 1e-9);
}

#[test]
fn whitespace_runs_cost_less_after_the_first() {
    let one = est(" ");
    let four = est("    ");
    assert!((one - 0.66).abs() < 1e-9);
    assert!((four - (0.66 + 3.0 * 0.12)).abs() < 1e-9);
    // A letter between two spaces starts a new run.
    assert!((est(" a ") - (0.66 * 2.0 + 0.10)).abs() < 1e-9);
}

#[test]
fn wide_scripts_are_classified() {
    assert!((est("漢字") - 2.0 * 0.86).abs() < 1e-9);
    assert!((est("ひらがな") - 4.0 * 0.66).abs() < 1e-9);
    assert!((est("한국어") - 3.0 * 0.64).abs() < 1e-9);
    assert!((est("。「」") - 3.0 * 1.06).abs() < 1e-9);
    assert!((est("😀") - 1.56).abs() < 1e-9);
    assert!((est("é") - 0.10).abs() < 1e-9);
    // Letters of other alphabets: one class of their own.
    for letter in ["ж", "λ", "א", "ب", "क", "ก", "ა", "Ѣ", "ﻻ"] {
        assert!((est(letter) - 0.30).abs() < 1e-9, "{letter}");
    }
    assert!(
        (est("\u{2603}") - 1.56).abs() < 1e-9,
        "a snowman is an emoji"
    );
    assert!(
        (est("\u{feff}") - 0.70).abs() < 1e-9,
        "a byte order mark is other"
    );
}

#[test]
fn json_is_denser_than_length_over_four() {
    let json = r#"{"id":12345,"items":[1,2,3],"ok":true}"#;
    assert!(est(json) > json.len() as f64 / 4.0);
}

#[test]
fn pieces_of_utf8_weigh_on_their_own() {
    let s = Scanner::new(&Weights::default());
    let joined = "ab😀漢 c";
    let bytes = joined.as_bytes();
    let split = "ab😀".len();
    assert!((s.weigh_bytes(&bytes[..split]) - (0.2 + 1.56)).abs() < 1e-9);
    assert!((s.weigh_bytes(&bytes[split..]) - (0.86 + 0.66 + 0.10)).abs() < 1e-9);
    assert_eq!(est("aaaaaaaaaa"), 1.0, "exact decimal sums");
}

#[test]
fn auto_picks_the_profile_by_format_and_a_name_wins() {
    let auto = Profile::default();
    for format in Format::ALL {
        let expected = if format == Format::Gemini {
            Tokenizer::Gemma
        } else {
            Tokenizer::O200k
        };
        assert_eq!(auto.tokenizer(format), expected, "{format:?}");
        assert_eq!(auto.weights(format), Weights::fitted(expected));
        for named in Tokenizer::ALL {
            let p = Profile {
                tokenizer: Some(named),
                ..auto
            };
            assert_eq!(p.tokenizer(format), named, "{format:?} {named:?}");
            assert_eq!(p.weights(format), Weights::fitted(named));
        }
    }
    let length = Estimator::Length {
        chars_per_token: 4.0,
    };
    assert_eq!(length.tokenizer(Format::Gemini), None);
    assert_eq!(length.weights(Format::Gemini), None);
}

#[test]
fn each_profile_row_is_its_tokenizer_and_o200k_is_the_default() {
    for (k, t) in Tokenizer::ALL.into_iter().enumerate() {
        assert_eq!(t as usize, k);
        assert_eq!(profiles::PROFILES[k].0, t.name());
    }
    let names: Vec<&str> = Tokenizer::ALL.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["o200k", "cl100k", "gemma", "llama3"]);
    assert_eq!(Weights::fitted(Tokenizer::O200k).letter, 0.10);
    assert_eq!(Weights::default(), Weights::fitted(Tokenizer::O200k));
    // The profiles differ where their tokenizers do: Gemma spends a token on each digit.
    let digits = |t| text_weight("1234567890", &Weights::fitted(t));
    assert!(digits(Tokenizer::Gemma) > 1.2 * digits(Tokenizer::O200k));
}

#[test]
fn the_documented_weights_are_the_profiles() {
    // docs/options.md's table: a row per class, a column per profile in `Tokenizer::ALL` order.
    let doc = include_str!("../../docs/options.md");
    for (k, name) in Weights::NAMES.iter().enumerate() {
        let start = format!("| `{name}`");
        let row = doc
            .lines()
            .map(str::trim_start)
            .find(|l| l.starts_with(&start))
            .expect(name);
        let cells: Vec<f64> = row
            .split('|')
            .skip(2)
            .filter_map(|c| c.trim().parse().ok())
            .collect();
        let fitted: Vec<f64> = Tokenizer::ALL
            .iter()
            .map(|&t| Weights::fitted(t).values()[k])
            .collect();
        assert_eq!(cells, fitted, "{name}");
    }
}

#[test]
fn weights_round_trip_through_their_values() {
    let w = Weights::fitted(Tokenizer::Cl100k);
    assert_eq!(Weights::from_values(w.values()), w);
}

#[test]
fn a_message_rounds_its_texts_up_once() {
    assert_eq!(message_tokens(2.1, 1, 3.0, 1000.0), 1006.0);
}
