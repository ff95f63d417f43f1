//! The envelope of several datasets made from one result (its tables side by side): one line
//! that names them all, then each dataset's own envelope, with its join hints to the others,
//! within one budget shared out evenly. As text plus `structuredContent`, like any envelope.

use super::envelope::render;
use super::{DatasetMeta, Profile};
use crate::intercept::tokens;
use serde_json::{Value, json};

/// The envelope of `parts` (each dataset with its profile) as a `tools/call` result, and its
/// tokens; `budget` is for all of them together.
pub fn render_group(
    parts: &[(DatasetMeta, Profile)],
    budget: usize,
    original_tokens: Option<usize>,
) -> (Value, usize) {
    let names: Vec<String> = parts
        .iter()
        .map(|(m, _)| format!("`{}` ({} rows)", m.dataset_ref, m.rows))
        .collect();
    let saved = original_tokens
        .map(|t| format!("; the raw result was ~{t} tokens"))
        .unwrap_or_default();
    let mut text = format!(
        "This result held {} tables, now one dataset each: {}{saved}. Query them with loom_query (DuckDB SQL); their join hints say how they fit together.\n",
        parts.len(),
        names.join(", ")
    );
    let share = budget.saturating_sub(tokens::estimate(&text)) / parts.len().max(1);
    let mut datasets = Vec::with_capacity(parts.len());
    let mut total = tokens::estimate(&text);
    for (meta, profile) in parts {
        let (envelope, used) = render(meta, profile, share, None);
        total += used;
        if let Some(t) = envelope["content"][0]["text"].as_str() {
            text.push('\n');
            text.push_str(t);
        }
        datasets.push(envelope["structuredContent"].clone());
    }
    let mut structured = json!({ "kind": "datasets", "datasets": datasets });
    if let Some(t) = original_tokens {
        structured["original_tokens"] = json!(t);
    }
    (
        json!({ "content": [{ "type": "text", "text": text }], "structuredContent": structured }),
        total,
    )
}
