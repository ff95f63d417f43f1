//! loom installed the ways users install it (issue 46), from the packages `scripts/package.sh`
//! makes of this build's binary: the release archive (its checksum checked, unpacked into an
//! empty folder), the npm packages (the launcher and this platform's binary package, installed
//! from their tarballs into an empty project, offline) and the wheel (installed into a fresh
//! virtual environment, offline). Each is then run with a `PATH` that holds no Rust and no
//! cargo, from a folder of its own with the demo config, and must answer `initialize` and
//! `tools/list` with the demo server's tools.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

mod common;

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A PATH with the system's programs (node, python3) and nothing of Rust's.
const PLAIN_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("the command runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `loom serve -c loom.toml` through `launcher` in `dir` (which holds the demo config)
/// with a plain PATH, and returns the names of the tools it lists.
fn served_tools(launcher: &Path, dir: &Path) -> Vec<String> {
    assert!(
        launcher.exists(),
        "{} was not installed",
        launcher.display()
    );
    std::fs::copy(common::root().join("loom.toml"), dir.join("loom.toml")).unwrap();
    let mut child = Command::new(launcher)
        .args(["serve", "-c", "loom.toml"])
        .current_dir(dir)
        .env_clear()
        .env("PATH", PLAIN_PATH)
        .env("HOME", dir)
        .env("XDG_RUNTIME_DIR", dir)
        .env("XDG_DATA_HOME", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{} does not run: {e}", launcher.display()));
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"packages","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if v["id"] == 2 {
                let _ = tx.send(v);
                return;
            }
        }
    });
    let listed = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{} never listed its tools", launcher.display()));
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {listed}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn the_archive_the_npm_packages_and_the_wheel_run_loom_without_rust() {
    let out = tempfile::tempdir().unwrap();
    run(
        Command::new(common::root().join("scripts/package.sh")).args([
            common::LOOM,
            "x86_64-unknown-linux-gnu",
            out.path().to_str().unwrap(),
        ]),
    );
    let file = |name: &str| out.path().join(name);
    let version = env!("CARGO_PKG_VERSION");
    let archive = format!("loom-{version}-x86_64-unknown-linux-gnu");
    let want = |tools: Vec<String>, how: &str| {
        assert!(
            tools.iter().any(|t| t == "sample_get_weather")
                && tools.iter().any(|t| t == "loom_query"),
            "{how}: {tools:?}"
        );
    };

    // The archive: its checksum holds, and it runs from an empty folder.
    run(Command::new("sha256sum")
        .args(["-c", &format!("{archive}.tar.gz.sha256")])
        .current_dir(out.path()));
    let unpacked = tempfile::tempdir().unwrap();
    run(Command::new("tar")
        .arg("-xzf")
        .arg(file(&format!("{archive}.tar.gz")))
        .current_dir(unpacked.path()));
    let folder = unpacked.path().join(&archive);
    want(served_tools(&folder.join("loom"), &folder), "the archive");

    // npm: the launcher finds this platform's package, installed beside it, offline.
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("package.json"), "{}").unwrap();
    run(Command::new("npm")
        .args(["install", "--offline", "--no-audit", "--no-fund"])
        .arg(file(&format!("loom-mcp-linux-x64-{version}.tgz")))
        .arg(file(&format!("loom-mcp-{version}.tgz")))
        .current_dir(project.path()));
    want(
        served_tools(
            &project.path().join("node_modules/.bin/loom"),
            project.path(),
        ),
        "npm",
    );

    // The wheel, in a fresh virtual environment, offline.
    let venv = tempfile::tempdir().unwrap();
    run(Command::new("python3")
        .arg("-m")
        .arg("venv")
        .arg(venv.path()));
    run(Command::new(venv.path().join("bin/pip"))
        .args(["install", "--quiet", "--no-index"])
        .arg(file(&format!(
            "loom_mcp-{version}-py3-none-manylinux_2_17_x86_64.whl"
        ))));
    want(
        served_tools(&venv.path().join("bin/loom"), venv.path()),
        "the wheel",
    );
    want(
        served_tools(&venv.path().join("bin/loom-mcp"), venv.path()),
        "the wheel's loom-mcp",
    );
}

/// The release workflow builds, tests and packs all four targets, and the Homebrew formula made
/// from a release's checksums names each target's archive with its own checksum.
#[test]
fn the_release_covers_four_targets_and_the_formula_carries_their_checksums() {
    const TARGETS: [&str; 4] = [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ];
    let workflow =
        std::fs::read_to_string(common::root().join(".github/workflows/release.yml")).unwrap();
    for t in TARGETS {
        assert!(
            workflow.contains(&format!("target: {t},")),
            "{t} is not built"
        );
    }
    assert!(workflow.contains("scripts/test.sh") && workflow.contains("scripts/package.sh"));
    let dist = tempfile::tempdir().unwrap();
    for (i, t) in TARGETS.iter().enumerate() {
        let name = format!("loom-9.9.9-{t}.tar.gz");
        std::fs::write(
            dist.path().join(format!("{name}.sha256")),
            format!("{:064x}  {name}\n", i + 1),
        )
        .unwrap();
    }
    let formula = run(
        Command::new(common::root().join("scripts/homebrew-formula.sh"))
            .arg(dist.path())
            .arg("9.9.9")
            .env_remove("GITHUB_REPOSITORY"),
    );
    for (i, t) in TARGETS.iter().enumerate() {
        let url = format!("/releases/download/v9.9.9/loom-9.9.9-{t}.tar.gz\"");
        let at = formula
            .find(&url)
            .unwrap_or_else(|| panic!("{t}: {formula}"));
        let sha = format!("sha256 \"{:064x}\"", i + 1);
        assert!(
            formula[at..]
                .trim_start_matches(|c| c != '\n')
                .trim_start()
                .starts_with(&sha),
            "{t}: {formula}"
        );
    }
    assert!(
        formula.contains("github.com/loom-mcp/loom/releases"),
        "{formula}"
    );
}
