// Asking the client of a call, for JavaScript plugins: its user
// (`elicit`), its model (`sample`), its roots (`listRoots`), several
// questions in one round (`ask`), what it can be asked (`available`), and
// letting the caller go with a task (`beginTask`). Import them from
// toolhost-plugin.js, which re-exports them.
import {
  ask as hostAsk,
  available as hostAvailable,
  beginTask as hostBeginTask,
  elicit as hostElicit,
  listRoots as hostListRoots,
  sample as hostSample,
} from "toolhost:plugin/client@0.3.1";
import { BLOCK, ClientError, blockFromWit, isObject, messagesOf, optionalString } from "./toolhost-content.js";

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
