//! What the session commands do (`tui`, `attach`, `sessions`, `query`, `export`), kept out of
//! `main.rs` so that it stays argument parsing only.

use crate::config::Config;
use crate::session::Session;
use crate::session::engine::{Engine, Reply, Request};
use crate::session::local::LocalEngine;
use crate::session::socket::{self, RemoteEngine, SessionEntry};
use crate::store::csv_field;
use crate::tui::TuiOptions;
use std::io::Write;
use std::sync::Arc;

/// `loom tui`: the proxy in-process, MCP on the session socket, the workbench on the terminal.
pub async fn tui(config: Arc<Config>, opts: TuiOptions) -> anyhow::Result<()> {
    // The seal is proven in a child while the first frame is drawn; a broken seal ends loom.
    tokio::spawn(async {
        if let Err(e) = crate::store::prove_seal_in_child().await {
            crate::tui::restore_terminal();
            eprintln!("loom: {e}");
            std::process::exit(2);
        }
    });
    let session = Session::new(config);
    let engine = LocalEngine::new(session.clone());
    engine.start_servers().await;
    let engine: Arc<dyn Engine> = engine;
    let socket = socket::listen(session.clone(), engine.clone(), "tui")
        .map_err(|e| anyhow::anyhow!("cannot open the session socket: {e}"))?;
    let result = crate::tui::run(engine, opts).await;
    drop(socket);
    session.shutdown().await;
    result
}

/// `loom attach`: the same workbench on a running session.
pub async fn attach(entry: SessionEntry, opts: TuiOptions) -> anyhow::Result<()> {
    let engine: Arc<dyn Engine> = RemoteEngine::connect(&entry).await?;
    crate::tui::run(engine, opts).await
}

/// `loom sessions`: one line per running session.
pub fn sessions(out: &mut impl Write) -> anyhow::Result<()> {
    let all = socket::sessions();
    if all.is_empty() {
        writeln!(out, "no loom session is running")?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<8} {:<5} {:<21} {:<30} {:<24} socket",
        "pid", "kind", "started", "config", "servers"
    )?;
    for s in all {
        writeln!(
            out,
            "{:<8} {:<5} {:<21} {:<30} {:<24} {}",
            s.pid,
            s.kind,
            s.started_at,
            s.config,
            s.servers.join(","),
            s.socket.display()
        )?;
    }
    Ok(())
}

async fn connect(session: Option<&str>) -> anyhow::Result<Arc<RemoteEngine>> {
    let entry = socket::resolve(session).map_err(|e| anyhow::anyhow!(e))?;
    RemoteEngine::connect(&entry).await
}

/// `loom query`: one statement against a running session, printed as a table, CSV or JSON.
pub async fn query(session: Option<&str>, sql: &str, format: &str) -> anyhow::Result<()> {
    let engine = connect(session).await?;
    let result = match engine
        .request(Request::Query {
            sql: sql.to_owned(),
        })
        .await
    {
        Ok(Reply::Query { result }) => result,
        Ok(other) => anyhow::bail!("unexpected reply: {other:?}"),
        Err(e) => anyhow::bail!("{e}"),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let names: Vec<&str> = result.columns.iter().map(|(n, _)| n.as_str()).collect();
    let mut widths: Vec<usize> = names.iter().map(|n| n.chars().count()).collect();
    let mut offset = 0;
    let mut all = Vec::new();
    if format == "csv" {
        let header: Vec<String> = names.iter().map(|n| csv_field(n)).collect();
        writeln!(out, "{}", header.join(","))?;
    }
    while offset < result.rows {
        let rows = match engine
            .request(Request::Rows {
                table: result.table.clone(),
                offset,
                limit: 5000,
            })
            .await
        {
            Ok(Reply::Rows { rows }) => rows,
            Ok(other) => anyhow::bail!("unexpected reply: {other:?}"),
            Err(e) => anyhow::bail!("{e}"),
        };
        if rows.is_empty() {
            break;
        }
        offset += rows.len() as u64;
        match format {
            "csv" => {
                for r in &rows {
                    let line: Vec<String> = r
                        .iter()
                        .map(|c| c.as_deref().map(csv_field).unwrap_or_default())
                        .collect();
                    writeln!(out, "{}", line.join(","))?;
                }
            }
            "json" => {
                for r in &rows {
                    let obj: serde_json::Map<String, serde_json::Value> = names
                        .iter()
                        .zip(r)
                        .map(|(n, c)| {
                            (
                                (*n).to_owned(),
                                c.clone()
                                    .map(serde_json::Value::String)
                                    .unwrap_or(serde_json::Value::Null),
                            )
                        })
                        .collect();
                    writeln!(out, "{}", serde_json::Value::Object(obj))?;
                }
            }
            _ => {
                for r in &rows {
                    for (i, c) in r.iter().enumerate() {
                        let w = c.as_deref().unwrap_or("NULL").chars().count().min(60);
                        widths[i] = widths[i].max(w);
                    }
                }
                all.extend(rows);
            }
        }
    }
    if format == "table" {
        let line = |cells: Vec<String>| -> String {
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{:<w$}", c, w = widths[i]))
                .collect::<Vec<_>>()
                .join(" │ ")
        };
        writeln!(
            out,
            "{}",
            line(names.iter().map(|n| (*n).to_owned()).collect())
        )?;
        writeln!(
            out,
            "{}",
            widths
                .iter()
                .map(|w| "─".repeat(*w))
                .collect::<Vec<_>>()
                .join("─┼─")
        )?;
        for r in &all {
            let cells = r
                .iter()
                .map(|c| {
                    let t = c
                        .as_deref()
                        .unwrap_or("NULL")
                        .replace(['\n', '\r', '\t'], " ");
                    t.chars().take(60).collect()
                })
                .collect();
            writeln!(out, "{}", line(cells))?;
        }
        writeln!(
            out,
            "({} row{})",
            result.rows,
            if result.rows == 1 { "" } else { "s" }
        )?;
    }
    out.flush()?;
    Ok(())
}

/// `loom export`: the session writes the file under its export_dir (never overwriting), then
/// it is copied to `output` — which must not exist yet.
pub async fn export(
    session: Option<&str>,
    dataset: &str,
    format: &str,
    output: &std::path::Path,
) -> anyhow::Result<()> {
    if output.exists() {
        anyhow::bail!("{} exists; loom never overwrites a file", output.display());
    }
    let engine = connect(session).await?;
    use std::io::IsTerminal;
    let tty = std::io::stderr().is_terminal();
    let mut feed = engine.events(false);
    let table = dataset.to_owned();
    let progress = tokio::spawn(async move {
        while let Some(ev) = feed.live.recv().await {
            if let crate::session::Event::ExportProgress {
                table: t,
                rows,
                total,
            } = ev.event
                && t == table
                && tty
            {
                let pct = (rows * 100).checked_div(total).unwrap_or(0);
                let filled = (pct / 5) as usize;
                eprint!(
                    "\r[{}{}] {pct:>3}% {rows}/{total} rows",
                    "█".repeat(filled),
                    " ".repeat(20 - filled.min(20))
                );
            }
        }
    });
    let reply = engine
        .request(Request::Export {
            table: dataset.to_owned(),
            format: format.to_owned(),
        })
        .await;
    progress.abort();
    if tty {
        eprintln!();
    }
    let (path, rows) = match reply {
        Ok(Reply::Exported { path, rows }) => (path, rows),
        Ok(other) => anyhow::bail!("unexpected reply: {other:?}"),
        Err(e) => anyhow::bail!("{e}"),
    };
    let mut src = std::fs::File::open(&path)?;
    let mut dst = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(output)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", output.display()))?;
    std::io::copy(&mut src, &mut dst)?;
    eprintln!(
        "exported {rows} rows to {} (session copy: {path})",
        output.display()
    );
    Ok(())
}
