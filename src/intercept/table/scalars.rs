//! What one text value is, decided exactly: a calendar date, an ISO 8601 timestamp with its offset
//! (and its UTC form), an integer that fits its type, a float.

use super::*;

pub(super) fn is_date(s: &str) -> bool {
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
pub(super) struct IsoTimestamp<'a> {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    /// `:SS` with its fraction as written, or empty.
    seconds: &'a str,
    /// Minutes east of UTC, when the text carries an offset (`Z` is zero).
    pub(super) offset: Option<i32>,
}

/// The ASCII digits of `s[range]` as a number, when they are all digits.
pub(super) fn digits_at(s: &str, range: Range<usize>) -> Option<u32> {
    s.get(range)
        .filter(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
        .and_then(|p| p.parse::<u32>().ok())
}

/// `s` read as `YYYY-MM-DD[T ]HH:MM[:SS[.f{1,9}]][Z|±HH[:?MM]]`, every field in range. Seconds
/// stop at 59: the engine refuses a leap second, and one refused cell would lose the table.
/// Digits past the microsecond must be zeros: the engine's TIMESTAMP would drop them silently.
pub(super) fn parse_timestamp(s: &str) -> Option<IsoTimestamp<'_>> {
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
pub(super) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
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
pub(super) fn utc_fields(ts: &IsoTimestamp<'_>) -> Option<((i64, u32, u32), i64)> {
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
pub(super) fn utc_text(ts: &IsoTimestamp<'_>) -> Option<String> {
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
pub(super) fn offset_label(minutes: i32) -> String {
    if minutes == 0 {
        return "Z".to_owned();
    }
    let sign = if minutes < 0 { '-' } else { '+' };
    let m = minutes.unsigned_abs();
    format!("{sign}{:02}:{:02}", m / 60, m % 60)
}

/// An integer literal as text: optional minus, no leading zeros (so zip codes stay text).
pub(super) fn int_text(s: &str) -> Option<&str> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let ok = !digits.is_empty()
        && digits.bytes().all(|c| c.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    ok.then_some(s)
}

/// The digits of a plain decimal number's text (`-12.50`, `0.01`, `7`) before the point
/// (leading zeros not counted) and after it (as written); `None` with an exponent or anything
/// else that is not such a number.
pub(super) fn decimal_digits(s: &str) -> Option<(u32, u32)> {
    let t = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let plain = !int.is_empty()
        && int.bytes().all(|c| c.is_ascii_digit())
        && frac.bytes().all(|c| c.is_ascii_digit())
        && (t.len() == int.len() || !frac.is_empty());
    if !plain {
        return None;
    }
    let significant = int.trim_start_matches('0');
    Some((
        u32::try_from(significant.len()).ok()?,
        u32::try_from(frac.len()).ok()?,
    ))
}

pub(super) fn float_text(s: &str) -> bool {
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

/// A decimal number as significant digits and a power of ten: `digits × 10^exp`, with no
/// leading or trailing zero in `digits` (zero has no digits).
#[derive(Debug, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: String,
    exp: i64,
}

impl Decimal {
    /// Reads number text (`-12.50e3`); `None` when it is not one.
    fn of(text: &str) -> Option<Decimal> {
        let (negative, t) = match text.strip_prefix('-') {
            Some(t) => (true, t),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let (mantissa, exp) = match t.split_once(['e', 'E']) {
            Some((m, e)) => (m, e.parse::<i64>().ok().filter(|e| e.abs() < 1 << 40)?),
            None => (t, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() && frac.is_empty()
            || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let all = format!("{int}{frac}");
        let significant = all.trim_start_matches('0');
        let digits = significant.trim_end_matches('0');
        let exp = exp - frac.len() as i64 + (significant.len() - digits.len()) as i64;
        Some(Decimal {
            negative: negative && !digits.is_empty(),
            digits: digits.to_owned(),
            exp,
        })
    }
}

/// Whether number text reads back from a DOUBLE as the same number: finite, and no digit lost
/// (`0.1` does; `1.0000000000000001`, forty digits of pi or `1e309` do not). Up to 15
/// significant digits within the normal range always do; longer ones are checked against the
/// double's shortest decimal.
pub(super) fn double_holds(text: &str) -> bool {
    let Some(d) = Decimal::of(text) else {
        return false;
    };
    let lead = d.exp + d.digits.len() as i64 - 1;
    if d.digits.len() <= 15 && (-300..=300).contains(&lead) {
        return true;
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => Decimal::of(&format!("{f:e}")).is_some_and(|back| back == d),
        _ => false,
    }
}

/// The exact integer behind a JSON number or integer text, widest first.
pub(super) enum IntValue {
    I64(i64),
    U64(u64),
    I128(i128),
    Wide,
}

pub(super) fn parse_int(text: &str) -> IntValue {
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
