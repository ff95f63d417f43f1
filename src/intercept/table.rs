//! Rows found in a tool result, flattened and typed exactly. Nested objects become dotted
//! columns up to a depth, arrays and deeper values JSON columns; a column gets a type only when
//! every non-null value has it (a 19-digit id stays an exact integer, a column is DATE only if
//! every value is a date). Cells are kept column by column as slots into one text arena (no
//! string per cell), typed on two threads, and converted to typed cells only when the store
//! reads them. This module decides types and conversions; the store only applies them.

use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

/// Objects nested deeper than this become JSON columns.
pub const FLATTEN_DEPTH: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    Boolean,
    BigInt,
    UBigInt,
    HugeInt,
    Decimal,
    Double,
    Date,
    Timestamp,
    TimestampTz,
    Varchar,
    Json,
}

impl ColumnType {
    pub fn sql(self) -> &'static str {
        match self {
            ColumnType::Boolean => "BOOLEAN",
            ColumnType::BigInt => "BIGINT",
            ColumnType::UBigInt => "UBIGINT",
            ColumnType::HugeInt => "HUGEINT",
            ColumnType::Decimal => "DECIMAL(38,0)",
            ColumnType::Double => "DOUBLE",
            ColumnType::Date => "DATE",
            ColumnType::Timestamp => "TIMESTAMP",
            ColumnType::TimestampTz => "TIMESTAMPTZ",
            ColumnType::Varchar => "VARCHAR",
            ColumnType::Json => "JSON",
        }
    }
}

/// One typed cell, ready for the engine. Text cells of DATE, TIMESTAMP, DECIMAL and JSON
/// columns are cast by the engine, which parses them exactly.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Huge(i128),
    Double(f64),
    Text(Cow<'a, str>),
}

/// Where one cell's text lies in a table's arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

impl Span {
    /// The span of `start..end`, when it fits the arena's 32-bit offsets.
    pub fn of(start: usize, end: usize) -> Option<Span> {
        Some(Span {
            start: u32::try_from(start).ok()?,
            len: u32::try_from(end.checked_sub(start)?).ok()?,
        })
    }

    fn range(self) -> Range<usize> {
        self.start as usize..self.start as usize + self.len as usize
    }
}

/// One untyped cell as found: its JSON kind and, for numbers, strings and nested values, its
/// text in the arena (a number's literal text, a string's unescaped content, a nested value's
/// compact JSON as `serde_json` writes it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Slot {
    Null,
    Bool(bool),
    Num(Span),
    Str(Span),
    Json(Span),
}

impl Slot {
    /// The same slot with its text moved `by` bytes further into the arena.
    pub fn shifted(self, by: u32) -> Option<Slot> {
        let mv = |s: Span| {
            Some(Span {
                start: s.start.checked_add(by)?,
                len: s.len,
            })
        };
        Some(match self {
            Slot::Num(s) => Slot::Num(mv(s)?),
            Slot::Str(s) => Slot::Str(mv(s)?),
            Slot::Json(s) => Slot::Json(mv(s)?),
            other => other,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    pub ty: ColumnType,
}

#[derive(Debug, Clone)]
pub struct Table {
    pub columns: Vec<Column>,
    /// Column-major cells, `rows` slots per column.
    slots: Vec<Vec<Slot>>,
    /// The text every slot points into.
    arena: String,
    rows: usize,
    tier: Tier,
    /// Scalars that wrapped the rows (`total`, `cursor`…).
    pub context: Map<String, Value>,
    /// Which extraction rung found the rows.
    pub rung: &'static str,
}

/// Where rows came from decides how strings are read: text-tier cells (CSV, markdown…) are
/// all strings, so numbers and booleans are inferred from them too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    Json,
    Text,
}

fn flatten_into(
    prefix: &str,
    obj: Map<String, Value>,
    depth: usize,
    out: &mut Vec<(String, Value)>,
) {
    for (k, v) in obj {
        let name = if prefix.is_empty() {
            k
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Object(inner) if depth < FLATTEN_DEPTH && !inner.is_empty() => {
                flatten_into(&name, inner, depth + 1, out)
            }
            v => out.push((name, v)),
        }
    }
}

/// Flattens one record to (column, value) pairs in key order, moving the values.
pub fn flatten(record: Map<String, Value>) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    flatten_into("", record, 0, &mut out);
    out
}

/// DuckDB identifiers are case-insensitive: names equal up to case get a numeric suffix.
fn dedupe(names: &[String]) -> Vec<String> {
    let mut used: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let mut candidate = n.clone();
        let mut i = 2;
        while used.contains_key(&candidate.to_lowercase()) {
            candidate = format!("{n}_{i}");
            i += 1;
        }
        used.insert(candidate.to_lowercase(), 1);
        out.push(candidate);
    }
    out
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| {
        s.get(r)
            .filter(|p| p.bytes().all(|c| c.is_ascii_digit()))
            .and_then(|p| p.parse::<u32>().ok())
    };
    match (num(0..4), num(5..7), num(8..10)) {
        (Some(y), Some(m), Some(d)) => {
            let days = match m {
                1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
                4 | 6 | 9 | 11 => 30,
                2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
                2 => 28,
                _ => return false,
            };
            (1..=days).contains(&d)
        }
        _ => false,
    }
}

/// `Some(has_offset)` when `s` is an ISO-8601 timestamp.
fn timestamp_kind(s: &str) -> Option<bool> {
    if s.len() < 16 || !is_date(&s[..10]) {
        return None;
    }
    let rest = &s[10..];
    let rest = rest.strip_prefix('T').or_else(|| rest.strip_prefix(' '))?;
    let b = rest.as_bytes();
    let two = |i: usize, max: u32| {
        b.get(i..i + 2)
            .and_then(|p| std::str::from_utf8(p).ok())
            .filter(|p| p.bytes().all(|c| c.is_ascii_digit()))
            .and_then(|p| p.parse::<u32>().ok())
            .is_some_and(|v| v <= max)
    };
    if !(two(0, 23) && b.get(2) == Some(&b':') && two(3, 59)) {
        return None;
    }
    let mut i = 5;
    if b.get(i) == Some(&b':') {
        if !two(i + 1, 60) {
            return None;
        }
        i += 3;
        if b.get(i) == Some(&b'.') {
            let start = i + 1;
            i = start;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == start || i - start > 9 {
                return None;
            }
        }
    }
    match &rest[i..] {
        "" => Some(false),
        "Z" | "z" => Some(true),
        tz => {
            let t = tz.as_bytes();
            let ok = matches!(t.first(), Some(b'+' | b'-'))
                && match t.len() {
                    3 => two_digits(&tz[1..3]),
                    5 => two_digits(&tz[1..3]) && two_digits(&tz[3..5]),
                    6 => t[3] == b':' && two_digits(&tz[1..3]) && two_digits(&tz[4..6]),
                    _ => false,
                };
            ok.then_some(true)
        }
    }
}

fn two_digits(s: &str) -> bool {
    s.len() == 2 && s.bytes().all(|c| c.is_ascii_digit())
}

/// An integer literal as text: optional minus, no leading zeros (so zip codes stay text).
fn int_text(s: &str) -> Option<&str> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let ok = !digits.is_empty()
        && digits.bytes().all(|c| c.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    ok.then_some(s)
}

fn float_text(s: &str) -> bool {
    let t = s.strip_prefix('-').unwrap_or(s);
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let mut parts = mantissa.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next();
    let int_ok = !int.is_empty()
        && int.bytes().all(|c| c.is_ascii_digit())
        && (int == "0" || !int.starts_with('0'));
    let frac_ok = frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|c| c.is_ascii_digit()));
    let exp_ok = exp.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && e.bytes().all(|c| c.is_ascii_digit())
    });
    int_ok && frac_ok && exp_ok && (frac.is_some() || exp.is_some())
}

/// The exact integer behind a JSON number or integer text, widest first.
enum IntValue {
    I64(i64),
    U64(u64),
    I128(i128),
    Wide,
}

fn parse_int(text: &str) -> IntValue {
    if let Ok(v) = text.parse::<i64>() {
        IntValue::I64(v)
    } else if let Ok(v) = text.parse::<u64>() {
        IntValue::U64(v)
    } else if let Ok(v) = text.parse::<i128>() {
        IntValue::I128(v)
    } else {
        IntValue::Wide
    }
}

/// A JSON number's text when it is an integer literal (`serde_json` keeps the literal text).

#[derive(Default)]
struct Seen {
    nulls: usize,
    bools: usize,
    ints: usize,
    floats: usize,
    strings: usize,
    nested: usize,
    dates: usize,
    ts_naive: usize,
    ts_aware: usize,
    /// String cells that read as integers / floats / booleans (text tier only).
    str_ints: usize,
    str_floats: usize,
    str_bools: usize,
    widest: u8, // 0 i64, 1 u64, 2 i128, 3 wider
    negative: bool,
    big_for_double: bool,
}

fn widen(seen: &mut Seen, text: &str) {
    let w = match parse_int(text) {
        IntValue::I64(v) => {
            seen.negative |= v < 0;
            seen.big_for_double |= v.unsigned_abs() > (1u64 << 53);
            0
        }
        IntValue::U64(_) => {
            seen.big_for_double = true;
            1
        }
        IntValue::I128(v) => {
            seen.negative |= v < 0;
            seen.big_for_double = true;
            2
        }
        IntValue::Wide => {
            seen.big_for_double = true;
            3
        }
    };
    seen.widest = seen.widest.max(w);
}

impl Seen {
    /// Adds what another stretch of the same column saw.
    fn merge(&mut self, o: &Seen) {
        self.nulls += o.nulls;
        self.bools += o.bools;
        self.ints += o.ints;
        self.floats += o.floats;
        self.strings += o.strings;
        self.nested += o.nested;
        self.dates += o.dates;
        self.ts_naive += o.ts_naive;
        self.ts_aware += o.ts_aware;
        self.str_ints += o.str_ints;
        self.str_floats += o.str_floats;
        self.str_bools += o.str_bools;
        self.widest = self.widest.max(o.widest);
        self.negative |= o.negative;
        self.big_for_double |= o.big_for_double;
    }
}

/// The text of a span, empty when the span is not in the arena (it always is).
fn text_of(arena: &str, span: Span) -> &str {
    arena.get(span.range()).unwrap_or_default()
}

fn observe(seen: &mut Seen, slot: Slot, arena: &str, tier: Tier) {
    match slot {
        Slot::Null => seen.nulls += 1,
        Slot::Bool(_) => seen.bools += 1,
        // A JSON number's literal text: an integer literal is read exactly, widest first.
        Slot::Num(span) => {
            let t = text_of(arena, span);
            if int_text(t).is_some() {
                seen.ints += 1;
                widen(seen, t);
            } else {
                seen.floats += 1;
            }
        }
        Slot::Str(span) => {
            let s = text_of(arena, span);
            if tier == Tier::Text && s.is_empty() {
                seen.nulls += 1;
                return;
            }
            seen.strings += 1;
            if is_date(s) {
                seen.dates += 1;
            } else if let Some(aware) = timestamp_kind(s) {
                if aware {
                    seen.ts_aware += 1
                } else {
                    seen.ts_naive += 1
                }
            }
            if tier == Tier::Text {
                if let Some(t) = int_text(s) {
                    seen.str_ints += 1;
                    widen(seen, t);
                } else if float_text(s) {
                    seen.str_floats += 1;
                } else if s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("false") {
                    seen.str_bools += 1;
                }
            }
        }
        Slot::Json(_) => seen.nested += 1,
    }
}

fn int_type(seen: &Seen) -> ColumnType {
    match seen.widest {
        0 => ColumnType::BigInt,
        1 if !seen.negative => ColumnType::UBigInt,
        1 | 2 => ColumnType::HugeInt,
        _ => ColumnType::Decimal,
    }
}

fn decide(seen: &Seen) -> ColumnType {
    let values = seen.bools + seen.ints + seen.floats + seen.strings + seen.nested;
    if values == 0 {
        return ColumnType::Varchar;
    }
    if seen.nested > 0 {
        return ColumnType::Json;
    }
    if seen.bools == values {
        return ColumnType::Boolean;
    }
    if seen.ints == values || (seen.strings == values && seen.str_ints == values) {
        // DECIMAL(38,0) holds at most 38 digits; wider integers stay text.
        return int_type(seen);
    }
    let numeric = seen.ints + seen.floats + seen.str_ints + seen.str_floats;
    if numeric == values && seen.floats + seen.str_floats > 0 {
        // A DOUBLE would round integers beyond 2^53: keep such a column as text.
        return if seen.big_for_double {
            ColumnType::Varchar
        } else {
            ColumnType::Double
        };
    }
    if seen.strings == values {
        if seen.str_bools == values {
            return ColumnType::Boolean;
        }
        if seen.dates == values {
            return ColumnType::Date;
        }
        if seen.ts_naive == values {
            return ColumnType::Timestamp;
        }
        if seen.ts_aware == values {
            return ColumnType::TimestampTz;
        }
    }
    ColumnType::Varchar
}

fn bool_text(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// The typed cell of one slot in a column of type `ty`.
fn cell(slot: Slot, ty: ColumnType, arena: &str, tier: Tier) -> Cell<'_> {
    let text = |span| text_of(arena, span);
    match slot {
        Slot::Null => return Cell::Null,
        Slot::Str(span) if tier == Tier::Text && span.len == 0 => return Cell::Null,
        _ => {}
    }
    if ty == ColumnType::Json {
        // Every value as JSON text: strings quoted and escaped, the rest as written.
        return Cell::Text(match slot {
            Slot::Str(span) => Cow::Owned(Value::String(text(span).to_owned()).to_string()),
            Slot::Num(span) | Slot::Json(span) => Cow::Borrowed(text(span)),
            Slot::Bool(b) => Cow::Borrowed(bool_text(b)),
            Slot::Null => return Cell::Null,
        });
    }
    let as_text = match slot {
        Slot::Num(span) | Slot::Str(span) | Slot::Json(span) => text(span),
        Slot::Bool(b) => bool_text(b),
        Slot::Null => return Cell::Null,
    };
    match ty {
        ColumnType::Boolean => match slot {
            Slot::Bool(b) => Cell::Bool(b),
            Slot::Str(_) => Cell::Bool(as_text.eq_ignore_ascii_case("true")),
            _ => Cell::Null,
        },
        ColumnType::BigInt | ColumnType::UBigInt | ColumnType::HugeInt => {
            match parse_int(as_text) {
                IntValue::I64(i) if ty == ColumnType::BigInt => Cell::Int(i),
                IntValue::I64(i) if ty == ColumnType::UBigInt => Cell::UInt(i as u64),
                IntValue::U64(u) if ty == ColumnType::UBigInt => Cell::UInt(u),
                IntValue::I64(i) => Cell::Huge(i as i128),
                IntValue::U64(u) => Cell::Huge(u as i128),
                IntValue::I128(h) => Cell::Huge(h),
                IntValue::Wide => Cell::Text(Cow::Borrowed(as_text)),
            }
        }
        ColumnType::Double => match slot {
            // A JSON number that does not fit a double is no value, never infinity.
            Slot::Num(_) => as_text
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(Cell::Double)
                .unwrap_or(Cell::Null),
            Slot::Str(_) => as_text
                .parse::<f64>()
                .map(Cell::Double)
                .unwrap_or(Cell::Null),
            _ => Cell::Null,
        },
        _ => Cell::Text(Cow::Borrowed(as_text)),
    }
}

/// Appends `s` to the arena and returns where it went.
fn push_text(arena: &mut String, s: &str) -> Option<Span> {
    let start = arena.len();
    arena.push_str(s);
    Span::of(start, arena.len())
}

/// A flattened value as a slot, its text appended to the arena.
fn slot_of(v: Value, arena: &mut String) -> Option<Slot> {
    Some(match v {
        Value::Null => Slot::Null,
        Value::Bool(b) => Slot::Bool(b),
        Value::Number(n) => Slot::Num(push_text(arena, n.as_str())?),
        Value::String(s) => Slot::Str(push_text(arena, &s)?),
        nested => Slot::Json(push_text(arena, &nested.to_string())?),
    })
}

/// Each column's type: rows are observed in two halves on two threads and the counts merged.
fn type_columns(
    slots: &[Vec<Slot>],
    rows: usize,
    arena: &str,
    tier: Tier,
) -> Option<Vec<ColumnType>> {
    let observe_rows = |range: Range<usize>| -> Vec<Seen> {
        slots
            .iter()
            .map(|col| {
                let mut seen = Seen::default();
                for slot in col.get(range.clone()).unwrap_or_default() {
                    observe(&mut seen, *slot, arena, tier);
                }
                seen
            })
            .collect()
    };
    let half = rows / 2;
    let (mut left, right) = std::thread::scope(|scope| {
        let right = scope.spawn(|| observe_rows(half..rows));
        let left = observe_rows(0..half);
        (left, right.join().ok())
    });
    // Never lie: a lost half (a panicked thread) means no table at all.
    let right = right?;
    if right.len() != left.len() {
        return None;
    }
    for (l, r) in left.iter_mut().zip(&right) {
        l.merge(r);
    }
    Some(left.iter().map(decide).collect())
}

impl Table {
    /// Builds a typed table from columns of slots (`names[i]` names `slots[i]`; a column
    /// shorter than `rows` ends in nulls) whose text is in `arena`.
    pub fn from_slots(
        names: Vec<String>,
        mut slots: Vec<Vec<Slot>>,
        rows: usize,
        arena: String,
        tier: Tier,
        context: Map<String, Value>,
        rung: &'static str,
    ) -> Option<Table> {
        if rows == 0 || names.is_empty() || names.len() != slots.len() {
            return None;
        }
        for col in &mut slots {
            if col.len() > rows {
                return None;
            }
            col.resize(rows, Slot::Null);
        }
        let types = type_columns(&slots, rows, &arena, tier)?;
        let columns = dedupe(&names)
            .into_iter()
            .zip(types)
            .map(|(name, ty)| Column { name, ty })
            .collect();
        Some(Table {
            columns,
            slots,
            arena,
            rows,
            tier,
            context,
            rung,
        })
    }

    /// Builds a typed table from records; `None` when there is nothing tabular in them.
    pub fn from_records(
        records: Vec<Map<String, Value>>,
        tier: Tier,
        context: Map<String, Value>,
        rung: &'static str,
    ) -> Option<Table> {
        let rows = records.len();
        let mut arena = String::new();
        let mut names: Vec<String> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut slots: Vec<Vec<Slot>> = Vec::new();
        for (r, record) in records.into_iter().enumerate() {
            for (pos, (name, v)) in flatten(record).into_iter().enumerate() {
                // Rows usually repeat the same keys in the same order: compare before hashing.
                let c = if names.get(pos) == Some(&name) {
                    pos
                } else if let Some(&c) = index.get(&name) {
                    c
                } else {
                    index.insert(name.clone(), names.len());
                    names.push(name);
                    slots.push(Vec::new());
                    names.len() - 1
                };
                let slot = slot_of(v, &mut arena)?;
                let col = slots.get_mut(c)?;
                // A name twice in one record (`a.b` and `{"a": {"b"…}}`): the last value wins.
                if col.len() > r {
                    *col.last_mut()? = slot;
                } else {
                    col.resize(r, Slot::Null);
                    col.push(slot);
                }
            }
        }
        Table::from_slots(names, slots, rows, arena, tier, context, rung)
    }

    /// How many rows the table has.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The typed cells of column `col` for `rows`.
    pub fn cells(&self, col: usize, rows: Range<usize>) -> impl Iterator<Item = Cell<'_>> + '_ {
        let ty = self.columns.get(col).map(|c| c.ty);
        let slots = self
            .slots
            .get(col)
            .and_then(|s| s.get(rows))
            .unwrap_or_default();
        slots.iter().map(move |slot| match ty {
            Some(ty) => cell(*slot, ty, &self.arena, self.tier),
            None => Cell::Null,
        })
    }

    /// One typed cell.
    pub fn cell(&self, row: usize, col: usize) -> Cell<'_> {
        self.cells(col, row..row + 1).next().unwrap_or(Cell::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn recs(v: Value) -> Vec<Map<String, Value>> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_object().unwrap().clone())
            .collect()
    }

    fn types(t: &Table) -> Vec<(&str, &str)> {
        t.columns
            .iter()
            .map(|c| (c.name.as_str(), c.ty.sql()))
            .collect()
    }

    #[test]
    fn exact_types_from_json() {
        let rows: Vec<Map<String, Value>> = recs(serde_json::from_str(r#"[
            {"id": 7300000000000007919, "big": 18446744073709551615, "huge": 123456789012345678901234567890, "n": 1, "x": 1.5, "ok": true, "d": "2025-01-31", "t": "2025-01-31T10:00:00", "tz": "2025-01-31T10:00:00Z", "s": "a"},
            {"id": 7300000000000015838, "big": 1, "huge": -1, "n": 2, "x": 2, "ok": false, "d": "2024-02-29", "t": "2025-01-31 10:00:00.123", "tz": "2025-01-31T10:00:00+02:00", "s": "2025-13-01"}
        ]"#).unwrap());
        let t = Table::from_records(rows, Tier::Json, Map::new(), "json").unwrap();
        assert_eq!(
            types(&t),
            vec![
                ("id", "BIGINT"),
                ("big", "UBIGINT"),
                ("huge", "HUGEINT"),
                ("n", "BIGINT"),
                ("x", "DOUBLE"),
                ("ok", "BOOLEAN"),
                ("d", "DATE"),
                ("t", "TIMESTAMP"),
                ("tz", "TIMESTAMPTZ"),
                ("s", "VARCHAR")
            ]
        );
        assert_eq!(t.cell(0, 0), Cell::Int(7_300_000_000_000_007_919));
        assert_eq!(t.cell(0, 1), Cell::UInt(u64::MAX));
        assert_eq!(
            t.cell(0, 2),
            Cell::Huge(123_456_789_012_345_678_901_234_567_890)
        );
    }

    #[test]
    fn a_column_is_a_date_only_if_every_value_is() {
        let t = Table::from_records(
            recs(json!([{ "d": "2025-01-01" }, { "d": "soon" }, { "d": null }])),
            Tier::Json,
            Map::new(),
            "json",
        )
        .unwrap();
        assert_eq!(t.columns[0].ty, ColumnType::Varchar);
    }

    #[test]
    fn flattening_dedup_and_json_columns() {
        let t = Table::from_records(
            recs(json!([
                { "id": 1, "profile": { "city": "Porto", "geo": { "lat": 41.1, "deep": { "x": 1 } } }, "tags": ["a"], "ID": 9, "名前": "x" },
                { "id": 2, "profile": { "city": "Lyon" }, "tags": [], "ID": 8 }
            ])),
            Tier::Json,
            Map::new(),
            "json",
        )
        .unwrap();
        let names: Vec<_> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "id",
                "profile.city",
                "profile.geo.lat",
                "profile.geo.deep",
                "tags",
                "ID_2",
                "名前"
            ]
        );
        assert_eq!(t.columns[3].ty, ColumnType::Json);
        assert_eq!(t.columns[4].ty, ColumnType::Json);
        assert_eq!(t.cell(1, 1), Cell::Text("Lyon".into()));
        assert_eq!(t.cell(1, 2), Cell::Null);
    }

    #[test]
    fn text_tier_infers_numbers_but_keeps_leading_zeros() {
        let t = Table::from_records(
            recs(json!([{ "n": "12", "f": "1.5", "zip": "0123", "b": "true", "e": "" }, { "n": "-3", "f": "2", "zip": "4567", "b": "False", "e": "" }])),
            Tier::Text,
            Map::new(),
            "csv",
        )
        .unwrap();
        assert_eq!(
            types(&t),
            vec![
                ("n", "BIGINT"),
                ("f", "DOUBLE"),
                ("zip", "VARCHAR"),
                ("b", "BOOLEAN"),
                ("e", "VARCHAR")
            ]
        );
        assert_eq!(t.cell(1, 0), Cell::Int(-3));
        assert_eq!(t.cell(0, 4), Cell::Null);
    }

    #[test]
    fn doubles_never_round_big_integers() {
        let t = Table::from_records(
            recs(json!([{ "v": 9007199254740993u64 }, { "v": 0.5 }])),
            Tier::Json,
            Map::new(),
            "json",
        )
        .unwrap();
        assert_eq!(t.columns[0].ty, ColumnType::Varchar);
    }
}
