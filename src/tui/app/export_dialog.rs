//! The export dialog: what a person chooses before a table (a dataset, a result, or the rows
//! selected in the grid) is written under `export_dir` — format, delimiter, header and file
//! name. It owns only its form; it never writes a file (the engine does, on the request it
//! makes) and never draws (see `ui/export_dialog.rs`).

use super::line_input::LineInput;
use crate::types::engine::{ExportOptions, Request};
use crossterm::event::{KeyCode, KeyEvent};

/// The formats the engine writes. Parquet is not offered: its writer is a separate extension
/// of the bundled engine, and the store's seal keeps file access closed.
pub const FORMATS: [&str; 4] = ["csv", "json", "jsonl", "parquet"];

/// Delimiters offered for CSV, with the words shown for each.
pub const DELIMITERS: [(char, &str); 4] = [
    (',', "comma"),
    (';', "semicolon"),
    ('\t', "tab"),
    ('|', "bar"),
];

/// The form's fields, top to bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Format,
    Delimiter,
    Header,
    Name,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExportDialog {
    /// The dataset or result table to write.
    pub table: String,
    /// Rows of it in the table's order, `[offset, offset + limit)`, when a selection.
    pub rows: Option<(u64, u64)>,
    /// Rows that will be written, when known.
    pub count: Option<u64>,
    /// Where files go (shown, so a person knows where to look).
    pub export_dir: String,
    pub format: usize,
    pub delimiter: usize,
    pub header: bool,
    /// The file name, proposed selected: typing replaces it, the line keys edit it.
    pub name: LineInput,
    pub field: Field,
}

impl ExportDialog {
    /// A dialog for `table` as CSV with a header and commas, its file named after `stem`
    /// (the dataset, or what a query result was read from).
    pub fn new(
        table: &str,
        stem: &str,
        rows: Option<(u64, u64)>,
        count: Option<u64>,
        export_dir: &str,
    ) -> Self {
        let name = LineInput::selected(match rows {
            Some((offset, limit)) => format!("{stem}-rows-{}-{}", offset + 1, offset + limit),
            None => stem.to_owned(),
        });
        ExportDialog {
            table: table.to_owned(),
            rows,
            count,
            export_dir: export_dir.to_owned(),
            format: 0,
            delimiter: 0,
            header: true,
            name,
            field: Field::Format,
        }
    }

    pub fn format(&self) -> &'static str {
        FORMATS[self.format % FORMATS.len()]
    }

    fn is_csv(&self) -> bool {
        self.format() == "csv"
    }

    /// The fields that apply to the chosen format, in order.
    pub fn fields(&self) -> Vec<Field> {
        if self.is_csv() {
            vec![Field::Format, Field::Delimiter, Field::Header, Field::Name]
        } else {
            vec![Field::Format, Field::Name]
        }
    }

    /// Moves to the next (or previous) field, wrapping.
    pub fn step(&mut self, forward: bool) {
        let fields = self.fields();
        let i = fields.iter().position(|f| *f == self.field).unwrap_or(0);
        let n = fields.len();
        self.field = fields[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }];
    }

    /// Changes the choice of the current field (left or right).
    pub fn cycle(&mut self, forward: bool) {
        let turn = |i: usize, n: usize| {
            if forward {
                (i + 1) % n
            } else {
                (i + n - 1) % n
            }
        };
        match self.field {
            Field::Format => self.format = turn(self.format, FORMATS.len()),
            Field::Delimiter => self.delimiter = turn(self.delimiter, DELIMITERS.len()),
            Field::Header => self.header = !self.header,
            Field::Name => {}
        }
    }

    /// A key the form's own keys did not take: the name's line keys when the name is the
    /// field, else a shortcut (`space` changes a choice).
    pub fn input(&mut self, k: &KeyEvent) {
        match self.field {
            Field::Name => {
                self.name.input(k);
            }
            _ if k.code == KeyCode::Char(' ') => self.cycle(true),
            _ => {}
        }
    }

    /// `left` / `right`: the cursor in the name, else the choice of the field.
    pub fn sideways(&mut self, right: bool) {
        if self.field == Field::Name {
            self.name.input(&KeyEvent::from(if right {
                KeyCode::Right
            } else {
                KeyCode::Left
            }));
        } else {
            self.cycle(right);
        }
    }

    /// A pasted text: its first line, into the name.
    pub fn paste(&mut self, text: &str) {
        if self.field == Field::Name {
            self.name.paste(text.lines().next().unwrap_or_default());
        }
    }

    /// The file name as it will be written, with its extension.
    pub fn file_name(&self) -> String {
        let stem = self.name.trim();
        let stem = if stem.is_empty() { &self.table } else { stem };
        let ext = self.format();
        if stem.ends_with(&format!(".{ext}")) {
            stem.to_owned()
        } else {
            format!("{stem}.{ext}")
        }
    }

    /// The request that writes what the form says.
    pub fn request(&self) -> Request {
        Request::Export {
            table: self.table.clone(),
            format: self.format().to_owned(),
            options: ExportOptions {
                delimiter: DELIMITERS[self.delimiter % DELIMITERS.len()].0,
                header: self.header,
                filename: Some(self.file_name()),
                rows: self.rows,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(d: &ExportDialog) -> (String, ExportOptions) {
        match d.request() {
            Request::Export {
                format, options, ..
            } => (format, options),
            other => panic!("{other:?}"),
        }
    }

    fn key(c: char) -> KeyEvent {
        KeyEvent::from(KeyCode::Char(c))
    }

    #[test]
    fn a_new_dialog_writes_the_whole_table_as_csv_with_a_header() {
        let d = ExportDialog::new("orders_1", "orders_1", None, Some(3), "/tmp/exports");
        let (format, o) = options(&d);
        assert_eq!(format, "csv");
        assert_eq!((o.delimiter, o.header, o.rows), (',', true, None));
        assert_eq!(o.filename.as_deref(), Some("orders_1.csv"));
    }

    #[test]
    fn choices_cycle_and_fields_follow_the_format() {
        let mut d = ExportDialog::new("_loom_result_3", "t", Some((10, 5)), Some(5), "/x");
        assert_eq!(d.name, "t-rows-11-15");
        d.step(true);
        assert_eq!(d.field, Field::Delimiter);
        d.cycle(true);
        d.cycle(true);
        d.step(true);
        d.input(&key(' '));
        let (_, o) = options(&d);
        assert_eq!(
            (o.delimiter, o.header, o.rows),
            ('\t', false, Some((10, 5)))
        );
        // JSON has no delimiter or header: the form skips them.
        d.field = Field::Format;
        d.cycle(true);
        assert_eq!(d.format(), "json");
        d.step(true);
        assert_eq!(d.field, Field::Name);
        d.step(true);
        assert_eq!(d.field, Field::Format);
    }

    #[test]
    fn the_name_takes_typing_and_pastes_without_control_characters() {
        let mut d = ExportDialog::new("t", "t", None, None, "/x");
        d.field = Field::Name;
        // The proposed name is selected: the first key replaces it.
        for c in "paid\u{1b}[31m".chars() {
            d.input(&key(c));
        }
        d.input(&KeyEvent::from(KeyCode::Backspace));
        d.paste("\u{7}x\nsecond line");
        assert_eq!(d.name, "paid[31x");
        assert_eq!(d.file_name(), "paid[31x.csv");
        // The cursor moves in the name; left and right are not the form's choices there.
        d.sideways(false);
        d.sideways(false);
        d.input(&key('-'));
        assert_eq!(d.name, "paid[3-1x");
        d.name = "  ".into();
        assert_eq!(
            d.file_name(),
            "t.csv",
            "an empty name falls back to the table's"
        );
        d.name = "done.csv".into();
        assert_eq!(d.file_name(), "done.csv");
    }
}
