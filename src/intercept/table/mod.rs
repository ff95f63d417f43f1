//! Rows found in a tool result, flattened and typed exactly. A key that holds an object on any
//! row is one JSON column with every value as sent (objects, nulls, scalars); when every
//! non-null value of it is an object, its members are also given as dotted columns beside it
//! (`meta.q`, up to a depth): views that lose nothing, since the JSON column stays the truth.
//! Arrays and deeper objects are JSON columns. A column gets a type only when every non-null
//! value has it (a 19-digit id stays an exact integer, a column is DATE only if every value is
//! a date). Times with a UTC offset are converted exactly to UTC, because the sealed engine
//! has no time-zone functions; a time with digits past the microsecond stays text, because the
//! engine's TIMESTAMP would drop them. Cells are kept column by column as slots into one text
//! arena (no string per cell), typed on two threads, and converted to typed cells only when the
//! store reads them. This module decides types and conversions; the store only applies them.
//! Cells are untrusted text: they are read only at boundaries checked first.

mod scalars;

use crate::types::time::civil_from_days;
use scalars::*;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Range;

/// Objects nested deeper than this are JSON columns only, with no dotted views of their members.
pub const FLATTEN_DEPTH: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    Boolean,
    BigInt,
    UBigInt,
    HugeInt,
    /// Exact decimals: `precision` digits in all, `scale` of them after the point. Numbers that
    /// all have at most `scale` fractional digits get this rather than DOUBLE, so sums of
    /// money are exact.
    Decimal {
        precision: u8,
        scale: u8,
    },
    Double,
    Date,
    Timestamp,
    /// ISO timestamps that carry an offset, converted exactly to UTC wall time and stored as a
    /// plain TIMESTAMP: the sealed engine has no time-zone extension, so a TIMESTAMPTZ column
    /// would refuse `date_trunc`, `strftime` and charts. The column's note names the offsets.
    TimestampUtc,
    Varchar,
    Json,
}

impl ColumnType {
    /// The type as the engine spells it (and `duckdb_columns()` reports it).
    pub fn sql(self) -> String {
        match self {
            ColumnType::Boolean => "BOOLEAN".into(),
            ColumnType::BigInt => "BIGINT".into(),
            ColumnType::UBigInt => "UBIGINT".into(),
            ColumnType::HugeInt => "HUGEINT".into(),
            ColumnType::Decimal { precision, scale } => format!("DECIMAL({precision},{scale})"),
            ColumnType::Double => "DOUBLE".into(),
            ColumnType::Date => "DATE".into(),
            ColumnType::Timestamp => "TIMESTAMP".into(),
            ColumnType::TimestampUtc => "TIMESTAMP".into(),
            ColumnType::Varchar => "VARCHAR".into(),
            ColumnType::Json => "JSON".into(),
        }
    }
}

/// One typed cell, ready for the engine. Text cells of DATE, TIMESTAMP and JSON columns are
/// cast by the engine, which parses them exactly.
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
    /// What a reader must know that the type does not say: the offsets a UTC timestamp
    /// column was converted from, and whether a JSON column of objects is also flattened or
    /// a dotted column is a view of one.
    pub note: Option<String>,
    /// The column whose objects this one is a member of (`meta` for `meta.q`): its values are
    /// a view of that column's, which holds them too.
    pub view_of: Option<usize>,
}

/// Where a column's values were found: under `key` at the top of each row, or in the objects
/// of column `parent` (which comes earlier), whose members it then views.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub parent: Option<usize>,
    pub key: String,
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

/// Flattens one record to (dotted name, value) pairs in key order, moving the values; an
/// object's members replace it. For a record of scalars (a result's context); rows go through
/// [`Table::from_records`], which keeps every object whole beside its members.
pub fn flatten(record: Map<String, Value>) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    flatten_into("", record, 0, &mut out);
    out
}

/// DuckDB identifiers are case-insensitive: names equal up to case get a numeric suffix. An
/// empty name (a JSON key `""`) is no identifier at all: it becomes `column_N` after its
/// position, never taking a name the server gave another column.
fn dedupe(names: &[String]) -> Vec<String> {
    let given: HashSet<String> = names.iter().map(|n| n.to_lowercase()).collect();
    let mut used: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(names.len());
    for (pos, n) in names.iter().enumerate() {
        let (base, avoid) = if n.is_empty() {
            (format!("column_{}", pos + 1), &given)
        } else {
            (n.clone(), &used)
        };
        let mut candidate = base.clone();
        let mut i = 2;
        while used.contains(&candidate.to_lowercase()) || avoid.contains(&candidate.to_lowercase())
        {
            candidate = format!("{base}_{i}");
            i += 1;
        }
        used.insert(candidate.to_lowercase());
        out.push(candidate);
    }
    out
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
    /// The offsets (minutes east of UTC) of the `ts_aware` values.
    offsets: BTreeSet<i32>,
    /// String cells that read as integers / floats / booleans (text tier only).
    str_ints: usize,
    str_floats: usize,
    str_bools: usize,
    widest: u8, // 0 i64, 1 u64, 2 i128, 3 wider
    negative: bool,
    big_for_double: bool,
    /// The most digits before and after the point among the numbers, and whether one was not
    /// a plain decimal (an exponent): what decides whether the column can be DECIMAL.
    int_digits: u32,
    frac_digits: u32,
    not_plain: bool,
}

/// Notes the digits of one number's text (already known to be a number) for DECIMAL.
fn digits(seen: &mut Seen, text: &str) {
    match decimal_digits(text) {
        Some((int, frac)) => {
            seen.int_digits = seen.int_digits.max(int);
            seen.frac_digits = seen.frac_digits.max(frac);
        }
        None => seen.not_plain = true,
    }
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
        self.offsets.extend(&o.offsets);
        self.str_ints += o.str_ints;
        self.str_floats += o.str_floats;
        self.str_bools += o.str_bools;
        self.widest = self.widest.max(o.widest);
        self.negative |= o.negative;
        self.big_for_double |= o.big_for_double;
        self.int_digits = self.int_digits.max(o.int_digits);
        self.frac_digits = self.frac_digits.max(o.frac_digits);
        self.not_plain |= o.not_plain;
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
                seen.big_for_double |= !double_holds(t);
            }
            digits(seen, t);
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
            } else if let Some(ts) = parse_timestamp(s) {
                match ts.offset {
                    None => seen.ts_naive += 1,
                    // A value whose UTC time leaves the years the engine prints plainly is
                    // not counted, so its column stays text.
                    Some(offset) if utc_fields(&ts).is_some() => {
                        seen.ts_aware += 1;
                        seen.offsets.insert(offset);
                    }
                    Some(_) => {}
                }
            }
            if tier == Tier::Text {
                if let Some(t) = int_text(s) {
                    seen.str_ints += 1;
                    widen(seen, t);
                    digits(seen, t);
                } else if float_text(s) {
                    seen.str_floats += 1;
                    seen.big_for_double |= !double_holds(s);
                    digits(seen, s);
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
        // Beyond HUGEINT an integer has 39 digits or more, which DECIMAL(38,0) cannot hold
        // either: the engine would refuse the cell and the whole table with it.
        _ => ColumnType::Varchar,
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
        return int_type(seen);
    }
    let numeric = seen.ints + seen.floats + seen.str_ints + seen.str_floats;
    if numeric == values && seen.floats + seen.str_floats > 0 {
        // Plain decimals that fit a DECIMAL are exact there: `sum(amount)` of two-decimal
        // money is the true sum, never float noise.
        if let Some(ty) = decimal_type(seen) {
            return ty;
        }
        // A DOUBLE would round integers beyond 2^53 and decimals with more digits than it
        // keeps, and cannot hold a number beyond its range: keep such a column as text.
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
            return ColumnType::TimestampUtc;
        }
    }
    ColumnType::Varchar
}

/// The narrowest of DECIMAL(18, s) and DECIMAL(38, s) that holds every number seen, when
/// all were plain decimals.
fn decimal_type(seen: &Seen) -> Option<ColumnType> {
    if seen.not_plain {
        return None;
    }
    let total = seen.int_digits + seen.frac_digits;
    let precision = [18u8, 38].into_iter().find(|p| total <= u32::from(*p))?;
    Some(ColumnType::Decimal {
        precision,
        scale: u8::try_from(seen.frac_digits).ok()?,
    })
}

/// The note a column of type `ty` carries, from what was seen in it.
fn note(seen: &Seen, ty: ColumnType) -> Option<String> {
    if ty != ColumnType::TimestampUtc {
        return None;
    }
    const SHOWN: usize = 5;
    let mut offsets: Vec<String> = seen
        .offsets
        .iter()
        .take(SHOWN)
        .map(|o| offset_label(*o))
        .collect();
    if seen.offsets.len() > SHOWN {
        offsets.push(format!("and {} more", seen.offsets.len() - SHOWN));
    }
    Some(format!(
        "UTC: converted exactly from ISO-8601 times with offset {}",
        offsets.join(", ")
    ))
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
        // Every value as JSON text: strings quoted and escaped, numbers as written (their
        // exponent as serde_json writes it, so both readers agree), the rest as kept.
        return Cell::Text(match slot {
            Slot::Str(span) => Cow::Owned(Value::String(text(span).to_owned()).to_string()),
            Slot::Num(span) => exponent_as_written(text(span)),
            Slot::Json(span) => Cow::Borrowed(text(span)),
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
        // A number kept as text reads the same whichever reader found it: its exponent as
        // serde_json writes it (`1E400` becomes `1e+400`), its digits as written.
        ColumnType::Varchar if matches!(slot, Slot::Num(_)) => {
            Cell::Text(exponent_as_written(as_text))
        }
        // Observing proved every value converts; a value that somehow does not is handed to
        // the engine as written, whose cast then refuses it (and the table with it).
        ColumnType::TimestampUtc => Cell::Text(
            parse_timestamp(as_text)
                .and_then(|ts| utc_text(&ts))
                .map_or(Cow::Borrowed(as_text), Cow::Owned),
        ),
        _ => Cell::Text(Cow::Borrowed(as_text)),
    }
}

/// Number text with its exponent marker lower case and signed, as serde_json writes it.
fn exponent_as_written(text: &str) -> Cow<'_, str> {
    match text.split_once(['e', 'E']) {
        Some((m, e)) if !text.contains("e+") && !text.contains("e-") || text.contains('E') => {
            let e = e.strip_prefix('+').unwrap_or(e);
            let sign = if e.starts_with('-') { "" } else { "+" };
            Cow::Owned(format!("{m}e{sign}{e}"))
        }
        _ => Cow::Borrowed(text),
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
) -> Option<Vec<(ColumnType, Option<String>)>> {
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
    Some(
        left.iter()
            .map(|seen| {
                let ty = decide(seen);
                (ty, note(seen, ty))
            })
            .collect(),
    )
}

/// The column type a result declares for a column in its own words (`columnTypes` of a SQL
/// server: DuckDB, Postgres, ClickHouse or Oracle spellings), when loom has that type; `None`
/// for anything else, which is then inferred from the values.
pub fn declared_type(name: &str) -> Option<ColumnType> {
    let t = name.trim().to_ascii_uppercase();
    let (base, args) = match t.split_once('(') {
        Some((b, rest)) => (b.trim(), rest.strip_suffix(')')),
        None => (t.as_str(), None),
    };
    Some(match base {
        "BOOLEAN" | "BOOL" | "LOGICAL" => ColumnType::Boolean,
        "TINYINT" | "SMALLINT" | "INTEGER" | "INT" | "BIGINT" | "INT1" | "INT2" | "INT4"
        | "INT8" | "LONG" | "SHORT" | "SIGNED" | "UTINYINT" | "USMALLINT" | "UINTEGER"
        | "INT16" | "INT32" | "INT64" | "UINT8" | "UINT16" | "UINT32" | "SERIAL" | "BIGSERIAL" => {
            ColumnType::BigInt
        }
        "UBIGINT" | "UINT64" => ColumnType::UBigInt,
        "HUGEINT" | "INT128" => ColumnType::HugeInt,
        "DOUBLE" | "FLOAT" | "REAL" | "FLOAT4" | "FLOAT8" | "FLOAT32" | "FLOAT64"
        | "DOUBLE PRECISION" => ColumnType::Double,
        "DECIMAL" | "NUMERIC" => {
            // Without a precision the width is the server's own (unbounded in Postgres):
            // the values decide.
            let (p, s) = args?.split_once(',')?;
            let (precision, scale) = (p.trim().parse::<u8>().ok()?, s.trim().parse::<u8>().ok()?);
            if !(1..=38).contains(&precision) || scale > precision {
                return None;
            }
            ColumnType::Decimal { precision, scale }
        }
        "VARCHAR" | "TEXT" | "STRING" | "CHAR" | "BPCHAR" | "VARCHAR2" | "NVARCHAR"
        | "NVARCHAR2" | "CHARACTER" | "CHARACTER VARYING" | "UUID" | "NAME" => ColumnType::Varchar,
        "DATE" => ColumnType::Date,
        "TIMESTAMP" | "DATETIME" | "TIMESTAMP_US" | "TIMESTAMP WITHOUT TIME ZONE" => {
            ColumnType::Timestamp
        }
        "TIMESTAMPTZ" | "TIMESTAMP WITH TIME ZONE" => ColumnType::TimestampUtc,
        "JSON" | "JSONB" => ColumnType::Json,
        _ => return None,
    })
}

/// Whether every value of a column is a value of the declared type `d`, exactly as the
/// engine will read it: a declared type is believed only then (never lie).
fn declared_holds(d: ColumnType, col: &[Slot], arena: &str) -> bool {
    col.iter().all(|slot| match *slot {
        Slot::Null => true,
        Slot::Bool(_) => matches!(d, ColumnType::Boolean | ColumnType::Json),
        Slot::Json(_) => d == ColumnType::Json,
        Slot::Num(span) | Slot::Str(span) => {
            let t = text_of(arena, span);
            let is_str = matches!(slot, Slot::Str(_));
            let int = || int_text(t).map(parse_int);
            match d {
                ColumnType::Boolean => {
                    is_str && (t.eq_ignore_ascii_case("true") || t.eq_ignore_ascii_case("false"))
                }
                ColumnType::BigInt => matches!(int(), Some(IntValue::I64(_))),
                ColumnType::UBigInt => match int() {
                    Some(IntValue::I64(v)) => v >= 0,
                    Some(IntValue::U64(_)) => true,
                    _ => false,
                },
                ColumnType::HugeInt => matches!(
                    int(),
                    Some(IntValue::I64(_) | IntValue::U64(_) | IntValue::I128(_))
                ),
                ColumnType::Decimal { precision, scale } => {
                    decimal_digits(t).is_some_and(|(i, f)| {
                        f <= u32::from(scale) && i <= u32::from(precision - scale)
                    })
                }
                ColumnType::Double => {
                    (int_text(t).is_some() || float_text(t))
                        && t.parse::<f64>().is_ok_and(f64::is_finite)
                }
                ColumnType::Date => is_str && is_date(t),
                ColumnType::Timestamp => {
                    is_str && parse_timestamp(t).is_some_and(|ts| ts.offset.is_none())
                }
                ColumnType::TimestampUtc => {
                    is_str && parse_timestamp(t).is_some_and(|ts| utc_fields(&ts).is_some())
                }
                ColumnType::Varchar => is_str,
                ColumnType::Json => true,
            }
        }
    })
}

/// Columns as records are walked: where each came from, its slots, and the arena their text
/// is in.
#[derive(Default)]
struct FoundColumns {
    origins: Vec<Origin>,
    slots: Vec<Vec<Slot>>,
    arena: String,
    /// Per parent (0 for the top of a row, `c + 1` for the objects of column `c`): the
    /// columns of its member keys.
    by_key: Vec<HashMap<String, usize>>,
}

impl FoundColumns {
    /// The column of `key` under `parent`. `pos` counts the keys met so far in this row: rows
    /// usually repeat the same keys in the same order, so that column is compared before any
    /// hashing.
    fn column(&mut self, parent: Option<usize>, key: String, pos: &mut usize) -> usize {
        let guess = *pos;
        *pos += 1;
        if let Some(o) = self.origins.get(guess)
            && o.parent == parent
            && o.key == key
        {
            return guess;
        }
        let p = parent.map_or(0, |p| p + 1);
        if self.by_key.len() <= p {
            self.by_key.resize_with(p + 1, HashMap::new);
        }
        if let Some(&c) = self.by_key[p].get(&key) {
            return c;
        }
        let c = self.origins.len();
        self.by_key[p].insert(key.clone(), c);
        self.origins.push(Origin { parent, key });
        self.slots.push(Vec::new());
        c
    }

    /// Puts row `r`'s slot in column `c`.
    fn put(&mut self, c: usize, r: usize, slot: Slot) -> Option<()> {
        let col = self.slots.get_mut(c)?;
        // One key once per object and one column per (parent, key): a second value is a bug.
        if col.len() > r {
            return None;
        }
        col.resize(r, Slot::Null);
        col.push(slot);
        Some(())
    }

    /// The members of one object of row `r` at flattening depth `depth`, under `parent`. An
    /// object member is kept whole in its column, and below [`FLATTEN_DEPTH`] its own members
    /// are read into theirs too.
    fn record(
        &mut self,
        parent: Option<usize>,
        obj: Map<String, Value>,
        depth: usize,
        r: usize,
        pos: &mut usize,
    ) -> Option<()> {
        for (key, v) in obj {
            // The column exists before its members' columns: a parent precedes its views.
            let c = self.column(parent, key, pos);
            match v {
                Value::Object(inner) if depth < FLATTEN_DEPTH => {
                    let whole = serde_json::to_string(&inner).ok()?;
                    let slot = Slot::Json(push_text(&mut self.arena, &whole)?);
                    self.put(c, r, slot)?;
                    self.record(Some(c), inner, depth + 1, r, pos)?;
                }
                v => {
                    let slot = slot_of(v, &mut self.arena)?;
                    self.put(c, r, slot)?;
                }
            }
        }
        Some(())
    }
}

impl Table {
    /// Builds a typed table from columns of slots (`names[i]` names `slots[i]`; a column
    /// shorter than `rows` ends in nulls) whose text is in `arena`.
    pub fn from_slots(
        names: Vec<String>,
        slots: Vec<Vec<Slot>>,
        rows: usize,
        arena: String,
        tier: Tier,
        context: Map<String, Value>,
        rung: &'static str,
    ) -> Option<Table> {
        Table::from_declared_slots(names, &[], slots, rows, arena, tier, context, rung)
    }

    /// As [`Table::from_slots`], with the types the result declares for its columns
    /// (`declared[i]` for `slots[i]`, when given): each is used when every value of its
    /// column is of it, and the inferred type otherwise.
    #[allow(clippy::too_many_arguments)]
    fn from_declared_slots(
        names: Vec<String>,
        declared: &[Option<ColumnType>],
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
        let mut types = type_columns(&slots, rows, &arena, tier)?;
        for ((ty, note), (d, col)) in types.iter_mut().zip(declared.iter().zip(&slots)) {
            let Some(d) = *d else { continue };
            if *ty == d || !declared_holds(d, col, &arena) {
                continue;
            }
            // Only nulls: nothing to convert from, so no offsets to note either.
            *ty = if d == ColumnType::TimestampUtc {
                ColumnType::Timestamp
            } else {
                d
            };
            *note = None;
        }
        let columns = dedupe(&names)
            .into_iter()
            .zip(types)
            .map(|(name, (ty, note))| Column {
                name,
                ty,
                note,
                view_of: None,
            })
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

    /// Builds a typed table from rows of cells in column order (`{columns, rows: [[…]]}`
    /// results), with the types the result declares where it does. A row whose length is not
    /// the header's is no table.
    pub fn from_columnar(
        names: Vec<String>,
        declared: &[Option<ColumnType>],
        rows: Vec<Vec<Value>>,
        context: Map<String, Value>,
        rung: &'static str,
    ) -> Option<Table> {
        let n = rows.len();
        let mut arena = String::new();
        let mut slots: Vec<Vec<Slot>> = vec![Vec::with_capacity(n); names.len()];
        for row in rows {
            if row.len() != names.len() {
                return None;
            }
            for (col, v) in slots.iter_mut().zip(row) {
                col.push(slot_of(v, &mut arena)?);
            }
        }
        Table::from_declared_slots(names, declared, slots, n, arena, Tier::Json, context, rung)
    }

    /// Builds a typed table from records; `None` when there is nothing tabular in them.
    pub fn from_records(
        records: Vec<Map<String, Value>>,
        tier: Tier,
        context: Map<String, Value>,
        rung: &'static str,
    ) -> Option<Table> {
        let rows = records.len();
        let mut found = FoundColumns::default();
        for (r, record) in records.into_iter().enumerate() {
            let mut pos = 0;
            found.record(None, record, 0, r, &mut pos)?;
        }
        Table::from_nested(
            found.origins,
            found.slots,
            rows,
            found.arena,
            tier,
            context,
            rung,
        )
    }

    /// Builds a typed table from columns found in nested rows (`origins[i]` says where
    /// `slots[i]` came from; a column of objects has a column for each member key met in
    /// them). A column of objects keeps every value as JSON; its members stay beside it, as
    /// views, only when every non-null value in it is an object, so that no view hides a value
    /// the column holds. Notes say which.
    #[allow(clippy::too_many_arguments)]
    pub fn from_nested(
        origins: Vec<Origin>,
        slots: Vec<Vec<Slot>>,
        rows: usize,
        arena: String,
        tier: Tier,
        context: Map<String, Value>,
        rung: &'static str,
    ) -> Option<Table> {
        let n = origins.len();
        if slots.len() != n {
            return None;
        }
        let mut raw: Vec<String> = Vec::with_capacity(n);
        let mut has_members = vec![false; n];
        for (c, o) in origins.iter().enumerate() {
            raw.push(match o.parent {
                None => o.key.clone(),
                Some(p) if p < c => {
                    has_members[p] = true;
                    format!("{}.{}", raw[p], o.key)
                }
                Some(_) => return None,
            });
        }
        let objects_only: Vec<bool> = slots
            .iter()
            .map(|col| {
                col.iter().all(|s| match *s {
                    Slot::Null => true,
                    Slot::Json(span) => text_of(&arena, span).starts_with('{'),
                    _ => false,
                })
            })
            .collect();
        // Kept columns, and their new positions.
        let mut at: Vec<Option<usize>> = Vec::with_capacity(n);
        let mut kept = 0;
        for o in &origins {
            let keep = match o.parent {
                None => true,
                Some(p) => at[p].is_some() && objects_only[p],
            };
            at.push(keep.then(|| {
                kept += 1;
                kept - 1
            }));
        }
        let names = dedupe(
            &raw.iter()
                .zip(&at)
                .filter(|(_, a)| a.is_some())
                .map(|(r, _)| r.clone())
                .collect::<Vec<_>>(),
        );
        let mut views: Vec<(Option<usize>, Option<String>)> = Vec::with_capacity(kept);
        for (c, o) in origins.iter().enumerate() {
            if at[c].is_none() {
                continue;
            }
            let view_of = o.parent.and_then(|p| at[p]);
            let mut parts = Vec::new();
            if let Some(p) = view_of {
                parts.push(format!("view of {}", names.get(p)?));
            }
            if has_members[c] {
                parts.push(if objects_only[c] {
                    format!("JSON object; also flattened to {}.*", raw[c])
                } else {
                    "objects and other values; not flattened".to_owned()
                });
            }
            views.push((view_of, (!parts.is_empty()).then(|| parts.join("; "))));
        }
        let slots: Vec<Vec<Slot>> = slots
            .into_iter()
            .zip(&at)
            .filter_map(|(col, a)| a.map(|_| col))
            .collect();
        let mut table = Table::from_slots(names, slots, rows, arena, tier, context, rung)?;
        for (col, (view_of, note)) in table.columns.iter_mut().zip(views) {
            col.view_of = view_of;
            col.note = match (note, col.note.take()) {
                (Some(a), Some(b)) => Some(format!("{a}; {b}")),
                (a, b) => a.or(b),
            };
        }
        Some(table)
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
mod tests;
