//! The HTTP surface's settings (`http`, `http_auth`, `http_token_env`, …): where loom serves
//! MCP by URL, whether a bearer token is required, and the bounds on what clients may hold.

use super::fields::{Fields, Problems};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// Whether HTTP clients must present the bearer token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpAuth {
    /// A bearer token on every request (the default).
    Required,
    /// No token: only sensible on a loopback address, and refused elsewhere unless
    /// `http_open_remote = true`.
    Open,
}

/// The environment variable the bearer token is read from when the config names none.
pub const DEFAULT_TOKEN_ENV: &str = "LOOM_HTTP_TOKEN";
/// The address `--http` serves on when it is given without one.
pub const DEFAULT_HTTP_ADDR: &str = "127.0.0.1:7331";

#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// `http = "ADDR"`: serve MCP over HTTP at this address as well (like `--http ADDR`).
    pub addr: Option<SocketAddr>,
    pub auth: HttpAuth,
    /// The variable holding the token; `None` means `LOOM_HTTP_TOKEN` when set, else a new
    /// token. A variable the config names must be set: loom will not invent a token then.
    pub token_env: Option<String>,
    /// Lets `http_auth = "open"` serve on a non-loopback address.
    pub open_remote: bool,
    /// A session no request has touched for this long is ended.
    pub idle_timeout: Duration,
    pub max_sessions: usize,
    /// Streams (GET streams and streamed POST replies) one session may hold open at once.
    pub max_streams: usize,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            addr: None,
            auth: HttpAuth::Required,
            token_env: None,
            open_remote: false,
            idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 256,
            max_streams: 32,
        }
    }
}

/// Why an HTTP surface may not be served as configured.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum HttpRefusal {
    #[error(
        "http_auth = \"open\" on {0} would serve anyone who can reach it; serve on a loopback address, require the token, or set http_open_remote = true to mean it"
    )]
    OpenRemote(SocketAddr),
}

/// Whether an address is this machine's loopback, an IPv4-mapped one (`::ffff:127.0.0.1`)
/// included. The config's check of `http_auth = "open"`, the HTTP surface's Host guard and its
/// peer check all ask this one question.
pub fn is_loopback(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

impl HttpSettings {
    /// Whether these settings may serve on `addr` (the config's or the command line's).
    pub fn check(&self, addr: SocketAddr) -> Result<(), HttpRefusal> {
        if self.auth == HttpAuth::Open && !is_loopback(addr.ip()) && !self.open_remote {
            return Err(HttpRefusal::OpenRemote(addr));
        }
        Ok(())
    }
}

pub(super) fn read(f: &mut Fields, p: &mut Problems) -> HttpSettings {
    let mut s = HttpSettings::default();
    if let Some(a) = f.string("http", p) {
        match a.parse::<SocketAddr>() {
            Ok(addr) => s.addr = Some(addr),
            Err(_) => p.push(
                f.path_of("http"),
                format!("must be an address like \"{DEFAULT_HTTP_ADDR}\", found \"{a}\""),
            ),
        }
    }
    if f.one_of("http_auth", &["required", "open"], p).as_deref() == Some("open") {
        s.auth = HttpAuth::Open;
    }
    if let Some(name) = f.string("http_token_env", p) {
        if super::valid_env_name(&name) {
            s.token_env = Some(name);
        } else {
            p.push(
                f.path_of("http_token_env"),
                format!("must be an environment variable name, found \"{name}\""),
            );
        }
    }
    if let Some(b) = f.boolean("http_open_remote", p) {
        s.open_remote = b;
    }
    if let Some(t) = f.seconds("http_idle_timeout", 1.0, 7.0 * 86_400.0, p) {
        s.idle_timeout = Duration::from_secs_f64(t);
    }
    if let Some(n) = f.integer("http_max_sessions", 1, 100_000, p) {
        s.max_sessions = n as usize;
    }
    if let Some(n) = f.integer("http_max_streams", 1, 10_000, p) {
        s.max_streams = n as usize;
    }
    if let Some(addr) = s.addr
        && let Err(e) = s.check(addr)
    {
        p.push(f.path_of("http_auth"), e.to_string());
    }
    s
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, HttpAuth};
    use std::path::Path;

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, Path::new("/tmp"), "t.toml").map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_require_a_token_and_serve_no_http() {
        let c = parse("").unwrap();
        assert_eq!(c.http.auth, HttpAuth::Required);
        assert!(c.http.addr.is_none() && c.http.token_env.is_none());
    }

    #[test]
    fn open_is_refused_off_loopback_unless_forced() {
        let e = parse("http = \"0.0.0.0:7331\"\nhttp_auth = \"open\"").unwrap_err();
        assert!(
            e.contains("http_auth") && e.contains("http_open_remote"),
            "{e}"
        );
        let c = parse("http = \"0.0.0.0:7331\"\nhttp_auth = \"open\"\nhttp_open_remote = true")
            .unwrap();
        assert_eq!(c.http.auth, HttpAuth::Open);
        let c = parse("http = \"127.0.0.1:9\"\nhttp_auth = \"open\"").unwrap();
        assert!(c.http.check("[::1]:9".parse().unwrap()).is_ok());
        assert!(c.http.check("10.0.0.2:9".parse().unwrap()).is_err());
        // An IPv4-mapped loopback address is loopback too.
        assert!(
            c.http
                .check("[::ffff:127.0.0.1]:9".parse().unwrap())
                .is_ok()
        );
        assert!(
            c.http
                .check("[::ffff:10.0.0.2]:9".parse().unwrap())
                .is_err()
        );
        assert!(parse("http = \"[::ffff:127.0.0.1]:9\"\nhttp_auth = \"open\"").is_ok());
    }

    #[test]
    fn mapped_loopback_is_loopback() {
        use super::is_loopback;
        for ip in ["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"] {
            assert!(is_loopback(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "10.0.0.1",
            "::",
            "0.0.0.0",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
        ] {
            assert!(!is_loopback(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn bad_values_are_named_with_what_is_allowed() {
        let e = parse(
            "http = \"localhost\"\nhttp_auth = \"maybe\"\nhttp_token_env = \"A-B\"\nhttp_max_streams = 0",
        )
        .unwrap_err();
        for field in [
            "http:",
            "http_auth:",
            "http_token_env:",
            "http_max_streams:",
        ] {
            assert!(e.contains(field), "{field} in {e}");
        }
    }
}
