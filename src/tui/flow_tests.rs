//! Data from tool to tool at the workbench: a `loom_call_each` batch is one Traffic line with
//! live progress that opens into its calls, a bound call's Detail lists its bindings, a
//! dataset's Detail draws its lineage as a chain, and the approval prompt of a batch shows the
//! count, the statement and every call's arguments.

use super::app::{Msg, Pane};
use super::tests::{call, pane_text, press, screen, started};
use crate::types::data::Lineage;
use crate::types::events::{ApprovalRequest, BatchAsk, Binding, CallSummary, Event, Sequenced};
use crossterm::event::KeyCode;
use serde_json::json;

fn ev(seq: u64, event: Event) -> Msg {
    Msg::event(Sequenced { seq, event })
}

fn batch(n: u64, outcome: &str) -> CallSummary {
    CallSummary {
        server: "loom".into(),
        arguments: "{\"tool\":\"sample_get_order_details\",\"sql\":\"SELECT …\"}".into(),
        ..call(n, "loom_call_each", outcome, None, "model")
    }
}

fn member(n: u64, of: u64, outcome: &str) -> CallSummary {
    CallSummary {
        batch: Some(of),
        via: Some("loom_call_each".into()),
        ..call(n, "sample_get_order_details", outcome, None, "model")
    }
}

#[test]
fn a_batch_is_one_traffic_line_with_live_progress_that_opens_into_its_calls() {
    let mut a = started();
    let before = a.traffic.visible_calls().len();
    press(
        &mut a,
        vec![ev(10, Event::CallStarted(batch(20, "running")))],
    );
    let mut seq = 11;
    for i in 0..3 {
        press(
            &mut a,
            vec![
                ev(seq, Event::CallStarted(member(21 + i, 20, "running"))),
                ev(seq + 1, Event::CallFinished(member(21 + i, 20, "passed"))),
                ev(
                    seq + 2,
                    Event::CallProgress {
                        call: 20,
                        progress: (i + 1) as f64,
                        total: Some(3.0),
                        message: None,
                    },
                ),
            ],
        );
        seq += 3;
    }
    // One line for the batch, whatever the number of its calls.
    assert_eq!(a.traffic.visible_calls().len(), before + 1);
    let t = pane_text(&a, Pane::Traffic);
    assert!(t.contains("▸ loom_call_each ×3"), "{t}");
    assert!(t.contains("running 3/3"), "{t}");
    assert!(!t.contains("sample_get_order_details"), "{t}");
    // l opens it: its calls in the order they were made, under it.
    press(&mut a, vec![Msg::char('1'), Msg::char('l')]);
    let shown: Vec<u64> = a.traffic.visible_calls().iter().map(|c| c.call).collect();
    assert_eq!(&shown[..4], &[20, 21, 22, 23], "{shown:?}");
    let t = pane_text(&a, Pane::Traffic);
    assert!(t.contains("▾ loom_call_each ×3"), "{t}");
    assert_eq!(t.matches("  · sample_get_orde").count(), 3, "{t}");
    // On one of its calls, h closes the batch and goes back to it.
    press(&mut a, vec![Msg::char('j'), Msg::char('j')]);
    assert_eq!(a.traffic.selected().map(|c| c.call), Some(22));
    press(&mut a, vec![Msg::char('h')]);
    assert_eq!(a.traffic.selected().map(|c| c.call), Some(20));
    assert_eq!(a.traffic.visible_calls().len(), before + 1);
    // Finished, it names what it made and how many of its calls failed.
    press(
        &mut a,
        vec![
            ev(seq, Event::CallFinished(member(24, 20, "error"))),
            ev(
                seq + 1,
                Event::CallFinished(CallSummary {
                    reference: Some("loom_call_each_3".into()),
                    ..batch(20, "passed")
                }),
            ),
        ],
    );
    let t = pane_text(&a, Pane::Traffic);
    assert!(t.contains("▸ loom_call_each ×4"), "{t}");
    assert!(t.contains("1 failed → loom_"), "{t}");
    // A filter lists every call it matches, batch or not: the four calls, and the batch whose
    // arguments name their tool.
    press(&mut a, vec![Msg::char('/')]);
    for c in "order_details".chars() {
        press(&mut a, vec![Msg::char(c)]);
    }
    press(&mut a, vec![Msg::code(KeyCode::Enter)]);
    assert_eq!(a.traffic.visible_calls().len(), 5);
}

#[test]
fn a_datasets_detail_draws_its_lineage_as_a_chain() {
    let mut a = started();
    // sample_list_customers_2 was made by a batch that read the orders and a parked log, and
    // the orders by their own call.
    press(
        &mut a,
        vec![ev(10, Event::CallFinished(batch(7, "intercepted")))],
    );
    for d in &mut a.catalog.datasets {
        d.lineage = match d.dataset.as_str() {
            "sample_list_customers_2" => Some(Lineage {
                call: Some(7),
                inputs: vec!["sample_list_orders_1".into(), "blob/3f2a9c".into()],
                sql: Some("SELECT order_id\n  FROM sample_list_orders_1".into()),
            }),
            "sample_list_orders_1" => Some(Lineage {
                call: Some(2),
                ..Lineage::default()
            }),
            _ => None,
        };
    }
    let at = a
        .catalog
        .datasets
        .iter()
        .position(|d| d.dataset == "sample_list_customers_2")
        .expect("the fixture's second dataset");
    press(&mut a, vec![Msg::char('4'), Msg::code(KeyCode::Enter)]);
    for _ in 0..8 {
        if a.detail.dataset() == Some("sample_list_customers_2") {
            break;
        }
        press(&mut a, vec![Msg::char('j'), Msg::code(KeyCode::Enter)]);
    }
    assert_eq!(a.detail.dataset(), Some("sample_list_customers_2"), "{at}");
    let lines: Vec<String> = a
        .detail
        .lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect();
    let chain = lines
        .iter()
        .position(|l| l == "lineage")
        .unwrap_or_else(|| panic!("a lineage heading: {lines:#?}"));
    assert_eq!(
        &lines[chain + 1..chain + 6],
        &[
            "  ← made by call #7 loom/loom_call_each",
            "  ← by the query SELECT order_id FROM sample_list_orders_1",
            "  ← read sample_list_orders_1",
            "      ← made by call #2 sample/sample_list_orders",
            "  ← read blob/3f2a9c",
        ],
        "{lines:#?}"
    );
}

#[test]
fn a_bound_call_lists_its_bindings_and_a_batch_prompt_shows_every_call() {
    let mut a = started();
    a.approvals.grace = std::time::Duration::ZERO;
    let binding = Binding {
        at: "/body".into(),
        source: "blob/3f2a9c lines matching \"ERROR\"".into(),
        inputs: vec!["blob/3f2a9c".into()],
        bytes: 48_213,
    };
    let arguments: Vec<serde_json::Value> = (0..40)
        .map(|i| json!({ "order_id": 7_300_000_000_000_000_000u64 + i * 7919 }))
        .collect();
    let req = ApprovalRequest {
        approval: 1,
        call: 30,
        server: "sample".into(),
        tool: "sample_write_note".into(),
        original: "write_note".into(),
        annotations: json!({ "destructiveHint": true }),
        arguments: arguments[0].clone(),
        timeout_secs: 60,
        bindings: vec![binding.clone()],
        batch: Some(BatchAsk {
            calls: 40,
            sql: "SELECT id AS order_id\n FROM orders_1".into(),
            arguments: arguments.clone(),
            inputs: vec!["orders_1".into()],
        }),
        reason: None,
    };
    press(
        &mut a,
        vec![
            ev(10, Event::CallStarted(batch(30, "running"))),
            ev(11, Event::ApprovalRequested(req)),
        ],
    );
    let s = screen(&a);
    assert!(s.contains("approve a batch of 40 calls?"), "{s}");
    assert!(
        s.contains("40 calls, one per row of: SELECT id AS order_id FROM orders_1"),
        "{s}"
    );
    assert!(
        s.contains("/body ← blob/3f2a9c lines matching \"ERROR\" · 48213 B"),
        "{s}"
    );
    assert!(s.contains("arguments of each call (40)"), "{s}");
    assert!(s.contains(" 1 {\"order_id\":7300000000000000000}"), "{s}");
    // Every call's arguments come into view by scrolling.
    let last = format!("40 {}", arguments[39]);
    let mut found = false;
    for _ in 0..20 {
        if screen(&a).contains(&last) {
            found = true;
            break;
        }
        press(&mut a, vec![Msg::code(KeyCode::PageDown)]);
    }
    assert!(found, "{}", screen(&a));
    // The call log's view of a bound call: where, from what, how large; never the value.
    press(&mut a, vec![Msg::char('d'), Msg::code(KeyCode::Enter)]);
    press(
        &mut a,
        vec![ev(
            12,
            Event::CallFinished(call(42, "sample_write_note", "passed", None, "model")),
        )],
    );
    press(
        &mut a,
        vec![Msg::char('1'), Msg::char('g'), Msg::code(KeyCode::Enter)],
    );
    let d = pane_text(&a, Pane::Detail);
    assert!(d.contains("bound into the arguments"), "{d}");
    assert!(d.contains("/body ← blob/3f2a9c lines matching"), "{d}");
}
