//! A server's list entries (tools, prompts, resources, templates), read one by one: an entry
//! that is not one (not an object, no string name, nested too deep to read) drops only itself,
//! never the server's whole listing; later entries with a name already listed are dropped; a
//! tool without an `inputSchema` gets the empty object schema MCP requires. It only reads and
//! tidies; the caller logs what was dropped.

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// The member that names an entry of the list `key` (`tools` → `name`, …).
pub fn identity(key: &str) -> &'static str {
    match key {
        "resources" => "uri",
        "resourceTemplates" => "uriTemplate",
        _ => "name",
    }
}

/// One page of a list result.
#[derive(Debug, Default)]
pub struct Page {
    pub items: Vec<Map<String, Value>>,
    pub next_cursor: Option<String>,
}

/// Entries left out of a listing, by reason.
#[derive(Debug, Default, PartialEq)]
pub struct Dropped {
    pub not_objects: usize,
    pub unnamed: usize,
    /// Entries that could not be read (nested too deep, say): their name when it could be
    /// read, and why.
    pub unreadable: Vec<(Option<String>, String)>,
    /// A page that was not a list result at all (read as empty), and why.
    pub malformed: Vec<String>,
}

impl Dropped {
    pub fn count(&self) -> usize {
        self.not_objects + self.unnamed + self.unreadable.len()
    }

    /// What was dropped, in words for the log; `None` when nothing was.
    pub fn describe(&self, key: &str) -> Option<String> {
        if self.count() == 0 {
            return (!self.malformed.is_empty())
                .then(|| format!("read as empty: {}", self.malformed.join("; ")));
        }
        let mut parts = self.malformed.clone();
        if self.not_objects > 0 {
            parts.push(format!("{} not a JSON object", self.not_objects));
        }
        if self.unnamed > 0 {
            parts.push(format!(
                "{} without a string `{}`",
                self.unnamed,
                identity(key)
            ));
        }
        for (name, why) in &self.unreadable {
            let name = name
                .as_deref()
                .map_or("one".to_owned(), |n| format!("`{n}`"));
            parts.push(format!("{name} could not be read ({why})"));
        }
        let n = self.count();
        Some(format!(
            "left out {n} {} of `{key}`: {}",
            if n == 1 { "entry" } else { "entries" },
            parts.join("; ")
        ))
    }
}

/// Reads one page of `key` entries from a list result, each entry on its own, adding what it
/// leaves out to `dropped`. A result that is not a list result reads as an empty last page.
pub fn read_page(result: &RawValue, key: &str, dropped: &mut Dropped) -> Page {
    // Raw members are read without building the values, so no depth limit applies here.
    let members: HashMap<String, Box<RawValue>> = match serde_json::from_str(result.get()) {
        Ok(m) => m,
        Err(e) => {
            dropped
                .malformed
                .push(format!("the result is not a JSON object ({e})"));
            return Page::default();
        }
    };
    let mut page = Page {
        next_cursor: members
            .get("nextCursor")
            .and_then(|c| serde_json::from_str::<Option<String>>(c.get()).ok())
            .flatten()
            .filter(|c| !c.is_empty()),
        ..Page::default()
    };
    let Some(list) = members.get(key) else {
        return page;
    };
    let Ok(entries) = serde_json::from_str::<Vec<Box<RawValue>>>(list.get()) else {
        dropped.malformed.push(format!("`{key}` is not a list"));
        return page;
    };
    let id = identity(key);
    for entry in entries {
        match serde_json::from_str::<Value>(entry.get()) {
            Ok(Value::Object(item)) => {
                if item.get(id).is_some_and(Value::is_string) {
                    page.items.push(item);
                } else {
                    dropped.unnamed += 1;
                }
            }
            Ok(_) => dropped.not_objects += 1,
            Err(e) => {
                let name = serde_json::from_str::<HashMap<String, Box<RawValue>>>(entry.get())
                    .ok()
                    .and_then(|m| serde_json::from_str::<String>(m.get(id)?.get()).ok());
                dropped.unreadable.push((name, e.to_string()));
            }
        }
    }
    page
}

/// Keeps the first entry of each name (`identity(key)`); the names of later ones, dropped.
pub fn drop_duplicates(items: &mut Vec<Map<String, Value>>, key: &str) -> Vec<String> {
    let id = identity(key);
    let mut seen = HashSet::new();
    let mut dropped = Vec::new();
    items.retain(|item| {
        let name = item.get(id).and_then(Value::as_str).unwrap_or_default();
        if seen.insert(name.to_owned()) {
            true
        } else {
            dropped.push(name.to_owned());
            false
        }
    });
    dropped
}

/// Gives `{"type":"object"}` to each tool without an object `inputSchema` (MCP requires one);
/// the names of the tools that got it.
pub fn default_input_schemas(tools: &mut [Map<String, Value>]) -> Vec<String> {
    let mut fixed = Vec::new();
    for tool in tools {
        if !tool.get("inputSchema").is_some_and(Value::is_object) {
            tool.insert(
                "inputSchema".into(),
                serde_json::json!({ "type": "object" }),
            );
            fixed.push(
                tool.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            );
        }
    }
    fixed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn a_bad_entry_drops_only_itself() {
        let mut deep = r#"{"type":"object"}"#.to_owned();
        for _ in 0..2000 {
            deep = format!(r#"{{"type":"object","properties":{{"x":{deep}}}}}"#);
        }
        let result = format!(
            r#"{{"tools":[{{"name":"a","inputSchema":{{}}}},"s",{{"nope":1}},{{"name":12}},{{"name":"deep","inputSchema":{deep}}},{{"name":"b"}}],"nextCursor":"c2"}}"#
        );
        let mut dropped = Dropped::default();
        let page = read_page(&raw(&result), "tools", &mut dropped);
        let names: Vec<_> = page.items.iter().map(|t| t["name"].clone()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(page.next_cursor.as_deref(), Some("c2"));
        assert_eq!(dropped.not_objects, 1);
        assert_eq!(dropped.unnamed, 2);
        assert_eq!(dropped.unreadable.len(), 1);
        assert_eq!(dropped.unreadable[0].0.as_deref(), Some("deep"));
        let said = dropped.describe("tools").unwrap();
        assert!(said.starts_with("left out 4 entries of `tools`: 1 not a JSON object; 2 without a string `name`; `deep` could not be read (recursion limit"), "{said}");
        assert!(said.contains("`deep` could not be read"), "{said}");
        assert!(said.contains("recursion limit"), "{said}");
    }

    #[test]
    fn pages_without_a_list_or_cursor_are_empty_and_last() {
        let mut dropped = Dropped::default();
        let page = read_page(&raw(r#"{"nextCursor":""}"#), "tools", &mut dropped);
        assert!(page.items.is_empty() && page.next_cursor.is_none());
        assert_eq!(dropped.describe("tools"), None);
        let page = read_page(&raw("null"), "tools", &mut dropped);
        assert!(page.items.is_empty() && page.next_cursor.is_none());
        read_page(&raw(r#"{"tools":null}"#), "tools", &mut dropped);
        let said = dropped.describe("tools").unwrap();
        assert!(
            said.starts_with("read as empty: the result is not a JSON object"),
            "{said}"
        );
        assert!(said.contains("`tools` is not a list"), "{said}");
        let mut dropped = Dropped::default();
        let page = read_page(
            &raw(r#"{"resources":[{"uri":"a://1"},{"name":"x"}]}"#),
            "resources",
            &mut dropped,
        );
        assert_eq!(page.items.len(), 1);
        assert_eq!(dropped.unnamed, 1);
    }

    #[test]
    fn later_duplicates_go_and_missing_schemas_are_filled() {
        let mut tools: Vec<Map<String, Value>> = serde_json::from_str(
            r#"[{"name":"echo","description":"first"},{"name":"x","inputSchema":{"type":"object"}},{"name":"echo","description":"second"},{"name":"y","inputSchema":"bad"}]"#,
        )
        .unwrap();
        assert_eq!(drop_duplicates(&mut tools, "tools"), ["echo"]);
        assert_eq!(tools.len(), 3);
        assert_eq!(tools[0]["description"], "first");
        assert_eq!(default_input_schemas(&mut tools), ["echo", "y"]);
        assert!(
            tools
                .iter()
                .all(|t| t["inputSchema"].is_object() && t["inputSchema"]["type"] == "object")
        );
    }
}
