//! The tests of `config`.

use super::*;
use crate::error::ErrorCode;
use crate::formats::Format;
use OptionValue::*;

/// The keys `parse` reads, in order, given `pairs`.
fn keys_read(pairs: &[(&str, OptionValue)]) -> Vec<&'static str> {
    let mut keys = Vec::new();
    Config::parse(|key| {
        keys.push(key);
        Ok(pairs
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(Missing, |(_, v)| v.clone()))
    })
    .unwrap();
    keys
}

#[test]
fn every_option_is_read_once_in_one_order_whatever_the_values() {
    // The boundary reads every option in one call, in this order (`OPTION_NAMES`): no
    // option may be read only for some values of others.
    let bare = keys_read(&[("maxTokens", Number(1000.0))]);
    let full = keys_read(&[
        ("strategy", Text("progressive".into())),
        ("format", Text("openai".into())),
        ("maxTokens", Number(1000.0)),
        ("targetTokens", Number(500.0)),
        ("targetMessages", Number(40.0)),
        ("thresholdMessages", Number(3.0)),
        ("keepSystem", Bool(false)),
        ("keepLast", Number(2.0)),
        ("startOn", Text("any".into())),
        ("tokenCounts", Array),
        ("countTokens", Function),
        ("estimator", Text("length".into())),
        ("charsPerToken", Number(3.0)),
        ("tokenizer", Text("cl100k".into())),
        (
            "estimatorWeights",
            Object(vec![("letter".into(), Number(0.2))]),
        ),
        ("calibration", Number(1.1)),
        ("summarizer", Function),
        ("summaryTag", Text("digest".into())),
        ("onEvent", Function),
    ]);
    assert_eq!(bare, full);
    let mut unique = bare.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), bare.len(), "an option read twice");
    assert_eq!(bare, Config::OPTION_NAMES);
}

#[test]
fn reserved_tokens_come_off_the_trigger_and_the_target() {
    let c = Config::from_pairs(&[
        ("maxTokens", Number(8000.0)),
        ("reservedTokens", Number(2000.0)),
    ])
    .unwrap();
    assert_eq!(c.max_tokens, Some(6000.0));
    assert_eq!(c.target_tokens, Some(4400.0));
    assert_eq!(c.summary_max_tokens, Some(1100.0));
    let c = Config::from_pairs(&[
        ("maxTokens", Number(8000.0)),
        ("summaryMaxTokens", Number(300.0)),
        ("reservedTokens", Number(2000.0)),
    ])
    .unwrap();
    assert_eq!(c.summary_max_tokens, Some(300.0));
    // Nothing left for the messages.
    let e = Config::from_pairs(&[
        ("maxTokens", Number(1000.0)),
        ("reservedTokens", Number(800.0)),
    ])
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("reservedTokens"));
    // Without a token trigger there is nothing to take it from.
    let c = Config::from_pairs(&[
        ("targetMessages", Number(10.0)),
        ("reservedTokens", Number(800.0)),
    ])
    .unwrap();
    assert_eq!(c.max_tokens, None);
    assert!(Config::from_pairs(&[
        ("maxTokens", Number(1000.0)),
        ("reservedTokens", Number(-1.0)),
    ])
    .is_err());
}

#[test]
fn summarizer_input_tokens_has_a_default_and_is_a_positive_number() {
    let c = Config::from_pairs(&[("maxTokens", Number(1000.0))]).unwrap();
    assert_eq!(c.summarizer_input_tokens, DEFAULT_SUMMARIZER_INPUT_TOKENS);
    let c = Config::from_pairs(&[
        ("maxTokens", Number(1000.0)),
        ("summarizerInputTokens", Number(4000.0)),
    ])
    .unwrap();
    assert_eq!(c.summarizer_input_tokens, 4000.0);
    for bad in [
        Number(0.0),
        Number(-1.0),
        Number(f64::INFINITY),
        Text("8k".into()),
    ] {
        let e = Config::from_pairs(&[
            ("maxTokens", Number(1000.0)),
            ("summarizerInputTokens", bad),
        ])
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("summarizerInputTokens"));
    }
}

#[test]
fn an_unknown_option_is_refused_with_the_one_meant() {
    let e =
        Config::from_pairs(&[("maxTokens", Number(10.0)), ("keepLats", Number(2.0))]).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidConfig);
    assert_eq!(e.field.as_deref(), Some("keepLats"));
    assert_eq!(
        e.message,
        "config.keepLats is not an option; did you mean keepLast?"
    );
    let e = Config::from_pairs(&[("temperature", Number(0.2))]).unwrap_err();
    assert_eq!(
        e.message,
        "config.temperature is not an option of chat-history-reducer"
    );
}

#[test]
fn numbers_that_would_make_a_sum_infinite_are_refused() {
    let field = |pairs: &[(&str, OptionValue)]| {
        // (The first pair of a key counts.)
        let mut all = pairs.to_vec();
        all.push(("maxTokens", Number(1000.0)));
        Config::from_pairs(&all).err().and_then(|e| e.field.clone())
    };
    for key in [
        "messageOverhead",
        "imageTokens",
        "summaryMaxTokens",
        "maxTokens",
    ] {
        assert_eq!(field(&[(key, Number(1e308))]).as_deref(), Some(key));
        assert_eq!(field(&[(key, Number(f64::INFINITY))]).as_deref(), Some(key));
        assert_eq!(
            field(&[(key, Number(MAX_COUNT))]),
            None,
            "{key} at the bound"
        );
    }
    let length = ("estimator", Text("length".into()));
    let cpt = |c| field(&[length.clone(), ("charsPerToken", Number(c))]);
    assert_eq!(cpt(1e-308).as_deref(), Some("charsPerToken"));
    assert_eq!(cpt(0.009).as_deref(), Some("charsPerToken"));
    assert_eq!(cpt(0.01), None);
    let weight = |w| {
        field(&[(
            "estimatorWeights",
            Object(vec![("emoji".into(), Number(w))]),
        )])
    };
    assert_eq!(weight(1e300).as_deref(), Some("estimatorWeights"));
    assert_eq!(weight(1000.0), None);
}

#[test]
fn defaults_follow_the_spec() {
    let c = Config::from_pairs(&[("maxTokens", Number(1000.0))]).unwrap();
    assert_eq!(c.target_tokens, Some(800.0));
    assert_eq!(c.summary_max_tokens, Some(200.0));
    // Without a token target: a fixed one for summarize; progressive bounds a round
    // summary by what it replaces.
    let messages = |strategy: &str| {
        Config::from_pairs(&[
            ("targetMessages", Number(10.0)),
            ("strategy", Text(strategy.into())),
        ])
        .unwrap()
        .summary_max_tokens
    };
    assert_eq!(messages("summarize"), Some(DEFAULT_SUMMARY_MAX_TOKENS));
    assert_eq!(messages("progressive"), None);
    assert_eq!(c.keep_last, 1);
    assert_eq!(c.threshold_messages, 5);
    assert!(c.keep_system);
    assert_eq!(c.start_on, StartOn::User);
    assert_eq!(c.keep_tool_results, KEEP_TOOL_RESULTS);
}

#[test]
fn large_message_tokens_and_min_tool_run_follow_the_target_up_to_their_large_window_values() {
    let thresholds = |pairs: &[(&str, OptionValue)]| {
        let c = Config::from_pairs(pairs).unwrap();
        (c.large_message_tokens, c.min_tool_run)
    };
    let window = |max: f64| thresholds(&[("maxTokens", Number(max))]);
    // An 8k window (target 6,400): a twentieth of the target is large, runs of three count.
    assert_eq!(window(8000.0), (320.0, 3));
    assert_eq!(window(20_000.0), (800.0, 4));
    // From a target of 24,000–25,000 on: today's values, whatever the window.
    assert_eq!(window(30_000.0), (1200.0, 6));
    assert_eq!(window(32_000.0), (LARGE_MESSAGE_TOKENS, MIN_TOOL_RUN));
    assert_eq!(window(200_000.0), (LARGE_MESSAGE_TOKENS, MIN_TOOL_RUN));
    // A tiny window: at least a token, at least a run of three.
    assert_eq!(window(10.0), (1.0, 3));
    // The target the messages have (reservedTokens comes off it).
    assert_eq!(
        thresholds(&[
            ("maxTokens", Number(32_000.0)),
            ("reservedTokens", Number(20_000.0))
        ]),
        (280.0, 3)
    );
    // Without a token target: the large-window values.
    assert_eq!(
        thresholds(&[("targetMessages", Number(10.0))]),
        (LARGE_MESSAGE_TOKENS, MIN_TOOL_RUN)
    );
    // What the caller sets stands.
    assert_eq!(
        thresholds(&[
            ("maxTokens", Number(8000.0)),
            ("largeMessageTokens", Number(5000.0)),
            ("minToolRun", Number(0.0)),
        ]),
        (5000.0, 1)
    );
}

#[test]
fn counts_up_to_the_bound_are_taken_and_held_as_u32_max() {
    const COUNTS: [&str; 7] = [
        "targetMessages",
        "thresholdMessages",
        "keepLast",
        "keepRecentPairs",
        "previewChars",
        "minToolRun",
        "keepToolResults",
    ];
    for n in [2f64.powi(32), 2f64.powi(40), MAX_COUNT] {
        let pairs: Vec<(&str, OptionValue)> = COUNTS.iter().map(|k| (*k, Number(n))).collect();
        let c = Config::from_pairs(&pairs).unwrap();
        let max = u32::MAX as usize;
        assert_eq!(c.target_messages, Some(max), "{n}");
        assert_eq!(
            [
                c.threshold_messages,
                c.keep_last,
                c.keep_recent_pairs,
                c.preview_chars,
                c.min_tool_run,
                c.keep_tool_results
            ],
            [max; 6],
            "{n}"
        );
    }
    for key in COUNTS {
        let e = Config::from_pairs(&[("maxTokens", Number(10.0)), (key, Number(2.5))]).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(key));
        assert!(e.message.contains("whole number"), "{}", e.message);
        let e = Config::from_pairs(&[("maxTokens", Number(10.0)), (key, Number(2f64.powi(53)))])
            .unwrap_err();
        assert!(e.message.contains("MAX_SAFE_INTEGER"), "{}", e.message);
    }
}

#[test]
fn a_trigger_is_required() {
    let e = Config::from_pairs(&[]).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidConfig);
    assert_eq!(e.field.as_deref(), Some("maxTokens"));
}

#[test]
fn bad_numbers_name_their_field() {
    for (key, value) in [
        ("maxTokens", Number(-1.0)),
        ("maxTokens", Number(f64::NAN)),
        ("maxTokens", Number(0.0)),
        ("maxTokens", Text("1000".into())),
        ("targetMessages", Number(2.5)),
        ("keepLast", Number(-1.0)),
        ("charsPerToken", Number(0.0)),
    ] {
        let mut pairs = vec![("targetMessages", Number(10.0))];
        pairs.retain(|(k, _)| *k != key);
        pairs.push((key, value));
        let e = Config::from_pairs(&pairs).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(key), "{e}");
    }
}

#[test]
fn target_above_trigger_is_rejected() {
    let e = Config::from_pairs(&[
        ("maxTokens", Number(100.0)),
        ("targetTokens", Number(101.0)),
    ])
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("targetTokens"));
}

#[test]
fn unknown_choices_are_listed() {
    let e = Config::from_pairs(&[
        ("maxTokens", Number(100.0)),
        ("strategy", Text("fifo".into())),
    ])
    .unwrap_err();
    assert!(e.message.contains("\"truncate\""), "{}", e.message);
}

#[test]
fn weights_and_length_estimator() {
    let c = Config::from_pairs(&[
        ("maxTokens", Number(100.0)),
        (
            "estimatorWeights",
            Object(vec![("letter".into(), Number(0.25))]),
        ),
    ])
    .unwrap();
    let w = c.estimator.weights(Format::OpenAi).unwrap();
    assert_eq!(w.letter, 0.25);
    assert_eq!(
        w.digit,
        Weights::default().digit,
        "the others stay the profile's"
    );
    let c = Config::from_pairs(&[
        ("maxTokens", Number(100.0)),
        ("estimator", Text("length".into())),
        ("charsPerToken", Number(3.0)),
    ])
    .unwrap();
    assert_eq!(
        c.estimator,
        Estimator::Length {
            chars_per_token: 3.0
        }
    );
}

#[test]
fn tokenizer_profiles_by_name_auto_by_default() {
    let parse = |name: Option<&str>| {
        let mut pairs = vec![("maxTokens", Number(100.0))];
        if let Some(n) = name {
            pairs.push(("tokenizer", Text(n.into())));
        }
        Config::from_pairs(&pairs).map(|c| c.estimator)
    };
    let profile = |tokenizer| {
        Estimator::Classes(Profile {
            tokenizer,
            ..Profile::default()
        })
    };
    assert_eq!(parse(None).unwrap(), profile(None), "auto by default");
    assert_eq!(parse(Some("auto")).unwrap(), profile(None));
    for t in Tokenizer::ALL {
        assert_eq!(parse(Some(t.name())).unwrap(), profile(Some(t)), "{t:?}");
    }
    assert_eq!(
        parse(Some("gemma")).unwrap(),
        profile(Some(Tokenizer::Gemma))
    );
    assert_eq!(
        parse(Some("llama3")).unwrap(),
        profile(Some(Tokenizer::Llama3))
    );
    // An unknown name lists the known ones.
    let e = parse(Some("gemini")).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidConfig);
    assert_eq!(e.field.as_deref(), Some("tokenizer"));
    assert!(
        e.message
            .contains(r#"is not one of "auto", "o200k", "cl100k", "gemma", "llama3""#),
        "{}",
        e.message
    );
    // A misspelt option name finds `tokenizer`.
    let e = Config::from_pairs(&[
        ("maxTokens", Number(100.0)),
        ("tokeniser", Text("gemma".into())),
    ])
    .unwrap_err();
    assert!(
        e.message.contains("did you mean tokenizer?"),
        "{}",
        e.message
    );
}

#[test]
fn estimator_weights_apply_over_the_chosen_profile() {
    let c = Config::from_pairs(&[
        ("maxTokens", Number(100.0)),
        (
            "estimatorWeights",
            Object(vec![("digit".into(), Number(2.0))]),
        ),
    ])
    .unwrap();
    // A config equals itself parsed again (the memo of reductions compares them), weights
    // not set included.
    let again = Config::from_pairs(&[
        ("maxTokens", Number(100.0)),
        (
            "estimatorWeights",
            Object(vec![("digit".into(), Number(2.0))]),
        ),
    ]);
    assert_eq!(again.as_ref(), Ok(&c));
    assert_ne!(
        Config::from_pairs(&[("maxTokens", Number(100.0))]).as_ref(),
        Ok(&c)
    );
    for format in [Format::OpenAi, Format::Gemini] {
        let w = c.estimator.weights(format).unwrap();
        let fitted = Weights::fitted(Tokenizer::for_format(format));
        assert_eq!(
            w,
            Weights {
                digit: 2.0,
                ..fitted
            },
            "{format:?}"
        );
    }
}

#[test]
fn cache_breakpoints_is_a_boolean_off_by_default() {
    let with = |value: OptionValue| {
        Config::from_pairs(&[("maxTokens", Number(100.0)), ("cacheBreakpoints", value)])
    };
    assert!(!with(Missing).unwrap().cache_breakpoints);
    assert!(with(Bool(true)).unwrap().cache_breakpoints);
    let e = with(Text("yes".into())).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidConfig);
    assert_eq!(e.field.as_deref(), Some("cacheBreakpoints"));
}
