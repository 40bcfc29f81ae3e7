#!/usr/bin/env node
// toolhost as the client of the official conformance suite's
// authorization scenarios: `conformance client --command "node
// examples/mcp-conformance/auth/client.mjs"` runs it with the URL of an
// MCP server that wants OAuth (the harness plays the server and its
// authorization server). It does what an operator does: a config bridging
// that server with `oauth = {...}`, `toolhost mcp login` (the "browser"
// here follows the authorization server's redirect back to toolhost's
// loopback listener), then `toolhost tools --mcp-status` and a call of
// each bridged tool, which connect with the tokens. The toolhost binary is
// $TOOLHOST_BIN, else `toolhost` on PATH.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
const toolhost = process.env.TOOLHOST_BIN ?? "toolhost";
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "toolhost-auth-"));
const env = { ...process.env, BROWSER: `${process.execPath} ${join(here, "browser.mjs")}` };

const oauth = [`token_file = "tokens.json"`];
if (context.client_id) oauth.push(`client_id = ${JSON.stringify(context.client_id)}`);
if (context.client_secret) {
  oauth.push(`client_secret_env = "CONFORMANCE_CLIENT_SECRET"`);
  env.CONFORMANCE_CLIENT_SECRET = context.client_secret;
}
const clientCredentials = scenario.startsWith("auth/client-credentials");
if (clientCredentials) oauth.push(`grant = "client_credentials"`);
const config = join(dir, "toolhost.toml");
writeFileSync(
  config,
  `[[mcp.servers]]\nname = "remote"\ntransport = "http"\nurl = ${JSON.stringify(url)}\n` +
    `oauth = { ${oauth.join(", ")} }\n`,
);

function run(args) {
  const r = spawnSync(toolhost, [...args, "--config", config], { env, encoding: "utf8", timeout: 60000 });
  process.stderr.write(`$ toolhost ${args.join(" ")}\n${r.stderr ?? ""}${r.stdout ?? ""}\n`);
  return r;
}

if (!clientCredentials) {
  const login = run(["mcp", "login", "remote"]);
  if (login.status !== 0) process.exit(1);
}
const status = run(["tools", "--mcp-status"]);
if (status.status !== 0) process.exit(1);
const servers = JSON.parse(status.stdout);
const remote = servers.find((s) => s.name === "remote") ?? servers[0];
if (!remote?.available) process.exit(1);
let failed = false;
for (const tool of remote.tools ?? []) {
  failed ||= run(["call-tool", tool, "{}"]).status !== 0;
}
process.exit(failed ? 1 : 0);
