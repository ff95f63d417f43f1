//! `bind` for `loom_call` and `loom_call_each`: the bindings resolved from the session's store
//! and memories (see `store::bind`), and the schema check of the arguments they filled, whose
//! error names the binding that broke it.

use super::*;
use crate::store::bind::{self, Bound};

impl ClientSession {
    /// The session's dataset store, opened if it was not yet, or why it cannot be, in words.
    pub(super) async fn store(&self) -> Result<Arc<crate::store::Store>, String> {
        self.session
            .store
            .get()
            .await
            .map_err(|e| format!("the dataset store is not available: {e}"))
    }

    /// Resolves `bind` against the session's data, off the async threads; `Err` says why, in
    /// words for the model.
    pub(super) async fn resolve_bindings(&self, bind: &Value) -> Result<Vec<Bound>, String> {
        let specs = bind::parse(bind).map_err(|e| e.to_string())?;
        let store = self.store().await?;
        let memories = self.session.memories.clone();
        let max = self.session.config.max_bound_bytes;
        tokio::task::spawn_blocking(move || bind::resolve(&store, &memories, &specs, max))
            .await
            .map_err(|e| format!("binding failed inside loom: {e}"))?
            .map_err(|e| e.to_string())
    }
}

/// Why `arguments` (after binding) do not fit `tool`'s input schema, every problem named,
/// and for a problem in a place a binding filled, which binding and from what.
pub(super) fn schema_refusal(
    tool: &str,
    schema: &Value,
    arguments: &Value,
    bound: &[Bound],
) -> Option<String> {
    let problems = super::meta::schema_problems(schema, arguments);
    if problems.is_empty() {
        return None;
    }
    let lines: Vec<String> = problems
        .iter()
        .map(|p| match bind::culprit(bound, p) {
            Some(b) => format!(
                "{p} (bound at `{}` from {}, {} bytes)",
                b.at, b.source, b.bytes
            ),
            None => p.clone(),
        })
        .collect();
    let after = if bound.is_empty() {
        ""
    } else {
        " after binding"
    };
    Some(format!(
        "{tool} would be called with wrong arguments{after}:\n- {}\nits input schema: {schema}",
        lines.join("\n- "),
    ))
}
