// Drives tmcp --http with the official TypeScript MCP client, as an agent
// would, and prints what it saw as one JSON line. The endpoint and pane
// come as arguments, the token from $TMCP_TOKEN (never the command line).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, paneId] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.TMCP_TOKEN}` } },
});
const client = new Client({ name: "tmcp-ts-e2e", version: "1" });
await client.connect(transport);

const tools = (await client.listTools()).tools.map((t) => t.name);
const run = await client.callTool({ name: "run_command", arguments: { paneId, command: "echo from-typescript" } });
// A wait longer than the client's patience, which progress resets.
let progress = 0;
const wait = await client.callTool(
  { name: "wait_for_text", arguments: { paneId, patterns: ["never printed"], timeoutSeconds: 3 } },
  undefined,
  { timeout: 2000, resetTimeoutOnProgress: true, onprogress: () => { progress++; } },
);
console.log(JSON.stringify({
  sessionId: transport.sessionId,
  tools,
  run: run.structuredContent,
  runText: run.content.filter((c) => c.type === "text").map((c) => c.text),
  wait: wait.structuredContent,
  progress,
}));
await transport.terminateSession();
await client.close();
