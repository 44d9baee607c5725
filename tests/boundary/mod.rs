//! Real JavaScript values through the exported functions: identity, unknown fields, tool
//! groups, errors, and a module that keeps working after them.

use chat_history_reducer::wasm;
use js_sys::{Array, Function, Object, Reflect, JSON};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

/// `wasm::reduce`, awaited.
async fn reduce(messages: JsValue, config: Option<JsValue>) -> Result<JsValue, JsValue> {
    wasm_bindgen_futures::JsFuture::from(wasm::reduce(messages, config)).await
}

fn json(text: &str) -> JsValue {
    JSON::parse(text).expect("test JSON")
}

fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(key)).expect("property")
}

fn num(v: &JsValue, key: &str) -> f64 {
    get(v, key).as_f64().expect("number")
}

fn array(v: &JsValue) -> Array {
    v.clone().dyn_into::<Array>().expect("array")
}

/// An OpenAI conversation: a system prompt, then `turns` rounds of user question, a tool
/// call with two parallel results, and an answer.
fn agent_conversation(turns: usize) -> JsValue {
    let mut items = vec![
        r#"{"role":"system","content":"You are a careful assistant.","x-keep":1}"#.to_string(),
    ];
    for t in 0..turns {
        items.push(format!(r#"{{"role":"user","content":"Question {t}: what is the weather in city {t}?","meta":{{"turn":{t}}}}}"#));
        items.push(format!(
            r#"{{"role":"assistant","content":null,"tool_calls":[{{"id":"a{t}","type":"function","function":{{"name":"weather","arguments":"{{\"city\":{t}}}"}}}},{{"id":"b{t}","type":"function","function":{{"name":"time","arguments":"{{}}"}}}}]}}"#
        ));
        items.push(format!(
            r#"{{"role":"tool","tool_call_id":"a{t}","content":"{}"}}"#,
            "sunny and warm, 23 degrees ".repeat(8)
        ));
        items.push(format!(
            r#"{{"role":"tool","tool_call_id":"b{t}","content":"12:00"}}"#
        ));
        items.push(format!(
            r#"{{"role":"assistant","content":"It is sunny in city {t}."}}"#
        ));
    }
    json(&format!("[{}]", items.join(",")))
}

fn config(text: &str) -> Option<JsValue> {
    Some(json(text))
}

fn role(m: &JsValue) -> String {
    get(m, "role").as_string().unwrap_or_default()
}

fn error_code(e: &JsValue) -> String {
    get(e, "code").as_string().unwrap_or_default()
}

#[wasm_bindgen_test]
fn truncation_fits_the_budget_and_keeps_tool_groups_whole() {
    let input = agent_conversation(12);
    let r = wasm::reduce_sync(&input, config(r#"{"maxTokens":1000}"#)).unwrap();
    let out = array(&get(&r, "messages"));
    assert!(get(&r, "reduced").as_bool().unwrap());
    assert!(num(&r, "tokensAfter") <= 800.0 || get(&r, "overBudget").as_bool().unwrap());
    assert!(num(&r, "tokensBefore") > 1000.0);
    assert_eq!(role(&out.get(0)), "system");
    assert_eq!(
        role(&out.get(1)),
        "user",
        "starts on a user message after the system prompt"
    );
    // Every tool result answers a call kept before it, and every call keeps its results.
    let mut open: Vec<String> = Vec::new();
    for m in out.iter() {
        if let Ok(calls) = get(&m, "tool_calls").dyn_into::<Array>() {
            for c in calls.iter() {
                open.push(get(&c, "id").as_string().unwrap());
            }
        }
        if role(&m) == "tool" {
            let id = get(&m, "tool_call_id").as_string().unwrap();
            let at = open
                .iter()
                .position(|o| *o == id)
                .expect("result without its call");
            open.remove(at);
        }
    }
    assert!(open.is_empty(), "calls without results: {open:?}");
}

#[wasm_bindgen_test]
fn kept_messages_are_the_input_objects_with_unknown_fields() {
    let input = array(&agent_conversation(6));
    let r = wasm::reduce_sync(&input, config(r#"{"maxTokens":400}"#)).unwrap();
    let out = array(&get(&r, "messages"));
    let kept = array(&get(&r, "kept"));
    assert_eq!(out.length(), kept.length());
    for k in 0..out.length() {
        let i = kept.get(k).as_f64().unwrap() as u32;
        assert!(
            Object::is(&out.get(k), &input.get(i)),
            "message {k} is not the input object {i}"
        );
    }
    assert_eq!(num(&out.get(0), "x-keep"), 1.0);
    let dropped = array(&get(&r, "dropped"));
    assert_eq!(
        kept.length() + dropped.length(),
        input.length(),
        "every index accounted for"
    );
}

#[wasm_bindgen_test]
fn nothing_happens_below_the_trigger() {
    let input = agent_conversation(2);
    let r = wasm::reduce_sync(&input, config(r#"{"maxTokens":100000}"#)).unwrap();
    assert_eq!(get(&r, "reduced").as_bool(), Some(false));
    assert_eq!(array(&get(&r, "messages")).length(), array(&input).length());
    assert_eq!(num(&r, "tokensBefore"), num(&r, "tokensAfter"));
    assert!(!wasm::should_reduce(&input, config(r#"{"maxTokens":100000}"#)).unwrap());
    assert!(wasm::should_reduce(&input, config(r#"{"maxTokens":50}"#)).unwrap());
}

#[wasm_bindgen_test]
fn message_targets_count_non_system_messages() {
    let input = agent_conversation(10);
    let r = wasm::reduce_sync(&input, config(r#"{"targetMessages":10}"#)).unwrap();
    let out = array(&get(&r, "messages"));
    let non_system = out.iter().filter(|m| role(m) != "system").count();
    assert!(non_system <= 10, "{non_system} messages kept");
    assert_eq!(role(&out.get(1)), "user");
}

#[wasm_bindgen_test]
fn token_sources_in_order_of_precedence() {
    let input = json(r#"[{"role":"user","content":"hello"},{"role":"assistant","content":"hi"}]"#);
    let counts = json(r#"{"tokenCounts":[100, null]}"#);
    let counter = Function::new_with_args("m, i", "return 7;");
    Reflect::set(&counts, &"countTokens".into(), &counter).unwrap();
    assert_eq!(wasm::estimate_tokens(&input, Some(counts)).unwrap(), 107.0);
    // The built-in estimate: overhead 3 + ceil(letters * 0.1).
    let one = json(r#"{"role":"user","content":"hello"}"#);
    assert_eq!(wasm::estimate_tokens(&one, None).unwrap(), 3.0 + 1.0);
    let length = wasm::estimate_tokens(&one, config(r#"{"estimator":"length"}"#)).unwrap();
    assert_eq!(
        length,
        3.0 + 1.0 + 2.0,
        "ceil(4/4) for the role and ceil(5/4) for the text"
    );
}

#[wasm_bindgen_test]
fn bad_input_is_a_reduce_error_and_the_module_keeps_working() {
    let good = agent_conversation(3);
    let cases: Vec<(JsValue, Option<JsValue>, &str)> = vec![
        (
            JsValue::from_str("not an array"),
            config(r#"{"maxTokens":10}"#),
            "INVALID_MESSAGES",
        ),
        (
            json("[null]"),
            config(r#"{"maxTokens":10}"#),
            "INVALID_MESSAGE",
        ),
        (
            json(r#"[{"content":"no role"}]"#),
            config(r#"{"maxTokens":10}"#),
            "INVALID_MESSAGE",
        ),
        (
            good.clone(),
            config(r#"{"maxTokens":-5}"#),
            "INVALID_CONFIG",
        ),
        (
            good.clone(),
            config(r#"{"maxTokens":"many"}"#),
            "INVALID_CONFIG",
        ),
        (good.clone(), config(r#"{}"#), "INVALID_CONFIG"),
        (good.clone(), None, "INVALID_CONFIG"),
        (
            good.clone(),
            config(r#"{"strategy":"summarize","maxTokens":10}"#),
            "SUMMARIZER_REQUIRES_ASYNC",
        ),
    ];
    for (messages, cfg, code) in cases {
        let e = wasm::reduce_sync(&messages, cfg).expect_err(code);
        assert_eq!(error_code(&e), code);
        assert!(
            e.is_instance_of::<js_sys::Error>(),
            "ReduceError extends Error"
        );
        assert_eq!(get(&e, "name").as_string().as_deref(), Some("ReduceError"));
    }
    let nan = json(r#"{"maxTokens":1}"#);
    Reflect::set(&nan, &"maxTokens".into(), &JsValue::from_f64(f64::NAN)).unwrap();
    let e = wasm::reduce_sync(&good, Some(nan)).unwrap_err();
    assert_eq!(get(&e, "field").as_string().as_deref(), Some("maxTokens"));
    let e = wasm::reduce_sync(
        &json(r#"[{"role":"user","content":"a"}, 5]"#),
        config(r#"{"maxTokens":10}"#),
    )
    .unwrap_err();
    assert_eq!(num(&e, "index"), 1.0);
    // Still works.
    let r = wasm::reduce_sync(&good, config(r#"{"maxTokens":200}"#)).unwrap();
    assert!(get(&r, "reduced").as_bool().unwrap());
}

#[wasm_bindgen_test]
fn analyze_explains_every_message() {
    let input = agent_conversation(3);
    let a = wasm::analyze(&input, config(r#"{"maxTokens":100}"#)).unwrap();
    assert_eq!(get(&a, "format").as_string().as_deref(), Some("openai"));
    let list = array(&get(&a, "messages"));
    assert_eq!(list.length(), array(&input).length());
    // The call and its two results share a group.
    assert_eq!(num(&list.get(2), "group"), num(&list.get(3), "group"));
    assert_eq!(num(&list.get(2), "group"), num(&list.get(4), "group"));
    assert_eq!(num(&list.get(6), "round"), 2.0);
    assert_eq!(
        get(&list.get(0), "protectedBy").as_string().as_deref(),
        Some("system")
    );
    assert_eq!(get(&a, "shouldReduce").as_bool(), Some(true));
}

#[wasm_bindgen_test]
async fn reduce_returns_a_promise_of_the_same_result() {
    let input = agent_conversation(8);
    let a = reduce(input.clone(), config(r#"{"maxTokens":600}"#))
        .await
        .unwrap();
    let b = wasm::reduce_sync(&input, config(r#"{"maxTokens":600}"#)).unwrap();
    assert_eq!(
        JSON::stringify(&get(&a, "kept")).unwrap(),
        JSON::stringify(&get(&b, "kept")).unwrap()
    );
}

// ---- summarize, with real async summarizers -------------------------------------------

fn chat(turns: usize) -> JsValue {
    let mut items = vec![r#"{"role":"system","content":"Be kind."}"#.to_string()];
    for t in 0..turns {
        items.push(format!(
            r#"{{"role":"user","content":"question {t} about the garden"}}"#
        ));
        items.push(format!(
            r#"{{"role":"assistant","content":"answer {t}: water the roses"}}"#
        ));
    }
    json(&format!("[{}]", items.join(",")))
}

/// A config `{ strategy: "summarize", targetMessages: 6, ...extra }` whose summarizer is
/// `body` (a JS function body taking `req`).
fn summarize_config(body: &str, extra: &str) -> JsValue {
    let c = json(&format!(
        r#"{{"strategy":"summarize","targetMessages":6{extra}}}"#
    ));
    let f = Function::new_with_args("req", body);
    Reflect::set(&c, &"summarizer".into(), &f).unwrap();
    c
}

#[wasm_bindgen_test]
async fn a_summary_that_resolves_later_replaces_the_oldest_messages() {
    let input = chat(12);
    let config = summarize_config(
        "return new Promise(r => setTimeout(() => r({ text: 'They discussed ' + req.messages.length + ' messages about the garden.', usage: { inputTokens: 9 } }), 15));",
        "",
    );
    let r = reduce(input.clone(), Some(config)).await.unwrap();
    let out = array(&get(&r, "messages"));
    assert_eq!(role(&out.get(0)), "system");
    let summary = get(&r, "summary");
    assert!(
        Object::is(&out.get(1), &summary),
        "the summary follows the system prompt"
    );
    let text = get(&summary, "content").as_string().unwrap();
    assert!(
        text.starts_with("<conversation-summary>They discussed 18 messages"),
        "{text}"
    );
    assert_eq!(role(&summary), "user");
    assert_eq!(array(&get(&r, "summarized")).length(), 18);
    assert_eq!(out.length(), 1 + 1 + 6);
    let event = array(&get(&r, "events")).get(0);
    assert_eq!(
        get(&event, "type").as_string().as_deref(),
        Some("summarize")
    );
    assert_eq!(num(&get(&event, "usage"), "inputTokens"), 9.0);
    // The summary is recognised by its tag: the reduced history is not reduced again.
    let again = reduce(
        get(&r, "messages"),
        Some(summarize_config("throw new Error('called')", "")),
    )
    .await
    .unwrap();
    assert_eq!(get(&again, "reduced").as_bool(), Some(false));
}

#[wasm_bindgen_test]
async fn a_rejecting_summarizer_falls_back_to_truncate_without_losing_the_budget() {
    let input = chat(12);
    let config = summarize_config("return Promise.reject(new Error('model down'));", "");
    let r = reduce(input, Some(config)).await.unwrap();
    let events = array(&get(&r, "events"));
    assert_eq!(
        get(&events.get(0), "type").as_string().as_deref(),
        Some("summarizeFailed")
    );
    assert_eq!(
        get(&events.get(0), "reason").as_string().as_deref(),
        Some("rejected")
    );
    let out = array(&get(&r, "messages"));
    assert!(out.iter().filter(|m| role(m) != "system").count() <= 6);
    assert!(get(&r, "summary").is_undefined());
}

#[wasm_bindgen_test]
async fn a_hung_summarizer_times_out_and_the_throw_mode_leaves_the_input_untouched() {
    let input = chat(12);
    let before = JSON::stringify(&input).unwrap();
    let hung = summarize_config("return new Promise(() => {});", r#","timeoutMs":30"#);
    let r = reduce(input.clone(), Some(hung)).await.unwrap();
    let failed = array(&get(&r, "events")).get(0);
    assert_eq!(
        get(&failed, "reason").as_string().as_deref(),
        Some("timeout")
    );

    let throwing = summarize_config(
        "return new Promise(() => {});",
        r#","timeoutMs":30,"onSummarizerError":"throw""#,
    );
    let e = reduce(input.clone(), Some(throwing)).await.unwrap_err();
    assert_eq!(error_code(&e), "SUMMARIZER_FAILED");
    assert_eq!(
        JSON::stringify(&input).unwrap(),
        before,
        "the input is untouched"
    );

    let empty = summarize_config(
        "return Promise.resolve('   ');",
        r#","onSummarizerError":"throw""#,
    );
    assert_eq!(
        error_code(&reduce(input.clone(), Some(empty)).await.unwrap_err()),
        "SUMMARIZER_FAILED"
    );
    let long = summarize_config(
        "return 'word '.repeat(5000);",
        r#","onSummarizerError":"throw","summaryMaxTokens":50"#,
    );
    assert_eq!(
        error_code(&reduce(input, Some(long)).await.unwrap_err()),
        "SUMMARY_TOO_LARGE"
    );
}

#[wasm_bindgen_test]
async fn an_abort_rejects_with_aborted_and_aborts_the_summarizer_too() {
    let input = chat(12);
    let controller = web_controller();
    let config = summarize_config(
        "globalThis.__chrSignal = req.signal; return new Promise(() => {});",
        "",
    );
    Reflect::set(&config, &"signal".into(), &get(&controller, "signal")).unwrap();
    let abort = Function::new_with_args(
        "c",
        "setTimeout(() => c.abort(new Error('user left')), 20);",
    );
    abort.call1(&JsValue::NULL, &controller).unwrap();
    let e = reduce(input, Some(config)).await.unwrap_err();
    assert_eq!(error_code(&e), "ABORTED");
    let inner = Reflect::get(&js_sys::global(), &"__chrSignal".into()).unwrap();
    assert_eq!(
        get(&inner, "aborted").as_bool(),
        Some(true),
        "the summarizer's own signal aborted"
    );
}

fn web_controller() -> JsValue {
    Function::new_no_args("return new AbortController();")
        .call0(&JsValue::NULL)
        .unwrap()
}

#[wasm_bindgen_test]
async fn chat_history_summarizes_once_per_threshold_and_round_trips_through_json() {
    let config = summarize_config(
        "globalThis.__chrCalls = (globalThis.__chrCalls || 0) + 1; return 'summary ' + globalThis.__chrCalls;",
        "",
    );
    let history = wasm::ChatHistory::new(config.clone(), array(&chat(0)).into()).unwrap();
    for t in 0..40 {
        let who = if t % 2 == 0 { "user" } else { "assistant" };
        history
            .push(vec![json(&format!(
                r#"{{"role":"{who}","content":"turn {t}"}}"#
            ))])
            .unwrap();
        let sent = wasm_bindgen_futures::JsFuture::from(history.prepare(None))
            .await
            .unwrap();
        let after_summary = array(&sent)
            .iter()
            .filter(|m| {
                let c = get(m, "content").as_string().unwrap_or_default();
                role(m) != "system" && !c.starts_with("<conversation-summary>")
            })
            .count();
        assert!(
            after_summary <= 6 + 5,
            "turn {t}: {after_summary} messages sent"
        );
    }
    let calls = Reflect::get(&js_sys::global(), &"__chrCalls".into())
        .unwrap()
        .as_f64()
        .unwrap();
    assert!(
        (5.0..=7.0).contains(&calls),
        "{calls} summarizer calls in 40 turns (every 6 messages)"
    );
    assert_eq!(history.original().length(), 41);
    let state = JSON::parse(
        &JSON::stringify(&history.to_json(None).unwrap())
            .unwrap()
            .as_string()
            .unwrap(),
    )
    .unwrap();
    let copy = wasm::ChatHistory::from_json(state, config, None).unwrap();
    assert_eq!(
        JSON::stringify(&copy.messages()).unwrap(),
        JSON::stringify(&history.messages()).unwrap()
    );
}

// ---- progressive ------------------------------------------------------------------------

/// A 300-message agent session: per round a task, four tool calls with ~20 KB results, an
/// answer.
fn agent_session() -> JsValue {
    let rows: String = (0..600)
        .map(|i| format!(r#"{{\"i\":{i},\"v\":\"row {i}\"}}"#))
        .collect::<Vec<_>>()
        .join(",");
    let mut items = vec![r#"{"role":"system","content":"You are a data agent."}"#.to_string()];
    let mut k = 0;
    let mut r = 0;
    while items.len() < 300 {
        items.push(format!(
            r#"{{"role":"user","content":"Task {r}: summarise dataset {r}."}}"#
        ));
        for _ in 0..4 {
            items.push(format!(
                r#"{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_{k}","type":"function","function":{{"name":"fetch_rows","arguments":"{{\"dataset\":{r}}}"}}}}]}}"#
            ));
            items.push(format!(
                r#"{{"role":"tool","tool_call_id":"call_{k}","content":"{{\"dataset\":{r},\"rows\":[{rows}]}}"}}"#
            ));
            k += 1;
        }
        items.push(format!(
            r#"{{"role":"assistant","content":"Dataset {r} shows a clear trend."}}"#
        ));
        r += 1;
    }
    items.truncate(300);
    json(&format!("[{}]", items.join(",")))
}

#[wasm_bindgen_test]
fn progressive_reaches_the_target_by_offloading_and_every_original_reloads() {
    let input = agent_session();
    let n = array(&input).length();
    assert_eq!(n, 300);
    let before = wasm::estimate_tokens(&input, None).unwrap();
    let max = (before / 20.0).floor();
    let r = wasm::reduce_sync(
        &input,
        config(&format!(
            r#"{{"strategy":"progressive","maxTokens":{max}}}"#
        )),
    )
    .unwrap();
    assert!(
        num(&r, "tokensAfter") <= (max * 0.8).floor(),
        "{} tokens",
        num(&r, "tokensAfter")
    );
    assert_eq!(
        array(&get(&r, "dropped")).length(),
        0,
        "nothing dropped without a trace"
    );
    for e in array(&get(&r, "events")).iter() {
        let kind = get(&e, "type").as_string().unwrap();
        assert!(
            ["toolRuns", "offloadOld", "offloadRecent"].contains(&kind.as_str()),
            "{kind}"
        );
    }
    // Every input index is accounted for once.
    let mut seen = vec![0u32; n as usize];
    for key in ["kept", "dropped", "summarized", "rewritten"] {
        for i in array(&get(&r, key)).iter() {
            seen[i.as_f64().unwrap() as usize] += 1;
        }
    }
    assert!(seen.iter().all(|&c| c == 1), "accounting: {seen:?}");
    // Every offloaded original is the input object itself, and its id is named in the output.
    let offloaded = get(&r, "offloaded");
    let out = JSON::stringify(&get(&r, "messages"))
        .unwrap()
        .as_string()
        .unwrap();
    let input_array = array(&input);
    let mut originals = 0;
    for id in Object::keys(&offloaded.clone().into()).iter() {
        let id = id.as_string().unwrap();
        assert!(out.contains(&id), "{id} is not named in the output");
        for m in array(&get(&offloaded, &id)).iter() {
            assert!(
                input_array.index_of(&m, 0) >= 0,
                "an offloaded original is not an input object"
            );
            originals += 1;
        }
    }
    let rewritten = array(&get(&r, "rewritten")).length() + array(&get(&r, "summarized")).length();
    assert_eq!(originals, rewritten);
    // User inputs stay verbatim.
    let kept: Vec<u32> = array(&get(&r, "kept"))
        .iter()
        .map(|v| v.as_f64().unwrap() as u32)
        .collect();
    for (i, m) in input_array.iter().enumerate() {
        if role(&m) == "user" {
            assert!(kept.contains(&(i as u32)), "user input {i} was not kept");
        }
    }
}

#[wasm_bindgen_test]
async fn progressive_asks_the_summarizer_only_for_the_heavy_stages() {
    let input = agent_session();
    let c = json(r#"{"strategy":"progressive","maxTokens":3000,"minToolRun":1000}"#);
    let f = Function::new_with_args(
        "req",
        "(globalThis.__chrKinds = globalThis.__chrKinds || []).push(req.kind); return Promise.resolve('(' + req.kind + ' of ' + req.messages.length + ')');",
    );
    Reflect::set(&c, &"summarizer".into(), &f).unwrap();
    let r = reduce(input, Some(c)).await.unwrap();
    let kinds = Reflect::get(&js_sys::global(), &"__chrKinds".into()).unwrap();
    let kinds: Vec<String> = array(&kinds)
        .iter()
        .map(|k| k.as_string().unwrap())
        .collect();
    assert!(kinds.contains(&"round".to_string()), "{kinds:?}");
    assert!(kinds
        .iter()
        .all(|k| ["round", "largeMessage", "currentRound"].contains(&k.as_str())));
    assert!(num(&r, "tokensAfter") <= 2400.0 || get(&r, "overBudget").as_bool().unwrap());
}

// ---- the estimator's SIMD path -----------------------------------------------------------

/// A xorshift generator of u32s from `seed`.
fn xorshift(mut seed: u32) -> impl FnMut() -> u32 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    }
}

/// `len` characters, each `pick` of a random number.
fn random_text(next: &mut impl FnMut() -> u32, len: usize, pick: impl Fn(u32) -> char) -> String {
    (0..len).map(|_| pick(next())).collect()
}

#[wasm_bindgen_test]
fn the_simd_scan_weighs_exactly_as_the_scalar_one() {
    use chat_history_reducer::estimate::{Scanner, Weights};
    // Every ASCII character (each class and the edges between them), and some others.
    let alphabet: Vec<char> = (0u8..128)
        .map(char::from)
        .chain("éж漢ひ한。😀\u{a0}\u{ff}\u{100}\u{8000}\u{ffff}".chars())
        .collect();
    let scanner = Scanner::new(&Weights::default());
    let mut next = xorshift(12345);
    for _ in 0..1000 {
        let len = (next() % 200) as usize;
        // Long ASCII stretches (the SIMD path) with spaces across chunk edges.
        let text = random_text(&mut next, len, |r| {
            if r % 4 == 0 {
                alphabet[(r / 4) as usize % alphabet.len()]
            } else if r % 3 == 0 {
                ' '
            } else {
                (b'a' + (r % 26) as u8) as char
            }
        });
        let bytes = text.as_bytes();
        let simd = scanner.weigh_bytes(bytes);
        assert_eq!(simd, scanner.weigh_bytes_scalar(bytes), "{text:?}");
        // As UTF-16 (how Node hands texts over), every way the same.
        let units: Vec<u16> = text.encode_utf16().collect();
        assert_eq!(scanner.weigh_units(&units), simd, "{text:?}");
        assert_eq!(scanner.weigh_units_scalar(&units), simd, "{text:?}");
    }
}

#[wasm_bindgen_test]
fn utf16_with_lone_surrogates_weighs_as_the_utf8_text_encoder_writes() {
    // A lone surrogate is U+FFFD in TextEncoder's UTF-8 (3 bytes) and in the UTF-16 scan;
    // a pair is one code point (an emoji) in both.
    use chat_history_reducer::estimate::{Scanner, Weights};
    let scanner = Scanner::new(&Weights::default());
    let mut next = xorshift(4242);
    for case in 0..400 {
        let len = (next() % 120) as usize;
        let units: Vec<u16> = (0..len)
            .map(|_| match next() % 10 {
                0 => 0xD800 + (next() % 0x800) as u16, // a high or low surrogate, alone or not
                1 => 0xD83D,                           // half of an emoji …
                2 => 0xDE00,                           // … and the other half
                3 => [0x4E00, 0x00E9, 0x3000, 0xFFFD][(next() % 4) as usize],
                4 => b' ' as u16,
                _ => (b'a' + (next() % 26) as u8) as u16,
            })
            .collect();
        let utf8 = String::from_utf16_lossy(&units);
        let want = scanner.weigh_bytes(utf8.as_bytes());
        assert_eq!(scanner.weigh_units(&units), want, "case {case}: {units:x?}");
        assert_eq!(
            scanner.weigh_units_scalar(&units),
            want,
            "case {case}: {units:x?}"
        );
    }
}

#[wasm_bindgen_test]
fn texts_encoded_in_javascript_weigh_as_the_core_weighs_them() {
    // js/reading.js encodes the texts to estimate (short ones by hand; the others as UTF-16 with
    // Node's Buffer, as UTF-8 with TextEncoder elsewhere: this runs in both) and the core
    // weighs them: the same as weighing the Rust string (a lone surrogate as U+FFFD).
    use chat_history_reducer::estimate::{message_tokens, text_weight, Weights};
    // Mostly ASCII of every class (short ASCII texts take another way), some of the rest.
    let alphabet: Vec<char> = "aZ09   \t\n{}\",.:-_!~  é漢ひ한。😀\u{a0}\u{7f}"
        .chars()
        .collect();
    let mut next = xorshift(777);
    let w = Weights::default();
    for case in 0..600 {
        // Lengths around the short-piece limit (64) and well past it.
        let len = (next() % 140) as usize;
        let text = random_text(&mut next, len, |r| {
            if r % 2 == 0 {
                alphabet[(r / 2) as usize % alphabet.len()]
            } else {
                (b'a' + (r % 26) as u8) as char
            }
        });
        let mut units: Vec<u16> = text.encode_utf16().collect();
        if case % 5 == 0 {
            // A lone surrogate somewhere.
            let at = next() as usize % (units.len() + 1);
            units.insert(at, 0xD800 + (next() % 0x800) as u16);
        }
        let text = String::from_utf16_lossy(&units);
        let message = Object::new();
        Reflect::set(&message, &"role".into(), &"user".into()).unwrap();
        let content = js_sys::JsString::from_char_code(&units);
        Reflect::set(&message, &"content".into(), &content).unwrap();
        let got = wasm::estimate_tokens(&Array::of1(&message), None).unwrap();
        let want = message_tokens(
            text_weight("user", &w) + text_weight(&text, &w),
            0,
            3.0,
            0.0,
        );
        assert_eq!(got, want, "case {case}: {text:?}");
    }
}

#[wasm_bindgen_test]
fn a_history_far_larger_than_a_round_weighs_as_its_messages_do() {
    // Texts are encoded into wasm memory in rounds: many rounds, pieces across their ends,
    // pieces longer than a whole round, and messages with no text between them.
    use chat_history_reducer::estimate::{message_tokens, text_weight, Weights};
    let w = Weights::default();
    let mut next = xorshift(99);
    let messages = Array::new();
    let mut want = 0.0;
    for i in 0..3000 {
        let long = i % 500 == 7;
        let len = if long {
            300_000
        } else {
            (next() % 1500) as usize
        };
        let text: String = random_text(&mut next, len, |r| match r % 12 {
            0 => ' ',
            1 => '漢',
            2 => '😀',
            _ => (b'a' + (r % 26) as u8) as char,
        });
        let message = Object::new();
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        Reflect::set(&message, &"role".into(), &role.into()).unwrap();
        let content = if text.is_empty() && role == "assistant" {
            JsValue::NULL
        } else {
            text.as_str().into()
        };
        Reflect::set(&message, &"content".into(), &content).unwrap();
        messages.push(&message);
        want += message_tokens(text_weight(role, &w) + text_weight(&text, &w), 0, 3.0, 0.0);
    }
    assert_eq!(wasm::estimate_tokens(&messages, None).unwrap(), want);
}

/// The bytes of this module's wasm memory (which grows, and never shrinks).
fn wasm_memory() -> f64 {
    wasm_bindgen::memory()
        .unchecked_into::<js_sys::WebAssembly::Memory>()
        .buffer()
        .unchecked_into::<js_sys::ArrayBuffer>()
        .byte_length() as f64
}

#[wasm_bindgen_test]
fn one_huge_text_is_weighed_in_parts_without_memory_for_it() {
    // A piece longer than a round is encoded and weighed in parts, cut between code points
    // (a surrogate pair or a UTF-8 sequence is never split; a whitespace run goes on across
    // a cut): the weight of the whole, and wasm memory, which never shrinks, not grown by
    // the text's size (it was, by 2 to 3 bytes a character).
    use chat_history_reducer::estimate::{message_tokens, text_weight, Weights};
    let w = Weights::default();
    let mut next = xorshift(2024);
    for (case, len) in [65_535usize, 65_536, 65_537, 200_001, 3_000_000]
        .into_iter()
        .enumerate()
    {
        let text = random_text(&mut next, len, |r| match r % 9 {
            0 => ' ',
            1 => '😀',
            2 => '漢',
            3 => 'é',
            _ => (b'a' + (r % 26) as u8) as char,
        });
        let message = Object::new();
        Reflect::set(&message, &"role".into(), &"user".into()).unwrap();
        Reflect::set(&message, &"content".into(), &text.as_str().into()).unwrap();
        let before = wasm_memory();
        let got = wasm::estimate_tokens(&Array::of1(&message), None).unwrap();
        let want = message_tokens(
            text_weight("user", &w) + text_weight(&text, &w),
            0,
            3.0,
            0.0,
        );
        assert_eq!(got, want, "case {case}: {len} characters");
        if len > 1_000_000 {
            let grown = wasm_memory() - before;
            assert!(
                grown <= 1024.0 * 1024.0,
                "wasm memory grew by {grown} bytes"
            );
        }
    }
}

#[wasm_bindgen_test]
fn estimating_a_huge_history_needs_no_memory_for_its_texts() {
    // 32 million characters of text: encoded a round at a time, never all at once (which
    // grew wasm memory by their size, for good: a wasm memory does not shrink).
    let text = js_sys::JsString::from("A line of a long tool result, with some digits 12345.\n")
        .repeat(300)
        .slice(0, 16_000);
    let messages = Array::new();
    for i in 0..2000 {
        let message = Object::new();
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        Reflect::set(&message, &"role".into(), &role.into()).unwrap();
        Reflect::set(&message, &"content".into(), &text).unwrap();
        messages.push(&message);
    }
    let before = wasm_memory();
    let tokens = wasm::estimate_tokens(&messages, None).unwrap();
    assert!(tokens > 2000.0 * 16_000.0 / 8.0, "{tokens}");
    let grown = wasm_memory() - before;
    assert!(
        grown <= 4.0 * 1024.0 * 1024.0,
        "wasm memory grew by {grown} bytes"
    );
}

/// A panic reads as its message on the console (the `console_error_panic_hook` feature).
/// The package's hook writes to a recording `console.error`; the test runner's hook, which
/// `should_panic` reads, hears of the panic only when the message was recorded.
#[cfg(feature = "console_error_panic_hook")]
#[wasm_bindgen_test]
#[should_panic(expected = "a test's panic, 42")]
fn a_panic_reads_as_its_message_on_the_console() {
    let runner = std::panic::take_hook();
    wasm::set_panic_hook();
    let package = std::panic::take_hook();
    let first = std::sync::atomic::AtomicBool::new(true);
    std::panic::set_hook(Box::new(move |info| {
        // (Later panics, of failing tests, go to the runner as before.)
        if !first.swap(false, std::sync::atomic::Ordering::Relaxed) {
            return runner(info);
        }
        let console = get(&js_sys::global(), "console");
        let error = get(&console, "error");
        let seen = Array::new();
        let record =
            Function::new_with_args("seen", "return (...a) => { seen.push(a.join(' ')); }")
                .call1(&JsValue::NULL, &seen)
                .expect("a recorder");
        Reflect::set(&console, &"error".into(), &record).expect("console.error replaced");
        package(info);
        Reflect::set(&console, &"error".into(), &error).expect("console.error restored");
        if seen.join("\n").includes("a test's panic, 42", 0) {
            runner(info);
        }
    }));
    panic!("a test's panic, {}", 42);
}
