// Drives an MCP server with the official TypeScript SDK's client and prints
// what it saw as one JSON object on stdout: the same steps and the same
// output as mcp_client.py (read its header), so a test can run one script of
// steps through both official clients and compare.
//
// usage: node mcp_client.mjs stdio COMMAND ARGS...   (spawns the server)
//        node mcp_client.mjs http URL [TOKEN]
// The SDK is resolved from target/peers/node_modules (tests/peers/install-mcp).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const peers = join(dirname(fileURLToPath(import.meta.url)), '../../target/peers/');
const require = createRequire(peers);
const sdk = async (path) => import(pathToFileURL(require.resolve(`@modelcontextprotocol/sdk/${path}`)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const types = await sdk('types.js');

const steps = JSON.parse(readFileSync(0, 'utf8') || '[]');
const [mode, ...rest] = process.argv.slice(2);
const state = { answer: null, sample: null, roots: [], rootsListed: 0, asked: [], sampled: [], logs: [], listChanged: 0 };

const capabilities = {};
if (steps.some((s) => 'elicit' in s)) capabilities.elicitation = {};
if (steps.some((s) => 'sample' in s)) capabilities.sampling = {};
if (steps.some((s) => 'roots' in s)) capabilities.roots = {};
const client = new Client({ name: 'toolhost-tests-ts', version: '1.0.0' }, { capabilities });

client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => {
  state.logs.push({ level: n.params.level, logger: n.params.logger ?? null, data: n.params.data });
});
client.setNotificationHandler(types.ToolListChangedNotificationSchema, () => {
  state.listChanged += 1;
});
if (capabilities.elicitation) {
  client.setRequestHandler(types.ElicitRequestSchema, async (request) => {
    state.asked.push({ message: request.params.message, schema: request.params.requestedSchema });
    if (state.answer === 'decline') return { action: 'decline' };
    if (state.answer && typeof state.answer === 'object') return { action: 'accept', content: state.answer };
    return { action: 'accept', content: { decision: state.answer } };
  });
}
if (capabilities.sampling) {
  client.setRequestHandler(types.CreateMessageRequestSchema, async (request) => {
    state.sampled.push(request.params);
    return {
      role: 'assistant',
      model: 'test-model',
      stopReason: 'endTurn',
      content: { type: 'text', text: state.sample },
    };
  });
}

if (capabilities.roots) {
  client.setRequestHandler(types.ListRootsRequestSchema, async () => {
    state.rootsListed += 1;
    return { roots: state.roots };
  });
}

async function oneStep(step) {
  if ('prompts' in step) return { prompts: (await client.listPrompts()).prompts };
  if ('get_prompt' in step) {
    const r = await client.getPrompt({ name: step.get_prompt, arguments: step.args });
    return { description: r.description ?? null, messages: r.messages };
  }
  if ('resources' in step) {
    return {
      resources: (await client.listResources()).resources,
      templates: (await client.listResourceTemplates()).resourceTemplates,
    };
  }
  if ('read' in step) return { contents: (await client.readResource({ uri: step.read })).contents };
  if ('complete' in step) {
    const c = step.complete;
    const r = await client.complete({ ref: c.ref, argument: c.argument, context: c.context });
    return { completion: r.completion };
  }
  if ('subscribe' in step) {
    await client.subscribeResource({ uri: step.subscribe });
    return {};
  }
  if ('unsubscribe' in step) {
    await client.unsubscribeResource({ uri: step.unsubscribe });
    return {};
  }
  if ('sample' in step) {
    state.sample = step.sample;
    return {};
  }
  if ('roots' in step) {
    state.roots = step.roots;
    return {};
  }
  if ('set_level' in step) {
    await client.setLoggingLevel(step.set_level);
    return {};
  }
  if ('elicit' in step) {
    state.answer = step.elicit;
    return {};
  }
  if ('list' in step) {
    const tools = (await client.listTools()).tools;
    return {
      tools: tools.map((t) => ({
        name: t.name,
        description: t.description ?? null,
        input_schema: t.inputSchema,
        output_schema: t.outputSchema ?? null,
        annotations: t.annotations ?? null,
      })),
    };
  }
  if ('call' in step) {
    const seen = [];
    const options = step.progress
      ? { onprogress: (p) => seen.push({ progress: p.progress, total: p.total ?? null, message: p.message ?? null }) }
      : {};
    let r, text;
    let attempts = 0;
    for (;;) {
      attempts += 1;
      try {
        r = await client.callTool({ name: step.call, arguments: step.args ?? {} }, undefined, options);
      } catch (e) {
        // A JSON-RPC error (a tool not listed yet) counts as not yet.
        if (!('until' in step) || attempts >= 300 || !(e instanceof types.McpError)) throw e;
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      text = r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
      if (!('until' in step) || text.includes(step.until) || attempts >= 300) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const out = {
      is_error: r.isError === true,
      text,
      structured: r.structuredContent ?? null,
      progress: seen,
      content: r.content,
    };
    if ('until' in step) out.attempts = attempts;
    return out;
  }
  if ('wait_list_changed' in step) {
    for (let i = 0; i < 100 && state.listChanged === 0; i++) await new Promise((r) => setTimeout(r, 50));
    return { list_changed: state.listChanged };
  }
  throw new Error(`unknown step ${JSON.stringify(step)}`);
}

const transport =
  mode === 'stdio'
    ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'inherit' })
    : new StreamableHTTPClientTransport(new URL(rest[0]), {
        requestInit: rest[1] ? { headers: { Authorization: `Bearer ${rest[1]}` } } : {},
      });
await client.connect(transport);
const out = {
  server_name: client.getServerVersion()?.name,
  capabilities: client.getServerCapabilities(),
  steps: [],
};
for (const step of steps) {
  try {
    out.steps.push(await oneStep(step));
  } catch (e) {
    if (!(e instanceof types.McpError)) throw e;
    // A JSON-RPC error answer, as the server sent it.
    out.steps.push({ error: { code: e.code, message: e.message.replace(/^MCP error -?\d+: /, ''), data: e.data ?? null } });
  }
}
Object.assign(out, { elicitations: state.asked, samplings: state.sampled, logs: state.logs, roots_listed: state.rootsListed });
await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
