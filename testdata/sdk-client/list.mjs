// A real MCP client listing a server's whole surface: the official TypeScript SDK, pinned by
// package-lock.json.
//
//   node list.mjs COMMAND [ARGS...]
//
// Starts COMMAND as a stdio MCP server (directly, or mcppin-guard in front of one), lists its
// tools, prompts and resource templates (each list only when the server declares its
// capability) and prints one JSON line: the server's name, each list as sorted names or keys,
// or the error the SDK raised for it. The Python SDK's `testdata/realservers/python/list.py`
// prints the same line, so the two clients, direct and guarded, can be compared as text.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const failure = (e) => ({ error: { code: e?.code ?? null, message: String(e?.message ?? e) } });
const summary = {};
const client = new Client({ name: "mcppin-sdk-client", version: "1.0.0" }, { capabilities: {} });
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "pipe" });
transport.stderr?.on("data", () => {});
try {
  await client.connect(transport);
  summary.server = client.getServerVersion()?.name ?? null;
  const offered = client.getServerCapabilities() ?? {};
  const list = async (capability, read, pick) => {
    if (!offered[capability]) return null;
    try {
      return pick(await read()).sort();
    } catch (e) {
      return failure(e);
    }
  };
  summary.tools = await list("tools", () => client.listTools(), (r) => r.tools.map((t) => t.name));
  summary.prompts = await list("prompts", () => client.listPrompts(), (r) => r.prompts.map((p) => p.name));
  summary.resource_templates = await list(
    "resources",
    () => client.listResourceTemplates(),
    (r) => r.resourceTemplates.map((t) => t.uriTemplate),
  );
} catch (e) {
  summary.failed = failure(e);
}
await client.close().catch(() => {});
process.stdout.write(JSON.stringify(summary) + "\n");
