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

    /// Where data loom holds came from: the servers whose results `refs` (dataset refs, blob
    /// keys, `memory:<key>`, tables a statement read) were made from, followed back through
    /// lineage, and `None` for whatever no server sent or loom cannot trace (a memory, the
    /// call log, a past session, text the model parked, a ref that is gone).
    pub(super) fn origins(
        &self,
        store: &crate::store::Store,
        refs: impl IntoIterator<Item = String>,
    ) -> std::collections::BTreeSet<Option<String>> {
        let mut found = std::collections::BTreeSet::new();
        let mut seen = HashSet::new();
        let mut stack: Vec<String> = refs.into_iter().collect();
        while let Some(r) = stack.pop() {
            if !seen.insert(r.clone()) {
                continue;
            }
            if let Ok(meta) = store.peek_dataset(&r)
                && let Some(p) = &meta.provenance
                && p.server != LOOM_SERVER
            {
                found.insert(Some(p.server.clone()));
                continue;
            }
            let Some(lineage) = store.lineage_of(&r).filter(|_| !r.starts_with("memory:")) else {
                found.insert(None);
                continue;
            };
            let server = lineage.call.and_then(|c| self.session.calls.server_of(c));
            match server {
                Some(s) if s != LOOM_SERVER => {
                    found.insert(Some(s));
                }
                // Made by loom from what it read, or by the model: what it read says.
                _ if !lineage.inputs.is_empty() => stack.extend(lineage.inputs),
                _ => {
                    found.insert(None);
                }
            }
        }
        found
    }

    /// Why a call to `route`'s server that binds data read from `refs` must ask a person
    /// first: the data came from elsewhere (another server, or loom's own data), and the
    /// server's `approve.cross_server` is not `"allow"`. `None` when all of it came from that
    /// server, or the server allows it.
    pub(super) async fn crossing(
        &self,
        route: &crate::downstream::Route,
        refs: Vec<String>,
    ) -> Option<String> {
        if refs.is_empty() || route.server.spec.approve.cross_server_allowed {
            return None;
        }
        let target = route.server.name();
        let origins = match self.store().await {
            Ok(store) => self.origins(&store, refs),
            Err(_) => [None].into(),
        };
        let from: Vec<String> = origins
            .iter()
            .filter(|o| o.as_deref() != Some(target))
            .map(|o| match o {
                Some(s) => format!("server `{s}`"),
                None => "loom's own data (a memory, the call log, a past session, text the model parked, or data loom cannot trace)".into(),
            })
            .collect();
        (!from.is_empty()).then(|| {
            format!(
                "it binds data from {} into a call to server `{target}` (approve.cross_server = \"ask\")",
                from.join(" and ")
            )
        })
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
