//! The sample server's tools: their definitions as rmcp model types, and what each call
//! returns. Results are built from [`super::data`], so the same arguments always give the
//! same bytes. A bad argument is a tool result with `isError: true`, never a protocol error.

use super::data;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;

/// The sample server's tools, as its `tools/list` gives them.
pub fn tools() -> Vec<Tool> {
    let read_only = || ToolAnnotations::new().read_only(true).open_world(false);
    vec![
        Tool::new(
            "get_weather",
            "Current weather for a city (small result).",
            schema(json!({
                "type": "object",
                "properties": { "city": { "type": "string" } },
                "required": ["city"]
            })),
        )
        .with_title("Current weather")
        .with_annotations(read_only()),
        Tool::new(
            "list_orders",
            "Orders as a JSON array: order_id, customer_id, status, amount, currency, items, created_at. Large.",
            schema(json!({ "type": "object", "properties": {
                "limit": { "type": "integer", "minimum": 1, "maximum": 100000, "default": 1000 },
                "status": { "type": "string", "enum": ["pending", "paid", "shipped", "delivered", "refunded", "cancelled"] }
            } })),
        )
        .with_title("List orders")
        .with_annotations(read_only()),
        Tool::new(
            "list_customers",
            "Customers wrapped in {customers, total, next_cursor}. Joins with orders on customer_id.",
            schema(json!({ "type": "object", "properties": {
                "limit": { "type": "integer", "minimum": 1, "maximum": 300, "default": 300 }
            } })),
        )
        .with_title("List customers")
        .with_annotations(read_only()),
        Tool::new(
            "tail_logs",
            "The last N lines of the service log as plain text. Large.",
            schema(json!({ "type": "object", "properties": {
                "lines": { "type": "integer", "minimum": 1, "maximum": 1000000, "default": 3000 }
            } })),
        )
        .with_title("Tail service logs")
        .with_annotations(read_only()),
        Tool::new(
            "cancel_order",
            "Cancels an order. Destructive.",
            schema(json!({
                "type": "object",
                "properties": { "order_id": { "type": "integer" } },
                "required": ["order_id"]
            })),
        )
        .with_title("Cancel an order")
        .with_annotations(
            ToolAnnotations::new()
                .destructive(true)
                .read_only(false)
                .idempotent(true),
        ),
        Tool::new(
            "get_order_details",
            "One order's details by its id: carrier, tracking, promised date and its lines (sku, quantity, unit price). An unknown id is an error. format \"text\" gives a one-line summary instead.",
            schema(json!({
                "type": "object",
                "properties": {
                    "order_id": { "type": "integer", "description": "the order's id, as list_orders gives it" },
                    "format": { "type": "string", "enum": ["json", "text"], "default": "json" }
                },
                "required": ["order_id"]
            })),
        )
        .with_title("Order details")
        .with_annotations(read_only()),
        Tool::new(
            "write_note",
            "Writes a note (a ticket comment) with a title and a body. Destructive: it changes the ticket.",
            schema(json!({
                "type": "object",
                "properties": {
                    "title": { "type": "string" },
                    "body": { "type": "string" }
                },
                "required": ["title", "body"]
            })),
        )
        .with_title("Write a note")
        .with_annotations(
            ToolAnnotations::new()
                .destructive(true)
                .read_only(false)
                .open_world(false),
        ),
        Tool::new(
            "slow_count",
            "Counts to `steps`, one step every `delay_ms`, reporting progress. Cancellable.",
            schema(json!({ "type": "object", "properties": {
                "steps": { "type": "integer", "minimum": 1, "maximum": 1000, "default": 5 },
                "delay_ms": { "type": "integer", "minimum": 0, "maximum": 60000, "default": 200 }
            } })),
        )
        .with_title("Count slowly")
        .with_annotations(read_only()),
    ]
}

/// An input schema written as a JSON literal above; anything but an object is a bug here,
/// and gives an empty schema rather than a panic.
fn schema(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

/// What a caller got wrong in a tool's arguments; the message is the tool's error result.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ArgumentError {
    #[error("`{key}` must be an integer between {min} and {max}")]
    OutOfRange {
        key: &'static str,
        min: u64,
        max: u64,
    },
    #[error("`{key}` must be an integer")]
    NotAnInteger { key: &'static str },
}

/// A tool the sample server does not have: the caller's mistake, answered -32602.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown tool: {0}")]
pub struct UnknownTool(pub String);

fn arg_u64(
    args: &Map<String, Value>,
    key: &'static str,
    default: u64,
    (min, max): (u64, u64),
) -> Result<u64, ArgumentError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => match v.as_u64() {
            Some(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(ArgumentError::OutOfRange { key, min, max }),
        },
    }
}

pub fn text_result(text: String) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    // A success says nothing about errors, as it did before rmcp: `isError` stays absent.
    r.is_error = None;
    r
}

pub fn error_result(e: ArgumentError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(e.to_string())])
}

/// `slow_count`'s arguments: how many steps, and how long each one takes.
pub struct Count {
    pub steps: u64,
    pub delay: Duration,
}

/// What a call asks for: a result now, or a count that reports progress as it goes.
pub enum Call {
    Done(CallToolResult),
    Count(Count),
}

/// Runs every tool but `slow_count`, which needs the request's progress and cancellation
/// and so runs in the handler.
pub fn call(name: &str, args: &Map<String, Value>) -> Result<Call, UnknownTool> {
    let done = |r: CallToolResult| Call::Done(r);
    let result = match name {
        "get_weather" => {
            let city = args.get("city").and_then(Value::as_str).unwrap_or("Lisbon");
            let mut rng = data::Rng::new(
                city.bytes()
                    .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64)),
            );
            let sky = ["clear", "cloudy", "light rain", "windy"][rng.below(4) as usize];
            Ok(done(text_result(format!(
                "{city}: {}°C, {sky}, humidity {}%",
                5 + rng.below(25),
                30 + rng.below(60)
            ))))
        }
        "list_orders" => arg_u64(args, "limit", 1000, (1, 100_000)).map(|limit| {
            let status = args.get("status").and_then(Value::as_str);
            done(text_result(
                Value::Array(data::orders(limit, status)).to_string(),
            ))
        }),
        "list_customers" => arg_u64(args, "limit", 300, (1, 300)).map(|limit| {
            let rows = data::customers(limit);
            let total = rows.len();
            done(text_result(
                json!({ "customers": rows, "total": total, "next_cursor": null }).to_string(),
            ))
        }),
        "tail_logs" => arg_u64(args, "lines", 3000, (1, 1_000_000))
            .map(|n| done(text_result(data::log_lines(n)))),
        "cancel_order" => match args.get("order_id").and_then(Value::as_u64) {
            Some(id) => Ok(done(text_result(format!("order {id} cancelled")))),
            None => Err(ArgumentError::NotAnInteger { key: "order_id" }),
        },
        "get_order_details" => match args.get("order_id").and_then(Value::as_u64) {
            Some(id) => {
                let text = args.get("format").and_then(Value::as_str) == Some("text");
                Ok(done(match data::order_details(id) {
                    Some(d) if text => text_result(data::order_summary(&d)),
                    Some(d) => text_result(d.to_string()),
                    None => {
                        CallToolResult::error(vec![ContentBlock::text(format!("no order {id}"))])
                    }
                }))
            }
            None => Err(ArgumentError::NotAnInteger { key: "order_id" }),
        },
        "write_note" => {
            let title = args
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let body = args.get("body").and_then(Value::as_str).unwrap_or_default();
            Ok(done(text_result(data::note_receipt(title, body))))
        }
        "slow_count" => arg_u64(args, "steps", 5, (1, 1000)).and_then(|steps| {
            let delay = arg_u64(args, "delay_ms", 200, (0, 60_000))?;
            Ok(Call::Count(Count {
                steps,
                delay: Duration::from_millis(delay),
            }))
        }),
        other => return Err(UnknownTool(other.to_owned())),
    };
    Ok(result.unwrap_or_else(|e| done(error_result(e))))
}
