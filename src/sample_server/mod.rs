//! `loom sample-server`: a built-in downstream MCP server on stdio with realistic tools, some
//! returning small results and some large tables and logs. It serves both eras (`initialize`
//! and `server/discover`), reports progress, and honours cancellation. The demo config and the
//! tests use it; it must never need the network.

pub mod conformance;
mod data;

use crate::jsonrpc::{self, Kind, Line, LineReader, RawMessage, code};
use crate::protocol;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

fn tools() -> Value {
    let read_only = json!({ "readOnlyHint": true, "openWorldHint": false });
    json!([
        {
            "name": "get_weather",
            "title": "Current weather",
            "description": "Current weather for a city (small result).",
            "inputSchema": { "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] },
            "annotations": read_only,
        },
        {
            "name": "list_orders",
            "title": "List orders",
            "description": "Orders as a JSON array: order_id, customer_id, status, amount, currency, items, created_at. Large.",
            "inputSchema": { "type": "object", "properties": {
                "limit": { "type": "integer", "minimum": 1, "maximum": 100000, "default": 1000 },
                "status": { "type": "string", "enum": ["pending", "paid", "shipped", "delivered", "refunded", "cancelled"] }
            } },
            "annotations": read_only,
        },
        {
            "name": "list_customers",
            "title": "List customers",
            "description": "Customers wrapped in {customers, total, next_cursor}. Joins with orders on customer_id.",
            "inputSchema": { "type": "object", "properties": { "limit": { "type": "integer", "minimum": 1, "maximum": 300, "default": 300 } } },
            "annotations": read_only,
        },
        {
            "name": "tail_logs",
            "title": "Tail service logs",
            "description": "The last N lines of the service log as plain text. Large.",
            "inputSchema": { "type": "object", "properties": { "lines": { "type": "integer", "minimum": 1, "maximum": 1000000, "default": 3000 } } },
            "annotations": read_only,
        },
        {
            "name": "cancel_order",
            "title": "Cancel an order",
            "description": "Cancels an order. Destructive.",
            "inputSchema": { "type": "object", "properties": { "order_id": { "type": "integer" } }, "required": ["order_id"] },
            "annotations": { "destructiveHint": true, "readOnlyHint": false, "idempotentHint": true },
        },
        {
            "name": "slow_count",
            "title": "Count slowly",
            "description": "Counts to `steps`, one step every `delay_ms`, reporting progress. Cancellable.",
            "inputSchema": { "type": "object", "properties": {
                "steps": { "type": "integer", "minimum": 1, "maximum": 1000, "default": 5 },
                "delay_ms": { "type": "integer", "minimum": 0, "maximum": 60000, "default": 200 }
            } },
            "annotations": read_only,
        }
    ])
}

fn text_result(text: String) -> Value {
    json!({ "content": [{ "type": "text", "text": text }] })
}

fn error_result(text: String) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "isError": true })
}

fn arg_u64(args: &Map<String, Value>, key: &str, default: u64, max: u64) -> Result<u64, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => match v.as_u64() {
            Some(n) if (1..=max).contains(&n) || (n == 0 && key == "delay_ms") => Ok(n),
            _ => Err(format!("`{key}` must be an integer between 1 and {max}")),
        },
    }
}

struct Server {
    out: mpsc::UnboundedSender<String>,
    cancelled: Mutex<HashMap<String, Arc<tokio::sync::Notify>>>,
}

impl Server {
    fn send(&self, line: String) {
        let _ = self.out.send(line);
    }

    async fn call_tool(
        &self,
        name: &str,
        args: &Map<String, Value>,
        progress: Option<Value>,
        cancel: Arc<tokio::sync::Notify>,
    ) -> Option<Value> {
        let result = match name {
            "get_weather" => {
                let city = args.get("city").and_then(Value::as_str).unwrap_or("Lisbon");
                let mut rng = data::Rng::new(
                    city.bytes()
                        .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64)),
                );
                let sky = ["clear", "cloudy", "light rain", "windy"][rng.below(4) as usize];
                Ok(text_result(format!(
                    "{city}: {}°C, {sky}, humidity {}%",
                    5 + rng.below(25),
                    30 + rng.below(60)
                )))
            }
            "list_orders" => arg_u64(args, "limit", 1000, 100_000).map(|limit| {
                let status = args.get("status").and_then(Value::as_str);
                text_result(Value::Array(data::orders(limit, status)).to_string())
            }),
            "list_customers" => arg_u64(args, "limit", 300, 300).map(|limit| {
                let rows = data::customers(limit);
                let total = rows.len();
                text_result(
                    json!({ "customers": rows, "total": total, "next_cursor": null }).to_string(),
                )
            }),
            "tail_logs" => {
                arg_u64(args, "lines", 3000, 1_000_000).map(|n| text_result(data::log_lines(n)))
            }
            "cancel_order" => match args.get("order_id").and_then(Value::as_u64) {
                Some(id) => Ok(text_result(format!("order {id} cancelled"))),
                None => Err("`order_id` must be an integer".into()),
            },
            "slow_count" => {
                let steps = match arg_u64(args, "steps", 5, 1000) {
                    Ok(s) => s,
                    Err(e) => return Some(error_result(e)),
                };
                let delay = match arg_u64(args, "delay_ms", 200, 60_000) {
                    Ok(d) => d,
                    Err(e) => return Some(error_result(e)),
                };
                for i in 1..=steps {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(delay)) => {}
                        _ = cancel.notified() => return None,
                    }
                    if let Some(token) = &progress {
                        let p = json!({ "progressToken": token, "progress": i, "total": steps, "message": format!("step {i} of {steps}") });
                        self.send(jsonrpc::notification(
                            "notifications/progress",
                            Some(&jsonrpc::to_raw(&p)),
                        ));
                    }
                }
                Ok(text_result(format!("counted to {steps}")))
            }
            other => return Some(json!({ "__error": format!("unknown tool: {other}") })),
        };
        Some(result.unwrap_or_else(error_result))
    }

    async fn handle(self: Arc<Self>, msg: RawMessage) {
        let (Some(id), Some(method)) = (msg.id, msg.method) else {
            return;
        };
        let params: Map<String, Value> = msg
            .params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or_default();
        let key = jsonrpc::to_raw(&id).get().to_owned();
        let info = json!({ "name": "loom-sample", "version": env!("CARGO_PKG_VERSION") });
        let caps = json!({ "tools": { "listChanged": false }, "prompts": {}, "resources": {} });
        let result = match method.as_str() {
            "initialize" => {
                let v = protocol::negotiate_initialize(
                    params.get("protocolVersion").and_then(Value::as_str),
                );
                json!({ "protocolVersion": v, "capabilities": caps, "serverInfo": info, "instructions": "Sample data: orders, customers, logs." })
            }
            "server/discover" => json!({
                "supportedVersions": protocol::SUPPORTED_VERSIONS,
                "capabilities": caps,
                "instructions": "Sample data: orders, customers, logs.",
                "_meta": { protocol::META_SERVER_INFO: info },
                "ttlMs": 0, "cacheScope": "public", "resultType": "complete",
            }),
            "ping" => json!({}),
            "tools/list" => json!({ "tools": tools() }),
            "prompts/list" => json!({ "prompts": [{
                "name": "triage_orders", "description": "Ask for a triage of orders in one status.",
                "arguments": [{ "name": "status", "description": "order status", "required": true }]
            }] }),
            "prompts/get" => {
                let status = params
                    .get("arguments")
                    .and_then(|a| a.get("status"))
                    .and_then(Value::as_str)
                    .unwrap_or("pending");
                json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": format!("Triage the {status} orders: call list_orders with status={status} and summarise by customer.") } }] })
            }
            "resources/list" => {
                json!({ "resources": [{ "uri": "sample://docs/readme", "name": "readme", "mimeType": "text/markdown" }] })
            }
            "resources/templates/list" => {
                json!({ "resourceTemplates": [{ "uriTemplate": "sample://orders/{order_id}", "name": "order", "mimeType": "application/json" }] })
            }
            "resources/read" => {
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if uri == "sample://docs/readme" {
                    json!({ "contents": [{ "uri": uri, "mimeType": "text/markdown", "text": "# Sample server\nOrders, customers and logs for the loom demo.\n" }] })
                } else if let Some(order) = uri.strip_prefix("sample://orders/") {
                    json!({ "contents": [{ "uri": uri, "mimeType": "application/json", "text": json!({ "order_id": order, "status": "paid" }).to_string() }] })
                } else {
                    self.send(jsonrpc::error_response(
                        &id,
                        -32002,
                        &format!("resource not found: {uri}"),
                        None,
                    ));
                    return;
                }
            }
            "tools/call" => {
                let name = params
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let args = params
                    .get("arguments")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                let token = params
                    .get("_meta")
                    .and_then(|m| m.get("progressToken"))
                    .cloned();
                let cancel = Arc::new(tokio::sync::Notify::new());
                self.cancelled
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(key.clone(), cancel.clone());
                let r = self.call_tool(&name, &args, token, cancel).await;
                self.cancelled
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&key);
                match r {
                    None => return,
                    Some(v) if v.get("__error").is_some() => {
                        self.send(jsonrpc::error_response(
                            &id,
                            code::INVALID_PARAMS,
                            v["__error"].as_str().unwrap_or_default(),
                            None,
                        ));
                        return;
                    }
                    Some(v) => v,
                }
            }
            other => {
                self.send(jsonrpc::error_response(
                    &id,
                    code::METHOD_NOT_FOUND,
                    &format!("method not found: {other}"),
                    None,
                ));
                return;
            }
        };
        let mut result = result;
        let modern = params
            .get("_meta")
            .and_then(|m| m.get(protocol::META_PROTOCOL_VERSION))
            .is_some();
        if modern && let Some(obj) = result.as_object_mut() {
            obj.entry("resultType").or_insert(json!("complete"));
        }
        self.send(jsonrpc::response(&id, &jsonrpc::to_raw(&result)));
    }
}

pub async fn serve_stdio() -> anyhow::Result<()> {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(mut line) = rx.recv().await {
            line.push('\n');
            if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let server = Arc::new(Server {
        out: tx,
        cancelled: Mutex::new(HashMap::new()),
    });
    let mut lines = LineReader::new(BufReader::new(tokio::io::stdin()), 16 << 20);
    while let Ok(Some(line)) = lines.next_line().await {
        let Line::Complete(bytes) = line else {
            continue;
        };
        let Ok(msg) = RawMessage::parse(&bytes) else {
            continue;
        };
        match msg.kind() {
            Kind::Request => {
                tokio::spawn(server.clone().handle(msg));
            }
            Kind::Notification if msg.method.as_deref() == Some("notifications/cancelled") => {
                let req = msg
                    .params
                    .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                    .map(|p| p["requestId"].to_string());
                if let Some(req) = req
                    && let Some(n) = server
                        .cancelled
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get(&req)
                {
                    n.notify_one();
                }
            }
            _ => {}
        }
    }
    drop(server);
    let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
    Ok(())
}
