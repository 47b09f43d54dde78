// Whole MCP sessions over Streamable HTTP with the official TypeScript SDK, several at once.
//
//   node sessions.mjs URL COUNT
//
// Runs COUNT sessions against URL concurrently, each a whole life: initialize, tools/list, an
// `echo` call, a second tools/list, then DELETE (terminateSession). Prints one JSON line on
// stdout: per session its id, the tools it listed, what `echo` answered, and any error the SDK
// raised (errors are part of the summary, not crashes: the caller judges them).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, count] = process.argv.slice(2);

async function session(n) {
  const out = { n, steps: [] };
  const client = new Client({ name: "mcppin-sdk-client", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  try {
    await client.connect(transport);
    out.session_id = transport.sessionId ?? null;
    const first = await client.listTools();
    out.steps.push({ tools: first.tools.map((t) => t.name).sort() });
    const result = await client.callTool({
      name: "echo",
      arguments: { message: `session ${n}` },
    });
    out.steps.push({ echo: result.content?.[0]?.text ?? null, isError: result.isError ?? false });
    const second = await client.listTools();
    out.steps.push({ tools: second.tools.map((t) => t.name).sort() });
    await transport.terminateSession();
    out.steps.push({ terminated: transport.sessionId === undefined });
  } catch (e) {
    out.error = { code: e?.code ?? null, message: String(e?.message ?? e) };
  }
  await client.close().catch(() => {});
  return out;
}

const sessions = await Promise.all(
  Array.from({ length: Number(count) }, (_, n) => session(n)),
);
process.stdout.write(JSON.stringify({ sessions }) + "\n");
