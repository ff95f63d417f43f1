//! A reader over a TOML table that records every problem instead of stopping at the first, so a
//! bad config is reported in one message listing each violated field with its path.

use std::collections::BTreeMap;
use toml::{Table, Value};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub field: String,
    pub message: String,
}

#[derive(Default)]
pub struct Problems(pub Vec<Problem>);

impl Problems {
    pub fn push(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(Problem {
            field: field.into(),
            message: message.into(),
        });
    }
}

/// Reads the fields of one table at `path`; `finish` reports the keys nobody asked for.
pub struct Fields<'a> {
    table: &'a Table,
    path: String,
    seen: Vec<&'static str>,
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a number",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

impl<'a> Fields<'a> {
    pub fn new(table: &'a Table, path: impl Into<String>) -> Self {
        Fields {
            table,
            path: path.into(),
            seen: Vec::new(),
        }
    }

    pub fn path_of(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn get(&mut self, key: &'static str) -> Option<&'a Value> {
        self.seen.push(key);
        self.table.get(key)
    }

    /// Records `key` as known without reading it.
    pub fn mark(&mut self, key: &'static str) {
        self.seen.push(key);
    }

    pub fn has(&self, key: &str) -> bool {
        self.table.contains_key(key)
    }

    pub fn string(&mut self, key: &'static str, p: &mut Problems) -> Option<String> {
        match self.get(key)? {
            Value::String(s) => Some(s.clone()),
            other => {
                p.push(
                    self.path_of(key),
                    format!("must be a string, found {}", type_name(other)),
                );
                None
            }
        }
    }

    pub fn integer(
        &mut self,
        key: &'static str,
        min: i64,
        max: i64,
        p: &mut Problems,
    ) -> Option<i64> {
        match self.get(key)? {
            Value::Integer(i) if (min..=max).contains(i) => Some(*i),
            Value::Integer(i) => {
                p.push(
                    self.path_of(key),
                    format!("must be between {min} and {max}, found {i}"),
                );
                None
            }
            other => {
                p.push(
                    self.path_of(key),
                    format!("must be an integer, found {}", type_name(other)),
                );
                None
            }
        }
    }

    /// Seconds as an integer or a decimal number, within `[min, max]`.
    pub fn seconds(
        &mut self,
        key: &'static str,
        min: f64,
        max: f64,
        p: &mut Problems,
    ) -> Option<f64> {
        let v = match self.get(key)? {
            Value::Integer(i) => *i as f64,
            Value::Float(f) => *f,
            other => {
                p.push(
                    self.path_of(key),
                    format!("must be a number of seconds, found {}", type_name(other)),
                );
                return None;
            }
        };
        if !(min..=max).contains(&v) {
            p.push(
                self.path_of(key),
                format!("must be between {min} and {max} seconds, found {v}"),
            );
            return None;
        }
        Some(v)
    }

    pub fn boolean(&mut self, key: &'static str, p: &mut Problems) -> Option<bool> {
        match self.get(key)? {
            Value::Boolean(b) => Some(*b),
            other => {
                p.push(
                    self.path_of(key),
                    format!("must be true or false, found {}", type_name(other)),
                );
                None
            }
        }
    }

    pub fn one_of(
        &mut self,
        key: &'static str,
        allowed: &[&str],
        p: &mut Problems,
    ) -> Option<String> {
        let s = self.string(key, p)?;
        if allowed.contains(&s.as_str()) {
            Some(s)
        } else {
            p.push(
                self.path_of(key),
                format!("must be one of {}, found \"{s}\"", quoted_list(allowed)),
            );
            None
        }
    }

    pub fn string_list(&mut self, key: &'static str, p: &mut Problems) -> Option<Vec<String>> {
        let v = self.get(key)?;
        let Value::Array(items) = v else {
            p.push(
                self.path_of(key),
                format!("must be an array of strings, found {}", type_name(v)),
            );
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(s) => out.push(s.clone()),
                other => p.push(
                    format!("{}[{i}]", self.path_of(key)),
                    format!("must be a string, found {}", type_name(other)),
                ),
            }
        }
        Some(out)
    }

    /// A list of tool-name globs, each compiled now: a broken one is reported at its index.
    pub fn globs(&mut self, key: &'static str, p: &mut Problems) -> Option<super::Globs> {
        let list = self.string_list(key, p)?;
        match super::Globs::new(list) {
            Ok(g) => Some(g),
            Err(e) => {
                p.push(format!("{}[{}]", self.path_of(key), e.index), e.to_string());
                None
            }
        }
    }

    pub fn string_map(
        &mut self,
        key: &'static str,
        p: &mut Problems,
    ) -> Option<BTreeMap<String, String>> {
        let v = self.get(key)?;
        let Value::Table(t) = v else {
            p.push(
                self.path_of(key),
                format!("must be a table of strings, found {}", type_name(v)),
            );
            return None;
        };
        let mut out = BTreeMap::new();
        for (k, item) in t {
            match item {
                Value::String(s) => {
                    out.insert(k.clone(), s.clone());
                }
                other => p.push(
                    format!("{}.{k}", self.path_of(key)),
                    format!("must be a string, found {}", type_name(other)),
                ),
            }
        }
        Some(out)
    }

    pub fn table(&mut self, key: &'static str, p: &mut Problems) -> Option<&'a Table> {
        let v = self.get(key)?;
        match v {
            Value::Table(t) => Some(t),
            other => {
                p.push(
                    self.path_of(key),
                    format!("must be a table, found {}", type_name(other)),
                );
                None
            }
        }
    }

    pub fn array_of_tables(
        &mut self,
        key: &'static str,
        p: &mut Problems,
    ) -> Vec<(String, &'a Table)> {
        let Some(v) = self.get(key) else {
            return Vec::new();
        };
        let Value::Array(items) = v else {
            p.push(
                self.path_of(key),
                format!(
                    "must be an array of tables ([[{key}]]), found {}",
                    type_name(v)
                ),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let path = format!("{}[{i}]", self.path_of(key));
            match item {
                Value::Table(t) => out.push((path, t)),
                other => p.push(path, format!("must be a table, found {}", type_name(other))),
            }
        }
        out
    }

    /// Reports every key that no reader asked for, with the keys that are allowed here.
    pub fn finish(self, p: &mut Problems) {
        for key in self.table.keys() {
            if !self.seen.contains(&key.as_str()) {
                let mut allowed = self.seen.clone();
                allowed.sort_unstable();
                allowed.dedup();
                p.push(
                    self.path_of(key),
                    format!("unknown field; allowed fields are {}", allowed.join(", ")),
                );
            }
        }
    }
}

pub fn quoted_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|s| format!("\"{s}\""))
        .collect::<Vec<_>>()
        .join(", ")
}
