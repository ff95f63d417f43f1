//! History end to end: the real `loom serve` archives a session while a client calls the
//! built-in sample server; the archive survives `kill -9`; `loom history`, `query --session`,
//! `export --session` read it; secrets stay masked on disk; a server with `history = false`
//! leaves no results; a past session is loaded beside a live one and joined; a past session
//! opened read-only refuses every change and keeps its datasets' and texts' lineage; and an
//! outside reader (the Python `duckdb` package, installed by the test command) reads the
//! archive with the same rows and types loom has.

mod common;

use common::{
    LOOM, RawClient, TempConfig, decide, is_error_result, next_approval, sample_config,
    session_entry, text_of,
};
use loom::frontend::engine::Engine;
use loom::frontend::socket::RemoteEngine;
use loom::session::approvals::Decision;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const SECRET: &str = "sk-live-abcdefghijklmnop1234";

fn history_config(extra_server: &str) -> TempConfig {
    sample_config("history_dir = \"history\"", extra_server)
}

fn loom(cfg: &TempConfig, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(LOOM)
        .args(args)
        .arg("-c")
        .arg(&cfg.path)
        .env("XDG_RUNTIME_DIR", cfg.dir.path())
        .env("XDG_DATA_HOME", cfg.dir.path())
        .output()
        .expect("run loom");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn sessions(cfg: &TempConfig) -> Vec<Value> {
    let (ok, out, err) = loom(cfg, &["history", "--format", "json"]);
    assert!(ok, "loom history failed: {err}");
    serde_json::from_str::<Value>(&out)
        .unwrap_or_else(|e| panic!("loom history --format json is not JSON ({e}): {out}"))
        .as_array()
        .cloned()
        .expect("an array")
}

fn query_past(cfg: &TempConfig, id: &str, sql: &str) -> Vec<Value> {
    let (ok, out, err) = loom(cfg, &["query", "--session", id, "--format", "json", sql]);
    assert!(ok, "loom query --session failed: {err}");
    out.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON row"))
        .collect()
}

fn spawn(cfg: &TempConfig) -> RawClient {
    let data = cfg.dir.path().display().to_string();
    RawClient::spawn_with(&cfg.path, &[("XDG_DATA_HOME", data.as_str())])
}

fn session_folders(cfg: &TempConfig) -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = std::fs::read_dir(cfg.file("history"))
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    all.sort();
    all
}

/// Every byte of every file under `dir`.
fn all_bytes(dir: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.extend(std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

/// Everything archived under `folder`, as text a grep can read: Parquet compresses its pages,
/// so every value of every column of every Parquet file is decoded (by an outside reader, the
/// Python `duckdb` package), and every other file is taken as it is.
fn archived_text(folder: &Path) -> String {
    python(
        "import duckdb, json, pathlib, sys\n\
         out = []\n\
         for p in sorted(pathlib.Path(sys.argv[1]).rglob('*')):\n\
         \x20   if not p.is_file(): continue\n\
         \x20   if p.suffix == '.parquet':\n\
         \x20       rel = duckdb.sql(f\"SELECT * FROM read_parquet('{p}')\")\n\
         \x20       out += [str(v) for row in rel.fetchall() for v in row]\n\
         \x20   else:\n\
         \x20       out.append(p.read_bytes().decode('utf-8', 'replace'))\n\
         print(json.dumps(out))",
        &[folder.to_str().unwrap()],
    )
    .to_string()
}

/// Ends the session of the one client `c` shares with the calls that waited for approval, and
/// the folder it was archived in.
async fn ended_session(
    cfg: &TempConfig,
    c: std::sync::Arc<tokio::sync::Mutex<RawClient>>,
) -> PathBuf {
    let mut c = std::sync::Arc::try_unwrap(c)
        .ok()
        .expect("one owner")
        .into_inner();
    c.close_stdin();
    assert!(c.wait_exit(Duration::from_secs(30)).await);
    let id = sessions(cfg)[0]["id"].as_str().unwrap().to_owned();
    cfg.file("history").join(id)
}

fn python(script: &str, args: &[&str]) -> Value {
    let out = Command::new(common::venv_python())
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("the test venv's python (scripts/install-test-peers.sh installs it)");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("python printed JSON")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_is_archived_as_it_goes_and_what_it_made_survives_kill_9() {
    let cfg = history_config("");
    let mut c = spawn(&cfg);
    c.initialize().await;
    let r = c.call("sample_list_orders", json!({})).await;
    assert!(text_of(&r).contains("sample_list_orders_1"), "{r}");
    let r = c.call("sample_get_weather", json!({"city": "Oslo"})).await;
    assert!(!common::is_error_result(&r), "{r}");
    // The dataset is written when it is made, the calls within a few seconds.
    let found = common::eventually(Duration::from_secs(30), || {
        session_folders(&cfg).first().is_some_and(|s| {
            s.join("datasets/sample_list_orders_1.parquet").is_file()
                && std::fs::read_dir(s.join("calls"))
                    .map(|r| {
                        r.flatten()
                            .any(|e| e.file_name().to_string_lossy().starts_with("part-"))
                    })
                    .unwrap_or(false)
        })
    })
    .await;
    assert!(found, "no archive in {:?}", cfg.file("history"));
    let pid = c.child.id().expect("pid") as i32;
    // SAFETY: killing our own child.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert!(c.wait_exit(Duration::from_secs(10)).await);

    let listed = sessions(&cfg);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["state"], "not ended", "{listed:?}");
    let id = listed[0]["id"].as_str().expect("id").to_owned();

    // The next loom of this history folder finishes the session and says it was not clean.
    let (ok, _, err) = loom(&cfg, &["history", "prune"]);
    assert!(ok, "{err}");
    let listed = sessions(&cfg);
    assert_eq!(listed[0]["state"], "not clean", "{listed:?}");
    assert_eq!(listed[0]["manifest"]["clean"], false);
    assert_eq!(listed[0]["manifest"]["calls"], 2, "{listed:?}");
    assert_eq!(listed[0]["manifest"]["datasets"], 1, "{listed:?}");

    let rows = query_past(
        &cfg,
        &id,
        "SELECT count(*) AS n, sum(amount) AS total, typeof(sum(amount)) AS t FROM sample_list_orders_1",
    );
    assert_eq!(rows[0]["n"], 1000, "{rows:?}");
    assert!(
        rows[0]["t"].as_str().unwrap().starts_with("DECIMAL"),
        "{rows:?}"
    );
    let calls = query_past(&cfg, &id, "SELECT tool FROM loom_calls ORDER BY call_id");
    assert_eq!(
        calls,
        vec![
            json!({"tool": "sample_list_orders"}),
            json!({"tool": "sample_get_weather"})
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_past_session_is_listed_shown_queried_exported_read_outside_and_removed() {
    let cfg = history_config("");
    let mut c = spawn(&cfg);
    c.initialize().await;
    let r = c
        .call(
            "sample_list_orders",
            json!({"status": "paid", "api_key": SECRET}),
        )
        .await;
    assert!(text_of(&r).contains("sample_list_orders_1"), "{r}");
    let r = c.call("sample_tail_logs", json!({"lines": 3000})).await;
    assert!(text_of(&r).contains("blob/"), "parked: {r}");
    let live_total = c
        .call(
            "loom_query",
            json!({"sql": "SELECT sum(amount)::VARCHAR AS s, count(*) AS n, min(created_at)::VARCHAR AS first FROM sample_list_orders_1"}),
        )
        .await;
    let live_row = live_total["result"]["structuredContent"]["rows"][0].clone();
    c.close_stdin();
    assert!(
        c.wait_exit(Duration::from_secs(30)).await,
        "loom did not exit"
    );

    let listed = sessions(&cfg);
    assert_eq!(listed.len(), 1);
    let s = &listed[0];
    assert_eq!(s["state"], "clean", "{s}");
    assert_eq!(s["manifest"]["calls"], 3, "{s}");
    assert_eq!(s["manifest"]["datasets"], 1, "{s}");
    assert_eq!(s["manifest"]["texts"], 1, "{s}");
    assert!(
        s["manifest"]["tokens_saved"].as_u64().unwrap() > 10_000,
        "{s}"
    );
    let id = s["id"].as_str().unwrap().to_owned();
    let folder = cfg.file("history").join(&id);

    // Files 0600, folders 0700.
    use std::os::unix::fs::PermissionsExt;
    for (p, want) in [
        (folder.clone(), 0o700),
        (folder.join("datasets"), 0o700),
        (folder.join("manifest.json"), 0o600),
        (folder.join("calls/calls.parquet"), 0o600),
        (folder.join("datasets/sample_list_orders_1.parquet"), 0o600),
    ] {
        let mode = std::fs::metadata(&p).expect("exists").permissions().mode() & 0o777;
        assert_eq!(mode, want, "{}", p.display());
    }
    // The secret is masked everywhere on disk, whatever file it could be in.
    let bytes = all_bytes(&folder);
    assert!(
        !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
        "the secret reached the archive"
    );

    let (ok, out, err) = loom(&cfg, &["history", "show", &id]);
    assert!(ok, "{err}");
    assert!(
        out.contains("sample_list_orders_1") && out.contains("clean"),
        "{out}"
    );

    let past = query_past(
        &cfg,
        &id,
        "SELECT sum(amount)::VARCHAR AS s, count(*) AS n, min(created_at)::VARCHAR AS first FROM sample_list_orders_1",
    );
    assert_eq!(
        past[0], live_row,
        "the past session answers as the live one did"
    );
    let args = query_past(
        &cfg,
        &id,
        "SELECT arguments FROM loom_calls WHERE tool = 'sample_list_orders'",
    );
    let a = args[0]["arguments"].as_str().unwrap();
    assert!(a.contains("[redacted]") && !a.contains(SECRET), "{a}");

    // Parquet export of a past dataset, and the outside reader on it and on the archive.
    let exported = cfg.file("orders.parquet");
    let (ok, _, err) = loom(
        &cfg,
        &[
            "export",
            "--session",
            &id,
            "sample_list_orders_1",
            "--format",
            "parquet",
            "-o",
            exported.to_str().unwrap(),
        ],
    );
    assert!(ok, "{err}");
    let script = r#"
import duckdb, json, sys
con = duckdb.connect()
archive, exported = sys.argv[1], sys.argv[2]
def one(sql):
    return con.execute(sql).fetchone()
out = {
  "archive": list(map(str, one(f"SELECT sum(amount)::VARCHAR, count(*), min(created_at)::VARCHAR FROM read_parquet('{archive}/*/datasets/sample_list_orders_1.parquet')"))),
  "exported": list(map(str, one(f"SELECT sum(amount)::VARCHAR, count(*), min(created_at)::VARCHAR FROM read_parquet('{exported}')"))),
  "types": [[r[0], r[1]] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{archive}/*/datasets/sample_list_orders_1.parquet')").fetchall()],
  "calls": one(f"SELECT count(*) FROM read_parquet('{archive}/*/calls/*.parquet')")[0],
  "described": one(f"SELECT value FROM parquet_kv_metadata('{archive}/*/datasets/sample_list_orders_1.parquet') WHERE decode(key) = 'loom.dataset'")[0].decode(),
}
print(json.dumps(out))
"#;
    let seen = python(
        script,
        &[
            cfg.file("history").to_str().unwrap(),
            exported.to_str().unwrap(),
        ],
    );
    let want = vec![
        live_row["s"].as_str().unwrap().to_owned(),
        live_row["n"].to_string(),
        live_row["first"].as_str().unwrap().to_owned(),
    ];
    assert_eq!(seen["archive"], json!(want), "{seen}");
    assert_eq!(seen["exported"], json!(want), "{seen}");
    assert_eq!(seen["calls"], 3, "{seen}");
    let live_types = query_past(
        &cfg,
        &id,
        "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'sample_list_orders_1' ORDER BY column_index",
    );
    let live_types: Vec<Value> = live_types
        .iter()
        .map(|r| json!([r["column_name"], r["data_type"]]))
        .collect();
    assert_eq!(
        seen["types"],
        json!(live_types),
        "the outside reader sees loom's types"
    );
    let described: Value =
        serde_json::from_str(seen["described"].as_str().unwrap()).expect("loom.dataset is JSON");
    assert_eq!(
        described["provenance"]["tool"], "list_orders",
        "{described}"
    );
    assert_eq!(
        described["provenance"]["arguments"]["api_key"], "[redacted]",
        "{described}"
    );

    let (ok, out, err) = loom(&cfg, &["history", "rm", &id]);
    assert!(ok && out.contains("removed"), "{out}{err}");
    assert!(!folder.exists());
    assert!(sessions(&cfg).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_with_history_false_leaves_its_calls_without_arguments_or_results() {
    let cfg = history_config("history = false");
    let mut c = spawn(&cfg);
    c.initialize().await;
    let r = c
        .call("sample_list_orders", json!({"status": "paid"}))
        .await;
    assert!(text_of(&r).contains("sample_list_orders_1"), "{r}");
    c.close_stdin();
    assert!(c.wait_exit(Duration::from_secs(30)).await);
    let listed = sessions(&cfg);
    let id = listed[0]["id"].as_str().unwrap().to_owned();
    let folder = cfg.file("history").join(&id);
    assert_eq!(
        std::fs::read_dir(folder.join("datasets")).unwrap().count(),
        0,
        "no dataset of that server is archived"
    );
    let rows = query_past(
        &cfg,
        &id,
        "SELECT tool, arguments, reference FROM loom_calls",
    );
    assert_eq!(
        rows,
        vec![json!({"tool": "sample_list_orders", "arguments": "", "reference": null})]
    );
    assert!(!all_bytes(&folder).windows(4).any(|w| w == b"paid"));
    let archived = archived_text(&folder);
    assert!(
        archived.contains("sample_list_orders") && !archived.contains("paid"),
        "{archived}"
    );
}

/// Everything the archive writes is masked as the wire is: the approval of a batch (its
/// statement and every row's arguments) and of a bound call leave no planted secret in any
/// archived byte (the attacker pass of 2026-12-07, F3: a batch approval's `batch.arguments`
/// and `batch.sql` were on disk in clear), while the call log still says what ran.
#[tokio::test(flavor = "multi_thread")]
async fn approvals_of_batches_and_bound_calls_leave_no_secret_on_disk() {
    const STRIPE: &str = "sk_live_AAAAAAAAAAAAAAAAAAAAAAAAAA";
    const GITHUB: &str = "ghp_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";
    const BEARER: &str = "abcdefabcdef0123456789";
    let cfg = sample_config(
        "history_dir = \"history\"\nhistory = \"calls\"\napproval_timeout = 30",
        "",
    );
    let mut c = spawn(&cfg);
    c.initialize().await;
    c.tool_names().await;
    let entry = session_entry(&cfg).await;
    let eng = RemoteEngine::connect(&entry).await.expect("attach");
    let mut feed = eng.events(true);
    let c = std::sync::Arc::new(tokio::sync::Mutex::new(c));
    let call = |tool: &'static str, args: Value| {
        let c = c.clone();
        tokio::spawn(async move { c.lock().await.call(tool, args).await })
    };
    // A batch of a destructive tool whose rows carry secrets (the note's body is only hashed
    // by the server, so no result holds them).
    let sql = format!(
        "SELECT 'note ' || i AS title, '{STRIPE} and Bearer {BEARER}' AS body FROM range(3) t(i)"
    );
    let pending = call(
        "loom_call_each",
        json!({ "tool": "sample_write_note", "sql": sql }),
    );
    let req = next_approval(&mut feed).await;
    assert!(
        req.batch.as_ref().is_some_and(|b| b.arguments.len() == 3),
        "the person sees the whole batch: {req:?}"
    );
    decide(&*eng, req.approval, Decision::Once).await;
    let r = pending.await.unwrap();
    assert!(!is_error_result(&r), "{r}");
    // A call whose argument holds a token, denied.
    let pending = call(
        "loom_call",
        json!({ "tool": "sample_write_note", "arguments": { "title": "t", "body": format!("token {GITHUB}") } }),
    );
    let req = next_approval(&mut feed).await;
    decide(
        &*eng,
        req.approval,
        Decision::Deny {
            reason: Some(format!("not with {GITHUB}")),
        },
    )
    .await;
    let r = pending.await.unwrap();
    assert!(is_error_result(&r), "{r}");
    drop(eng);
    let folder = ended_session(&cfg, c).await;
    let decoded = archived_text(&folder);
    assert!(
        decoded.contains("sample_write_note"),
        "the decoded archive holds the calls: {decoded}"
    );
    for secret in [STRIPE, GITHUB, BEARER] {
        assert!(!decoded.contains(secret), "{secret} is archived in clear");
    }
    // What was asked and decided is still there, masked.
    // Read by an outside reader, as anyone with the folder could.
    let events = python(
        "import duckdb, json, sys\n\
         rows = duckdb.sql(f\"SELECT kind, detail FROM read_parquet('{sys.argv[1]}/events/*.parquet') \
         WHERE kind LIKE 'approval%' ORDER BY seq\").fetchall()\n\
         print(json.dumps([{'kind': k, 'detail': d} for k, d in rows]))",
        &[folder.to_str().unwrap()],
    );
    let events = events.as_array().expect("rows");
    assert!(events.len() >= 4, "{events:?}");
    let asked = events[0]["detail"].as_str().unwrap();
    assert!(
        asked.contains("\"batch\"") && asked.contains("[redacted]"),
        "{asked}"
    );
}

/// `history = false` follows the data (the attacker pass of 2026-12-07, F4): a materialized
/// copy of that server's rows, a batch of another server's tool that its rows drove (the
/// batch's calls, its dataset and the batch call itself), and an approval prompt holding its
/// values bound into another tool leave none of its values in the archive, while the calls
/// are still listed.
#[tokio::test(flavor = "multi_thread")]
async fn history_false_follows_what_was_made_from_the_servers_data() {
    let cfg = TempConfig::new(&format!(
        "history_dir = \"history\"\napproval_timeout = 30\nexport_dir = \"exports\"\nmemory_file = \"memories.jsonl\"\n\
         [[servers]]\nname = \"sample\"\ncommand = {LOOM:?}\nargs = [\"sample-server\"]\napprove.cross_server = \"allow\"\n\
         [[servers]]\nname = \"secret\"\ncommand = {LOOM:?}\nargs = [\"sample-server\"]\nhistory = false\n"
    ));
    let mut c = spawn(&cfg);
    c.initialize().await;
    c.tool_names().await;
    let r = c.call("secret_list_orders", json!({ "limit": 200 })).await;
    let source = r["result"]["structuredContent"]["ref"]
        .as_str()
        .unwrap_or_else(|| panic!("a dataset: {r}"))
        .to_owned();
    let r = c
        .call(
            "loom_materialize",
            json!({ "sql": format!("SELECT 'SECRETCOPY-' || order_id AS v FROM {source}"), "name": "copied_secret" }),
        )
        .await;
    assert!(!is_error_result(&r), "{r}");
    let r = c
        .call(
            "loom_call_each",
            json!({ "tool": "sample_get_weather", "sql": format!("SELECT 'SECRETROW-' || order_id AS city FROM {source} ORDER BY order_id LIMIT 3") }),
        )
        .await;
    assert!(!is_error_result(&r), "{r}");
    // Its values bound into a tool that asks a person first.
    let entry = session_entry(&cfg).await;
    let eng = RemoteEngine::connect(&entry).await.expect("attach");
    let mut feed = eng.events(true);
    let c = std::sync::Arc::new(tokio::sync::Mutex::new(c));
    let pending = {
        let c = c.clone();
        let sql =
            format!("SELECT 'SECRETBOUND-' || order_id FROM {source} ORDER BY order_id LIMIT 2");
        tokio::spawn(async move {
            c.lock()
                .await
                .call(
                    "loom_call",
                    json!({ "tool": "sample_write_note", "arguments": { "title": "t" }, "bind": { "/body": { "sql": sql, "as": "csv" } } }),
                )
                .await
        })
    };
    let req = next_approval(&mut feed).await;
    assert!(
        req.arguments.to_string().contains("SECRETBOUND-"),
        "the person sees the values: {req:?}"
    );
    decide(&*eng, req.approval, Decision::Once).await;
    assert!(!is_error_result(&pending.await.unwrap()));
    drop(eng);
    let archived = archived_text(&ended_session(&cfg, c).await);
    for tool in [
        "secret_list_orders",
        "loom_materialize",
        "loom_call_each",
        "sample_get_weather",
        "sample_write_note",
    ] {
        assert!(archived.contains(tool), "{tool} is listed: {archived}");
    }
    for secret in [
        "SECRETCOPY-",
        "SECRETROW-",
        "SECRETBOUND-",
        "7300000000000007919",
    ] {
        assert!(
            !archived.contains(secret),
            "{secret} is archived: {archived}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_past_session_loads_beside_a_live_one_and_joins_with_it() {
    let cfg = history_config("");
    let mut c = spawn(&cfg);
    c.initialize().await;
    c.call("sample_list_orders", json!({})).await;
    c.close_stdin();
    assert!(c.wait_exit(Duration::from_secs(30)).await);
    let past_id = sessions(&cfg)[0]["id"].as_str().unwrap().to_owned();

    let mut c = spawn(&cfg);
    c.initialize().await;
    c.call("sample_list_orders", json!({})).await;
    let listed = c.call("loom_history", json!({})).await;
    let ids: Vec<&str> = listed["result"]["structuredContent"]["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        vec![past_id.as_str()],
        "this session is not listed: {listed}"
    );
    let loaded = c
        .call("loom_history", json!({"action": "load", "id": past_id}))
        .await;
    assert!(!common::is_error_result(&loaded), "{loaded}");
    let schema = loaded["result"]["structuredContent"]["schema"]
        .as_str()
        .unwrap()
        .to_owned();
    let joined = c
        .call(
            "loom_query",
            json!({"sql": format!("SELECT count(*) AS same FROM {schema}.sample_list_orders_1 p JOIN sample_list_orders_1 t USING (order_id) WHERE p.amount = t.amount AND p.status = t.status")}),
        )
        .await;
    assert_eq!(
        joined["result"]["structuredContent"]["rows"][0]["same"], 1000,
        "{joined}"
    );
    let calls = c
        .call(
            "loom_query",
            json!({"sql": format!("SELECT count(*) AS n FROM {schema}.loom_calls")}),
        )
        .await;
    assert_eq!(
        calls["result"]["structuredContent"]["rows"][0]["n"], 1,
        "{calls}"
    );
    // The seal holds: loom loaded the files; a statement still cannot name one.
    let file = cfg
        .file("history")
        .join(&past_id)
        .join("datasets/sample_list_orders_1.parquet");
    let sealed = c
        .call(
            "loom_query",
            json!({"sql": format!("SELECT count(*) FROM read_parquet('{}')", file.display())}),
        )
        .await;
    assert!(common::is_error_result(&sealed), "{sealed}");
    // Nor can a client write into a loaded session.
    let write = c
        .call(
            "loom_query",
            json!({"sql": format!("DELETE FROM {schema}.sample_list_orders_1")}),
        )
        .await;
    assert!(common::is_error_result(&write), "{write}");
    let unloaded = c
        .call("loom_history", json!({"action": "unload", "id": past_id}))
        .await;
    assert!(!common::is_error_result(&unloaded), "{unloaded}");
    let gone = c
        .call(
            "loom_query",
            json!({"sql": format!("SELECT count(*) FROM {schema}.sample_list_orders_1")}),
        )
        .await;
    assert!(common::is_error_result(&gone), "{gone}");
    let bad = c
        .call("loom_history", json!({"action": "load", "id": "../../etc"}))
        .await;
    assert!(common::is_error_result(&bad), "{bad}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_past_session_opened_read_only_refuses_every_change() {
    use loom::frontend::engine::{Engine, Request};
    use loom::types::events::Decision;
    let cfg = history_config("");
    let mut c = spawn(&cfg);
    c.initialize().await;
    c.call("sample_list_orders", json!({})).await;
    c.close_stdin();
    assert!(c.wait_exit(Duration::from_secs(30)).await);
    let id = sessions(&cfg)[0]["id"].as_str().unwrap().to_owned();
    let config = loom::config::Config::load(&cfg.path).expect("config");
    let (_session, engine, loaded) = loom::frontend::past::open(&config, &id)
        .await
        .expect("opens");
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let datasets = engine.request(Request::Datasets).await.expect("datasets");
    assert!(format!("{datasets:?}").contains("sample_list_orders_1"));
    let calls = engine
        .request(Request::Calls { limit: 10 })
        .await
        .expect("calls");
    assert!(
        format!("{calls:?}").contains("sample_list_orders"),
        "{calls:?}"
    );
    let refused = [
        Request::CallTool {
            name: "sample_cancel_order".into(),
            arguments: json!({"order_id": 1}),
        },
        Request::Approve {
            approval: 1,
            decision: Decision::Once,
        },
        Request::RestartServer {
            server: "sample".into(),
        },
        Request::PinTool {
            name: "sample_list_orders".into(),
        },
        Request::CancelCall { call: 1 },
    ];
    for r in refused {
        let answer = engine.request(r.clone()).await;
        assert!(
            matches!(&answer, Err(e) if e.to_string().contains("read-only")),
            "{r:?} was not refused: {answer:?}"
        );
    }
    // Every request that is not on the reading list is refused, so a new one must be added
    // there on purpose.
    assert!(!loom::frontend::past::reads_only(&Request::MemoryDelete {
        key: "k".into()
    }));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_past_session_keeps_where_its_datasets_and_texts_came_from() {
    use loom::frontend::engine::{Engine, Reply, Request};
    let cfg = history_config("");
    let mut c = spawn(&cfg);
    c.initialize().await;
    let r = c.call("sample_list_orders", json!({})).await;
    assert!(text_of(&r).contains("sample_list_orders_1"), "{r}");
    let r = c.call("sample_tail_logs", json!({"lines": 3000})).await;
    let key = text_of(&r)
        .split(|ch: char| ch == '"' || ch.is_whitespace())
        .find(|w| w.starts_with("blob/"))
        .map(|w| w.trim_end_matches([',', '.', ')']).to_owned())
        .unwrap_or_else(|| panic!("no parked text in {r}"));
    let sql = "SELECT order_id FROM sample_list_orders_1 WHERE status = 'pending' ORDER BY order_id LIMIT 5";
    let r = c
        .call(
            "loom_call_each",
            json!({ "tool": "sample_get_order_details", "sql": sql }),
        )
        .await;
    let batch = r["result"]["structuredContent"]["ref"]
        .as_str()
        .unwrap_or_else(|| panic!("no dataset from the batch: {r}"))
        .to_owned();
    // What the live session says of each, to hold the past one to.
    let live = c.call("loom_describe", json!({ "ref": batch })).await;
    let live_lineage = live["result"]["structuredContent"]["lineage"].clone();
    assert_eq!(live_lineage["sql"], json!(sql), "{live}");
    c.close_stdin();
    assert!(c.wait_exit(Duration::from_secs(30)).await);

    let id = sessions(&cfg)[0]["id"].as_str().unwrap().to_owned();
    let calls = query_past(
        &cfg,
        &id,
        "SELECT tool, call_id FROM loom_calls ORDER BY call_id",
    );
    let call_of = |tool: &str| {
        calls
            .iter()
            .find(|r| r["tool"] == tool)
            .map(|r| r["call_id"].as_u64().unwrap())
            .unwrap_or_else(|| panic!("no {tool} call in {calls:?}"))
    };
    let config = loom::config::Config::load(&cfg.path).expect("config");
    let (_session, engine, loaded) = loom::frontend::past::open(&config, &id)
        .await
        .expect("opens");
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let Ok(Reply::Datasets { datasets }) = engine.request(Request::Datasets).await else {
        panic!("no datasets");
    };
    let lineage_of = |name: &str| {
        datasets
            .iter()
            .find(|d| d.dataset == name)
            .and_then(|d| d.lineage.clone())
            .unwrap_or_else(|| panic!("{name} has no lineage: {datasets:?}"))
    };
    assert_eq!(
        lineage_of("sample_list_orders_1").call,
        Some(call_of("sample_list_orders"))
    );
    assert_eq!(
        serde_json::to_value(lineage_of(&batch)).unwrap(),
        live_lineage,
        "the batch's dataset keeps its call, inputs and statement"
    );
    let Ok(Reply::Blobs { blobs }) = engine.request(Request::Blobs).await else {
        panic!("no parked texts");
    };
    let text = blobs
        .iter()
        .find(|b| b.key == key)
        .unwrap_or_else(|| panic!("{key} is not in {blobs:?}"));
    assert_eq!(
        text.lineage.as_ref().and_then(|l| l.call),
        Some(call_of("sample_tail_logs")),
        "the parked text says which call made it: {text:?}"
    );
}

/// The history folder is held to `history_max_bytes` while a session runs (issue 45, hole 6:
/// a running session wrote 29 MB against a 5 MB bound, pruned only at the next start). Data
/// that does not compress is materialized and parked, well past the bound: the folder never
/// holds more than the bound, the manifest says what was no longer archived, and in the next
/// session the past one goes first, while that session runs.
#[tokio::test(flavor = "multi_thread")]
async fn the_history_folder_stays_within_its_bound_while_a_session_runs() {
    const BOUND: u64 = 3 << 20;
    let cfg = sample_config(
        "history_dir = \"history\"\nhistory_max_bytes = \"3MiB\"",
        "",
    );
    let mut c = spawn(&cfg);
    c.initialize().await;
    for seed in 0..6 {
        materialize_noise(&mut c, seed).await;
        let text: String = (0..40)
            .map(|i| format!("{:x}", md5_like(seed * 100 + i)))
            .collect::<Vec<_>>()
            .join("\n");
        let r = c.call("loom_park", json!({ "content": text })).await;
        assert!(!is_error_result(&r), "{r}");
    }
    // Every dataset was looked at by the writer once its envelope wait passed.
    tokio::time::sleep(Duration::from_secs(8)).await;
    let held = loom::history::size_of(&cfg.file("history"));
    assert!(held <= BOUND, "{held} bytes against a bound of {BOUND}");
    c.close_stdin();
    assert!(c.wait_exit(Duration::from_secs(30)).await);
    let first = sessions(&cfg);
    assert_eq!(first.len(), 1);
    let problems = first[0]["manifest"]["problems"].to_string();
    assert!(
        problems.contains("history_max_bytes") && problems.contains("not archived"),
        "{problems}"
    );
    let first_id = first[0]["id"].as_str().unwrap().to_owned();
    assert!(loom::history::size_of(&cfg.file("history")) <= BOUND);

    // The next session makes room as it goes: the past session goes before its own data.
    let mut c = spawn(&cfg);
    c.initialize().await;
    for seed in 10..13 {
        materialize_noise(&mut c, seed).await;
    }
    let gone = common::eventually(Duration::from_secs(30), || {
        !cfg.file("history").join(&first_id).exists()
    })
    .await;
    assert!(
        gone,
        "the past session was kept while this one ran past the bound"
    );
    let held = loom::history::size_of(&cfg.file("history"));
    assert!(held <= BOUND, "{held} bytes against a bound of {BOUND}");
    c.close_stdin();
    assert!(c.wait_exit(Duration::from_secs(30)).await);
}

/// Materializes `noise_<seed>`: about a megabyte of Parquet, since md5 digests do not compress.
async fn materialize_noise(c: &mut RawClient, seed: u32) {
    let sql = format!(
        "SELECT md5(({seed} * 1000000 + i)::VARCHAR) || md5(i::VARCHAR || 'x{seed}') AS v FROM range(20000) t(i)"
    );
    let r = c
        .call(
            "loom_materialize",
            json!({ "sql": sql, "name": format!("noise_{seed}") }),
        )
        .await;
    assert!(!is_error_result(&r), "{r}");
}

/// A number's bits spread out (a stand-in for random text that needs no crate).
fn md5_like(n: u32) -> u128 {
    let mut x = u128::from(n).wrapping_add(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C834);
    for _ in 0..4 {
        x ^= x >> 33;
        x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD_C4CE_B9FE_1A85_EC53);
    }
    x
}
