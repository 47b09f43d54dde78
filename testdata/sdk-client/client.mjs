// A real MCP client: the official TypeScript SDK, pinned by package-lock.json.
//
//   node client.mjs SCENARIO COMMAND [ARGS...]
//
// Starts COMMAND as a stdio MCP server (directly, or mcppin-guard in front of one), runs
// SCENARIO and prints one JSON summary line on stdout. MCPPIN_CLIENT_CAPABILITIES (a JSON
// object) is declared as the client's capabilities (none when unset), as Claude Desktop or
// VS Code declare theirs; MCPPIN_SHOW_STDERR=1 adds the command's stderr to the summary. Errors the SDK raises (a refused list,
// a closed connection) are part of the summary, not crashes: the caller compares summaries.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [scenario, command, ...args] = process.argv.slice(2);
const summary = { scenario, steps: [] };
const step = (entry) => summary.steps.push(entry);
const failure = (e) => ({ error: { code: e?.code ?? null, message: String(e?.message ?? e) } });

// The SDK's automatic re-read after notifications/tools/list_changed: what it read, and a
// promise settled once it has.
let refreshed = null;
let reread;
const rereadDone = new Promise((resolve) => (reread = resolve));
const capabilities = JSON.parse(process.env.MCPPIN_CLIENT_CAPABILITIES ?? "{}");
const client = new Client(
  { name: "mcppin-sdk-client", version: "1.0.0" },
  {
    capabilities,
    listChanged: {
      tools: {
        onChanged: (err, tools) => {
          refreshed = err ? failure(err) : { tools: tools.map((t) => t.name).sort() };
          reread();
        },
      },
    },
  },
);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "pipe" });
let stderr = "";
transport.stderr?.on("data", (chunk) => (stderr += chunk));

const calls = {
  everything: [
    ["echo", { message: "hello through the guard" }],
    ["get-sum", { a: 2, b: 3 }],
  ],
  filesystem: [["list_allowed_directories", {}]],
};

try {
  await client.connect(transport);
  // Whether the server announced a changed list: seen on the wire, before the SDK's handler.
  let announced = false;
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message?.method === "notifications/tools/list_changed") announced = true;
    deliver(message, extra);
  };
  step({ connected: client.getServerVersion()?.name ?? null });
  if (scenario === "prompts") {
    // The widened surface: the prompts listed, then one of them asked for.
    const prompts = await client.listPrompts().catch(failure);
    step(prompts.error ? prompts : { prompts: prompts.prompts.map((p) => p.name).sort() });
    const got = await client.getPrompt({ name: "simple-prompt" }).catch(failure);
    step(got.error ? got : { got: "simple-prompt", messages: got.messages.length });
    throw "done";
  }
  const listed = await client.listTools();
  step({ tools: listed.tools.map((t) => t.name).sort() });
  for (const [name, input] of calls[scenario] ?? []) {
    const result = await client.callTool({ name, arguments: input });
    step({ call: name, isError: result.isError ?? false, content: result.content });
  }
  // server-everything registers tools once the session is initialised and announces them
  // with list_changed. A ping's answer comes after every message the server sent before it
  // (one stdio stream, in order), so once it is in, any announcement is too; then the SDK's
  // re-read it started is awaited.
  await client.ping();
  if (announced) await rereadDone;
  step({ list_changed_reread: refreshed });
} catch (e) {
  if (e !== "done") step(failure(e));
}
await client.close().catch(() => {});
summary.guard_stderr_mentions_refusal = stderr.includes("mcppin-guard: tool-changed");
if (process.env.MCPPIN_SHOW_STDERR === "1") summary.stderr = stderr;
process.stdout.write(JSON.stringify(summary) + "\n");
