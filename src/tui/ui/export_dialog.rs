//! The export dialog drawn: the form's fields with the current one marked, where the file
//! will go, and the keys. It only reads the dialog's state.

use super::super::app::ExportDialog;
use super::super::app::export_dialog::{DELIMITERS, FORMATS, Field};
use super::super::theme::Theme;
use super::{centred, fit, plural};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

fn format_label(f: &str) -> &'static str {
    match f {
        "csv" => "CSV",
        "json" => "JSON",
        "parquet" => "Parquet",
        _ => "JSON Lines",
    }
}

pub fn draw(f: &mut Frame, area: Rect, th: &Theme, d: &ExportDialog) {
    let r = centred(f, area, 70, 50);
    let width = r.width.saturating_sub(4) as usize;
    let what = match (d.rows, d.count) {
        (Some((offset, n)), _) => format!(
            "{} of {} (rows {}–{})",
            plural(n, "row"),
            d.table,
            offset + 1,
            offset + n
        ),
        (None, Some(n)) => format!("{} · {}", d.table, plural(n, "row")),
        (None, None) => d.table.clone(),
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(th.border_focused)
        .style(th.base)
        .title(Span::styled(
            fit(&format!(" Export {what} "), width),
            th.title_focused,
        ));
    let label = |field: Field, text: &str| {
        let style = if d.field == field {
            th.selection
        } else {
            th.muted
        };
        Span::styled(format!(" {text:<10} "), style)
    };
    let choices = |all: Vec<&str>, chosen: usize| {
        let mut spans = Vec::new();
        for (i, c) in all.iter().enumerate() {
            if i == chosen {
                spans.push(Span::styled(format!("‹{c}›"), th.accent));
            } else {
                spans.push(Span::styled(format!(" {c} "), th.muted));
            }
            spans.push(Span::raw(" "));
        }
        spans
    };
    let mut lines = vec![Line::raw("")];
    let mut format = vec![label(Field::Format, "Format")];
    format.extend(choices(
        FORMATS.iter().map(|f| format_label(f)).collect(),
        d.format,
    ));
    lines.push(Line::from(format));
    if d.fields().contains(&Field::Delimiter) {
        let mut delim = vec![label(Field::Delimiter, "Delimiter")];
        delim.extend(choices(
            DELIMITERS.iter().map(|(_, w)| *w).collect(),
            d.delimiter,
        ));
        lines.push(Line::from(delim));
        lines.push(Line::from(vec![
            label(Field::Header, "Header"),
            Span::styled(
                if d.header {
                    "[x] column names first"
                } else {
                    "[ ] no header row"
                },
                th.base,
            ),
        ]));
    }
    let mut name = vec![label(Field::Name, "File name")];
    if d.field == Field::Name
        && fit(&d.name.with_cursor(), width.saturating_sub(12)) == d.name.with_cursor()
    {
        name.extend(d.name.spans(th.base, th.selection));
    } else {
        let shown = if d.field == Field::Name {
            d.name.with_cursor()
        } else {
            d.name.to_string()
        };
        name.push(Span::styled(fit(&shown, width.saturating_sub(12)), th.base));
    }
    lines.push(Line::from(name));
    let dir = if d.export_dir.is_empty() {
        "export_dir".to_owned()
    } else {
        d.export_dir.clone()
    };
    lines.push(Line::from(vec![
        Span::styled(format!(" {:<10} ", "Goes to"), th.muted),
        Span::styled(
            fit(
                &format!("{dir}/{}", d.file_name()),
                width.saturating_sub(12),
            ),
            th.base,
        ),
    ]));
    lines.push(Line::styled(
        fit(
            "            an existing file is never replaced: -1, -2… is added",
            width,
        ),
        th.muted,
    ));
    lines.push(Line::raw(""));
    lines.push(Line::from(vec![
        Span::styled(" enter", th.key),
        Span::raw(" exports · "),
        Span::styled("tab ↑↓", th.key),
        Span::raw(" field · "),
        Span::styled("←→ space", th.key),
        Span::raw(" choice · "),
        Span::styled("esc", th.key),
        Span::raw(" cancels"),
    ]));
    f.render_widget(Paragraph::new(lines).block(block), r);
}
