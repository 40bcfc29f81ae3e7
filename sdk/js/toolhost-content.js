// Content and errors for JavaScript plugins: the content blocks a tool
// returns, a prompt says and a resource holds (`text`, `image`, `audio`,
// `resourceLink`, `textResource`, `blobResource`, `output`), the errors the
// helpers throw and turn into WIT errors, and how each becomes its WIT
// value and back. Import them from toolhost-plugin.js, which re-exports
// what is public; the rest is shared by toolhost-plugin.js and
// toolhost-client.js.

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

export const BLOCK = Symbol("toolhost content block");
const OUTPUT = Symbol("toolhost output");
const ROLES = ["user", "assistant"];

export function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

export function checkAnnotations(annotations, where) {
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

export function optionalString(value, what, where) {
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

export function annotationsToWit(a) {
  return a === undefined ? undefined : { audience: a.audience, priority: a.priority, lastModified: a.lastModified };
}

export function resourceContentsToWit(b) {
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
export function blockFromWit(b) {
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
export function outputToWit(result, where) {
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

/** Messages: a string or block (the user's), a `{ role, content }`, or a list of them. */
export function messagesOf(messages, where) {
  const list = Array.isArray(messages) ? messages : [messages];
  return list.map((m, i) => {
    const message = typeof m === "string" || isBlock(m) ? { role: "user", content: m } : m;
    if (!isObject(message) || !ROLES.includes(message.role)) {
      throw new TypeError(`${where}: message ${i} must be a string, a block or { role: "user" | "assistant", content }`);
    }
    return { role: message.role, content: blockToWit(message.content, `${where}: message ${i}`) };
  });
}
