//! Tool-name globs, compiled once when the config is read: `*` any run, `?` one character,
//! `[abc]` a class, `{a,b}` alternatives, `\` escapes. A glob that does not compile is a config
//! error naming the field, never a pattern that silently matches nothing.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// A list of globs over tool names and the compiled set that matches them.
#[derive(Debug, Clone)]
pub struct Globs {
    patterns: Vec<String>,
    set: GlobSet,
}

impl Default for Globs {
    fn default() -> Self {
        Globs {
            patterns: Vec::new(),
            set: GlobSet::empty(),
        }
    }
}

/// A glob that does not compile: which one (by index) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{pattern}` is not a valid glob: {reason}")]
pub struct GlobError {
    pub index: usize,
    pub pattern: String,
    pub reason: String,
}

impl Globs {
    pub fn new<S: Into<String>>(patterns: impl IntoIterator<Item = S>) -> Result<Globs, GlobError> {
        let patterns: Vec<String> = patterns.into_iter().map(Into::into).collect();
        let mut set = GlobSetBuilder::new();
        for (index, pattern) in patterns.iter().enumerate() {
            let glob = GlobBuilder::new(pattern)
                .literal_separator(false)
                .backslash_escape(true)
                .build()
                .map_err(|e| GlobError {
                    index,
                    pattern: pattern.clone(),
                    reason: e.kind().to_string(),
                })?;
            set.add(glob);
        }
        let set = set.build().map_err(|e| GlobError {
            index: 0,
            pattern: patterns.join(", "),
            reason: e.to_string(),
        })?;
        Ok(Globs { patterns, set })
    }

    /// Whether any glob matches the whole name.
    pub fn matches(&self, name: &str) -> bool {
        !self.patterns.is_empty() && self.set.is_match(name)
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The globs as written.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

/// One glob against one name; a glob that does not compile matches nothing.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    Globs::new([pattern]).is_ok_and(|g| g.matches(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn classes_alternatives_and_escapes() {
        let g = Globs::new(["db_{read,list}_*", "fs_[ab]?", r"lit\*"]).unwrap();
        assert!(g.matches("db_read_rows"));
        assert!(g.matches("db_list_tables"));
        assert!(!g.matches("db_write_rows"));
        assert!(g.matches("fs_ax"));
        assert!(!g.matches("fs_cx"));
        assert!(g.matches("lit*"));
        assert!(!g.matches("litx"));
        assert!(Globs::new(["*"]).unwrap().matches("with/slash"));
        assert!(!Globs::default().matches(""));
    }

    #[test]
    fn a_broken_glob_is_an_error_naming_it() {
        let e = Globs::new(["ok_*", "bad_[", "x"]).unwrap_err();
        assert_eq!(e.index, 1);
        assert!(e.to_string().contains("`bad_[`"), "{e}");
    }

    proptest! {
        /// Compiling any text and matching any name never panics.
        #[test]
        fn any_pattern_any_name(pattern in "\\PC{0,24}", name in "\\PC{0,24}") {
            if let Ok(g) = Globs::new([pattern.as_str()]) {
                let _ = g.matches(&name);
            }
        }

        /// A pattern without special characters matches exactly itself.
        #[test]
        fn plain_names_match_only_themselves(a in "[a-z_]{0,12}", b in "[a-z_]{0,12}") {
            prop_assert_eq!(glob_match(&a, &b), a == b);
        }
    }
}
