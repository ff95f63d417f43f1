//! The environment a child server starts with: default-deny. A curated, non-secret base from
//! loom's own environment, then the names the server lists in `env_passthrough`, then its own
//! `env`. Nothing else of loom's environment (tokens, keys) reaches a child.

use std::collections::BTreeMap;
use std::ffi::OsString;

/// Variables every child gets when loom has them: enough to find programs, a home and a
/// temporary folder, and to keep the user's locale. None of them is a secret.
pub const BASE_VARS: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TMP", "TEMP", "LANG", "LANGUAGE", "TZ",
];

fn in_base(name: &str) -> bool {
    BASE_VARS.contains(&name) || name.starts_with("LC_")
}

/// Builds a child's environment from `parent` (loom's own, `std::env::vars_os()`, passed in
/// for testability). Names and values are OS strings: a variable that is not UTF-8 is
/// passed through or left out like any other, never a reason to fail.
pub fn child_env(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    passthrough: &[String],
    own: &BTreeMap<String, String>,
) -> BTreeMap<OsString, OsString> {
    let mut out: BTreeMap<OsString, OsString> = parent
        .into_iter()
        .filter(|(k, _)| {
            k.to_str()
                .is_some_and(|k| in_base(k) || passthrough.iter().any(|p| p == k))
        })
        .collect();
    for (k, v) in own {
        out.insert(k.into(), v.into());
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
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let own = BTreeMap::from([
            ("LOG_LEVEL".to_owned(), "info".to_owned()),
            ("PATH".to_owned(), "/opt".to_owned()),
        ]);
        let env = child_env(parent, &["HTTPS_PROXY".to_owned()], &own);
        let get = |k: &str| env.get(std::ffi::OsStr::new(k)).and_then(|v| v.to_str());
        assert_eq!(get("PATH"), Some("/opt"));
        assert_eq!(get("LC_ALL"), Some("C.UTF-8"));
        assert_eq!(get("HTTPS_PROXY"), Some("http://p"));
        assert_eq!(get("LOG_LEVEL"), Some("info"));
        assert!(!env.contains_key(std::ffi::OsStr::new("AWS_SECRET_ACCESS_KEY")));
        assert!(!env.contains_key(std::ffi::OsStr::new("GITHUB_TOKEN")));
    }

    #[test]
    fn variables_that_are_not_utf8_pass_through_or_stay_out_untouched() {
        use std::os::unix::ffi::OsStringExt;
        let bad = OsString::from_vec(vec![b'x', 0xff, b'y']);
        let parent = vec![
            (OsString::from("LANG"), bad.clone()),
            (OsString::from_vec(vec![b'K', 0xfe]), OsString::from("v")),
        ];
        let env = child_env(parent, &[], &BTreeMap::new());
        assert_eq!(env.get(std::ffi::OsStr::new("LANG")), Some(&bad));
        assert_eq!(env.len(), 1);
    }
}
