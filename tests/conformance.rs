//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/peers/package.json`) against loom's HTTP surface, under both requirement sets it knows
//! (2025-11-25 and 2026-07-28):
//!
//! - loom fronting its conformance fixture (`loom sample-server --conformance`, config
//!   `tests/conformance/loom.toml`) must fail exactly the checks listed in
//!   `tests/conformance/expected-failures-<revision>.yml`: a new failure fails the test, and so
//!   does a listed check that now passes (the lists only shrink); so must loom fronting the
//!   TypeScript reference server below (`expected-failures-reference-behind-<revision>.yml`),
//!   which keeps loom's own bridging of a legacy HTTP server measured check by check;
//! - the differential, for each of two reference servers: every check it passes alone must
//!   pass with loom in front of it (a streamable-HTTP downstream) — or only inform, as when loom
//!   answers with JSON where the server streamed — except the few listed with their reasons.
//!   The references are server-everything (`differential-exceptions.yml`) and the suite's own
//!   fixtures on the official TypeScript SDK, `tests/js/reference_server.mjs`
//!   (`reference-differential-exceptions.yml`), which asks the client for sampling and
//!   elicitation over its HTTP streams and closes a call's stream for the client to resume.
//!
//! The ten suite runs go concurrently; each gets its own loom so no client's settings (a log
//! level, say) leak into another run. Missing peers fail the test: `scripts/test.sh` installs
//! them. `LOOM_CONFORMANCE_BLESS=1` rewrites the expected-failures files from the run (kept
//! reasons stay, new entries get the suite's message) instead of comparing;
//! `LOOM_CONFORMANCE_KEEP=1` keeps the suite's results and the logs (they are kept anyway when
//! the test fails).

mod common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];
/// Longest one suite run may take before it is stopped and the test fails.
const RUN_DEADLINE: Duration = Duration::from_secs(600);

fn node() -> PathBuf {
    common::peer("node/node_modules/.bin/node")
}

fn suite() -> PathBuf {
    common::peer("node/node_modules/@modelcontextprotocol/conformance/dist/index.js")
}

fn conformance_dir() -> PathBuf {
    common::root().join("tests/conformance")
}

/// The checks a run of `kind` (`fixture`, or `reference behind`: loom fronting the TypeScript
/// reference server) must fail, and no others.
fn expected_failures_file(kind: &str, revision: &str) -> PathBuf {
    let name = match kind {
        "fixture" => format!("expected-failures-{revision}.yml"),
        other => format!(
            "expected-failures-{}-{revision}.yml",
            other.replace(' ', "-")
        ),
    };
    conformance_dir().join(name)
}

/// The runs held to an expected-failures file.
const BASELINED: [&str; 2] = ["fixture", "reference behind"];

/// A child process that is stopped (SIGTERM, then SIGKILL) when dropped.
struct Running {
    child: Child,
    name: String,
    stderr: PathBuf,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) on the pid of a child this process spawned and has not reaped.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    fn start(name: &str, mut cmd: Command, dir: &Path) -> Running {
        let stderr = dir.join(format!("{name}.stderr"));
        let file = std::fs::File::create(&stderr).expect("stderr file");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        Running {
            child,
            name: name.to_owned(),
            stderr,
        }
    }

    /// Waits until `port` accepts connections; fails with the process's stderr otherwise.
    fn wait_for_port(&mut self, port: u16) {
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "{} exited ({status}) before listening on {port}:\n{}",
                    self.name,
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{} is not listening on {port} after 60 s", self.name);
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local addr").port()
}

/// loom serving `config` over HTTP on a free loopback port, with everything it writes kept in
/// `dir`.
fn start_loom(name: &str, config: &Path, dir: &Path) -> (Running, u16) {
    let port = free_port();
    let mut cmd = Command::new(common::LOOM);
    cmd.args(["serve", "-c"])
        .arg(config)
        .arg("--http")
        .arg(format!("127.0.0.1:{port}"))
        .env("XDG_RUNTIME_DIR", dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("LOOM_HTTP_TOKEN");
    let mut loom = Running::start(name, cmd, dir);
    loom.wait_for_port(port);
    (loom, port)
}

/// A copy of a loom config in `dir`, so the exports and memories it names land there.
fn config_in(dir: &Path, toml: &str) -> PathBuf {
    let path = dir.join("loom.toml");
    std::fs::write(&path, toml).expect("write config");
    path
}

/// One check's verdict in one scenario, its repeats collapsed to the most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Status {
    Info,
    Skipped,
    Success,
    Warning,
    Failure,
}

impl Status {
    fn parse(s: &str) -> Status {
        match s {
            "SUCCESS" => Status::Success,
            "FAILURE" => Status::Failure,
            "WARNING" => Status::Warning,
            "SKIPPED" => Status::Skipped,
            _ => Status::Info,
        }
    }

    /// What the suite's baseline counts as failing.
    fn failed(self) -> bool {
        matches!(self, Status::Failure | Status::Warning)
    }
}

#[derive(Debug, Clone)]
struct Check {
    status: Status,
    message: String,
}

/// The result of one suite run: scenario → check id → verdict, for the scored scenarios.
struct Outcome {
    label: String,
    exit: Option<i32>,
    stdout: String,
    checks: BTreeMap<String, BTreeMap<String, Check>>,
    wall: Duration,
}

impl Outcome {
    fn status(&self, scenario: &str, check: &str) -> Option<Status> {
        self.checks.get(scenario)?.get(check).map(|c| c.status)
    }

    fn failures(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for (scenario, checks) in &self.checks {
            for (id, check) in checks {
                if check.status.failed() {
                    out.insert(format!("{scenario}:{id}"), check.message.clone());
                }
            }
        }
        out
    }

    /// passed/total scenarios and checks: a scenario passes with no failing check; a check
    /// counts when it passed or failed (not when it only informed or was skipped).
    fn counts(&self) -> (usize, usize, usize, usize) {
        let scenarios = self.checks.len();
        let passed = self
            .checks
            .values()
            .filter(|c| c.values().all(|c| !c.status.failed()))
            .count();
        let scored: Vec<Status> = self
            .checks
            .values()
            .flat_map(|c| c.values().map(|c| c.status))
            .filter(|s| *s == Status::Success || s.failed())
            .collect();
        let ok = scored.iter().filter(|s| **s == Status::Success).count();
        (passed, scenarios, ok, scored.len())
    }
}

/// The server scenarios a revision requires, from the suite itself.
fn required_scenarios(revision: &str) -> BTreeSet<String> {
    let out = Command::new(node())
        .arg(suite())
        .args(["list", "--server", "--requirements", revision])
        .output()
        .expect("run the conformance suite's list");
    assert!(out.status.success(), "listing {revision} failed");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .skip_while(|l| !l.starts_with("Server scenarios"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(str::to_owned)
        .collect()
}

/// Runs the suite for `revision` against `url`, results into `out`.
fn run_suite(
    label: &str,
    revision: &'static str,
    url: &str,
    out: &Path,
    expected_failures: Option<&Path>,
) -> Outcome {
    let started = Instant::now();
    let mut cmd = Command::new(node());
    cmd.arg(suite())
        .args(["server", "--url", url, "--requirements", revision, "-o"])
        .arg(out)
        .env("NO_COLOR", "1");
    if let Some(f) = expected_failures {
        cmd.arg("--expected-failures").arg(f);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the conformance suite");
    let mut pipe = child.stdout.take().expect("suite stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = pipe.read_to_string(&mut s);
        s
    });
    let exit = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status.code();
        }
        if started.elapsed() > RUN_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = reader.join().unwrap_or_default();
    let required = required_scenarios(revision);
    Outcome {
        label: label.to_owned(),
        exit,
        stdout: strip_ansi(&stdout),
        checks: read_checks(out, &required),
        wall: started.elapsed(),
    }
}

/// `checks.json` of every scenario directory (`server-<scenario>-<timestamp>`) in `out`.
fn read_checks(
    out: &Path,
    required: &BTreeSet<String>,
) -> BTreeMap<String, BTreeMap<String, Check>> {
    let mut all: BTreeMap<String, BTreeMap<String, Check>> = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(out) else {
        return all;
    };
    for entry in entries.flatten() {
        let dir = entry.file_name().to_string_lossy().into_owned();
        let Some(scenario) = required
            .iter()
            .filter(|s| {
                dir.strip_prefix("server-")
                    .and_then(|d| d.strip_prefix(s.as_str()))
                    .is_some_and(|rest| {
                        rest.len() > 1
                            && rest.as_bytes()[1].is_ascii_digit()
                            && rest.starts_with('-')
                    })
            })
            .max_by_key(|s| s.len())
        else {
            continue;
        };
        let text = std::fs::read_to_string(entry.path().join("checks.json")).unwrap_or_default();
        let checks: Vec<Value> = serde_json::from_str(&text).unwrap_or_default();
        let slot = all.entry(scenario.clone()).or_default();
        for c in checks {
            let id = c["id"].as_str().unwrap_or_default().to_owned();
            let status = Status::parse(c["status"].as_str().unwrap_or_default());
            let message = c["errorMessage"]
                .as_str()
                .unwrap_or_default()
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned();
            match slot.get(&id) {
                Some(prev) if prev.status >= status => {}
                _ => {
                    slot.insert(id, Check { status, message });
                }
            }
        }
    }
    for scenario in required {
        all.entry(scenario.clone()).or_default();
    }
    all
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `- entry  # reason` lines of a list file, by entry.
fn list_entries(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("- "))
        .map(|l| match l.split_once(" #") {
            Some((entry, reason)) => (entry.trim().to_owned(), reason.trim().to_owned()),
            None => (l.trim().to_owned(), String::new()),
        })
        .collect()
}

/// The entries of one revision's section (`<revision>:` at the start of a line) of the
/// differential exceptions.
fn section_entries(text: &str, revision: &str) -> BTreeMap<String, String> {
    let header = format!("{revision}:");
    let mut in_section = false;
    let mut lines = Vec::new();
    for l in text.lines() {
        if !l.starts_with(' ') && !l.starts_with('#') && !l.trim().is_empty() {
            in_section = l.trim() == header;
            continue;
        }
        if in_section {
            lines.push(l);
        }
    }
    list_entries(&lines.join("\n"))
}

/// The expected-failures file for a run, written from its failures; reasons already given are
/// kept, new entries get the suite's message.
fn blessed(
    kind: &str,
    revision: &str,
    old: &BTreeMap<String, String>,
    outcome: &Outcome,
) -> String {
    let what = match kind {
        "fixture" => {
            "(tests/conformance/loom.toml: loom serve --http fronting\n\
             # `loom sample-server --conformance`) fails under the conformance suite's"
        }
        _ => {
            "fronting tests/js/reference_server.mjs (the suite's fixtures on the\n\
             # TypeScript SDK 1.x, a legacy server) as a streamable-HTTP downstream, fails under the\n\
             # conformance suite's"
        }
    };
    let mut s = format!(
        "# Checks loom {what} {revision}\n\
         # requirements, one per line with its reason. tests/conformance.rs fails when a check\n\
         # that is not listed fails, or a listed one passes: this list only shrinks.\n\
         # LOOM_CONFORMANCE_BLESS=1 cargo test --test conformance rewrites it from a run.\n\
         "
    );
    let failures = outcome.failures();
    s.push_str(if failures.is_empty() {
        "server: []\n"
    } else {
        "server:\n"
    });
    for (entry, message) in failures {
        let reason = old
            .get(&entry)
            .filter(|r| !r.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("suite: {}", shortened(&message, 160)));
        s.push_str(&format!("  - {entry}  # {reason}\n"));
    }
    s
}

/// At most `max` characters of `s`, with an ellipsis when cut.
fn shortened(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_owned(),
    }
}

fn suite_verdict(outcome: &Outcome) -> String {
    let tail: Vec<&str> = outcome
        .stdout
        .lines()
        .skip_while(|l| {
            !(l.starts_with("Expected failures")
                || l.starts_with("Stale baseline")
                || l.starts_with("Unexpected failures"))
        })
        .collect();
    tail.join("\n")
}

/// A reference server the differential runs alone and behind loom.
struct Reference {
    /// How the runs against it are labelled (`<name> alone`, `<name> behind`).
    name: &'static str,
    /// Checks it passes alone that loom may lose, by revision, with their reasons.
    exceptions: &'static str,
    url: String,
}

impl Reference {
    /// loom fronting this server as a streamable-HTTP downstream.
    fn behind_toml(&self) -> String {
        format!(
            "naming = \"bare\"\nhttp_auth = \"open\"\nexport_dir = \"exports\"\nmemory_file = \"memories.jsonl\"\n\n\
             [[servers]]\nname = \"{}\"\nurl = \"{}\"\nintercept = \"never\"\npark = \"never\"\n",
            self.name, self.url
        )
    }
}

impl Reference {
    /// Starts `cmd` (told its port by `with_port`), and waits until it listens.
    fn start(
        name: &'static str,
        exceptions: &'static str,
        dir: &Path,
        with_port: impl FnOnce(&mut Command, u16),
    ) -> (Running, Reference) {
        let port = free_port();
        let mut cmd = Command::new(node());
        with_port(&mut cmd, port);
        let mut running = Running::start(name, cmd, dir);
        running.wait_for_port(port);
        let url = format!("http://127.0.0.1:{port}/mcp");
        (
            running,
            Reference {
                name,
                exceptions,
                url,
            },
        )
    }

    /// server-everything's streamable-HTTP server.
    fn everything(dir: &Path) -> (Running, Reference) {
        Reference::start(
            "everything",
            "differential-exceptions.yml",
            dir,
            |cmd, port| {
                cmd.arg(common::peer(
                    "node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
                ))
                .arg("streamableHttp")
                .env("PORT", port.to_string());
            },
        )
    }

    /// The suite's fixtures on the official TypeScript SDK (`tests/js/reference_server.mjs`).
    fn typescript(dir: &Path) -> (Running, Reference) {
        Reference::start(
            "reference",
            "reference-differential-exceptions.yml",
            dir,
            |cmd, port| {
                cmd.arg(common::root().join("tests/js/reference_server.mjs"))
                    .arg(common::peer("node/node_modules"))
                    .arg(port.to_string());
            },
        )
    }
}

/// Every check `reference` passes alone must pass (or only inform) behind loom, but for the
/// listed exceptions; an exception that no longer applies is a problem too.
fn differential(
    reference: &Reference,
    revision: &str,
    alone: &Outcome,
    behind: &Outcome,
    problems: &mut Vec<String>,
) {
    let file = conformance_dir().join(reference.exceptions);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let allowed = section_entries(&text, revision);
    let mut lost = Vec::new();
    let (mut passed_alone, mut kept_behind) = (0, 0);
    for (scenario, checks) in &alone.checks {
        for (id, check) in checks {
            let key = format!("{scenario}:{id}");
            let kept = matches!(
                behind.status(scenario, id),
                Some(Status::Success | Status::Info)
            );
            if check.status == Status::Success {
                passed_alone += 1;
                kept_behind += usize::from(kept);
            }
            if check.status == Status::Success && !kept && !allowed.contains_key(&key) {
                let why = behind
                    .checks
                    .get(scenario)
                    .and_then(|c| c.get(id))
                    .map_or("absent".to_owned(), |c| {
                        format!("{:?}: {}", c.status, c.message)
                    });
                lost.push(format!("{key} — {why}"));
            }
        }
    }
    println!(
        "  differential {} {revision}: {kept_behind} of the {passed_alone} checks it passes alone pass behind loom ({} listed exceptions)",
        reference.name,
        allowed.len()
    );
    let stale: Vec<&String> = allowed
        .keys()
        .filter(|k| {
            k.split_once(':').is_some_and(|(s, c)| {
                alone.status(s, c) != Some(Status::Success)
                    || matches!(behind.status(s, c), Some(Status::Success | Status::Info))
            })
        })
        .collect();
    if !lost.is_empty() || !stale.is_empty() {
        problems.push(format!(
            "differential {}, {revision}: passed alone but not behind loom {lost:#?}; exceptions that no longer apply (remove from {}) {stale:#?}",
            reference.name,
            file.display()
        ));
    }
}

#[test]
fn loom_passes_the_conformance_suite_but_for_its_listed_failures() {
    let (node, suite) = (node(), suite());
    assert!(node.exists() && suite.exists());
    let help = Command::new(common::LOOM)
        .args(["sample-server", "--help"])
        .output()
        .expect("run loom");
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("--conformance"),
        "{} has no `sample-server --conformance`: it was not built from this tree (another tree sharing CARGO_TARGET_DIR relinked it?)",
        common::LOOM
    );
    let bless = std::env::var_os("LOOM_CONFORMANCE_BLESS").is_some();
    let tmp = tempfile::tempdir().expect("tempdir");
    let fixture_toml = std::fs::read_to_string(conformance_dir().join("loom.toml"))
        .expect("tests/conformance/loom.toml");
    let started = Instant::now();

    // The reference servers, each shared by the runs against it alone and the looms in front
    // of it.
    let (everything_process, everything) = Reference::everything(tmp.path());
    let (reference_process, reference) = Reference::typescript(tmp.path());
    let references = [&everything, &reference];

    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let mut jobs = Vec::new();
        for revision in REVISIONS {
            let base = tmp.path().join(revision);
            let mut runs = vec![("fixture".to_owned(), Some(fixture_toml.clone()), None)];
            for r in references {
                runs.push((format!("{} alone", r.name), None, Some(r.url.clone())));
                runs.push((format!("{} behind", r.name), Some(r.behind_toml()), None));
            }
            for (kind, toml, direct) in runs {
                let dir = base.join(kind.replace(' ', "-"));
                jobs.push(scope.spawn(move || {
                    std::fs::create_dir_all(&dir).expect("run dir");
                    let label = format!("{kind} {revision}");
                    let out = dir.join("results");
                    let (_loom, url) = match (toml, direct) {
                        (Some(toml), _) => {
                            let config = config_in(&dir, &toml);
                            let name = format!("loom-{}", kind.replace(' ', "-"));
                            let (loom, port) = start_loom(&name, &config, &dir);
                            (Some(loom), format!("http://127.0.0.1:{port}/mcp"))
                        }
                        (None, direct) => (None, direct.expect("a run alone has a URL")),
                    };
                    let baseline = (BASELINED.contains(&kind.as_str()) && !bless)
                        .then(|| expected_failures_file(&kind, revision));
                    run_suite(&label, revision, &url, &out, baseline.as_deref())
                }));
            }
        }
        jobs.into_iter()
            .map(|j| j.join().expect("a suite run panicked"))
            .collect()
    });
    let wall = started.elapsed();
    drop(everything_process);
    drop(reference_process);

    let mut problems = Vec::new();
    println!(
        "conformance: {:.1} s wall for all {} runs",
        wall.as_secs_f64(),
        outcomes.len()
    );
    for o in &outcomes {
        let (sp, st, cp, ct) = o.counts();
        println!(
            "  {:<28} scenarios {sp}/{st}, checks {cp}/{ct}  ({:.1} s)",
            o.label,
            o.wall.as_secs_f64()
        );
        if o.exit.is_none() {
            problems.push(format!(
                "{}: the suite did not finish within {RUN_DEADLINE:?}",
                o.label
            ));
        }
        if o.checks.values().all(BTreeMap::is_empty) {
            problems.push(format!(
                "{}: no results were written\n{}",
                o.label, o.stdout
            ));
        }
    }
    for revision in REVISIONS {
        let by = |kind: &str| {
            let label = format!("{kind} {revision}");
            outcomes
                .iter()
                .find(|o| o.label == label)
                .expect("every run has an outcome")
        };
        for kind in BASELINED {
            let run = by(kind);
            let file = expected_failures_file(kind, revision);
            let old = list_entries(&std::fs::read_to_string(&file).unwrap_or_default());
            if bless {
                std::fs::write(&file, blessed(kind, revision, &old, run))
                    .expect("write expected failures");
                println!("  wrote {}", file.display());
                continue;
            }
            let failures = run.failures();
            let new: Vec<String> = failures
                .iter()
                .filter(|(k, _)| !old.contains_key(*k))
                .map(|(k, m)| format!("{k} — {m}"))
                .collect();
            let stale: Vec<&String> = old
                .keys()
                .filter(|k| {
                    k.split_once(':')
                        .is_some_and(|(s, c)| run.status(s, c) == Some(Status::Success))
                })
                .collect();
            if !new.is_empty() || !stale.is_empty() || run.exit != Some(0) {
                problems.push(format!(
                    "{}: new failures {new:#?}, now passing (remove from {}) {stale:#?}; the suite says (exit {:?}):\n{}",
                    run.label,
                    file.display(),
                    run.exit,
                    suite_verdict(run)
                ));
            }
        }
        for r in references {
            let alone = by(&format!("{} alone", r.name));
            let behind = by(&format!("{} behind", r.name));
            differential(r, revision, alone, behind, &mut problems);
        }
    }
    if !problems.is_empty() || std::env::var_os("LOOM_CONFORMANCE_KEEP").is_some() {
        // The suite's results (checks.json per scenario) and every process's stderr stay.
        let kept = tmp.keep();
        println!("  results and logs kept in {}", kept.display());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn every_listed_failure_and_exception_gives_its_reason() {
    let mut files: Vec<PathBuf> = REVISIONS
        .iter()
        .flat_map(|r| BASELINED.map(|kind| expected_failures_file(kind, r)))
        .collect();
    files.push(conformance_dir().join("differential-exceptions.yml"));
    files.push(conformance_dir().join("reference-differential-exceptions.yml"));
    for file in files {
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (entry, reason) in list_entries(&text) {
            let (scenario, check) = entry
                .split_once(':')
                .unwrap_or_else(|| panic!("{}: {entry} is not scenario:check-id", file.display()));
            assert!(
                !scenario.is_empty() && !check.is_empty() && !check.contains(' '),
                "{}: {entry}",
                file.display()
            );
            assert!(
                !reason.is_empty(),
                "{}: {entry} has no reason",
                file.display()
            );
        }
    }
}
