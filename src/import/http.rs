//! A streamable-HTTP entry as loom's `url`, `headers` and `bearer_token_env`: a URL with a
//! credential is written without it (the block commented out), a secret header is left out,
//! and an `Authorization: Bearer` header becomes a token read from the environment.

use super::entry::Block;
use super::secrets::{harmless, looks_secret, redact_url, secret_value};
use super::shell::{reference, unexpanded};
use super::toml_text::quoted;
use serde_json::{Map, Value};

/// A `url = …` line; a URL that carries a credential is written with it removed, and the
/// block is kept commented out.
pub(super) fn url_line(b: &mut Block, url: &str) {
    if secret_value(url) {
        b.refuse("its URL carries a credential (a password, a token in the query or the path), and loom writes none in its config: use the URL without it and bearer_token_env, then uncomment");
        b.lines.push(format!("url = {}", quoted(&redact_url(url))));
        return;
    }
    if let Some(v) = unexpanded(url) {
        b.refuse(format!(
            "its URL uses {v}, which only the client filled in: write the value in its place, then uncomment"
        ));
    }
    b.lines.push(format!("url = {}", quoted(url)));
}

pub(super) fn http(b: &mut Block, name: &str, url: &str, e: &Map<String, Value>) {
    url_line(b, url);
    let mut headers: Vec<(String, String)> = Vec::new();
    if let Some(hs) = e.get("headers").and_then(Value::as_object) {
        for (k, v) in hs {
            let Some(v) = v.as_str() else {
                b.note(format!("the header {k} is not text: left out"));
                continue;
            };
            if k.eq_ignore_ascii_case("authorization") {
                bearer(b, name, v);
            } else if secret_value(v)
                || (looks_secret(k) && !harmless(v))
                || unexpanded(v).is_some()
            {
                b.note(format!(
                    "the header {k} is left out: it holds a credential or a variable, and loom writes neither in its config (add it by hand if you accept that)"
                ));
            } else {
                headers.push((k.clone(), v.to_owned()));
            }
        }
    }
    if !headers.is_empty() {
        let fields: Vec<String> = headers
            .iter()
            .map(|(k, v)| format!("{} = {}", quoted(k), quoted(v)))
            .collect();
        b.lines
            .push(format!("headers = {{ {} }}", fields.join(", ")));
    }
}

/// An `Authorization` header as loom takes it: a bearer token from an environment variable.
fn bearer(b: &mut Block, name: &str, value: &str) {
    let Some(token) = value
        .split_once(' ')
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim())
    else {
        b.note(
            "its Authorization header is not a bearer token, which is all loom sends: left out"
                .into(),
        );
        return;
    };
    let var = match reference(token) {
        Some(var) => var,
        None => {
            let var = format!("{}_TOKEN", name.to_ascii_uppercase());
            b.note(format!(
                "its bearer token is not written here: export {var} with it before starting loom"
            ));
            var
        }
    };
    b.lines.push(format!("bearer_token_env = {}", quoted(&var)));
}
