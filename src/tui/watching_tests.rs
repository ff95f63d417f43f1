//! Watching the session on a small or busy screen: datasets told apart at 80x24, the
//! approval dialog's keys all on screen, a cancelled or failed query that keeps the grid the
//! person was reading, running calls with their server's progress, and a latency that is the
//! servers' own (not the time a person took to approve).

use super::app::{Msg, Pane};
use super::tests::{pane_text, press, screen, started};
use crate::frontend::engine::{DatasetView, EngineError};
use crate::types::events::{ApprovalRequest, Event, Sequenced};
use serde_json::json;

fn event(seq: u64, event: Event) -> Msg {
    Msg::event(Sequenced { seq, event })
}

fn dataset(name: &str, rows: u64) -> DatasetView {
    DatasetView {
        dataset: name.into(),
        rows,
        columns: vec![("order_id".into(), "BIGINT".into())],
        source: "sample/list_orders".into(),
        pinned: false,
        created: "2026-11-30T10:00:01Z".into(),
        lineage: None,
    }
}

/// Annoyance 5: at 80x24 `sample_list…` three times; the differing end stays.
#[test]
fn datasets_of_one_tool_are_told_apart_at_80x24() {
    let mut a = started();
    a.size = (80, 24);
    a.catalog.set_datasets(
        u64::MAX,
        vec![
            dataset("sample_list_orders_1", 1000),
            dataset("sample_list_orders_17", 300),
            dataset("sample_list_customers_3", 5000),
        ],
    );
    a.focus = Pane::Catalog;
    let text = pane_text(&a, Pane::Catalog);
    let names: Vec<String> = text
        .lines()
        .filter(|l| l.contains("▸ sample"))
        .map(|l| {
            l.split_whitespace()
                .find(|w| w.starts_with("sample"))
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(names.len(), 3, "{text}");
    assert!(names.iter().any(|n| n.ends_with("_17")), "{names:?}");
    assert!(names.iter().any(|n| n.ends_with("_1")), "{names:?}");
    let distinct: std::collections::HashSet<&String> = names.iter().collect();
    assert_eq!(distinct.len(), 3, "{names:?}");
    assert!(names.iter().any(|n| n.ends_with("_3")), "{names:?}");
}

/// Annoyance 6: at 80 columns the dialog kept `… d` of its keys and wrapped `serve│r`.
#[test]
fn the_approval_dialog_keeps_every_key_and_whole_words_at_80_columns() {
    let mut a = started();
    a.size = (80, 24);
    a.approvals.grace = std::time::Duration::ZERO;
    press(
        &mut a,
        vec![event(
            1001,
            Event::ApprovalRequested(ApprovalRequest {
                approval: 1,
                call: 41,
                server: "sample".into(),
                tool: "sample_list_orders".into(),
                original: "list_orders".into(),
                annotations: json!({ "readOnlyHint": true }),
                arguments: json!({ "limit": 1000 }),
                timeout_secs: 120,
                ..Default::default()
            }),
        )],
    );
    screen(&a);
    let s = screen(&a);
    assert!(s.contains("approve a call?"), "{s}");
    for key in [" a ", " A ", " d ", "deny", " esc ", "later"] {
        assert!(s.contains(key), "{key} missing:\n{s}");
    }
    for word in ["server", "sample)", "without", "answer"] {
        assert!(s.contains(word), "{word} cut:\n{s}");
    }
}

/// Annoyance 8 and B8: a cancel (or a failure) keeps the grid on screen, said to be the
/// previous result; the history records the cancel as `cancelled`, not `error`.
#[test]
fn a_cancelled_or_failed_query_keeps_the_grid_and_history_says_cancelled() {
    let mut a = started();
    a.size = (160, 45);
    press(&mut a, vec![Msg::char('5')]);
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT * FROM small".into()]);
    press(&mut a, vec![Msg::ctrl('e')]);
    assert!(a.results.grid.is_some());
    a.editor.area = tui_textarea::TextArea::new(vec![
        "SELECT sum(i*i % 7) FROM range(3000000000) t(i)".into(),
    ]);
    a.focus = Pane::Editor;
    let mut queue = a.update(Msg::ctrl('e'));
    let (t, _) = queue.pop().expect("the query is sent");
    a.update(Msg::Reply(
        t,
        Err(EngineError::Cancelled("the query was cancelled".into())),
    ));
    let g = a.results.grid.as_ref().expect("the grid stays");
    assert_eq!(g.result.table, "_loom_result_3");
    let s = screen(&a);
    assert!(s.contains("query cancelled"), "{s}");
    assert!(s.contains("previous result: "), "{s}");
    assert!(s.contains("450 rows"), "{s}");
    let last = a.editor.history.last().expect("recorded");
    assert_eq!(last.outcome, super::app::Outcome::Cancelled);
    press(&mut a, vec![Msg::ctrl('r')]);
    let s = screen(&a);
    assert!(s.contains("cancelled"), "{s}");
    press(&mut a, vec![Msg::code(crossterm::event::KeyCode::Esc)]);
    // A failure too: the error above, the grid below.
    a.focus = Pane::Editor;
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT nope FROM t".into()]);
    press(&mut a, vec![Msg::ctrl('e')]);
    let s = screen(&a);
    assert!(s.contains("query failed") && s.contains("nope"), "{s}");
    assert!(s.contains("450 rows"), "{s}");
}

/// Annoyance 13: a running call shows what its server says of its progress, in Traffic and
/// Detail; the progress goes with the call.
#[test]
fn a_running_call_shows_its_progress() {
    let mut a = started();
    a.size = (160, 45);
    let mut c = super::tests::call(9, "sample_slow_count", "running", None, "model");
    c.millis = 0;
    press(&mut a, vec![event(509, Event::CallStarted(c.clone()))]);
    a.now_secs = crate::types::time::parse_iso("2026-11-30T10:00:11Z").unwrap();
    a.detail.shown = super::app::Detail::Call(Box::new(crate::types::events::CallRecord {
        summary: c.clone(),
        request: "{}".into(),
        response: String::new(),
    }));
    press(
        &mut a,
        vec![event(
            510,
            Event::CallProgress {
                call: 9,
                progress: 40.0,
                total: Some(500.0),
                message: None,
            },
        )],
    );
    let s = screen(&a);
    assert!(s.contains("running 40/500"), "Traffic:\n{s}");
    assert!(s.contains("2 s so far"), "Detail:\n{s}");
    assert!(s.contains("40/500 · c cancels"), "Detail:\n{s}");
    let mut done = c;
    done.outcome = crate::types::events::Outcome::Passed;
    press(&mut a, vec![event(511, Event::CallFinished(done))]);
    assert!(a.traffic.progress.is_empty());
}

/// Annoyance 11: `7 calls p50 5667 ms` for tools that answer in 0 ms: the wait for a person
/// is not the server's latency.
#[test]
fn the_servers_p50_leaves_out_the_wait_for_a_person() {
    let mut a = started();
    a.size = (160, 45);
    for n in 20..23 {
        let mut c = super::tests::call(n, "sample_get_weather", "passed", None, "model");
        c.millis = 5_600;
        c.waited_millis = Some(5_600);
        press(&mut a, vec![event(600 + n, Event::CallFinished(c))]);
    }
    a.focus = Pane::Servers;
    let s = screen(&a);
    // 12, 24, 36, 48 ms and three calls of 0 ms once the waits are left out.
    assert!(s.contains("7 calls p50 12 ms"), "{s}");
}

/// Report item 18: an attach whose session ended says so in its header and status line, and
/// that it waits for the next session of its config; once joined, the new workbench goes on
/// from the old one's tickets, size and clock, under the new session's title.
#[test]
fn an_ended_session_is_said_and_the_next_one_is_joined() {
    let mut a = super::tests::started();
    a.attached = true;
    a.reattach_to = Some("/home/me/loom.toml".into());
    a.update(Msg::SessionEnded);
    let s = super::tests::screen(&a);
    let header = s.lines().next().unwrap_or_default();
    assert!(
        header.contains("SESSION ENDED · waiting to reattach"),
        "{s}"
    );
    assert!(header.contains("q quit"), "{s}");
    let footer = s.lines().last().unwrap_or_default();
    assert!(
        !footer.contains("detach"),
        "nothing is left to detach from: {s}"
    );
    assert!(
        s.contains(
            "the session ended · q quits · waiting for a new session of /home/me/loom.toml to reattach"
        ),
        "{s}"
    );
    // Requests on their way as it ended fail, and leave that line in place.
    let reqs = a.update(Msg::char('r'));
    let reqs = if reqs.is_empty() { a.start() } else { reqs };
    for (t, _) in reqs {
        a.update(Msg::Reply(
            t,
            Err(EngineError::Disconnected("the session ended".into())),
        ));
    }
    assert!(
        a.status
            .as_ref()
            .is_some_and(|(t, _)| t.contains("waiting for a new session")),
        "{:?}",
        a.status
    );
    // The old workbench's last tickets: a late reply to one of them never meets a new one.
    let old = a.start().iter().map(|(t, _)| *t).max().expect("requests");
    let mut b = super::tests::app();
    b.rejoined(&a, "loom attach 4242".into());
    assert_eq!(b.title, "loom attach 4242");
    assert_eq!(b.size, a.size);
    assert_eq!(b.reattach_to, a.reattach_to);
    assert!(!b.session_ended);
    let new = b.start().iter().map(|(t, _)| *t).min().expect("requests");
    assert!(new > old, "{new} after {old}");
    let s = super::tests::screen(&b);
    assert!(!s.contains("SESSION ENDED"), "{s}");
    assert!(s.contains("reattached: loom attach 4242"), "{s}");
}
