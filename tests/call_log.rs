//! The call log through the real `loom serve`: every attacher can read it, so the requests it
//! keeps are redacted like provenance (secrets in arguments never reach a workbench).

mod common;

use common::{RawClient, sample_config};
use loom::frontend::engine::{Engine, Reply, Request};
use loom::frontend::socket::RemoteEngine;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attacher_reads_requests_with_their_secrets_masked() {
    let cfg = sample_config("", "");
    let mut client = RawClient::spawn(&cfg.path);
    client.initialize().await;
    client.tool_names().await;
    let secrets = [
        "hunter2",
        "t0k3nv4lu3",
        "abc123secret",
        "cl13nts3cr3t",
        "51HxYzAbCdEfGh",
        "P@ssw0rd",
    ];
    client
        .call(
            "sample_get_weather",
            json!({
                "city": "Lisbon",
                "password": { "v": "hunter2" },
                "callback": "https://api.example.com/cb?access_token=t0k3nv4lu3&page=2",
                "headers": [["Authorization", "Token abc123secret"]],
                "body": "{\"client_secret\":\"cl13nts3cr3t\"}",
                "note": "charge with sk_live_51HxYzAbCdEfGh1234567890",
                "dsn": "Server=db;User Id=sa;Password=P@ssw0rd;Database=app",
            }),
        )
        .await;
    let entry = common::session_entry(&cfg).await;
    let eng = RemoteEngine::connect(&entry).await.expect("attach");
    let Ok(Reply::Calls { calls }) = eng.request(Request::Calls { limit: 100 }).await else {
        panic!("calls")
    };
    let call = calls
        .iter()
        .find(|c| c.tool == "sample_get_weather")
        .expect("the call is logged");
    for s in secrets {
        assert!(!call.arguments.contains(s), "{s} in {}", call.arguments);
    }
    let Ok(Reply::CallDetail {
        record: Some(record),
    }) = eng.request(Request::CallDetail { call: call.call }).await
    else {
        panic!("call detail")
    };
    for s in secrets {
        assert!(!record.request.contains(s), "{s} in {}", record.request);
    }
    let request: serde_json::Value = serde_json::from_str(&record.request).expect("JSON");
    assert_eq!(request["arguments"]["city"], "Lisbon", "{request}");
    assert!(
        request["arguments"]["callback"]
            .as_str()
            .is_some_and(|u| u.contains("page=2")),
        "{request}"
    );
}
