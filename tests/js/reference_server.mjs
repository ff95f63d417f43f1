// A reference MCP server for the official conformance suite, written for loom's tests on the
// official TypeScript SDK (@modelcontextprotocol/sdk 1.x: McpServer over
// StreamableHTTPServerTransport, stateful sessions, SSE replies, resumable streams with an
// event store). It serves every fixture the suite's 2025-11-25 server scenarios call, with the
// names, contents and behaviour the scenarios in the suite's dist/ check, so that the suite
// run against it alone, and against loom fronting it as an HTTP downstream, can be compared.
//
// Usage: node reference_server.mjs NODE_MODULES PORT
//   NODE_MODULES  the folder holding the pinned SDK (.peers/node/node_modules)
//   PORT          the loopback port to listen on (http://127.0.0.1:PORT/mcp)
//
// The SDK 1.x server speaks the legacy era only (up to 2025-11-25): a 2026-07-28 request (no
// session, `_meta` in its params) is refused as a request without a session, so against this
// server alone the 2026-07-28 requirements measure only what a legacy server can do.

import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { load } from "./peer_modules.mjs";

const [nodeModules, portArg] = process.argv.slice(2);
const port = Number(portArg);
if (!nodeModules || !Number.isInteger(port) || port <= 0) {
  console.error("usage: reference_server.mjs NODE_MODULES PORT");
  process.exit(2);
}

const SDK = "@modelcontextprotocol/sdk";
const { McpServer, ResourceTemplate } = await load(nodeModules, SDK, "./server/mcp.js");
const { StreamableHTTPServerTransport } = await load(nodeModules, SDK, "./server/streamableHttp.js");
const { completable } = await load(nodeModules, SDK, "./server/completable.js");
const types = await load(nodeModules, SDK, "./types.js");
const { z } = await load(nodeModules, "zod", ".");

// A 1×1 red PNG and eight samples of silence as a WAV file, made for these fixtures.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";
const WAV = "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA";
const WATCHED = "test://watched-resource";

const pause = (ms) => new Promise((done) => setTimeout(done, ms));
const text = (t) => ({ content: [{ type: "text", text: t }] });

// Every event of every stream, so a client that reconnects with Last-Event-ID gets what it
// missed. Bounded: the oldest events go first.
class EventLog {
  constructor(limit = 10_000) {
    this.limit = limit;
    this.events = [];
    this.next = 0;
  }
  async storeEvent(streamId, message) {
    const eventId = `${streamId}:${this.next++}`;
    this.events.push({ eventId, streamId, message });
    if (this.events.length > this.limit) this.events.shift();
    return eventId;
  }
  async getStreamIdForEventId(eventId) {
    return this.events.find((e) => e.eventId === eventId)?.streamId;
  }
  async replayEventsAfter(lastEventId, { send }) {
    const at = this.events.findIndex((e) => e.eventId === lastEventId);
    if (at < 0) return "";
    const { streamId } = this.events[at];
    for (const e of this.events.slice(at + 1)) {
      if (e.streamId === streamId) await send(e.eventId, e.message);
    }
    return streamId;
  }
}

// One McpServer per session (an McpServer serves one transport). A tool without arguments is
// called with the request's `extra` alone.
function fixtures() {
  const mcp = new McpServer(
    { name: "loom-reference-server", version: "1.0.0" },
    { capabilities: { logging: {}, completions: {}, resources: { subscribe: true, listChanged: true } } },
  );
  const server = mcp.server;
  const subscriptions = new Set();

  // A request sent while a call runs travels on that call's stream.
  const ask = (extra, method, params, schema) =>
    server.request({ method, params }, schema, { relatedRequestId: extra.requestId });
  const log = (extra, data) =>
    extra.sendNotification({ method: "notifications/message", params: { level: "info", logger: "reference", data } });

  mcp.registerTool("test_simple_text", { description: "Returns simple text" }, async () =>
    text("This is a simple text response for testing."),
  );
  mcp.registerTool("test_image_content", { description: "Returns an image" }, async () => ({
    content: [{ type: "image", data: PNG, mimeType: "image/png" }],
  }));
  mcp.registerTool("test_audio_content", { description: "Returns audio" }, async () => ({
    content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }],
  }));
  mcp.registerTool("test_embedded_resource", { description: "Returns an embedded resource" }, async () => ({
    content: [
      {
        type: "resource",
        resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." },
      },
    ],
  }));
  mcp.registerTool("test_multiple_content_types", { description: "Returns text, an image and a resource" }, async () => ({
    content: [
      { type: "text", text: "Multiple content types test:" },
      { type: "image", data: PNG, mimeType: "image/png" },
      {
        type: "resource",
        resource: {
          uri: "test://mixed-content-resource",
          mimeType: "application/json",
          text: JSON.stringify({ test: "data", value: 123 }),
        },
      },
    ],
  }));
  mcp.registerTool("test_tool_with_logging", { description: "Logs three messages while it runs" }, async (extra) => {
    for (const [i, message] of ["Tool execution started", "Tool processing data", "Tool execution completed"].entries()) {
      if (i > 0) await pause(50);
      await log(extra, message);
    }
    return text("Logged three messages.");
  });
  mcp.registerTool("test_tool_with_progress", { description: "Reports progress 0, 50, 100" }, async (extra) => {
    const token = extra._meta?.progressToken;
    for (const [i, progress] of [0, 50, 100].entries()) {
      if (i > 0) await pause(50);
      if (token !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress, total: 100, message: `step ${i + 1} of 3` },
        });
      }
    }
    return text("Progress reported: 0, 50, 100 of 100.");
  });
  mcp.registerTool("test_error_handling", { description: "Always fails" }, async () => ({
    isError: true,
    content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
  }));
  mcp.registerTool(
    "test_sampling",
    { description: "Asks the client's model", inputSchema: { prompt: z.string().describe("What to ask") } },
    async ({ prompt }, extra) => {
      const answer = await ask(
        extra,
        "sampling/createMessage",
        { messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 100 },
        types.CreateMessageResultSchema,
      );
      const said = answer.content?.type === "text" ? answer.content.text : JSON.stringify(answer.content);
      return text(`LLM response: ${said}`);
    },
  );
  const elicit = (extra, message, requestedSchema) =>
    ask(extra, "elicitation/create", { mode: "form", message, requestedSchema }, types.ElicitResultSchema);
  const outcome = (answer) =>
    text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
  mcp.registerTool(
    "test_elicitation",
    { description: "Asks the user", inputSchema: { message: z.string().describe("What to ask") } },
    async ({ message }, extra) => {
      const answer = await elicit(extra, message, {
        type: "object",
        properties: {
          username: { type: "string", description: "User's response" },
          email: { type: "string", description: "User's email address" },
        },
        required: ["username", "email"],
      });
      return text(`User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
    },
  );
  mcp.registerTool("test_elicitation_sep1034_defaults", { description: "Asks with defaults (SEP-1034)" }, async (extra) =>
    outcome(
      await elicit(extra, "Please review and update the form fields with defaults", {
        type: "object",
        properties: {
          name: { type: "string", description: "User name", default: "John Doe" },
          age: { type: "integer", description: "User age", default: 30 },
          score: { type: "number", description: "User score", default: 95.5 },
          status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
          verified: { type: "boolean", description: "Verification status", default: true },
        },
      }),
    ),
  );
  mcp.registerTool("test_elicitation_sep1330_enums", { description: "Asks with every kind of enum (SEP-1330)" }, async (extra) =>
    outcome(
      await elicit(extra, "Choose from each kind of enum", {
        type: "object",
        properties: {
          untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
          titledSingle: {
            type: "string",
            oneOf: [
              { const: "value1", title: "First Option" },
              { const: "value2", title: "Second Option" },
              { const: "value3", title: "Third Option" },
            ],
          },
          legacyEnum: { type: "string", enum: ["opt1", "opt2", "opt3"], enumNames: ["Option One", "Option Two", "Option Three"] },
          untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
          titledMulti: {
            type: "array",
            items: {
              anyOf: [
                { const: "value1", title: "First Choice" },
                { const: "value2", title: "Second Choice" },
                { const: "value3", title: "Third Choice" },
              ],
            },
          },
        },
      }),
    ),
  );
  // SEP-1699: the call's stream is closed before its answer, which the client then gets by
  // reconnecting with Last-Event-ID.
  mcp.registerTool("test_reconnection", { description: "Closes its stream mid-call, then answers" }, async (extra) => {
    await pause(100);
    extra.closeSSEStream?.();
    await pause(300);
    return text("Answered after the stream was closed.");
  });
  mcp.registerTool(
    "test_trigger_resource_update",
    { description: `Announces an update of ${WATCHED}` },
    async () => {
      if (subscriptions.has(WATCHED)) await server.sendResourceUpdated({ uri: WATCHED });
      return text(`Announced an update of ${WATCHED}`);
    },
  );

  // The 2026-07-28 diagnostics, as a legacy server does them: the questions are real requests
  // to the client, the logs follow the session's level, and list changes are announced.
  mcp.registerTool("test_missing_capability", { description: "Asks the client's model without checking it can" }, async (extra) => {
    const answer = await ask(
      extra,
      "sampling/createMessage",
      { messages: [{ role: "user", content: { type: "text", text: "Say hello." } }], maxTokens: 20 },
      types.CreateMessageResultSchema,
    );
    return text(`The model said: ${answer.content?.text ?? ""}`);
  });
  mcp.registerTool("test_streaming_elicitation", { description: "Asks the user to confirm" }, async (extra) => {
    const answer = await elicit(extra, "Shall I go on?", {
      type: "object",
      properties: { ok: { type: "boolean" } },
      required: ["ok"],
    });
    return text(`Confirmation: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
  });
  mcp.registerTool("test_logging_tool", { description: "Logs three messages while it runs" }, async (extra) => {
    for (const message of ["Tool execution started", "Tool processing data", "Tool execution completed"]) {
      await log(extra, message);
    }
    return text("Logged three messages.");
  });
  const dynamicTool = mcp.registerTool("test_dynamic_tool", { description: "Comes and goes" }, async () =>
    text("The dynamic tool ran."),
  );
  dynamicTool.disable();
  const dynamicPrompt = mcp.registerPrompt("test_dynamic_prompt", { description: "Comes and goes" }, async () => ({
    messages: [{ role: "user", content: { type: "text", text: "The dynamic prompt." } }],
  }));
  dynamicPrompt.disable();
  const toggle = (item, name) => {
    if (item.enabled) item.disable();
    else item.enable();
    return text(`${item.enabled ? "Added" : "Removed"} ${name}`);
  };
  mcp.registerTool("test_trigger_tool_change", { description: "Adds or removes test_dynamic_tool" }, async () =>
    toggle(dynamicTool, "test_dynamic_tool"),
  );
  mcp.registerTool("test_trigger_prompt_change", { description: "Adds or removes test_dynamic_prompt" }, async () =>
    toggle(dynamicPrompt, "test_dynamic_prompt"),
  );

  mcp.registerResource("static-text", "test://static-text", { mimeType: "text/plain", description: "A static text" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "This is the content of the static text resource." }],
  }));
  mcp.registerResource("static-binary", "test://static-binary", { mimeType: "image/png", description: "A static image" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG }],
  }));
  mcp.registerResource("watched-resource", WATCHED, { mimeType: "text/plain", description: "A resource to subscribe to" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "Watched resource content." }],
  }));
  mcp.registerResource(
    "template",
    new ResourceTemplate("test://template/{id}/data", { list: undefined }),
    { mimeType: "application/json", description: "Data by id" },
    async (uri, { id }) => ({
      contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
    }),
  );

  mcp.registerPrompt("test_simple_prompt", { description: "A prompt without arguments" }, async () => ({
    messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }],
  }));
  mcp.registerPrompt(
    "test_prompt_with_arguments",
    {
      description: "A prompt with two arguments",
      argsSchema: {
        arg1: completable(z.string().describe("First argument"), (value) =>
          ["test", "testing", "tested"].filter((v) => v.startsWith(value)),
        ),
        arg2: z.string().describe("Second argument"),
      },
    },
    async ({ arg1, arg2 }) => ({
      messages: [{ role: "user", content: { type: "text", text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }],
    }),
  );
  mcp.registerPrompt(
    "test_prompt_with_embedded_resource",
    { description: "A prompt that embeds a resource", argsSchema: { resourceUri: z.string().describe("The resource's URI") } },
    async ({ resourceUri }) => ({
      messages: [
        {
          role: "user",
          content: { type: "resource", resource: { uri: resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." } },
        },
        { role: "user", content: { type: "text", text: "Please process the embedded resource above." } },
      ],
    }),
  );
  mcp.registerPrompt("test_prompt_with_image", { description: "A prompt with an image" }, async () => ({
    messages: [
      { role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
      { role: "user", content: { type: "text", text: "Please analyze the image above." } },
    ],
  }));

  server.setRequestHandler(types.SubscribeRequestSchema, async ({ params }) => {
    subscriptions.add(params.uri);
    return {};
  });
  server.setRequestHandler(types.UnsubscribeRequestSchema, async ({ params }) => {
    subscriptions.delete(params.uri);
    return {};
  });
  return mcp;
}

// DNS-rebinding protection: only loopback names may appear in Host (and Origin, when sent).
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);
function loopbackHost(host) {
  if (typeof host !== "string") return false;
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0];
  return LOOPBACK.has(name.toLowerCase());
}
function loopbackOrigin(origin) {
  if (origin === undefined) return true;
  try {
    return loopbackHost(new URL(origin).host);
  } catch {
    return false;
  }
}

function refuse(res, status, code, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }));
}

async function body(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const raw = Buffer.concat(chunks).toString("utf8");
  return raw ? JSON.parse(raw) : undefined;
}

const sessions = new Map();
const isInitialize = (msg) => (Array.isArray(msg) ? msg : [msg]).some((m) => m?.method === "initialize");

const http = createServer(async (req, res) => {
  try {
    if (new URL(req.url, "http://127.0.0.1").pathname !== "/mcp") return refuse(res, 404, -32601, "not found");
    if (!loopbackHost(req.headers.host) || !loopbackOrigin(req.headers.origin)) {
      return refuse(res, 403, -32000, "Forbidden: the Host or Origin is not a loopback address");
    }
    const id = req.headers["mcp-session-id"];
    if (id !== undefined) {
      const transport = sessions.get(id);
      if (!transport) return refuse(res, 404, -32001, "Session not found");
      const parsed = req.method === "POST" ? await body(req) : undefined;
      return await transport.handleRequest(req, res, parsed);
    }
    if (req.method !== "POST") return refuse(res, 400, -32000, "Bad Request: no session");
    const parsed = await body(req);
    if (!isInitialize(parsed)) return refuse(res, 400, -32000, "Bad Request: no session");
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new EventLog(),
      retryInterval: 500,
      onsessioninitialized: (sid) => sessions.set(sid, transport),
      onsessionclosed: (sid) => sessions.delete(sid),
    });
    transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
    await fixtures().connect(transport);
    await transport.handleRequest(req, res, parsed);
  } catch (e) {
    console.error(e);
    if (!res.headersSent) refuse(res, 400, -32700, `Parse error: ${e instanceof Error ? e.message : e}`);
  }
});
http.listen(port, "127.0.0.1", () => console.error(`reference server on http://127.0.0.1:${port}/mcp`));
