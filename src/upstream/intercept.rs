//! The interception pipeline: a large tool result, resource read or prompt becomes a dataset
//! envelope or a parked blob, answered in the shape its method's answer must have (see
//! `intercept::shape`); anything that fails along the way passes the original through
//! untouched.

use super::*;
use crate::intercept::Shape;

/// The new body, what it is and its reference, and the original's tokens.
type Replacement = (Box<RawValue>, (Outcome, String), usize);

/// What became of a tool result.
pub(super) enum Interception {
    /// It became a dataset (the caller gets its envelope) or parked text (a pointer).
    Replaced {
        body: Box<RawValue>,
        outcome: Outcome,
        reference: String,
        original_bytes: usize,
        original_tokens: usize,
    },
    /// It reaches the caller whole; `because` says why when it was large enough to be
    /// considered (a person reading the call wants to know).
    Passed {
        body: Box<RawValue>,
        because: Option<String>,
    },
}

impl ClientSession {
    /// Turns a large tabular result into a dataset and answers with its envelope; anything
    /// that fails or does not pay off forwards the original untouched. `target` is the tool's
    /// or prompt's name at the server, or the URI read.
    pub(super) async fn intercept(
        &self,
        raw: Box<RawValue>,
        shape: Shape,
        server: &Arc<ServerHandle>,
        target: &str,
        arguments: Option<Value>,
        lineage: crate::types::data::Lineage,
    ) -> Interception {
        let tool = shape.label(target);
        let tool = tool.as_str();
        // Cheap check first: small results never wait for the store.
        let threshold = self.session.config.token_threshold as usize;
        if raw.get().len() < threshold {
            return Interception::Passed {
                body: raw,
                because: None,
            };
        }
        if !server.spec.intercept && !server.spec.park {
            return Interception::Passed {
                body: raw,
                because: Some("interception and parking are off for this server (intercept and park = \"never\")".into()),
            };
        }
        let store = match self.session.store.get().await {
            Ok(store) => store,
            Err(e) => {
                return Interception::Passed {
                    body: raw,
                    because: Some(format!("the store is unavailable: {e}")),
                };
            }
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
        let dataset_base = shape.dataset_base(&server_name, target);
        let original = raw.clone();
        let original_len = raw.get().len();
        let work = tokio::task::spawn_blocking(move || -> Result<Replacement, String> {
            // The answer in its method's shape; an original that is not, after all, is
            // forwarded as it came.
            let dress = |replacement: Value| -> Result<Box<RawValue>, String> {
                shape
                    .dress(replacement, &raw)
                    .map(|v| jsonrpc::to_raw(&v))
                    .ok_or_else(|| {
                        format!("the {} answer has no shape loom can keep", shape.method())
                    })
            };
            let park = |text: String, tokens: usize| -> Result<Replacement, String> {
                let content_type = if serde_json::from_str::<Value>(&text).is_ok() {
                    "application/json"
                } else {
                    "text/plain"
                };
                let summary = format!(
                    "{server_name}/{tool}: {}",
                    crate::store::blobs::first_lines(&text)
                );
                let blob = store.park_traced(
                    text,
                    summary,
                    content_type.into(),
                    crate::store::blobs::DEFAULT_TTL,
                    lineage.clone(),
                );
                let pointer = crate::store::blobs::pointer(&blob, Some(tokens));
                let pointer_tokens = crate::intercept::tokens::estimate(&pointer.to_string());
                if pointer_tokens < tokens {
                    Ok((dress(pointer)?, (Outcome::Parked, blob.key.clone()), tokens))
                } else {
                    Err("the pointer to parked text would not be smaller".into())
                }
            };
            // Rows that could not be stored are still too large to forward whole: their text
            // is parked instead, as text that is not a table would be.
            let park_instead = |why: String, tokens: usize| -> Result<Replacement, String> {
                match crate::intercept::text_of_as(shape, &raw) {
                    Some(text) if park_text => {
                        park(text, tokens).map_err(|e| format!("{why}; parking it failed too: {e}"))
                    }
                    _ => Err(why),
                }
            };
            // Scalars around the rows are shown to the model: secrets in them are masked.
            let redact_context = |table: &mut crate::intercept::Table| {
                if let Value::Object(context) = crate::intercept::redact::redact(&Value::Object(
                    std::mem::take(&mut table.context),
                )) {
                    table.context = context;
                }
            };
            let provenance_of = |table: &crate::intercept::Table| crate::store::Provenance {
                server: server_name.clone(),
                tool: tool.clone(),
                arguments: provenance_args.clone(),
                at: crate::store::now_iso(),
                rung: table.rung.to_owned(),
            };
            // Several tables side by side: one dataset each, one envelope for them all.
            let several = |mut tables: Vec<crate::intercept::extract::multi::NamedTable>,
                           tokens: usize|
             -> Result<Replacement, String> {
                tables.iter_mut().for_each(|t| redact_context(&mut t.table));
                let provenance = provenance_of(&tables.first().ok_or("no tables")?.table);
                let named: Vec<(&str, &crate::intercept::Table)> =
                    tables.iter().map(|t| (t.name.as_str(), &t.table)).collect();
                let metas =
                    match store.ingest_group(&named, &dataset_base, provenance, lineage.clone()) {
                        Ok(m) => m,
                        Err(e) => {
                            tracing::warn!("ingest failed, parking the result instead: {e}");
                            return park_instead(
                                format!("the tables could not be stored: {e}"),
                                tokens,
                            );
                        }
                    };
                let drop_all = || {
                    for m in &metas {
                        let _ = store.drop_dataset(&m.dataset_ref);
                    }
                };
                // Profiled once all are in the catalog, so each sees its siblings.
                let parts: Result<Vec<_>, _> = metas
                    .iter()
                    .map(|m| store.profile(&m.dataset_ref, 5).map(|p| (m.clone(), p)))
                    .collect();
                let parts = match parts {
                    Ok(p) => p,
                    Err(e) => {
                        tracing::warn!("profiling failed, parking the result instead: {e}");
                        drop_all();
                        return park_instead(
                            format!("the tables could not be profiled: {e}"),
                            tokens,
                        );
                    }
                };
                let (env, env_tokens) = crate::store::render_group(
                    &parts,
                    store.config().envelope_budget,
                    Some(tokens),
                );
                let why = if env_tokens < tokens {
                    match dress(env) {
                        Ok(body) => {
                            // The call log keeps one reference: the first table's.
                            let first = metas.first().map(|m| m.dataset_ref.clone());
                            return Ok((
                                body,
                                (Outcome::Intercepted, first.unwrap_or_default()),
                                tokens,
                            ));
                        }
                        Err(why) => why,
                    }
                } else {
                    "the envelope would not be smaller than the result".to_owned()
                };
                drop_all();
                Err(why)
            };
            let started = std::time::Instant::now();
            let decided = crate::intercept::decide_as(shape, &raw, threshold);
            let found_in = started.elapsed();
            let (mut table, tokens) = match decided {
                crate::intercept::Decision::Table { table, tokens } if intercept_tables => {
                    (table, tokens)
                }
                crate::intercept::Decision::Table { .. } => {
                    return Err(
                        "tables are not intercepted for this server (intercept = \"never\")".into(),
                    );
                }
                crate::intercept::Decision::Text { text, tokens } if park_text => {
                    return park(text, tokens);
                }
                crate::intercept::Decision::Text { .. } => {
                    return Err("text that is not a table, and parking is off for this tool (park, park_never)".into());
                }
                crate::intercept::Decision::Tables { tables, tokens } if intercept_tables => {
                    return several(tables, tokens);
                }
                crate::intercept::Decision::Tables { .. } => {
                    return Err(
                        "tables are not intercepted for this server (intercept = \"never\")".into(),
                    );
                }
                crate::intercept::Decision::Pass(why) => return Err(why.to_owned()),
            };
            redact_context(&mut table);
            let provenance = provenance_of(&table);
            let meta = match store.ingest_named(&table, &dataset_base, provenance, lineage.clone())
            {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!("ingest failed, parking the result instead: {e}");
                    return park_instead(format!("the table could not be stored: {e}"), tokens);
                }
            };
            let stored_in = started.elapsed();
            let profile = store.profile(&meta.dataset_ref, 5);
            let profiled_in = started.elapsed();
            let envelope = profile.map(|p| {
                crate::store::envelope::render(
                    &meta,
                    &p,
                    store.config().envelope_budget,
                    Some(tokens),
                )
            });
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
            tracing::debug!(
                "{}: {} rows found in {:.1} ms, stored in {:.1} ms, profiled in {:.1} ms, envelope in {:.1} ms",
                meta.dataset_ref,
                meta.rows,
                ms(found_in),
                ms(stored_in - found_in),
                ms(profiled_in - stored_in),
                ms(started.elapsed() - profiled_in),
            );
            let why = match envelope {
                Ok((env, env_tokens)) if env_tokens < tokens => match dress(env) {
                    Ok(body) => {
                        return Ok((
                            body,
                            (Outcome::Intercepted, meta.dataset_ref.clone()),
                            tokens,
                        ));
                    }
                    Err(why) => why,
                },
                Ok(_) => "the envelope would not be smaller than the result".to_owned(),
                Err(e) => {
                    tracing::warn!("profiling failed, parking the result instead: {e}");
                    let _ = store.drop_dataset(&meta.dataset_ref);
                    return park_instead(format!("the table could not be profiled: {e}"), tokens);
                }
            };
            let _ = store.drop_dataset(&meta.dataset_ref);
            Err(why)
        });
        match work.await {
            Ok(Ok((body, (outcome, reference), tokens))) => Interception::Replaced {
                body,
                outcome,
                reference,
                original_bytes: original_len,
                original_tokens: tokens,
            },
            Ok(Err(because)) => Interception::Passed {
                body: original,
                because: Some(because),
            },
            Err(e) => Interception::Passed {
                body: original,
                because: Some(format!("interception failed inside loom: {e}")),
            },
        }
    }
}
