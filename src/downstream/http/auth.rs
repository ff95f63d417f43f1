//! The bearer token towards a downstream server (`bearer_token_env` or
//! `bearer_token_command`, run without a shell and bounded), and what a refusal (401) means in
//! words a person can act on. The token never appears in a message, nor the URL's secrets.

use super::*;

/// The `WWW-Authenticate` challenges of a 401, joined and cut for a person to read.
pub(super) fn challenge_of(headers: &HeaderMap) -> Option<String> {
    let all: Vec<String> = headers
        .get_all(reqwest::header::WWW_AUTHENTICATE)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    let joined = all.join(", ");
    let joined = joined.trim();
    (!joined.is_empty()).then(|| joined.chars().take(CHALLENGE_MAX_CHARS).collect())
}

/// `url` as a message may name it: without the userinfo, query and fragment, where secrets
/// (passwords, API keys) travel; text that is no URL is not shown at all.
pub fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            // Only a URL that cannot have them refuses these, and then it has none to hide.
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => "the configured URL".to_owned(),
    }
}

/// What the server's refusal means, in words a person can act on.
pub(super) fn needs_auth_text(url: &str, challenge: Option<&str>, command: bool) -> String {
    let tried = if command {
        " even after bearer_token_command ran again"
    } else {
        ""
    };
    match challenge {
        Some(c) => format!(
            "needs authentication: {url} answered 401 Unauthorized{tried}; WWW-Authenticate: {c}"
        ),
        None => format!(
            "needs authentication: {url} answered 401 Unauthorized{tried} (no WWW-Authenticate challenge)"
        ),
    }
}

/// Why the token command's output is no token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("printed nothing")]
    Empty,
    #[error("printed more than 16 KiB")]
    TooLong,
    #[error("printed text that is not UTF-8")]
    NotText,
    #[error(
        "printed characters a bearer token cannot hold (one token of visible ASCII on one line is expected)"
    )]
    NotAHeader,
}

/// The `Authorization` value for a token: `Bearer` and the token, which must be visible ASCII
/// (RFC 6750's token characters are a subset; a header would carry other bytes as opaque
/// octets that no server reads as the same token).
pub(super) fn bearer_value(token: &str) -> Result<HeaderValue, TokenError> {
    if token.is_empty() {
        return Err(TokenError::Empty);
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(TokenError::NotAHeader);
    }
    let mut value =
        HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| TokenError::NotAHeader)?;
    value.set_sensitive(true);
    Ok(value)
}

/// The `Authorization` value made of the token command's output: its stdout, trimmed.
pub fn bearer_from_output(stdout: &[u8]) -> Result<HeaderValue, TokenError> {
    if stdout.len() > TOKEN_MAX_BYTES {
        return Err(TokenError::TooLong);
    }
    let text = std::str::from_utf8(stdout).map_err(|_| TokenError::NotText)?;
    bearer_value(text.trim())
}

/// Runs `bearer_token_command` (no shell, stdin closed, loom's environment, bounded in time
/// and output) and makes its token the `Authorization` value.
pub(super) async fn run_token_command(argv: &[String]) -> Result<HeaderValue, TokenCommandError> {
    use tokio::io::AsyncReadExt;
    let Some((program, args)) = argv.split_first() else {
        return Err(TokenCommandError::Empty);
    };
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| TokenCommandError::Spawn {
            program: program.clone(),
            reason: e.to_string(),
        })?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(TokenCommandError::NoPipes);
    };
    let work = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let mut stdout = stdout.take(TOKEN_MAX_BYTES as u64 + 1);
        let mut stderr = stderr.take(4096);
        let (o, _) = tokio::join!(stdout.read_to_end(&mut out), stderr.read_to_end(&mut err));
        o.map_err(|e| TokenCommandError::Read(e.to_string()))?;
        if out.len() > TOKEN_MAX_BYTES {
            return Err(TokenCommandError::TooLong);
        }
        let status = child
            .wait()
            .await
            .map_err(|e| TokenCommandError::Wait(e.to_string()))?;
        Ok((status, out, err))
    };
    let (status, out, err) = tokio::time::timeout(TOKEN_COMMAND_TIMEOUT, work)
        .await
        .map_err(|_| TokenCommandError::Timeout(TOKEN_COMMAND_TIMEOUT.as_secs()))??;
    if !status.success() {
        // Its stderr may hold secrets or personal details: a debug log only, never the
        // reason the model and the workbench are shown.
        if let Some(first) = String::from_utf8_lossy(&err)
            .lines()
            .find(|l| !l.trim().is_empty())
        {
            let first: String = first.trim().chars().take(200).collect();
            tracing::debug!("bearer_token_command failed ({status}); its stderr: {first}");
        }
        return Err(TokenCommandError::Failed(status.to_string()));
    }
    bearer_from_output(&out).map_err(TokenCommandError::Output)
}

impl HttpSink {
    /// Whether the server refused loom's credentials.
    pub fn needs_authentication(&self) -> bool {
        lock(&self.auth_failure).is_some()
    }

    pub(super) fn with_auth(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match lock(&self.bearer).value.clone() {
            Some(v) => req.header(reqwest::header::AUTHORIZATION, v),
            None => req,
        }
    }

    /// Runs the token command when there is one and no token yet.
    pub(super) async fn ensure_token(&self) -> Result<(), TokenCommandError> {
        if self.token_command.is_none() {
            return Ok(());
        }
        let (missing, generation) = {
            let b = lock(&self.bearer);
            (b.value.is_none(), b.generation)
        };
        if missing {
            self.refresh_token(generation).await?;
        }
        Ok(())
    }

    /// Runs the token command again, unless another request did since `seen` was current.
    pub(super) async fn refresh_token(&self, seen: u64) -> Result<(), TokenCommandError> {
        let Some(argv) = &self.token_command else {
            return Ok(());
        };
        let _running = self.token_refresh.lock().await;
        if lock(&self.bearer).generation != seen {
            return Ok(());
        }
        let value = run_token_command(argv).await;
        let mut b = lock(&self.bearer);
        b.generation += 1;
        b.value = Some(value?);
        Ok(())
    }
}
