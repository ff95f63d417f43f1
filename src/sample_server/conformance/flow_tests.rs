//! The fixture's interactive side as the conformance suite sees it: `input_required` rounds
//! and their sealed state, client capabilities, real questions to a legacy client, cancellation,
//! and `subscriptions/listen`.

use super::tests::{Client, all_caps, modern_meta, names};
use super::*;

#[tokio::test]
async fn input_required_round_trips_in_the_2026_era() {
    let mut c = Client::new();
    let call = |answers: Option<Value>, state: Option<&Value>| {
        let mut p = json!({ "name": "test_input_required_result_elicitation", "arguments": {} });
        if let Some(a) = answers {
            p["inputResponses"] = a;
        }
        if let Some(s) = state {
            p["requestState"] = s.clone();
        }
        p
    };
    let first = c.modern("tools/call", call(None, None), all_caps()).await;
    let r = first.result();
    assert_eq!(r["resultType"], "input_required");
    assert_eq!(
        r["inputRequests"]["user_name"]["method"],
        "elicitation/create"
    );
    assert!(r.get("ttlMs").is_none());
    let answer = json!({ "user_name": { "action": "accept", "content": { "name": "Alice" } } });
    let done = c
        .modern("tools/call", call(Some(answer), None), all_caps())
        .await;
    assert_eq!(done.result()["resultType"], "complete");
    assert_eq!(done.result()["content"][0]["text"], "Hello, Alice!");
    let wrong = json!({ "wrong_key": { "action": "accept", "content": {} } });
    let again = c
        .modern("tools/call", call(Some(wrong), None), all_caps())
        .await;
    assert_eq!(again.result()["resultType"], "input_required");
    for bad in [json!({ "user_name": 12345 }), Value::Null] {
        let r = c
            .modern("tools/call", call(Some(bad), None), all_caps())
            .await;
        assert_eq!(r.error()["code"], code::INVALID_PARAMS);
    }
    // Only tools, prompts and resources may ask; lists never do.
    for method in ["tools/list", "prompts/list"] {
        let r = c.modern(method, json!({}), all_caps()).await;
        assert_eq!(r.result()["resultType"], "complete");
    }
}

#[tokio::test]
async fn request_state_is_sealed_and_evolves_over_rounds() {
    let mut c = Client::new();
    let tool = "test_input_required_result_multi_round";
    let r1 = c
        .modern(
            "tools/call",
            json!({ "name": tool, "arguments": {} }),
            all_caps(),
        )
        .await;
    let s1 = r1.result()["requestState"].clone();
    assert!(s1.is_string());
    let r2 = c
        .modern(
            "tools/call",
            json!({ "name": tool, "arguments": {}, "requestState": s1,
                    "inputResponses": { "step1": { "action": "accept", "content": { "name": "Alice" } } } }),
            all_caps(),
        )
        .await;
    let s2 = r2.result()["requestState"].clone();
    assert_eq!(r2.result()["resultType"], "input_required");
    assert!(r2.result()["inputRequests"]["step2"].is_object());
    assert_ne!(s1, s2);
    let r3 = c
        .modern(
            "tools/call",
            json!({ "name": tool, "arguments": {}, "requestState": s2,
                    "inputResponses": { "step2": { "action": "accept", "content": { "color": "blue" } } } }),
            all_caps(),
        )
        .await;
    assert_eq!(
        r3.result()["content"][0]["text"],
        "Alice's favorite color is blue."
    );

    let tool = "test_input_required_result_tampered_state";
    let first = c
        .modern(
            "tools/call",
            json!({ "name": tool, "arguments": {} }),
            all_caps(),
        )
        .await;
    let state = first.result()["requestState"].as_str().unwrap().to_owned();
    let confirm = json!({ "confirm": { "action": "accept", "content": { "ok": true } } });
    let tampered = c
        .modern(
            "tools/call",
            json!({ "name": tool, "arguments": {}, "inputResponses": confirm,
                    "requestState": format!("{state}-TAMPERED") }),
            all_caps(),
        )
        .await;
    assert_eq!(tampered.error()["code"], code::INVALID_PARAMS);
    let honest = c
        .modern(
            "tools/call",
            json!({ "name": tool, "arguments": {}, "inputResponses": confirm, "requestState": state }),
            all_caps(),
        )
        .await;
    assert!(
        honest.result()["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("state-ok")
    );
}

#[tokio::test]
async fn undeclared_capabilities_are_refused_or_left_out() {
    let mut c = Client::new();
    let refused = c
        .modern(
            "tools/call",
            json!({ "name": "test_missing_capability", "arguments": {} }),
            json!({}),
        )
        .await;
    assert_eq!(refused.error()["code"], protocol::MISSING_CLIENT_CAPABILITY);
    assert_eq!(
        refused.error()["data"]["requiredCapabilities"],
        json!({ "sampling": {} })
    );
    let asked = c
        .modern(
            "tools/call",
            json!({ "name": "test_input_required_result_capabilities", "arguments": {} }),
            json!({ "sampling": {} }),
        )
        .await;
    let requests = asked.result()["inputRequests"].as_object().unwrap();
    let methods: Vec<&str> = requests
        .values()
        .filter_map(|r| r["method"].as_str())
        .collect();
    assert_eq!(methods, ["sampling/createMessage"]);
    let streaming = c
        .modern(
            "tools/call",
            json!({ "name": "test_streaming_elicitation", "arguments": {} }),
            json!({ "elicitation": {} }),
        )
        .await;
    assert!(streaming.notes.is_empty());
    assert_eq!(streaming.result()["resultType"], "input_required");
}

#[tokio::test]
async fn a_legacy_client_is_asked_for_real() {
    let mut c = Client::legacy(all_caps()).await;
    let mut asked = Vec::new();
    let sampled = c
        .request_answering(
            "tools/call",
            json!({ "name": "test_sampling", "arguments": { "prompt": "Test prompt" } }),
            |method, params| {
                asked.push((method.to_owned(), params.clone()));
                json!({ "role": "assistant", "content": { "type": "text", "text": "Hi there" }, "model": "m", "stopReason": "endTurn" })
            },
        )
        .await;
    assert_eq!(
        sampled.result()["content"][0]["text"],
        "LLM response: Hi there"
    );
    assert_eq!(asked[0].0, "sampling/createMessage");
    assert_eq!(asked[0].1["messages"][0]["content"]["text"], "Test prompt");
    assert_eq!(asked[0].1["maxTokens"], 100);

    let mut schema = Value::Null;
    let defaults = c
        .request_answering(
            "tools/call",
            json!({ "name": "test_elicitation_sep1034_defaults", "arguments": {} }),
            |method, params| {
                assert_eq!(method, "elicitation/create");
                schema = params["requestedSchema"].clone();
                json!({ "action": "accept", "content": { "name": "Jane" } })
            },
        )
        .await;
    assert!(
        defaults.result()["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Elicitation completed: action=accept")
    );
    let p = &schema["properties"];
    assert_eq!(
        (
            &p["name"]["default"],
            &p["age"]["default"],
            &p["score"]["default"],
            &p["status"]["default"],
            &p["verified"]["default"]
        ),
        (
            &json!("John Doe"),
            &json!(30),
            &json!(95.5),
            &json!("active"),
            &json!(true)
        )
    );

    let mut rounds = 0;
    let multi = c
        .request_answering(
            "tools/call",
            json!({ "name": "test_input_required_result_multi_round", "arguments": {} }),
            |_, params| {
                rounds += 1;
                let field = if params["message"].as_str().unwrap().contains("color") {
                    json!({ "color": "green" })
                } else {
                    json!({ "name": "Bo" })
                };
                json!({ "action": "accept", "content": field })
            },
        )
        .await;
    assert_eq!(rounds, 2);
    assert_eq!(
        multi.result()["content"][0]["text"],
        "Bo's favorite color is green."
    );

    let prompt = c
        .request_answering(
            "prompts/get",
            json!({ "name": "test_input_required_result_prompt" }),
            |_, _| json!({ "action": "accept", "content": { "context": "tests" } }),
        )
        .await;
    assert_eq!(
        prompt.result()["messages"][0]["content"]["text"],
        "Use this context: tests"
    );
}

#[tokio::test]
async fn a_legacy_client_without_the_capability_gets_a_tool_error() {
    let mut c = Client::legacy(json!({})).await;
    let r = c
        .request(
            "tools/call",
            json!({ "name": "test_elicitation", "arguments": { "message": "Hi" } }),
        )
        .await;
    assert_eq!(r.result()["isError"], true);
    assert!(
        r.result()["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("elicitation capability")
    );
}

#[tokio::test]
async fn a_cancelled_question_is_forgotten_and_nothing_answers() {
    let mut c = Client::legacy(all_caps()).await;
    let call = json!({ "jsonrpc": "2.0", "id": 99, "method": "tools/call",
                       "params": { "name": "test_elicitation", "arguments": { "message": "Hi" } } });
    c.fixture.receive(call.to_string().as_bytes());
    let asked: Value = serde_json::from_str(&c.rx.recv().await.unwrap()).unwrap();
    assert_eq!(asked["method"], "elicitation/create");
    c.fixture.receive(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#,
    );
    assert!(c.drain().await.is_empty());
    let late = json!({ "jsonrpc": "2.0", "id": asked["id"], "result": { "action": "cancel" } });
    c.fixture.receive(late.to_string().as_bytes());
    assert!(c.drain().await.is_empty());
}

#[tokio::test]
async fn listeners_are_acknowledged_first_and_get_only_what_they_asked_for() {
    let mut c = Client::new();
    let open = |id: u64, filter: Value| {
        let mut params = json!({ "notifications": filter });
        params["_meta"] = modern_meta(json!({}));
        json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params })
    };
    c.fixture.receive(
        open(500, json!({ "toolsListChanged": true }))
            .to_string()
            .as_bytes(),
    );
    c.fixture.receive(
        open(501, json!({ "promptsListChanged": true, "resourceSubscriptions": ["test://watched-resource", "test://nope"] }))
            .to_string()
            .as_bytes(),
    );
    let acks = c.drain().await;
    assert_eq!(acks.len(), 2);
    for (ack, id) in acks.iter().zip([500, 501]) {
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(ack["params"]["_meta"][META_SUBSCRIPTION_ID], id);
    }
    assert_eq!(
        acks[1]["params"]["notifications"]["resourceSubscriptions"],
        json!(["test://watched-resource"])
    );

    let trigger = c
        .modern(
            "tools/call",
            json!({ "name": "test_trigger_tool_change", "arguments": {} }),
            json!({}),
        )
        .await;
    assert_eq!(trigger.methods(), ["notifications/tools/list_changed"]);
    assert_eq!(
        trigger.notes[0]["params"]["_meta"][META_SUBSCRIPTION_ID],
        500
    );
    let tools = c.modern("tools/list", json!({}), json!({})).await;
    assert!(names(&tools.result()["tools"]).contains(&catalog::DYNAMIC_TOOL));
    let dynamic = c
        .modern(
            "tools/call",
            json!({ "name": catalog::DYNAMIC_TOOL, "arguments": {} }),
            json!({}),
        )
        .await;
    assert_eq!(
        dynamic.result()["content"][0]["text"],
        "The dynamic tool ran."
    );

    let prompts = c
        .modern(
            "tools/call",
            json!({ "name": "test_trigger_prompt_change", "arguments": {} }),
            json!({}),
        )
        .await;
    assert_eq!(prompts.methods(), ["notifications/prompts/list_changed"]);
    assert_eq!(
        prompts.notes[0]["params"]["_meta"][META_SUBSCRIPTION_ID],
        501
    );

    // A cancelled listener hears nothing more, and the listen request is never answered.
    c.fixture.receive(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":500}}"#,
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    let after = c
        .modern(
            "tools/call",
            json!({ "name": "test_trigger_tool_change", "arguments": {} }),
            json!({}),
        )
        .await;
    assert!(after.notes.is_empty());
    let tools = c.modern("tools/list", json!({}), json!({})).await;
    assert!(!names(&tools.result()["tools"]).contains(&catalog::DYNAMIC_TOOL));
    assert!(c.drain().await.is_empty());
}

/// A request is handled as it is read until it first waits, as by a server reading one message
/// at a time: a listen stream is acknowledged and a legacy subscription answered before the
/// next line is read, so an update a later request causes reaches them.
#[tokio::test]
async fn a_subscription_is_in_effect_before_the_next_line_is_read() {
    let mut c = Client::new();
    let mut params =
        json!({ "notifications": { "resourceSubscriptions": ["test://watched-resource"] } });
    params["_meta"] = modern_meta(json!({}));
    let listen =
        json!({ "jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": params });
    c.fixture.receive(listen.to_string().as_bytes());
    let ack: Value = serde_json::from_str(&c.rx.try_recv().expect("acknowledged at once")).unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");

    let mut c = Client::legacy(all_caps()).await;
    let subscribe = json!({ "jsonrpc": "2.0", "id": 8, "method": "resources/subscribe",
                            "params": { "uri": "test://watched-resource" } });
    c.fixture.receive(subscribe.to_string().as_bytes());
    let answer: Value = serde_json::from_str(&c.rx.try_recv().expect("answered at once")).unwrap();
    assert_eq!(answer["id"], 8);
    assert!(answer.get("result").is_some(), "{answer}");
}
