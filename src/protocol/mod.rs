//! MCP protocol eras and the facts loom needs about them: which versions exist, how a version
//! is negotiated, which `_meta` keys carry the per-request protocol data of 2026-07-28, and the
//! MCP-specific error codes. Nothing here does I/O.

pub mod legacy_result;
pub mod members;
pub mod seal;

use serde_json::{Map, Value};

pub const V_2024_11_05: &str = "2024-11-05";
pub const V_2025_03_26: &str = "2025-03-26";
pub const V_2025_06_18: &str = "2025-06-18";
pub const V_2025_11_25: &str = "2025-11-25";
pub const V_2026_07_28: &str = "2026-07-28";

/// Versions with the `initialize` handshake, oldest first.
pub const LEGACY_VERSIONS: [&str; 4] = [V_2024_11_05, V_2025_03_26, V_2025_06_18, V_2025_11_25];
/// Every version loom serves, oldest first.
pub const SUPPORTED_VERSIONS: [&str; 5] = [
    V_2024_11_05,
    V_2025_03_26,
    V_2025_06_18,
    V_2025_11_25,
    V_2026_07_28,
];

pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
pub const META_PREFIX: &str = "io.modelcontextprotocol/";

/// 2026-07-28 error codes.
pub const HEADER_MISMATCH: i64 = -32020;
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Methods 2026-07-28 removed: a modern client's request for one is "method not found".
pub const REMOVED_IN_2026: [&str; 8] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "tasks/result",
    "tasks/list",
    "notifications/initialized",
];

pub fn removed_in_modern(method: &str) -> bool {
    REMOVED_IN_2026.contains(&method)
}

/// Which handshake a peer speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` handshake (2025-11-25 and older).
    Legacy,
    /// `server/discover` and per-request `_meta` (2026-07-28).
    Modern,
}

impl Era {
    pub fn label(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }
}

/// The version an `initialize` is answered with: the client's own when loom knows it, else the
/// newest version that has an `initialize` handshake.
pub fn negotiate_initialize(requested: Option<&str>) -> &'static str {
    requested
        .and_then(|r| LEGACY_VERSIONS.iter().find(|v| **v == r))
        .copied()
        .unwrap_or(V_2025_11_25)
}

pub fn is_supported(version: &str) -> bool {
    SUPPORTED_VERSIONS.contains(&version)
}

/// The capabilities a client declared that matter for what downstream servers offer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientCapabilities {
    pub raw: Map<String, Value>,
}

impl ClientCapabilities {
    pub fn from_value(v: Option<&Value>) -> Self {
        let raw = v.and_then(Value::as_object).cloned().unwrap_or_default();
        ClientCapabilities { raw }
    }

    pub fn has(&self, name: &str) -> bool {
        self.raw.contains_key(name)
    }

    pub fn to_value(&self) -> Value {
        Value::Object(self.raw.clone())
    }
}

/// Which client capability a server-to-client request needs.
pub fn capability_for_server_request(method: &str) -> Option<&'static str> {
    match method {
        "roots/list" => Some("roots"),
        "sampling/createMessage" => Some("sampling"),
        "elicitation/create" => Some("elicitation"),
        _ => None,
    }
}

/// Logging levels in order of severity (RFC 5424 names, as MCP uses them).
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

pub fn log_level_rank(level: &str) -> Option<usize> {
    LOG_LEVELS.iter().position(|l| *l == level)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_negotiation() {
        assert_eq!(negotiate_initialize(Some("2025-06-18")), "2025-06-18");
        assert_eq!(negotiate_initialize(Some("2024-11-05")), "2024-11-05");
        assert_eq!(negotiate_initialize(Some("2026-07-28")), V_2025_11_25);
        assert_eq!(negotiate_initialize(Some("1999-01-01")), V_2025_11_25);
        assert_eq!(negotiate_initialize(None), V_2025_11_25);
    }
}
