//! `Key: value` record blocks, either separated by blank lines or numbered `1.`, `2.`, … (the
//! numbers must run without gaps). Every record must have the same keys, every line of a block
//! must be a `Key: value` line. One line may hold several pairs (`Points: 120 | Comments: 45`,
//! as list output of news items and search hits does) when every piece between the separators
//! is a pair; otherwise the line is one pair whose value holds the separator. Blocks that read
//! differently end up with different keys, and then nothing is read.

use super::Found;
use serde_json::{Map, Value};

fn key_value(line: &str) -> Option<(String, String)> {
    let (k, v) = line.split_once(':')?;
    let k = k.trim();
    let ok_key = !k.is_empty()
        && k.chars().count() <= 40
        && k.split_whitespace().count() <= 4
        && k.chars().next().is_some_and(char::is_alphabetic);
    ok_key.then(|| (k.to_owned(), v.trim().to_owned()))
}

/// What may stand between pairs on one line.
const SEPARATORS: [&str; 3] = [" | ", " · ", " • "];

/// The pairs on one line: several when a separator splits it into pairs only, else one.
fn pairs(line: &str) -> Option<Vec<(String, String)>> {
    for sep in SEPARATORS {
        if line.contains(sep) {
            let split: Option<Vec<_>> = line.split(sep).map(key_value).collect();
            if let Some(p) = split {
                return Some(p);
            }
        }
    }
    key_value(line).map(|kv| vec![kv])
}

/// `Some((n, rest))` for a line like `12. rest`.
fn numbered(line: &str) -> Option<(u64, &str)> {
    let t = line.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let rest = t.get(digits..)?.strip_prefix(['.', ')'])?;
    Some((t.get(..digits)?.parse().ok()?, rest.trim_start()))
}

fn blocks(text: &str) -> Option<Vec<Vec<&str>>> {
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    let numbered_style = lines
        .iter()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| numbered(l).is_some());
    let mut out: Vec<Vec<&str>> = Vec::new();
    if numbered_style {
        let mut expected = 1;
        for l in lines.iter().filter(|l| !l.trim().is_empty()) {
            if let Some((n, rest)) = numbered(l) {
                if n != expected {
                    return None;
                }
                expected += 1;
                out.push(if rest.is_empty() { vec![] } else { vec![rest] });
            } else {
                out.last_mut()?.push(l.trim());
            }
        }
    } else {
        let mut cur = Vec::new();
        for l in lines {
            if l.trim().is_empty() {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            } else {
                cur.push(l.trim());
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
    }
    Some(out)
}

pub fn parse(text: &str) -> Option<Found> {
    let blocks = blocks(text)?;
    if blocks.len() < 2 {
        return None;
    }
    let mut records = Vec::with_capacity(blocks.len());
    let mut keys: Option<Vec<String>> = None;
    for b in blocks {
        let mut rec = Map::new();
        let mut these = Vec::new();
        for line in b {
            for (k, v) in pairs(line)? {
                if rec.insert(k.clone(), Value::String(v)).is_some() {
                    return None;
                }
                these.push(k);
            }
        }
        let mut sorted = these.clone();
        sorted.sort();
        match &keys {
            None if sorted.len() >= 2 => keys = Some(sorted),
            Some(k) if *k == sorted => {}
            _ => return None,
        }
        records.push(rec);
    }
    Found::text(records, "records")
}
