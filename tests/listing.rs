//! What the tool listing costs in each mode, counted with a real tokenizer (o200k) over real
//! servers' listings: the sample server, and server-everything, server-filesystem, the GitHub
//! server and Playwright (a browser) as they listed themselves (`tests/fixtures/tool_corpus/`). Each
//! mode is held under its ceiling: `search` at most 1,000 tokens whatever the number of
//! servers, `compact` at most 45% of `full`, loom's own core set at most 700.

mod common;

use common::{LOOM, LoomOverHttp, RawClient, TempConfig, is_error_result, python_client_check};
use loom::config::{Config, ListingMode};
use loom::downstream::ServedTool;
use loom::session::listing::ListingState;
use loom::upstream::listing::{self, Inputs, Listed, Placed};
use serde_json::{Value, json};

fn tokens(v: &Value) -> usize {
    let bpe = tiktoken_rs::o200k_base().expect("o200k");
    bpe.encode_ordinary(&v.to_string()).len()
}

/// The tools of a corpus server, exposed as loom exposes them (`<server>_<tool>`).
fn corpus(server: &str) -> Vec<ServedTool> {
    let path = format!(
        "{}/tests/fixtures/tool_corpus/{server}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    served(server, v["tools"].as_array().unwrap())
}

fn served(server: &str, tools: &[Value]) -> Vec<ServedTool> {
    tools
        .iter()
        .map(|t| {
            let original = t["name"].as_str().unwrap().to_owned();
            let mut tool = t.clone();
            tool["name"] = Value::String(format!("{server}_{original}"));
            tool.as_object_mut().unwrap().remove("outputSchema");
            ServedTool {
                server: server.to_owned(),
                original,
                tool,
            }
        })
        .collect()
}

const SERVERS: [&str; 4] = ["everything", "filesystem", "github", "playwright"];

fn all_served() -> Vec<ServedTool> {
    let sample = serde_json::to_value(loom::sample_server::tools()).unwrap();
    let mut all = served("sample", sample.as_array().unwrap());
    for s in SERVERS {
        all.extend(corpus(s));
    }
    all
}

fn config(mode: &str) -> Config {
    let mut text = format!("listing = \"{mode}\"\n");
    for s in ["sample"].iter().chain(SERVERS.iter()) {
        text.push_str(&format!("[[servers]]\nname = \"{s}\"\ncommand = \"x\"\n"));
    }
    Config::parse(&text, std::path::Path::new("/tmp"), "t.toml").unwrap()
}

fn placed(mode: &str) -> Vec<Placed> {
    let c = config(mode);
    let state = ListingState::default();
    let inputs = Inputs {
        config: &c,
        connection: None,
        state: &state,
    };
    listing::place(&inputs, all_served())
}

fn cost(p: &[Placed]) -> usize {
    tokens(&Value::Array(listing::listing(p)))
}

#[test]
fn each_mode_stays_under_its_ceiling() {
    let full = cost(&placed("full"));
    let compact = cost(&placed("compact"));
    let search = cost(&placed("search"));
    let tools = all_served().len();
    let core: Vec<Value> = placed("search")
        .into_iter()
        .filter(|p| p.listed == Listed::Core)
        .map(|p| p.tool)
        .collect();
    let core = tokens(&Value::Array(core));
    println!(
        "{tools} tools of 5 servers (o200k): full {full}, compact {compact} ({:.0}%), search {search}, loom core {core}",
        100.0 * compact as f64 / full as f64
    );
    assert!(search <= 1_000, "search lists {search} tokens");
    assert!(
        compact as f64 <= 0.45 * full as f64,
        "compact {compact} vs full {full}"
    );
    assert!(core <= 700, "loom's core set is {core} tokens");
}

#[test]
fn search_costs_the_same_whatever_the_number_of_servers() {
    // Only pinned tools grow it: more servers add nothing.
    let few = {
        let c = config("search");
        let state = ListingState::default();
        let inputs = Inputs {
            config: &c,
            connection: None,
            state: &state,
        };
        cost(&listing::place(&inputs, corpus("github")))
    };
    assert_eq!(few, cost(&placed("search")));
    // And a connection may ask for another mode than the config's.
    let c = config("full");
    let state = ListingState::default();
    let inputs = Inputs {
        config: &c,
        connection: Some(ListingMode::Search),
        state: &state,
    };
    assert_eq!(cost(&listing::place(&inputs, all_served())), few);
}

/// Every corpus server's full and compact listing (loom's own tools aside), for BENCHMARKS.md.
#[test]
fn compact_over_the_whole_corpus_stays_near_half() {
    let dir = format!("{}/tests/fixtures/tool_corpus", env!("CARGO_MANIFEST_DIR"));
    let mut tf = 0;
    let mut tc = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let name = p.file_stem().unwrap().to_str().unwrap().to_owned();
        let tools = corpus(&name);
        let full: Vec<Value> = tools.iter().map(|t| t.tool.clone()).collect();
        let comp: Vec<Value> = tools.iter().map(|t| listing::compact(&t.tool)).collect();
        let (f, c) = (tokens(&Value::Array(full)), tokens(&Value::Array(comp)));
        tf += f;
        tc += c;
        println!(
            "{name}: {} tools full {f} compact {c} ({:.0}%)",
            tools.len(),
            100.0 * c as f64 / f as f64
        );
    }
    println!(
        "corpus: full {tf} compact {tc} ({:.0}%)",
        100.0 * tc as f64 / tf as f64
    );
    // Servers whose schemas carry little prose gain less; over all 19 it is about half.
    assert!(tc as f64 <= 0.5 * tf as f64, "compact {tc} of {tf}");
}

/// What a model in a search listing saw (tests/py/client_check.py --find): it found the weather
/// tool, called it with loom_call, got did-you-mean errors for a near-miss name and wrong
/// arguments, saw the tool promoted into the listing, and called a hidden tool by its name.
fn check_find_and_call(v: &Value) {
    let names = |k: &str| -> Vec<String> {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_owned())
            .collect()
    };
    let before = names("before");
    for listed in [
        "loom_find_tools",
        "loom_call",
        "loom_query",
        "loom_memory_search",
    ] {
        assert!(
            before.contains(&listed.to_owned()),
            "{listed} in {before:?}"
        );
    }
    for hidden in ["sample_get_weather", "sample_list_customers", "loom_drop"] {
        assert!(
            !before.contains(&hidden.to_owned()),
            "{hidden} in {before:?}"
        );
    }
    assert_eq!(v["found"][0], "sample_get_weather", "{v}");
    assert!(
        v["via_loom_call"].as_str().unwrap().starts_with("Lima"),
        "{v}"
    );
    assert_eq!(v["near_miss"][0], true);
    assert!(
        v["near_miss"][1]
            .as_str()
            .unwrap()
            .contains("did you mean `sample_get_weather`?"),
        "{v}"
    );
    assert_eq!(v["bad_arguments"][0], true);
    assert!(
        v["bad_arguments"][1]
            .as_str()
            .unwrap()
            .contains("`city` is required"),
        "{v}"
    );
    let after = names("after");
    assert!(
        after.contains(&"sample_get_weather".to_owned()),
        "promoted: {after:?}"
    );
    assert!(!after.contains(&"sample_list_orders".to_owned()));
    assert_eq!(v["hidden_by_name"], 2);
    let ctx = &v["context"];
    assert_eq!(ctx["prefix_hash"].as_str().map(str::len), Some(16), "{ctx}");
    assert!(
        ctx["prefix"].as_str().unwrap().contains("loom_find_tools"),
        "{ctx}"
    );
}

const SAMPLE: &str =
    "[[servers]]\nname = \"sample\"\ncommand = \"loom\"\nargs = [\"sample-server\"]\n";

async fn find_over(args: &[&str]) -> Value {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    python_client_check(&args).await
}

#[tokio::test]
async fn a_model_finds_calls_and_promotes_tools_over_stdio() {
    let cfg = TempConfig::new(&format!("listing = \"search\"\n{SAMPLE}"));
    let config = cfg.path.display().to_string();
    let dir = format!("XDG_RUNTIME_DIR={}", cfg.dir.path().display());
    for mode in ["legacy", "auto"] {
        let v = find_over(&[
            "--find", mode, "--stdio", "env", &dir, LOOM, "serve", "-c", &config,
        ])
        .await;
        check_find_and_call(&v);
    }
}

#[tokio::test]
async fn a_connection_asks_for_search_over_the_socket_and_over_http() {
    // The config lists everything; each connection asks for the search listing itself.
    // (Promotion lasts for the session, so each transport gets a session of its own.)
    let cfg = TempConfig::new(SAMPLE);
    let _socket_session = LoomOverHttp::start(&cfg, "tok-listing-0123456789").await;
    let dir = format!("XDG_RUNTIME_DIR={}", cfg.dir.path().display());
    let v = find_over(&[
        "--find",
        "legacy",
        "--stdio",
        "env",
        &dir,
        LOOM,
        "connect",
        "--listing",
        "search",
    ])
    .await;
    check_find_and_call(&v);
    let cfg = TempConfig::new(SAMPLE);
    let loom = LoomOverHttp::start(&cfg, "tok-listing-0123456789").await;
    let url = format!("{}?listing=search", loom.url);
    let v = find_over(&["--find", "auto", "--http", &url, "tok-listing-0123456789"]).await;
    assert_eq!(v["protocol_version"], "2026-07-28");
    check_find_and_call(&v);
}

/// A call that never reaches the server (refused by `approve.deny`) promotes nothing: the
/// hidden tool stays out of the listing, and no client is told it changed.
#[tokio::test]
async fn a_denied_call_promotes_nothing() {
    let cfg = TempConfig::new(&format!(
        "listing = \"search\"\n{SAMPLE}approve.deny = [\"cancel_order\"]\n"
    ));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let before = c.tool_names().await;
    assert!(
        !before.contains(&"sample_cancel_order".to_owned()),
        "{before:?}"
    );
    let r = c
        .call("sample_cancel_order", json!({ "order_id": 1 }))
        .await;
    assert!(is_error_result(&r), "denied: {r}");
    // A call that does reach the server promotes its tool, and the listing says so.
    let r = c
        .call("sample_get_weather", json!({ "city": "Lima" }))
        .await;
    assert!(!is_error_result(&r), "{r}");
    let after = c.tool_names().await;
    assert!(
        after.contains(&"sample_get_weather".to_owned()),
        "{after:?}"
    );
    assert!(
        !after.contains(&"sample_cancel_order".to_owned()),
        "{after:?}"
    );
}

/// `loom_context` keeps to its budget and says when it cut, its stable prefix hashes the same
/// whatever the budget or the query, and a budget that is not a positive number is refused;
/// `loom_find_tools` names the servers when asked for one that does not exist, and answers a
/// vague query with the overview; `loom_call` takes null arguments as a direct call does.
#[tokio::test]
async fn context_and_find_tools_keep_their_word_at_the_edges() {
    let cfg = TempConfig::new(&format!("listing = \"search\"\n{SAMPLE}"));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let structured = |r: &Value| r["result"]["structuredContent"].clone();
    let big = c
        .call(
            "loom_context",
            json!({ "query": "weather", "token_budget": 4000 }),
        )
        .await;
    let small = c
        .call(
            "loom_context",
            json!({ "query": "orders", "token_budget": 40 }),
        )
        .await;
    assert_eq!(
        structured(&big)["prefix_hash"],
        structured(&small)["prefix_hash"],
        "{big}\n{small}"
    );
    assert_eq!(structured(&big)["truncated"], false, "{big}");
    assert_eq!(structured(&small)["truncated"], true, "{small}");
    let text = small["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.len() < 40 * 6, "cut to about 40 tokens: {text}");
    for bad in [json!(-1), json!(0)] {
        let r = c.call("loom_context", json!({ "token_budget": bad })).await;
        assert!(is_error_result(&r), "{bad}: {r}");
    }
    let r = c
        .call(
            "loom_find_tools",
            json!({ "query": "weather", "server": "nope" }),
        )
        .await;
    assert!(is_error_result(&r), "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("the servers are: sample"),
        "{r}"
    );
    let r = c
        .call("loom_find_tools", json!({ "query": "please help" }))
        .await;
    assert!(structured(&r)["servers"].is_array(), "the overview: {r}");
    let r = c
        .call(
            "loom_call",
            json!({ "tool": "sample_list_customers", "arguments": null }),
        )
        .await;
    assert!(!is_error_result(&r), "{r}");
}

/// A find answers its best tools with schemas and the next best in `more` by name and line;
/// the names it gives, asked for as a query, come back first with their schemas; several
/// phrasings fuse; `queries` that is not a list of strings is refused.
#[tokio::test]
async fn find_tools_gives_a_tail_by_name_and_fuses_phrasings() {
    let cfg = TempConfig::new(&format!("listing = \"search\"\n{SAMPLE}"));
    let mut c = RawClient::spawn(&cfg.path);
    let init = c.initialize().await;
    // The primer teaches the phrasings and the tail.
    let primer = init["result"]["instructions"].as_str().unwrap_or_default();
    assert!(
        primer.contains("`queries`") && primer.contains("`more`"),
        "{init}"
    );
    c.tool_names().await;
    let structured = |r: &Value| r["result"]["structuredContent"].clone();
    let names = |v: &Value| -> Vec<String> {
        v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let r = c
        .call(
            "loom_find_tools",
            json!({ "query": "the details of an order", "limit": 1 }),
        )
        .await;
    let v = structured(&r);
    assert_eq!(names(&v), ["sample_get_order_details"], "{v}");
    let more: Vec<&str> = v["more"]
        .as_array()
        .expect("a tail")
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(!more.is_empty(), "{v}");
    let (tail_name, line) = more[0].split_once(": ").expect("name: line");
    assert!(tail_name.starts_with("sample_") && !line.is_empty(), "{v}");
    assert!(v["tools"][0]["inputSchema"].is_object(), "{v}");
    assert!(v["next"].as_str().unwrap().contains("more"), "{v}");
    // The tail's names as a query: those tools, first, with their schemas.
    let r = c
        .call(
            "loom_find_tools",
            json!({ "query": format!("{tail_name} sample_cancel_order"), "limit": 2 }),
        )
        .await;
    let v = structured(&r);
    assert_eq!(names(&v), [tail_name, "sample_cancel_order"], "{v}");
    assert!(
        v["tools"][1]["inputSchema"]["properties"]["order_id"].is_object(),
        "{v}"
    );
    // Two phrasings: the tool both find comes first.
    let r = c
        .call(
            "loom_find_tools",
            json!({ "query": "cancel an order", "queries": ["revoke a purchase", "stop order"], "limit": 3 }),
        )
        .await;
    let v = structured(&r);
    assert_eq!(names(&v)[0], "sample_cancel_order", "{v}");
    // Only phrasings, no `query`.
    let r = c
        .call(
            "loom_find_tools",
            json!({ "queries": ["tail the service log"], "limit": 1 }),
        )
        .await;
    assert_eq!(names(&structured(&r)), ["sample_tail_logs"], "{r}");
    for bad in [json!("weather"), json!([1, 2]), json!({ "q": "x" })] {
        let r = c
            .call(
                "loom_find_tools",
                json!({ "query": "weather", "queries": bad }),
            )
            .await;
        assert!(is_error_result(&r), "{bad}: {r}");
    }
}

/// A promotion is announced only to the clients whose listing it changes: a client listing
/// everything is not told to list again.
#[tokio::test]
async fn a_promotion_is_announced_only_where_the_listing_changes() {
    let cfg = TempConfig::new(SAMPLE);
    let mut full = RawClient::spawn(&cfg.path);
    full.initialize().await;
    full.tool_names().await;
    let dir = cfg.dir.path().display().to_string();
    let mut search = RawClient::spawn_args(
        &["connect", "--listing", "search"],
        &[("XDG_RUNTIME_DIR", &dir)],
    );
    search.initialize().await;
    let before = search.tool_names().await;
    assert!(
        !before.contains(&"sample_get_weather".to_owned()),
        "{before:?}"
    );
    while full
        .next_line(std::time::Duration::from_millis(300))
        .await
        .is_some()
    {}
    let r = search
        .call("sample_get_weather", json!({ "city": "Lima" }))
        .await;
    assert!(!is_error_result(&r), "{r}");
    search
        .wait_for(std::time::Duration::from_secs(10), |v| {
            v["method"] == "notifications/tools/list_changed"
        })
        .await;
    let mut heard = Vec::new();
    while let Some(l) = full.next_line(std::time::Duration::from_millis(500)).await {
        heard.push(l);
    }
    assert!(
        !heard.iter().any(|l| l.contains("list_changed")),
        "the full listing did not change: {heard:?}"
    );
}
