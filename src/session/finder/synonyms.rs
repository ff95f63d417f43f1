//! A small hand-made table of words that agents and tool authors use for the same thing
//! ("folder" and "directory", "delete" and "remove", "ticket" and "issue"). It is general
//! vocabulary of tools and requests, not a list fitted to any benchmark: a word belongs here
//! only when most tools that say one of a group's words would be a fair answer to a request
//! that says another. A member may be a phrase ("pull request" for "PR"): a single word
//! reaches a phrase, but a phrase's words do not reach back. Groups are stemmed once, with
//! the same stemmer as the index.

use super::text::stem;
use std::collections::HashMap;
use std::sync::OnceLock;

const GROUPS: &[&[&str]] = &[
    // things
    &["file", "document", "doc"],
    &["folder", "directory", "dir"],
    &["repo", "repository"],
    &["issue", "ticket", "bug"],
    &["message", "msg", "chat"],
    &["email", "mail", "inbox"],
    &["image", "picture", "photo", "img", "screenshot"],
    &["video", "clip", "movie"],
    &["audio", "sound", "music", "song"],
    &["url", "link", "uri", "href"],
    &["website", "webpage", "site", "web"],
    &["user", "person", "people", "member", "account", "profile"],
    &["database", "db"],
    &["table", "spreadsheet", "sheet"],
    &["column", "field", "attribute"],
    &["row", "record", "entry"],
    &[
        "info",
        "information",
        "detail",
        "metadata",
        "stat",
        "statistic",
    ],
    &["error", "failure", "exception", "crash"],
    &["config", "configuration", "setting", "preference"],
    &["env", "environment"],
    &["permission", "access", "privilege"],
    &["secret", "credential", "password"],
    &["note", "memo", "memory"],
    &["calendar", "event", "meeting", "appointment"],
    &["tag", "label"],
    &["team", "group", "organization", "org"],
    &["task", "todo"],
    &["notification", "notify", "alert"],
    &["archive", "zip", "compress", "gzip", "tar"],
    &["tree", "hierarchy"],
    &["code", "source"],
    &["pr", "pull request"],
    &["mr", "merge request"],
    &["k8s", "kubernetes"],
    &["js", "javascript"],
    &["summary", "summarize", "overview"],
    &["location", "place", "address"],
    &["weather", "forecast"],
    &["price", "cost"],
    &["recent", "latest", "last", "newest"],
    &["count", "tally"],
    &["total", "sum"],
    &["time", "date", "timestamp", "clock"],
    // actions
    &["delete", "remove", "erase", "destroy", "rm", "unlink"],
    &[
        "search", "find", "lookup", "look", "locate", "query", "grep",
    ],
    &["fetch", "get", "download", "retrieve", "obtain"],
    &["read", "open", "view", "show", "display"],
    &["list", "enumerate", "ls", "browse"],
    &["create", "make", "new", "add", "generate"],
    &["update", "edit", "modify", "change", "alter"],
    &["write", "save", "store", "persist"],
    &["commit", "save"],
    &["send", "post", "publish"],
    &["reply", "respond", "answer", "comment"],
    &["run", "execute", "exec", "invoke"],
    &["start", "begin", "launch", "trigger"],
    &["stop", "halt", "kill", "terminate", "cancel", "abort"],
    &["move", "rename", "mv", "relocate"],
    &["copy", "duplicate", "clone", "cp"],
    &["close", "resolve"],
    &["upload", "attach", "attachment"],
    &["compare", "diff", "difference"],
    &["build", "compile"],
    &["deploy", "release"],
    &["install", "setup"],
    &["enable", "activate", "toggle"],
    &["disable", "deactivate", "toggle"],
    &["translate", "translation"],
    &["schedule", "plan"],
];

/// A synonym: one stem, or the stems of a phrase.
pub(super) type Synonym = Vec<String>;

/// The other members of every group that holds the single word `term` (itself a stem),
/// without duplicates.
pub(super) fn of(term: &str) -> &'static [Synonym] {
    table().get(term).map(Vec::as_slice).unwrap_or_default()
}

fn table() -> &'static HashMap<String, Vec<Synonym>> {
    static TABLE: OnceLock<HashMap<String, Vec<Synonym>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut map: HashMap<String, Vec<Synonym>> = HashMap::new();
        for group in GROUPS {
            let members: Vec<Synonym> = group
                .iter()
                .map(|m| m.split(' ').map(stem).collect())
                .collect();
            for member in &members {
                let [word] = member.as_slice() else {
                    continue;
                };
                let entry = map.entry(word.clone()).or_default();
                for other in &members {
                    if other != member && !entry.contains(other) {
                        entry.push(other.clone());
                    }
                }
            }
        }
        map
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_symmetric_and_stemmed() {
        let reaches = |from: &str, to: &str| {
            let to: Synonym = to.split(' ').map(stem).collect();
            of(&stem(from)).contains(&to)
        };
        assert!(reaches("folder", "directories"));
        assert!(reaches("directory", "folder"));
        assert!(reaches("remove", "deleting"));
        // `save` is in two groups and reaches both.
        assert!(reaches("save", "commit") && reaches("save", "write"));
        assert!(!reaches("save", "save"));
        // A word reaches a phrase; the phrase's words do not reach back.
        assert!(reaches("pr", "pull requests"));
        assert!(of(&stem("pull")).is_empty());
        assert!(of("zzz-not-a-word").is_empty());
    }
}
