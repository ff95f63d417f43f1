//! The workbench as a person uses it all day: nothing they type is taken by something else,
//! nothing they wrote is lost, and every action acts on what is on screen.

use super::app::{ApprovalView, Msg, Pane};
use super::tests::{press, screen, started};
use crate::frontend::engine::Request;
use crate::types::events::{ApprovalRequest, Decision, Event, Sequenced};
use crossterm::event::KeyCode;
use serde_json::json;
use std::time::Duration;

fn approval(id: u64) -> Msg {
    Msg::Event(Sequenced {
        seq: 1000 + id,
        event: Event::ApprovalRequested(ApprovalRequest {
            approval: id,
            call: 40 + id,
            server: "sample".into(),
            tool: "sample_cancel_order".into(),
            original: "cancel_order".into(),
            annotations: json!({ "destructiveHint": true }),
            arguments: json!({ "order_id": 7 }),
            timeout_secs: 60,
        }),
    })
}

/// Feeds messages and returns every request they produced.
fn sent(a: &mut super::app::App, msgs: Vec<Msg>) -> Vec<Request> {
    let mut out = Vec::new();
    for m in msgs {
        let reqs = a.update(m);
        out.extend(reqs.iter().map(|(_, r)| r.clone()));
        super::tests::answer(a, reqs);
    }
    out
}

fn typed(text: &str) -> Vec<Msg> {
    text.chars().map(Msg::char).collect()
}

fn decisions(reqs: &[Request]) -> Vec<Decision> {
    reqs.iter()
        .filter_map(|r| match r {
            Request::Approve { decision, .. } => Some(decision.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn typing_sql_while_a_call_waits_keeps_every_key_in_the_editor() {
    let mut a = started();
    press(&mut a, vec![Msg::char('5')]);
    assert_eq!(a.focus, Pane::Editor);
    press(&mut a, typed("SELECT "));
    press(&mut a, vec![approval(1)]);
    let s = screen(&a);
    assert_eq!(a.approval_view(), ApprovalView::Banner);
    assert!(
        s.contains("approval waiting") && s.contains("ctrl-g"),
        "{s}"
    );
    assert!(!s.contains("approve a call?"), "{s}");
    // The exact keys of the report: `a` of "amount" never approves, nothing is lost.
    let reqs = sent(&mut a, typed("amount"));
    assert!(decisions(&reqs).is_empty(), "{reqs:?}");
    assert_eq!(a.editor.lines().join("\n"), "SELECT amount");
    assert_eq!(a.approvals.len(), 1);
    // Opened on purpose, the prompt answers at once; the editor keeps its text.
    press(&mut a, vec![Msg::ctrl('g')]);
    let s = screen(&a);
    assert!(
        s.contains("approve a call?") && s.contains("approve once"),
        "{s}"
    );
    let reqs = sent(&mut a, vec![Msg::char('a')]);
    assert_eq!(decisions(&reqs), vec![Decision::Once]);
    assert!(a.approvals.is_empty());
    assert_eq!(a.editor.lines().join("\n"), "SELECT amount");
    assert_eq!(a.focus, Pane::Editor);
}

#[test]
fn a_prompt_that_opens_by_itself_takes_keys_only_after_its_grace() {
    let mut a = started();
    assert_eq!(a.focus, Pane::Traffic);
    a.approval_grace = Duration::from_secs(3600);
    press(&mut a, vec![approval(2)]);
    let s = screen(&a);
    assert!(s.contains("approve a call?"), "{s}");
    assert!(s.contains("keys answer in a moment"), "{s}");
    assert_eq!(a.approval_view(), ApprovalView::Prompt { armed: false });
    // Keys pressed before the grace ends go where they were meant to go.
    let reqs = sent(&mut a, vec![Msg::char('a'), Msg::char('d'), Msg::char('4')]);
    assert!(decisions(&reqs).is_empty(), "{reqs:?}");
    assert_eq!(a.focus, Pane::Catalog, "the `4` reached the panes");
    // Once the grace is over, the prompt decides.
    a.approval_grace = Duration::ZERO;
    let s = screen(&a);
    assert!(s.contains("approve once"), "{s}");
    let reqs = sent(&mut a, vec![Msg::char('A')]);
    assert_eq!(decisions(&reqs), vec![Decision::Session]);
}

#[test]
fn esc_sets_a_prompt_aside_and_ctrl_g_brings_it_back() {
    let mut a = started();
    a.approval_grace = Duration::ZERO;
    press(&mut a, vec![approval(3)]);
    screen(&a);
    press(&mut a, vec![Msg::code(KeyCode::Esc)]);
    let s = screen(&a);
    assert_eq!(a.approval_view(), ApprovalView::Banner);
    assert!(s.contains("approval waiting"), "{s}");
    // Set aside, its keys are the panes' again.
    let reqs = sent(&mut a, vec![Msg::char('d')]);
    assert!(decisions(&reqs).is_empty());
    press(&mut a, vec![Msg::ctrl('g')]);
    screen(&a);
    let reqs = sent(&mut a, vec![Msg::char('d'), Msg::code(KeyCode::Enter)]);
    assert_eq!(decisions(&reqs), vec![Decision::Deny { reason: None }]);
}

#[test]
fn querying_a_dataset_keeps_the_sql_being_written() {
    let mut a = started();
    press(&mut a, vec![Msg::char('5')]);
    press(&mut a, typed("SELECT 42 AS keep"));
    press(
        &mut a,
        vec![Msg::code(KeyCode::Esc), Msg::char('4'), Msg::char('s')],
    );
    assert!(
        a.editor_text().starts_with("SELECT * FROM "),
        "{}",
        a.editor_text()
    );
    // ctrl-up brings the draft back from the history (just before the query `s` ran)…
    press(
        &mut a,
        vec![
            Msg::char('5'),
            Msg::ctrl_code(KeyCode::Up),
            Msg::ctrl_code(KeyCode::Up),
        ],
    );
    assert_eq!(a.editor_text(), "SELECT 42 AS keep");
    // …and undo walks back over the replacement too.
    let mut b = started();
    press(&mut b, vec![Msg::char('5')]);
    press(&mut b, typed("SELECT 42 AS keep"));
    press(
        &mut b,
        vec![
            Msg::code(KeyCode::Esc),
            Msg::char('4'),
            Msg::char('s'),
            Msg::char('5'),
        ],
    );
    for _ in 0..2 {
        press(&mut b, vec![Msg::ctrl('u')]);
    }
    assert_eq!(b.editor_text(), "SELECT 42 AS keep");
}

#[test]
fn walking_the_history_and_back_returns_the_draft() {
    let mut a = started();
    press(&mut a, vec![Msg::char('5')]);
    press(&mut a, typed("SELECT 1"));
    press(&mut a, vec![Msg::ctrl('e')]);
    press(&mut a, typed(" + 1"));
    assert_eq!(a.editor_text(), "SELECT 1 + 1");
    press(&mut a, vec![Msg::ctrl_code(KeyCode::Up)]);
    assert_eq!(a.editor_text(), "SELECT 1");
    press(&mut a, vec![Msg::ctrl_code(KeyCode::Down)]);
    assert_eq!(a.editor_text(), "SELECT 1 + 1", "the draft came back");
}
