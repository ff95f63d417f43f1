//! The fixture as the conformance suite sees it, driven line by line in both eras: lists,
//! content, logging, progress, resources, prompts, completion. The harness is shared with
//! `flow_tests`.

use super::*;

/// Every tool, prompt and resource the suite's server scenarios (2025-11-25 and 2026-07-28)
/// call by name.
const SUITE_TOOLS: &[&str] = &[
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_error_handling",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_logging_tool",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
];
const SUITE_PROMPTS: &[&str] = &[
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
    "test_input_required_result_prompt",
];

pub(super) struct Client {
    pub(super) fixture: Arc<Fixture>,
    pub(super) rx: mpsc::UnboundedReceiver<String>,
    next: u64,
}

/// What came back for one request: the notifications on the way, then the response.
pub(super) struct Exchange {
    pub(super) notes: Vec<Value>,
    pub(super) response: Value,
}

impl Exchange {
    pub(super) fn result(&self) -> &Value {
        assert!(
            self.response.get("error").is_none(),
            "unexpected error: {}",
            self.response
        );
        &self.response["result"]
    }

    pub(super) fn error(&self) -> &Value {
        assert!(
            self.response.get("result").is_none(),
            "expected an error, got {}",
            self.response
        );
        &self.response["error"]
    }

    pub(super) fn methods(&self) -> Vec<&str> {
        self.notes
            .iter()
            .filter_map(|n| n["method"].as_str())
            .collect()
    }
}

pub(super) fn modern_meta(caps: Value) -> Value {
    json!({
        protocol::META_PROTOCOL_VERSION: protocol::V_2026_07_28,
        protocol::META_CLIENT_CAPABILITIES: caps,
        protocol::META_CLIENT_INFO: { "name": "t", "version": "1" },
    })
}

pub(super) fn all_caps() -> Value {
    json!({ "sampling": {}, "elicitation": {}, "roots": { "listChanged": true } })
}

impl Client {
    pub(super) fn new() -> Client {
        let (tx, rx) = mpsc::unbounded_channel();
        Client {
            fixture: Arc::new(Fixture::with_seal(tx, seal::Seal::with_key([3; 32]))),
            rx,
            next: 1,
        }
    }

    pub(super) async fn legacy(caps: Value) -> Client {
        let mut c = Client::new();
        let init = c
            .request(
                "initialize",
                json!({ "protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": { "name": "t", "version": "1" } }),
            )
            .await;
        assert_eq!(init.result()["protocolVersion"], "2025-11-25");
        c.fixture
            .receive(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        c
    }

    pub(super) async fn request(&mut self, method: &str, params: Value) -> Exchange {
        self.request_answering(method, params, |m, _| panic!("unexpected question {m}"))
            .await
    }

    /// Sends a request modern-style: the params with the 2026-07-28 `_meta` added.
    pub(super) async fn modern(
        &mut self,
        method: &str,
        mut params: Value,
        caps: Value,
    ) -> Exchange {
        params["_meta"] = modern_meta(caps);
        self.request(method, params).await
    }

    /// Sends one request and collects what comes back until its response, answering the
    /// fixture's own requests with `answer`.
    pub(super) async fn request_answering(
        &mut self,
        method: &str,
        params: Value,
        mut answer: impl FnMut(&str, &Value) -> Value,
    ) -> Exchange {
        let id = self.next;
        self.next += 1;
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.fixture.receive(line.to_string().as_bytes());
        let mut notes = Vec::new();
        loop {
            let line = tokio::time::timeout(Duration::from_secs(5), self.rx.recv())
                .await
                .expect("the fixture answers within 5 s")
                .expect("the fixture is alive");
            let msg: Value = serde_json::from_str(&line).unwrap();
            match (msg.get("id"), msg.get("method")) {
                (Some(i), None) if *i == json!(id) => {
                    return Exchange {
                        notes,
                        response: msg,
                    };
                }
                (Some(i), Some(m)) => {
                    let result = answer(m.as_str().unwrap(), &msg["params"]);
                    let reply = json!({ "jsonrpc": "2.0", "id": i, "result": result });
                    self.fixture.receive(reply.to_string().as_bytes());
                }
                (None, Some(_)) => notes.push(msg),
                _ => panic!("unexpected line {line}"),
            }
        }
    }

    /// Lines the fixture sent on its own, within a short wait.
    pub(super) async fn drain(&mut self) -> Vec<Value> {
        let mut got = Vec::new();
        while let Ok(Some(line)) =
            tokio::time::timeout(Duration::from_millis(100), self.rx.recv()).await
        {
            got.push(serde_json::from_str(&line).unwrap());
        }
        got
    }
}

pub(super) fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["name"].as_str())
        .collect()
}

#[tokio::test]
async fn every_fixture_the_suite_calls_is_listed_in_both_eras() {
    let mut c = Client::legacy(json!({})).await;
    let tools = c.request("tools/list", json!({})).await;
    let prompts = c.request("prompts/list", json!({})).await;
    for name in SUITE_TOOLS {
        assert!(names(&tools.result()["tools"]).contains(name), "{name}");
    }
    for name in SUITE_PROMPTS {
        assert!(names(&prompts.result()["prompts"]).contains(name), "{name}");
    }
    for tool in tools.result()["tools"].as_array().unwrap() {
        assert!(tool["description"].is_string() && tool["inputSchema"]["type"] == "object");
    }
    assert!(tools.result().get("resultType").is_none());

    let modern = c.modern("tools/list", json!({}), json!({})).await;
    assert_eq!(modern.result()["tools"], tools.result()["tools"]);
    assert_eq!(modern.result()["resultType"], "complete");
    assert_eq!(modern.result()["ttlMs"], 0);
    assert_eq!(modern.result()["cacheScope"], "public");
    let resources = c.modern("resources/list", json!({}), json!({})).await;
    let uris: Vec<&str> = resources.result()["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert_eq!(
        uris,
        [
            "test://static-text",
            "test://static-binary",
            "test://watched-resource"
        ]
    );
    let templates = c
        .modern("resources/templates/list", json!({}), json!({}))
        .await;
    assert_eq!(
        templates.result()["resourceTemplates"][0]["uriTemplate"],
        "test://template/{id}/data"
    );
}

#[tokio::test]
async fn content_tools_return_the_shapes_the_suite_checks() {
    let mut c = Client::legacy(json!({})).await;
    let call = |name: &str| json!({ "name": name, "arguments": {} });
    let text = c.request("tools/call", call("test_simple_text")).await;
    assert_eq!(
        text.result()["content"][0]["text"],
        "This is a simple text response for testing."
    );
    let image = c.request("tools/call", call("test_image_content")).await;
    assert_eq!(image.result()["content"][0]["mimeType"], "image/png");
    let audio = c.request("tools/call", call("test_audio_content")).await;
    assert_eq!(audio.result()["content"][0]["type"], "audio");
    assert_eq!(audio.result()["content"][0]["mimeType"], "audio/wav");
    let embedded = c
        .request("tools/call", call("test_embedded_resource"))
        .await;
    assert_eq!(
        embedded.result()["content"][0]["resource"]["uri"],
        "test://embedded-resource"
    );
    let mixed = c
        .request("tools/call", call("test_multiple_content_types"))
        .await;
    let kinds: Vec<&str> = mixed.result()["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["type"].as_str())
        .collect();
    assert_eq!(kinds, ["text", "image", "resource"]);
    let error = c.request("tools/call", call("test_error_handling")).await;
    assert_eq!(error.result()["isError"], true);
    let unknown = c.request("tools/call", call("no_such_tool")).await;
    assert_eq!(unknown.error()["code"], code::INVALID_PARAMS);
}

#[tokio::test]
async fn progress_goes_to_the_requests_token_in_rising_order() {
    let mut c = Client::new();
    let call = c
        .modern(
            "tools/call",
            json!({ "name": "test_tool_with_progress", "arguments": {}, "_meta": {} }),
            json!({}),
        )
        .await;
    // `modern` replaced `_meta`; with no token there is no progress.
    assert!(call.notes.is_empty());
    let mut params = json!({ "name": "test_tool_with_progress", "arguments": {} });
    let mut meta = modern_meta(json!({}));
    meta["progressToken"] = json!("p-1");
    params["_meta"] = meta;
    let call = c.request("tools/call", params).await;
    let progress: Vec<i64> = call
        .notes
        .iter()
        .filter(|n| {
            n["method"] == "notifications/progress" && n["params"]["progressToken"] == "p-1"
        })
        .map(|n| n["params"]["progress"].as_i64().unwrap())
        .collect();
    assert_eq!(progress, [0, 50, 100]);
    assert_eq!(call.result()["resultType"], "complete");
}

#[tokio::test]
async fn logs_follow_the_level_of_each_era() {
    let mut c = Client::legacy(json!({})).await;
    let call = json!({ "name": "test_tool_with_logging", "arguments": {} });
    let unset = c.request("tools/call", call.clone()).await;
    assert_eq!(unset.methods(), ["notifications/message"; 3]);
    assert_eq!(
        c.request("logging/setLevel", json!({ "level": "warning" }))
            .await
            .result(),
        &json!({})
    );
    assert!(c.request("tools/call", call.clone()).await.notes.is_empty());
    c.request("logging/setLevel", json!({ "level": "debug" }))
        .await;
    assert_eq!(c.request("tools/call", call).await.notes.len(), 3);

    // A 2026-07-28 request gets logs only when it names a level itself.
    let mut m = Client::new();
    let quiet = m
        .modern(
            "tools/call",
            json!({ "name": "test_logging_tool", "arguments": {} }),
            json!({}),
        )
        .await;
    assert!(quiet.notes.is_empty());
    let mut params = json!({ "name": "test_logging_tool", "arguments": {} });
    let mut meta = modern_meta(json!({}));
    meta[protocol::META_LOG_LEVEL] = json!("info");
    params["_meta"] = meta;
    let loud = m.request("tools/call", params).await;
    assert_eq!(loud.notes.len(), 3);
    assert_eq!(loud.notes[0]["params"]["data"], "Tool execution started");
}

#[tokio::test]
async fn a_stateless_request_is_checked_and_removed_methods_are_not_found() {
    let mut c = Client::new();
    for method in REMOVED_IN_2026 {
        let r = c.modern(method, json!({}), json!({})).await;
        assert_eq!(r.error()["code"], code::METHOD_NOT_FOUND, "{method}");
    }
    let mut params = json!({});
    params["_meta"] = modern_meta(json!({}));
    params["_meta"][protocol::META_PROTOCOL_VERSION] = json!("v999.0.0");
    let r = c.request("tools/list", params).await;
    assert_eq!(r.error()["code"], protocol::UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(r.error()["data"]["requested"], "v999.0.0");
    assert_eq!(r.error()["data"]["supported"], json!(["2026-07-28"]));
    let r = c
        .request(
            "tools/list",
            json!({ "_meta": { protocol::META_PROTOCOL_VERSION: "2026-07-28" } }),
        )
        .await;
    assert_eq!(r.error()["code"], code::INVALID_PARAMS);
    let discover = c.modern("server/discover", json!({}), json!({})).await;
    assert!(
        discover.result()["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    assert_eq!(
        discover.result()["_meta"][protocol::META_SERVER_INFO]["name"],
        "loom-conformance-fixture"
    );
    assert_eq!(discover.result()["cacheScope"], "public");
}

#[tokio::test]
async fn resources_read_and_miss_by_era() {
    let mut c = Client::legacy(json!({})).await;
    let text = c
        .request("resources/read", json!({ "uri": "test://static-text" }))
        .await;
    assert_eq!(
        text.result()["contents"][0]["text"],
        "This is the content of the static text resource."
    );
    let binary = c
        .request("resources/read", json!({ "uri": "test://static-binary" }))
        .await;
    assert_eq!(binary.result()["contents"][0]["blob"], catalog::PNG_BASE64);
    let missing = "test://nonexistent-resource-for-conformance-testing";
    let legacy = c.request("resources/read", json!({ "uri": missing })).await;
    assert_eq!(legacy.error()["code"], RESOURCE_NOT_FOUND_LEGACY);
    let modern = c
        .modern("resources/read", json!({ "uri": missing }), json!({}))
        .await;
    assert_eq!(modern.error()["code"], code::INVALID_PARAMS);
    assert_eq!(modern.error()["data"]["uri"], missing);
    let templated = c
        .modern(
            "resources/read",
            json!({ "uri": "test://template/123/data" }),
            json!({}),
        )
        .await;
    assert!(
        templated.result()["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("123")
    );
    assert_eq!(templated.result()["ttlMs"], 0);

    let watched = json!({ "uri": "test://watched-resource" });
    assert_eq!(
        c.request("resources/subscribe", watched.clone())
            .await
            .result(),
        &json!({})
    );
    let update = json!({ "name": "test_trigger_resource_update", "arguments": {} });
    let r = c.request("tools/call", update.clone()).await;
    assert_eq!(r.methods(), ["notifications/resources/updated"]);
    c.request("resources/unsubscribe", watched).await;
    assert!(c.request("tools/call", update).await.notes.is_empty());
}

#[tokio::test]
async fn prompts_substitute_their_arguments() {
    let mut c = Client::new();
    let args = c
        .modern(
            "prompts/get",
            json!({ "name": "test_prompt_with_arguments", "arguments": { "arg1": "hello", "arg2": "world" } }),
            json!({}),
        )
        .await;
    assert_eq!(
        args.result()["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='hello', arg2='world'"
    );
    let embedded = c
        .modern(
            "prompts/get",
            json!({ "name": "test_prompt_with_embedded_resource", "arguments": { "resourceUri": "test://example-resource" } }),
            json!({}),
        )
        .await;
    assert_eq!(
        embedded.result()["messages"][0]["content"]["resource"]["uri"],
        "test://example-resource"
    );
    let image = c
        .modern(
            "prompts/get",
            json!({ "name": "test_prompt_with_image" }),
            json!({}),
        )
        .await;
    assert_eq!(image.result()["messages"][0]["content"]["type"], "image");
    let missing = c
        .modern(
            "prompts/get",
            json!({ "name": "test_prompt_with_arguments", "arguments": { "arg1": "x" } }),
            json!({}),
        )
        .await;
    assert_eq!(missing.error()["code"], code::INVALID_PARAMS);
    let ask = c
        .modern(
            "prompts/get",
            json!({ "name": "test_input_required_result_prompt" }),
            all_caps(),
        )
        .await;
    assert_eq!(
        ask.result()["inputRequests"]["user_context"]["method"],
        "elicitation/create"
    );
    let done = c
        .modern(
            "prompts/get",
            json!({ "name": "test_input_required_result_prompt",
                    "inputResponses": { "user_context": { "action": "accept", "content": { "context": "x" } } } }),
            all_caps(),
        )
        .await;
    assert_eq!(done.result()["resultType"], "complete");
    assert!(done.result()["messages"].is_array());
}

#[tokio::test]
async fn completion_offers_matching_values() {
    let mut c = Client::legacy(json!({})).await;
    let r = c
        .request(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "test_prompt_with_arguments" },
                    "argument": { "name": "arg1", "value": "par" } }),
        )
        .await;
    assert_eq!(
        r.result()["completion"],
        json!({ "values": ["paris", "park", "party"], "total": 3, "hasMore": false })
    );
    let r = c
        .request(
            "completion/complete",
            json!({ "ref": { "type": "ref/resource", "uri": "test://template/{id}/data" },
                    "argument": { "name": "id", "value": "1" } }),
        )
        .await;
    assert_eq!(r.result()["completion"]["values"], json!(["1", "123"]));
    let r = c
        .request(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "nope" }, "argument": { "name": "a", "value": "" } }),
        )
        .await;
    assert_eq!(r.error()["code"], code::INVALID_PARAMS);
}
