//! Why the HTTP transport could not start, get a token, or renew a session: typed, with the
//! words a person reads (in the server's status, its log and a failed request) as before.

use super::TokenError;

/// Why the transport towards a server could not be set up from its configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    #[error("header name {name:?}: {reason}")]
    HeaderName { name: String, reason: String },
    #[error("header {name}: {reason}")]
    HeaderValue { name: String, reason: String },
    #[error("environment variable {0} (bearer_token_env) is not set")]
    TokenEnvUnset(String),
    #[error("environment variable {0} (bearer_token_env) is empty")]
    TokenEnvEmpty(String),
    #[error(
        "environment variable {0} (bearer_token_env) holds characters a bearer token cannot hold (visible ASCII is expected)"
    )]
    TokenEnvNotAHeader(String),
    #[error("cannot build HTTP client: {0}")]
    Client(String),
}

/// Why `bearer_token_command` gave no token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenCommandError {
    #[error("bearer_token_command is empty")]
    Empty,
    #[error("bearer_token_command: cannot run {program:?}: {reason}")]
    Spawn { program: String, reason: String },
    #[error("bearer_token_command: no pipes to read")]
    NoPipes,
    #[error("bearer_token_command: reading its output failed: {0}")]
    Read(String),
    #[error("bearer_token_command: {}", TokenError::TooLong)]
    TooLong,
    #[error("bearer_token_command: waiting for it failed: {0}")]
    Wait(String),
    #[error("bearer_token_command did not finish within {0}s")]
    Timeout(u64),
    /// It exited unsuccessfully; its stderr is never part of the reason.
    #[error("bearer_token_command failed ({0})")]
    Failed(String),
    #[error("bearer_token_command {0}")]
    Output(TokenError),
}

/// Why a session the server forgot could not be initialized again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenewError {
    #[error("no answer within {0}s")]
    Timeout(u64),
    #[error("cannot reach {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("initialize was answered HTTP {0}")]
    InitializeRefused(reqwest::StatusCode),
    #[error("notifications/initialized was answered HTTP {0}")]
    InitializedRefused(reqwest::StatusCode),
    #[error("the server now speaks \"{now}\", not \"{before}\" as before")]
    VersionChanged { now: String, before: String },
    #[error(transparent)]
    Reply(#[from] ReplyError),
}

/// Why loom's own request read no good answer from a reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    #[error("no answer to {0}")]
    NoAnswer(String),
    /// The server answered with an error, shown cut to 300 characters.
    #[error("the server refused: {0}")]
    Refused(String),
}
