// The environment and granted folders for JavaScript plugins. StarlingMonkey
// (jco's engine) has no `process.env` and no `fs`: these helpers read them
// through the WASI interfaces the `plugin-wasi` world of
// `toolhost:plugin@0.3.1` names (toolhost-build.mjs adds each to the
// component's world when the plugin uses it). The host still gives only what
// the plugin declared (`declare: { env, dirs }`) and the operator granted: an
// ungranted variable is `undefined`, an ungranted folder is not there.
import { getEnvironment } from "wasi:cli/environment@0.2.12";
import { getDirectories } from "wasi:filesystem/preopens@0.2.12";
import { ToolFailed } from "./toolhost-plugin.js";

/** The value of environment variable `name`, or `undefined` when it is not granted or not set. */
export function env(name) {
  for (const [key, value] of getEnvironment()) {
    if (key === name) return value;
  }
  return undefined;
}

// The preopened folder holding guest path `path`, and the path relative to it.
function locate(path) {
  if (typeof path !== "string" || !path.startsWith("/")) {
    throw new ToolFailed(`${JSON.stringify(path)} is not an absolute guest path`);
  }
  const parts = path.split("/").filter((p) => p && p !== ".");
  let best;
  for (const [descriptor, guest] of getDirectories()) {
    const root = guest.split("/").filter(Boolean);
    if (root.length <= parts.length && root.every((p, i) => parts[i] === p) && (!best || root.length > best.root.length)) {
      best = { descriptor, root };
    }
  }
  if (!best) throw new ToolFailed(`${path} is in no folder granted to this plugin`);
  return { dir: best.descriptor, relative: parts.slice(best.root.length).join("/") || "." };
}

// A WASI error as a ToolFailed whose `code` is WASI's (`no-entry`, `access`, ...).
function fsError(path, e) {
  const code = e?.payload ?? e;
  const error = new ToolFailed(`cannot read ${path}: ${typeof code === "string" ? code : e}`);
  if (typeof code === "string") error.code = code;
  return error;
}

/**
 * The bytes of the file at guest path `path` (in a granted folder). Throws
 * `ToolFailed` when it cannot be read, with WASI's error `code` (`no-entry`...).
 */
export function readFile(path) {
  const { dir, relative } = locate(path);
  let file;
  try {
    file = dir.openAt({ symlinkFollow: true }, relative, {}, { read: true });
  } catch (e) {
    throw fsError(path, e);
  }
  const chunks = [];
  let offset = 0n;
  try {
    for (;;) {
      const [chunk, end] = file.read(65536n, offset);
      chunks.push(chunk);
      offset += BigInt(chunk.length);
      if (end || chunk.length === 0) break;
    }
  } catch (e) {
    throw fsError(path, e);
  }
  const out = new Uint8Array(Number(offset));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** The text (UTF-8) of the file at guest path `path`. */
export function readTextFile(path) {
  return new TextDecoder().decode(readFile(path));
}

/** The entries of the folder at guest path `path`: `{ name, type }`, sorted by name. */
export function listDirectory(path) {
  const { dir, relative } = locate(path);
  const entries = [];
  try {
    const folder = relative === "." ? dir : dir.openAt({ symlinkFollow: true }, relative, { directory: true }, { read: true });
    const stream = folder.readDirectory();
    for (let entry = stream.readDirectoryEntry(); entry; entry = stream.readDirectoryEntry()) {
      entries.push({ name: entry.name, type: entry.type });
    }
  } catch (e) {
    throw fsError(path, e);
  }
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
