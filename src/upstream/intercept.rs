//! The interception pipeline: a large tool result becomes a dataset envelope or a parked blob;
//! anything that fails along the way passes the original through untouched.

use super::*;

impl ClientSession {
    /// Turns a large tabular result into a dataset and answers with its envelope; anything
    /// that fails or does not pay off forwards the original untouched.
    pub(super) async fn intercept(
        &self,
        raw: Box<RawValue>,
        server: &Arc<ServerHandle>,
        tool: &str,
        arguments: Option<Value>,
    ) -> (Box<RawValue>, Option<((Outcome, String), usize, usize)>) {
        // Cheap check first: small results never wait for the store.
        let threshold = self.session.config.token_threshold as usize;
        if raw.get().len() < threshold {
            return (raw, None);
        }
        let Ok(store) = self.session.store.get().await else {
            return (raw, None);
        };
        let denied = server.spec.provenance_denylist.matches(tool);
        let provenance_args = if denied {
            None
        } else {
            arguments.map(|a| crate::intercept::redact::redact(&a))
        };
        let server_name = server.name().to_owned();
        let intercept_tables = server.spec.intercept;
        let park_text = server.spec.park && !server.spec.park_never.matches(tool);
        let tool = tool.to_owned();
        let original = raw.clone();
        let original_len = raw.get().len();
        let work = tokio::task::spawn_blocking(
            move || -> Option<(Box<RawValue>, (Outcome, String), usize)> {
                let (mut table, tokens) = match crate::intercept::decide(&raw, threshold) {
                    crate::intercept::Decision::Table { table, tokens } if intercept_tables => {
                        (table, tokens)
                    }
                    crate::intercept::Decision::Text { text, tokens } if park_text => {
                        let content_type = if serde_json::from_str::<Value>(&text).is_ok() {
                            "application/json"
                        } else {
                            "text/plain"
                        };
                        let summary = format!(
                            "{server_name}/{tool}: {}",
                            crate::store::blobs::first_lines(&text)
                        );
                        let blob = store.park(
                            text,
                            summary,
                            content_type.into(),
                            crate::store::blobs::DEFAULT_TTL,
                        );
                        let pointer = crate::store::blobs::pointer(&blob, Some(tokens));
                        let pointer_tokens =
                            crate::intercept::tokens::estimate(&pointer.to_string());
                        return (pointer_tokens < tokens).then(|| {
                            (
                                jsonrpc::to_raw(&pointer),
                                (Outcome::Parked, blob.key.clone()),
                                tokens,
                            )
                        });
                    }
                    _ => return None,
                };
                if let Value::Object(context) = crate::intercept::redact::redact(&Value::Object(
                    std::mem::take(&mut table.context),
                )) {
                    table.context = context;
                }
                let provenance = crate::store::Provenance {
                    server: server_name,
                    tool,
                    arguments: provenance_args,
                    at: crate::store::now_iso(),
                    rung: table.rung.to_owned(),
                };
                let meta = match store.ingest(&table, provenance) {
                    Ok(m) => m,
                    Err(e) => {
                        tracing::warn!("ingest failed, passing the result through: {e}");
                        return None;
                    }
                };
                let envelope = store.profile(&meta.dataset_ref, 5).map(|p| {
                    crate::store::envelope::render(
                        &meta,
                        &p,
                        store.config().envelope_budget,
                        Some(tokens),
                    )
                });
                match envelope {
                    Ok((env, env_tokens)) if env_tokens < tokens => Some((
                        jsonrpc::to_raw(&env),
                        (Outcome::Intercepted, meta.dataset_ref.clone()),
                        tokens,
                    )),
                    other => {
                        if let Err(e) = other {
                            tracing::warn!("profiling failed, passing the result through: {e}");
                        }
                        let _ = store.drop_dataset(&meta.dataset_ref);
                        None
                    }
                }
            },
        );
        match work.await {
            Ok(Some((env, r, tokens))) => (env, Some((r, original_len, tokens))),
            _ => (original, None),
        }
    }
}
