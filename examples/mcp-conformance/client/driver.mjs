#!/usr/bin/env node
// toolhost's bridge as the client of the official conformance suite's
// client scenarios: `conformance client --command "node
// examples/mcp-conformance/client/driver.mjs"` runs it with the URL of an
// MCP server the harness plays (with its authorization server for the
// `auth/*` scenarios). It does what an operator and an agent do: a config
// bridging that server (with `oauth = {...}` for an auth scenario, and
// `ask` so the server's questions reach the agent's client), `toolhost mcp
// login` (the "browser" here follows the authorization server's redirect
// back to toolhost's loopback listener), `toolhost tools --mcp-status`,
// then the scenario's calls through `toolhost serve --stdio` from the
// official TypeScript SDK client. The toolhost binary is $TOOLHOST_BIN,
// else `toolhost` on PATH.
import { spawnSync } from "node:child_process";
import { mkdtempSync, openSync, writeFileSync } from "node:fs";
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
// A scenario that is not about signing in bridges the server plainly.
const signsIn = scenario.startsWith("auth/");
writeFileSync(
  config,
  `[[mcp.servers]]\nname = "remote"\ntransport = "http"\nurl = ${JSON.stringify(url)}\n` +
    `ask = ["elicitation", "sampling", "roots"]\n` +
    (signsIn ? `oauth = { ${oauth.join(", ")} }\n` : ""),
);

// TOOLHOST_LOGIN_PASTE=1: the browser is on another machine, and the
// address it was sent to is pasted into `mcp login --paste` instead
// (through a FIFO as the login's standard input).
const paste = process.env.TOOLHOST_LOGIN_PASTE === "1";
let pasteInput = "ignore";
if (paste) {
  const fifo = join(dir, "paste");
  spawnSync("mkfifo", [fifo]);
  pasteInput = openSync(fifo, "r+");
  env.PASTE_TO = fifo;
  env.BROWSER = `${process.execPath} ${join(here, "paste-browser.mjs")}`;
}

function run(args, stdin = "ignore") {
  const r = spawnSync(toolhost, [...args, "--config", config], {
    env,
    encoding: "utf8",
    timeout: 60000,
    stdio: [stdin, "pipe", "pipe"],
  });
  process.stderr.write(`$ toolhost ${args.join(" ")}\n${r.stderr ?? ""}${r.stdout ?? ""}\n`);
  return r;
}

// What toolhost says when the server refuses its sign-in (a new
// authorization server, a scope a tool needs): an operator then signs in
// again, and so does this script, at most twice.
const signInAgain = /run `toolhost mcp login remote` again/;
let logins = 0;
function login() {
  if (!signsIn || clientCredentials || logins++ > 2) return false;
  if (paste) return run(["mcp", "login", "remote", "--paste"], pasteInput).status === 0;
  return run(["mcp", "login", "remote"]).status === 0;
}

if (signsIn && !clientCredentials && !login()) process.exit(1);
let remote;
for (;;) {
  const status = run(["tools", "--mcp-status"]);
  if (status.status !== 0) process.exit(1);
  const servers = JSON.parse(status.stdout);
  remote = servers.find((s) => s.name === "remote");
  if (remote?.available) break;
  if (!signInAgain.test(remote?.error ?? "") || !login()) process.exit(1);
}
// The calls the scenario asks for (its context's toolCalls, by their names
// on the server), else each bridged tool with its required arguments made
// up from the schema toolhost serves for it (the suite's schema echo tool
// is given the schema toolhost serves for the tool it names, which shows
// what the bridge kept of it).
const schemas = new Map();
const listed = run(["tools", "--schemas"]);
for (const tool of listed.status === 0 ? JSON.parse(listed.stdout) : []) schemas.set(tool.name, tool.parameters ?? {});
function madeUp(tool) {
  const schema = schemas.get(tool) ?? {};
  if (tool.endsWith("__json_schema_echo")) return { schema: schemas.get("mcp__remote__json_schema_2020_12_tool") };
  const args = {};
  for (const name of schema.required ?? []) {
    const type = schema.properties?.[name]?.type;
    args[name] = type === "number" ? 1.0 : type === "integer" ? 1 : type === "boolean" ? true : type === "string" ? "test" : null;
  }
  return args;
}
const calls = (context.toolCalls ?? context.tool_calls)?.map((c) => [
  `mcp__remote__${c.name}`,
  JSON.stringify(c.arguments ?? {}),
]) ?? (remote.tools ?? []).map((tool) => [tool, JSON.stringify(madeUp(tool))]);
// The calls go through `toolhost serve --stdio` from the official
// TypeScript SDK's client (tests/peers/mcp_client.mjs), as an agent makes
// them: a server's questions reach that client through the bridge (`ask`),
// which accepts a form with {"confirmed": true} and answers a sampling
// request. A call whose text says to sign in again is made again after a
// new login.
const mcpClient = join(here, "../../../tests/peers/mcp_client.mjs");
function throughAClient(calls) {
  const answers = [{ elicit: { confirmed: true } }, { sample: "conformance" }, { roots: [] }];
  const steps = [...answers, ...calls.map(([tool, args]) => ({ call: tool, args: JSON.parse(args), until: "" }))];
  const passed = Object.entries(env)
    .filter(([k]) => k === "CONFORMANCE_CLIENT_SECRET" || k.startsWith("TOOLHOST_"))
    .map(([k, v]) => `${k}=${v}`);
  const r = spawnSync(
    process.execPath,
    [mcpClient, "stdio", "env", ...passed, toolhost, "serve", "--stdio", "--config", config],
    { env, input: JSON.stringify(steps), encoding: "utf8", timeout: 90000 },
  );
  process.stderr.write(`$ toolhost serve --stdio, calls ${JSON.stringify(calls)}\n${r.stderr ?? ""}${r.stdout ?? ""}\n`);
  try {
    return JSON.parse(r.stdout).steps.slice(answers.length);
  } catch {
    return calls.map(() => ({ is_error: true, text: "the client printed no result" }));
  }
}
let results = throughAClient(calls);
const again = calls.filter((_, i) => signInAgain.test(results[i]?.text ?? ""));
if (again.length > 0 && login()) results = throughAClient(calls);
process.exit(results.some((r) => r.is_error || r.error) ? 1 : 0);
