// A real MCP client over Streamable HTTP: the official TypeScript SDK, pinned by
// package-lock.json.
//
//   node http-client.mjs SCENARIO URL
//
// Connects with StreamableHTTPClientTransport to URL (a server, or mcppin-guard --listen in
// front of one), runs SCENARIO and prints one JSON summary line on stdout. With MCP_TOKEN set,
// every request carries `Authorization: Bearer $MCP_TOKEN`. Errors the SDK raises (a refused
// list, an ended session) are part of the summary, not crashes: the caller compares summaries.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [scenario, url] = process.argv.slice(2);
const summary = { scenario, steps: [] };
const step = (entry) => summary.steps.push(entry);
const failure = (e) => ({ error: { code: e?.code ?? null, message: String(e?.message ?? e) } });
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let refreshed = null;
const client = new Client(
  { name: "mcppin-sdk-client", version: "1.0.0" },
  {
    listChanged: {
      tools: {
        onChanged: (err, tools) => {
          refreshed = err ? failure(err) : { tools: tools.map((t) => t.name).sort() };
        },
      },
    },
  },
);
const headers = process.env.MCP_TOKEN ? { Authorization: `Bearer ${process.env.MCP_TOKEN}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });

const calls = {
  everything: [
    ["echo", { message: "hello through the guard" }],
    ["get-sum", { a: 2, b: 3 }],
  ],
  // The fixture's counter mode rewrites `summarize` after its third call.
  counter: [
    ["summarize", { text: "one" }],
    ["summarize", { text: "two" }],
    ["summarize", { text: "three" }],
  ],
};

try {
  await client.connect(transport);
  step({ connected: client.getServerVersion()?.name ?? null });
  const listed = await client.listTools();
  step({ tools: listed.tools.map((t) => t.name).sort() });
  for (const [name, input] of calls[scenario] ?? []) {
    const result = await client.callTool({ name, arguments: input });
    step({ call: name, isError: result.isError ?? false, content: result.content });
  }
  // Give list_changed notifications time to arrive and the SDK's automatic re-read time to
  // finish.
  for (let i = 0; i < 50 && refreshed === null; i++) await pause(100);
  step({ list_changed_reread: refreshed });
  // One more request in the same session: after a refusal the guard has ended it.
  try {
    const again = await client.listTools();
    step({ again: again.tools.map((t) => t.name).sort() });
  } catch (e) {
    step({ again: failure(e) });
  }
} catch (e) {
  step(failure(e));
}
await client.close().catch(() => {});
process.stdout.write(JSON.stringify(summary) + "\n");
