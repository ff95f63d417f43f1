//! `loom sample-server`: a built-in downstream MCP server on stdio with realistic tools, some
//! returning small results and some large tables and logs, built on rmcp's server API. It
//! serves both eras (`initialize` and `server/discover`, which rmcp negotiates), reports
//! progress, and honours cancellation. The demo config and the tests use it; it must never
//! need the network. (The conformance fixture beside it needs exact control of every byte and
//! stays on loom's own JSON-RPC layer.)

pub mod conformance;
/// The sample data, deterministic, so tests can say what the server must have answered.
pub mod data;
mod tools;

pub use tools::{ArgumentError, UnknownTool, tools};

#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    CustomNotification, CustomRequest, CustomResult, DiscoverResult, ErrorCode,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role, ServerCapabilities,
    ServerConfig, ServerNotification, ToolsCapability,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt};
use serde_json::{Value, json};

const INSTRUCTIONS: &str = "Sample data: orders, customers, logs.";

/// Large resources: every customer as JSON, the service log as text, and a chart as a blob.
const CUSTOMERS_URI: &str = "sample://data/customers.json";
const LOG_URI: &str = "sample://logs/service.log";
const CHART_URI: &str = "sample://images/chart.png";

/// The sample server: stateless, so one value serves every request of the connection.
#[derive(Clone, Copy, Default)]
pub struct SampleServer;

impl SampleServer {
    /// Counts to `count.steps`, reporting progress to `token`; `None` when cancelled, so
    /// no response is sent.
    async fn count(
        &self,
        count: tools::Count,
        token: Option<Value>,
        ctx: &RequestContext<RoleServer>,
    ) -> Option<rmcp::model::CallToolResult> {
        let steps = count.steps;
        for i in 1..=steps {
            tokio::select! {
                _ = tokio::time::sleep(count.delay) => {}
                _ = ctx.ct.cancelled() => return None,
            }
            if let Some(token) = &token {
                // rmcp's typed progress holds floats (1 becomes 1.0); a client comparing
                // counts sees the integers it always saw, so the notification is sent as JSON.
                let params = json!({ "progressToken": token, "progress": i, "total": steps,
                    "message": format!("step {i} of {steps}") });
                let note = CustomNotification::new("notifications/progress", Some(params));
                if ctx
                    .peer
                    .send_notification(ServerNotification::CustomNotification(note))
                    .await
                    .is_err()
                {
                    return None;
                }
            }
        }
        Some(tools::text_result(format!("counted to {steps}")))
    }
}

impl ServerHandler for SampleServer {
    fn get_info(&self) -> ServerConfig {
        let mut caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .enable_resources()
            .build();
        let mut tools = ToolsCapability::default();
        tools.list_changed = Some(false);
        caps.tools = Some(tools);
        ServerConfig::new(caps)
            .with_server_info(Implementation::new(
                "loom-sample",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn discover(&self, _ctx: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        let mut d = DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        );
        // The same for everyone: nothing in it depends on who asks.
        d.cache_scope = CacheScope::Public;
        Ok(d)
    }

    // Logging is deprecated (SEP-2577), and this server logs nothing; only the answer's words
    // are kept.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Err(not_found("logging/setLevel"))
    }

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        Err(not_found("completion/complete"))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        Err(not_found(&request.method))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        let call = tools::call(&request.name, &args)
            .map_err(|e| McpError::invalid_params(e.to_string(), None))?;
        let result = match call {
            tools::Call::Done(r) => r,
            tools::Call::Count(count) => {
                let token = ctx
                    .meta
                    .get_progress_token()
                    .and_then(|t| serde_json::to_value(t).ok());
                match self.count(count, token, &ctx).await {
                    Some(r) => r,
                    // rmcp drops the answer to a cancelled request; this error is never sent.
                    None => {
                        return Err(McpError::new(ErrorCode::INTERNAL_ERROR, "cancelled", None));
                    }
                }
            }
        };
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let status = PromptArgument::new("status")
            .with_description("order status")
            .with_required(true);
        let lines = PromptArgument::new("lines")
            .with_description("how many log lines to review (default 2000)")
            .with_required(false);
        Ok(ListPromptsResult::with_all_items(vec![
            Prompt::new(
                "triage_orders",
                Some("Ask for a triage of orders in one status."),
                Some(vec![status]),
            ),
            Prompt::new(
                "review_logs",
                Some("Ask for a review of the service log, quoted whole in the prompt."),
                Some(vec![lines]),
            ),
        ]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name == "review_logs" {
            // Large on purpose: a prompt that quotes a whole log (as a fetch prompt quotes a
            // page), for the interception of prompts.
            let lines = request
                .arguments
                .as_ref()
                .and_then(|a| a.get("lines"))
                .and_then(|v| v.as_str().and_then(|s| s.parse().ok()).or(v.as_u64()))
                .unwrap_or(2000);
            let text = format!(
                "Review this service log and list the failing requests.\n\n{}",
                data::log_lines(lines.min(100_000))
            );
            return Ok(
                GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                    .with_description("Review the service log")
                    .into(),
            );
        }
        if request.name != "triage_orders" {
            return Err(McpError::invalid_params(
                format!("unknown prompt: {}", request.name),
                None,
            ));
        }
        let status = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("status"))
            .and_then(Value::as_str)
            .unwrap_or("pending");
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            format!(
                "Triage the {status} orders: call list_orders with status={status} and summarise by customer."
            ),
        )])
        .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new("sample://docs/readme", "readme").with_mime_type("text/markdown"),
            Resource::new(CUSTOMERS_URI, "customers").with_mime_type("application/json"),
            Resource::new(LOG_URI, "log").with_mime_type("text/plain"),
            Resource::new(CHART_URI, "chart").with_mime_type("image/png"),
        ]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new("sample://orders/{order_id}", "order")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri;
        let contents = if uri == "sample://docs/readme" {
            ResourceContents::text(
                "# Sample server\nOrders, customers and logs for the loom demo.\n",
                uri,
            )
            .with_mime_type("text/markdown")
        } else if uri == CUSTOMERS_URI {
            let text = Value::Array(data::customers(data::CUSTOMER_COUNT)).to_string();
            ResourceContents::text(text, uri).with_mime_type("application/json")
        } else if uri == LOG_URI {
            ResourceContents::text(data::log_lines(2000), uri)
        } else if uri == CHART_URI {
            ResourceContents::blob(data::chart_png(), uri).with_mime_type("image/png")
        } else if let Some(order) = uri.strip_prefix("sample://orders/") {
            let text = json!({ "order_id": order, "status": "paid" }).to_string();
            ResourceContents::text(text, uri).with_mime_type("application/json")
        } else {
            // rmcp answers a 2026-07-28 client with that revision's -32602 instead.
            return Err(McpError::resource_not_found(
                format!("resource not found: {uri}"),
                None,
            ));
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// A method the sample server does not serve, named in words (rmcp's default names only it).
fn not_found(method: &str) -> McpError {
    McpError::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: {method}"),
        None,
    )
}

/// Serves the sample server on stdin/stdout until the client closes stdin.
pub async fn serve_stdio() -> anyhow::Result<()> {
    let running = SampleServer.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
