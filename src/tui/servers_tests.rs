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
    Msg::Event(Sequenced { seq, event })
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
            .is_some_and(|(t, _)| t.contains("sample restarts")),
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
