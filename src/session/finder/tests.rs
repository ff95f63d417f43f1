use super::*;
use proptest::prelude::*;
use serde_json::json;
use std::path::Path;

fn doc(server: &str, tool: Value) -> ToolDoc {
    let name = tool["name"].as_str().unwrap_or_default().to_owned();
    ToolDoc::from_tool(server, &format!("{server}_{name}"), &tool)
}

fn small() -> Finder {
    Finder::new(vec![
        doc(
            "fs",
            json!({"name": "read_file", "description": "Read the contents of a file.",
                   "inputSchema": {"properties": {"path": {"description": "Path of the file"}}}}),
        ),
        doc(
            "fs",
            json!({"name": "delete_directory", "description": "Remove a folder and everything in it."}),
        ),
        doc(
            "gh",
            json!({"name": "createIssue", "title": "Open a ticket",
                   "description": "Create a new issue in a repository."}),
        ),
        doc(
            "gh",
            json!({"name": "list_issues", "description": "List issues of a repository."}),
        ),
        doc(
            "db",
            json!({"name": "run_query", "description": "Execute SQL against the configured database.",
                   "inputSchema": {"properties": {"options": {"type": "object",
                       "properties": {"timeoutMs": {"description": "Statement timeout"}}}}}}),
        ),
    ])
}

fn names(f: &Finder, hits: &[Hit]) -> Vec<String> {
    hits.iter()
        .map(|h| f.docs()[h.index].exposed.clone())
        .collect()
}

fn top(f: &Finder, query: &str) -> String {
    let hits = f.search(query, 1, None, &|_| 0);
    names(f, &hits).pop().unwrap_or_default()
}

#[test]
fn from_tool_reads_title_params_and_nested_params() {
    let f = small();
    let d = &f.docs()[4];
    assert_eq!(d.original, "run_query");
    assert_eq!(d.exposed, "db_run_query");
    let params: Vec<&str> = d.params.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(params, ["options", "timeoutMs"]);
    assert_eq!(f.docs()[2].title.as_deref(), Some("Open a ticket"));
    let annotated = ToolDoc::from_tool("s", "s_t", &json!({"annotations": {"title": "T"}}));
    assert_eq!(annotated.title.as_deref(), Some("T"));
    assert_eq!(annotated.original, "");
    let junk = ToolDoc::from_tool("s", "s_t", &json!([1, 2]));
    assert!(junk.params.is_empty() && junk.description.is_empty());
}

/// `small()` ranked by words alone, to test what the lexical index reaches.
fn small_lexical() -> Finder {
    let tuning = Tuning {
        meaning: 0.0,
        meaning_floor: f32::INFINITY,
        ..Tuning::DEFAULT
    };
    Finder::with_tuning(small().docs().to_vec(), tuning)
}

#[test]
fn words_synonyms_prefixes_and_params_all_find_their_tool() {
    let f = small_lexical();
    assert_eq!(top(&f, "read a file"), "fs_read_file");
    // Synonyms: folder → directory, remove → delete, ticket → issue.
    assert_eq!(top(&f, "remove the tmp directory"), "fs_delete_directory");
    assert_eq!(top(&f, "erase a folder"), "fs_delete_directory");
    assert_eq!(top(&f, "raise a new bug"), "gh_createIssue");
    // A partial word reaches the whole one; a longer word reaches its abbreviation.
    assert_eq!(top(&f, "repo iss"), "gh_list_issues");
    assert_eq!(top(&f, "configuration database"), "db_run_query");
    // A nested parameter name is indexed.
    assert_eq!(top(&f, "timeout"), "db_run_query");
    assert!(f.search("zebra quantum", 5, None, &|_| 0).is_empty());
}

#[test]
fn server_filter_and_limit_hold() {
    let f = small();
    let hits = f.search("issue", 10, Some("gh"), &|_| 0);
    assert_eq!(names(&f, &hits), ["gh_list_issues", "gh_createIssue"]);
    assert!(f.search("issue", 10, Some("fs"), &|_| 0).is_empty());
    assert_eq!(f.search("issue", 1, None, &|_| 0).len(), 1);
    assert!(f.search("issue", 0, None, &|_| 0).is_empty());
    // No meaningful word: the server's tools, most used first.
    let used = |name: &str| u32::from(name == "gh_createIssue");
    let hits = f.search("the of", 10, Some("gh"), &used);
    assert_eq!(names(&f, &hits), ["gh_createIssue", "gh_list_issues"]);
}

#[test]
fn use_breaks_near_ties_but_never_beats_a_clearly_better_match() {
    // Both issue tools match "issues repository" about equally in words; use decides.
    let f = small_lexical();
    let plain = names(&f, &f.search("repository issues", 2, None, &|_| 0));
    assert!(plain.iter().all(|n| n.contains("ssue")), "{plain:?}");
    let heavy = |name: &str| if name == plain[1] { 1000 } else { 0 };
    let boosted = f.search("repository issues", 2, None, &heavy);
    assert_eq!(names(&f, &boosted)[0], plain[1]);
    // "read a file" is clearly read_file; heavy use of another tool does not change that.
    let f = small();
    let heavy = |name: &str| {
        if name == "fs_delete_directory" {
            1000
        } else {
            0
        }
    };
    assert_eq!(
        names(&f, &f.search("read a file", 1, None, &heavy)),
        ["fs_read_file"]
    );
}

#[test]
fn meaning_finds_a_tool_that_shares_no_word_with_the_request() {
    let f = small();
    let lexical = small_lexical();
    let request = "how many rows does the orders table hold";
    let words = names(&lexical, &lexical.search(request, 5, None, &|_| 0));
    assert!(words.is_empty(), "{request}: {words:?}");
    assert_eq!(top(&f, request), "db_run_query", "{request}");
    // A path says a file is wanted, though no word of the request is the tool's.
    assert_eq!(top(&lexical, "tell me what notes.md says"), "fs_read_file");
    // Nothing close in words or meaning: no hits rather than the least bad.
    assert!(f.search("zebra quantum", 5, None, &|_| 0).is_empty());
}

proptest! {
    #[test]
    fn no_query_panics_and_scores_are_finite(query in any::<String>(), limit in 0usize..8) {
        let f = small();
        let hits = f.search(&query, limit, None, &|_| 3);
        prop_assert!(hits.len() <= limit);
        prop_assert!(hits.iter().all(|h| h.score.is_finite() && h.index < f.docs().len()));
    }

    #[test]
    fn any_tool_text_indexes_and_searches(name in any::<String>(), description in any::<String>(),
                                          query in "\\PC{0,40}") {
        let tool = json!({"name": name, "description": description,
                          "inputSchema": {"required": [name.clone(), 7],
                                          "properties": {name.clone(): {"description": description}}}});
        // A second tool of the server whose text may name the first or give what it requires
        // (`feeders`), from the same hostile text.
        let other = json!({"name": format!("{name}_x"), "description": format!("{description} {name}"),
                           "inputSchema": {"required": [description.clone()]}});
        let f = Finder::new(vec![doc("s", tool), doc("s", other), ToolDoc::from_tool("", "", &Value::Null)]);
        let hits = f.search(&query, 5, None, &|_| u32::MAX);
        prop_assert!(hits.iter().all(|h| h.score.is_finite() && h.index < f.docs().len()));
        let mut seen: Vec<usize> = hits.iter().map(|h| h.index).collect();
        seen.sort_unstable();
        seen.dedup();
        prop_assert_eq!(seen.len(), hits.len(), "a tool placed twice");
        let own = f.search(&name, 5, None, &|_| 0);
        prop_assert!(own.iter().all(|h| h.score.is_finite()));
    }
}

/// The corpus of real tool listings and tasks the finder is judged on.
pub(super) fn corpus_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tool_corpus")
}

/// Loads every `<server>.json` listing as loom would expose it, and the tasks as
/// (task, exposed name of the expected tool).
pub(super) fn load_corpus(dir: &Path) -> (Vec<ToolDoc>, Vec<(String, String)>) {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("the tool corpus at {}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut docs = Vec::new();
    for file in files {
        let listing: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).expect("listing"))
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let server = listing["server"].as_str().expect("server").to_owned();
        for tool in listing["tools"].as_array().expect("tools") {
            let name = tool["name"].as_str().expect("tool name");
            docs.push(ToolDoc::from_tool(
                &server,
                &format!("{server}_{name}"),
                tool,
            ));
        }
    }
    let tasks = std::fs::read_to_string(dir.join("tasks.jsonl")).expect("tasks.jsonl");
    let tasks = tasks
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let t: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"));
            let (server, tool) = (
                t["server"].as_str().expect("server"),
                t["tool"].as_str().expect("tool"),
            );
            (
                t["task"].as_str().expect("task").to_owned(),
                format!("{server}_{tool}"),
            )
        })
        .collect();
    (docs, tasks)
}

/// The corpus's README: filesystem `read_file` is the deprecated twin of `read_text_file`,
/// so either answers a `read_text_file` task.
pub(super) fn equivalent(got: &str, expected: &str) -> bool {
    (got, expected) == ("filesystem_read_file", "filesystem_read_text_file")
}

/// recall@1, recall@5 and MRR of `f` over `tasks`, searching every tool of every server;
/// with `show`, the tasks whose tool is not in the top five go to stderr.
pub(super) fn evaluate(f: &Finder, tasks: &[(String, String)], show: bool) -> (f64, f64, f64) {
    let (mut at1, mut at5, mut rr) = (0usize, 0usize, 0f64);
    for (task, expected) in tasks {
        let hits = f.search(task, f.docs().len(), None, &|_| 0);
        let rank = hits.iter().position(|h| {
            let got = f.docs()[h.index].exposed.as_str();
            got == expected || equivalent(got, expected)
        });
        if let Some(r) = rank {
            at1 += usize::from(r == 0);
            at5 += usize::from(r < 5);
            rr += 1.0 / (r as f64 + 1.0);
        }
        if show && rank.is_none_or(|r| r >= 5) {
            let got = names(f, &hits[..hits.len().min(3)]);
            eprintln!("miss ({rank:?}): {task:?} wants {expected}, got {got:?}");
        }
    }
    let n = tasks.len().max(1) as f64;
    (at1 as f64 / n, at5 as f64 / n, rr / n)
}

#[test]
fn retrieval_quality_on_the_tool_corpus() {
    let (docs, tasks) = load_corpus(&corpus_dir());
    let f = Finder::new(docs);
    for (_, expected) in &tasks {
        assert!(
            f.docs().iter().any(|d| &d.exposed == expected),
            "task names a tool the corpus does not list: {expected}"
        );
    }
    let (r1, r5, mrr) = evaluate(&f, &tasks, true);
    eprintln!(
        "tool corpus: {} tools, {} tasks: recall@1 {r1:.3}, recall@5 {r5:.3}, MRR {mrr:.3}",
        f.docs().len(),
        tasks.len()
    );
    assert!(tasks.len() >= 20, "too few tasks to judge");
    // Reached: recall@1 0.512, recall@5 0.811, MRR 0.641 (2026-12-01; words alone gave 0.472,
    // 0.767, 0.600). The goal is recall@5 0.95; the corpus's tasks avoid the words of the tools'
    // names and descriptions on purpose. Static word-piece vectors distilled from MiniLM bridge
    // some paraphrases (the full MiniLM model joined with words reaches about 0.87 in Python, the
    // ceiling of this approach). These floors catch a regression; raise them with the ranking.
    // With paths, named servers and server lifts (issue 27): 0.535, 0.844, 0.664.
    assert!(r1 >= 0.51, "recall@1 {r1:.3}");
    assert!(r5 >= 0.82, "recall@5 {r5:.3}");
    assert!(mrr >= 0.64, "MRR {mrr:.3}");
}

/// Measures alternative tunings on the even tasks (to choose on) and the odd ones (to check
/// on). `cargo test --lib finder::tests::tune -- --ignored --nocapture`
#[test]
#[ignore]
fn tune() {
    let (docs, tasks) = load_corpus(&corpus_dir());
    let even: Vec<_> = tasks.iter().step_by(2).cloned().collect();
    let odd: Vec<_> = tasks.iter().skip(1).step_by(2).cloned().collect();
    let base = Tuning::DEFAULT;
    let mut variants: Vec<(String, Tuning)> = vec![("default".into(), base)];
    for (label, change) in tune_variants() {
        let mut t = base;
        change(&mut t);
        variants.push((label.into(), t));
    }
    for (label, t) in variants {
        let f = Finder::with_tuning(docs.clone(), t);
        let (e1, e5, em) = evaluate(&f, &even, false);
        let (o1, o5, om) = evaluate(&f, &odd, false);
        eprintln!("{label:<28} even {e1:.3} {e5:.3} {em:.3}   odd {o1:.3} {o5:.3} {om:.3}");
    }
}

pub(super) type Change = fn(&mut Tuning);

fn tune_variants() -> Vec<(&'static str, Change)> {
    vec![
        ("name 3", |t| t.weight[0] = 3.0),
        ("name 1.5", |t| t.weight[0] = 1.5),
        ("server 1", |t| t.weight[5] = 1.0),
        ("params 0.6/0.3", |t| {
            t.weight[3..5].copy_from_slice(&[0.6, 0.3])
        }),
        ("k1 0.8", |t| t.k1 = 0.8),
        ("k1 1.6", |t| t.k1 = 1.6),
        ("quoted 1", |t| t.quoted = 1.0),
        ("synonym 0.4", |t| t.synonym = 0.4),
        ("synonym 0.8", |t| t.synonym = 0.8),
        ("no prefixes", |t| {
            t.longer = 0.0;
            t.shorter = 0.0
        }),
        ("no meaning", |t| t.meaning = 0.0),
        ("meaning 0.5", |t| t.meaning = 0.5),
        ("meaning 0.75", |t| t.meaning = 0.75),
        ("meaning 1.5", |t| t.meaning = 1.5),
        ("meaning 1", |t| t.meaning = 1.0),
        ("meaning 3", |t| t.meaning = 3.0),
        ("meaning floor 0.3", |t| t.meaning_floor = 0.3),
        ("meaning floor 0.4", |t| t.meaning_floor = 0.4),
    ]
}

#[test]
fn a_rebuild_reads_only_changed_tools_and_ranks_as_a_fresh_build() {
    let (docs, tasks) = load_corpus(&corpus_dir());
    let old = Finder::new(docs.clone());
    let mut changed = docs;
    for d in changed.iter_mut().filter(|d| d.server == "github") {
        d.description.push_str(" (changed)");
    }
    let rebuilt = old.rebuilt(changed.clone());
    let fresh = Finder::new(changed);
    let reused = (0..rebuilt.docs.len())
        .filter(|&i| {
            old.prepared
                .iter()
                .any(|p| Arc::ptr_eq(p, &rebuilt.prepared[i]))
        })
        .count();
    let github = rebuilt.docs.iter().filter(|d| d.server == "github").count();
    assert_eq!(
        reused,
        rebuilt.docs.len() - github,
        "only github's tools are read again"
    );
    for (task, _) in tasks.iter().take(40) {
        let a = rebuilt.search(task, 10, None, &|_| 0);
        let b = fresh.search(task, 10, None, &|_| 0);
        assert_eq!(a, b, "{task}");
    }
}

#[test]
fn search_all_puts_named_tools_first_and_fuses_phrasings() {
    let f = small();
    let none = |_: &str| 0;
    // Named tools first, in the order named, then the ranking of the words.
    let hits = f.search_all(
        &["fs_delete_directory, gh_list_issues and a file"],
        3,
        None,
        &none,
    );
    assert_eq!(
        names(&f, &hits),
        ["fs_delete_directory", "gh_list_issues", "fs_read_file"]
    );
    // A name of another server is not named under `server`.
    let hits = f.search_all(&["gh_list_issues"], 3, Some("fs"), &none);
    assert!(hits.is_empty(), "{:?}", names(&f, &hits));
    // One phrasing ranks as `search`.
    let one = f.search_all(&["open a ticket"], 5, None, &none);
    assert_eq!(
        names(&f, &one),
        names(&f, &f.search("open a ticket", 5, None, &none))
    );
    // Two phrasings: the tool both find rises over one only the first puts high.
    let both = f.search_all(&["repository", "open a ticket"], 2, None, &none);
    assert_eq!(names(&f, &both)[0], "gh_createIssue");
    // Phrasings without a word to rank by give nothing but named tools.
    assert!(f.search_all(&["the", ""], 5, None, &none).is_empty());
}

proptest! {
    #[test]
    fn search_all_never_panics_and_keeps_to_its_limit(
        queries in proptest::collection::vec(".{0,40}", 0..5),
        limit in 0usize..8,
    ) {
        let f = small();
        let qs: Vec<&str> = queries.iter().map(String::as_str).collect();
        let hits = f.search_all(&qs, limit, None, &|_| 0);
        prop_assert!(hits.len() <= limit);
        let mut seen: Vec<usize> = hits.iter().map(|h| h.index).collect();
        seen.sort_unstable();
        seen.dedup();
        prop_assert_eq!(seen.len(), hits.len());
    }
}

#[test]
fn explain_gives_the_parts_of_each_score_and_the_words_matched() {
    let f = small();
    let none = |_: &str| 0;
    let query = "read the contents of a file";
    let hits = f.search(query, 5, None, &none);
    let docs: Vec<usize> = hits.iter().map(|h| h.index).collect();
    let whys = f.explain(&[query], None, &none, &docs);
    let first = whys[0].as_ref().expect("the best hit is explained");
    assert_eq!(f.docs()[docs[0]].exposed, "fs_read_file");
    assert!(
        (first.score - hits[0].score).abs() < 1e-4,
        "{first:?} vs {:?}",
        hits[0]
    );
    assert!(
        (first.words - 1.0).abs() < 1e-6,
        "the best textual match: {first:?}"
    );
    assert!(first.matched.iter().any(|w| w == "file"), "{first:?}");
    assert!(first.matched.iter().any(|w| w == "contents"), "{first:?}");
    // The parts add up to the score (no use: the factor is 1).
    let sum = (first.words + first.meaning) * first.used + first.server + first.named;
    assert!((sum - first.score).abs() < 1e-4, "{first:?}");
    // A phrasing without a word to rank by gives no reason.
    let unrelated = f
        .docs()
        .iter()
        .position(|d| d.exposed == "gh_createIssue")
        .unwrap();
    assert!(f.explain(&["the", ""], None, &none, &[unrelated])[0].is_none());
    // Use shows as its factor.
    let used = |t: &str| u32::from(t == "fs_read_file") * 3;
    let why = f.explain(&[query], None, &used, &docs[..1]);
    assert!(why[0].as_ref().unwrap().used > 1.0);
}

#[test]
fn a_find_explained_ranks_as_without_and_explains_each_hit() {
    let f = small();
    let none = |_: &str| 0;
    for queries in [
        vec!["read the contents of a file"],
        vec!["open a ticket", "repository issue"],
        vec!["gh_list_issues and a file"],
    ] {
        let plain = f.search_all(&queries, 4, None, &none);
        let (hits, whys) = f.search_all_explained(&queries, 4, None, &none);
        assert_eq!(plain, hits, "{queries:?}");
        assert_eq!(whys.len(), hits.len());
        assert_eq!(
            whys,
            f.explain(
                &queries,
                None,
                &none,
                &hits.iter().map(|h| h.index).collect::<Vec<_>>()
            )
        );
    }
}

#[test]
fn a_tool_described_in_chinese_is_found_in_english_and_in_chinese() {
    let f = Finder::new(vec![
        doc(
            "trends",
            json!({"name": "get-weibo-list", "description": "获取微博热搜榜，包含时事热点和娱乐新闻"}),
        ),
        doc(
            "trends",
            json!({"name": "get-weread-list", "description": "获取微信读书排行榜，包含热门小说和畅销书籍"}),
        ),
        doc(
            "fs",
            json!({"name": "read_file", "description": "Read the contents of a file."}),
        ),
        doc(
            "shop",
            json!({"name": "search_products", "description": "Search products by keyword."}),
        ),
    ]);
    assert_eq!(
        top(&f, "what is trending on weibo today"),
        "trends_get-weibo-list"
    );
    assert_eq!(
        top(&f, "best selling novels and books ranking"),
        "trends_get-weread-list"
    );
    assert_eq!(top(&f, "微博热搜"), "trends_get-weibo-list");
    assert_eq!(top(&f, "畅销书籍"), "trends_get-weread-list");
    // Chinese for a tool described in English.
    assert_eq!(top(&f, "读取文件"), "fs_read_file");
}

/// A finder of `docs` and a server of twelve tools that match the rest of a request about
/// train tickets better than any of them.
fn with_rail(mut docs: Vec<ToolDoc>) -> Finder {
    for i in 0..12 {
        docs.push(doc(
            "rail",
            json!({"name": format!("train_tickets_{i}"),
                   "description": format!("Search train tickets and timetables between stations, variant {i}.")}),
        ));
    }
    Finder::new(docs)
}

#[test]
fn loom_s_own_export_is_never_the_writer_a_request_needs() {
    let f = with_rail(vec![
        doc(
            "loom",
            json!({"name": "export", "description": "Write a dataset to a file and save it: csv, json, parquet. Write rows to a file path."}),
        ),
        doc(
            "notes",
            json!({"name": "write_note", "description": "Create a note with the given text."}),
        ),
    ]);
    let q =
        "Find train tickets and timetables between stations, then save it to /root/notes/trip.md";
    let (kept, ranked) = writers(&f, q);
    assert_eq!(kept, ["notes_write_note"], "{ranked:?}");
}

/// The tools a find of `q` kept a place for as the writer, and its first five.
fn writers(f: &Finder, q: &str) -> (Vec<String>, Vec<String>) {
    let (hits, whys) = f.search_all_explained(&[q], 5, None, &|_| 0);
    let kept = hits
        .iter()
        .zip(&whys)
        .filter(|(_, w)| w.as_ref().and_then(|w| w.kept.clone()) == Some(Kept::Writer))
        .map(|(h, _)| f.docs()[h.index].exposed.clone())
        .collect();
    (kept, names(f, &hits))
}

#[test]
fn a_file_still_to_be_made_is_written_by_its_maker_and_read_by_nobody() {
    let word = |name: &str, description: &str| {
        doc(
            "word",
            json!({"name": name, "description": description,
                   "inputSchema": {"type": "object", "properties": {"filename": {"type": "string"}}}}),
        )
    };
    let docs = vec![
        word(
            "create_document",
            "Create a new Word document with optional metadata.",
        ),
        word("copy_document", "Create a copy of a Word document."),
        word(
            "get_document_text",
            "Extract all text from a Word document.",
        ),
        word("add_paragraph", "Add a paragraph to a Word document."),
        doc(
            "fs",
            json!({"name": "write_file", "description": "Create a new file or overwrite a file with content."}),
        ),
    ];
    let f = Finder::new(docs.clone());
    let q = "Write a summary of the quarter and save it as /root/word/q3.docx";
    // The writer says in its name that it creates; a copy only mentions creating. Among
    // tools that fit the rest of a request better, it keeps its place.
    let crowded = with_rail(docs.clone());
    let (writer, ranked) = writers(
        &crowded,
        "Find train tickets and timetables between stations and save them as /root/word/trip.docx",
    );
    assert_eq!(writer, ["word_create_document"], "{ranked:?}");
    // Nothing can be read from a file not made yet: a tool that reads or copies one scores
    // less than it would, one that makes or adds to it ranks no lower; a request that reads
    // such a file scores them all as before.
    let plain = Finder::with_tuning(
        docs,
        Tuning {
            unmade: 1.0,
            ..Tuning::DEFAULT
        },
    );
    let score = |f: &Finder, q: &str, name: &str| {
        f.search(q, 5, None, &|_| 0)
            .iter()
            .find(|h| f.docs()[h.index].exposed == name)
            .map(|h| h.score)
    };
    let read = "Summarize the quarter from /root/word/q3.docx";
    for name in ["word_get_document_text", "word_copy_document"] {
        let (less, before) = (score(&f, q, name), score(&plain, q, name));
        assert!(less.unwrap_or(0.0) < before.expect("scored"), "{name}");
        assert_eq!(score(&f, read, name), score(&plain, read, name), "{name}");
    }
    let place = |f: &Finder, name: &str| {
        f.search(q, 5, None, &|_| 0)
            .iter()
            .position(|h| f.docs()[h.index].exposed == name)
            .unwrap_or(usize::MAX)
    };
    for name in ["word_create_document", "word_add_paragraph"] {
        assert!(place(&f, name) <= place(&plain, name), "{name}");
    }
}

#[test]
fn a_request_keeps_a_place_for_the_writer_and_the_clock_it_needs() {
    let f = with_rail(vec![
        doc(
            "fs",
            json!({"name": "write_file", "description": "Create or overwrite a file with content."}),
        ),
        doc(
            "clock",
            json!({"name": "get_current_time", "description": "Get the current time in a timezone."}),
        ),
    ]);
    let ranked = |q: &str| names(&f, &f.search(q, 10, None, &|_| 0));
    let both = ranked(
        "Find train tickets and timetables for next Wednesday and save them to /root/notes/trip.md",
    );
    let place = |name: &str| both.iter().position(|n| n == name);
    assert!(place("fs_write_file").is_some_and(|p| p <= 4), "{both:?}");
    assert!(
        place("clock_get_current_time").is_some_and(|p| p <= 4),
        "{both:?}"
    );
    // Without a place to write or a day to read, neither is pushed in.
    let neither = ranked("Find train tickets and timetables between stations");
    assert!(
        !neither
            .iter()
            .any(|n| n == "fs_write_file" || n == "clock_get_current_time"),
        "{neither:?}"
    );
    // The tuning off: the rest of the request crowds them out.
    let off = Finder::with_tuning(
        f.docs().to_vec(),
        Tuning {
            writer_at: None,
            clock_at: None,
            ..Tuning::DEFAULT
        },
    );
    let crowded = names(&off, &off.search(
        "Find train tickets and timetables for next Wednesday and save them to /root/notes/trip.md",
        5, None, &|_| 0));
    assert!(
        !crowded.iter().any(|n| n == "clock_get_current_time"),
        "{crowded:?}"
    );
    // A fleet without a clock gets none: a tool that only says `current` is not pushed in.
    let mut docs: Vec<ToolDoc> = (0..12)
        .map(|i| {
            doc(
                "rail",
                json!({"name": format!("train_tickets_{i}"),
                       "description": format!("Search train tickets between stations, variant {i}.")}),
            )
        })
        .collect();
    docs.push(doc(
        "mem",
        json!({"name": "get_value", "description": "Read the current value of a memory."}),
    ));
    let clockless = Finder::new(docs);
    let hits = names(
        &clockless,
        &clockless.search("Find train tickets for next Wednesday", 5, None, &|_| 0),
    );
    assert!(!hits.iter().any(|n| n == "mem_get_value"), "{hits:?}");
}

/// A map server whose search tools require coordinates, one tool that says it returns them,
/// and padding: the fleet a `feeders` test ranks in.
fn map_fleet() -> Vec<ToolDoc> {
    let near = |name: &str, what: &str| {
        doc(
            "maps",
            json!({"name": name, "description": format!("Find {what} near a point."),
                   "inputSchema": {"required": ["latitude", "longitude"],
                       "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"},
                                      "radius": {"type": "number"}}}}),
        )
    };
    let mut docs = vec![
        near("find_parking", "parking garages and lots"),
        near("find_cafes", "cafes and coffee shops"),
        near("find_schools", "schools"),
        doc(
            "maps",
            json!({"name": "geocode", "description": "Convert an address to a place: returns its latitude and longitude.",
                   "inputSchema": {"required": ["address"], "properties": {"address": {"type": "string"}}}}),
        ),
        doc(
            "rail",
            json!({"name": "get-tickets", "description": "Search train tickets.",
                   "inputSchema": {"required": ["fromStation"], "properties": {"fromStation":
                       {"type": "string", "description": "A code from `get-station-code`, never a city's name."}}}}),
        ),
        doc(
            "rail",
            json!({"name": "get-station-code", "description": "The code of a city's main station.",
                   "inputSchema": {"required": ["city"], "properties": {"city": {"type": "string"}}}}),
        ),
    ];
    // A ticker is taken on three servers: a notion the request names, not one a tool feeds.
    for server in ["fin1", "fin2", "fin3"] {
        docs.push(doc(
            server,
            json!({"name": "price", "description": "The price of a stock.",
                   "inputSchema": {"required": ["ticker"], "properties": {"ticker": {"type": "string"}}}}),
        ));
    }
    docs.push(doc(
        "fin1",
        json!({"name": "list_tickers", "description": "Returns every ticker of the exchange."}),
    ));
    for i in 0..30 {
        docs.push(doc(
            &format!("pad{i}"),
            json!({"name": format!("tool_{i}"), "description": format!("Unrelated thing number {i}."),
                   "inputSchema": {"required": ["path"], "properties": {"path": {"type": "string"}}}}),
        ));
    }
    docs
}

#[test]
fn a_tool_that_gives_what_the_first_requires_comes_right_after_it() {
    let f = Finder::new(map_fleet());
    let by_name = |n: &str| {
        f.docs()
            .iter()
            .position(|d| d.exposed == n)
            .unwrap_or(usize::MAX)
    };
    let fed = |n: &str| -> Vec<String> {
        f.feeders[by_name(n)]
            .iter()
            .map(|&s| f.docs()[s as usize].exposed.clone())
            .collect()
    };
    // Said by its description (returns latitude and longitude, takes neither), or named by
    // the parameter's description; never across servers, never the tool itself.
    assert_eq!(fed("maps_find_parking"), ["maps_geocode"]);
    assert_eq!(fed("rail_get-tickets"), ["rail_get-station-code"]);
    assert!(fed("maps_geocode").is_empty());
    // `path` is taken by most of the fleet: a request supplies it, no tool feeds it.
    assert!(fed("pad0_tool_0").is_empty());
    assert!(fed("fin1_price").is_empty());
    let q = "Where can I park near the Louvre in Paris?";
    let (hits, whys) = f.search_all_explained(&[q], 5, None, &|_| 0);
    assert_eq!(names(&f, &hits)[..2], ["maps_find_parking", "maps_geocode"]);
    assert_eq!(
        whys[1].as_ref().and_then(|w| w.kept.clone()),
        Some(Kept::Feeder {
            of: "maps_find_parking".into()
        })
    );
    assert_eq!(whys[0].as_ref().and_then(|w| w.kept.clone()), None);
    // A tool named in the query comes first because it is named, not as a feeder.
    let (hits, whys) = f.search_all_explained(
        &["maps_geocode, then parking near the Louvre"],
        5,
        None,
        &|_| 0,
    );
    assert_eq!(names(&f, &hits)[0], "maps_geocode");
    assert_eq!(whys[0].as_ref().and_then(|w| w.kept.clone()), None);
    // With more tools fed, each feeder stands right after the tool it feeds, no tool twice,
    // and one that already ranks there is not said to be kept.
    let wide = Finder::with_tuning(
        f.docs().to_vec(),
        Tuning {
            fed: 3,
            ..Tuning::DEFAULT
        },
    );
    for q in [
        q,
        "parking, cafes and schools near a point",
        "convert an address to latitude and longitude, then parking",
        "train tickets from Paris",
    ] {
        let (hits, whys) = wide.search_all_explained(&[q], 10, None, &|_| 0);
        let got = names(&wide, &hits);
        let mut seen = got.clone();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), got.len(), "{q}: {got:?}");
        for (i, why) in whys.iter().enumerate() {
            if let Some(Kept::Feeder { of }) = why.as_ref().and_then(|w| w.kept.clone()) {
                assert!(i > 0 && got[i - 1] == of, "{q}: {got:?}");
            }
        }
    }
    let (hits, whys) = wide.search_all_explained(
        &["convert an address to latitude and longitude, then parking"],
        5,
        None,
        &|_| 0,
    );
    let got = names(&wide, &hits);
    let geocoder = got.iter().position(|n| n == "maps_geocode");
    assert!(geocoder.is_some_and(|g| g <= 1), "{got:?}");
    assert!(
        whys.iter()
            .all(|w| w.as_ref().and_then(|w| w.kept.clone()).is_none()),
        "{got:?}"
    );
    // Off, the geocoder ranks by its own words, below the other tools near a point.
    let off = Finder::with_tuning(
        f.docs().to_vec(),
        Tuning {
            fed: 0,
            ..Tuning::DEFAULT
        },
    );
    let plain = names(&off, &off.search(q, 5, None, &|_| 0));
    assert_ne!(
        plain.get(1).map(String::as_str),
        Some("maps_geocode"),
        "{plain:?}"
    );
}
