//! The fast JSON rung: a top-level array of objects read in one pass from the text straight
//! into column slots (no `serde_json::Value` per row or cell, no string per cell), on two
//! threads when the text is large. It accepts only JSON that `serde_json` accepts and builds
//! exactly the columns the general rung builds from the same rows: an object is read into its
//! members' columns and also kept whole, as `serde_json` writes it, in its own column. Whenever
//! it is unsure (an element that is not an object, a key twice in one row, a wrapper object,
//! very deep nesting, anything malformed) it declines, and the general rung decides instead.

use crate::intercept::table::{FLATTEN_DEPTH, Origin, Slot, Span, Table, Tier};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The scan stopped: the general rung decides instead.
struct Decline;
type Scan<T> = Result<T, Decline>;

/// Nesting deeper than this is left to the general rung (whose parser has its own limit).
const MAX_DEPTH: usize = 100;
/// Texts at least this long are read on two threads.
const PARALLEL_BYTES: usize = 1 << 20;

/// One key as met under one object node: its column (every value, objects whole) and the node
/// its object values' members go under, each made when first needed.
struct Entry {
    node: u32,
    key: Box<str>,
    col: Option<u32>,
    child: Option<u32>,
    /// The last row (plus one) that had this key: a key twice in one row declines.
    last_row: usize,
}

/// One object node: the entry whose objects it reads (none for the top of a row) and its keys'
/// entries.
type Node = (Option<u32>, HashMap<Box<str>, u32>);

/// A string token: where its content lies when it has no escapes, or its unescaped text.
enum Str {
    Plain(usize, usize),
    Escaped(String),
}

/// One reader over a stretch of rows, with its own columns.
struct Part<'t> {
    text: &'t str,
    b: &'t [u8],
    pos: usize,
    entries: Vec<Entry>,
    nodes: Vec<Node>,
    /// The entries met in the previous row and in this one, in order: rows usually repeat the
    /// same keys in the same order, so a key is compared with its guess before any hashing.
    prev: Vec<u32>,
    cur: Vec<u32>,
    /// Where each column came from: (the column whose objects hold it, its key).
    origins: Vec<(Option<u32>, Box<str>)>,
    slots: Vec<Vec<Slot>>,
    /// Unescaped strings and compact nested JSON, placed after the text in the arena.
    extra: String,
    /// (column, row) of every slot whose text is in `extra`.
    in_extra: Vec<(u32, u32)>,
    rows: usize,
}

impl<'t> Part<'t> {
    fn new(text: &'t str, pos: usize) -> Part<'t> {
        Part {
            text,
            b: text.as_bytes(),
            pos,
            entries: Vec::new(),
            nodes: vec![(None, HashMap::new())],
            prev: Vec::new(),
            cur: Vec::new(),
            origins: Vec::new(),
            slots: Vec::new(),
            extra: String::new(),
            in_extra: Vec::new(),
            rows: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Scan<()> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Decline)
        }
    }

    fn literal(&mut self, word: &[u8]) -> Scan<()> {
        if self.b.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(Decline)
        }
    }

    /// The string at `pos` (on its opening quote). Control characters decline; escapes are
    /// resolved by `serde_json` itself, which also rejects bad ones.
    fn string(&mut self) -> Scan<Str> {
        let start = self.pos + 1;
        let mut i = start;
        let mut plain = true;
        loop {
            match self.b.get(i) {
                Some(b'"') => break,
                Some(b'\\') => {
                    plain = false;
                    i += 2;
                }
                Some(c) if *c < 0x20 => return Err(Decline),
                Some(_) => i += 1,
                None => return Err(Decline),
            }
        }
        self.pos = i + 1;
        if plain {
            return Ok(Str::Plain(start, i));
        }
        let quoted = self.text.get(start - 1..=i).ok_or(Decline)?;
        serde_json::from_str::<String>(quoted)
            .map(Str::Escaped)
            .map_err(|_| Decline)
    }

    /// A number's literal text, checked against JSON's number grammar.
    fn number(&mut self) -> Scan<(usize, usize)> {
        let start = self.pos;
        let b = self.b;
        let mut i = start;
        let digits = |mut i: usize| {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits(i + 1),
            _ => return Err(Decline),
        }
        if b.get(i) == Some(&b'.') {
            let j = digits(i + 1);
            if j == i + 1 {
                return Err(Decline);
            }
            i = j;
        }
        if let Some(b'e' | b'E') = b.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            let j = digits(i);
            if j == i {
                return Err(Decline);
            }
            i = j;
        }
        self.pos = i;
        Ok((start, i))
    }

    /// The extent of the array or object at `pos`, found by bracket matching outside strings;
    /// `serde_json` checks its content afterwards.
    fn nested(&mut self, depth: usize) -> Scan<(usize, usize)> {
        let start = self.pos;
        let mut open = 0usize;
        let mut i = start;
        loop {
            match self.b.get(i) {
                Some(b'[' | b'{') => {
                    open += 1;
                    if depth + open > MAX_DEPTH {
                        return Err(Decline);
                    }
                }
                Some(b']' | b'}') => {
                    open = open.checked_sub(1).ok_or(Decline)?;
                    if open == 0 {
                        i += 1;
                        break;
                    }
                }
                Some(b'"') => {
                    i += 1;
                    loop {
                        match self.b.get(i) {
                            Some(b'"') => break,
                            Some(b'\\') => i += 2,
                            Some(_) => i += 1,
                            None => return Err(Decline),
                        }
                    }
                }
                Some(_) => {}
                None => return Err(Decline),
            }
            i += 1;
        }
        self.pos = i;
        Ok((start, i))
    }

    /// The entry for `key` under `node`, guessed from the previous row first.
    fn entry(&mut self, node: u32, key: &str) -> Scan<u32> {
        let guess = self.prev.get(self.cur.len()).copied();
        let e = match guess {
            Some(g)
                if self.entries[g as usize].node == node
                    && &*self.entries[g as usize].key == key =>
            {
                g
            }
            _ => {
                let keys = &mut self.nodes.get_mut(node as usize).ok_or(Decline)?.1;
                match keys.get(key) {
                    Some(&e) => e,
                    None => {
                        let e = u32::try_from(self.entries.len()).map_err(|_| Decline)?;
                        keys.insert(key.into(), e);
                        self.entries.push(Entry {
                            node,
                            key: key.into(),
                            col: None,
                            child: None,
                            last_row: 0,
                        });
                        e
                    }
                }
            }
        };
        let entry = &mut self.entries[e as usize];
        if entry.last_row == self.rows + 1 {
            return Err(Decline);
        }
        entry.last_row = self.rows + 1;
        self.cur.push(e);
        Ok(e)
    }

    /// The column of entry `e`, made after its parent's (whose objects hold it).
    fn column(&mut self, e: u32) -> Scan<u32> {
        if let Some(c) = self.entries[e as usize].col {
            return Ok(c);
        }
        let entry = &self.entries[e as usize];
        let owner = self.nodes.get(entry.node as usize).ok_or(Decline)?.0;
        let parent = match owner {
            Some(o) => Some(self.entries[o as usize].col.ok_or(Decline)?),
            None => None,
        };
        let c = u32::try_from(self.origins.len()).map_err(|_| Decline)?;
        self.origins.push((parent, entry.key.clone()));
        self.slots.push(Vec::new());
        self.entries[e as usize].col = Some(c);
        Ok(c)
    }

    fn child(&mut self, e: u32) -> Scan<u32> {
        if let Some(n) = self.entries[e as usize].child {
            return Ok(n);
        }
        let n = u32::try_from(self.nodes.len()).map_err(|_| Decline)?;
        self.nodes.push((Some(e), HashMap::new()));
        self.entries[e as usize].child = Some(n);
        Ok(n)
    }

    /// Puts this row's value for entry `e`. Two values for one column in a row decline.
    fn put(&mut self, e: u32, slot: Slot, in_extra: bool) -> Scan<()> {
        let c = self.column(e)?;
        let rows = self.rows;
        let col = self.slots.get_mut(c as usize).ok_or(Decline)?;
        if col.len() > rows {
            return Err(Decline);
        }
        col.resize(rows, Slot::Null);
        col.push(slot);
        if in_extra {
            self.in_extra
                .push((c, u32::try_from(rows).map_err(|_| Decline)?));
        }
        Ok(())
    }

    fn text_span(&self, start: usize, end: usize) -> Scan<Span> {
        Span::of(start, end).ok_or(Decline)
    }

    /// Places `s` in this part's extra text; the span is relative to the text's end.
    fn extra_span(&mut self, s: &str) -> Scan<Span> {
        let start = self.text.len() + self.extra.len();
        self.extra.push_str(s);
        Span::of(start, start + s.len()).ok_or(Decline)
    }

    /// The value of entry `e`, in an object at flattening depth `depth`.
    fn value(&mut self, e: u32, depth: usize) -> Scan<()> {
        match self.peek() {
            Some(b'"') => match self.string()? {
                Str::Plain(s, end) => {
                    let span = self.text_span(s, end)?;
                    self.put(e, Slot::Str(span), false)
                }
                Str::Escaped(s) => {
                    let span = self.extra_span(&s)?;
                    self.put(e, Slot::Str(span), true)
                }
            },
            Some(b'-' | b'0'..=b'9') => {
                let (s, end) = self.number()?;
                let span = self.text_span(s, end)?;
                self.put(e, Slot::Num(span), false)
            }
            Some(b't') => {
                self.literal(b"true")?;
                self.put(e, Slot::Bool(true), false)
            }
            Some(b'f') => {
                self.literal(b"false")?;
                self.put(e, Slot::Bool(false), false)
            }
            Some(b'n') => {
                self.literal(b"null")?;
                self.put(e, Slot::Null, false)
            }
            Some(b'{') if depth < FLATTEN_DEPTH => {
                // The column first, so that it precedes its members' columns.
                self.column(e)?;
                let node = self.child(e)?;
                let s = self.pos;
                self.object(node, depth + 1)?;
                let span = self.whole(s)?;
                self.put(e, Slot::Json(span), true)
            }
            Some(b'[' | b'{') => {
                // Arrays and deeper objects: one JSON column cell.
                let (s, _) = self.nested(depth + 3)?;
                let span = self.whole(s)?;
                self.put(e, Slot::Json(span), true)
            }
            _ => Err(Decline),
        }
    }

    /// The nested value from `start` to `pos` in extra text, as `serde_json` writes it
    /// (compact, keys in order, numbers as written), which is how the general rung keeps it.
    fn whole(&mut self, start: usize) -> Scan<Span> {
        let raw = self.text.get(start..self.pos).ok_or(Decline)?;
        let v: Value = serde_json::from_str(raw).map_err(|_| Decline)?;
        self.extra_span(&v.to_string())
    }

    /// The object at `pos`, its members flattened under `node`.
    fn object(&mut self, node: u32, depth: usize) -> Scan<()> {
        self.eat(b'{')?;
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(Decline);
            }
            let key = self.string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            let e = match &key {
                Str::Plain(s, end) => {
                    let k = self.text.get(*s..*end).ok_or(Decline)?;
                    self.entry(node, k)?
                }
                Str::Escaped(k) => self.entry(node, k)?,
            };
            self.value(e, depth)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(Decline),
            }
        }
    }

    /// Rows from `pos` (on a row's `{`) to the array's end and the text's end. With `stop`,
    /// returns `true` as soon as a row ends exactly there.
    fn rows_to_end(&mut self, stop: Option<usize>) -> Scan<bool> {
        loop {
            self.ws();
            if self.peek() != Some(b'{') {
                return Err(Decline);
            }
            self.object(0, 0)?;
            self.rows += 1;
            std::mem::swap(&mut self.prev, &mut self.cur);
            self.cur.clear();
            if stop == Some(self.pos) {
                return Ok(true);
            }
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    self.ws();
                    return if self.pos == self.b.len() {
                        Ok(false)
                    } else {
                        Err(Decline)
                    };
                }
                _ => return Err(Decline),
            }
        }
    }
}

/// A place near the middle where one row seems to end and the next begin: (just after the
/// `}`, on the next `{`). Only a guess: the first half's reader proves it.
fn split_point(b: &[u8]) -> Option<(usize, usize)> {
    let from = b.len() / 2;
    let to = b.len().min(from + (1 << 20));
    let skip_ws = |mut i: usize| {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
            i += 1;
        }
        i
    };
    (from..to).find_map(|i| {
        if b[i] != b'}' {
            return None;
        }
        let comma = skip_ws(i + 1);
        if b.get(comma) != Some(&b',') {
            return None;
        }
        let next = skip_ws(comma + 1);
        (b.get(next) == Some(&b'{')).then_some((i + 1, next))
    })
}

/// The second part's columns and rows after the first's: columns matched by where they came
/// from, spans into its extra text moved past the first part's extra text.
fn merge<'t>(mut a: Part<'t>, b: Part<'t>) -> Option<Part<'t>> {
    let shift = u32::try_from(a.extra.len()).ok()?;
    let mut b_slots = b.slots;
    for (c, r) in &b.in_extra {
        let slot = b_slots.get_mut(*c as usize)?.get_mut(*r as usize)?;
        *slot = slot.shifted(shift)?;
    }
    let a_rows = a.rows;
    for col in &mut a.slots {
        col.resize(a_rows, Slot::Null);
    }
    let mut in_a: HashMap<(Option<u32>, Box<str>), u32> = a
        .origins
        .iter()
        .cloned()
        .enumerate()
        .map(|(c, o)| Some((o, u32::try_from(c).ok()?)))
        .collect::<Option<_>>()?;
    // b's column `i` is a's column `to[i]`; a parent comes before its members in b, so it is
    // matched first.
    let mut to: Vec<u32> = Vec::with_capacity(b.origins.len());
    for ((parent, key), mut col) in b.origins.into_iter().zip(b_slots) {
        let parent = match parent {
            Some(p) => Some(*to.get(p as usize)?),
            None => None,
        };
        let origin = (parent, key);
        let c = match in_a.get(&origin) {
            Some(&c) => c,
            None => {
                let c = u32::try_from(a.origins.len()).ok()?;
                in_a.insert(origin.clone(), c);
                a.origins.push(origin);
                a.slots.push(vec![Slot::Null; a_rows]);
                c
            }
        };
        to.push(c);
        col.resize(b.rows, Slot::Null);
        a.slots.get_mut(c as usize)?.extend(col);
    }
    a.rows += b.rows;
    a.extra.push_str(&b.extra);
    Some(a)
}

/// Rows of `text` (already trimmed) when it is an array of objects; `None` to let the general
/// rung decide.
pub fn array_of_objects(text: &str, rung: &'static str) -> Option<Table> {
    let b = text.as_bytes();
    if b.first() != Some(&b'[') || text.len() >= u32::MAX as usize / 2 {
        return None;
    }
    let mut first = Part::new(text, 1);
    first.ws();
    if first.peek() != Some(b'{') {
        return None;
    }
    let split = (text.len() >= PARALLEL_BYTES)
        .then(|| split_point(b))
        .flatten();
    let part = match split {
        Some((stop, next)) => {
            let (a, second) = std::thread::scope(|scope| {
                let second = scope.spawn(move || {
                    let mut p = Part::new(text, next);
                    p.rows_to_end(None).ok().map(|_| p)
                });
                let stopped = first.rows_to_end(Some(stop));
                (stopped.map(|s| (s, first)), second.join().ok().flatten())
            });
            match a.ok()? {
                // The guess held: the second reader's rows follow the first's.
                (true, a) => merge(a, second?)?,
                // The guess was inside a row: the first reader read everything itself.
                (false, a) => a,
            }
        }
        None => {
            first.rows_to_end(None).ok()?;
            first
        }
    };
    let mut arena = String::with_capacity(text.len() + part.extra.len());
    arena.push_str(text);
    arena.push_str(&part.extra);
    if arena.len() > u32::MAX as usize {
        return None;
    }
    let origins = part
        .origins
        .into_iter()
        .map(|(parent, key)| Origin {
            parent: parent.map(|p| p as usize),
            key: key.into(),
        })
        .collect();
    Table::from_nested(
        origins,
        part.slots,
        part.rows,
        arena,
        Tier::Json,
        Map::new(),
        rung,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intercept::table::{Cell, ColumnType};
    use proptest::prelude::*;
    use serde_json::json;

    /// The general rung's table for the same text.
    fn general(text: &str) -> Option<Table> {
        let v: Value = serde_json::from_str(text).ok()?;
        super::super::json::rows_in_value(v, "json")?.into_table()
    }

    fn assert_same(text: &str) -> Table {
        let fast = array_of_objects(text, "json").expect("the fast reader declined");
        let slow = general(text).expect("the general rung found no table");
        let cols = |t: &Table| {
            t.columns
                .iter()
                .map(|c| (c.name.clone(), c.ty, c.note.clone(), c.view_of))
                .collect::<Vec<_>>()
        };
        assert_eq!(cols(&fast), cols(&slow));
        assert_eq!(fast.rows(), slow.rows());
        for c in 0..fast.columns.len() {
            let a: Vec<_> = fast.cells(c, 0..fast.rows()).collect();
            let b: Vec<_> = slow.cells(c, 0..slow.rows()).collect();
            assert_eq!(a, b, "column {}", fast.columns[c].name);
        }
        fast
    }

    fn mixed_row(i: usize) -> Value {
        let mut row = json!({
            "id": 7_300_000_000_000_000_000u64 + i as u64,
            "ID": i,
            "esc": format!("quote \" tab \t é \u{1F600} {i}"),
            "k\u{e9}y": "unicode key",
            "profile": { "city": "Porto", "geo": { "lat": 41.1, "deep": { "x": [1, {"y": null}] } } },
            "tags": ["a", i, 1.5e3, { "k": "v" }],
            "empty": {},
            "none": [],
            "maybe": if i.is_multiple_of(3) { Value::Null } else { json!(i as f64 / 4.0) },
            "big": if i.is_multiple_of(2) { json!(u64::MAX) } else { json!(1) },
            "when": format!("2025-01-{:02}T10:00:00+02:00", 1 + i % 28),
            "day": format!("2024-02-{:02}", 1 + i % 29),
            "ok": i.is_multiple_of(2),
        });
        // Keys that come and go, and change order.
        if i.is_multiple_of(5) {
            row.as_object_mut()
                .unwrap()
                .insert("late".into(), json!("only sometimes"));
        }
        if i.is_multiple_of(7) {
            row.as_object_mut().unwrap().shift_remove("ID");
        }
        row
    }

    #[test]
    fn agrees_with_the_general_rung_on_mixed_rows() {
        let rows: Vec<Value> = (0..50).map(mixed_row).collect();
        assert_same(&Value::Array(rows.clone()).to_string());
        // Formatting does not matter; written numbers are kept as written.
        assert_same(&serde_json::to_string_pretty(&rows).unwrap());
        assert_same(
            r#"[{"n": -0, "f": 1E400, "f2": 1e400, "f3": 1E-400, "f4": 2.50E+3, "g": 0.5e-3, "h": 123456789012345678901234567890123456789012, "s": "a\u0041\"\\\/\b\f\n\r\t"}]"#,
        );
        assert_same(r#"[{}, {"a": 1}, {"b": {"c": {}}}, {"a": null, "b": {"c": 2}}]"#);
        // A key and a member that share a dotted name stay two columns.
        assert_same(r#"[{"a": {"b": 1}, "a.b": 2}, {"a.b": 3, "a": {"b": 4}}]"#);
        // A column is DATE only if every value is; mixed numbers and text stay text.
        let t = assert_same(r#"[{"d": "2025-01-01", "x": 1}, {"d": "soon", "x": "one"}]"#);
        assert_eq!(t.columns[0].ty.sql(), "VARCHAR");
    }

    #[test]
    fn agrees_on_two_threads_whatever_the_middle_looks_like() {
        // Large enough to split; the second half brings its own columns and escaped text.
        let mut rows: Vec<Value> = (0..12_000).map(mixed_row).collect();
        for (i, r) in rows.iter_mut().enumerate().skip(9_000) {
            r.as_object_mut()
                .unwrap()
                .insert("second_half".into(), json!(format!("x\"{i}")));
        }
        let text = Value::Array(rows.clone()).to_string();
        assert!(text.len() >= PARALLEL_BYTES);
        let t = assert_same(&text);
        assert_eq!(t.rows(), 12_000);
        // A string full of row boundaries across the middle: the guess is wrong and the first
        // reader reads everything.
        let fake = "},{\"a\":1},{".repeat(text.len() / 8);
        let rows = vec![
            json!({"a": 0, "s": "x"}),
            json!({"a": 1, "s": fake}),
            json!({"a": 2, "s": "y"}),
        ];
        assert_same(&Value::Array(rows).to_string());
    }

    #[test]
    fn declines_what_it_is_unsure_of() {
        for text in [
            r#"[{"a": 1, "a": 2}]"#,
            r#"[{"a": {"b": 1}, "a": {"c": 2}}]"#,
            r#"[{"a": 1}, 2]"#,
            r#"[]"#,
            r#"[1, 2]"#,
            r#"{"rows": [{"a": 1}]}"#,
        ] {
            assert!(array_of_objects(text, "json").is_none(), "{text}");
        }
        // Malformed JSON is declined, as the general parser rejects it too.
        for text in [
            r#"[{"a": 01}]"#,
            r#"[{"a": 1},]"#,
            r#"[{"a": 1,}]"#,
            r#"[{"a": "x\q"}]"#,
            "[{\"a\": \"tab\there\"}]",
            r#"[{"a": 1}] x"#,
            r#"[{"a": tru}]"#,
            r#"[{"a": [1,}]"#,
            r#"[{"a": [1}]"#,
            r#"[{"a": "open}]"#,
            r#"[{"a": -}]"#,
            r#"[{"a": 1.}]"#,
            r#"[{"a": 1e}]"#,
            r#"[{a: 1}]"#,
            r#"[{"a" 1}]"#,
            r#"[{"a": "\ud800"}]"#,
        ] {
            assert!(array_of_objects(text, "json").is_none(), "{text}");
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
        }
    }

    #[test]
    fn agrees_on_columns_of_objects_on_some_rows_and_other_values_on_others() {
        // The real shape: a jsonb object on every 7th row, null elsewhere, pretty-printed.
        let rows: Vec<Value> = (0..200)
            .map(|i| {
                let meta = if i % 7 == 0 {
                    json!({ "q": i, "sku": format!("S{i}"), "tags": ["a"] })
                } else {
                    Value::Null
                };
                json!({ "order_id": i, "meta": meta })
            })
            .collect();
        let t = assert_same(&serde_json::to_string_pretty(&rows).unwrap());
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["order_id", "meta", "meta.q", "meta.sku", "meta.tags"]
        );
        let objects = t.cells(1, 0..t.rows()).filter(|c| *c != Cell::Null).count();
        assert_eq!(objects, (0..200).filter(|i| i % 7 == 0).count());
        // Objects, `{}`, scalars and arrays under one key; escapes and spacing in objects.
        assert_same(
            r#"[{"m": {"a": 1}}, {"m": {}}, {"m": "s"}, {"m": 1E400}, {"m": [1, {"x": 2}]}, {"m": null}, {"m": { "a" : "q\"\u00e9" , "b": {"c": [ ]}}}]"#,
        );
        assert_same(r#"[{"m": {}}, {"m": {}}]"#);
        assert_same(
            r#"[{"m": {"a": {"b": 1}}}, {"m": {"a": "x"}}, {"m": {"a": {"c": {"d": 1}}}}]"#,
        );
    }

    /// A value that may be an object, a scalar, an array or null, with keys that repeat.
    fn member() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            "[a-z\"\\\\é ]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                proptest::collection::vec(
                    (proptest::sample::select(&["a", "b", "c"][..]), inner),
                    0..4
                )
                .prop_map(|kv| Value::Object(
                    kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
                )),
            ]
        })
    }

    /// Whether `cell`, in a column of type `ty`, is the value `want` as sent: a JSON column's
    /// text is that value, and a scalar column's cell is it in the column's type.
    fn holds(want: &Value, cell: Cell<'_>, ty: ColumnType) -> bool {
        let number = |c: &Cell<'_>| match c {
            Cell::Int(i) => Some(*i as f64),
            Cell::UInt(u) => Some(*u as f64),
            Cell::Huge(h) => Some(*h as f64),
            Cell::Double(f) => Some(*f),
            Cell::Text(t) => t.parse().ok(),
            _ => None,
        };
        match (want, cell) {
            (Value::Null, Cell::Null) => true,
            (_, Cell::Text(t)) if ty == ColumnType::Json => {
                serde_json::from_str::<Value>(&t).is_ok_and(|v| &v == want)
            }
            (Value::Bool(a), Cell::Bool(b)) => *a == b,
            // Booleans beside other scalars are text.
            (Value::Bool(a), Cell::Text(t)) => t == if *a { "true" } else { "false" },
            (Value::String(s), Cell::Text(t)) => *s == t,
            (Value::Number(n), c) => n.as_f64().is_some() && n.as_f64() == number(&c),
            _ => false,
        }
    }

    /// A member of `v` by dotted path, null where it has none.
    fn at_path<'v>(v: &'v Value, path: &[&str]) -> &'v Value {
        path.iter().fold(v, |v, k| v.get(k).unwrap_or(&Value::Null))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Both readers build the same table, and no value is lost: every key's column holds
        /// each row's value as sent, and every view holds exactly its member of it.
        #[test]
        fn objects_anywhere_lose_no_value(
            rows in proptest::collection::vec(
                proptest::collection::vec((proptest::sample::select(&["id", "m", "n"][..]), member()), 1..4),
                1..12,
            ),
            pretty in any::<bool>(),
        ) {
            let rows: Vec<Value> = rows
                .into_iter()
                .map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
                .collect();
            let text = if pretty {
                serde_json::to_string_pretty(&rows).unwrap()
            } else {
                Value::Array(rows.clone()).to_string()
            };
            let t = assert_same(&text);
            for (c, column) in t.columns.iter().enumerate() {
                let path: Vec<&str> = column.name.split('.').collect();
                for (r, row) in rows.iter().enumerate() {
                    let want = at_path(row, &path);
                    let got = t.cell(r, c);
                    prop_assert!(holds(want, got.clone(), column.ty), "{} row {}: {:?} vs {:?}", column.name, r, want, got);
                }
            }
            // Every key met is a column of its own.
            for row in &rows {
                for k in row.as_object().unwrap().keys() {
                    prop_assert!(t.columns.iter().any(|c| &c.name == k), "{k}");
                }
            }
        }

        /// Rows wrapped in an object (`{"data": [...], "total": n}`) make through the fast
        /// path exactly the table the general rung makes, context included, whatever else
        /// the object holds (scalars, other arrays, objects, a key twice: the fast path takes
        /// only what it is sure of).
        #[test]
        fn wrapped_rows_agree_with_the_general_rung(
            rows in proptest::collection::vec(
                proptest::collection::vec((proptest::sample::select(&["id", "m"][..]), member()), 1..3),
                1..6,
            ),
            around in proptest::collection::vec((proptest::sample::select(&["total", "next", "data", "x"][..]), member()), 0..4),
            at in 0usize..4,
            pretty in any::<bool>(),
        ) {
            let rows: Vec<Value> = rows
                .into_iter()
                .map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
                .collect();
            let rows = if pretty {
                serde_json::to_string_pretty(&rows).unwrap()
            } else {
                Value::Array(rows).to_string()
            };
            // Members written as text, so that a key may come twice.
            let mut members: Vec<String> = around
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::from(*k), v))
                .collect();
            members.insert(at.min(members.len()), format!("\"rows\": {rows}"));
            let text = format!("{{{}}}", members.join(", "));
            let fast = super::super::json::in_text(&text).and_then(|f| f.into_table());
            let slow = general(&text);
            prop_assert_eq!(fast.is_some(), slow.is_some(), "{}", text);
            if let (Some(fast), Some(slow)) = (fast, slow) {
                let cols = |t: &Table| {
                    t.columns
                        .iter()
                        .map(|c| (c.name.clone(), c.ty, c.note.clone(), c.view_of))
                        .collect::<Vec<_>>()
                };
                prop_assert_eq!(cols(&fast), cols(&slow), "{}", text);
                prop_assert_eq!(&fast.context, &slow.context, "{}", text);
                prop_assert_eq!(fast.rung, slow.rung);
                prop_assert_eq!(fast.rows(), slow.rows());
                for c in 0..fast.columns.len() {
                    let a: Vec<_> = fast.cells(c, 0..fast.rows()).collect();
                    let b: Vec<_> = slow.cells(c, 0..slow.rows()).collect();
                    prop_assert_eq!(a, b, "{}", text);
                }
            }
        }
    }

    #[test]
    fn wrapped_rows_take_the_fast_path_only_when_alone_among_scalars() {
        let rows = r#"[{"a": 1}, {"a": 2}]"#;
        for (text, fast) in [
            (
                format!(r#"{{"data": {rows}, "total": 2, "next": null}}"#),
                true,
            ),
            (format!(r#"{{"data": {rows}, "tags": ["x", "y"]}}"#), false),
            (format!(r#"{{"data": {rows}, "page": {{"n": 1}}}}"#), false),
            (
                format!(r#"{{"data": {rows}, "total": 2, "total": 3}}"#),
                false,
            ),
        ] {
            assert_eq!(
                super::super::json::wrapped_rows(&text).is_some(),
                fast,
                "{text}"
            );
        }
    }
}
