//! The token estimate against a real BPE tokenizer (o200k): within ±15% on English prose,
//! JSON, code and CJK text.

use loom::intercept::tokens::estimate;

const PROSE: &str = "The committee met on Tuesday to review the proposal for the new library. \
Several members raised concerns about the cost of construction, which had grown by nearly a third \
since the original estimate was published last spring. Others argued that the delay would only make \
the project more expensive, and that the town's children deserved a quiet place to read and study. \
After a long discussion, the chair suggested that a small working group should gather updated quotes \
from three builders and report back within a month. The motion passed with one abstention. \
Meanwhile, volunteers continued to sort donated books in the church hall, where shelves now lined \
every wall and the smell of old paper filled the air on warm afternoons. ";

const CJK: &str = "東京の天気は晴れで、気温は二十五度まで上がる見込みです。午後からは風が強くなり、\
夕方には所により雨が降るでしょう。週末は全国的に気温が下がり、北日本では雪が降る可能性があります。\
我们今天讨论了新图书馆的建设计划。许多成员对成本表示担忧，但也有人认为拖延只会让项目更加昂贵。\
经过长时间的讨论，委员会决定成立一个小组，在一个月内收集新的报价并提交报告。";

const STATUSES: [&str; 4] = ["pending", "paid", "shipped", "delivered"];
const CURRENCIES: [&str; 3] = ["EUR", "USD", "JPY"];

fn json_sample() -> String {
    let rows: Vec<serde_json::Value> = (0..300)
        .map(|i| {
            serde_json::json!({
                "order_id": 7_300_000_000_000_000_000u64 + i * 7919,
                "customer_id": 1 + (i * 37) % 300,
                "status": STATUSES[(i % 4) as usize],
                "amount": (500 + (i * 7717) % 250_000) as f64 / 100.0,
                "currency": CURRENCIES[(i % 3) as usize],
                "created_at": format!("2025-{:02}-{:02}T{:02}:{:02}:00Z", 1 + i % 12, 1 + i % 28, i % 24, i % 60),
            })
        })
        .collect();
    serde_json::to_string(&rows).unwrap()
}

fn check(label: &str, text: &str) {
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let real = bpe.encode_ordinary(text).len() as f64;
    let est = estimate(text) as f64;
    let ratio = est / real;
    println!("{label}: estimate {est} real {real} ratio {ratio:.3}");
    assert!(
        (0.85..=1.15).contains(&ratio),
        "{label}: estimate {est} vs o200k {real} (ratio {ratio:.3})"
    );
}

#[test]
fn prose() {
    check("prose", &PROSE.repeat(5));
}

#[test]
fn json() {
    check("json", &json_sample());
}

#[test]
fn pretty_json() {
    let v: serde_json::Value = serde_json::from_str(&json_sample()).unwrap();
    check("pretty json", &serde_json::to_string_pretty(&v).unwrap());
}

#[test]
fn code() {
    check("rust code", include_str!("../src/config/mod.rs"));
    check("python code", include_str!("fixtures/testserver.py"));
}

#[test]
fn cjk() {
    check("cjk", &CJK.repeat(5));
}
