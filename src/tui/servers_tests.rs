//! The Servers pane as a person runs servers all day: each server's log with times and its
//! restarts set apart, following new lines, and a restart or re-enable by key after a
//! question.

use super::app::{Msg, Overlay, Pane};
use super::tests::{answer, press, screen, started};
use crate::frontend::engine::Request;
use crate::types::events::{Event, Sequenced, ServerState};
use crossterm::event::KeyCode;

fn sent(a: &mut super::app::App, msgs: Vec<Msg>) -> Vec<Request> {
    let mut out = Vec::new();
    for m in msgs {
        let reqs = a.update(m);
        out.extend(reqs.iter().map(|(_, r)| r.clone()));
        answer(a, reqs);
    }
    out
}

fn event(seq: u64, event: Event) -> Msg {
    Msg::event(Sequenced { seq, event })
}

#[test]
fn a_servers_log_shows_times_sets_restarts_apart_and_follows_new_lines() {
    let mut a = started();
    press(&mut a, vec![Msg::char('3')]);
    assert_eq!(a.focus, Pane::Servers);
    let reqs = sent(&mut a, vec![Msg::code(KeyCode::Enter)]);
    assert!(
        reqs.contains(&Request::ServerLog {
            server: "sample".into()
        }),
        "{reqs:?}"
    );
    let s = screen(&a);
    assert!(s.contains("log of sample"), "{s}");
    assert!(s.contains("09:58:01  sample server ready"), "{s}");
    assert!(
        s.contains("──── 10:00:02 restarting 1/5: exited with status 1 ────"),
        "{s}"
    );
    assert!(s.contains("following"), "{s}");
    // Live lines arrive while it is open, the state changes among them.
    press(
        &mut a,
        vec![
            event(
                50,
                Event::ServerStderr {
                    server: "sample".into(),
                    line: "listening again".into(),
                    at: "2026-11-30T10:00:05Z".into(),
                },
            ),
            event(
                51,
                Event::ServerStderr {
                    server: "fs".into(),
                    line: "another server's line".into(),
                    at: "2026-11-30T10:00:05Z".into(),
                },
            ),
            event(
                52,
                Event::ServerState {
                    server: "sample".into(),
                    state: ServerState::Up,
                    detail: None,
                },
            ),
        ],
    );
    let Overlay::Pager(p) = &a.overlay else {
        panic!("the log closed")
    };
    let lines = p.lines.clone().unwrap_or_default();
    assert!(
        lines.iter().any(|l| l == "10:00:05  listening again"),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("another server")),
        "{lines:?}"
    );
    assert!(
        lines.last().is_some_and(|l| l.contains(" up ")),
        "{lines:?}"
    );
    // `f` pauses, and the title says so; `f` again follows.
    press(&mut a, vec![Msg::char('f')]);
    assert!(screen(&a).contains("paused (f follows)"));
    press(&mut a, vec![Msg::char('f')]);
    assert!(screen(&a).contains("following"));
}

#[test]
fn a_restart_is_asked_first_and_a_delisted_server_is_offered_re_enabling() {
    let mut a = started();
    press(&mut a, vec![Msg::char('3')]);
    press(&mut a, vec![Msg::char('R')]);
    let s = screen(&a);
    assert!(s.contains("Restart sample?"), "{s}");
    let reqs = sent(&mut a, vec![Msg::char('y')]);
    assert_eq!(
        reqs,
        [Request::RestartServer {
            server: "sample".into()
        }]
    );
    assert!(
        a.status
            .as_ref()
            .is_some_and(|(t, _)| t == "restarting sample… (enter shows its log)"),
        "{:?}",
        a.status
    );
    // `n` asks nothing of the engine.
    press(&mut a, vec![Msg::char('R')]);
    assert!(sent(&mut a, vec![Msg::char('n')]).is_empty());
    // A delisted server is offered re-enabling, with why it was delisted.
    a.servers.list[1].state = ServerState::Delisted;
    press(&mut a, vec![Msg::char('j'), Msg::char('R')]);
    let s = screen(&a);
    assert!(s.contains("Re-enable fs?"), "{s}");
    assert!(s.contains("exited with status 1"), "{s}");
}

/// B7: after `R` `y` the status line follows what the server did: it failed again (loom tries
/// once more), then was delisted; it never promises a comeback that did not happen.
#[test]
fn a_restart_says_how_it_went_not_what_was_hoped() {
    let mut a = started();
    press(&mut a, vec![Msg::char('3'), Msg::char('j')]);
    sent(&mut a, vec![Msg::char('R'), Msg::char('y')]);
    let status = |a: &super::app::App| a.status.clone().map(|s| s.0).unwrap_or_default();
    assert_eq!(status(&a), "restarting fs… (enter shows its log)");
    let state = |seq, state, detail: Option<&str>| {
        event(
            seq,
            Event::ServerState {
                server: "fs".into(),
                state,
                detail: detail.map(str::to_owned),
            },
        )
    };
    sent(&mut a, vec![state(20, ServerState::Starting, None)]);
    assert_eq!(status(&a), "restarting fs… (enter shows its log)");
    // Another server's news says nothing of this restart.
    sent(
        &mut a,
        vec![event(
            21,
            Event::ServerState {
                server: "sample".into(),
                state: ServerState::Up,
                detail: None,
            },
        )],
    );
    assert_eq!(status(&a), "restarting fs… (enter shows its log)");
    sent(
        &mut a,
        vec![state(
            22,
            ServerState::Restarting { attempt: 1, max: 3 },
            Some("exited with status 3"),
        )],
    );
    assert_eq!(
        status(&a),
        "fs failed again: exited with status 3; restarting 1/3 (enter shows its log)"
    );
    sent(
        &mut a,
        vec![state(
            23,
            ServerState::Delisted,
            Some("exited with status 3"),
        )],
    );
    assert_eq!(
        status(&a),
        "fs failed again and was delisted: exited with status 3 (enter shows its log)"
    );
    assert!(
        a.status
            .as_ref()
            .is_some_and(|s| s.1 == super::app::StatusKind::Error)
    );
    // Once told, later changes are the log's, not the status line's.
    a.set_status("something else", super::app::StatusKind::Info);
    sent(&mut a, vec![state(24, ServerState::Up, None)]);
    assert_eq!(status(&a), "something else");
}

/// A restart that works says so, even when the server came up before the engine answered.
#[test]
fn a_restart_that_works_says_the_server_is_up() {
    let mut a = started();
    press(&mut a, vec![Msg::char('3')]);
    let reqs = a.update(Msg::char('R'));
    answer(&mut a, reqs);
    // The engine's answer is held back until the server is up.
    let reqs = a.update(Msg::char('y'));
    a.update(event(
        30,
        Event::ServerState {
            server: "sample".into(),
            state: ServerState::Up,
            detail: None,
        },
    ));
    answer(&mut a, reqs);
    assert_eq!(
        a.status.clone().map(|s| s.0).as_deref(),
        Some("sample is up again")
    );
}

/// B7: a crash loop of `max_restarts = 3` is 4 failures and 3 restarts, as its log says
/// (`restarting 3/3`, then `delisted`), not "4 restarts".
#[test]
fn failures_and_restarts_are_counted_apart() {
    let mut a = started();
    a.size = (160, 45);
    a.focus = Pane::Servers;
    let fs = &mut a.servers.list[1];
    fs.state = ServerState::Delisted;
    fs.failures = 4;
    fs.restarts = 3;
    press(&mut a, vec![Msg::char('z')]);
    let s = screen(&a);
    assert!(s.contains("4 failures · 3 restarts"), "{s}");
    assert!(!s.contains("4 restarts"), "{s}");
}
