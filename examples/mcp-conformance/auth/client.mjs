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

// The client's metadata document as the suite knows it: used where the
// authorization server supports Client ID Metadata Documents.
const oauth = [
  `token_file = "tokens.json"`,
  `client_metadata_url = "https://conformance-test.local/client-metadata.json"`,
];
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

// What toolhost says when the server refuses its sign-in (a new
// authorization server, a scope a tool needs): an operator then signs in
// again, and so does this script, at most twice.
const signInAgain = /run `toolhost mcp login remote` again/;
let logins = 0;
function login() {
  if (clientCredentials || logins++ > 2) return false;
  return run(["mcp", "login", "remote"]).status === 0;
}

if (!clientCredentials && !login()) process.exit(1);
let remote;
for (;;) {
  const status = run(["tools", "--mcp-status"]);
  if (status.status !== 0) process.exit(1);
  const servers = JSON.parse(status.stdout);
  remote = servers.find((s) => s.name === "remote");
  if (remote?.available) break;
  if (!signInAgain.test(remote?.error ?? "") || !login()) process.exit(1);
}
let failed = false;
for (const tool of remote.tools ?? []) {
  let call = run(["call-tool", tool, "{}"]);
  if (call.status !== 0 && signInAgain.test(call.stdout) && login()) call = run(["call-tool", tool, "{}"]);
  failed ||= call.status !== 0;
}
process.exit(failed ? 1 : 0);
