//! What the session commands do (`tui`, `attach`, `sessions`, `query`, `export`), kept out of
//! `main.rs` so that it stays argument parsing only.

pub mod history;

use crate::config::Config;
use crate::frontend::compose;
use crate::frontend::engine::{Engine, Reply, Request};
use crate::frontend::socket::{self, RemoteEngine, SessionEntry};
use crate::store::csv_field;
use crate::terminal_text::{self, Sink};
use crate::tui::TuiOptions;
use std::io::Write;
use std::sync::Arc;

/// `loom tui`: the proxy in-process, MCP on the session socket, the workbench on the terminal.
pub async fn tui(
    config: Arc<Config>,
    mut opts: TuiOptions,
    http: Option<std::net::SocketAddr>,
) -> anyhow::Result<()> {
    // The seal is proven in a child while the first frame is drawn; a broken seal ends loom.
    compose::prove_seal(crate::tui::restore_terminal);
    let composed = compose::session(config, "tui", true).await;
    let mut socket = composed
        .socket
        .map_err(|e| anyhow::anyhow!("cannot open the session socket: {e}"))?;
    let (session, engine) = (composed.session, composed.engine);
    // The workbench takes the terminal at once: a token loom made could not be shown.
    let served = compose::serve_http(&session, http, Some(&mut socket), false).await?;
    if let Some(s) = &served {
        // The title bar says where clients reach this session (the token is in the variable
        // the config names, or $LOOM_HTTP_TOKEN).
        opts.title = format!("{} · MCP over HTTP at {}", opts.title, s.url);
    }
    let result = crate::tui::run(engine, opts).await;
    drop(served);
    drop(socket);
    session.shutdown().await;
    result
}

/// `loom tui --open S`: a past session of `config`'s history in the workbench, read-only.
pub async fn tui_past(config: Arc<Config>, id: &str, mut opts: TuiOptions) -> anyhow::Result<()> {
    let (session, engine, loaded) = crate::frontend::past::open(&config, id).await?;
    opts.title = format!("{} · past session {id}, read-only", opts.title);
    if !loaded.problems.is_empty() {
        opts.title = format!(
            "{} · {} item(s) could not be loaded",
            opts.title,
            loaded.problems.len()
        );
    }
    let result = crate::tui::run(engine, opts).await;
    session.shutdown().await;
    result
}

/// `loom attach`: the same workbench on a running session.
pub async fn attach(entry: SessionEntry, opts: TuiOptions) -> anyhow::Result<()> {
    let engine: Arc<dyn Engine> = RemoteEngine::connect(&entry).await?;
    let config = entry.config.clone();
    crate::tui::run_reattaching(engine, opts, Some((reattach(entry), config))).await
}

/// `loom attach` after its session ended: one look for a newer running session of the same
/// config (a `loom tui` or `loom serve` started again), joined when it answers.
fn reattach(ended: SessionEntry) -> crate::tui::Reattach {
    let ended = Arc::new(ended);
    Arc::new(move || {
        let ended = ended.clone();
        Box::pin(async move {
            let next = socket::sessions()
                .into_iter()
                .find(|s| s.config == ended.config && s.pid != ended.pid)?;
            let engine: Arc<dyn Engine> = RemoteEngine::connect(&next).await.ok()?;
            Some(crate::tui::Rejoined {
                engine,
                title: format!("loom attach {}", next.pid),
            })
        })
    })
}

/// `loom sessions`: one line per running session. Every field is escaped: a session file
/// names its config and servers, and those names come from files others may write.
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
            shown(&s.kind),
            shown(&s.started_at),
            shown(&s.config),
            shown(&s.servers.join(",")),
            shown(&s.socket.display().to_string())
        )?;
        if let Some(url) = &s.http {
            writeln!(out, "{:<8} MCP over HTTP at {}", "", shown(url))?;
        }
    }
    Ok(())
}

/// One field of a human-facing line, escaped.
fn shown(s: &str) -> String {
    terminal_text::line(s).into_owned()
}

async fn connect(session: Option<&str>) -> anyhow::Result<Arc<RemoteEngine>> {
    let entry = socket::resolve(session).map_err(|e| anyhow::anyhow!(e))?;
    RemoteEngine::connect(&entry).await
}

/// Widest cell shown by `loom query --format table`, in terminal columns.
const TABLE_CELL_WIDTH: usize = 60;

/// `loom query`: one statement against a running session, printed as a table, CSV or JSON to
/// `out`. The table is for people and is always escaped; CSV and JSON are escaped only when
/// `sink` is a terminal, and are otherwise the exact values.
pub async fn query(
    session: Option<&str>,
    sql: &str,
    format: &str,
    out: &mut impl Write,
    sink: Sink,
) -> anyhow::Result<()> {
    let engine: Arc<dyn Engine> = connect(session).await?;
    query_on(engine, sql, format, out, sink).await
}

/// A past session of `config`'s history, opened read-only; what could not be loaded is said
/// on stderr (escaped).
async fn past(config: &Config, id: &str) -> anyhow::Result<Arc<dyn Engine>> {
    let (_session, engine, loaded) = crate::frontend::past::open(config, id).await?;
    for p in &loaded.problems {
        eprintln!("loom: session {id}: {}", shown(p));
    }
    Ok(engine)
}

/// `loom query --session S`: the same, on a past session of `config`'s history.
pub async fn query_past(
    config: &Config,
    id: &str,
    sql: &str,
    format: &str,
    out: &mut impl Write,
    sink: Sink,
) -> anyhow::Result<()> {
    query_on(past(config, id).await?, sql, format, out, sink).await
}

async fn query_on(
    engine: Arc<dyn Engine>,
    sql: &str,
    format: &str,
    out: &mut impl Write,
    sink: Sink,
) -> anyhow::Result<()> {
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
    let mut out = std::io::BufWriter::new(out);
    let names: Vec<&str> = result.columns.iter().map(|(n, _)| n.as_str()).collect();
    let mut table = TableText::new(&result.columns);
    let mut offset = 0;
    if format == "csv" {
        let header: Vec<String> = names.iter().map(|n| csv_field(n)).collect();
        writeln!(out, "{}", sink.csv(&header.join(",")))?;
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
                    writeln!(out, "{}", sink.csv(&line.join(",")))?;
                }
            }
            "json" => {
                for r in &rows {
                    let obj: serde_json::Map<String, serde_json::Value> = names
                        .iter()
                        .zip(r)
                        .zip(&result.columns)
                        .map(|((n, c), (_, ty))| ((*n).to_owned(), json_cell(ty, c.as_deref())))
                        .collect();
                    let text = serde_json::Value::Object(obj).to_string();
                    writeln!(out, "{}", sink.json(&text))?;
                }
            }
            _ => table.push(&rows),
        }
    }
    if format == "table" {
        table.write(&mut out, result.rows)?;
    }
    out.flush()?;
    Ok(())
}

/// One cell of `loom query --format json` as the JSON value of its type: numbers as exact
/// numbers (a non-finite one as `"Infinity"`, `"-Infinity"` or `"NaN"`, as loom_query gives
/// it), booleans as booleans, JSON as JSON; anything else (text, times, nested values in the
/// engine's own notation) as a string.
fn json_cell(ty: &str, text: Option<&str>) -> serde_json::Value {
    use serde_json::Value;
    let Some(text) = text else {
        return Value::Null;
    };
    let ty = ty.to_ascii_uppercase();
    let numeric = [
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "HUGEINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "UHUGEINT",
        "FLOAT",
        "DOUBLE",
        "REAL",
    ]
    .contains(&ty.as_str())
        || ty.starts_with("DECIMAL");
    let parsed = || serde_json::from_str::<Value>(text).ok();
    let value = if numeric {
        match text {
            "inf" | "Infinity" => Some(Value::from("Infinity")),
            "-inf" | "-Infinity" => Some(Value::from("-Infinity")),
            "nan" | "-nan" | "NaN" => Some(Value::from("NaN")),
            _ => parsed().filter(Value::is_number),
        }
    } else if ty == "BOOLEAN" || ty == "JSON" {
        parsed().filter(|v| ty == "JSON" || v.is_boolean())
    } else {
        None
    };
    value.unwrap_or_else(|| Value::String(text.to_owned()))
}

/// `loom query --format table`: cells escaped first, then measured, so the columns line up on
/// what the terminal will actually show; numbers are right-aligned, so their digits line up.
pub(crate) struct TableText {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    widths: Vec<usize>,
    numeric: Vec<bool>,
}

impl TableText {
    /// A table of `columns` (name, type).
    pub(crate) fn new(columns: &[(String, String)]) -> TableText {
        let header: Vec<String> = columns.iter().map(|(n, _)| Self::cell(Some(n))).collect();
        let widths = header.iter().map(|h| Self::width(h)).collect();
        TableText {
            header,
            rows: Vec::new(),
            widths,
            numeric: columns
                .iter()
                .map(|(_, ty)| crate::types::data::is_numeric_type(ty))
                .collect(),
        }
    }

    /// One cell as shown: NULL for a missing value, every control character escaped, cut to
    /// the cell width on a character boundary.
    fn cell(value: Option<&str>) -> String {
        use unicode_width::UnicodeWidthChar;
        let shown = terminal_text::line(value.unwrap_or("NULL"));
        let mut out = String::new();
        let mut used = 0;
        for c in shown.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > TABLE_CELL_WIDTH {
                break;
            }
            used += w;
            out.push(c);
        }
        out
    }

    fn width(s: &str) -> usize {
        unicode_width::UnicodeWidthStr::width(s)
    }

    pub(crate) fn push(&mut self, rows: &[Vec<Option<String>>]) {
        for r in rows {
            let cells: Vec<String> = r.iter().map(|c| Self::cell(c.as_deref())).collect();
            for (w, c) in self.widths.iter_mut().zip(&cells) {
                *w = (*w).max(Self::width(c));
            }
            self.rows.push(cells);
        }
    }

    fn line(&self, cells: &[String]) -> String {
        cells
            .iter()
            .zip(&self.widths)
            .zip(&self.numeric)
            .map(|((c, w), right)| {
                let pad = " ".repeat(w.saturating_sub(Self::width(c)));
                if *right {
                    format!("{pad}{c}")
                } else {
                    format!("{c}{pad}")
                }
            })
            .collect::<Vec<_>>()
            .join(" │ ")
    }

    pub(crate) fn write(&self, out: &mut impl Write, total: u64) -> std::io::Result<()> {
        writeln!(out, "{}", self.line(&self.header))?;
        let rule: Vec<String> = self.widths.iter().map(|w| "─".repeat(*w)).collect();
        writeln!(out, "{}", rule.join("─┼─"))?;
        for r in &self.rows {
            writeln!(out, "{}", self.line(r))?;
        }
        writeln!(out, "({total} row{})", if total == 1 { "" } else { "s" })
    }
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
    let engine: Arc<dyn Engine> = connect(session).await?;
    export_on(engine, dataset, format, output).await
}

/// `loom export --session S`: the same, from a past session of `config`'s history.
pub async fn export_past(
    config: &Config,
    id: &str,
    dataset: &str,
    format: &str,
    output: &std::path::Path,
) -> anyhow::Result<()> {
    if output.exists() {
        anyhow::bail!("{} exists; loom never overwrites a file", output.display());
    }
    export_on(past(config, id).await?, dataset, format, output).await
}

async fn export_on(
    engine: Arc<dyn Engine>,
    dataset: &str,
    format: &str,
    output: &std::path::Path,
) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    let tty = std::io::stderr().is_terminal();
    let mut feed = engine.events(false);
    let table = dataset.to_owned();
    let label = shown(dataset);
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
                    "\r{label} [{}{}] {pct:>3}% {rows}/{total} rows",
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
            options: Default::default(),
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
    // Private like the session's copy: the user widens it when they mean to share it.
    let mut dst = std::os::unix::fs::OpenOptionsExt::mode(
        std::fs::OpenOptions::new().write(true).create_new(true),
        0o600,
    )
    .open(output)
    .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", output.display()))?;
    std::io::copy(&mut src, &mut dst)?;
    eprintln!(
        "exported {rows} rows to {} (session copy: {})",
        shown(&output.display().to_string()),
        shown(&path)
    );
    Ok(())
}

/// Source files larger than this are refused: a client's server list is a few kilobytes.
const IMPORT_MAX_BYTES: u64 = 16 << 20;

/// `loom import FILE [-o OUT]`: a client's server list as `loom.toml`, on `out` or in a new
/// file `output` (never overwritten); the notes, each escaped, on `err`. False when no server
/// could be imported as written (everything is kept commented out).
pub fn import(
    file: &std::path::Path,
    output: Option<&std::path::Path>,
    out: &mut impl Write,
    err: &mut impl Write,
) -> anyhow::Result<bool> {
    use std::io::Read;
    let label = if file.as_os_str() == "-" {
        "standard input".to_owned()
    } else {
        file.display().to_string()
    };
    let mut bytes = Vec::new();
    let read = if file.as_os_str() == "-" {
        std::io::stdin()
            .take(IMPORT_MAX_BYTES + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(file).and_then(|f| f.take(IMPORT_MAX_BYTES + 1).read_to_end(&mut bytes))
    };
    read.map_err(|e| anyhow::anyhow!("cannot read {}: {e}", terminal_text::line(&label)))?;
    if bytes.len() as u64 > IMPORT_MAX_BYTES {
        anyhow::bail!(
            "{} is larger than {} MiB; a client's server list is not",
            terminal_text::line(&label),
            IMPORT_MAX_BYTES >> 20
        );
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", terminal_text::line(&label)))?;
    let imported = crate::import::import(&text, &label)
        .map_err(|e| anyhow::anyhow!("{}", terminal_text::line(&e.to_string())))?;
    let file = match output {
        Some(path) => Some(
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::AlreadyExists => anyhow::anyhow!(
                        "{} exists; loom import never overwrites a file (choose another name, or remove it)",
                        terminal_text::line(&path.display().to_string())
                    ),
                    _ => anyhow::anyhow!(
                        "cannot create {}: {e}",
                        terminal_text::line(&path.display().to_string())
                    ),
                })?,
        ),
        None => None,
    };
    for n in &imported.notes {
        writeln!(err, "note: {}", terminal_text::line(n))?;
    }
    match (output, file) {
        (Some(path), Some(mut f)) => {
            f.write_all(imported.toml.as_bytes())?;
            f.sync_all()?;
            writeln!(
                err,
                "wrote {}: {} server(s){}; check it with `loom check -c {}`",
                terminal_text::line(&path.display().to_string()),
                imported.servers,
                match imported.commented {
                    0 => String::new(),
                    n => format!(", {n} kept commented out"),
                },
                terminal_text::line(&path.display().to_string()),
            )?;
        }
        _ => out.write_all(imported.toml.as_bytes())?,
    }
    if imported.servers == 0 {
        writeln!(
            err,
            "no server could be imported as written: each is kept commented out under its reason"
        )?;
    }
    Ok(imported.servers > 0)
}

#[cfg(test)]
mod tests {
    use super::TableText;

    /// Report annoyance 9: `loom query --format table` right-aligns numeric columns (their
    /// header too), text stays left-aligned.
    #[test]
    fn a_table_right_aligns_its_numbers() {
        let columns = [
            ("name".to_owned(), "VARCHAR".to_owned()),
            ("total".to_owned(), "DECIMAL(12,2)".to_owned()),
            ("n".to_owned(), "BIGINT".to_owned()),
        ];
        let mut t = TableText::new(&columns);
        t.push(&[
            vec![
                Some("Ada".into()),
                Some("25062.13".into()),
                Some("7".into()),
            ],
            vec![Some("Grace Hopper".into()), Some("5.5".into()), None],
        ]);
        let mut out = Vec::new();
        t.write(&mut out, 2).expect("written");
        let text = String::from_utf8(out).expect("utf-8");
        assert_eq!(
            text,
            "name         │    total │    n\n\
             ─────────────┼──────────┼─────\n\
             Ada          │ 25062.13 │    7\n\
             Grace Hopper │      5.5 │ NULL\n\
             (2 rows)\n"
        );
    }
}
