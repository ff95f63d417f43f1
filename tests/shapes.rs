//! The shapes the real-server pass of 2026-12-07 found tabled wrongly, end to end: the real
//! `server-filesystem` reads real command output saved as files (and files written the way
//! the servers wrote them), `loom serve` intercepts the results, and `loom_query`'s answers
//! are checked against the files themselves, computed here without loom. A shape loom cannot
//! read exactly must be parked, and read back whole.

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::Path;

fn structured(r: &Value) -> &Value {
    &r["result"]["structuredContent"]
}

fn shape(name: &str) -> String {
    std::fs::read_to_string(root().join("tests/fixtures/shapes").join(name)).unwrap()
}

/// A markdown table of products as mcp-server-fetch and markitdown (markdownify) write one:
/// `_`, `*` and `\` escaped, and a backslash before a letter left as it is.
fn products_markdown() -> (String, usize) {
    let mut md = String::from("| product\\_name | sku | note |\n| --- | --- | --- |\n");
    let mut usb = 0;
    for i in 0..150 {
        let name = match i % 3 {
            0 => {
                usb += 1;
                "USB\\_C cable"
            }
            1 => "\\*\\*bold\\*\\* lamp",
            _ => "back\\slash hook",
        };
        md.push_str(&format!("| {name} | SKU\\_{i:05} | 2\\*{i} lumber |\n"));
    }
    (md, usb)
}

/// Rows as server-postgres answers a jsonb column set on every 7th row: an object or null.
fn jsonb_rows() -> (String, usize) {
    let rows: Vec<Value> = (1..=700)
        .map(|i: u64| {
            let meta = i
                .is_multiple_of(7)
                .then(|| json!({ "q": i % 5, "sku": format!("S{i}") }));
            json!({ "order_id": 7_000_000_000_000_000_000u64 + i, "meta": meta })
        })
        .collect();
    (Value::Array(rows).to_string(), 100)
}

async fn client(dir: &Path) -> (TempConfig, RawClient) {
    let cfg = TempConfig::new(&format!(
        "token_threshold = 300\n[[servers]]\nname = \"fs\"\ncommand = \"node\"\nargs = [{:?}, {:?}]\n",
        filesystem_js().display().to_string(),
        dir.display().to_string()
    ));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    (cfg, c)
}

/// A file read through loom: the envelope or pointer the model gets, which must cost less than
/// the file it stands for (never worse than no proxy; at these small sizes that is the bar,
/// the twenty-fold saving of large results is tested in tests/intercept.rs).
async fn read(c: &mut RawClient, dir: &Path, file: &str) -> Value {
    let path = dir.join(file);
    let r = c
        .call(
            "fs_read_text_file",
            json!({ "path": path.display().to_string() }),
        )
        .await;
    let raw = std::fs::read_to_string(&path).unwrap().len();
    let shown = text_of(&r).len();
    assert!(
        shown < raw,
        "{file}: the model reads {shown} bytes for {raw}"
    );
    structured(&r).clone()
}

/// The one value a query answers, as text (a sum may come as a number or a string).
async fn scalar(c: &mut RawClient, sql: &str) -> String {
    let q = c.call("loom_query", json!({ "sql": sql })).await;
    let row = &structured(&q)["rows"][0];
    let v = row
        .as_object()
        .and_then(|o| o.values().next().cloned())
        .unwrap_or_else(|| panic!("{sql}: {q}"));
    match v {
        Value::String(s) => s,
        v => v.to_string(),
    }
}

#[tokio::test]
async fn the_wrong_shapes_of_the_real_server_pass_are_exact_or_parked() {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "ps_lstart.txt",
        "ps_aux.txt",
        "dpkg_query.tsv",
        "du_ak.tsv",
        "dpkg_l.txt",
        "ls_l.txt",
    ] {
        std::fs::write(dir.path().join(f), shape(f)).unwrap();
    }
    let (products, usb) = products_markdown();
    std::fs::write(dir.path().join("products.md"), &products).unwrap();
    let (jsonb, with_meta) = jsonb_rows();
    std::fs::write(dir.path().join("orders.json"), &jsonb).unwrap();
    let (_cfg, mut c) = client(dir.path()).await;

    // D1: STARTED holds spaces and overflows into the gap after USER: no table, the text
    // parked and read back whole.
    let env = read(&mut c, dir.path(), "ps_lstart.txt").await;
    assert_eq!(env["kind"], "parked", "{env}");
    let page = c
        .call(
            "loom_fetch",
            json!({ "blob_key": env["blob_key"], "offset": 0, "limit": 64000 }),
        )
        .await;
    assert_eq!(text_of(&page).trim_end(), shape("ps_lstart.txt").trim_end());

    // ps aux: read by its edges; RSS sums as the file's own fields do.
    let env = read(&mut c, dir.path(), "ps_aux.txt").await;
    assert_eq!(env["kind"], "dataset", "{env}");
    let rss: i64 = shape("ps_aux.txt")
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().nth(5).unwrap().parse::<i64>().unwrap())
        .sum();
    let r = env["ref"].as_str().unwrap();
    assert_eq!(
        scalar(&mut c, &format!("SELECT sum(\"RSS\") FROM {r}")).await,
        rss.to_string()
    );

    // D2: no header row, every line a row.
    for (file, key_sql, field) in [
        (
            "dpkg_query.tsv",
            "SELECT column_2 FROM {r} WHERE column_1 = 'adduser'",
            1,
        ),
        (
            "du_ak.tsv",
            "SELECT column_1 FROM {r} WHERE column_2 = '/usr/share/doc/libelf1/copyright'",
            0,
        ),
    ] {
        let text = shape(file);
        let env = read(&mut c, dir.path(), file).await;
        assert_eq!(env["kind"], "dataset", "{env}");
        let r = env["ref"].as_str().unwrap();
        assert_eq!(env["rows"], text.lines().count(), "{file}");
        let first = text.lines().next().unwrap().split('\t').nth(field).unwrap();
        let got = scalar(&mut c, &key_sql.replace("{r}", r)).await;
        assert_eq!(got, first, "{file}");
    }

    // D3: count(meta) counts the objects.
    let env = read(&mut c, dir.path(), "orders.json").await;
    assert_eq!(env["kind"], "dataset", "{env}");
    let r = env["ref"].as_str().unwrap();
    assert_eq!(
        scalar(&mut c, &format!("SELECT count(meta) FROM {r}")).await,
        with_meta.to_string()
    );

    // D4: names and values as the markdown shows them.
    let env = read(&mut c, dir.path(), "products.md").await;
    assert_eq!(env["kind"], "dataset", "{env}");
    let r = env["ref"].as_str().unwrap();
    let sql = format!("SELECT count(*) FROM {r} WHERE product_name = 'USB_C cable'");
    assert_eq!(scalar(&mut c, &sql).await, usb.to_string());
    let sql = format!("SELECT count(*) FROM {r} WHERE product_name = 'back\\slash hook'");
    assert_eq!(scalar(&mut c, &sql).await, "50");

    // Listings that were parked: dpkg -l by its ruler, ls -l by its grammar.
    let env = read(&mut c, dir.path(), "dpkg_l.txt").await;
    assert_eq!(env["kind"], "dataset", "{env}");
    let r = env["ref"].as_str().unwrap();
    assert_eq!(env["rows"], shape("dpkg_l.txt").lines().count() - 5);
    let sql = format!("SELECT \"Version\" FROM {r} WHERE \"Name\" = 'adduser'");
    assert_eq!(scalar(&mut c, &sql).await, "3.134");
    let env = read(&mut c, dir.path(), "ls_l.txt").await;
    assert_eq!(env["kind"], "dataset", "{env}");
    let links = shape("ls_l.txt")
        .lines()
        .filter(|l| l.starts_with('l'))
        .count();
    let r = env["ref"].as_str().unwrap();
    let sql = format!("SELECT count(*) FROM {r} WHERE target <> ''");
    assert_eq!(scalar(&mut c, &sql).await, links.to_string());
}
