//! End to end in a real terminal: `loom tui` on the demo's sample server inside tmux, driven
//! with send-keys and read with capture-pane, while a second process joins the same session
//! through `loom connect` as an MCP client.

mod common;

use common::{LOOM, RawClient, sample_config};
use serde_json::json;
use std::process::Command;
use std::time::{Duration, Instant};

/// A private tmux server for one test; killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn new(name: &str) -> Tmux {
        let t = Tmux {
            socket: format!("loom-test-{name}-{}", std::process::id()),
        };
        let ok = Command::new("tmux").arg("-V").output();
        assert!(
            ok.is_ok_and(|o| o.status.success()),
            "tmux is missing: run scripts/test.sh (it installs the test peers)"
        );
        t
    }

    fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs `command` in a detached 160×45 session named `t`.
    fn start(&self, command: &str) {
        self.cmd(&[
            "new-session",
            "-d",
            "-x",
            "160",
            "-y",
            "45",
            "-s",
            "t",
            command,
        ]);
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.cmd(&args);
    }

    fn literal(&self, text: &str) {
        self.cmd(&["send-keys", "-t", "t", "-l", text]);
    }

    fn screen(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", "t"])
    }

    fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            if start.elapsed() > Duration::from_secs(60) {
                panic!("timed out waiting for {what}; screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(150));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workbench_in_tmux_with_a_second_client_joining_through_connect() {
    let cfg = sample_config("", "");
    let dir = cfg.dir.path().display().to_string();
    let tmux = Tmux::new("tui");
    let command = format!(
        "env XDG_RUNTIME_DIR={dir} XDG_DATA_HOME={dir} {LOOM} tui -c {}",
        cfg.path.display()
    );
    tmux.start(&command);
    tmux.wait_for("the sample server", |s| s.contains("sample up"));

    // The palette: list_orders with its prefilled arguments.
    tmux.keys(&[":"]);
    tmux.wait_for("the palette", |s| s.contains("call a tool"));
    tmux.literal("list_orders");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the argument editor", |s| s.contains("arguments (JSON)"));
    tmux.keys(&["C-s"]);
    let s = tmux.wait_for("the intercepted call", |s| {
        s.contains("→ sample_list_orders")
    });
    assert!(s.contains("sample_list_orders done"), "{s}");

    // Follow it into the dataset, query it, export it.
    tmux.keys(&["o"]);
    tmux.wait_for("the dataset detail", |s| {
        s.contains("columns") && s.contains("rows")
    });
    tmux.keys(&["s"]);
    let s = tmux.wait_for("the result grid", |s| s.contains("row 1 of"));
    assert!(s.contains("SELECT * FROM sample_list_orders"), "{s}");
    // `x` asks how (format, delimiter, header, name), prefilled; enter writes.
    tmux.keys(&["x"]);
    tmux.wait_for("the export dialog", |s| s.contains("Goes to"));
    tmux.keys(&["Enter"]);
    let s = tmux.wait_for("the export", |s| s.contains("exported"));
    let exported = std::fs::read_dir(cfg.dir.path().join("exports"))
        .expect("exports folder")
        .count();
    assert_eq!(exported, 1, "{s}");

    // A second process joins through `loom connect` and its call shows up in Traffic.
    let mut client = RawClient::spawn_args(&["connect"], &[("XDG_RUNTIME_DIR", &dir)]);
    client.initialize().await;
    let r = client
        .call("sample_get_weather", json!({ "city": "Lisbon" }))
        .await;
    assert!(r.get("result").is_some(), "{r}");
    tmux.wait_for("the connected client's call", |s| {
        s.lines()
            .any(|l| l.contains("sample_get_weather") && l.contains(" M "))
    });

    // Quit while a client is connected: asked first; `n` keeps serving it.
    tmux.keys(&["q"]);
    tmux.wait_for("the quit question", |s| {
        s.contains("1 MCP client is connected. Stop serving it and quit?")
    });
    tmux.keys(&["n"]);
    tmux.wait_for("the question gone", |s| !s.contains("Stop serving it"));
    let r = client
        .call("sample_get_weather", json!({ "city": "Porto" }))
        .await;
    assert!(r.get("result").is_some(), "still served: {r}");
    // Then quit for good: the terminal comes back and the session socket is gone.
    tmux.keys(&["q"]);
    tmux.wait_for("the quit question", |s| s.contains("Stop serving it"));
    tmux.keys(&["y"]);
    let start = Instant::now();
    let sock_dir = cfg.dir.path().join("loom");
    loop {
        let socks = std::fs::read_dir(&sock_dir)
            .map(|r| {
                r.flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "sock"))
                    .count()
            })
            .unwrap_or(0);
        if socks == 0 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "socket left behind"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // A log file exists only if something was logged.
    let empty_logs: Vec<_> = std::fs::read_dir(&sock_dir)
        .map(|r| {
            r.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
                .filter(|e| e.metadata().is_ok_and(|m| m.len() == 0))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    assert!(empty_logs.is_empty(), "empty log files: {empty_logs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_from_tmux_approves_a_destructive_call_with_a_key_press() {
    let cfg = sample_config("", "");
    let dir = cfg.dir.path().display().to_string();
    // The model's client launched `loom serve` itself.
    let mut client = RawClient::spawn(&cfg.path);
    client.initialize().await;
    assert!(
        client
            .tool_names()
            .await
            .iter()
            .any(|n| n == "sample_cancel_order")
    );

    let tmux = Tmux::new("attach");
    let command = format!("env XDG_RUNTIME_DIR={dir} XDG_DATA_HOME={dir} {LOOM} attach");
    tmux.start(&command);
    let s = tmux.wait_for("the attached workbench", |s| {
        s.contains("loom attach") && s.contains("sample up")
    });
    assert!(s.contains("q detach"), "{s}");

    // The person is typing SQL when the call arrives: the prompt waits in a banner and
    // takes none of their keys (the report: the `a` of `amount` approved the call).
    tmux.keys(&["5"]);
    tmux.literal("SELECT ");
    tmux.wait_for("the editor", |s| s.contains("SELECT"));
    let client = std::sync::Arc::new(tokio::sync::Mutex::new(client));
    let c = client.clone();
    let pending = tokio::spawn(async move {
        c.lock()
            .await
            .call("sample_cancel_order", json!({ "order_id": 7 }))
            .await
    });
    tmux.wait_for("the approval banner", |s| s.contains("approval waiting"));
    tmux.literal("amount");
    let s = tmux.wait_for("every typed key in the editor", |s| {
        s.contains("SELECT amount")
    });
    assert!(!s.contains("approve a call?"), "{s}");
    assert!(!pending.is_finished(), "the call was decided by typing");
    // Opened on purpose, the prompt shows every argument and answers the person's key.
    tmux.keys(&["C-g"]);
    let s = tmux.wait_for("the approval prompt", |s| {
        s.contains("approve a call?") && s.contains("approve once")
    });
    assert!(
        s.contains("cancel_order") && s.contains("\"order_id\": 7"),
        "{s}"
    );
    tmux.keys(&["a"]);
    let r = tokio::time::timeout(Duration::from_secs(30), pending)
        .await
        .expect("the call finished")
        .expect("joined");
    assert!(!common::is_error_result(&r), "{r}");
    tmux.wait_for("the approved call in Traffic", |s| {
        s.lines()
            .any(|l| l.contains("sample_cancel_order") && l.contains("passed"))
    });
    assert!(tmux.screen().contains("SELECT amount"));
    // Detaching never disturbs the model's session.
    tmux.keys(&["Escape"]);
    // Apart, or the terminal reads escape-q as alt-q.
    std::thread::sleep(Duration::from_millis(300));
    tmux.keys(&["q"]);
    let r = client
        .lock()
        .await
        .call("sample_get_weather", json!({ "city": "Porto" }))
        .await;
    assert!(!common::is_error_result(&r), "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_cancels_a_models_call_and_reads_parked_text_in_the_pager() {
    let cfg = sample_config("", "");
    let dir = cfg.dir.path().display().to_string();
    let mut client = RawClient::spawn(&cfg.path);
    client.initialize().await;
    // Parked text for the pager.
    let r = client
        .call("sample_tail_logs", json!({ "lines": 3000 }))
        .await;
    assert!(r.to_string().contains("blob_key"), "{r}");

    let tmux = Tmux::new("cancel");
    let command = format!("env XDG_RUNTIME_DIR={dir} XDG_DATA_HOME={dir} {LOOM} attach");
    tmux.start(&command);
    tmux.wait_for("the attached workbench", |s| {
        s.contains("loom attach") && s.contains("sample up")
    });

    let client = std::sync::Arc::new(tokio::sync::Mutex::new(client));
    let c = client.clone();
    let pending = tokio::spawn(async move {
        c.lock()
            .await
            .call(
                "sample_slow_count",
                json!({ "steps": 600, "delay_ms": 100 }),
            )
            .await
    });
    // Traffic follows the newest call and ticks its elapsed time.
    tmux.wait_for("the running call", |s| {
        s.lines()
            .any(|l| l.contains("sample_slow_count") && l.contains("running") && l.contains("s…"))
    });
    tmux.keys(&["c"]);
    tmux.wait_for("the question", |s| s.contains("Cancel the model's call"));
    tmux.keys(&["y"]);
    let r = tokio::time::timeout(Duration::from_secs(30), pending)
        .await
        .expect("the call was answered")
        .expect("joined");
    assert!(common::is_error_result(&r), "{r}");
    assert!(common::text_of(&r).contains("cancelled by a person"), "{r}");
    tmux.wait_for("the cancelled call in Traffic", |s| {
        s.lines()
            .any(|l| l.contains("sample_slow_count") && l.contains("cancelled"))
    });

    // The parked text, read and searched in the pager: `]` goes to the Parked text group,
    // `j` onto the text itself.
    tmux.keys(&["4"]);
    tmux.wait_for("the parked text in the catalog", |s| {
        s.contains("Parked text · 1")
    });
    tmux.keys(&["]"]);
    tmux.keys(&["j"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("the pager", |s| {
        s.contains("parked text") && s.contains("lines 1–")
    });
    tmux.keys(&["/"]);
    tmux.literal("error");
    tmux.keys(&["Enter"]);
    let s = tmux.wait_for("the matches", |s| s.contains("/error: 1 of "));
    assert!(s.contains("ERROR"), "{s}");
    tmux.keys(&["n"]);
    tmux.wait_for("the next match", |s| s.contains("/error: 2 of "));
    tmux.keys(&["q"]);
    tmux.wait_for("the pager closed", |s| !s.contains("/error:"));
    tmux.keys(&["q"]);
}

/// The terminal modes of the pane: alternate screen, any mouse reporting, cursor shown.
fn modes(tmux: &Tmux) -> String {
    tmux.cmd(&[
        "display-message",
        "-p",
        "-t",
        "t",
        "#{alternate_on} #{mouse_any_flag} #{cursor_flag}",
    ])
    .trim()
    .to_owned()
}

/// The pid of the one `loom` the pane's shell started.
fn loom_in_pane(tmux: &Tmux) -> String {
    let shell = tmux.cmd(&["display-message", "-p", "-t", "t", "#{pane_pid}"]);
    let out = Command::new("pgrep")
        .args(["-P", shell.trim()])
        .output()
        .expect("run pgrep");
    let pid = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(
        !pid.is_empty() && !pid.contains('\n'),
        "one loom under the shell: {pid:?}"
    );
    pid
}

fn sockets(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join("loom"))
        .map(|r| {
            r.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "sock"))
                .count()
        })
        .unwrap_or(0)
}

/// The report's B3: `kill -TERM` of `loom tui` (and `kill -HUP` of `loom attach`) gives the
/// terminal back as `q` does (main screen, no mouse reporting, the cursor shown) and the
/// session socket goes with the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_gives_the_terminal_back_and_closes_the_session() {
    let cfg = sample_config("", "");
    let dir = cfg.dir.path().display().to_string();
    let tmux = Tmux::new("signal");
    // A shell around loom, so the pane outlives it and its modes can be read after.
    tmux.start(&format!(
        "sh -c 'env XDG_RUNTIME_DIR={dir} XDG_DATA_HOME={dir} {LOOM} tui -c {}; echo loom ended $?; sleep 600'",
        cfg.path.display()
    ));
    tmux.wait_for("the sample server", |s| s.contains("sample up"));
    assert_eq!(modes(&tmux), "1 1 0", "the workbench's own modes first");
    assert_eq!(sockets(cfg.dir.path()), 1);
    let pid = loom_in_pane(&tmux);
    let killed = Command::new("kill").args(["-TERM", &pid]).status();
    assert!(killed.is_ok_and(|s| s.success()));
    tmux.wait_for("loom to end", |s| s.contains("loom ended"));
    assert_eq!(modes(&tmux), "0 0 1", "{}", tmux.screen());
    assert_eq!(
        sockets(cfg.dir.path()),
        0,
        "the session socket is left behind"
    );
    drop(tmux);

    // `loom attach` on a session an MCP client started, ended by a hang-up.
    let mut client = RawClient::spawn(&cfg.path);
    client.initialize().await;
    let tmux = Tmux::new("signal-attach");
    tmux.start(&format!(
        "sh -c 'env XDG_RUNTIME_DIR={dir} XDG_DATA_HOME={dir} {LOOM} attach; echo loom ended $?; sleep 600'"
    ));
    tmux.wait_for("the attached workbench", |s| {
        s.contains("loom attach") && s.contains("sample up")
    });
    assert_eq!(modes(&tmux), "1 1 0");
    let pid = loom_in_pane(&tmux);
    let killed = Command::new("kill").args(["-HUP", &pid]).status();
    assert!(killed.is_ok_and(|s| s.success()));
    tmux.wait_for("loom attach to end", |s| s.contains("loom ended"));
    assert_eq!(modes(&tmux), "0 0 1", "{}", tmux.screen());
    // The model's session goes on.
    let r = client
        .call("sample_get_weather", json!({ "city": "Porto" }))
        .await;
    assert!(!common::is_error_result(&r), "{r}");
}

/// A `loom tui` on the demo config in one tmux server and a `loom attach` to it in another
/// (which prints `loom ended <status>` when it exits); also the command that starts the tui.
fn serving_and_attached(name: &str, cfg: &common::TempConfig) -> (Tmux, Tmux, String) {
    let dir = cfg.dir.path().display().to_string();
    let serving = Tmux::new(&format!("{name}-tui"));
    let tui = format!(
        "env XDG_RUNTIME_DIR={dir} XDG_DATA_HOME={dir} {LOOM} tui -c {}",
        cfg.path.display()
    );
    serving.start(&tui);
    serving.wait_for("the serving workbench", |s| s.contains("sample up"));
    let attached = Tmux::new(&format!("{name}-attach"));
    attached.start(&format!(
        "sh -c 'env XDG_RUNTIME_DIR={dir} XDG_DATA_HOME={dir} {LOOM} attach; echo loom ended $?; sleep 600'"
    ));
    attached.wait_for("the attached workbench", |s| {
        s.contains("loom attach") && s.contains("sample up")
    });
    (serving, attached, tui)
}

/// Report item 18: the `loom tui` an attach watches quits. The attach says so where the eye
/// starts (the header) and on the status line, waits for a new session of the same config,
/// and joins it by itself once one runs; `q` quits it whenever the person has had enough.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attach_whose_session_ended_says_so_and_rejoins_the_next_session() {
    let cfg = sample_config("", "");
    let (serving, attached, tui) = serving_and_attached("reattach", &cfg);
    let first = attached.screen();
    // The serving workbench quits.
    serving.keys(&["q"]);
    let s = attached.wait_for("the attach to notice", |s| s.contains("SESSION ENDED"));
    assert!(s.contains("waiting to reattach"), "{s}");
    assert!(
        s.contains("the session ended · q quits · waiting for a new session of"),
        "{s}"
    );
    assert!(s.contains("q quits"), "{s}");
    assert!(!s.contains("loom ended"), "it waits, it does not exit: {s}");
    // A new session of the same config: the attach joins it, live again.
    serving.cmd(&["kill-server"]);
    let again = Tmux::new("reattach-tui2");
    again.start(&tui);
    again.wait_for("the new serving workbench", |s| s.contains("sample up"));
    // The new session's servers arrive a moment after the rejoin itself is shown.
    let s = attached.wait_for("the attach to rejoin", |s| {
        s.contains("reattached: loom attach")
            && !s.contains("SESSION ENDED")
            && s.contains("sample up")
    });
    let title = |s: &str| {
        s.lines()
            .next()
            .and_then(|l| l.split("loom attach ").nth(1))
            .and_then(|t| t.split_whitespace().next())
            .map(str::to_owned)
    };
    assert_ne!(title(&first), title(&s), "the title names the new session");
    // And `q` detaches as before: the new session goes on.
    std::thread::sleep(Duration::from_millis(300));
    attached.keys(&["q"]);
    attached.wait_for("the attach to end", |s| s.contains("loom ended 0"));
    assert!(again.screen().contains("sample up"));
    again.keys(&["q"]);
}

/// An attach whose session ended and never comes back quits on `q`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attach_whose_session_ended_quits_on_q() {
    let cfg = sample_config("", "");
    let (serving, attached, _) = serving_and_attached("ended", &cfg);
    serving.keys(&["q"]);
    let s = attached.wait_for("the attach to notice", |s| s.contains("SESSION ENDED"));
    assert!(s.contains("q quit"), "the header offers quitting: {s}");
    attached.keys(&["q"]);
    attached.wait_for("the attach to end", |s| s.contains("loom ended 0"));
}
