//! Rows found in a tool result, flattened and typed exactly. Nested objects become dotted
//! columns up to a depth, arrays and deeper values JSON columns; a column gets a type only when
//! every non-null value has it (a 19-digit id stays an exact integer, a column is DATE only if
//! every value is a date). Times with a UTC offset are converted exactly to UTC, because the
//! sealed engine has no time-zone functions; a time with digits past the microsecond stays
//! text, because the engine's TIMESTAMP would drop them. Cells are kept column by column as
//! slots into one text arena (no string per cell), typed on two threads, and converted to typed
//! cells only when the store reads them. This module decides types and conversions; the store
//! only applies them. Cells are untrusted text: they are read only at boundaries checked first.

use crate::types::time::civil_from_days;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

/// Objects nested deeper than this become JSON columns.
pub const FLATTEN_DEPTH: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    Boolean,
    BigInt,
    UBigInt,
    HugeInt,
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
    pub fn sql(self) -> &'static str {
        match self {
            ColumnType::Boolean => "BOOLEAN",
            ColumnType::BigInt => "BIGINT",
            ColumnType::UBigInt => "UBIGINT",
            ColumnType::HugeInt => "HUGEINT",
            ColumnType::Double => "DOUBLE",
            ColumnType::Date => "DATE",
            ColumnType::Timestamp => "TIMESTAMP",
            ColumnType::TimestampUtc => "TIMESTAMP",
            ColumnType::Varchar => "VARCHAR",
            ColumnType::Json => "JSON",
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
    /// What a reader must know that the type does not say (for now: the offsets a UTC
    /// timestamp column was converted from).
    pub note: Option<String>,
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

/// An ISO-8601 timestamp, read without slicing anything but ASCII boundaries it has checked.
struct IsoTimestamp<'a> {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    /// `:SS` with its fraction as written, or empty.
    seconds: &'a str,
    /// Minutes east of UTC, when the text carries an offset (`Z` is zero).
    offset: Option<i32>,
}

/// The ASCII digits of `s[range]` as a number, when they are all digits.
fn digits_at(s: &str, range: Range<usize>) -> Option<u32> {
    s.get(range)
        .filter(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
        .and_then(|p| p.parse::<u32>().ok())
}

/// `s` read as `YYYY-MM-DD[T ]HH:MM[:SS[.f{1,9}]][Z|±HH[:?MM]]`, every field in range. Seconds
/// stop at 59: the engine refuses a leap second, and one refused cell would lose the table.
/// Digits past the microsecond must be zeros: the engine's TIMESTAMP would drop them silently.
fn parse_timestamp(s: &str) -> Option<IsoTimestamp<'_>> {
    let date = s.get(..10).filter(|d| is_date(d))?;
    let (year, month, day) = (
        i64::from(digits_at(date, 0..4)?),
        digits_at(date, 5..7)?,
        digits_at(date, 8..10)?,
    );
    let rest = s.get(10..)?;
    let rest = rest.strip_prefix('T').or_else(|| rest.strip_prefix(' '))?;
    let b = rest.as_bytes();
    let hour = digits_at(rest, 0..2).filter(|h| *h <= 23)?;
    let minute = digits_at(rest, 3..5).filter(|m| *m <= 59)?;
    if b.get(2) != Some(&b':') {
        return None;
    }
    let mut i = 5;
    if b.get(i) == Some(&b':') {
        digits_at(rest, i + 1..i + 3).filter(|s| *s <= 59)?;
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
            if rest
                .get(start + 6..i)
                .is_some_and(|ns| ns.bytes().any(|c| c != b'0'))
            {
                return None;
            }
        }
    }
    // Everything before `i` is ASCII that was checked above, so both cuts are boundaries.
    let seconds = rest.get(5..i)?;
    let offset = match rest.get(i..)? {
        "" => None,
        "Z" | "z" => Some(0),
        tz => {
            let sign = match tz.as_bytes().first() {
                Some(b'+') => 1,
                Some(b'-') => -1,
                _ => return None,
            };
            let (h, m) = match tz.len() {
                3 => (digits_at(tz, 1..3)?, 0),
                5 => (digits_at(tz, 1..3)?, digits_at(tz, 3..5)?),
                6 if tz.as_bytes().get(3) == Some(&b':') => {
                    (digits_at(tz, 1..3)?, digits_at(tz, 4..6)?)
                }
                _ => return None,
            };
            if h > 23 || m > 59 {
                return None;
            }
            Some(sign * (h as i32 * 60 + m as i32))
        }
    };
    Some(IsoTimestamp {
        year,
        month,
        day,
        hour,
        minute,
        seconds,
        offset,
    })
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The UTC date and minute of the day of an ISO timestamp with an offset: exact, because
/// offsets are whole minutes (the seconds stay as written). `None` without an offset or when
/// the date leaves years 1–9999, which the engine would print differently.
fn utc_fields(ts: &IsoTimestamp<'_>) -> Option<((i64, u32, u32), i64)> {
    let offset = i64::from(ts.offset?);
    let minutes = days_from_civil(ts.year, ts.month, ts.day) * 1440
        + i64::from(ts.hour) * 60
        + i64::from(ts.minute)
        - offset;
    let date = civil_from_days(minutes.div_euclid(1440));
    (1..=9999)
        .contains(&date.0)
        .then_some((date, minutes.rem_euclid(1440)))
}

/// The UTC wall time of an ISO timestamp with an offset, as `YYYY-MM-DD HH:MM:SS[.f]`.
fn utc_text(ts: &IsoTimestamp<'_>) -> Option<String> {
    let ((y, m, d), in_day) = utc_fields(ts)?;
    let seconds = if ts.seconds.is_empty() {
        ":00"
    } else {
        ts.seconds
    };
    Some(format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}{seconds}",
        in_day / 60,
        in_day % 60
    ))
}

/// An offset in minutes as `+HH:MM` (`Z` for zero), for a column's note.
fn offset_label(minutes: i32) -> String {
    if minutes == 0 {
        return "Z".to_owned();
    }
    let sign = if minutes < 0 { '-' } else { '+' };
    let m = minutes.unsigned_abs();
    format!("{sign}{:02}:{:02}", m / 60, m % 60)
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
    let (mantissa, exp) = match t.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
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
    /// The offsets (minutes east of UTC) of the `ts_aware` values.
    offsets: BTreeSet<i32>,
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
        self.offsets.extend(&o.offsets);
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
            return ColumnType::TimestampUtc;
        }
    }
    ColumnType::Varchar
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
            .map(|(name, (ty, note))| Column { name, ty, note })
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
                ("tz", "TIMESTAMP"),
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
    fn offsets_become_exact_utc_and_are_noted() {
        let t = Table::from_records(
            recs(json!([
                { "t": "2025-01-01T01:30:00+02:00", "z": "2025-03-01T10:00:00Z", "keep": "2025-01-01T10:00:00+02:00" },
                { "t": "2024-12-31T22:15:07.123456789-05:30", "z": "2025-03-01T10:00Z", "keep": "2025-01-01T10:00:00" },
                { "t": "2024-02-29T23:59:59+0000", "z": null, "keep": null },
                { "t": "0001-01-01T00:30:00+01", "z": "2025-03-01T10:00:00z", "keep": null }
            ])),
            Tier::Json,
            Map::new(),
            "json",
        )
        .unwrap();
        // Year 0 would come out of the last row's conversion: the engine prints that
        // differently, so that column stays text rather than shift silently.
        assert_eq!(
            types(&t),
            vec![("t", "VARCHAR"), ("z", "TIMESTAMP"), ("keep", "VARCHAR")]
        );
        assert_eq!(t.cell(1, 1), Cell::Text("2025-03-01 10:00:00".into()));
        assert_eq!(
            t.columns[1].note.as_deref(),
            Some("UTC: converted exactly from ISO-8601 times with offset Z")
        );
        let t = Table::from_records(
            recs(json!([
                { "t": "2025-01-01T01:30:00+02:00" },
                { "t": "2024-12-31T22:15:07.123456000-05:30" },
                { "t": "2024-02-29T23:59:59+0000" },
                { "t": "2024-03-01T00:10:00+00:30" },
                { "t": "9999-12-31T23:59:00-00:00" }
            ])),
            Tier::Json,
            Map::new(),
            "json",
        )
        .unwrap();
        assert_eq!(t.columns[0].ty, ColumnType::TimestampUtc);
        let utc: Vec<_> = t.cells(0, 0..5).collect();
        assert_eq!(
            utc,
            vec![
                Cell::Text("2024-12-31 23:30:00".into()),
                Cell::Text("2025-01-01 03:45:07.123456000".into()),
                Cell::Text("2024-02-29 23:59:59".into()),
                Cell::Text("2024-02-29 23:40:00".into()),
                Cell::Text("9999-12-31 23:59:00".into()),
            ]
        );
        assert_eq!(
            t.columns[0].note.as_deref(),
            Some(
                "UTC: converted exactly from ISO-8601 times with offset -05:30, Z, +00:30, +02:00"
            )
        );
    }

    #[test]
    fn nanoseconds_the_engine_would_drop_keep_a_column_text() {
        for (values, ty) in [
            (
                ["2025-01-01T10:00:00.123456789Z", "2025-01-01T10:00:00Z"],
                ColumnType::Varchar,
            ),
            (
                ["2025-01-01T10:00:00.1234567", "2025-01-01T10:00:00"],
                ColumnType::Varchar,
            ),
            (
                ["2025-01-01T10:00:00.123456000", "2025-01-01T10:00:00.1"],
                ColumnType::Timestamp,
            ),
        ] {
            let t = Table::from_records(
                recs(json!([{ "t": values[0] }, { "t": values[1] }])),
                Tier::Json,
                Map::new(),
                "json",
            )
            .unwrap();
            assert_eq!(t.columns[0].ty, ty, "{values:?}");
        }
    }

    #[test]
    fn non_ascii_text_is_typed_without_splitting_a_character() {
        // Each of these once cut a character in half while looking for a timestamp.
        for s in [
            "東京都の天気予報です",
            "2025-01-0é12:00:00",
            "2025-01-01T12:00+é",
            "2025-01-01T12:00+0é",
            "2025-01-01T12:00:0é",
            "2025-01-01Té2:00:00Z",
            "مرحبا بالعالم، كيف حالك",
            "😀😀😀😀😀",
        ] {
            let t = Table::from_records(
                recs(json!([{ "s": s }, { "s": s }])),
                Tier::Text,
                Map::new(),
                "csv",
            )
            .unwrap_or_else(|| panic!("{s}: no table"));
            assert_eq!(t.columns[0].ty, ColumnType::Varchar, "{s}");
            assert_eq!(t.cell(1, 0), Cell::Text(s.into()));
        }
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
