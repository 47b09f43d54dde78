// The tools a Streamable HTTP server serves to a client declaring given capabilities, as
// served (plain HTTP and JSON, no SDK: the definitions are not re-serialised by a client).
//
//   node surface.mjs URL CAPABILITIES_JSON
//
// Opens a session declaring CAPABILITIES_JSON, reads `tools/list` to its last page, ends the
// session and prints the tools as one JSON array on stdout.
const [url, capabilities] = process.argv.slice(2);
const protocolVersion = "2025-11-25";
let session = null;
let id = 0;

async function send(method, params) {
  const message = { jsonrpc: "2.0", method, params };
  const request = method.startsWith("notifications/") ? null : ++id;
  if (request !== null) message.id = request;
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": protocolVersion,
  };
  if (session) headers["mcp-session-id"] = session;
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(message) });
  session = response.headers.get("mcp-session-id") ?? session;
  const text = await response.text();
  if (!response.ok) throw new Error(`${method}: HTTP ${response.status}: ${text}`);
  if (request === null) return null;
  // A JSON body, or an event stream whose data lines carry the answer.
  const bodies = (response.headers.get("content-type") ?? "").includes("text/event-stream")
    ? text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim())
        .filter((data) => data !== "")
    : [text];
  for (const body of bodies) {
    const answer = JSON.parse(body);
    if (answer.id === request) {
      if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
      return answer.result;
    }
  }
  throw new Error(`${method}: no answer in ${text}`);
}

await send("initialize", {
  protocolVersion,
  capabilities: JSON.parse(capabilities),
  clientInfo: { name: "mcppin-surface", version: "1.0.0" },
});
await send("notifications/initialized", {});
const tools = [];
let cursor;
do {
  const page = await send("tools/list", cursor === undefined ? {} : { cursor });
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor !== undefined);
await fetch(url, { method: "DELETE", headers: { "mcp-session-id": session } });
process.stdout.write(JSON.stringify(tools) + "\n");
