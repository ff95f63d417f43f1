//! The reviewed list of the engine's functions (`functions.list`, checked into the repository):
//! for every function DuckDB's `duckdb_functions()` names, whether a client's statement may call
//! it. The statement guard allows a call only when the list says `allow` for every function of
//! that name that a call in that position (an expression, or a table in FROM) could reach;
//! anything else, a function the list does not know included, is refused. A test compares the
//! list with the engine's own catalog, so a DuckDB upgrade that adds a function fails until
//! someone reviews it. This module only reads the list; it never asks the engine.

use std::collections::HashMap;

/// The list as reviewed: one `verdict type name` line per function (see the file's head).
const LIST: &str = include_str!("functions.list");

/// Where a call stands in a statement, which decides which functions it can reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Position {
    /// In an expression: a scalar, aggregate, window function or macro.
    Expression,
    /// In FROM: a table function or table macro.
    Table,
}

/// A function's type as `duckdb_functions()` spells it, plus `parser` for names DuckDB's parser
/// and binder resolve themselves (`unnest` in an expression), which its catalog does not list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Scalar,
    Aggregate,
    Macro,
    Window,
    Parser,
    Table,
    TableMacro,
    Pragma,
}

impl Kind {
    pub(super) fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "scalar" => Kind::Scalar,
            "aggregate" => Kind::Aggregate,
            "macro" => Kind::Macro,
            "window" => Kind::Window,
            "parser" => Kind::Parser,
            "table" => Kind::Table,
            "table_macro" => Kind::TableMacro,
            "pragma" => Kind::Pragma,
            _ => return None,
        })
    }

    /// The kind as the list (and, but for `parser`, `duckdb_functions()`) spells it.
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Scalar => "scalar",
            Kind::Aggregate => "aggregate",
            Kind::Macro => "macro",
            Kind::Window => "window",
            Kind::Parser => "parser",
            Kind::Table => "table",
            Kind::TableMacro => "table_macro",
            Kind::Pragma => "pragma",
        }
    }

    /// Where a call reaches a function of this kind; a pragma is reached by no query.
    fn position(self) -> Option<Position> {
        match self {
            Kind::Scalar | Kind::Aggregate | Kind::Macro | Kind::Window | Kind::Parser => {
                Some(Position::Expression)
            }
            Kind::Table | Kind::TableMacro => Some(Position::Table),
            Kind::Pragma => None,
        }
    }
}

/// One reviewed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Reviewed {
    pub allow: bool,
    pub kind: Kind,
    pub name: String,
}

/// The lines of `text` that read as reviews, and the numbers of those that do not.
pub(super) fn parse_list(text: &str) -> (Vec<Reviewed>, Vec<usize>) {
    let mut out = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        // " # " starts a comment: an operator's name may hold a `#`, never one between spaces.
        let line = line.split_once(" # ").map_or(line, |x| x.0).trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let review = line
            .split_once(char::is_whitespace)
            .and_then(|(verdict, rest)| {
                let (kind, name) = rest.trim_start().split_once(char::is_whitespace)?;
                let allow = match verdict {
                    "allow" => true,
                    "deny" => false,
                    _ => return None,
                };
                // A name may hold spaces (`is distinct from`).
                let name = name.trim();
                Some(Reviewed {
                    allow,
                    kind: Kind::parse(kind)?,
                    name: name.to_lowercase(),
                })
                .filter(|r| !r.name.is_empty())
            });
        match review {
            Some(r) => out.push(r),
            None => bad.push(i + 1),
        }
    }
    (out, bad)
}

/// The reviewed list as the guard asks it: per position, each name's verdict (denied if any
/// function of that name reachable from there is denied).
pub(super) struct Allowlist {
    verdicts: HashMap<(Position, String), bool>,
}

impl Allowlist {
    fn from_reviews(reviews: &[Reviewed]) -> Allowlist {
        let mut verdicts: HashMap<(Position, String), bool> = HashMap::new();
        for r in reviews {
            if let Some(p) = r.kind.position() {
                let v = verdicts.entry((p, r.name.clone())).or_insert(true);
                *v &= r.allow;
            }
        }
        Allowlist { verdicts }
    }

    /// Whether a call of `name` in `position` may run. A name the list does not know is refused.
    pub(super) fn allows(&self, position: Position, name: &str) -> bool {
        self.verdicts
            .get(&(position, name.to_lowercase()))
            .copied()
            .unwrap_or(false)
    }
}

/// The checked-in list, read once. A line that does not read as a review allows nothing.
pub(super) fn allowlist() -> &'static Allowlist {
    static LOADED: std::sync::OnceLock<Allowlist> = std::sync::OnceLock::new();
    LOADED.get_or_init(|| Allowlist::from_reviews(&parse_list(LIST).0))
}

/// The checked-in list's reviews (for tests that compare it with the engine).
pub(super) fn reviews() -> Vec<Reviewed> {
    parse_list(LIST).0
}

#[cfg(test)]
mod tests {
    use super::{LIST, Position, allowlist, parse_list};

    #[test]
    fn every_line_of_the_checked_in_list_reads_as_a_review() {
        let (reviews, bad) = parse_list(LIST);
        assert!(
            bad.is_empty(),
            "unreadable lines of functions.list: {bad:?}"
        );
        assert!(reviews.len() > 500, "{}", reviews.len());
    }

    #[test]
    fn a_name_is_allowed_only_where_every_function_of_it_is() {
        let (reviews, _) = parse_list(
            "# head\nallow scalar upper\nallow table range\nallow scalar range\ndeny table query\n\
             allow scalar both # fine\ndeny aggregate both\nnonsense line here\n\
             allow scalar is distinct from   # spaces\nallow scalar #\n",
        );
        let list = super::Allowlist::from_reviews(&reviews);
        assert!(list.allows(Position::Expression, "UPPER"));
        assert!(
            list.allows(Position::Table, "range") && list.allows(Position::Expression, "range")
        );
        assert!(!list.allows(Position::Table, "upper"));
        assert!(!list.allows(Position::Table, "query"));
        assert!(!list.allows(Position::Expression, "both"));
        assert!(!list.allows(Position::Expression, "unknown"));
        assert!(list.allows(Position::Expression, "is distinct from"));
        assert!(list.allows(Position::Expression, "#"));
        let (_, bad) = parse_list("nonsense line here\nallow scalar\nallow nokind x\n");
        assert_eq!(bad, [1, 2, 3]);
        // The checked-in list: the F1 bypass and its kin are refused, everyday functions not.
        let real = allowlist();
        for name in [
            "json_serialize_plan",
            "json_serialize_sql",
            "json_deserialize_sql",
            "current_setting",
            "getenv",
            "setseed",
            "nextval",
        ] {
            assert!(!real.allows(Position::Expression, name), "{name}");
        }
        for name in [
            "query",
            "query_table",
            "read_text",
            "glob",
            "duckdb_settings",
        ] {
            assert!(!real.allows(Position::Table, name), "{name}");
        }
        for name in [
            "upper",
            "sum",
            "count_star",
            "row_number",
            "list_transform",
            "+",
        ] {
            assert!(real.allows(Position::Expression, name), "{name}");
        }
        assert!(real.allows(Position::Table, "range"));
    }

    /// The list and the engine agree: every function `duckdb_functions()` names is reviewed
    /// (a DuckDB upgrade that adds one fails here until it is), and every reviewed one but the
    /// names the parser resolves itself exists.
    #[test]
    fn every_function_the_engine_has_is_reviewed_and_no_other() {
        use std::collections::BTreeSet;
        let dir = tempfile::tempdir().expect("tempdir");
        let db = crate::store::sealed::SealedDb::open(dir.path(), "1GB", 1).expect("db");
        let conn = db.connect().expect("connection");
        let mut stmt = conn
            .prepare("SELECT DISTINCT function_type, lower(function_name) FROM duckdb_functions()")
            .expect("catalog");
        let engine: BTreeSet<(String, String)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert!(engine.len() > 500, "{}", engine.len());
        let reviewed: BTreeSet<(String, String)> = super::reviews()
            .into_iter()
            .map(|r| (r.kind.name().to_owned(), r.name))
            .collect();
        let missing: Vec<String> = engine
            .difference(&reviewed)
            .map(|(k, n)| format!("deny {k} {n}"))
            .collect();
        assert!(
            missing.is_empty(),
            "the engine has functions that src/store/functions.list has not reviewed; review each and add it as allow or deny:\n{}",
            missing.join("\n")
        );
        let stale: Vec<String> = reviewed
            .difference(&engine)
            .filter(|(k, _)| k != "parser")
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        assert!(
            stale.is_empty(),
            "src/store/functions.list reviews functions the engine no longer has:\n{}",
            stale.join("\n")
        );
    }
}
