//! The environment a child server starts with: default-deny. A curated, non-secret base from
//! loom's own environment, then the names the server lists in `env_passthrough`, then its own
//! `env`. Nothing else of loom's environment (tokens, keys) reaches a child.

use std::collections::BTreeMap;

/// Variables every child gets when loom has them: enough to find programs, a home and a
/// temporary folder, and to keep the user's locale. None of them is a secret.
pub const BASE_VARS: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TMP", "TEMP", "LANG", "LANGUAGE", "TZ",
];

fn in_base(name: &str) -> bool {
    BASE_VARS.contains(&name) || name.starts_with("LC_")
}

/// Builds a child's environment from `parent` (loom's own, passed in for testability).
pub fn child_env(
    parent: impl IntoIterator<Item = (String, String)>,
    passthrough: &[String],
    own: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = parent
        .into_iter()
        .filter(|(k, _)| in_base(k) || passthrough.iter().any(|p| p == k))
        .collect();
    for (k, v) in own {
        out.insert(k.clone(), v.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_deny() {
        let parent = [
            ("PATH", "/bin"),
            ("HOME", "/home/u"),
            ("LC_ALL", "C.UTF-8"),
            ("AWS_SECRET_ACCESS_KEY", "s3cr3t"),
            ("HTTPS_PROXY", "http://p"),
            ("GITHUB_TOKEN", "ghp"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        let own = BTreeMap::from([
            ("LOG_LEVEL".to_owned(), "info".to_owned()),
            ("PATH".to_owned(), "/opt".to_owned()),
        ]);
        let env = child_env(parent, &["HTTPS_PROXY".to_owned()], &own);
        assert_eq!(env.get("PATH").map(String::as_str), Some("/opt"));
        assert_eq!(env.get("LC_ALL").map(String::as_str), Some("C.UTF-8"));
        assert_eq!(env.get("HTTPS_PROXY").map(String::as_str), Some("http://p"));
        assert_eq!(env.get("LOG_LEVEL").map(String::as_str), Some("info"));
        assert!(!env.contains_key("AWS_SECRET_ACCESS_KEY"));
        assert!(!env.contains_key("GITHUB_TOKEN"));
    }
}
