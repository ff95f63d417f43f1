//! A result that holds several tables side by side: a JSON object whose members are two or more
//! arrays of row objects, every other member a scalar (a knowledge graph's `{entities,
//! relations}`, a workbook's sheets), or markdown tables each under its own heading (a workbook
//! as markitdown writes it: `## orders`, its table, `## customers`, its table). Each array or
//! section becomes a table of its own, named by its member or heading, with the scalars as
//! every table's context. All or nothing: one array that is not a
//! table by the single-table rules (empty, a scalar among the objects, a row that cannot be
//! typed), or one member that is neither, and no table is found at all; the caller then does
//! what it does with any other text. Nothing here knows any member's name.

use crate::intercept::table::{Table, Tier};
use serde_json::{Map, Value};

/// One table of several found in one result, and the member it was found under.
#[derive(Debug)]
pub struct NamedTable {
    pub name: String,
    pub table: Table,
}

/// The tables side by side in `structuredContent`, or in the result's one text block; `None`
/// unless there are at least two and every member is accounted for.
pub fn tables(structured: Option<&Value>, texts: &[&str]) -> Option<Vec<NamedTable>> {
    if let Some(Value::Object(obj)) = structured
        && let Some(found) = tables_in(obj, "structuredContent")
    {
        return Some(found);
    }
    let [text] = texts else {
        return None;
    };
    let trimmed = text.trim();
    if !trimmed.starts_with('{') {
        return super::markdown::sections(text)?
            .into_iter()
            .map(|(name, found)| {
                Some(NamedTable {
                    name,
                    table: found.into_table()?,
                })
            })
            .collect();
    }
    match serde_json::from_str::<Value>(trimmed).ok()? {
        Value::Object(obj) => tables_in(&obj, "json"),
        _ => None,
    }
}

/// The tables of `obj`'s members, when it is tables and scalars only.
fn tables_in(obj: &Map<String, Value>, rung: &'static str) -> Option<Vec<NamedTable>> {
    let mut arrays = Vec::new();
    let mut context = Map::new();
    for (name, v) in obj {
        match v {
            Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
                arrays.push((name, items));
            }
            Value::Array(_) | Value::Object(_) => return None,
            scalar => {
                context.insert(name.clone(), scalar.clone());
            }
        }
    }
    if arrays.len() < 2 {
        return None;
    }
    arrays
        .into_iter()
        .map(|(name, items)| {
            let records = items
                .iter()
                .filter_map(|v| v.as_object().cloned())
                .collect();
            Some(NamedTable {
                name: name.clone(),
                table: Table::from_records(records, Tier::Json, context.clone(), rung)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn graph() -> Value {
        let entities: Vec<Value> = (0..40)
            .map(|i| json!({ "type": "entity", "name": format!("person {i}"), "entityType": "person", "observations": [format!("lives in {}", i % 3)] }))
            .collect();
        let relations: Vec<Value> = (1..40)
            .map(|i| json!({ "type": "relation", "from": format!("person {i}"), "to": format!("person {}", i - 1), "relationType": "knows" }))
            .collect();
        json!({ "entities": entities, "relations": relations })
    }

    #[test]
    fn a_graph_is_two_tables_named_by_their_members() {
        let text = serde_json::to_string_pretty(&graph()).unwrap();
        let found = tables(None, &[&text]).expect("two tables");
        let shape: Vec<(&str, usize, usize)> = found
            .iter()
            .map(|t| (t.name.as_str(), t.table.rows(), t.table.columns.len()))
            .collect();
        assert_eq!(shape, [("entities", 40, 4), ("relations", 39, 4)]);
        // The same from structured content, which is preferred.
        let structured = graph();
        let found = tables(Some(&structured), &["not json"]).expect("two tables");
        assert_eq!(found[0].table.rung, "structuredContent");
    }

    #[test]
    fn scalars_are_context_and_anything_else_declines() {
        let mut g = graph();
        g["total"] = json!(79);
        g["cursor"] = Value::Null;
        let found = tables(Some(&g), &[]).expect("two tables");
        for t in &found {
            assert_eq!(t.table.context.get("total"), Some(&json!(79)));
        }
        for spoil in [
            json!([]),
            json!({ "nested": 1 }),
            json!([1, 2, 3]),
            json!([{ "a": 1 }, 2]),
        ] {
            let mut g = graph();
            g["extra"] = spoil.clone();
            assert!(tables(Some(&g), &[]).is_none(), "{spoil}");
        }
        // One array is one table's business (the single-table rungs), not this one's.
        let one = json!({ "entities": graph()["entities"].clone(), "total": 1 });
        assert!(tables(Some(&one), &[]).is_none());
        let mut empty = graph();
        empty["relations"] = json!([]);
        assert!(tables(Some(&empty), &[]).is_none());
        assert!(tables(None, &["{", "}"]).is_none());
        assert!(tables(None, &["[{\"a\":1}]"]).is_none());
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            "\\PC{0,12}".prop_map(Value::String),
        ]
    }

    /// A member: rows of small objects, a scalar, or something that is neither.
    fn member() -> impl Strategy<Value = Value> {
        let row = proptest::collection::btree_map("[a-c]{1,2}", scalar(), 1..4)
            .prop_map(|m| Value::Object(m.into_iter().collect()));
        prop_oneof![
            4 => proptest::collection::vec(row, 0..6).prop_map(Value::Array),
            2 => scalar(),
            1 => proptest::collection::vec(scalar(), 0..3).prop_map(Value::Array),
            1 => Just(json!({ "inner": 1 })),
        ]
    }

    proptest! {
        /// Any text at all: no panic.
        #[test]
        fn any_text_never_panics(text in "\\PC{0,200}") {
            let _ = tables(None, &[&text]);
        }

        /// Tables are found exactly when every member is rows or a scalar and two or more are
        /// rows; each table has its array's rows, in member order, under its member's name.
        #[test]
        fn every_member_is_accounted_for(members in proptest::collection::btree_map("[a-z]{1,6}", member(), 0..5)) {
            let obj: Map<String, Value> = members.into_iter().collect();
            let is_rows = |v: &Value| v.as_array().is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_object));
            let is_scalar = |v: &Value| !v.is_array() && !v.is_object();
            let expected: Vec<(String, usize)> = obj
                .iter()
                .filter(|(_, v)| is_rows(v))
                .map(|(k, v)| (k.clone(), v.as_array().map_or(0, Vec::len)))
                .collect();
            let fits = expected.len() >= 2 && obj.values().all(|v| is_rows(v) || is_scalar(v));
            let text = Value::Object(obj).to_string();
            match tables(None, &[&text]) {
                Some(found) => {
                    prop_assert!(fits, "{text}");
                    let got: Vec<(String, usize)> =
                        found.iter().map(|t| (t.name.clone(), t.table.rows())).collect();
                    prop_assert_eq!(got, expected);
                }
                None => prop_assert!(!fits, "declined {text}"),
            }
        }
    }
}
