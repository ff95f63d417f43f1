//! Unit tests of the HTTP transport: the SSE parser, header encoding, the token command and
//! what a refusal says.

use super::*;

fn events(items: Vec<SseItem>) -> Vec<Vec<u8>> {
    items
        .into_iter()
        .filter_map(|i| match i {
            SseItem::Event(d) => Some(d),
            SseItem::LastId(_) | SseItem::Retry(_) => None,
            SseItem::TooLarge { .. } => panic!("unexpected cut-off"),
        })
        .collect()
}

#[test]
fn sse_events_across_chunks() {
    let mut p = SseParser::new(1 << 20);
    assert!(
        p.feed(b"event: message\r\nid: 1\r\ndata: {\"a\":")
            .is_empty()
    );
    let ev = events(p.feed(b"1}\r\n\r\n: comment\n\ndata: x\ndata: y\n\n"));
    assert_eq!(ev, vec![b"{\"a\":1}".to_vec(), b"x\ny".to_vec()]);
}

#[test]
fn lines_may_end_in_a_lone_cr_and_a_leading_bom_is_dropped() {
    let mut p = SseParser::new(1 << 20);
    let ev = events(p.feed(b"\xEF\xBB\xBFdata: a\r\rdata: b\r\n\r\ndata: c\n\n"));
    assert_eq!(ev, vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
    // A CR at a chunk's end and its LF in the next are one line end.
    assert!(p.feed(b"data: d\r").is_empty());
    assert_eq!(events(p.feed(b"\n\r\n")), vec![b"d".to_vec()]);
    // A BOM split over chunks; and only at the start.
    let mut p = SseParser::new(1 << 20);
    assert!(p.feed(b"\xEF\xBB").is_empty());
    let ev = events(p.feed(b"\xBFdata: \xEF\xBB\xBFx\n\n"));
    assert_eq!(ev, vec![b"\xEF\xBB\xBFx".to_vec()]);
    // Something that only starts like a BOM is kept.
    let mut p = SseParser::new(1 << 20);
    assert_eq!(
        p.feed(b"\xEFdata: y\n\ndata: z\n\n"),
        vec![SseItem::Event(b"z".to_vec())]
    );
}

#[test]
fn an_oversize_event_is_cut_off_while_it_streams_and_the_next_one_is_read() {
    let mut p = SseParser::new(64);
    let mut cut = Vec::new();
    assert!(p.feed(b"data: {\"jsonrpc\":\"2.0\",\"id\":7,").is_empty());
    // The limit is passed in the middle of a chunk: the parser says so at once, before
    // the event ends, and holds no more of it from then on.
    for _ in 0..1000 {
        cut.extend(p.feed(&[b'x'; 1000]));
        assert!(p.buffered() <= 64 + FIELD_SLACK);
    }
    assert_eq!(cut.len(), 1, "{cut:?}");
    let SseItem::TooLarge { prefix } = &cut[0] else {
        panic!("{cut:?}")
    };
    assert_eq!(crate::jsonrpc::sniff_numeric_id(prefix), Some(7));
    // More data lines of the same event are skipped too; the next event is read whole.
    assert!(p.feed(b"\ndata: more\n").is_empty());
    let ev = events(p.feed(b"\ndata: {\"id\":8}\n\n"));
    assert_eq!(ev, vec![b"{\"id\":8}".to_vec()]);
}

#[test]
fn an_event_of_many_small_data_lines_is_bounded_too() {
    let mut p = SseParser::new(100);
    let mut items = Vec::new();
    for _ in 0..100 {
        items.extend(p.feed(b"data: 0123456789\n"));
    }
    assert_eq!(items.len(), 1);
    assert!(matches!(items[0], SseItem::TooLarge { .. }));
    assert!(p.feed(b"\n").is_empty());
    assert_eq!(events(p.feed(b"data: ok\n\n")), vec![b"ok".to_vec()]);
}

#[test]
fn an_event_exactly_at_the_limit_passes() {
    let mut p = SseParser::new(10);
    assert_eq!(
        events(p.feed(b"data: 0123456789\n\n")),
        vec![b"0123456789".to_vec()]
    );
    assert!(matches!(
        p.feed(b"data: 0123456789a\n\n").as_slice(),
        [SseItem::TooLarge { .. }]
    ));
}

#[test]
fn ids_and_retry_are_kept_for_a_resumption() {
    let mut p = SseParser::new(1 << 20);
    // The priming event of 2025-11-25: an id and a delay, no data.
    let items = p.feed(b"id: 41\nretry: 2500\ndata: \n\n");
    assert_eq!(
        items,
        vec![SseItem::Retry(2500), SseItem::LastId(b"41".to_vec())]
    );
    let items = p.feed(b"id:42\ndata: {}\n\n");
    assert_eq!(
        items,
        vec![
            SseItem::Event(b"{}".to_vec()),
            SseItem::LastId(b"42".to_vec())
        ]
    );
    // A retry that is not all digits, and an id holding NUL, are ignored.
    let items = p.feed(b"retry: 1s\nretry: -5\nid: a\0b\ndata: x\n\n");
    assert_eq!(items, vec![SseItem::Event(b"x".to_vec())]);
    // A bare `id` resets it; a huge retry is "as long as it gets", then bounded.
    let items = p.feed(b"id\nretry: 99999999999999999999999\n\n");
    assert_eq!(
        items,
        vec![SseItem::Retry(u64::MAX), SseItem::LastId(Vec::new())]
    );
    assert_eq!(bounded_retry(u64::MAX), RETRY_MAX);
    assert_eq!(bounded_retry(0), RETRY_MIN);
    assert_eq!(bounded_retry(1500), Duration::from_millis(1500));
    assert_eq!(event_id_header(b""), None);
    assert_eq!(event_id_header(b"41").unwrap(), "41");
    assert_eq!(event_id_header(b"a\nb"), None);
}

#[test]
fn an_event_answers_its_request_only() {
    assert!(answers(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#, 7));
    assert!(answers(br#"{"result":{"id":3},"jsonrpc":"2.0","id":7}"#, 7));
    assert!(!answers(br#"{"jsonrpc":"2.0","id":8,"result":{}}"#, 7));
    // The server's own request may carry the same number: it is no answer.
    assert!(!answers(
        br#"{"jsonrpc":"2.0","id":7,"method":"roots/list"}"#,
        7
    ));
    assert!(!answers(
        br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#,
        7
    ));
    assert!(!answers(b"not json", 7));
}

/// The server side's decoding (src/frontend/http/stateless.rs), for the round trip.
fn decoded(header: &str) -> Option<String> {
    use base64::Engine;
    match header
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
        None => Some(header.to_owned()),
    }
}

#[test]
fn names_that_are_not_plain_ascii_travel_base64() {
    assert_eq!(header_text("get_weather"), "get_weather");
    assert_eq!(header_text("file:///a b.txt"), "file:///a b.txt");
    assert_eq!(header_text("café"), "=?base64?Y2Fmw6k=?=");
    for odd in [
        "café",
        " lead",
        "trail ",
        "tab\there",
        "=?base64?eA==?=",
        "日本",
    ] {
        let h = header_text(odd);
        assert!(h.starts_with("=?base64?"), "{odd:?} -> {h}");
        assert_eq!(decoded(&h).as_deref(), Some(odd));
    }
    assert_eq!(
        name_of(r#"{"params":{"uri":"sample://x","arguments":{"n":1}}}"#).as_deref(),
        Some("sample://x")
    );
    assert_eq!(name_of(r#"{"params":{"name":"t"}}"#).as_deref(), Some("t"));
    assert_eq!(name_of("{}"), None);
}

#[test]
fn a_refusal_names_the_challenge_and_never_the_token() {
    let mut h = HeaderMap::new();
    h.append(
        reqwest::header::WWW_AUTHENTICATE,
        HeaderValue::from_static(r#"Bearer realm="loom", error="invalid_token""#),
    );
    h.append(
        reqwest::header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Basic realm=x"),
    );
    let c = challenge_of(&h);
    assert_eq!(
        c.as_deref(),
        Some(r#"Bearer realm="loom", error="invalid_token", Basic realm=x"#)
    );
    let text = needs_auth_text("http://h/mcp", c.as_deref(), true);
    assert!(
        text.starts_with("needs authentication: http://h/mcp answered 401"),
        "{text}"
    );
    assert!(text.contains("bearer_token_command ran again") && text.contains("invalid_token"));
    assert!(challenge_of(&HeaderMap::new()).is_none());
    let long = HeaderValue::from_str(&"x".repeat(5000)).unwrap();
    let mut h = HeaderMap::new();
    h.insert(reqwest::header::WWW_AUTHENTICATE, long);
    assert_eq!(challenge_of(&h).unwrap().len(), CHALLENGE_MAX_CHARS);
}

#[test]
fn a_shown_url_keeps_no_secret() {
    assert_eq!(
        shown_url("https://user:hunter2@example.com:8443/mcp?key=hunter2#frag"),
        "https://example.com:8443/mcp"
    );
    assert_eq!(
        shown_url("http://127.0.0.1:9/mcp"),
        "http://127.0.0.1:9/mcp"
    );
    assert_eq!(shown_url("http://tok@h/mcp"), "http://h/mcp");
    assert_eq!(shown_url("not a url ?key=hunter2"), "the configured URL");
}

#[test]
fn the_token_is_the_trimmed_output() {
    let v = bearer_from_output(b"  abc.def-1\n").unwrap();
    assert_eq!(v, "Bearer abc.def-1");
    assert!(v.is_sensitive());
    assert_eq!(bearer_from_output(b" \n"), Err(TokenError::Empty));
    assert_eq!(bearer_from_output(b"a\nb"), Err(TokenError::NotAHeader));
    assert_eq!(bearer_from_output(b"\xff"), Err(TokenError::NotText));
    // Found by the proptest below in CI: a header takes obs-text, a bearer token does not.
    assert_eq!(
        bearer_from_output("\u{c0}".as_bytes()),
        Err(TokenError::NotAHeader)
    );
    assert_eq!(bearer_from_output(b"a b"), Err(TokenError::NotAHeader));
    assert_eq!(
        bearer_from_output(&vec![b'a'; TOKEN_MAX_BYTES + 1]),
        Err(TokenError::TooLong)
    );
}

#[tokio::test]
async fn the_token_command_runs_without_a_shell_and_says_why_it_failed() {
    let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let v = run_token_command(&argv(&["echo", "t0k;$HOME"]))
        .await
        .unwrap();
    // No shell: `;` and `$HOME` are the token's own characters.
    assert_eq!(v, "Bearer t0k;$HOME");
    let err = run_token_command(&argv(&["sh", "-c", "echo 'not signed in' >&2; exit 3"]))
        .await
        .unwrap_err();
    assert!(matches!(err, TokenCommandError::Failed(_)), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("exit status: 3") && !text.contains("not signed in"),
        "{text}"
    );
    let err = run_token_command(&argv(&["/nonexistent/token-helper"]))
        .await
        .unwrap_err();
    assert!(matches!(err, TokenCommandError::Spawn { .. }), "{err:?}");
    assert!(err.to_string().contains("cannot run"), "{err}");
    let err = run_token_command(&argv(&["true"])).await.unwrap_err();
    assert_eq!(err, TokenCommandError::Output(TokenError::Empty));
    assert_eq!(err.to_string(), "bearer_token_command printed nothing");
}

proptest::proptest! {
    #[test]
    fn any_name_becomes_a_header_that_decodes_back(name in ".*") {
        let h = header_text(&name);
        proptest::prop_assert!(HeaderValue::from_str(&h).is_ok(), "{h:?}");
        proptest::prop_assert_eq!(decoded(&h), Some(name));
    }

    #[test]
    fn token_output_never_panics_and_a_token_is_one_header_line(out in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
        if let Ok(v) = bearer_from_output(&out) {
            let text = v.to_str();
            proptest::prop_assert!(text.is_ok(), "{v:?}");
            let text = text.unwrap_or_default();
            proptest::prop_assert!(text.starts_with("Bearer ") && text.len() > 7);
            proptest::prop_assert!(!text[7..].contains(' '));
            proptest::prop_assert!(!text.contains('\n') && !text.contains('\r'));
        }
    }

    #[test]
    fn challenges_never_panic(raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
        if let Ok(v) = HeaderValue::from_bytes(&raw) {
            let mut h = HeaderMap::new();
            h.insert(reqwest::header::WWW_AUTHENTICATE, v);
            if let Some(c) = challenge_of(&h) {
                proptest::prop_assert!(c.chars().count() <= CHALLENGE_MAX_CHARS);
            }
        }
    }
}

fn fragments() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    proptest::collection::vec(
        prop_oneof![
            Just(b"data: ".to_vec()),
            Just(b"data:".to_vec()),
            Just(b"event: message".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"\n\n".to_vec()),
            Just(b": comment".to_vec()),
            Just(b"id: ".to_vec()),
            Just(b"retry: ".to_vec()),
            Just(b"\r".to_vec()),
            Just(BOM.to_vec()),
            "[0-9]{1,25}".prop_map(String::into_bytes),
            proptest::collection::vec(any::<u8>(), 0..40),
        ],
        0..80,
    )
    .prop_map(|parts| parts.concat())
}

proptest::proptest! {
    #[test]
    fn the_parser_stays_within_its_limit_whatever_the_stream_and_its_chunking(
        stream in fragments(),
        cuts in proptest::collection::vec(0usize..2000, 0..8),
        limit in 1usize..120,
    ) {
        let mut whole = SseParser::new(limit);
        let expected = whole.feed(&stream);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(stream.len())).collect();
        cuts.sort_unstable();
        let mut pieces = SseParser::new(limit);
        let mut got = Vec::new();
        let mut at = 0;
        for cut in cuts.into_iter().chain([stream.len()]) {
            got.extend(pieces.feed(&stream[at..cut]));
            proptest::prop_assert!(pieces.buffered() <= limit + FIELD_SLACK + 1);
            at = cut;
        }
        proptest::prop_assert_eq!(&got, &expected);
        for item in &got {
            if let SseItem::Event(data) = item {
                proptest::prop_assert!(data.len() <= limit, "{} > {limit}", data.len());
            }
        }
    }
}

#[test]
fn the_typed_errors_read_as_the_words_people_saw_before() {
    assert_eq!(
        LaunchError::TokenEnvUnset("API_TOKEN".into()).to_string(),
        "environment variable API_TOKEN (bearer_token_env) is not set"
    );
    assert_eq!(
        TokenCommandError::TooLong.to_string(),
        "bearer_token_command: printed more than 16 KiB"
    );
    assert_eq!(
        TokenCommandError::Timeout(30).to_string(),
        "bearer_token_command did not finish within 30s"
    );
    assert_eq!(RenewError::Timeout(10).to_string(), "no answer within 10s");
    assert_eq!(
        RenewError::from(ReplyError::NoAnswer(REINIT_ID.into())).to_string(),
        "no answer to loom-reinitialize"
    );
    assert_eq!(
        RenewError::VersionChanged {
            now: "2025-06-18".into(),
            before: "2025-11-25".into()
        }
        .to_string(),
        "the server now speaks \"2025-06-18\", not \"2025-11-25\" as before"
    );
}
