//! The statement guard: the one gate every client's SQL passes before the engine runs it (the
//! model's `loom_query` and `loom_materialize`, the workbench, `loom query`). It decides from
//! DuckDB's own parser, never from words: the statement must parse as exactly one SELECT-family
//! statement (SELECT, WITH, FROM-first, VALUES, DESCRIBE, SUMMARIZE, PIVOT), and the engine
//! then runs text that loom built around it (`SELECT * FROM (…)`), so what was checked is what
//! runs. EXPLAIN is accepted only as a plain `EXPLAIN` of a statement that passes the same gate;
//! loom runs its own `EXPLAIN SELECT * FROM (…)`, so no option (ANALYZE in any spelling, any
//! position) can make it execute. As defence in depth the parsed tree is walked: table functions
//! must be on a short allowlist, functions that read files, settings or the environment or that
//! change state are refused, and a table name that names a file (a replacement scan) is refused.
//! When DuckDB's parse shows the text is exactly the one subquery of loom's frame (it stands
//! alone and adds nothing to the frame), that parse is the whole check and the run does the one
//! bind; a run that then fails asks the binder about the client's own text, so errors read
//! against what the client wrote. Otherwise the binder sees the client's text before it runs.
//! This module must never execute a client statement; it only parses and binds.

use super::functions::{Position, allowlist};
use super::sealed::{SealedDb, StatementKind};
use serde_json::Value;
use std::path::Path;

/// What a client asked for and passed the guard, with the text loom will run for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guarded {
    pub kind: StatementKind,
    /// For `Select`: `SELECT * FROM (\n…\n)`, to be placed after `CREATE TABLE … AS`. For
    /// `Explain`: `EXPLAIN SELECT * FROM (\n…\n)`, run as is.
    pub sql: String,
    /// The binder has already accepted the client's text. When false (the parser alone proved
    /// it, see `frames_the_text`), a failed run asks the binder, through [`binder_refusal`], so
    /// the client reads the error against its own text.
    pub bound: bool,
}

const ALLOWED: &str =
    "SELECT, WITH … SELECT, FROM-first queries, VALUES, DESCRIBE, SUMMARIZE, PIVOT and EXPLAIN";

/// Characters that make a table name a path or a URL, which DuckDB would read by replacement
/// scan (`FROM 'x.csv'`, `FROM "dir/x.parquet"`).
fn names_a_file(name: &str) -> bool {
    name.chars()
        .any(|c| matches!(c, '/' | '\\' | '.' | ':' | '*' | '?' | '~' | '$' | '%'))
}

/// Why a statement was refused, as the client should read it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

fn refuse(msg: impl Into<String>) -> Refusal {
    Refusal(msg.into())
}

/// Removes trailing semicolons and whitespace so the statement can be wrapped.
pub(super) fn body(sql: &str) -> &str {
    sql.trim_end().trim_end_matches(';').trim_end()
}

/// Decides whether `sql` may run. `private_dir` is loom's own temporary folder: no string in
/// the statement may name it.
pub fn check(db: &SealedDb, sql: &str, private_dir: &Path) -> Result<Guarded, Refusal> {
    let text = body(sql);
    if text.is_empty() {
        return Err(refuse("the query is empty"));
    }
    // A statement that begins with the EXPLAIN keyword is no SELECT: one parse, of what it
    // explains, decides it.
    if let Some(inner) = explained(text) {
        return explain(db, text, inner, private_dir);
    }
    match select(db, text, private_dir) {
        Ok((sql, bound)) => Ok(Guarded {
            kind: StatementKind::Select,
            sql,
            bound,
        }),
        Err(NotSelect::Refused(r)) => Err(r),
        Err(NotSelect::OtherType) => Err(not_allowed(text)),
    }
}

enum NotSelect {
    /// A SELECT-family statement that still may not run.
    Refused(Refusal),
    /// The parser says it is not a SELECT-family statement at all.
    OtherType,
}

/// Accepts one SELECT-family statement; returns the text to run, and whether the binder has
/// seen the client's text.
fn select(db: &SealedDb, text: &str, private_dir: &Path) -> Result<(String, bool), NotSelect> {
    let wrapped = wrap(text);
    let mut tree = match parse(db, &wrapped) {
        Ok(t) if t.len() == 1 => t,
        // Parse the text as written only to say why: its own type, its own error positions.
        _ => {
            let statements = parse(db, text)?;
            return Err(NotSelect::Refused(refuse(if statements.len() != 1 {
                format!(
                    "only one statement may run at a time; found {}",
                    statements.len()
                )
            } else {
                "the query was not accepted: it does not stand alone as one query".to_owned()
            })));
        }
    };
    walk(&tree[0], private_dir).map_err(NotSelect::Refused)?;
    if tree.pop().is_some_and(|s| frames_the_text(db, s, text)) {
        // The parser proved the text is the whole of one subquery of loom's frame: the run
        // binds it, and only a failed run needs the binder's word on the client's text.
        return Ok((wrapped, false));
    }
    // The text as written must parse as one SELECT-family statement too: a statement of
    // another type that reads as a table inside loom's frame (`PRAGMA show_tables` is the
    // table PRAGMA with an alias) is refused by the parser, never bound.
    let alone = parse(db, text)?;
    if alone.len() != 1 {
        return Err(NotSelect::Refused(refuse(format!(
            "only one statement may run at a time; found {}",
            alone.len()
        ))));
    }
    // Bind the statement as written (so error positions match the client's text) and make
    // the binder agree with the parser; this also refuses more than one statement.
    match db.classify(text) {
        Ok(StatementKind::Select) => Ok((wrapped, true)),
        Ok(_) => Err(NotSelect::OtherType),
        Err(e) => Err(NotSelect::Refused(refuse(format!(
            "the query was not accepted: {e}"
        )))),
    }
}

/// The text loom runs for a client's query: the query as the one subquery of loom's frame.
fn wrap(text: &str) -> String {
    format!("SELECT * FROM (\n{text}\n)")
}

/// Takes the client's part out of a parsed `SELECT * FROM (…)`: the subquery and its length.
/// What is left is loom's frame, the same for every query that stands alone.
fn frame(mut statement: Value) -> Option<(Value, u64)> {
    let from = statement
        .get_mut("node")?
        .get_mut("from_table")?
        .as_object_mut()?;
    from.remove("subquery")?;
    let length = from.remove("query_location_length")?.as_u64()?;
    Some((statement, length))
}

/// Whether the parsed wrapped statement is exactly loom's frame around one subquery that spans
/// the whole of `text` (its `(`, the two line breaks and its `)` included): then the text
/// stands alone as one query and cannot have closed the frame's parenthesis to add a join, an
/// alias, a clause or a set operation of its own. Decided from DuckDB's parse of a known query,
/// never from words; anything else (or a parser that gives no positions) is left to the binder.
fn frames_the_text(db: &SealedDb, statement: Value, text: &str) -> bool {
    static REFERENCE: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    let reference = match REFERENCE.get() {
        Some(r) => r,
        None => {
            let Some((r, _)) = parse(db, &wrap("SELECT 1"))
                .ok()
                .and_then(|mut t| t.pop())
                .and_then(frame)
            else {
                return false;
            };
            REFERENCE.get_or_init(|| r)
        }
    };
    frame(statement).is_some_and(|(shape, length)| {
        &shape == reference && usize::try_from(length).ok() == Some(text.len() + 4)
    })
}

/// The binder's refusal of a statement the guard let through on the parser's word alone
/// (`Guarded::bound` false), asked after its run failed: the error as the client's own text
/// gives it, or `None` when the binder accepts the text (the run failed for another reason).
pub fn binder_refusal(db: &SealedDb, sql: &str) -> Option<Refusal> {
    db.classify(body(sql))
        .err()
        .map(|e| refuse(format!("the query was not accepted: {e}")))
}

/// The parsed statements of `text` as DuckDB's serializer writes them; `OtherType` when the
/// parser reads a statement that is not a SELECT; a parse error refuses.
fn parse(db: &SealedDb, text: &str) -> Result<Vec<Value>, NotSelect> {
    let json = db
        .serialize_sql(text)
        .map_err(|e| NotSelect::Refused(refuse(format!("the query was not accepted: {e}"))))?;
    let mut v: Value = serde_json::from_str(&json).map_err(|e| {
        NotSelect::Refused(refuse(format!(
            "the query was not accepted: the parser's answer was unreadable ({e})"
        )))
    })?;
    if v.get("error").and_then(Value::as_bool) == Some(false) {
        return match v.get_mut("statements").map(Value::take) {
            Some(Value::Array(s)) => Ok(s),
            _ => Err(NotSelect::Refused(refuse(
                "the query was not accepted: the parser's answer had no statements",
            ))),
        };
    }
    let kind = v.get("error_type").and_then(Value::as_str).unwrap_or("");
    let message = v
        .get("error_message")
        .and_then(Value::as_str)
        .unwrap_or("unknown error");
    if kind == "not implemented" {
        // "Only SELECT statements can be serialized": the parser read another statement type.
        Err(NotSelect::OtherType)
    } else {
        Err(NotSelect::Refused(refuse(format!(
            "the query was not accepted: {message}"
        ))))
    }
}

/// Walks a parsed statement: every function it calls on the reviewed allowlist
/// (`functions.list`) for where it stands, a table function in FROM or any other call in an
/// expression; no table name that is a path, no string naming loom's private folder.
fn walk(node: &Value, private_dir: &Path) -> Result<(), Refusal> {
    let allowed = allowlist();
    let sealed = |name: &str| {
        refuse(format!(
            "{name}() is not available: the engine is sealed and reads only loom's datasets"
        ))
    };
    // Compared without case: a folder spelled in another case is no business of a query either.
    let private = private_dir.display().to_string().to_lowercase();
    // Each node with whether it is the call of a table function (its name already checked).
    let mut stack = vec![(node, false)];
    while let Some((v, table_call)) = stack.pop() {
        match v {
            Value::Object(map) => {
                let ty = map.get("type").and_then(Value::as_str);
                if ty == Some("TABLE_FUNCTION") {
                    let function = map.get("function");
                    let name = function
                        .and_then(|f| f.get("function_name"))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_lowercase();
                    if !allowed.allows(Position::Table, &name) {
                        return Err(sealed(&name));
                    }
                    for (key, child) in map {
                        stack.push((child, key == "function"));
                    }
                    continue;
                }
                if ty == Some("BASE_TABLE") {
                    for key in ["table_name", "schema_name", "catalog_name"] {
                        let name = map.get(key).and_then(Value::as_str).unwrap_or("");
                        if names_a_file(name) {
                            return Err(refuse(format!(
                                "`{name}` names a file; the engine is sealed and reads only loom's datasets"
                            )));
                        }
                    }
                }
                if !table_call && let Some(name) = map.get("function_name") {
                    // A call whose name is not text is no call the list knows.
                    let name = name.as_str().unwrap_or("").to_lowercase();
                    if !allowed.allows(Position::Expression, &name) {
                        return Err(sealed(&name));
                    }
                }
                stack.extend(map.values().map(|c| (c, false)));
            }
            Value::Array(items) => stack.extend(items.iter().map(|c| (c, false))),
            Value::String(s)
                if !private.is_empty()
                    // Lowercasing at most triples a string's length.
                    && s.len() * 3 >= private.len()
                    && s.to_lowercase().contains(&private) =>
            {
                return Err(refuse(
                    "loom's temporary folder is not readable: the engine is sealed and reads only loom's datasets",
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The tables a statement names (`schema.table` when it gives a schema), from DuckDB's own
/// parse of it: what a query read, for lineage. Empty when the text does not parse.
pub fn tables_read(db: &SealedDb, sql: &str) -> Vec<String> {
    let Ok(tree) = parse(db, body(sql)) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    let mut stack: Vec<&Value> = tree.iter().collect();
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                if map.get("type").and_then(Value::as_str) == Some("BASE_TABLE") {
                    let part = |k: &str| map.get(k).and_then(Value::as_str).unwrap_or("");
                    let name = match part("schema_name") {
                        "" | "main" => part("table_name").to_owned(),
                        schema => format!("{schema}.{}", part("table_name")),
                    };
                    if !name.is_empty() && !names.contains(&name) {
                        names.push(name);
                    }
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    names.sort();
    names
}

/// Whitespace, or a byte-order mark (an editor's, pasted before the first word).
fn is_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// Skips whitespace, byte-order marks and comments (`--` to the end of the line, nested `/* */`).
fn skip_space(s: &str) -> &str {
    let mut s = s.trim_start_matches(is_space);
    loop {
        if let Some(rest) = s.strip_prefix("--") {
            s = rest
                .split_once('\n')
                .map_or("", |x| x.1)
                .trim_start_matches(is_space);
        } else if s.starts_with("/*") {
            let mut depth = 0usize;
            let mut end = None;
            let mut it = s.char_indices().peekable();
            while let Some((i, c)) = it.next() {
                let next = it.peek().map(|x| x.1);
                if c == '/' && next == Some('*') {
                    depth += 1;
                    it.next();
                } else if c == '*' && next == Some('/') {
                    depth -= 1;
                    it.next();
                    if depth == 0 {
                        end = Some(i + 2);
                        break;
                    }
                }
            }
            match end.and_then(|e| s.get(e..)) {
                Some(rest) => s = rest.trim_start_matches(is_space),
                None => return "",
            }
        } else {
            return s;
        }
    }
}

/// What follows a leading `EXPLAIN` keyword (after comments and space), if the text has one.
fn explained(text: &str) -> Option<&str> {
    let start = skip_space(text);
    start
        .get(..7)
        .filter(|k| k.eq_ignore_ascii_case("explain"))
        .and_then(|_| start.get(7..))
        .filter(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
        .map(skip_space)
}

/// Words that begin a statement of a type loom refuses, and how a refusal names the type.
const STATEMENT_WORDS: &[(&str, &str)] = &[
    ("ALTER", "ALTER"),
    ("ANALYZE", "ANALYZE"),
    ("ATTACH", "ATTACH"),
    ("BEGIN", "transaction"),
    ("CALL", "CALL"),
    ("CHECKPOINT", "CHECKPOINT"),
    ("COMMENT", "COMMENT"),
    ("COMMIT", "transaction"),
    ("COPY", "COPY"),
    ("CREATE", "CREATE"),
    ("DEALLOCATE", "DEALLOCATE"),
    ("DELETE", "DELETE"),
    ("DETACH", "DETACH"),
    ("DROP", "DROP"),
    ("END", "transaction"),
    ("EXECUTE", "EXECUTE"),
    ("EXPORT", "EXPORT"),
    ("FORCE", "INSTALL"),
    ("IMPORT", "IMPORT"),
    ("INSERT", "INSERT"),
    ("INSTALL", "INSTALL"),
    ("LOAD", "LOAD"),
    ("MERGE", "MERGE INTO"),
    ("PRAGMA", "PRAGMA"),
    ("PREPARE", "PREPARE"),
    ("RESET", "RESET"),
    ("ROLLBACK", "transaction"),
    ("SET", "SET"),
    ("START", "transaction"),
    ("TRUNCATE", "TRUNCATE"),
    ("UPDATE", "UPDATE"),
    ("USE", "USE"),
    ("VACUUM", "VACUUM"),
    ("ABORT", "transaction"),
];

/// Why a statement the parser says is neither a SELECT nor an EXPLAIN is refused. The parser
/// decided; nothing is bound or prepared to name it (binding a CREATE SECRET or an IMPORT
/// would reach the seal's refusals, and their words). Only the refusal's wording comes from
/// the statement's first word.
fn not_allowed(text: &str) -> Refusal {
    let start = skip_space(text);
    let word: String = start
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_uppercase();
    if let Some((_, kind)) = STATEMENT_WORDS.iter().find(|(w, _)| *w == word) {
        return refuse(format!(
            "{kind} statements are not allowed: loom runs only read-only queries ({ALLOWED})"
        ));
    }
    let lower = text.to_lowercase();
    if lower.contains("pivot") && !body(text).contains(';') {
        // DuckDB's parser turns a PIVOT without an IN list into CREATE TYPE + SELECT.
        return refuse(
            "a PIVOT without an IN list is not allowed: DuckDB would first create a type for its values; name them, as in PIVOT t ON col IN ('a', 'b') USING sum(x)",
        );
    }
    if body(text).contains(';') {
        return refuse(format!(
            "only one statement may run at a time, and each must be a read-only query ({ALLOWED})"
        ));
    }
    refuse(format!(
        "this statement is not allowed: loom runs only read-only queries ({ALLOWED})"
    ))
}

/// Accepts `EXPLAIN <query>` with nothing between the two (`inner` is the query); runs loom's
/// own plain EXPLAIN.
fn explain(db: &SealedDb, text: &str, inner: &str, private_dir: &Path) -> Result<Guarded, Refusal> {
    let plain = |why: String| {
        refuse(format!(
            "EXPLAIN is allowed only as a plain EXPLAIN of a read-only query, with no options (ANALYZE would run it): {why}"
        ))
    };
    if inner.is_empty() {
        return Err(plain("nothing to explain".into()));
    }
    // What is explained passes the whole gate (tree walked before anything is bound).
    let (wrapped, bound) = match select(db, inner, private_dir) {
        Ok(w) => w,
        Err(NotSelect::Refused(r)) => return Err(plain(r.0)),
        Err(NotSelect::OtherType) => {
            return Err(plain(
                "what follows EXPLAIN is not a read-only query".into(),
            ));
        }
    };
    let sql = format!("EXPLAIN {wrapped}");
    if !bound {
        // The parser proved the query stands alone inside loom's frame, and a keyword before
        // it cannot change how it reads: loom's text is a plain EXPLAIN of that query. The run
        // binds it; a failed run asks the binder about the client's text.
        return Ok(Guarded {
            kind: StatementKind::Explain,
            sql,
            bound: false,
        });
    }
    // The binder must agree that the client's statement is an EXPLAIN of it, and so must it
    // for loom's own.
    for candidate in [text, sql.as_str()] {
        match db.classify(candidate) {
            Ok(StatementKind::Explain) => {}
            Ok(other) => return Err(plain(format!("it parsed as {}", other.name()))),
            Err(e) => return Err(refuse(format!("the query was not accepted: {e}"))),
        }
    }
    Ok(Guarded {
        kind: StatementKind::Explain,
        sql,
        bound: true,
    })
}

#[cfg(test)]
mod tests {
    use super::{SealedDb, check, skip_space};

    /// Every macro the list allows expands only to calls the list allows: its body, bound
    /// after the guard, reaches nothing a client could not call itself.
    #[test]
    fn every_allowed_macro_calls_only_allowed_functions() {
        use super::super::functions::{Position, allowlist};
        let dir = tempfile::tempdir().expect("tempdir");
        let db = SealedDb::open(dir.path(), "1GB", 1).expect("db");
        let private = dir.path().join("private");
        let conn = db.connect().expect("connection");
        let mut stmt = conn
            .prepare("SELECT function_type, lower(function_name), macro_definition FROM duckdb_functions() WHERE function_type IN ('macro', 'table_macro') AND macro_definition IS NOT NULL")
            .expect("catalog");
        let macros: Vec<(String, String, String)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("rows");
        let mut checked = 0;
        for (kind, name, body) in &macros {
            let (position, sql) = if kind == "table_macro" {
                (Position::Table, body.clone())
            } else {
                (Position::Expression, format!("SELECT {body}"))
            };
            if !allowlist().allows(position, name) {
                continue;
            }
            let tree = match super::parse(&db, &sql) {
                Ok(t) => t,
                Err(_) => panic!("the body of macro {name} does not parse: {sql}"),
            };
            for t in &tree {
                if let Err(e) = super::walk(t, &private) {
                    panic!("macro {name} is allowed but its body is not: {e}\n{sql}");
                }
            }
            checked += 1;
        }
        assert!(checked > 10, "{checked} of {} macros", macros.len());
    }

    /// The parser alone proves the everyday forms, in any script and with trailing comments;
    /// text that closes loom's frame to add to it never takes that path.
    #[test]
    fn the_parser_alone_proves_a_query_that_stands_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = SealedDb::open(dir.path(), "1GB", 1).expect("db");
        let private = dir.path().join("private");
        for sql in [
            "SELECT 1",
            "SELECT '東京' AS 市, 'é' AS e -- 注釈",
            "FROM range(3) SELECT range /* end */",
            "WITH t AS (SELECT 1 AS a) SELECT * FROM t;",
            "VALUES (1), (2)",
            "SELECT 1 UNION ALL SELECT 2",
            "(SELECT 1)",
            "DESCRIBE SELECT 1 AS a",
            "EXPLAIN SELECT 1",
            "/* plan */ explain -- why\n FROM range(3)",
        ] {
            let g = check(&db, sql, &private).unwrap_or_else(|e| panic!("{sql}: {e}"));
            assert!(!g.bound, "{sql} was bound by the guard");
        }
        for sql in [
            "SELECT 1) t, (SELECT 2",
            "SELECT 1) UNION ALL (SELECT 2",
            "SELECT 1) t WHERE (true",
            "SELECT 1) AS t(a",
            "SELECT 1) t JOIN (SELECT 2) u ON (true",
            "SELECT 1) t ORDER BY (1",
        ] {
            match check(&db, sql, &private) {
                Err(_) => {}
                Ok(g) => assert!(g.bound, "{sql} was not bound: {g:?}"),
            }
        }
    }

    /// A statement of another type is refused in words that name it, decided by the parser
    /// and never bound: no refusal repeats what binding it would have touched.
    #[test]
    fn other_statements_are_named_without_being_bound() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = SealedDb::open(dir.path(), "1GB", 1).expect("db");
        let private = dir.path().join("private");
        for (sql, says) in [
            ("PRAGMA database_list", "PRAGMA statements are not allowed"),
            ("PRAGMA show_tables", "PRAGMA statements are not allowed"),
            ("EXECUTE p2(1)", "EXECUTE statements are not allowed"),
            (
                "SET LOCAL memory_limit = '10GB'",
                "SET statements are not allowed",
            ),
            (
                "\u{feff}EXPLAIN ANALYZE SELECT 1",
                "EXPLAIN is allowed only as a plain EXPLAIN",
            ),
            (
                "CREATE PERSISTENT SECRET ps (TYPE s3, KEY_ID 'x', SECRET 'y')",
                "CREATE statements are not allowed",
            ),
            (
                "IMPORT DATABASE '/nonexistent/dump'",
                "IMPORT statements are not allowed",
            ),
            ("/* c */ drop table t", "DROP statements are not allowed"),
            (
                "SELECT 1; DROP TABLE t",
                "only one statement may run at a time",
            ),
            (
                "SELECT 1; SELECT 2",
                "only one statement may run at a time; found 2",
            ),
            (
                "PIVOT range(3) ON range USING count(*)",
                "a PIVOT without an IN list",
            ),
        ] {
            let e = check(&db, sql, &private).expect_err(sql).0;
            assert!(e.contains(says), "{sql}: {e}");
            for leak in [
                "stored_secrets",
                "Cannot access",
                "does not exist",
                "Binder",
            ] {
                assert!(!e.contains(leak), "{sql}: {e}");
            }
        }
    }

    #[test]
    fn skips_nested_comments_and_never_splits_a_character() {
        assert_eq!(skip_space("  /* a /* b */ c */ -- x\n SELECT"), "SELECT");
        assert_eq!(skip_space("/* unterminated"), "");
        assert_eq!(skip_space("/* é */é"), "é");
        assert_eq!(skip_space("-- only"), "");
        assert_eq!(skip_space("\u{feff} /* bom */ SELECT"), "SELECT");
    }
}
