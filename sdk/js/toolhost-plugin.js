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
// The map of this module: `definePlugin` (the `tool` export); the content a
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
import { call as hostCall, callMany as hostCallMany } from "toolhost:plugin/tools@0.3.1";
import { report } from "toolhost:plugin/progress@0.3.1";
import { log as hostLog } from "toolhost:plugin/host@0.3.1";
import {
  ask as hostAsk,
  available as hostAvailable,
  beginTask as hostBeginTask,
  elicit as hostElicit,
  listRoots as hostListRoots,
  sample as hostSample,
} from "toolhost:plugin/client@0.3.1";

/** The arguments do not fit the tool or prompt: becomes `invalid-arguments`. */
export class InvalidArguments extends Error {
  constructor(message) {
    super(message);
    this.name = "InvalidArguments";
  }
}

/** The tool could not do its work: becomes `failed` with this message alone. */
export class ToolFailed extends Error {
  constructor(message) {
    super(message);
    this.name = "ToolFailed";
  }
}

/**
 * Something the plugin asked of the host did not happen (WIT `host-error`);
 * `code` is the host's error code (`capability_not_granted`, `unavailable`,
 * `blocked`, `timeout`, `unknown_tool`, `tool_failed`, ...).
 */
export class HostError extends Error {
  constructor(code, message, text = `${code}: ${message}`) {
    super(text);
    this.name = "HostError";
    this.code = code;
    this.detail = message;
  }
}

/** A resource read found nothing at that URI: becomes `not-found`. */
export class ResourceNotFound extends Error {
  constructor(message) {
    super(message);
    this.name = "ResourceNotFound";
  }
}

/** A nested call (`call`, `callMany`) did not produce a result. */
export class CallError extends HostError {
  constructor(tool, code, message) {
    super(code, message, `calling ${tool} failed (${code}): ${message}`);
    this.name = "CallError";
    this.tool = tool;
  }
}

/** A question to the client (`elicit`, `sample`, `listRoots`, one of `ask`'s) got no answer. */
export class ClientError extends HostError {
  constructor(request, code, message) {
    super(code, message, `${request} failed (${code}): ${message}`);
    this.name = "ClientError";
    this.request = request;
  }
}

// --- content -------------------------------------------------------------------

const BLOCK = Symbol("toolhost content block");
const OUTPUT = Symbol("toolhost output");
const ROLES = ["user", "assistant"];

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function checkAnnotations(annotations, where) {
  if (annotations === undefined || annotations === null) return undefined;
  if (!isObject(annotations)) throw new TypeError(`${where}: annotations must be an object`);
  for (const key of Object.keys(annotations)) {
    if (!["audience", "priority", "lastModified"].includes(key)) {
      throw new TypeError(`${where}: unknown annotation ${key} (known: audience, priority, lastModified)`);
    }
  }
  const { audience = [], priority, lastModified } = annotations;
  if (!Array.isArray(audience) || audience.some((r) => !ROLES.includes(r))) {
    throw new TypeError(`${where}: annotations.audience is a list of "user" and "assistant"`);
  }
  if (priority !== undefined && !(typeof priority === "number" && priority >= 0 && priority <= 1)) {
    throw new TypeError(`${where}: annotations.priority must be a number from 0 to 1`);
  }
  if (lastModified !== undefined && typeof lastModified !== "string") {
    throw new TypeError(`${where}: annotations.lastModified must be an ISO 8601 string`);
  }
  return { audience, priority, lastModified };
}

function bytesOf(value, where) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (typeof value === "string") throw new TypeError(`${where} takes bytes (a Uint8Array), not a string: decode base64 text first`);
  throw new TypeError(`${where} takes bytes (a Uint8Array)`);
}

function need(value, what, where) {
  if (typeof value !== "string" || !value) throw new TypeError(`${where}: ${what} must be a non-empty string`);
  return value;
}

function optionalString(value, what, where) {
  if (value !== undefined && value !== null && typeof value !== "string") throw new TypeError(`${where}: ${what} must be a string`);
  return value ?? undefined;
}

function block(kind, fields, annotations, where) {
  return { [BLOCK]: kind, ...fields, annotations: checkAnnotations(annotations, where) };
}

/** Text for the model. */
export function text(value, annotations) {
  if (typeof value !== "string") throw new TypeError("text(value): value must be a string");
  return block("text", { text: value }, annotations, "text()");
}

/** An image: its bytes (a Uint8Array) and MIME type; the host base64-encodes them for MCP. */
export function image(data, mimeType, annotations) {
  return block("image", { data: bytesOf(data, "image(data)"), mimeType: need(mimeType, "mimeType", "image()") }, annotations, "image()");
}

/** A sound: its bytes and MIME type (`audio/wav`...). */
export function audio(data, mimeType, annotations) {
  return block("audio", { data: bytesOf(data, "audio(data)"), mimeType: need(mimeType, "mimeType", "audio()") }, annotations, "audio()");
}

/** A link to a resource the client may read: `{ uri, name, title?, description?, mimeType?, size? }`. */
export function resourceLink(link, annotations) {
  if (!isObject(link)) throw new TypeError("resourceLink(link): link is { uri, name, title?, description?, mimeType?, size? }");
  const where = "resourceLink()";
  if (link.size !== undefined && !(Number.isSafeInteger(link.size) && link.size >= 0)) {
    throw new TypeError(`${where}: size must be a number of bytes`);
  }
  const fields = {
    uri: need(link.uri, "uri", where),
    name: need(link.name, "name", where),
    title: optionalString(link.title, "title", where),
    description: optionalString(link.description, "description", where),
    mimeType: optionalString(link.mimeType, "mimeType", where),
    size: link.size,
  };
  return block("resource-link", fields, annotations, where);
}

/** A resource's contents as text: what a resource read returns, and in a tool's result a resource embedded whole. */
export function textResource(uri, value, mimeType, annotations) {
  if (typeof value !== "string") throw new TypeError("textResource(uri, text): text must be a string");
  const where = "textResource()";
  return block("text-resource", { uri: need(uri, "uri", where), text: value, mimeType: optionalString(mimeType, "mimeType", where) }, annotations, where);
}

/** A resource's contents as bytes (see `textResource`). */
export function blobResource(uri, data, mimeType, annotations) {
  const where = "blobResource()";
  return block("blob-resource", { uri: need(uri, "uri", where), blob: bytesOf(data, "blobResource(data)"), mimeType: optionalString(mimeType, "mimeType", where) }, annotations, where);
}

/** Whether `value` is a content block made by `text`, `image`, ... */
export function isBlock(value) {
  return isObject(value) && value[BLOCK] !== undefined;
}

/**
 * A tool's result: `value`, the structured result (a JSON object, or
 * `undefined`); `text`, the text the model reads (first); `content`, more
 * blocks (a string is `text(...)`).
 */
export function output(value, text, content = []) {
  if (text !== undefined && typeof text !== "string") throw new TypeError("output(value, text): text must be a string");
  if (!Array.isArray(content)) throw new TypeError("output(value, text, content): content is a list of blocks");
  return { [OUTPUT]: true, value, text, content };
}

function annotationsToWit(a) {
  return a === undefined ? undefined : { audience: a.audience, priority: a.priority, lastModified: a.lastModified };
}

function resourceContentsToWit(b) {
  if (b[BLOCK] === "text-resource") return { tag: "text", val: { uri: b.uri, mimeType: b.mimeType, text: b.text } };
  return { tag: "blob", val: { uri: b.uri, mimeType: b.mimeType, blob: b.blob } };
}

/** A block (or a string) as WIT `content-block`. */
function blockToWit(b, where) {
  if (typeof b === "string") b = text(b);
  if (!isBlock(b)) {
    throw new TypeError(`${where}: ${JSON.stringify(b) ?? String(b)} is not content (use text(), image(), audio(), resourceLink(), textResource(), blobResource(), or a string)`);
  }
  let content;
  switch (b[BLOCK]) {
    case "text":
      content = { tag: "text", val: b.text };
      break;
    case "image":
    case "audio":
      content = { tag: b[BLOCK], val: { data: b.data, mimeType: b.mimeType } };
      break;
    case "resource-link":
      content = {
        tag: "resource-link",
        val: { uri: b.uri, name: b.name, title: b.title, description: b.description, mimeType: b.mimeType, size: b.size === undefined ? undefined : BigInt(b.size) },
      };
      break;
    default:
      content = { tag: "embedded-resource", val: resourceContentsToWit(b) };
  }
  return { content, annotations: annotationsToWit(b.annotations) };
}

function annotationsFromWit(a) {
  if (!a) return undefined;
  const out = { audience: a.audience ?? [] };
  if (a.priority !== undefined && a.priority !== null) out.priority = a.priority;
  if (a.lastModified !== undefined && a.lastModified !== null) out.lastModified = a.lastModified;
  return out;
}

/** A WIT `content-block` as a block. */
function blockFromWit(b) {
  const c = b.content;
  const annotations = annotationsFromWit(b.annotations);
  switch (c.tag) {
    case "text":
      return text(c.val, annotations);
    case "image":
      return image(c.val.data, c.val.mimeType, annotations);
    case "audio":
      return audio(c.val.data, c.val.mimeType, annotations);
    case "resource-link": {
      const v = c.val;
      const size = v.size === undefined || v.size === null ? undefined : Number(v.size);
      return resourceLink({ uri: v.uri, name: v.name, title: v.title, description: v.description, mimeType: v.mimeType, size }, annotations);
    }
    default: {
      const r = c.val;
      return r.tag === "text"
        ? textResource(r.val.uri, r.val.text, r.val.mimeType ?? undefined, annotations)
        : blobResource(r.val.uri, r.val.blob, r.val.mimeType ?? undefined, annotations);
    }
  }
}

function structured(value, where) {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) {
    throw new TypeError(`${where}: the structured result (MCP structuredContent) must be a JSON object; return other values as text`);
  }
  return JSON.stringify(value);
}

function allBlocks(value) {
  if (!Array.isArray(value) || value.length === 0) return false;
  const kinds = value.map(isBlock);
  if (kinds.some(Boolean) && !kinds.every(Boolean)) {
    throw new TypeError("a result list mixes content blocks and plain values: wrap strings in text(...)");
  }
  return kinds.every(Boolean);
}

/** What a tool returned, as WIT `tool-output`. */
function outputToWit(result, where) {
  if (isObject(result) && result[OUTPUT]) {
    const blocks = result.content.map((b) => blockToWit(b, where));
    if (result.text !== undefined) blocks.unshift(blockToWit(text(result.text), where));
    return { structured: structured(result.value, where), content: blocks };
  }
  if (isBlock(result)) return { content: [blockToWit(result, where)] };
  if (allBlocks(result)) return { content: result.map((b) => blockToWit(b, where)) };
  if (typeof result === "string") return { content: [blockToWit(text(result), where)] };
  if (result === undefined || result === null) return { content: [] };
  if (isObject(result)) return { structured: JSON.stringify(result), content: [] };
  const json = JSON.stringify(result);
  if (json === undefined) throw new TypeError(`${where}: a ${typeof result} is not JSON`);
  // MCP wants an object as structured content: the value goes as
  // {"result": value}, with its JSON as the text for the model (as MCP
  // servers commonly give such values, and toolhost's Rust SDK does).
  return { structured: `{"result":${json}}`, content: [blockToWit(text(json), where)] };
}

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

// --- the client: its user, its model, its roots --------------------------------------------

function clientError(request, e) {
  const payload = e?.payload;
  if (payload && typeof payload.code === "string") return new ClientError(request, payload.code, payload.message);
  return e;
}

// A question for the user as the host takes it, checked.
function elicitRequest(message, schema, where) {
  if (typeof message !== "string") throw new TypeError(`${where}: message must be a string`);
  if (!isObject(schema) || schema.type !== "object") {
    throw new TypeError(`${where}: the form's schema must describe an object ("type": "object")`);
  }
  return { message, requestedSchema: JSON.stringify(schema) };
}

// The user's answer (WIT `elicit-response`), its content read.
function elicitation(response, request) {
  if (response.content === undefined || response.content === null) return { action: response.action, content: undefined };
  try {
    return { action: response.action, content: JSON.parse(response.content) };
  } catch (e) {
    throw new ClientError(request, "invalid_response", `the answer is not JSON: ${e.message}`);
  }
}

/**
 * Asks the user `message` with a form described by `schema` (a JSON Schema
 * object of primitive properties, as MCP restricts it) and waits for the
 * answer: `{ action, content }`, `action` being `accept` (then `content`
 * holds the form's values), `decline` or `cancel`. Needs `declare: {
 * elicitation: true }` and the operator's grant. Throws `ClientError` when
 * nobody could be asked (`capability_not_granted`, `unavailable`, ...).
 */
export function elicit(message, schema) {
  const request = elicitRequest(message, schema, "elicit(message, schema)");
  let response;
  try {
    response = hostElicit(request.message, request.requestedSchema);
  } catch (e) {
    throw clientError("elicit", e);
  }
  return elicitation(response, "elicit");
}

/** Messages: a string or block (the user's), a `{ role, content }`, or a list of them. */
function messagesOf(messages, where) {
  const list = Array.isArray(messages) ? messages : [messages];
  return list.map((m, i) => {
    const message = typeof m === "string" || isBlock(m) ? { role: "user", content: m } : m;
    if (!isObject(message) || !ROLES.includes(message.role)) {
      throw new TypeError(`${where}: message ${i} must be a string, a block or { role: "user" | "assistant", content }`);
    }
    return { role: message.role, content: blockToWit(message.content, `${where}: message ${i}`) };
  });
}

// A request for a completion (WIT `sampling-request`), checked.
function samplingRequest(messages, options, where) {
  const { maxTokens, systemPrompt, temperature, stopSequences = [], modelPreferences } = options;
  if (!Number.isInteger(maxTokens) || maxTokens <= 0 || maxTokens >= 2 ** 32) {
    throw new TypeError(`${where}: maxTokens must be a positive integer`);
  }
  if (!Array.isArray(stopSequences) || stopSequences.some((s) => typeof s !== "string")) {
    throw new TypeError(`${where}: stopSequences must be a list of strings`);
  }
  const converted = messagesOf(messages, where);
  converted.forEach((m, i) => {
    if (!["text", "image", "audio"].includes(m.content.content.tag)) {
      throw new TypeError(`${where}: message ${i} is ${m.content.content.tag}; sampling takes text, images and audio`);
    }
  });
  return {
    messages: converted,
    systemPrompt: optionalString(systemPrompt, "systemPrompt", where),
    maxTokens,
    temperature,
    stopSequences,
    modelPreferences: modelPreferences === undefined ? undefined : JSON.stringify(modelPreferences),
  };
}

// The model's answer (WIT `sampling-response`).
function sampled(response) {
  const content = blockFromWit(response.content);
  return {
    role: response.role,
    content,
    model: response.model,
    stopReason: response.stopReason ?? undefined,
    text: content[BLOCK] === "text" ? content.text : undefined,
  };
}

/**
 * Asks the client's model for a completion and waits for it. `messages`: a
 * string (the user's), or a list of `{ role, content }` (text, images,
 * audio); `options`: `maxTokens` (required), `systemPrompt`, `temperature`,
 * `stopSequences`, `modelPreferences` (MCP's, as an object). Returns `{
 * role, content, model, stopReason, text }` (`text`: the answer's text, or
 * `undefined` when it is not text). Needs `declare: { sampling: true }` and
 * the operator's grant; throws `ClientError` when no answer came.
 */
export function sample(messages, options = {}) {
  const request = samplingRequest(messages, options, "sample(messages, options)");
  try {
    return sampled(hostSample(request));
  } catch (e) {
    throw clientError("sample", e);
  }
}

const roots = (list) => list.map((r) => ({ uri: r.uri, name: r.name ?? undefined }));

/**
 * Lists the client's roots (MCP `roots/list`), the directories and files
 * it exposes, and waits for them: a list of `{ uri, name }` (`name` may be
 * `undefined`). Needs `declare: { roots: true }` and the operator's grant
 * (`roots = true`); throws `ClientError` as `elicit` does.
 */
export function listRoots() {
  try {
    return roots(hostListRoots());
  } catch (e) {
    throw clientError("listRoots", e);
  }
}

/**
 * What this call may ask its client, to ask only that: `{ elicitation,
 * sampling, roots }`, each true when the plugin declared and was granted
 * the capability and the client can answer it. Never throws.
 */
export function available() {
  const { elicitation, sampling, roots } = hostAvailable();
  return { elicitation, sampling, roots };
}

/**
 * Lets the caller go while this call carries on, as an MCP task. For a tool
 * defined with `task` and `deferred: true` and called by a client that
 * supports MCP tasks, the request is answered now with a task and the call
 * runs on as that task: gather the inputs first (questions asked before are
 * the request's own), then begin the long part. `true` when the call is now
 * a task; `false` when it is not and will not be (the tool is not deferred,
 * the client does not support tasks, the call is a nested one), and the
 * call goes on as before. Never throws.
 */
export function beginTask() {
  return hostBeginTask();
}

/** The most questions one round of `ask` may hold. */
export const MAX_QUESTIONS = 16;
// A question's key as the host accepts it (the rule in wit/0.3.1/plugin.wit).
const KEY = /^[A-Za-z0-9_.-]{1,64}$/;
const KINDS = ["elicit", "sample", "listRoots"];

// One question of a round as WIT `question`, checked, and its kind.
function questionToWit(q, i) {
  const where = `ask: question ${i}`;
  if (!isObject(q)) throw new TypeError(`${where} must be { key, elicit | sample | listRoots }`);
  if (typeof q.key !== "string" || !KEY.test(q.key)) {
    throw new TypeError(`${where}: key ${JSON.stringify(q.key)} is not 1 to 64 characters of A-Z a-z 0-9 _ - .`);
  }
  const kinds = KINDS.filter((k) => q[k] !== undefined);
  if (kinds.length !== 1) throw new TypeError(`${where} (${q.key}): give exactly one of ${KINDS.join(", ")}`);
  const kind = kinds[0];
  const at = `${where} (${q.key})`;
  let request;
  if (kind === "elicit") {
    if (!isObject(q.elicit)) throw new TypeError(`${at}: elicit is { message, schema }`);
    request = { tag: "elicit", val: elicitRequest(q.elicit.message, q.elicit.schema, at) };
  } else if (kind === "sample") {
    if (!isObject(q.sample)) throw new TypeError(`${at}: sample is { messages, maxTokens, ... }`);
    request = { tag: "sample", val: samplingRequest(q.sample.messages, q.sample, at) };
  } else {
    if (q.listRoots !== true) throw new TypeError(`${at}: listRoots must be true`);
    request = { tag: "list-roots" };
  }
  return { kind, wit: { key: q.key, request } };
}

// One answer of a round: what `elicit`, `sample` or `listRoots` returns, or a `ClientError`.
function answerOf(kind, key, result) {
  const request = `question ${key}`;
  if (result.tag === "err") return new ClientError(request, result.val.code, result.val.message);
  const { tag, val } = result.val;
  try {
    if (kind === "elicit" && tag === "elicit") return elicitation(val, request);
  } catch (e) {
    return e;
  }
  if (kind === "sample" && tag === "sample") return sampled(val);
  if (kind === "listRoots" && tag === "roots") return roots(val);
  return new ClientError(request, "unavailable", `the answer is not of the kind asked (${kind})`);
}

/**
 * Asks several questions in one round and waits until all are answered.
 * Each question is `{ key, elicit: { message, schema } }`, `{ key, sample:
 * { messages, maxTokens, ... } }` (`sample`'s options) or `{ key,
 * listRoots: true }`; its key is 1 to 64 characters of `A-Z a-z 0-9 _ - .`,
 * distinct within the round (on MCP 2026-07-28 the client sees it). Returns
 * the answers in order, each what `elicit`, `sample` or `listRoots` returns,
 * or, for a question that got no answer, a `ClientError` in its place (not
 * thrown), so the others' answers are kept. Each needs its own capability,
 * declared and granted. Throws `TypeError` for a malformed question, a key
 * used twice, or more than 16 questions.
 *
 * Ask first: on MCP 2026-07-28 the call ends where it asks and runs again
 * from the start with the answers, so ask the same questions (same keys,
 * same order) before work that must not be done twice.
 */
export function ask(questions) {
  if (!Array.isArray(questions)) throw new TypeError("ask(questions): questions must be a list");
  if (questions.length > MAX_QUESTIONS) {
    throw new TypeError(`ask: one round holds at most ${MAX_QUESTIONS} questions, not ${questions.length}`);
  }
  const asked = questions.map(questionToWit);
  const keys = new Set();
  for (const { wit } of asked) {
    if (keys.has(wit.key)) throw new TypeError(`ask: the key ${JSON.stringify(wit.key)} names two questions of the round`);
    keys.add(wit.key);
  }
  const results = hostAsk(asked.map((q) => q.wit));
  return results.map((result, i) => answerOf(asked[i].kind, asked[i].wit.key, result));
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
