//! `loom.toml`: the schema, its validation and defaults. Validation reports every violated field
//! at once, with its path and the allowed values. Relative paths resolve against the config
//! file's folder. This module never starts anything.

mod fields;
mod globs;
mod http;
mod listing;

pub use fields::Problem;
pub use globs::{GlobError, Globs, glob_match};
pub use http::{
    DEFAULT_HTTP_ADDR, DEFAULT_TOKEN_ENV, HttpAuth, HttpRefusal, HttpSettings, is_loopback,
};
pub use listing::ListingMode;

use fields::{Fields, Problems};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How exposed tool and prompt names are formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// `<server>_<tool>` always.
    Qualified,
    /// The original name when there is one server or no clash; qualified names still work.
    Bare,
}

#[derive(Debug, Clone)]
pub struct Config {
    /// The file this was read from, when there was one.
    pub source: Option<PathBuf>,
    /// Folder that relative paths resolve against.
    pub base_dir: PathBuf,
    pub token_threshold: u64,
    pub export_dir: PathBuf,
    pub startup_grace: Duration,
    pub shutdown_grace: Duration,
    pub naming: Naming,
    /// Largest JSON-RPC message accepted from the client, in bytes.
    pub max_message_bytes: usize,
    /// Largest message accepted from a downstream server, in bytes.
    pub max_downstream_message_bytes: usize,
    pub log_file: Option<PathBuf>,
    pub store: StoreSettings,
    /// Where memories persist; default: a per-project file under the user's data folder.
    pub memory_file: Option<PathBuf>,
    pub memory_max_bytes: usize,
    /// Largest data `bind` may put into one call's arguments, in bytes of JSON.
    pub max_bound_bytes: usize,
    /// Workbench theme: `dark`, `light` or a theme file.
    pub theme: Option<String>,
    /// `[theme_colors]`: slots that override the theme's.
    pub theme_overrides: Option<toml::Table>,
    /// A keymap file overriding single keys of the default one.
    pub keymap: Option<PathBuf>,
    /// What `ask` means when no human is attached: allow (true) or deny.
    pub unattended_allow: bool,
    /// How long a call waits for a human's decision before it is denied.
    pub approval_timeout: Duration,
    /// The HTTP surface: address, auth and bounds.
    pub http: HttpSettings,
    /// How tools are listed unless a server or a connection says otherwise.
    pub listing: ListingMode,
    /// Whether a tool found and called while unlisted joins the listing for the session.
    pub promote: bool,
    /// What the session keeps on disk after it ends (see `crate::history`).
    pub history: HistorySettings,
    pub servers: Vec<ServerSpec>,
}

/// `history = "off" | "calls" | "all"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryMode {
    Off,
    /// The call log, server states and decisions; no data.
    Calls,
    /// Also every dataset and parked text.
    All,
}

/// `history`, `history_dir`, `history_max_bytes`, `history_keep_days`.
#[derive(Debug, Clone)]
pub struct HistorySettings {
    pub mode: HistoryMode,
    /// `history_dir`, when the config names one; otherwise [`Config::history_dir`] derives it.
    pub dir: Option<PathBuf>,
    pub max_bytes: u64,
    pub keep_days: Option<u64>,
}

impl Default for HistorySettings {
    fn default() -> Self {
        HistorySettings {
            mode: HistoryMode::All,
            dir: None,
            max_bytes: 2 << 30,
            keep_days: None,
        }
    }
}

/// Settings of the DuckDB store.
#[derive(Debug, Clone)]
pub struct StoreSettings {
    pub memory_limit: String,
    pub threads: u32,
    pub memory_budget: u64,
    /// What parked text may take, in memory and in the project's folder each.
    pub parked_max_bytes: u64,
    pub query_timeout: Duration,
    pub envelope_budget: usize,
    pub inline_rows: usize,
}

impl Default for StoreSettings {
    fn default() -> Self {
        StoreSettings {
            memory_limit: "2GB".into(),
            threads: 2,
            memory_budget: 256 << 20,
            parked_max_bytes: 512 << 20,
            query_timeout: Duration::from_secs(30),
            envelope_budget: 1500,
            inline_rows: 100,
        }
    }
}

/// The size at `key`, which must be at least 1 MiB (`example` shows the form in the error).
fn size_of_at_least_1mib(
    f: &mut Fields,
    key: &'static str,
    example: &str,
    p: &mut Problems,
) -> Option<u64> {
    let m = f.string(key, p)?;
    match parse_size(&m) {
        Some(b) if b >= 1 << 20 => Some(b),
        _ => {
            p.push(
                key,
                format!("must be a size of at least 1MiB like \"{example}\", found \"{m}\""),
            );
            None
        }
    }
}

/// `12.3 MB`, `4.0 KB`, `512 B`.
pub fn size_words(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1000.0;
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// Parses `256MiB`, `1GB`, `512 MB`, or a plain number of bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "kib" | "k" => 1024.0,
        "mb" => 1e6,
        "mib" | "m" => 1024.0 * 1024.0,
        "gb" => 1e9,
        "gib" | "g" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some((n * mult) as u64)
}

#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub name: String,
    pub transport: TransportSpec,
    pub tools: ToolFilter,
    pub call_timeout: Duration,
    /// Whether large results of this server become datasets (`intercept = "auto" | "never"`).
    pub intercept: bool,
    /// Tool globs whose arguments are never stored as provenance.
    pub provenance_denylist: Globs,
    /// Whether large non-tabular text of this server is parked (`park = "auto" | "never"`).
    pub park: bool,
    /// Tool globs whose results are never parked.
    pub park_never: Globs,
    /// Approval policy by tool glob (original tool names).
    pub approve: ApprovePolicy,
    pub handshake_timeout: Duration,
    pub restart: RestartPolicy,
    /// This server's listing mode, when it differs from the top level's.
    pub listing: Option<ListingMode>,
    /// Tool globs (original names) listed in every mode.
    pub pin: Globs,
    /// Whether this server's results (datasets, parked text, call arguments) go into the
    /// session's history (`history = false` keeps them out; its calls are still listed).
    pub history: bool,
    /// Most calls of one `loom_call_each` batch in flight at this server at once.
    pub max_concurrency: usize,
    /// How many of its tool calls loom sends a second at most (`max_calls_per_second`).
    pub max_calls_per_second: u32,
}

/// How many tool calls a second loom sends one server unless its `max_calls_per_second` says.
pub const DEFAULT_CALLS_PER_SECOND: u32 = 100;

/// `approve.allow` / `approve.ask` / `approve.deny` globs of one server, and whether data from
/// elsewhere bound into its calls asks a person first (`approve.cross_server`).
#[derive(Debug, Clone, Default)]
pub struct ApprovePolicy {
    pub allow: Globs,
    pub ask: Globs,
    pub deny: Globs,
    /// `approve.cross_server = "allow"`: data loom holds from elsewhere (another server's
    /// results, memories, the call log, past sessions) is bound into this server's calls
    /// without asking. The default asks.
    pub cross_server_allowed: bool,
}

/// What a call needs before it may reach its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    Allow,
    Ask,
    Deny,
}

impl ApprovePolicy {
    /// `deny` always holds; then `ask`, then `allow`; otherwise destructive tools (by their
    /// annotations) are asked about and the rest allowed.
    pub fn decide(&self, tool: &str, annotations: Option<&serde_json::Value>) -> Approval {
        if self.deny.matches(tool) {
            return Approval::Deny;
        }
        if self.ask.matches(tool) {
            return Approval::Ask;
        }
        if self.allow.matches(tool) {
            return Approval::Allow;
        }
        if may_destroy(annotations) {
            Approval::Ask
        } else {
            Approval::Allow
        }
    }
}

/// Whether a tool's annotations say it may destroy something: `destructiveHint: true`, or
/// `readOnlyHint: false` with no `destructiveHint` (the spec's default for a tool that
/// writes). The approval policy asks about these by default, and the workbench's palette asks
/// before it calls one.
pub fn may_destroy(annotations: Option<&serde_json::Value>) -> bool {
    let a = annotations.and_then(|a| a.as_object());
    let destructive = a
        .and_then(|a| a.get("destructiveHint"))
        .and_then(|v| v.as_bool());
    let read_only = a
        .and_then(|a| a.get("readOnlyHint"))
        .and_then(|v| v.as_bool());
    matches!(
        (destructive, read_only),
        (Some(true), _) | (None, Some(false))
    )
}

#[derive(Debug, Clone)]
pub enum TransportSpec {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        env_passthrough: Vec<String>,
        cwd: PathBuf,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        bearer_token_env: Option<String>,
        /// A program and its arguments (run without a shell) whose trimmed stdout is the
        /// bearer token; run before the first request and again when the server answers 401.
        bearer_token_command: Option<Vec<String>>,
    },
}

#[derive(Debug, Clone, Default)]
pub struct ToolFilter {
    pub allow: Option<Globs>,
    pub deny: Globs,
}

impl ToolFilter {
    pub fn exposes(&self, tool: &str) -> bool {
        let allowed = self.allow.as_ref().is_none_or(|globs| globs.matches(tool));
        allowed && !self.deny.matches(tool)
    }
}

#[derive(Debug, Clone)]
pub struct RestartPolicy {
    /// Failures tolerated within `window` before the server is delisted.
    pub max_restarts: u32,
    pub window: Duration,
    pub backoff_initial: Duration,
    pub backoff_max: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            max_restarts: 5,
            window: Duration::from_secs(60),
            backoff_initial: Duration::from_millis(250),
            backoff_max: Duration::from_secs(30),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config {path} is not valid TOML: {message}")]
    Syntax { path: String, message: String },
    #[error("config {path} has {} problem(s):\n{}", problems.len(), render(problems))]
    Invalid {
        path: String,
        problems: Vec<Problem>,
    },
}

fn render(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| format!("  - {}: {}", p.field, p.message))
        .collect::<Vec<_>>()
        .join("\n")
}

pub const DEFAULT_TOKEN_THRESHOLD: u64 = 2000;
/// Most bytes `bind` and `loom_call_each` may put into one call's arguments, unless configured.
pub const DEFAULT_MAX_BOUND_BYTES: usize = 8 << 20;
/// Server names loom keeps for itself (`loom`, and `loom_…`).
pub const RESERVED_NAME: &str = "loom";

impl Config {
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        let base = abs
            .parent()
            .map(Path::to_owned)
            .unwrap_or_else(|| PathBuf::from("."));
        let mut cfg = Config::parse(&text, &base, &path.display().to_string())?;
        cfg.source = Some(abs);
        Ok(cfg)
    }

    /// Parses config text; `label` names the source in messages.
    pub fn parse(text: &str, base_dir: &Path, label: &str) -> Result<Config, ConfigError> {
        let table: toml::Table =
            text.parse()
                .map_err(|e: toml::de::Error| ConfigError::Syntax {
                    path: label.to_owned(),
                    message: e.to_string(),
                })?;
        let mut p = Problems::default();
        let cfg = read_config(&table, base_dir, &mut p);
        if p.0.is_empty() {
            Ok(cfg)
        } else {
            Err(ConfigError::Invalid {
                path: label.to_owned(),
                problems: p.0,
            })
        }
    }

    pub fn server(&self, name: &str) -> Option<&ServerSpec> {
        self.servers.iter().find(|s| s.name == name)
    }
}

fn secs(f: f64) -> Duration {
    Duration::from_secs_f64(f)
}

fn read_config(table: &toml::Table, base: &Path, p: &mut Problems) -> Config {
    let mut f = Fields::new(table, "");
    let token_threshold = f
        .integer("token_threshold", 1, 10_000_000, p)
        .unwrap_or(DEFAULT_TOKEN_THRESHOLD as i64) as u64;
    let export_dir = base.join(
        f.string("export_dir", p)
            .unwrap_or_else(|| "exports".into()),
    );
    let startup_grace = secs(f.seconds("startup_grace", 0.0, 600.0, p).unwrap_or(10.0));
    let shutdown_grace = secs(f.seconds("shutdown_grace", 0.0, 60.0, p).unwrap_or(3.0));
    let naming = match f.one_of("naming", &["qualified", "bare"], p).as_deref() {
        Some("bare") => Naming::Bare,
        _ => Naming::Qualified,
    };
    let max_message_bytes = f
        .integer("max_message_bytes", 1024, 1 << 30, p)
        .unwrap_or(16 << 20) as usize;
    let max_downstream_message_bytes = f
        .integer("max_downstream_message_bytes", 1024, 1 << 30, p)
        .unwrap_or(64 << 20) as usize;
    let log_file = f.string("log_file", p).map(|s| base.join(s));
    let memory_file = f.string("memory_file", p).map(|s| base.join(s));
    let max_bound_bytes = f
        .integer("max_bound_bytes", 1, 1 << 30, p)
        .map_or(DEFAULT_MAX_BOUND_BYTES, |n| n as usize);
    let memory_max_bytes = f
        .integer("memory_max_bytes", 1, 64 << 20, p)
        .unwrap_or(256 * 1024) as usize;
    let theme = f.string("theme", p).map(|t| {
        if t == "dark" || t == "light" {
            t
        } else {
            base.join(t).display().to_string()
        }
    });
    let theme_overrides = f.table("theme_colors", p).cloned();
    let keymap = f.string("keymap", p).map(|s| base.join(s));
    let unattended_allow = f.one_of("unattended", &["allow", "deny"], p).as_deref() != Some("deny");
    let approval_timeout = secs(
        f.seconds("approval_timeout", 1.0, 86_400.0, p)
            .unwrap_or(120.0),
    );
    let mut store = StoreSettings::default();
    if let Some(m) = f.string("memory_limit", p) {
        match parse_size(&m) {
            Some(b) if b >= 64 << 20 => store.memory_limit = format!("{}MiB", b >> 20),
            _ => p.push(
                "memory_limit",
                format!(
                    "must be a size of at least 64MiB like \"2GB\" or \"512MiB\", found \"{m}\""
                ),
            ),
        }
    }
    if let Some(t) = f.integer("threads", 1, 256, p) {
        store.threads = t as u32;
    }
    if let Some(b) = size_of_at_least_1mib(&mut f, "memory_budget", "256MiB", p) {
        store.memory_budget = b;
    }
    if let Some(b) = size_of_at_least_1mib(&mut f, "parked_max_bytes", "512MiB", p) {
        store.parked_max_bytes = b;
    }
    if let Some(q) = f.seconds("query_timeout", 0.1, 3600.0, p) {
        store.query_timeout = secs(q);
    }
    if let Some(b) = f.integer("envelope_budget", 200, 100_000, p) {
        store.envelope_budget = b as usize;
    }
    if let Some(r) = f.integer("inline_rows", 1, 10_000, p) {
        store.inline_rows = r as usize;
    }
    let http = http::read(&mut f, p);
    let listing = listing::read_mode(&mut f, p).unwrap_or_default();
    let promote = f.boolean("promote", p).unwrap_or(true);
    let history = read_history(&mut f, base, p);
    let mut servers = Vec::new();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for (path, t) in f.array_of_tables("servers", p) {
        if let Some(toml::Value::String(name)) = t.get("name") {
            if let Some(first) = seen.get(name) {
                p.push(
                    format!("{path}.name"),
                    format!("\"{name}\" is already used by {first}; names must be unique"),
                );
            } else {
                seen.insert(name.clone(), path.clone());
            }
        }
        if let Some(s) = read_server(t, &path, base, p) {
            servers.push(s);
        }
    }
    f.finish(p);
    Config {
        source: None,
        base_dir: base.to_owned(),
        token_threshold,
        export_dir,
        startup_grace,
        shutdown_grace,
        naming,
        max_message_bytes,
        max_downstream_message_bytes,
        log_file,
        store,
        memory_file,
        memory_max_bytes,
        max_bound_bytes,
        theme,
        theme_overrides,
        keymap,
        unattended_allow,
        approval_timeout,
        http,
        listing,
        promote,
        history,
        servers,
    }
}

fn read_history(f: &mut Fields<'_>, base: &Path, p: &mut Problems) -> HistorySettings {
    let mut h = HistorySettings::default();
    match f.one_of("history", &["off", "calls", "all"], p).as_deref() {
        Some("off") => h.mode = HistoryMode::Off,
        Some("calls") => h.mode = HistoryMode::Calls,
        _ => {}
    }
    h.dir = f.string("history_dir", p).map(|d| base.join(d));
    if let Some(b) = size_of_at_least_1mib(f, "history_max_bytes", "2GiB", p) {
        h.max_bytes = b;
    }
    h.keep_days = f
        .integer("history_keep_days", 1, 36_500, p)
        .map(|d| d as u64);
    h
}

pub fn valid_server_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('a'..='z'))
        && name.len() <= 32
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
}

/// Whether a bearer token may be sent to `url`: over https anywhere, over plain http only to
/// this machine (a loopback address or `localhost`), decided from the parsed URL.
fn token_may_travel_to(url: &str) -> bool {
    let Ok(u) = reqwest::Url::parse(url) else {
        return false;
    };
    match u.scheme() {
        "https" => true,
        "http" => {
            let Some(host) = u.host_str() else {
                return false;
            };
            if host.eq_ignore_ascii_case("localhost") {
                return true;
            }
            let bare = host
                .strip_prefix('[')
                .and_then(|h| h.strip_suffix(']'))
                .unwrap_or(host);
            match bare.parse::<std::net::IpAddr>() {
                Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback(),
                Ok(std::net::IpAddr::V6(ip)) => {
                    ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
                }
                Err(_) => false,
            }
        }
        _ => false,
    }
}

pub fn valid_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('A'..='Z' | 'a'..='z' | '_'))
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn read_server(t: &toml::Table, path: &str, base: &Path, p: &mut Problems) -> Option<ServerSpec> {
    let mut f = Fields::new(t, path);
    let name = match f.string("name", p) {
        Some(n) if n == RESERVED_NAME || n.starts_with("loom_") => {
            p.push(
                f.path_of("name"),
                format!("\"{n}\" is reserved for loom's own tools; choose another name"),
            );
            None
        }
        Some(n) if !valid_server_name(&n) => {
            p.push(f.path_of("name"), format!("\"{n}\" must match ^[a-z][a-z0-9_]{{0,31}}$ (lowercase letter, then up to 31 lowercase letters, digits or _)"));
            None
        }
        Some(n) => Some(n),
        None => {
            if !f.has("name") {
                p.push(f.path_of("name"), "is required (^[a-z][a-z0-9_]{0,31}$)");
            }
            None
        }
    };
    let has_cmd = f.has("command");
    let has_url = f.has("url");
    let stdio_keys = ["args", "env", "env_passthrough", "cwd"];
    let http_keys = ["headers", "bearer_token_env", "bearer_token_command"];
    let transport = match (has_cmd, has_url) {
        (true, true) => {
            p.push(
                path,
                "has both `command` (stdio) and `url` (streamable HTTP); keep one",
            );
            None
        }
        (false, false) => {
            p.push(
                path,
                "needs either `command` (a stdio server) or `url` (a streamable-HTTP server)",
            );
            None
        }
        (true, false) => {
            for k in http_keys {
                if f.has(k) {
                    p.push(
                        f.path_of(k),
                        "only applies to streamable-HTTP servers (with `url`)",
                    );
                }
            }
            let command = f.string("command", p).filter(|c| !c.trim().is_empty());
            if command.is_none() && !matches!(t.get("command"), Some(v) if !v.is_str()) {
                p.push(f.path_of("command"), "must not be empty");
            }
            let args = f.string_list("args", p).unwrap_or_default();
            let env = f.string_map("env", p).unwrap_or_default();
            for k in env.keys() {
                if !valid_env_name(k) {
                    p.push(
                        format!("{}.{k}", f.path_of("env")),
                        "is not a valid environment variable name",
                    );
                }
            }
            let env_passthrough = f.string_list("env_passthrough", p).unwrap_or_default();
            for (i, k) in env_passthrough.iter().enumerate() {
                if !valid_env_name(k) {
                    p.push(
                        format!("{}[{i}]", f.path_of("env_passthrough")),
                        format!("\"{k}\" is not a valid environment variable name"),
                    );
                }
            }
            let cwd = f
                .string("cwd", p)
                .map(|c| base.join(c))
                .unwrap_or_else(|| base.to_owned());
            command.map(|command| {
                // A command with a path separator is a file relative to the config, not a PATH lookup.
                let command = if command.contains('/') && !Path::new(&command).is_absolute() {
                    base.join(&command).display().to_string()
                } else {
                    command
                };
                TransportSpec::Stdio {
                    command,
                    args,
                    env,
                    env_passthrough,
                    cwd,
                }
            })
        }
        (false, true) => {
            for k in stdio_keys {
                if f.has(k) {
                    p.push(
                        f.path_of(k),
                        "only applies to stdio servers (with `command`)",
                    );
                }
            }
            let url = f.string("url", p);
            let url = match url {
                Some(u) if u.starts_with("http://") || u.starts_with("https://") => {
                    match reqwest::Url::parse(&u) {
                        Ok(_) => Some(u),
                        Err(e) => {
                            p.push(f.path_of("url"), format!("is not a valid URL: {e}"));
                            None
                        }
                    }
                }
                Some(u) => {
                    p.push(
                        f.path_of("url"),
                        format!("must start with http:// or https://, found \"{u}\""),
                    );
                    None
                }
                None => None,
            };
            let headers = f.string_map("headers", p).unwrap_or_default();
            for k in headers.keys() {
                if k.eq_ignore_ascii_case("authorization") {
                    p.push(format!("{}.{k}", f.path_of("headers")), "must not hold a credential; name an environment variable in `bearer_token_env` instead");
                }
            }
            let bearer_token_env = f.string("bearer_token_env", p);
            if let Some(b) = &bearer_token_env
                && !valid_env_name(b)
            {
                p.push(
                    f.path_of("bearer_token_env"),
                    format!("must name an environment variable (like HOSTED_TOKEN), found \"{b}\""),
                );
            }
            if let (Some(u), Some(var)) = (&url, &bearer_token_env)
                && !token_may_travel_to(u)
            {
                p.push(
                    f.path_of("bearer_token_env"),
                    format!(
                        "would send the token in {var} in clear text over plain http:// to a host other than this machine; use an https:// url (plain http:// is accepted only for localhost, 127.0.0.0/8 and ::1)"
                    ),
                );
            }
            let bearer_token_command =
                token_command(&mut f, t.get("bearer_token_command"), base, p);
            if let (Some(u), Some(_)) = (&url, &bearer_token_command)
                && !token_may_travel_to(u)
            {
                p.push(
                    f.path_of("bearer_token_command"),
                    "would send the token in clear text over plain http:// to a host other than this machine; use an https:// url (plain http:// is accepted only for localhost, 127.0.0.0/8 and ::1)",
                );
            }
            if bearer_token_env.is_some() && f.has("bearer_token_command") {
                p.push(
                    f.path_of("bearer_token_command"),
                    "cannot be combined with `bearer_token_env`; keep one source of the token",
                );
            }
            url.map(|url| TransportSpec::Http {
                url,
                headers,
                bearer_token_env,
                bearer_token_command,
            })
        }
    };
    let mut tools = ToolFilter::default();
    if let Some(tt) = f.table("tools", p) {
        let mut tf = Fields::new(tt, f.path_of("tools"));
        tools.allow = tf.globs("allow", p);
        tools.deny = tf.globs("deny", p).unwrap_or_default();
        tf.finish(p);
    }
    let call_timeout = secs(f.seconds("call_timeout", 0.1, 86_400.0, p).unwrap_or(300.0));
    let handshake_timeout = secs(
        f.seconds("handshake_timeout", 0.1, 600.0, p)
            .unwrap_or(30.0),
    );
    let intercept = f
        .one_of("intercept", &["auto", "never"], p)
        .is_none_or(|v| v == "auto");
    let provenance_denylist = f.globs("provenance_denylist", p).unwrap_or_default();
    let park = f
        .one_of("park", &["auto", "never"], p)
        .is_none_or(|v| v == "auto");
    let park_never = f.globs("park_never", p).unwrap_or_default();
    let mut approve = ApprovePolicy::default();
    if let Some(t) = f.table("approve", p) {
        let path = f.path_of("approve");
        let mut a = Fields::new(t, path);
        approve.allow = a.globs("allow", p).unwrap_or_default();
        approve.ask = a.globs("ask", p).unwrap_or_default();
        approve.deny = a.globs("deny", p).unwrap_or_default();
        approve.cross_server_allowed = a
            .one_of("cross_server", &["ask", "allow"], p)
            .is_some_and(|v| v == "allow");
        a.finish(p);
    }
    let listing = listing::read_mode(&mut f, p);
    let pin = f.globs("pin", p).unwrap_or_default();
    let history = f.boolean("history", p).unwrap_or(true);
    let max_concurrency = f.integer("max_concurrency", 1, 256, p).unwrap_or(8) as usize;
    let max_calls_per_second = f
        .integer("max_calls_per_second", 1, 100_000, p)
        .unwrap_or(DEFAULT_CALLS_PER_SECOND as i64) as u32;
    let mut restart = RestartPolicy::default();
    if let Some(n) = f.integer("max_restarts", 0, 1000, p) {
        restart.max_restarts = n as u32;
    }
    if let Some(w) = f.seconds("restart_window", 1.0, 86_400.0, p) {
        restart.window = secs(w);
    }
    if let Some(b) = f.seconds("restart_backoff", 0.0, 600.0, p) {
        restart.backoff_initial = secs(b);
    }
    // The other transport's keys were reported above; `finish` must not call them unknown.
    mark_seen(
        &mut f,
        &[
            "command",
            "url",
            "args",
            "env",
            "env_passthrough",
            "cwd",
            "headers",
            "bearer_token_env",
            "bearer_token_command",
        ],
    );
    f.finish(p);
    Some(ServerSpec {
        name: name?,
        transport: transport?,
        tools,
        call_timeout,
        handshake_timeout,
        restart,
        intercept,
        provenance_denylist,
        park,
        park_never,
        approve,
        listing,
        pin,
        history,
        max_concurrency,
        max_calls_per_second,
    })
}

/// `bearer_token_command`: a program and its arguments, run without a shell (a shell line is
/// `["sh", "-c", "…"]`); a program containing `/` is relative to the config's folder, like a
/// stdio server's `command`.
fn token_command(
    f: &mut Fields<'_>,
    raw: Option<&toml::Value>,
    base: &Path,
    p: &mut Problems,
) -> Option<Vec<String>> {
    const SHAPE: &str = "a list of strings: the program and its arguments, run without a shell (for a shell line write [\"sh\", \"-c\", \"…\"])";
    let key = "bearer_token_command";
    if raw.is_some_and(toml::Value::is_str) {
        p.push(f.path_of(key), format!("must be {SHAPE}, found a string"));
        f.mark(key);
        return None;
    }
    let mut argv = f.string_list(key, p)?;
    match argv.first() {
        None => {
            p.push(f.path_of(key), format!("must not be empty; it is {SHAPE}"));
            return None;
        }
        Some(program) if program.trim().is_empty() => {
            p.push(format!("{}[0]", f.path_of(key)), "must name a program");
            return None;
        }
        Some(program) if program.contains('/') && !Path::new(program).is_absolute() => {
            argv[0] = base.join(program).display().to_string();
        }
        Some(_) => {}
    }
    Some(argv)
}

fn mark_seen(f: &mut Fields<'_>, keys: &[&'static str]) {
    for k in keys {
        f.mark(k);
    }
}

#[cfg(test)]
mod tests;
