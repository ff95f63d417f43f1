//! The tool palette never fires a call the person did not mean: a required argument left at
//! the placeholder it was prefilled with, or a tool that may destroy something, is asked about
//! first, and only `y` answers (a second `enter` does not).

use super::app::{Msg, Overlay};
use super::daily_tests::{sent, typed};
use super::tests::{press, screen, started};
use crate::frontend::engine::Request;
use crossterm::event::KeyCode;
use serde_json::json;

fn calls(reqs: &[Request]) -> Vec<(String, serde_json::Value)> {
    reqs.iter()
        .filter_map(|r| match r {
            Request::CallTool { name, arguments } => Some((name.clone(), arguments.clone())),
            _ => None,
        })
        .collect()
}

fn asking(a: &super::app::App) -> bool {
    matches!(&a.overlay, Overlay::Palette(p) if p.question.is_some())
}

/// The report's keys: `:` `cancel_order` `enter` `enter` (and more `enter`s) call nothing; the
/// question names the placeholder and the destructive hint, `n` goes back to the arguments,
/// and a typed value still asks (destructive) until `y`.
#[test]
fn a_destructive_tool_with_a_placeholder_never_fires_on_enters() {
    let mut a = started();
    a.size = (160, 45);
    a.tools.push(json!({
        "name": "sample_cancel_order",
        "description": "Cancels an order. Destructive.",
        "annotations": { "destructiveHint": true, "readOnlyHint": false },
        "inputSchema": { "type": "object", "properties": { "order_id": { "type": "integer" } }, "required": ["order_id"] }
    }));
    press(&mut a, vec![Msg::char(':')]);
    press(&mut a, typed("cancel_order"));
    let reqs = sent(
        &mut a,
        vec![
            Msg::code(KeyCode::Enter),
            Msg::code(KeyCode::Enter),
            Msg::code(KeyCode::Enter),
            Msg::code(KeyCode::Enter),
        ],
    );
    assert!(calls(&reqs).is_empty(), "{reqs:?}");
    assert!(asking(&a));
    let s = screen(&a);
    assert!(s.contains("`order_id` is still the placeholder 0"), "{s}");
    assert!(s.contains("may destroy something"), "{s}");
    assert!(s.contains("y calls"), "{s}");
    // Typing while asked changes nothing; `n` goes back to the arguments as they were.
    press(&mut a, typed("7"));
    press(&mut a, vec![Msg::char('n')]);
    assert!(!asking(&a));
    let Overlay::Palette(p) = &a.overlay else {
        panic!("the palette stays open");
    };
    let super::app::PaletteStage::Edit { args, .. } = &p.stage else {
        panic!("back at the arguments");
    };
    assert_eq!(args.lines().join(""), "{  \"order_id\": 0}");
    // A typed value: still asked (the tool is destructive), and `y` calls it with that value.
    press(&mut a, vec![Msg::code(KeyCode::Backspace), Msg::char('5')]);
    let reqs = sent(&mut a, vec![Msg::code(KeyCode::Enter)]);
    assert!(calls(&reqs).is_empty(), "{reqs:?}");
    let s = screen(&a);
    assert!(!s.contains("placeholder"), "{s}");
    assert!(s.contains("{\"order_id\":5}"), "{s}");
    let reqs = sent(&mut a, vec![Msg::char('y')]);
    assert_eq!(
        calls(&reqs),
        vec![("sample_cancel_order".to_owned(), json!({ "order_id": 5 }))]
    );
}

/// A tool that destroys nothing is still asked about while a required argument holds its
/// placeholder; once a value is typed, `enter` sends it at once.
#[test]
fn an_untouched_required_argument_is_asked_about() {
    let mut a = started();
    press(&mut a, vec![Msg::char(':')]);
    press(&mut a, typed("orders"));
    let reqs = sent(
        &mut a,
        vec![Msg::code(KeyCode::Enter), Msg::code(KeyCode::Enter)],
    );
    assert!(calls(&reqs).is_empty(), "{reqs:?}");
    assert!(asking(&a));
    assert!(!screen(&a).contains("may destroy"));
    press(&mut a, vec![Msg::code(KeyCode::Esc)]);
    press(&mut a, vec![Msg::code(KeyCode::Backspace), Msg::char('9')]);
    let reqs = sent(&mut a, vec![Msg::code(KeyCode::Enter)]);
    assert_eq!(
        calls(&reqs),
        vec![("sample_list_orders".to_owned(), json!({ "limit": 9 }))]
    );
}
