//! `loom history`: the past sessions of a config's history folder, listed, described, removed
//! and pruned. Every word that came from a file is escaped for the terminal: a history folder
//! is outside input like any other file.

use super::TableText;
use crate::config::{Config, size_words};
use crate::history::past::{self, PastSession};
use crate::terminal_text;
use std::io::Write;

fn shown(s: &str) -> String {
    terminal_text::line(s).into_owned()
}

/// `1h 02m`, `3m 05s`, `12s`.
fn duration_words(secs: u64) -> String {
    match secs {
        s if s >= 3600 => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
        s if s >= 60 => format!("{}m {:02}s", s / 60, s % 60),
        s => format!("{s}s"),
    }
}

fn state(s: &PastSession) -> &'static str {
    match (&s.manifest, s.running) {
        (_, true) => "running",
        (None, _) => "damaged",
        (Some(m), _) if m.ended.is_none() => "not ended",
        (Some(m), _) if m.clean => "clean",
        _ => "not clean",
    }
}

fn duration(s: &PastSession) -> Option<u64> {
    let m = s.manifest.as_ref()?;
    let start = crate::types::time::parse_iso(&m.started)?;
    let end = match &m.ended {
        Some(e) => crate::types::time::parse_iso(e)?,
        None => crate::types::time::now_secs(),
    };
    Some(end.saturating_sub(start))
}

/// One session as `--format json` gives it.
fn json_of(s: &PastSession) -> serde_json::Value {
    let mut v = serde_json::to_value(s).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("state".into(), state(s).into());
        o.insert("duration_secs".into(), duration(s).into());
        o.insert("folder".into(), s.folder.display().to_string().into());
    }
    v
}

/// `loom history`: newest first.
pub fn list(config: &Config, format: &str, out: &mut impl Write) -> anyhow::Result<()> {
    let root = crate::history::dir_of(config);
    let all = past::list(&root);
    if format == "json" {
        let items: Vec<serde_json::Value> = all.iter().map(json_of).collect();
        writeln!(out, "{}", serde_json::Value::Array(items))?;
        return Ok(());
    }
    if all.is_empty() {
        writeln!(
            out,
            "no past sessions in {} (history = {:?})",
            shown(&root.display().to_string()),
            config.history.mode
        )?;
        return Ok(());
    }
    let columns: Vec<(String, String)> = [
        ("id", "VARCHAR"),
        ("started", "VARCHAR"),
        ("duration", "VARCHAR"),
        ("config", "VARCHAR"),
        ("clients", "VARCHAR"),
        ("calls", "UBIGINT"),
        ("datasets", "UBIGINT"),
        ("tokens saved", "UBIGINT"),
        ("size", "VARCHAR"),
        ("state", "VARCHAR"),
    ]
    .iter()
    .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
    .collect();
    let mut table = TableText::new(&columns);
    let rows: Vec<Vec<Option<String>>> = all
        .iter()
        .map(|s| {
            let m = s.manifest.as_ref();
            vec![
                Some(s.id.clone()),
                m.map(|m| shown(&m.started)),
                duration(s).map(duration_words),
                m.and_then(|m| m.config_path.as_deref()).map(|p| {
                    shown(
                        std::path::Path::new(p)
                            .file_name()
                            .map(|n| n.to_string_lossy())
                            .unwrap_or_default()
                            .as_ref(),
                    )
                }),
                m.map(|m| shown(&m.clients.join(", "))),
                m.map(|m| m.calls.to_string()),
                m.map(|m| m.datasets.to_string()),
                m.map(|m| m.tokens_saved.to_string()),
                Some(size_words(s.bytes)),
                Some(match &s.problem {
                    Some(p) => format!("{}: {}", state(s), shown(p)),
                    None => state(s).to_owned(),
                }),
            ]
        })
        .collect();
    table.push(&rows);
    table.write(out, all.len() as u64)?;
    writeln!(out, "in {}", shown(&root.display().to_string()))?;
    Ok(())
}

/// `loom history show S`.
pub fn show(config: &Config, id: &str, format: &str, out: &mut impl Write) -> anyhow::Result<()> {
    let s = past::find(&crate::history::dir_of(config), id).map_err(anyhow::Error::msg)?;
    let datasets = past::datasets(&s);
    if format == "json" {
        let mut v = json_of(&s);
        let list: Vec<serde_json::Value> = datasets
            .iter()
            .map(|d| match &d.meta {
                Ok(m) => serde_json::json!({
                    "ref": m.dataset_ref, "rows": m.rows, "columns": m.columns,
                    "provenance": m.provenance, "created": m.created,
                }),
                Err(e) => serde_json::json!({
                    "file": d.file.file_name().map(|n| n.to_string_lossy().into_owned()),
                    "problem": e,
                }),
            })
            .collect();
        v["datasets_archived"] = list.into();
        writeln!(out, "{v}")?;
        return Ok(());
    }
    writeln!(out, "session {}  ({})", s.id, state(&s))?;
    writeln!(out, "  folder   {}", shown(&s.folder.display().to_string()))?;
    if let Some(p) = &s.problem {
        writeln!(out, "  problem  {}", shown(p))?;
    }
    if let Some(m) = &s.manifest {
        writeln!(
            out,
            "  started  {}   ended {}   {}",
            shown(&m.started),
            shown(m.ended.as_deref().unwrap_or("-")),
            duration(&s).map(duration_words).unwrap_or_default()
        )?;
        if let Some(c) = &m.config_path {
            writeln!(out, "  config   {}", shown(c))?;
        }
        writeln!(out, "  servers  {}", shown(&m.servers.join(", ")))?;
        writeln!(out, "  clients  {}", shown(&m.clients.join(", ")))?;
        writeln!(
            out,
            "  {} calls · {} datasets · {} parked texts · {} events · {} tokens saved · {} · history = {}",
            m.calls,
            m.datasets,
            m.texts,
            m.events,
            m.tokens_saved,
            size_words(s.bytes),
            shown(&m.mode)
        )?;
        for p in &m.problems {
            writeln!(out, "  note     {}", shown(p))?;
        }
    }
    if !datasets.is_empty() {
        writeln!(out, "  datasets:")?;
    }
    for d in &datasets {
        match &d.meta {
            Ok(m) => {
                let from = m
                    .provenance
                    .as_ref()
                    .map(|p| format!("{}.{}", p.server, p.tool))
                    .unwrap_or_else(|| "loom".into());
                writeln!(
                    out,
                    "    {:<32} {:>9} rows  {} columns  from {}",
                    shown(&m.dataset_ref),
                    m.rows,
                    m.columns.len(),
                    shown(&from)
                )?;
            }
            Err(e) => writeln!(
                out,
                "    {}: {}",
                shown(
                    &d.file
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default()
                ),
                shown(e)
            )?,
        }
    }
    Ok(())
}

/// `loom history rm S`.
pub fn remove(config: &Config, id: &str, out: &mut impl Write) -> anyhow::Result<()> {
    let s = past::remove(&crate::history::dir_of(config), id).map_err(anyhow::Error::msg)?;
    writeln!(out, "removed session {} ({})", s.id, size_words(s.bytes))?;
    Ok(())
}

/// `loom history prune`: applies `history_keep_days` and `history_max_bytes` now.
pub fn prune(config: &Config, out: &mut impl Write) -> anyhow::Result<()> {
    let root = crate::history::dir_of(config);
    past::recover(&root);
    let removed = past::prune(&root, &config.history, None);
    if removed.is_empty() {
        writeln!(
            out,
            "nothing to prune in {}",
            shown(&root.display().to_string())
        )?;
    }
    for id in removed {
        writeln!(out, "removed session {id}")?;
    }
    Ok(())
}
