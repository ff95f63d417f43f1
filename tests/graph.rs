//! The real `@modelcontextprotocol/server-memory` behind the real `loom serve`: its knowledge
//! graph (`{entities, relations}` in one answer) becomes two datasets that join, from its tools
//! and from its `memory://knowledge-graph` resource alike, while a small answer reaches the
//! client byte for byte as the server sent it.

mod common;

use common::*;
use serde_json::{Value, json};
use std::time::Duration;

const T: Duration = Duration::from_secs(30);
const ENTITIES: usize = 300;
const RELATIONS: usize = 450;

/// A graph file as the server keeps it (one JSON object a line): people and cities, each
/// person living in a city and knowing two others; one observation is found by one search.
fn graph_file(dir: &std::path::Path) -> std::path::PathBuf {
    let mut lines = Vec::new();
    for i in 0..ENTITIES {
        let (kind, obs) = if i % 10 == 0 {
            ("city", vec![format!("population {}", 1000 + i)])
        } else {
            (
                "person",
                vec![format!("age {}", 20 + i % 50), "likes tea".to_owned()],
            )
        };
        let mut obs = obs;
        if i == 123 {
            obs.push("holds the zebra-key".to_owned());
        }
        lines.push(json!({ "type": "entity", "name": format!("node {i:03}"), "entityType": kind, "observations": obs }));
    }
    let mut n = 0;
    'all: for i in 0..ENTITIES {
        for (relation, to) in [
            ("lives in", (i / 10) * 10),
            ("knows", (i + 1) % ENTITIES),
            ("knows", (i + 7) % ENTITIES),
        ] {
            if n == RELATIONS {
                break 'all;
            }
            lines.push(json!({ "type": "relation", "from": format!("node {i:03}"), "to": format!("node {to:03}"), "relationType": relation }));
            n += 1;
        }
    }
    let path = dir.join("graph.jsonl");
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&path, text.join("\n")).expect("write the graph");
    path
}

async fn scalar(c: &mut RawClient, sql: &str) -> Value {
    let r = c.call("loom_query", json!({ "sql": sql })).await;
    let row = r["result"]["structuredContent"]["rows"][0].clone();
    assert!(row.is_object(), "{sql}: {r}");
    row["v"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_knowledge_graph_becomes_two_datasets_that_join() {
    let js = memory_js();
    let cfg = TempConfig::new("");
    let graph = graph_file(cfg.dir.path());
    std::fs::write(
        &cfg.path,
        format!(
            "[[servers]]\nname = \"memory\"\ncommand = \"node\"\nargs = [{:?}]\nenv = {{ MEMORY_FILE_PATH = {:?} }}\n",
            js.display().to_string(),
            graph.display().to_string()
        ),
    )
    .unwrap();
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let tools = c.tool_names().await;
    assert!(tools.contains(&"memory_read_graph".to_owned()), "{tools:?}");

    let r = c.call("memory_read_graph", json!({})).await;
    let st = &r["result"]["structuredContent"];
    assert_eq!(st["kind"], "datasets", "{r}");
    let refs: Vec<&str> = st["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["ref"].as_str().unwrap())
        .collect();
    assert_eq!(
        refs,
        [
            "memory_read_graph_1_entities",
            "memory_read_graph_1_relations"
        ],
        "{r}"
    );
    let text = text_of(&r);
    assert!(
        text.contains("memory_read_graph_1_relations.\"from\" = memory_read_graph_1_entities.name"),
        "{text}"
    );
    assert!(
        text.contains("memory_read_graph_1_relations.\"to\" = memory_read_graph_1_entities.name"),
        "{text}"
    );
    let e = "memory_read_graph_1_entities";
    let rel = "memory_read_graph_1_relations";
    assert_eq!(
        scalar(&mut c, &format!("SELECT count(*) AS v FROM {e}")).await,
        ENTITIES
    );
    assert_eq!(
        scalar(&mut c, &format!("SELECT count(*) AS v FROM {rel}")).await,
        RELATIONS
    );
    // Every relation joins its two ends; who lives in which city is a query.
    let joined = format!(
        "SELECT count(*) AS v FROM {rel} r JOIN {e} a ON r.\"from\" = a.name JOIN {e} b ON r.\"to\" = b.name"
    );
    assert_eq!(scalar(&mut c, &joined).await, RELATIONS);
    let residents = format!(
        "SELECT count(*) AS v FROM {rel} r JOIN {e} city ON r.\"to\" = city.name WHERE r.\"relationType\" = 'lives in' AND city.\"entityType\" = 'city' AND r.\"to\" = 'node 010'"
    );
    // Each of the first RELATIONS / 3 nodes lives in the city of its ten.
    let truth = (0..ENTITIES)
        .filter(|i| i * 3 < RELATIONS && (i / 10) * 10 == 10)
        .count();
    assert_eq!(scalar(&mut c, &residents).await, truth);
    // Observations stay a list per entity, every one of them.
    let observations = format!("SELECT sum(json_array_length(observations))::BIGINT AS v FROM {e}");
    assert_eq!(
        scalar(&mut c, &observations).await,
        ENTITIES / 10 + (ENTITIES - ENTITIES / 10) * 2 + 1
    );

    // The resource holds the same graph: two datasets again, in a ReadResourceResult.
    let r = c
        .request(
            "resources/read",
            json!({ "uri": "memory://knowledge-graph" }),
        )
        .await;
    let contents = r["result"]["contents"].as_array().expect("contents");
    assert_eq!(contents.len(), 1, "{r}");
    assert_eq!(contents[0]["uri"], "memory://knowledge-graph");
    let text = contents[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "This result held 2 tables, now one dataset each: `memory_knowledge_graph_1_entities`"
        ),
        "{text}"
    );
    let same = "SELECT count(*) AS v FROM (SELECT * FROM memory_knowledge_graph_1_relations EXCEPT SELECT * FROM memory_read_graph_1_relations)";
    assert_eq!(scalar(&mut c, same).await, 0);

    // A small answer is the server's own bytes.
    let mut direct = RawClient::spawn_command(
        tokio::process::Command::new("node"),
        &[js.to_str().unwrap()],
        &[("MEMORY_FILE_PATH", graph.to_str().unwrap())],
    );
    direct.initialize().await;
    let args = json!({ "query": "zebra-key" });
    let through = c
        .request_raw(
            "tools/call",
            json!({ "name": "memory_search_nodes", "arguments": args }),
            T,
        )
        .await;
    let straight = direct
        .request_raw(
            "tools/call",
            json!({ "name": "search_nodes", "arguments": args }),
            T,
        )
        .await;
    assert_eq!(result_text(&through), result_text(&straight));
    assert!(through.contains("node 123"), "{through}");
}
