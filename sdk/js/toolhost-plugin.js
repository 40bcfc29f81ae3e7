// Write toolhost plugins in JavaScript: a tool is a definition object with a
// JSON Schema and a `run` function. Built by toolhost-build.mjs (jco) against
// `toolhost:plugin@0.3.1`:
//
//   import { definePlugin, image, log } from "./toolhost-plugin.js";
//
//   export const tool = definePlugin({
//     tools: [{
//       name: "greet",
//       description: "Greets someone by name.",
//       parameters: {
//         type: "object",
//         properties: { name: { type: "string", description: "Who to greet." } },
//         required: ["name"],
//       },
//       hints: { readOnly: true },
//       run({ name }) {
//         log("info", "greeting", { name });
//         return `Hello, ${name}!`;
//       },
//     }],
//   });
//
// The map of this module (with the two it re-exports): `definePlugin` (the `tool` export); the content a
// tool returns (`text`, `image`, `audio`, `resourceLink`, `textResource`,
// `blobResource`, `output`); `definePrompts` and `defineResources` (the
// `prompts` and `resources` exports, with completions); the host's services
// (`log`, `progress`, `call`, `callMany`); the client of the call (`elicit`,
// `sample`, `listRoots`, several questions in one round with `ask`,
// `available`, `beginTask`); the errors
// (`InvalidArguments`, `ToolFailed` thrown by a tool or prompt,
// `ResourceNotFound` by a resource read; `HostError`, `CallError`,
// `ClientError` thrown by a service).
//
// What this module guarantees:
// - `definePlugin` checks every definition when the component is built (the
//   module runs then): a name the host would refuse, a duplicate, an empty
//   description, a parameters schema that is not an object schema, a missing
//   `run`, or a malformed declaration throws, naming the tool, and fails the build.
//   Parameters schemas get `additionalProperties: false` unless they say otherwise.
// - Arguments are checked before `run` against the structural part of the
//   schema (`type`, `required`, `properties`, `additionalProperties: false`,
//   `items`, `enum`): a mismatch is an `invalid-arguments` error naming the
//   field. The host validates the whole schema before the call as well.
// - `run` may be async. A plain object it returns is the structured result
//   (MCP `structuredContent`); a string is the text the model reads; a
//   content block, or a list of them, is the content; `output(value, text,
//   blocks)` gives all three; `undefined` gives nothing; any other JSON value
//   (a number, a list) is the structured result `{"result": value}` with its
//   JSON as text.
// - `throw new InvalidArguments(msg)` gives `invalid-arguments`; any other
//   throw gives `failed` with the error's name and message (`ToolFailed`: the
//   message alone), and its stack goes to stderr, which the host logs. A throw
//   never traps the instance.
// - The component imports only the host interfaces the plugin uses
//   (toolhost-build.mjs keeps what the bundle still imports): a plugin that
//   never asks its client anything does not import `toolhost:plugin/client`.
// - What the `declare()` record cannot carry (`declare: { roots: true }`, a
//   tool's `task`) is in the component's `toolhost:capabilities` section,
//   which toolhost-build.mjs writes from what `definePlugin` was given.
//
// The module is the one plugins import; it re-exports the content and errors
// of toolhost-content.js and the client's functions of toolhost-client.js
// (keep the three files together).
import { call as hostCall, callMany as hostCallMany } from "toolhost:plugin/tools@0.3.1";
import { report } from "toolhost:plugin/progress@0.3.1";
import { log as hostLog } from "toolhost:plugin/host@0.3.1";
import {
  annotationsToWit,
  BLOCK,
  blobResource,
  blockFromWit,
  CallError,
  checkAnnotations,
  InvalidArguments,
  isBlock,
  isObject,
  messagesOf,
  optionalString,
  outputToWit,
  resourceContentsToWit,
  ResourceNotFound,
  textResource,
  ToolFailed,
} from "./toolhost-content.js";

export {
  audio,
  blobResource,
  CallError,
  ClientError,
  HostError,
  image,
  InvalidArguments,
  isBlock,
  output,
  resourceLink,
  ResourceNotFound,
  text,
  textResource,
  ToolFailed,
} from "./toolhost-content.js";
export { ask, available, beginTask, elicit, listRoots, MAX_QUESTIONS, sample } from "./toolhost-client.js";

// --- tools -----------------------------------------------------------------------

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const LISTS = ["dirs", "env", "http", "secrets", "tools"];
const FLAGS = ["elicitation", "sampling", "roots"];
// The flags the `declare()` record carries; `roots` goes into the section.
const RECORD_FLAGS = ["elicitation", "sampling"];
const TASK_SUPPORT = ["optional", "required"];
/**
 * The key under which `definePlugin`'s export holds the lines of the
 * component's `toolhost:capabilities` section (`client roots`, `task NAME
 * SUPPORT`): what the `declare()` record cannot carry. toolhost-build.mjs
 * reads it while the component is built and appends the section.
 */
export const SECTION = Symbol.for("toolhost:capabilities");
const HINTS = ["readOnly", "destructive", "idempotent", "openWorld"];

function checkName(name, kind, where) {
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new TypeError(`${where}: a ${kind} name is 1 to 64 characters from A-Z a-z 0-9 _ -`);
  }
}

function isObjectSchema(schema) {
  const type = schema.type;
  return type === "object" || (Array.isArray(type) && type.includes("object"));
}

function checkDefinition(def, seen) {
  const where = `tool ${isObject(def) && typeof def.name === "string" ? def.name : JSON.stringify(def?.name)}`;
  if (!isObject(def)) throw new TypeError(`definePlugin: every tool is an object, got ${JSON.stringify(def)}`);
  checkName(def.name, "tool", where);
  if (seen.has(def.name)) throw new TypeError(`${where}: a tool of this name is already defined`);
  if (typeof def.description !== "string" || !def.description.trim()) {
    throw new TypeError(`${where}: give it a description: the model reads it to decide when to call the tool`);
  }
  optionalString(def.title, "title", where);
  if (!isObject(def.parameters) || !isObjectSchema(def.parameters)) {
    throw new TypeError(`${where}: parameters must be a JSON Schema object with "type": "object"`);
  }
  if (def.outputSchema !== undefined && (!isObject(def.outputSchema) || !isObjectSchema(def.outputSchema))) {
    throw new TypeError(`${where}: outputSchema must be a JSON Schema object with "type": "object"`);
  }
  if (typeof def.run !== "function") throw new TypeError(`${where}: run must be a function`);
  for (const key of Object.keys(def.hints ?? {})) {
    if (!HINTS.includes(key)) throw new TypeError(`${where}: unknown hint ${key} (known: ${HINTS.join(", ")})`);
  }
  if (def.deferred !== undefined && typeof def.deferred !== "boolean") throw new TypeError(`${where}: deferred must be true or false`);
  if (def.task === undefined) {
    if (def.deferred) throw new TypeError(`${where}: deferred: true needs task: "optional" or task: "required"`);
  } else if (!TASK_SUPPORT.includes(def.task)) {
    throw new TypeError(`${where}: task is ${TASK_SUPPORT.map((t) => JSON.stringify(t)).join(" or ")}, not ${JSON.stringify(def.task)}`);
  }
}

/** A tool's `task NAME SUPPORT [deferred]` section line, if it states task support. */
function taskLine(def) {
  return def.task === undefined ? [] : [`task ${def.name} ${def.task}${def.deferred ? " deferred" : ""}`];
}

function checkDeclaration(declare) {
  if (!isObject(declare)) throw new TypeError("definePlugin: declare is an object of string lists and flags");
  const out = {};
  for (const key of Object.keys(declare)) {
    if (!LISTS.includes(key) && !FLAGS.includes(key)) {
      throw new TypeError(`definePlugin: unknown capability ${key} (known: ${[...LISTS, ...FLAGS].join(", ")})`);
    }
  }
  for (const key of LISTS) {
    const names = declare[key] ?? [];
    if (!Array.isArray(names) || names.some((n) => typeof n !== "string" || !n)) {
      throw new TypeError(`definePlugin: declare.${key} must be a list of non-empty strings`);
    }
    out[key] = [...new Set(names)];
  }
  for (const key of FLAGS) {
    const flag = declare[key] ?? false;
    if (typeof flag !== "boolean") throw new TypeError(`definePlugin: declare.${key} must be true or false`);
    out[key] = flag;
  }
  return out;
}

/** The `declare()` record: the declaration without what only the section carries. */
function capabilitiesRecord(declared) {
  return Object.fromEntries([...LISTS, ...RECORD_FLAGS].map((k) => [k, declared[k]]));
}

function typeOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function article(type) {
  return { array: "an array", integer: "an integer", object: "an object", null: "null" }[type] ?? `a ${type}`;
}

function fits(value, type) {
  const actual = typeOf(value);
  return actual === type || (type === "number" && actual === "integer");
}

// Checks `value` against the structural part of `schema`; `path` names it.
function check(value, schema, path) {
  if (!isObject(schema)) return;
  const label = path ? `\`${path}\`` : "the arguments";
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => fits(value, t))) {
      throw new InvalidArguments(`${label} must be ${types.map(article).join(" or ")}, not ${article(typeOf(value))}`);
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    throw new InvalidArguments(`${label} must be one of ${JSON.stringify(schema.enum)}, not ${JSON.stringify(value)}`);
  }
  if (isObject(value)) {
    const properties = isObject(schema.properties) ? schema.properties : {};
    for (const name of schema.required ?? []) {
      if (!(name in value)) throw new InvalidArguments(`missing required field \`${join(path, name)}\``);
    }
    for (const [name, v] of Object.entries(value)) {
      if (name in properties) check(v, properties[name], join(path, name));
      else if (schema.additionalProperties === false) {
        const allowed = Object.keys(properties).map((k) => `\`${k}\``).join(", ") || "none";
        throw new InvalidArguments(`unknown field \`${join(path, name)}\` (allowed: ${allowed})`);
      } else if (isObject(schema.additionalProperties)) check(v, schema.additionalProperties, join(path, name));
    }
  }
  if (Array.isArray(value) && isObject(schema.items)) {
    value.forEach((v, i) => check(v, schema.items, `${path}[${i}]`));
  }
}

function join(path, name) {
  return path ? `${path}.${name}` : name;
}

function printStack(error) {
  console.error(error instanceof Error && error.stack ? `${error.name}: ${error.message}\n${error.stack}` : String(error));
}

/** An error thrown by a tool or prompt as its `tool-error`. */
function failure(error) {
  if (error instanceof InvalidArguments) return { tag: "invalid-arguments", val: error.message };
  printStack(error);
  if (error instanceof ToolFailed) return { tag: "failed", val: error.message };
  if (error instanceof Error) return { tag: "failed", val: error.message ? `${error.name}: ${error.message}` : error.name };
  return { tag: "failed", val: typeof error === "string" ? error : JSON.stringify(error) ?? String(error) };
}

/** An error thrown by a resource read: `not-found` for `ResourceNotFound`, `failed` otherwise. */
function readFailure(error) {
  if (error instanceof ResourceNotFound) return { tag: "not-found", val: error.message };
  printStack(error);
  return { tag: "failed", val: error instanceof Error ? (error.message ? `${error.name}: ${error.message}` : error.name) : String(error) };
}

/**
 * The `tool` export of a plugin: `export const tool = definePlugin({ tools, declare })`.
 *
 * `tools`: definitions `{ name, title?, description, parameters, outputSchema?, hints?,
 * task?, deferred?, run }` (`hints`: `readOnly`, `destructive`, `idempotent`,
 * `openWorld`; `task`: `"optional"` or `"required"` lets an MCP server run the
 * tool's calls as tasks, and `deferred: true` makes a call a task only when
 * it calls `beginTask()`); `declare`: the capabilities asked for, `{ env,
 * dirs, http, secrets, tools }` (lists of strings) and `{ elicitation,
 * sampling, roots }` (true or false).
 */
export function definePlugin({ tools = [], declare = {} } = {}) {
  // A plugin may offer only prompts or resources: then its list is empty.
  if (!Array.isArray(tools)) throw new TypeError("definePlugin: tools must be a list");
  const byName = new Map();
  for (const def of tools) {
    checkDefinition(def, byName);
    const parameters = { additionalProperties: false, ...def.parameters };
    byName.set(def.name, { ...def, parameters });
  }
  const declared = checkDeclaration(declare);
  const capabilities = capabilitiesRecord(declared);
  const section = [...(declared.roots ? ["client roots"] : []), ...[...byName.values()].flatMap(taskLine)];
  const specs = [...byName.values()].map((def) => ({
    name: def.name,
    title: def.title,
    description: def.description,
    parameters: JSON.stringify(def.parameters),
    outputSchema: def.outputSchema === undefined ? undefined : JSON.stringify(def.outputSchema),
    hints: Object.fromEntries(HINTS.map((h) => [h, def.hints?.[h]])),
  }));
  const plugin = {
    listTools: () => specs,
    declare: () => capabilities,
    async callTool(name, argumentsJson) {
      const def = byName.get(name);
      if (!def) throw { tag: "invalid-arguments", val: `this plugin has no tool named ${JSON.stringify(name)}` };
      let result;
      try {
        let args;
        try {
          args = JSON.parse(argumentsJson);
        } catch (e) {
          throw new InvalidArguments(`the arguments are not JSON: ${e.message}`);
        }
        check(args, def.parameters, "");
        result = await def.run(args);
      } catch (e) {
        // A throw that is not a tool-error payload would trap the instance.
        throw failure(e);
      }
      try {
        return outputToWit(result, `the result of ${name}`);
      } catch (e) {
        throw { tag: "failed", val: `the result of ${name} cannot be sent: ${e.message}` };
      }
    },
  };
  // Not enumerable: the component's `tool` export is the three functions.
  Object.defineProperty(plugin, SECTION, { value: Object.freeze(section) });
  return plugin;
}

// --- nested calls -------------------------------------------------------------------

function resultValue(tool, out) {
  if (out.structured !== undefined && out.structured !== null) {
    try {
      return JSON.parse(out.structured);
    } catch (e) {
      throw new CallError(tool, "invalid_result", `the structured result is not JSON: ${e.message}`);
    }
  }
  const blocks = out.content.map(blockFromWit);
  if (blocks.every((b) => b[BLOCK] === "text")) return blocks.map((b) => b.text).join("\n");
  return blocks;
}

/**
 * Calls tool `name` through the host with `args` (an object) and returns its
 * result: its structured JSON when it gives one; else its text, when it
 * answered only text; else its content blocks. Throws `CallError` (with the
 * host's `code`) when the call fails; uncaught, it fails the calling tool
 * with that message.
 */
export function call(name, args = {}) {
  let result;
  try {
    result = hostCall(name, JSON.stringify(args));
  } catch (e) {
    const payload = e?.payload;
    if (payload && typeof payload.code === "string") throw new CallError(name, payload.code, payload.message);
    throw e;
  }
  return resultValue(name, result);
}

/**
 * Runs several `[name, args]` calls at once and returns their results in
 * order; a call that failed is a `CallError` in its place (not thrown).
 */
export function callMany(calls) {
  const results = hostCallMany(calls.map(([name, args]) => ({ name, arguments: JSON.stringify(args ?? {}) })));
  return results.map((r, i) => {
    const name = calls[i][0];
    if (r.tag === "err") return new CallError(name, r.val.code, r.val.message);
    try {
      return resultValue(name, r.val);
    } catch (e) {
      return e;
    }
  });
}

// --- logs and progress --------------------------------------------------------------

/** MCP's eight log levels, least severe first. */
export const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
// toolhost:plugin@0.2.0's names, still taken.
const ALIASES = { trace: "debug", warn: "warning" };

/**
 * Writes a record into the host's log, and to an MCP client that asked for
 * the call's log; `level` is one of `LEVELS` (`trace` and `warn` are taken
 * for debug and warning). `fields` are attached (non-strings as JSON).
 */
export function log(level, message, fields = {}) {
  const name = ALIASES[level] ?? level;
  if (!LEVELS.includes(name)) throw new TypeError(`log level ${level} is not one of ${LEVELS.join(", ")}`);
  const pairs = Object.entries(fields).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]);
  hostLog(name, String(message), pairs);
}

/** Reports that `done` units of `total` (when known) are finished; never fails. */
export function progress(done, total, message) {
  report(done, total, message);
}

// --- completions ------------------------------------------------------------------------

/** The most values one completion carries (MCP's limit). */
const MAX_COMPLETIONS = 100;

function completionOf(values) {
  if (!Array.isArray(values) || values.some((v) => typeof v !== "string")) {
    throw new TypeError("a completion is a list of strings (or { values, total, hasMore })");
  }
  return { values: values.slice(0, MAX_COMPLETIONS), total: values.length, hasMore: values.length > MAX_COMPLETIONS };
}

function checkCompleter(completer, where) {
  if (completer === undefined) return;
  const choices = Array.isArray(completer) && completer.every((c) => typeof c === "string");
  if (!choices && typeof completer !== "function") {
    throw new TypeError(`${where}: complete must be a list of choices or a function (value, context)`);
  }
}

// What `completer` (a list of choices, matched by prefix, or a function) suggests for `value`.
async function runCompleter(completer, value, context) {
  if (completer === undefined) return { values: [], hasMore: false };
  let result;
  if (Array.isArray(completer)) {
    const prefix = value.toLowerCase();
    return completionOf(completer.filter((c) => c.toLowerCase().startsWith(prefix)));
  }
  try {
    result = await completer(value, context);
    if (isObject(result) && Array.isArray(result.values)) {
      const c = completionOf(result.values);
      return { values: c.values, total: result.total ?? undefined, hasMore: Boolean(result.hasMore) || c.hasMore };
    }
    return completionOf(result);
  } catch (e) {
    throw failure(e);
  }
}

// --- prompts ----------------------------------------------------------------------------

function checkPrompt(def, seen) {
  const where = `prompt ${isObject(def) && typeof def.name === "string" ? def.name : JSON.stringify(def?.name)}`;
  if (!isObject(def)) throw new TypeError(`definePrompts: every prompt is an object, got ${JSON.stringify(def)}`);
  checkName(def.name, "prompt", where);
  if (seen.has(def.name)) throw new TypeError(`${where}: a prompt of this name is already defined`);
  optionalString(def.title, "title", where);
  optionalString(def.description, "description", where);
  if (typeof def.render !== "function") throw new TypeError(`${where}: render must be a function`);
  const args = def.arguments ?? [];
  if (!Array.isArray(args)) throw new TypeError(`${where}: arguments is a list of { name, description?, required?, complete? }`);
  const names = new Set();
  for (const arg of args) {
    if (!isObject(arg) || typeof arg.name !== "string" || !arg.name) throw new TypeError(`${where}: every argument has a name`);
    if (names.has(arg.name)) throw new TypeError(`${where}: argument ${arg.name} is named twice`);
    names.add(arg.name);
    optionalString(arg.title, "title", `${where}, argument ${arg.name}`);
    optionalString(arg.description, "description", `${where}, argument ${arg.name}`);
    if (arg.required !== undefined && typeof arg.required !== "boolean") {
      throw new TypeError(`${where}, argument ${arg.name}: required must be true or false`);
    }
    checkCompleter(arg.complete, `${where}, argument ${arg.name}`);
  }
  return args;
}

function rendered(result, where) {
  let description;
  if (isObject(result) && !isBlock(result) && Array.isArray(result.messages)) {
    description = optionalString(result.description, "description", where);
    result = result.messages;
  }
  return { description, messages: messagesOf(result, where) };
}

/**
 * The `prompts` export: `export const prompts = definePrompts([...])`. Each
 * prompt: `{ name, title?, description?, arguments?, render }`; an argument
 * `{ name, title?, description?, required?, complete? }`, where `complete`
 * is a list of choices (matched by prefix) or a function `(value, context)`
 * returning suggestions (a list, or `{ values, total, hasMore }`). `render(args)`
 * (may be async) gets the arguments as an object of strings and returns the
 * messages: a string (the user's), a block, a `{ role, content }`, a list of
 * those, or `{ messages, description }`.
 */
export function definePrompts(prompts) {
  if (!Array.isArray(prompts)) throw new TypeError("definePrompts: prompts must be a list");
  const byName = new Map();
  for (const def of prompts) {
    const args = checkPrompt(def, byName);
    byName.set(def.name, { ...def, arguments: args });
  }
  const specs = [...byName.values()].map((def) => ({
    name: def.name,
    title: def.title,
    description: def.description,
    arguments: def.arguments.map((a) => ({ name: a.name, title: a.title, description: a.description, required: a.required ?? false })),
  }));
  return {
    listPrompts: () => specs,
    async getPrompt(name, pairs) {
      const def = byName.get(name);
      if (!def) throw { tag: "invalid-arguments", val: `this plugin has no prompt named ${JSON.stringify(name)}` };
      try {
        const args = Object.fromEntries(pairs);
        const known = def.arguments.map((a) => a.name);
        for (const key of Object.keys(args)) {
          if (!known.includes(key)) throw new InvalidArguments(`unknown argument \`${key}\` (allowed: ${known.join(", ") || "none"})`);
        }
        for (const a of def.arguments) {
          if (a.required && !(a.name in args)) throw new InvalidArguments(`missing required argument \`${a.name}\``);
        }
        return rendered(await def.render(args), `prompt ${name}`);
      } catch (e) {
        throw failure(e);
      }
    },
    async complete(name, argument, value, context) {
      const def = byName.get(name);
      if (!def) throw { tag: "invalid-arguments", val: `this plugin has no prompt named ${JSON.stringify(name)}` };
      const arg = def.arguments.find((a) => a.name === argument);
      return runCompleter(arg?.complete, value, Object.fromEntries(context));
    },
  };
}

// --- resources ------------------------------------------------------------------------------

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const MAX_URI_BYTES = 2048;

// The host's rule for a resource URI or template.
function checkUri(uri, where) {
  if (typeof uri !== "string" || !uri) throw new TypeError(`${where}: a URI is a non-empty string`);
  if (new TextEncoder().encode(uri).length > MAX_URI_BYTES) throw new TypeError(`${where}: the URI is longer than ${MAX_URI_BYTES} bytes`);
  if (/[\s\u0000-\u001f\u007f-\u009f]/.test(uri)) throw new TypeError(`${where}: ${JSON.stringify(uri)} contains whitespace or control characters`);
  if (!SCHEME.test(uri)) throw new TypeError(`${where}: ${JSON.stringify(uri)} has no scheme (\`scheme:...\`)`);
}

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

// A URI template as the host matches it: `{name}` (one or more characters
// other than `/ ? #`) and `{+name}` (one or more of any).
function parseTemplate(template, where) {
  checkUri(template, where);
  const bad = (why) => new TypeError(`${where}: URI template ${JSON.stringify(template)}: ${why}`);
  const names = [];
  let pattern = "^";
  let rest = template;
  let afterVar = false;
  for (let open = rest.indexOf("{"); open >= 0; open = rest.indexOf("{")) {
    const literal = rest.slice(0, open);
    if (literal.includes("}")) throw bad("a `}` is not opened");
    if (!literal && afterVar) throw bad("two variables in a row cannot be told apart");
    pattern += escapeRegExp(literal);
    const close = rest.indexOf("}", open);
    if (close < 0) throw bad("a `{` is not closed");
    const inner = rest.slice(open + 1, close);
    const reserved = inner.startsWith("+");
    const name = reserved ? inner.slice(1) : inner;
    if (!/^[A-Za-z0-9_]+$/.test(name)) throw bad(`\`{${inner}}\` is not a variable the host matches (\`{name}\` or \`{+name}\`)`);
    if (names.includes(name)) throw bad(`variable \`${name}\` appears twice`);
    pattern += reserved ? "([\\s\\S]+?)" : "([^/?#]+?)";
    names.push(name);
    rest = rest.slice(close + 1);
    afterVar = true;
  }
  if (rest.includes("}")) throw bad("a `}` is not opened");
  const regex = new RegExp(`${pattern}${escapeRegExp(rest)}$`, "u");
  return {
    names,
    match(uri) {
      const m = regex.exec(uri);
      return m ? Object.fromEntries(names.map((n, i) => [n, m[i + 1]])) : undefined;
    },
  };
}

function checkResourceCommon(def, where) {
  if (typeof def.name !== "string" || !def.name) throw new TypeError(`${where}: name must be a non-empty string`);
  optionalString(def.title, "title", where);
  optionalString(def.description, "description", where);
  optionalString(def.mimeType, "mimeType", where);
  if (typeof def.read !== "function") throw new TypeError(`${where}: read must be a function`);
  return checkAnnotations(def.annotations, where);
}

function contentsOf(result, uri, mimeType) {
  if (typeof result === "string") result = textResource(uri, result, mimeType);
  else if (result instanceof Uint8Array || result instanceof ArrayBuffer) result = blobResource(uri, result, mimeType);
  const items = Array.isArray(result) ? result : [result];
  return items.map((item) => {
    if (!isBlock(item) || !["text-resource", "blob-resource"].includes(item[BLOCK])) {
      throw new TypeError(`reading ${uri} returned ${JSON.stringify(item) ?? String(item)}: return a string, bytes, textResource() or blobResource()`);
    }
    if (item.annotations !== undefined) {
      throw new TypeError(`reading ${uri}: a resource's contents carry no annotations (state them in its definition)`);
    }
    return resourceContentsToWit(item);
  });
}

/**
 * The `resources` export: `export const resources = defineResources({ resources, templates })`.
 *
 * A resource: `{ uri, name, title?, description?, mimeType?, size?,
 * annotations?, read() }`; a template: `{ uriTemplate, name, title?,
 * description?, mimeType?, annotations?, complete?, read(variables, uri) }`,
 * where the template's variables are `{name}` (no `/ ? #`) or `{+name}`
 * (anything) and `complete` maps a variable to its choices or a function, as
 * a prompt argument's. `read` (may be async) returns a string (the text), a
 * `Uint8Array` (the blob, of `mimeType`), `textResource()`/`blobResource()`
 * contents, or a list of them; `throw new ResourceNotFound(msg)` answers
 * `not-found`, any other throw `failed`.
 */
export function defineResources({ resources = [], templates = [] } = {}) {
  if (!Array.isArray(resources) || !Array.isArray(templates)) {
    throw new TypeError("defineResources({ resources, templates }): both are lists");
  }
  const byUri = new Map();
  for (const def of resources) {
    const where = `resource ${isObject(def) ? def.uri : JSON.stringify(def)}`;
    if (!isObject(def)) throw new TypeError(`defineResources: every resource is an object, got ${JSON.stringify(def)}`);
    checkUri(def.uri, where);
    if (byUri.has(def.uri)) throw new TypeError(`${where}: a resource with this URI is already defined`);
    const annotations = checkResourceCommon(def, where);
    if (def.size !== undefined && !(Number.isSafeInteger(def.size) && def.size >= 0)) throw new TypeError(`${where}: size must be a number of bytes`);
    byUri.set(def.uri, { ...def, annotations });
  }
  const byTemplate = new Map();
  for (const def of templates) {
    const where = `resource template ${isObject(def) ? def.uriTemplate : JSON.stringify(def)}`;
    if (!isObject(def)) throw new TypeError(`defineResources: every template is an object, got ${JSON.stringify(def)}`);
    const template = parseTemplate(def.uriTemplate, where);
    if (byTemplate.has(def.uriTemplate)) throw new TypeError(`${where}: a template of this text is already defined`);
    const annotations = checkResourceCommon(def, where);
    const complete = def.complete ?? {};
    if (!isObject(complete)) throw new TypeError(`${where}: complete maps variables to choices or functions`);
    for (const [name, completer] of Object.entries(complete)) {
      if (!template.names.includes(name)) throw new TypeError(`${where}: complete names ${name}, which is not one of its variables (${template.names.join(", ")})`);
      checkCompleter(completer, `${where}, variable ${name}`);
    }
    byTemplate.set(def.uriTemplate, { ...def, annotations, template, complete });
  }
  const resourceSpecs = [...byUri.values()].map((d) => ({
    uri: d.uri,
    name: d.name,
    title: d.title,
    description: d.description,
    mimeType: d.mimeType,
    size: d.size === undefined ? undefined : BigInt(d.size),
    annotations: annotationsToWit(d.annotations),
  }));
  const templateSpecs = [...byTemplate.values()].map((d) => ({
    uriTemplate: d.uriTemplate,
    name: d.name,
    title: d.title,
    description: d.description,
    mimeType: d.mimeType,
    annotations: annotationsToWit(d.annotations),
  }));
  return {
    listResources: () => resourceSpecs,
    listTemplates: () => templateSpecs,
    async readResource(uri) {
      try {
        const def = byUri.get(uri);
        if (def) return contentsOf(await def.read(), uri, def.mimeType);
        for (const t of byTemplate.values()) {
          const variables = t.template.match(uri);
          if (variables) return contentsOf(await t.read(variables, uri), uri, t.mimeType);
        }
      } catch (e) {
        throw readFailure(e);
      }
      throw { tag: "not-found", val: `this plugin has no resource ${uri}` };
    },
    async complete(template, argument, value, context) {
      const def = byTemplate.get(template);
      if (!def) throw { tag: "invalid-arguments", val: `this plugin has no resource template ${JSON.stringify(template)}` };
      return runCompleter(def.complete[argument], value, Object.fromEntries(context));
    },
  };
}
