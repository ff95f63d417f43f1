use super::*;

fn mem(dir: &Path) -> Memories {
    Memories::new(
        dir.join("m.jsonl"),
        MemoryLimits {
            max_key_chars: 20,
            max_content_bytes: 100,
            max_memories: 3,
        },
    )
}

#[test]
fn versions_and_conflicts() {
    let d = tempfile::tempdir().unwrap();
    let m = mem(d.path());
    let a = m
        .set(
            "db",
            "never touch prod",
            vec!["rules".into()],
            true,
            None,
            "human",
        )
        .unwrap();
    assert_eq!(a.version, 1);
    let b = m
        .set(
            "db",
            "never touch prod schema",
            vec![],
            true,
            Some(1),
            "model",
        )
        .unwrap();
    assert_eq!(b.version, 2);
    let stale = m
        .set("db", "x", vec![], false, Some(1), "model")
        .unwrap_err();
    assert_eq!(
        stale,
        MemoryError::Conflict {
            key: "db".into(),
            expected: 1,
            current: 2
        }
    );
    assert_eq!(m.get("db", Some(1)).unwrap().content, "never touch prod");
    assert_eq!(m.history("db").unwrap().len(), 2);
    m.delete("db", "human").unwrap();
    assert!(matches!(m.get("db", None), Err(MemoryError::NotFound(_))));
    assert_eq!(m.history("db").unwrap().len(), 3);
    // A new memory under a deleted key starts from if_version 0.
    assert_eq!(
        m.set("db", "again", vec![], false, Some(0), "model")
            .unwrap()
            .version,
        4
    );
}

fn record(key: &str, version: u64, content: &str) -> String {
    serde_json::to_string(&Memory {
        key: key.into(),
        version,
        content: content.into(),
        tags: vec![],
        pinned: true,
        author: "human".into(),
        at: "2026-11-30T00:00:00Z".into(),
        deleted: false,
    })
    .unwrap()
}

fn reasons(m: &Memories) -> Vec<(u64, SkipReason)> {
    m.skipped()
        .lines
        .iter()
        .map(|l| (l.line, l.reason))
        .collect()
}

#[test]
fn a_torn_tail_is_skipped_counted_and_ended_before_the_next_write() {
    let d = tempfile::tempdir().unwrap();
    let m = Memories::new(d.path().join("m.jsonl"), MemoryLimits::default());
    let torn = &record("db", 2, "cut short")[..30];
    std::fs::write(m.path(), format!("{}\n{torn}", record("db", 1, "one"))).unwrap();
    assert_eq!(m.get("db", None).unwrap().content, "one");
    assert_eq!(reasons(&m), vec![(2, SkipReason::TornTail)]);
    assert_eq!(m.pinned().len(), 1, "the primer still sees the pinned note");
    // The torn record already showed version 2: the next one is 3, never 2 again.
    let w = m.set("db", "three", vec![], true, None, "model").unwrap();
    assert_eq!(w.version, 3);
    let again = m.set("db", "four", vec![], true, None, "model").unwrap();
    assert_eq!(again.version, 4);
    let history: Vec<(u64, String)> = m
        .history("db")
        .unwrap()
        .into_iter()
        .map(|h| (h.version, h.content))
        .collect();
    assert_eq!(
        history,
        vec![(1, "one".into()), (3, "three".into()), (4, "four".into())],
        "the write after the torn line is its own line, not glued to it"
    );
    // The torn line now ends with a newline: it is still counted, now as not JSON.
    assert_eq!(reasons(&m), vec![(2, SkipReason::NotJson)]);
    let notice = m.skipped_notice().unwrap();
    assert!(
        notice.contains("1 damaged line") && notice.contains("line 2"),
        "{notice}"
    );
}

#[test]
fn a_torn_tail_cut_inside_the_version_is_still_skipped_not_fatal() {
    let d = tempfile::tempdir().unwrap();
    let m = Memories::new(d.path().join("m.jsonl"), MemoryLimits::default());
    std::fs::write(
        m.path(),
        format!("{}\n{{\"key\":\"db\",\"vers", record("db", 1, "one")),
    )
    .unwrap();
    assert_eq!(
        m.set("db", "two", vec![], false, None, "model")
            .unwrap()
            .version,
        2
    );
    assert_eq!(m.skipped().count, 1);
}

#[test]
fn invalid_bytes_mid_file_skip_one_line_and_keep_its_version() {
    let d = tempfile::tempdir().unwrap();
    let m = Memories::new(d.path().join("m.jsonl"), MemoryLimits::default());
    let mut bytes = Vec::new();
    bytes.extend_from_slice(record("db", 1, "one").as_bytes());
    bytes.push(b'\n');
    let bad = record("db", 2, "two XX");
    let at = bad.find("XX").unwrap();
    let mut bad = bad.into_bytes();
    bad[at] = 0xff;
    bad[at + 1] = 0xfe;
    bytes.extend_from_slice(&bad);
    bytes.push(b'\n');
    bytes.extend_from_slice(record("lunch", 1, "tacos").as_bytes());
    bytes.push(b'\n');
    std::fs::write(m.path(), bytes).unwrap();
    let keys: Vec<String> = m.list().unwrap().into_iter().map(|x| x.key).collect();
    assert_eq!(keys, vec!["db", "lunch"]);
    assert_eq!(reasons(&m), vec![(2, SkipReason::InvalidUtf8)]);
    assert_eq!(m.get("db", None).unwrap().content, "one");
    assert!(m.search("tacos", &[], 10).unwrap().len() == 1);
    // Version 2 was handed out once (the damaged line): the next write gets 3.
    assert_eq!(
        m.set("db", "three", vec![], false, None, "model")
            .unwrap()
            .version,
        3
    );
    assert_eq!(m.delete("db", "human").unwrap().version, 4);
}

#[test]
fn a_line_of_another_schema_is_skipped_and_counted() {
    let d = tempfile::tempdir().unwrap();
    let m = Memories::new(d.path().join("m.jsonl"), MemoryLimits::default());
    std::fs::write(
        m.path(),
        format!(
            "{}\n{{\"kind\":\"note\",\"text\":\"x\"}}\n[1,2]\nnot json at all\n\n{}\n",
            record("a", 1, "x"),
            record("b", 1, "y")
        ),
    )
    .unwrap();
    assert_eq!(m.list().unwrap().len(), 2);
    assert_eq!(
        reasons(&m),
        vec![
            (2, SkipReason::OtherSchema),
            (3, SkipReason::OtherSchema),
            (4, SkipReason::NotJson)
        ]
    );
    assert_eq!(m.skipped().count, 3);
}

#[test]
fn two_writers_during_a_torn_tail_lose_nothing_and_never_share_a_version() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("m.jsonl");
    std::fs::write(
        &path,
        format!(
            "{}\n{{\"key\":\"shared\",\"ver",
            record("shared", 1, "first")
        ),
    )
    .unwrap();
    let n = 40;
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let writers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|who| {
            let path = path.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                // Each writer opens the file on its own, as two loom processes do.
                let m = Memories::new(path, MemoryLimits::default());
                barrier.wait();
                (0..n)
                    .map(|i| {
                        m.set(
                            "shared",
                            &format!("{who} {i}"),
                            vec![],
                            false,
                            None,
                            "model",
                        )
                        .unwrap()
                        .version
                    })
                    .collect::<Vec<u64>>()
            })
        })
        .collect();
    let mut given: Vec<u64> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    given.sort_unstable();
    assert_eq!(given, (2..=2 * n + 1).collect::<Vec<_>>());
    let m = Memories::new(path, MemoryLimits::default());
    let history = m.history("shared").unwrap();
    let mut versions: Vec<u64> = history.iter().map(|h| h.version).collect();
    versions.sort_unstable();
    assert_eq!(
        versions,
        (1..=2 * n + 1).collect::<Vec<_>>(),
        "every write kept"
    );
    assert_eq!(m.skipped().count, 1, "only the torn line is skipped");
}

#[test]
fn the_file_and_its_folders_are_created_private() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("loom/projects/abc/memories.jsonl");
    let m = Memories::new(path.clone(), MemoryLimits::default());
    m.set("k", "v", vec![], false, None, "model").unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    for dir in ["loom", "loom/projects", "loom/projects/abc"] {
        assert_eq!(mode(&d.path().join(dir)), 0o700, "{dir}");
    }
    // A file an older loom left world-readable is narrowed on the next open.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    m.get("k", None).unwrap();
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn salvage_reads_only_a_complete_key_and_version() {
    assert_eq!(
        salvage_key_version(r#"{"key":"a\"b","version":12,"con"#),
        Some(("a\"b".into(), 12))
    );
    assert_eq!(salvage_key_version(r#"{"key":"a","version":12"#), None);
    assert_eq!(salvage_key_version(r#"{"key":"a","vers"#), None);
    assert_eq!(salvage_key_version(r#"{"key":"a"#), None);
    assert_eq!(salvage_key_version(r#"{"version":3,"key":"a"}"#), None);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    #[test]
    fn replay_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..4096)) {
        let r = replay_bytes(&bytes);
        let lines = bytes.split(|b| *b == b'\n').count() as u64;
        proptest::prop_assert!(r.skipped.count <= lines);
    }

    /// Whatever the file holds, a write lands on a line of its own, is read back, and
    /// gets a version above any the file shows for its key.
    #[test]
    fn a_write_after_any_damage_is_kept(
        before in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512),
        valid in 0u64..4,
    ) {
        let d = tempfile::tempdir().unwrap();
        let m = Memories::new(d.path().join("m.jsonl"), MemoryLimits::default());
        let mut bytes = Vec::new();
        for v in 1..=valid {
            bytes.extend_from_slice(record("k", v, "old").as_bytes());
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(&before);
        std::fs::write(m.path(), &bytes).unwrap();
        let w = m.set("k", "new", vec![], false, None, "model").unwrap();
        proptest::prop_assert!(w.version > valid);
        let got = m.get("k", None).unwrap();
        proptest::prop_assert_eq!(got.content, "new");
        proptest::prop_assert_eq!(got.version, w.version);
    }
}

#[test]
fn limits_are_explained() {
    let d = tempfile::tempdir().unwrap();
    let m = mem(d.path());
    assert!(matches!(
        m.set(&"k".repeat(21), "c", vec![], false, None, "model"),
        Err(MemoryError::Limit(_))
    ));
    assert!(matches!(
        m.set("k", &"c".repeat(101), vec![], false, None, "model"),
        Err(MemoryError::Limit(_))
    ));
    for k in ["a", "b", "c"] {
        m.set(k, "x", vec![], false, None, "model").unwrap();
    }
    assert!(matches!(
        m.set("d", "x", vec![], false, None, "model"),
        Err(MemoryError::Limit(_))
    ));
    // Updating an existing one is still fine.
    assert!(m.set("a", "y", vec![], false, None, "model").is_ok());
}

#[test]
fn search_ranks_exact_key_then_terms() {
    let d = tempfile::tempdir().unwrap();
    let m = Memories::new(d.path().join("m.jsonl"), MemoryLimits::default());
    m.set(
        "deploy",
        "how we ship",
        vec!["ops".into()],
        false,
        None,
        "human",
    )
    .unwrap();
    m.set(
        "deploy checklist",
        "deploy steps: build, test, deploy",
        vec![],
        false,
        None,
        "human",
    )
    .unwrap();
    m.set(
        "lunch",
        "tacos on friday",
        vec!["team".into()],
        false,
        None,
        "human",
    )
    .unwrap();
    let hits = m.search("deploy", &[], 10).unwrap();
    assert_eq!(hits[0].0.key, "deploy");
    assert_eq!(hits[1].0.key, "deploy checklist");
    assert_eq!(hits.len(), 2);
    let tagged = m.search("", &["team".into()], 10).unwrap();
    assert_eq!(tagged.len(), 1);
    assert_eq!(tagged[0].0.key, "lunch");
}

#[test]
fn primer_stays_within_budget_and_says_what_it_left_out() {
    let pinned: Vec<Memory> = (0..50)
        .map(|i| Memory {
            key: format!("note{i}"),
            version: 1,
            content: "remember this important fact about the system ".repeat(3),
            tags: vec![],
            pinned: true,
            author: "human".into(),
            at: String::new(),
            deleted: false,
        })
        .collect();
    let p = primer(&pinned, &[("orders_1".into(), 100)], 300);
    assert!(crate::intercept::tokens::estimate(&p) <= 360, "{p}");
    assert!(p.contains("more left out"), "{p}");
}

#[test]
fn every_write_and_delete_is_reported_and_a_refused_one_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memories::new(dir.path().join("m.jsonl"), MemoryLimits::default());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    m.report_changes(std::sync::Arc::new(move |c| s.lock().unwrap().push(c)));
    m.set("db", "one", vec![], false, None, "human").unwrap();
    assert!(m.set("db", "two", vec![], false, Some(7), "model").is_err());
    m.delete("db", "model").unwrap();
    let key = |k: &str| crate::store::CatalogChange::Memory { key: k.into() };
    assert_eq!(*seen.lock().unwrap(), vec![key("db"), key("db")]);
}

/// A writer who does not mention the pin or the tags never takes them away; one who does,
/// does. A key with a control character is refused.
#[test]
fn an_unmentioned_pin_and_tags_stay() {
    let d = tempfile::tempdir().unwrap();
    let m = mem(d.path());
    m.set("db", "v1", vec!["rules".into()], true, None, "human")
        .unwrap();
    let kept = m
        .set_keeping("db", "v2", None, None, Some(1), "model")
        .unwrap();
    assert!(kept.pinned);
    assert_eq!(kept.tags, vec!["rules".to_owned()]);
    let unpinned = m
        .set_keeping("db", "v3", Some(vec![]), Some(false), None, "model")
        .unwrap();
    assert!(!unpinned.pinned && unpinned.tags.is_empty());
    let fresh = m
        .set_keeping("new", "x", None, None, None, "model")
        .unwrap();
    assert!(!fresh.pinned && fresh.tags.is_empty());
    for key in ["a\nb", "\u{0}nul", "tab\there"] {
        assert!(
            matches!(
                m.set_keeping(key, "x", None, None, None, "model"),
                Err(MemoryError::Limit(_))
            ),
            "{key:?}"
        );
    }
}
