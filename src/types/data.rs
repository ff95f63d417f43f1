//! Datasets and results as a person or a front end sees them: kind, provenance, column stats,
//! join hints, the typed description, result tables and pages, memory views.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Why a dataset left the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// Someone asked (`loom_drop`, or an envelope that could not be built).
    Dropped,
    /// Least recently used, to stay within `memory_budget`.
    Evicted,
}

/// Why a dataset exists; decides eviction order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DatasetKind {
    /// A large query result.
    Query,
    /// A downstream tool result.
    Ingest,
    /// Made on purpose by `loom_materialize`.
    Materialized,
}

/// Where a dataset or a parked text came from: the call that produced it, what was read into
/// that call or query (dataset refs, blob keys, `memory:<key>`), and the statement that derived
/// it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, serde::Deserialize)]
pub struct Lineage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
}

impl Lineage {
    pub fn is_empty(&self) -> bool {
        self.call.is_none() && self.inputs.is_empty() && self.sql.is_none()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Provenance {
    pub server: String,
    pub tool: String,
    /// Arguments with secrets masked; `None` when the server's denylist omits them.
    pub arguments: Option<Value>,
    pub at: String,
    pub rung: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnStats {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub null_fraction: f64,
    pub distinct: u64,
    /// Whether `distinct` was counted exactly (it is estimated on very large datasets).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub distinct_exact: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<Value>,
    /// The most frequent values with their counts, most frequent first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<(Value, u64)>,
    /// The column's comment in the catalog: what ingest noted about it (say, the offsets a
    /// UTC timestamp column was converted from).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JoinHint {
    pub column: String,
    pub other: String,
    pub other_column: String,
    /// Share of this column's distinct values found in the other column.
    pub this_in_other: f64,
    /// Share of the other column's distinct values found in this one.
    pub other_in_this: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Description {
    #[serde(rename = "ref")]
    pub dataset: String,
    pub kind: DatasetKind,
    pub rows: u64,
    pub pinned: bool,
    pub created: String,
    pub columns: Vec<ColumnStats>,
    pub sample_rows: Vec<Value>,
    pub join_hints: Vec<JoinHint>,
    pub provenance: Option<Provenance>,
    pub context: Map<String, Value>,
}

/// A query result held in the engine.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ResultTable {
    pub table: String,
    pub columns: Vec<(String, String)>,
    pub rows: u64,
    pub millis: u64,
}

/// One bar of a chart: a label and how many rows fall under it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Bar {
    pub label: String,
    pub count: u64,
}

/// A page of rows as display text; `None` is SQL NULL.
pub type Page = Vec<Vec<Option<String>>>;

/// A live memory as a front end shows it (the store's JSONL record is its own type).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemoryView {
    pub key: String,
    pub version: u64,
    pub content: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub pinned: bool,
    /// `model` or `human`.
    pub author: String,
    pub at: String,
    /// This version deleted the memory (only in a history).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

/// A name as it is simplest to type in DuckDB SQL and still read back as the same identifier:
/// bare when it is a plain lower-case word that `reserved` does not claim, else in double
/// quotes with every `"` doubled (any Unicode spelling is a valid identifier that way).
pub fn sql_name(name: &str, reserved: impl Fn(&str) -> bool) -> String {
    let bare = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !reserved(name);
    if bare {
        name.to_owned()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// Whether a DuckDB column type is a plain number: an integer, float or decimal of any width,
/// not an INTERVAL and not a list, array, struct or map of numbers.
pub fn is_numeric_type(ty: &str) -> bool {
    let t = ty.trim().to_ascii_uppercase();
    if t.contains('[') {
        return false;
    }
    let base = t.split('(').next().unwrap_or_default().trim();
    matches!(
        base,
        "TINYINT"
            | "SMALLINT"
            | "INTEGER"
            | "INT"
            | "BIGINT"
            | "HUGEINT"
            | "UTINYINT"
            | "USMALLINT"
            | "UINTEGER"
            | "UBIGINT"
            | "UHUGEINT"
            | "INT1"
            | "INT2"
            | "INT4"
            | "INT8"
            | "BIGNUM"
            | "VARINT"
            | "FLOAT"
            | "FLOAT4"
            | "FLOAT8"
            | "DOUBLE"
            | "REAL"
            | "DECIMAL"
            | "NUMERIC"
    )
}

/// The session's call log as a table in the store: its name and columns (name, DuckDB type),
/// one row per finished call. The store creates it; the workbench completes its names.
pub const CALLS_TABLE: &str = "loom_calls";
pub const CALLS_TABLE_COLUMNS: &[(&str, &str)] = &[
    ("call_id", "UBIGINT"),
    ("started_at", "TIMESTAMP"),
    ("client", "VARCHAR"),
    ("caller", "VARCHAR"),
    ("server", "VARCHAR"),
    ("tool", "VARCHAR"),
    ("via", "VARCHAR"),
    ("outcome", "VARCHAR"),
    ("millis", "UBIGINT"),
    ("waited_millis", "UBIGINT"),
    ("bytes_in", "UBIGINT"),
    ("bytes_out", "UBIGINT"),
    ("tokens_in", "UBIGINT"),
    ("tokens_out", "UBIGINT"),
    ("reference", "VARCHAR"),
    ("decision", "VARCHAR"),
    ("passed_because", "VARCHAR"),
    ("arguments", "VARCHAR"),
    ("batch_id", "UBIGINT"),
    ("inputs", "VARCHAR"),
];

#[cfg(test)]
mod tests {
    use super::is_numeric_type;

    #[test]
    fn numbers_are_numbers_and_nothing_else_is() {
        for t in [
            "INTEGER",
            "BIGINT",
            "DECIMAL(18,3)",
            "double",
            "UHUGEINT",
            "FLOAT",
        ] {
            assert!(is_numeric_type(t), "{t}");
        }
        for t in [
            "INTERVAL",
            "INTEGER[]",
            "DOUBLE[3]",
            "STRUCT(a INTEGER)",
            "MAP(INTEGER, INTEGER)",
            "VARCHAR",
            "POINT_INT",
        ] {
            assert!(!is_numeric_type(t), "{t}");
        }
    }
}
