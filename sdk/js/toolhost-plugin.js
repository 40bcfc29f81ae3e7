// Write toolhost plugins in JavaScript: a tool is a definition object with a
// JSON Schema and a `run` function. Built with jco (`jco componentize --bundle
// --bundle-config bundle.config.mjs`) against `toolhost:plugin@0.2.0`:
//
//   import { definePlugin, InvalidArguments } from "./toolhost-plugin.js";
//
//   export const tool = definePlugin({
//     declare: { env: ["GREETING"] },
//     tools: [{
//       name: "greet",
//       description: "Greets someone by name.",
//       parameters: {
//         type: "object",
//         properties: { name: { type: "string", description: "Who to greet." } },
//         required: ["name"],
//       },
//       hints: { readOnly: true },
//       run({ name }) { return `Hello, ${name}!`; },
//     }],
//   });
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
// - `run` may be async. Its value becomes the call's JSON; return
//   `output(value, text)` to add the text the model should read.
// - `throw new InvalidArguments(msg)` gives `invalid-arguments`; any other
//   throw gives `failed` with the error's name and message (`ToolFailed`: the
//   message alone), and its stack goes to stderr, which the host logs. A throw
//   never traps the instance.
// - `call`, `callMany` call other tools through the host (declare them in
//   `declare.tools`; the operator grants them); `progress` reports progress
//   (MCP progress); `log` writes to the host's log.
import { call as hostCall, callMany as hostCallMany } from "toolhost:plugin/tools@0.2.0";
import { report } from "toolhost:plugin/progress@0.2.0";
import { log as hostLog } from "toolhost:plugin/host@0.2.0";

/** The arguments do not fit the tool: becomes `invalid-arguments`. */
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

/** A nested call did not produce a result; `code` is the host's error code. */
export class CallError extends Error {
  constructor(tool, code, message) {
    super(`calling ${tool} failed (${code}): ${message}`);
    this.name = "CallError";
    this.tool = tool;
    this.code = code;
    this.detail = message;
  }
}

const OUTPUT = Symbol("toolhost output");

/** A result with the text the model should read besides its JSON `value`. */
export function output(value, text) {
  if (text !== undefined && typeof text !== "string") {
    throw new TypeError("output(value, text): text must be a string");
  }
  return { [OUTPUT]: true, value, text };
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const CAPABILITIES = ["dirs", "env", "http", "secrets", "tools"];
const HINTS = ["readOnly", "destructive", "idempotent", "openWorld"];

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function isObjectSchema(schema) {
  const type = schema.type;
  return type === "object" || (Array.isArray(type) && type.includes("object"));
}

function checkDefinition(def, seen) {
  const where = `tool ${isObject(def) && typeof def.name === "string" ? def.name : JSON.stringify(def?.name)}`;
  if (!isObject(def)) throw new TypeError(`definePlugin: every tool is an object, got ${JSON.stringify(def)}`);
  if (typeof def.name !== "string" || !NAME.test(def.name)) {
    throw new TypeError(`${where}: a tool name is 1 to 64 characters from A-Z a-z 0-9 _ -`);
  }
  if (seen.has(def.name)) throw new TypeError(`${where}: a tool of this name is already defined`);
  if (typeof def.description !== "string" || !def.description.trim()) {
    throw new TypeError(`${where}: give it a description: the model reads it to decide when to call the tool`);
  }
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
}

function checkDeclaration(declare) {
  if (!isObject(declare)) throw new TypeError("definePlugin: declare is an object of string lists");
  const out = {};
  for (const key of Object.keys(declare)) {
    if (!CAPABILITIES.includes(key)) {
      throw new TypeError(`definePlugin: unknown capability ${key} (known: ${CAPABILITIES.join(", ")})`);
    }
  }
  for (const key of CAPABILITIES) {
    const names = declare[key] ?? [];
    if (!Array.isArray(names) || names.some((n) => typeof n !== "string" || !n)) {
      throw new TypeError(`definePlugin: declare.${key} must be a list of non-empty strings`);
    }
    out[key] = [...new Set(names)];
  }
  return out;
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

function failure(error) {
  if (error instanceof InvalidArguments) return { tag: "invalid-arguments", val: error.message };
  console.error(error instanceof Error && error.stack ? `${error.name}: ${error.message}\n${error.stack}` : String(error));
  if (error instanceof ToolFailed) return { tag: "failed", val: error.message };
  if (error instanceof Error) return { tag: "failed", val: error.message ? `${error.name}: ${error.message}` : error.name };
  return { tag: "failed", val: typeof error === "string" ? error : JSON.stringify(error) ?? String(error) };
}

function toOutput(result) {
  if (isObject(result) && result[OUTPUT]) {
    return { json: JSON.stringify(result.value ?? null), text: result.text };
  }
  return { json: JSON.stringify(result ?? null), text: undefined };
}

/**
 * The `tool` export of a plugin: `export const tool = definePlugin({ tools, declare })`.
 *
 * `tools`: definitions `{ name, description, parameters, outputSchema?, hints?, run }`
 * (`hints`: `readOnly`, `destructive`, `idempotent`, `openWorld`); `declare`:
 * the capabilities asked for, `{ env, dirs, http, secrets, tools }` (lists of strings).
 */
export function definePlugin({ tools, declare = {} }) {
  if (!Array.isArray(tools) || tools.length === 0) throw new TypeError("definePlugin: tools must be a non-empty list");
  const byName = new Map();
  for (const def of tools) {
    checkDefinition(def, byName);
    const parameters = { additionalProperties: false, ...def.parameters };
    byName.set(def.name, { ...def, parameters });
  }
  const capabilities = checkDeclaration(declare);
  const specs = [...byName.values()].map((def) => ({
    name: def.name,
    description: def.description,
    parameters: JSON.stringify(def.parameters),
    outputSchema: def.outputSchema === undefined ? undefined : JSON.stringify(def.outputSchema),
    hints: Object.fromEntries(HINTS.map((h) => [h, def.hints?.[h]])),
  }));
  return {
    listTools: () => specs,
    declare: () => capabilities,
    async callTool(name, argumentsJson) {
      const def = byName.get(name);
      if (!def) throw { tag: "invalid-arguments", val: `this plugin has no tool named ${JSON.stringify(name)}` };
      try {
        let args;
        try {
          args = JSON.parse(argumentsJson);
        } catch (e) {
          throw new InvalidArguments(`the arguments are not JSON: ${e.message}`);
        }
        check(args, def.parameters, "");
        return toOutput(await def.run(args));
      } catch (e) {
        // A throw that is not a tool-error payload would trap the instance.
        throw failure(e);
      }
    },
  };
}

function decoded(tool, result) {
  try {
    return JSON.parse(result.json);
  } catch (e) {
    throw new CallError(tool, "invalid_result", `the result is not JSON: ${e.message}`);
  }
}

/**
 * Calls tool `name` through the host with `args` (an object) and returns its
 * JSON result, decoded. Throws `CallError` (with the host's `code`) when the
 * call fails; uncaught, it fails the calling tool with that message.
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
  return decoded(name, result);
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
      return decoded(name, r.val);
    } catch (e) {
      return e;
    }
  });
}

/** Reports that `done` units of `total` (when known) are finished; never fails. */
export function progress(done, total, message) {
  report(done, total, message);
}

const LEVELS = ["trace", "debug", "info", "warn", "error"];

/** Writes a record into the host's log; `level` is trace, debug, info, warn or error. */
export function log(level, message, fields = {}) {
  if (!LEVELS.includes(level)) throw new TypeError(`log level ${level} is not one of ${LEVELS.join(", ")}`);
  const pairs = Object.entries(fields).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]);
  hostLog(level, message, pairs);
}
