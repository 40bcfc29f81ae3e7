// Preloaded into `jco componentize` (NODE_OPTIONS="--import /abs/path/jco-preopens.mjs")
// to work around jco 1.35 failing with `failed to get path metadata (os error 44)`:
// the WASI shim that runs the bundled componentizer starts with no preopened
// directories, so it cannot read the author's source or WIT. jco installs
// several copies of @bytecodealliance/preview2-shim (its own, jco-transpile's
// nested one, the top-level one) and the one that matters varies, so every
// copy under the node_modules that holds the running jco gets `/` preopened.
//
// Run `node_modules/.bin/jco` directly (not `npx jco`): under npx the preload
// would also run inside npm itself.
import { readdirSync, realpathSync, existsSync } from "node:fs";
import { join, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { isMainThread } from "node:worker_threads";

// The outermost `node_modules` folder above the running script (the jco binary).
function nodeModulesRoot() {
  const script = process.argv[1] ? realpathSync(process.argv[1]) : process.cwd();
  const parts = script.split(sep);
  const at = parts.indexOf("node_modules");
  return at < 0 ? null : parts.slice(0, at + 1).join(sep) || sep;
}

// Every `@bytecodealliance/preview2-shim/dist/nodejs/filesystem.js` below `root`.
function shims(root, found = []) {
  const shim = join(root, "@bytecodealliance", "preview2-shim", "dist", "nodejs", "filesystem.js");
  if (existsSync(shim)) found.push(shim);
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = join(root, entry.name);
    if (entry.name.startsWith("@")) {
      for (const scoped of readdirSync(dir, { withFileTypes: true })) {
        const nested = join(dir, scoped.name, "node_modules");
        if (scoped.isDirectory() && existsSync(nested)) shims(nested, found);
      }
    } else if (existsSync(join(dir, "node_modules"))) {
      shims(join(dir, "node_modules"), found);
    }
  }
  return found;
}

// Node runs this preload in every worker thread too, and each shim starts a
// worker of its own when imported: only the main thread may import them, or
// the workers multiply until the process runs out of memory.
const root = isMainThread ? nodeModulesRoot() : null;
if (root) {
  for (const shim of shims(root)) {
    const fs = await import(pathToFileURL(shim).href);
    fs._setPreopens?.({ "/": "/" });
  }
}
