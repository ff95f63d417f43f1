// Drives loom over streamable HTTP with a TypeScript MCP SDK client and prints what it saw as
// one JSON object on stdout (diagnostics go to stderr).
//
// Usage: node client_check.mjs NODE_MODULES SDK URL TOKEN MODE PLAN
//   NODE_MODULES  the folder holding the pinned SDKs (.peers/node/node_modules)
//   SDK           v1 (@modelcontextprotocol/sdk) | v2 (@modelcontextprotocol/client)
//   MODE          legacy | auto | 2026-07-28 (v2 only: its versionNegotiation; v1 is legacy)
//   PLAN          a JSON file: {"servers": [{"name", "progress": CALL, "cancel": CALL,
//                 "large": CALL, "sql": "SELECT … FROM {ref} …"}]}, CALL = {"tool", "arguments"}
//
// For each server of the plan: a call with a progress token (every notification kept), a
// long call aborted by the client after its first progress notification, and a large call
// whose envelope is then queried with loom_query. The modules are imported by absolute path
// through each package's own `exports` map, so nothing depends on where this script lives.

import { readFileSync } from "node:fs";
import { load as loadFrom } from "./peer_modules.mjs";

const [nodeModules, sdk, url, token, mode, planFile] = process.argv.slice(2);
if (!planFile) {
  console.error("usage: client_check.mjs NODE_MODULES SDK URL TOKEN MODE PLAN");
  process.exit(2);
}
const plan = JSON.parse(readFileSync(planFile, "utf8"));

// `import(pkg + subpath)` as a module inside NODE_MODULES would resolve it.
const load = (pkg, subpath) => loadFrom(nodeModules, pkg, subpath);

async function connect() {
  const headers = { Authorization: `Bearer ${token}` };
  const info = { name: `loom-test-ts-${sdk}`, version: "0" };
  if (sdk === "v1") {
    if (mode !== "legacy") throw new Error(`SDK v1 speaks only legacy, not ${mode}`);
    const { Client } = await load("@modelcontextprotocol/sdk", "./client/index.js");
    const { StreamableHTTPClientTransport } = await load(
      "@modelcontextprotocol/sdk",
      "./client/streamableHttp.js",
    );
    const client = new Client(info, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    return {
      client,
      era: "legacy",
      version: client.transport?.protocolVersion ?? null,
      call: (name, args, options) => client.callTool({ name, arguments: args }, undefined, options),
    };
  }
  if (sdk === "v2") {
    const { Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client", ".");
    const negotiation = mode === "legacy" || mode === "auto" ? mode : { pin: mode };
    const client = new Client(info, { capabilities: {}, versionNegotiation: { mode: negotiation } });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    return {
      client,
      era: client.getProtocolEra() ?? null,
      version: client.getNegotiatedProtocolVersion() ?? null,
      call: (name, args, options) => client.callTool({ name, arguments: args }, options),
    };
  }
  throw new Error(`unknown SDK ${sdk}`);
}

function text(result) {
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

// A long call that the client aborts once the first progress notification arrived.
async function cancelled(session, step) {
  const abort = new AbortController();
  let progressBeforeAbort = 0;
  try {
    const result = await session.call(step.tool, step.arguments, {
      signal: abort.signal,
      onprogress: () => {
        progressBeforeAbort += 1;
        abort.abort(new Error("the test cancels this call"));
      },
    });
    return { progressBeforeAbort, answered: text(result) };
  } catch (e) {
    return { progressBeforeAbort, error: String(e?.message ?? e) };
  }
}

async function main() {
  const session = await connect();
  const out = { sdk, mode, era: session.era, protocol_version: session.version, servers: {} };
  const tools = await session.client.listTools();
  out.tools = tools.tools.map((t) => t.name).sort();
  for (const step of plan.servers) {
    const seen = {};
    const progress = [];
    const done = await session.call(step.progress.tool, step.progress.arguments, {
      onprogress: (p) => progress.push([p.progress, p.total ?? null, p.message ?? null]),
    });
    seen.progress = progress;
    seen.progress_text = text(done);
    seen.cancel = await cancelled(session, step.cancel);
    const large = await session.call(step.large.tool, step.large.arguments);
    seen.envelope = large.structuredContent ?? null;
    const ref = seen.envelope?.ref;
    if (ref) {
      const q = await session.call("loom_query", { sql: step.sql.replaceAll("{ref}", ref) });
      seen.query = q.structuredContent ?? { text: text(q), isError: q.isError ?? false };
    } else {
      seen.large_text = text(large).slice(0, 500);
    }
    out.servers[step.name] = seen;
  }
  await session.client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  console.error(e?.stack ?? String(e));
  process.exit(1);
});
