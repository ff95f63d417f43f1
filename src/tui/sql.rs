//! SQL as the workbench reads it: the keywords completion offers and highlighting knows, the
//! statement under the cursor, and where an engine error points in the text.

/// What completion offers besides the catalog's names: clauses, operators and aggregates.
pub const COMPLETIONS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP BY",
    "ORDER BY",
    "HAVING",
    "LIMIT",
    "OFFSET",
    "JOIN",
    "LEFT JOIN",
    "INNER JOIN",
    "ON",
    "USING",
    "AS",
    "AND",
    "OR",
    "NOT",
    "IN",
    "IS NULL",
    "IS NOT NULL",
    "DISTINCT",
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "WITH",
    "UNION ALL",
    "DESCRIBE",
    "SUMMARIZE",
    "EXPLAIN",
    "LIKE",
    "ILIKE",
    "BETWEEN",
    "CAST",
    "DESC",
    "ASC",
    "QUALIFY",
    "OVER",
    "PARTITION BY",
];

/// DuckDB words the stock SQL grammar may leave unscoped. Sorted, upper case.
pub const KEYWORDS: &[&str] = &[
    "ALL",
    "ALTER",
    "ANALYZE",
    "AND",
    "ANTI",
    "ANY",
    "AS",
    "ASC",
    "ASOF",
    "ATTACH",
    "BETWEEN",
    "BIGINT",
    "BLOB",
    "BOOLEAN",
    "BY",
    "CASE",
    "CAST",
    "COLLATE",
    "COLUMNS",
    "COPY",
    "CREATE",
    "CROSS",
    "CUBE",
    "CURRENT",
    "DATE",
    "DAY",
    "DAYS",
    "DECIMAL",
    "DEFAULT",
    "DELETE",
    "DESC",
    "DESCRIBE",
    "DETACH",
    "DISTINCT",
    "DOUBLE",
    "DROP",
    "ELSE",
    "END",
    "ESCAPE",
    "EXCEPT",
    "EXCLUDE",
    "EXISTS",
    "EXPLAIN",
    "FALSE",
    "FETCH",
    "FILTER",
    "FIRST",
    "FLOAT",
    "FOLLOWING",
    "FOR",
    "FROM",
    "FULL",
    "GLOB",
    "GROUP",
    "GROUPING",
    "HAVING",
    "HOUR",
    "HOURS",
    "HUGEINT",
    "ILIKE",
    "IN",
    "INNER",
    "INSERT",
    "INT",
    "INTEGER",
    "INTERSECT",
    "INTERVAL",
    "INTO",
    "IS",
    "ISNULL",
    "JOIN",
    "JSON",
    "LAST",
    "LATERAL",
    "LEFT",
    "LIKE",
    "LIMIT",
    "MINUTE",
    "MINUTES",
    "MONTH",
    "MONTHS",
    "NATURAL",
    "NOT",
    "NOTNULL",
    "NULL",
    "NULLS",
    "OFFSET",
    "ON",
    "OR",
    "ORDER",
    "OUTER",
    "OVER",
    "PARTITION",
    "PIVOT",
    "PIVOT_LONGER",
    "PIVOT_WIDER",
    "POSITIONAL",
    "PRAGMA",
    "PRECEDING",
    "QUALIFY",
    "RANGE",
    "RECURSIVE",
    "RENAME",
    "REPLACE",
    "RETURNING",
    "RIGHT",
    "ROLLUP",
    "ROW",
    "ROWS",
    "SAMPLE",
    "SECOND",
    "SECONDS",
    "SELECT",
    "SEMI",
    "SET",
    "SETS",
    "SHOW",
    "SIMILAR",
    "SMALLINT",
    "SOME",
    "STRUCT",
    "SUMMARIZE",
    "TABLE",
    "TABLESAMPLE",
    "TEXT",
    "THEN",
    "TIME",
    "TIMESTAMP",
    "TIMESTAMPTZ",
    "TINYINT",
    "TO",
    "TRUE",
    "TRY_CAST",
    "UBIGINT",
    "UHUGEINT",
    "UINTEGER",
    "UNBOUNDED",
    "UNION",
    "UNPIVOT",
    "USING",
    "USMALLINT",
    "UTINYINT",
    "UUID",
    "VALUES",
    "VARCHAR",
    "VIEW",
    "WHEN",
    "WHERE",
    "WINDOW",
    "WITH",
    "WITHIN",
    "YEAR",
    "YEARS",
];

/// Whether `word` is one of [`KEYWORDS`], in any case.
pub fn is_keyword(word: &str) -> bool {
    word.len() <= 16
        && KEYWORDS
            .binary_search(&word.to_ascii_uppercase().as_str())
            .is_ok()
}

/// `name` as DuckDB reads it back as the same identifier: bare when it is a plain lower-case
/// word that is none of [`KEYWORDS`], else double-quoted.
pub fn quote_ident(name: &str) -> String {
    crate::types::data::sql_name(name, is_keyword)
}

/// The `;`-separated statement that holds the cursor, and where it starts in the editor.
///
/// Which statement that is, when the cursor is between two:
/// - right after a `;`, or after it with only spaces on the rest of that line (`SELECT 1;  |`),
///   the statement that `;` ends;
/// - on blank lines after a `;`: the previous statement when nothing but blanks follows up to
///   the next `;` (or the end), else the next one;
/// - anywhere else, the statement whose text holds it (`SELECT 1; |SELECT 2` is the second).
pub fn statement_at(text: &str, cursor: (usize, usize)) -> (String, (usize, usize)) {
    // Statement boundaries, ignoring `;` inside quotes and comments.
    let mut bounds = vec![0usize];
    let b = text.as_bytes();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'-' if b.get(i + 1) == Some(&b'-') => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                }
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    i += 2;
                    while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                        i += 1;
                    }
                    i += 1;
                }
                b';' => bounds.push(i + 1),
                _ => {}
            },
        }
        i += 1;
    }
    bounds.push(text.len() + 1);
    // The cursor as a byte offset.
    let mut offset = 0;
    for (n, line) in text.split('\n').enumerate() {
        if n == cursor.0 {
            offset += line
                .char_indices()
                .nth(cursor.1)
                .map(|(o, _)| o)
                .unwrap_or(line.len());
            break;
        }
        offset += line.len() + 1;
    }
    let offset = offset.min(text.len());
    // Each statement's text, without its `;`.
    let spans: Vec<(usize, usize)> = bounds
        .windows(2)
        .map(|w| (w[0], (w[1] - 1).min(text.len())))
        .collect();
    let blank = |(s, e): (usize, usize)| text[s..e].trim().is_empty();
    // The one whose text holds the cursor (a cursor right before a `;` is in what it ends).
    let here = spans
        .iter()
        .position(|&(s, e)| offset >= s && offset <= e)
        .unwrap_or(spans.len() - 1);
    let (s, e) = spans[here];
    let before = &text[s..offset];
    let rest_of_line = text[offset..].split('\n').next().unwrap_or("");
    let after_semicolon = here > 0
        && !before.contains('\n')
        && before.trim().is_empty()
        && (before.is_empty() || rest_of_line.trim().is_empty());
    // Only blanks from the last `;` to the next: the cursor sits after the previous statement.
    let take_previous = after_semicolon || blank((s, e));
    let pick = if take_previous {
        spans[..here]
            .iter()
            .rev()
            .find(|&&span| !blank(span))
            .copied()
            .unwrap_or(spans[here])
    } else {
        spans[here]
    };
    let stmt = &text[pick.0..pick.1];
    let lead = stmt.len() - stmt.trim_start().len();
    let start = pick.0 + lead;
    let row = text[..start].matches('\n').count();
    let line_start = text[..start].rfind('\n').map_or(0, |p| p + 1);
    let col = text[line_start..start].chars().count();
    (
        stmt.trim().trim_end_matches(';').trim().to_owned(),
        (row, col),
    )
}

/// Where DuckDB's caret points in the statement `sql` that it reports on, as a 0-based line and
/// character column. DuckDB draws the caret in display columns under `LINE n: text`, and for a
/// long line shows only a window of it between `...`; the window is found in the statement's
/// own line so the column is exact either way. `None` when the message has no caret.
pub fn error_position(message: &str, sql: &str) -> Option<(usize, usize)> {
    let lines: Vec<&str> = message.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.trim_start().starts_with("LINE "))?;
    let l = lines[i];
    let rest = l.trim_start().strip_prefix("LINE ")?;
    let (num, shown) = rest.split_once(": ")?;
    let line = num.trim().parse::<usize>().ok()?.checked_sub(1)?;
    // Everything before the shown text is ASCII ("LINE 12: "), so bytes are columns there.
    let prefix = l.len() - shown.len();
    let caret = lines.get(i + 1)?.find('^')?;
    let at = caret.checked_sub(prefix)?;
    let text = sql.lines().nth(line);
    let Some(window) = shown.strip_prefix("...") else {
        return Some((line, char_at_width(text.unwrap_or(shown), at)));
    };
    let window = window.strip_suffix("...").unwrap_or(window);
    let at = at.saturating_sub(3);
    let column = text
        .and_then(|t| t.find(window).map(|b| t[..b].chars().count()))
        .map_or(0, |before| before + char_at_width(window, at));
    Some((line, column))
}

/// The character index in `text` at `width` display columns from its start.
fn char_at_width(text: &str, width: usize) -> usize {
    let mut used = 0;
    for (i, c) in text.chars().enumerate() {
        if used >= width {
            return i;
        }
        used += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
    }
    text.chars().count()
}

#[cfg(test)]
mod tests {
    use super::{COMPLETIONS, KEYWORDS, error_position, is_keyword};
    use proptest::prelude::*;

    #[test]
    fn the_caret_is_read_in_display_columns_and_through_a_window() {
        // As DuckDB 1.4 prints them (taken from `loom query`).
        let m = "Binder Error: x\n\nLINE 2:   nope_column_here FROM (SELECT 1)\n          ^^^^";
        let sql = "SELECT 1 AS a,\n  nope_column_here FROM (SELECT 1)";
        assert_eq!(error_position(m, sql), Some((1, 2)));
        let long = format!(
            "SELECT 1 AS {}, 2 AS {}, 3 AS {}, nope_column_here, 4 AS {} FROM (SELECT 1)",
            "a".repeat(36),
            "b".repeat(61),
            "c".repeat(38),
            "d".repeat(47)
        );
        let m = format!(
            "Binder Error: x\n\nLINE 1: ...{}, 3 AS {}, nope_column_here, 4 AS {}...\n{}^^^^",
            "b".repeat(12),
            "c".repeat(38),
            "d".repeat(36),
            " ".repeat(70)
        );
        let (line, col) = error_position(&m, &long).unwrap();
        assert_eq!(line, 0);
        assert_eq!(&long[col..col + 16], "nope_column_here");
        // é is one column and 天 two: the caret counts columns, the editor characters.
        let m = "Binder Error: x\n\nLINE 1: SELECT 'é天' AS x, nope FROM (SELECT 1)\n                           ^^^^";
        let sql = "SELECT 'é天' AS x, nope FROM (SELECT 1)";
        let (_, col) = error_position(m, sql).unwrap();
        assert_eq!(sql.chars().skip(col).take(4).collect::<String>(), "nope");
    }

    proptest! {
        #[test]
        fn never_panics_on_any_message(message in "\\PC{0,60}(\nLINE [0-9]{1,2}: \\PC{0,30}\n *\\^?)?", sql in "\\PC{0,40}") {
            let _ = error_position(&message, &sql);
        }
    }

    #[test]
    fn keyword_list_is_sorted_for_binary_search() {
        assert!(KEYWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn every_clause_completion_is_made_of_keywords() {
        // Aggregates are functions, not keywords; every other completion highlights as one.
        for c in COMPLETIONS {
            if ["COUNT", "SUM", "AVG", "MIN", "MAX"].contains(c) {
                continue;
            }
            for w in c.split(' ') {
                assert!(is_keyword(w), "{w} of {c} is not highlighted as a keyword");
            }
        }
    }
}
