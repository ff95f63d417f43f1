//! Exposed names: how a downstream tool or prompt is called upstream.
//!
//! `<server>_<original>` with characters outside `[A-Za-z0-9_-]` turned into `_`, at most 64
//! characters (longer names are cut and end in a short hash of the original), and a numeric
//! suffix on collision, with the limit checked again after it. A name is allocated once per
//! session and never re-pointed: routing is this map, never a split on `_`. With bare names, a
//! name that two servers offer at start is never given to the one listed first: both are
//! qualified ([`bare_clashes`]), so a server cannot take another's tool name by its place in
//! the config.

use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};

pub const MAX_NAME: usize = 64;
pub const RESERVED_PREFIX: &str = "loom_";

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    pub server: String,
    pub original: String,
}

#[derive(Debug, Default)]
pub struct NameRegistry {
    by_name: HashMap<String, Target>,
    by_target: HashMap<Target, String>,
    /// Qualified spellings accepted as aliases when bare names are in use.
    aliases: HashMap<String, Target>,
    /// Bare names more than one server offers: no server gets them.
    contested: HashSet<String>,
}

/// The bare name `original` would have.
fn bare_name_of(original: &str) -> String {
    fit(&sanitize(original), original, 0)
}

/// A bare name that more than one server offers, and the servers that offer it (in the order
/// given, each once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BareClash {
    pub name: String,
    pub servers: Vec<String>,
    /// A prompt's name, not a tool's.
    pub prompt: bool,
}

impl BareClash {
    /// What a person reads of it (the log, `loom check`), with the names each server's tool
    /// gets instead.
    pub fn describe(&self) -> String {
        let kind = if self.prompt { "prompt" } else { "tool" };
        let qualified: Vec<String> = self
            .servers
            .iter()
            .map(|s| format!("`{}`", sanitize(&format!("{s}_{}", self.name))))
            .collect();
        format!(
            "{kind} name `{}` is offered by servers {}; with naming = \"bare\" neither keeps it \
             (which one would depends only on the config's order), so they are {}",
            self.name,
            self.servers.join(", "),
            qualified.join(" and ")
        )
    }
}

/// The bare names that more than one server offers, from each server's original names
/// (`(server, names)`), by name.
pub fn bare_clashes<'a>(
    offered: impl IntoIterator<Item = (&'a str, Vec<&'a str>)>,
) -> Vec<BareClash> {
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (server, names) in offered {
        for original in names {
            let servers = by_name.entry(bare_name_of(original)).or_default();
            if !servers.iter().any(|s| s == server) {
                servers.push(server.to_owned());
            }
        }
    }
    by_name
        .into_iter()
        .filter(|(name, servers)| servers.len() > 1 && !name.is_empty())
        .map(|(name, servers)| BareClash {
            name,
            servers,
            prompt: false,
        })
        .collect()
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn short_hash(s: &str) -> String {
    let digest = Sha256::digest(s.as_bytes());
    digest.iter().take(4).map(|b| format!("{b:02x}")).collect()
}

/// Fits `base` into `MAX_NAME - reserve` characters, marking a cut with a hash of `original`.
fn fit(base: &str, original: &str, reserve: usize) -> String {
    let room = MAX_NAME - reserve;
    if base.len() <= room {
        return base.to_owned();
    }
    let hash = short_hash(original);
    let keep = room - hash.len() - 1;
    format!("{}_{hash}", &base[..keep])
}

impl NameRegistry {
    /// Keeps `name` from being given out bare, to any server.
    pub fn contest(&mut self, name: &str) {
        self.contested.insert(name.to_owned());
    }

    /// The exposed name for `target`, allocating one the first time. `bare` asks for the
    /// original name when it is free.
    pub fn allocate(&mut self, target: &Target, bare: bool) -> String {
        if let Some(name) = self.by_target.get(target) {
            return name.clone();
        }
        let qualified = sanitize(&format!("{}_{}", target.server, target.original));
        let bare_name = bare_name_of(&target.original);
        let bare_free = !bare_name.is_empty()
            && !self.contested.contains(&bare_name)
            && !bare_name.starts_with(RESERVED_PREFIX)
            && bare_name != "loom"
            && !self.by_name.contains_key(&bare_name)
            && !self.aliases.contains_key(&bare_name);
        let candidate = if bare && bare_free {
            bare_name
        } else {
            qualified.clone()
        };
        let mut name = fit(&candidate, &target.original, 0);
        let mut n = 2;
        while self.by_name.contains_key(&name)
            || self.aliases.get(&name).is_some_and(|t| t != target)
        {
            let suffix = format!("_{n}");
            name = format!(
                "{}{suffix}",
                fit(&candidate, &target.original, suffix.len())
            );
            n += 1;
        }
        if bare && name != qualified {
            let alias = fit(&qualified, &target.original, 0);
            if !self.by_name.contains_key(&alias) {
                self.aliases.insert(alias, target.clone());
            }
        }
        self.by_name.insert(name.clone(), target.clone());
        self.by_target.insert(target.clone(), name.clone());
        name
    }

    pub fn resolve(&self, exposed: &str) -> Option<&Target> {
        self.by_name
            .get(exposed)
            .or_else(|| self.aliases.get(exposed))
    }

    pub fn name_of(&self, target: &Target) -> Option<&str> {
        self.by_target.get(target).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(server: &str, original: &str) -> Target {
        Target {
            server: server.into(),
            original: original.into(),
        }
    }

    #[test]
    fn qualified_sanitized_and_stable() {
        let mut r = NameRegistry::default();
        assert_eq!(r.allocate(&t("fs", "read_file"), false), "fs_read_file");
        assert_eq!(
            r.allocate(&t("fs", "get.weather/now"), false),
            "fs_get_weather_now"
        );
        assert_eq!(r.allocate(&t("fs", "größe"), false), "fs_gr__e");
        assert_eq!(r.allocate(&t("fs", "read_file"), false), "fs_read_file");
        assert_eq!(r.resolve("fs_read_file"), Some(&t("fs", "read_file")));
    }

    #[test]
    fn a_bare_name_two_servers_offer_goes_to_neither() {
        let clashes = bare_clashes([
            ("evil", vec!["cancel_order", "ping"]),
            ("shop", vec!["cancel_order", "list_orders"]),
            ("other", vec!["cancel.order"]),
        ]);
        assert_eq!(
            clashes,
            vec![BareClash {
                name: "cancel_order".into(),
                servers: vec!["evil".into(), "shop".into(), "other".into()],
                prompt: false,
            }]
        );
        assert!(clashes[0].describe().contains("`evil_cancel_order`"));
        let mut r = NameRegistry::default();
        for c in &clashes {
            r.contest(&c.name);
        }
        // Whichever is allocated first, neither is bare; names no one shares stay bare.
        assert_eq!(
            r.allocate(&t("evil", "cancel_order"), true),
            "evil_cancel_order"
        );
        assert_eq!(r.allocate(&t("evil", "ping"), true), "ping");
        assert_eq!(
            r.allocate(&t("shop", "cancel_order"), true),
            "shop_cancel_order"
        );
        assert_eq!(r.allocate(&t("shop", "list_orders"), true), "list_orders");
        assert_eq!(r.resolve("cancel_order"), None);
        // One server listing a name twice is no clash.
        assert!(bare_clashes([("a", vec!["x", "x"])]).is_empty());
    }

    #[test]
    fn clashes_get_suffixes_and_never_repoint() {
        let mut r = NameRegistry::default();
        let a = r.allocate(&t("a", "b_c"), false);
        let b = r.allocate(&t("a_b", "c"), false);
        assert_eq!(a, "a_b_c");
        assert_eq!(b, "a_b_c_2");
        assert_eq!(r.resolve("a_b_c").unwrap().server, "a");
        assert_eq!(r.resolve("a_b_c_2").unwrap().server, "a_b");
    }

    #[test]
    fn long_names_are_cut_with_a_hash_and_stay_within_limit() {
        let mut r = NameRegistry::default();
        let long1 = "x".repeat(100);
        let long2 = format!("{}y", "x".repeat(99));
        let n1 = r.allocate(&t("srv", &long1), false);
        let n2 = r.allocate(&t("srv", &long2), false);
        assert_eq!(n1.len(), MAX_NAME);
        assert_eq!(n2.len(), MAX_NAME);
        assert_ne!(n1, n2);
        // Same prefix and, by construction here, forced collision on the cut part:
        let mut r2 = NameRegistry::default();
        r2.by_name
            .insert(fit(&format!("srv_{long1}"), &long1, 0), t("other", "z"));
        let n3 = r2.allocate(&t("srv", &long1), false);
        assert!(n3.len() <= MAX_NAME, "{n3}");
        assert!(n3.ends_with("_2"));
    }

    #[test]
    fn bare_names_when_free() {
        let mut r = NameRegistry::default();
        assert_eq!(r.allocate(&t("a", "echo"), true), "echo");
        assert_eq!(r.allocate(&t("b", "echo"), true), "b_echo");
        assert_eq!(r.resolve("a_echo"), Some(&t("a", "echo")));
        assert_eq!(r.allocate(&t("a", "loom_query"), true), "a_loom_query");
    }
}
