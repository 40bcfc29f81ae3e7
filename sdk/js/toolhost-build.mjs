#!/usr/bin/env node
// Builds a JavaScript plugin into a toolhost component (toolhost:plugin@0.3.1)
// that imports only the host interfaces it uses:
//
//   node toolhost-build.mjs ENTRY.js -o OUT.wasm [--wit WIT_DIR] [--jco JCO]
//   node toolhost-build.mjs ENTRY.js --print-world [--jco JCO]
//
// ENTRY.js exports `tool` (and `prompts`, `resources` if it offers them) and
// may import toolhost-plugin.js (with the toolhost-content.js and
// toolhost-client.js it re-exports) and toolhost-wasi.js. `--wit` is toolhost's
// wit/0.3.1 folder, with its deps/ (default: ./wit); `--jco` the jco program
// (default: ./node_modules/.bin/jco), jco 1.35 with componentize-js 0.23.
// `--print-world` prints the world the component would target, and builds
// nothing.
//
// componentize-js gives a component every import of the world it targets,
// so this script writes the world: it bundles the plugin as `jco componentize
// --bundle` will (with the bundler jco ships, rolldown, and
// bundle.config.mjs, which leaves out the host's imports the plugin does not
// use), and the world imports exactly the `toolhost:plugin/...` and
// `wasi:...` interfaces the bundle still imports, and exports what the entry
// exports. A plugin that exports `prompts` without `resources` (or the other
// way round) gets an empty one: the host serves the two together. Then `jco
// componentize --bundle` builds the plugin against that world, with
// `--disable http` (no `wasi:http/outgoing-handler`, which the host refuses
// from a plugin that declares no HTTP host) and the preload that works
// around jco 1.35's missing preopens (jco-preopens.mjs, beside this script).
//
// What the `declare()` record cannot carry (`declare: { roots: true }`, a
// tool's `task`) goes into a `toolhost:capabilities` custom section appended
// to the component: the entry the componentizer builds is a wrapper that
// re-exports the plugin and, while the component is built (the
// componentizer runs the module once and snapshots it, passing its stdout
// through, as cargo reads a build script's `cargo:` lines), prints the
// section's lines `definePlugin` kept, on one line after MARKER.
import { spawnSync } from "node:child_process";
import { appendFileSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const VERSION = "0.3.1";
const SECTION = "toolhost:capabilities";
const MARKER = "toolhost-build:section ";
const TOOLHOST = ["host", "progress", "tools", "client"];
// What a plugin may import from WASI itself (the `plugin-wasi` world's interfaces).
const WASI = [
  "wasi:cli/environment@0.2.12",
  "wasi:filesystem/types@0.2.12",
  "wasi:filesystem/preopens@0.2.12",
  "wasi:clocks/monotonic-clock@0.2.12",
  "wasi:clocks/wall-clock@0.2.12",
  "wasi:random/random@0.2.12",
];
const EXPORTS = ["tool", "prompts", "resources"];

// The exports a plugin that offers only prompts, or only resources, lacks.
const EMPTY = {
  prompts: `
export const prompts = {
  listPrompts: () => [],
  getPrompt(name) { throw { tag: "invalid-arguments", val: "this plugin has no prompt named " + JSON.stringify(name) }; },
  complete(name) { throw { tag: "invalid-arguments", val: "this plugin has no prompt named " + JSON.stringify(name) }; },
};`,
  resources: `
export const resources = {
  listResources: () => [],
  listTemplates: () => [],
  readResource(uri) { throw { tag: "not-found", val: "this plugin has no resource " + uri }; },
  complete(template) { throw { tag: "invalid-arguments", val: "this plugin has no resource template " + JSON.stringify(template) }; },
};`,
};

// The entry the componentizer builds: the plugin, the export it may lack, and
// the line that reports its section while the component is built.
function wrapper(entry, missing) {
  return [
    `export * from ${JSON.stringify(entry)};`,
    `import * as plugin from ${JSON.stringify(entry)};`,
    missing ? EMPTY[missing] : "",
    `console.log(${JSON.stringify(MARKER)} + JSON.stringify(plugin.tool?.[Symbol.for(${JSON.stringify(SECTION)})] ?? []));`,
    "",
  ].join("\n");
}

// The section's lines from the componentizer's stdout (the rest is passed on).
function sectionLines(stdout) {
  let lines;
  for (const line of stdout.split("\n")) {
    if (line.startsWith(MARKER)) lines = JSON.parse(line.slice(MARKER.length));
    else if (line) process.stdout.write(line + "\n");
  }
  if (!Array.isArray(lines)) {
    throw new BuildError(`the componentizer did not print the plugin's declarations (a line starting ${JSON.stringify(MARKER)}): is it jco 1.35 with componentize-js 0.23?`);
  }
  return lines;
}

function leb128(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

// Appends a `toolhost:capabilities` custom section holding `lines` to the
// component (valid at the end of a component; it changes nothing but the
// declaration and the hash).
function appendSection(path, lines) {
  const name = new TextEncoder().encode(SECTION);
  const text = new TextEncoder().encode(lines.map((l) => l + "\n").join(""));
  const payload = [...leb128(name.length), ...name, ...text];
  appendFileSync(path, Uint8Array.from([0, ...leb128(payload.length), ...payload]));
}

// What the section declares that the component cannot use: it asks
// its client nothing, so it does not import `toolhost:plugin/client`.
function unusable(lines, s) {
  if (s.toolhost.includes("client")) return undefined;
  if (lines.includes("client roots")) return "declare: { roots: true }, but the plugin never calls listRoots or ask, so the component does not import toolhost:plugin/client";
  const deferred = lines.find((l) => l.endsWith(" deferred"));
  if (deferred) return `${deferred.split(" ")[1]} is deferred, but the plugin never calls beginTask, so the component does not import toolhost:plugin/client`;
  return undefined;
}

class BuildError extends Error {}

function parseArgs(argv) {
  const args = { wit: "wit", jco: "node_modules/.bin/jco" };
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-o" || a === "--output") args.output = argv[++i];
    else if (a === "--wit") args.wit = argv[++i];
    else if (a === "--jco") args.jco = argv[++i];
    else if (a === "--print-world") args.printWorld = true;
    else if (a.startsWith("-")) throw new BuildError(`unknown option ${a}`);
    else rest.push(a);
  }
  if (rest.length !== 1 || !(args.output || args.printWorld)) {
    throw new BuildError("usage: toolhost-build.mjs ENTRY.js (-o OUT.wasm [--wit WIT_DIR] | --print-world) [--jco JCO]");
  }
  args.entry = rest[0];
  return args;
}

// rolldown and es-module-lexer, from the node_modules that holds jco.
async function toolchain(jco) {
  if (!existsSync(jco)) throw new BuildError(`no jco at ${jco}: npm install @bytecodealliance/jco@1.35.0 @bytecodealliance/componentize-js@0.23.0`);
  const require = createRequire(realpathSync(jco));
  const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
  const [{ rolldown }, lexer] = await Promise.all([load("rolldown"), load("es-module-lexer")]);
  await lexer.init;
  return { rolldown, lexer };
}

// The plugin as one module, as `jco componentize --bundle` will bundle it
// with `config` (bundle.config.mjs), to see what it still imports.
async function bundle(rolldown, entry, config) {
  const build = await rolldown({
    ...config,
    input: entry,
    cwd: dirname(entry),
    platform: "neutral",
    external: [/^wasi:/, ...config.external],
  });
  try {
    const { output } = await build.generate({ format: "esm", codeSplitting: false });
    const chunks = output.filter((o) => o.type === "chunk");
    if (chunks.length !== 1) throw new BuildError(`bundling ${entry} gave ${chunks.length} modules, not one`);
    return chunks[0].code;
  } finally {
    await build.close();
  }
}

// What the bundle imports and exports, checked against what a plugin may.
function shape(lexer, code) {
  const [imports, exports] = lexer.parse(code);
  const used = new Set(imports.map((i) => i.n).filter(Boolean));
  const toolhost = [];
  const wasi = [];
  for (const name of used) {
    const m = /^toolhost:plugin\/([a-z-]+)@(.+)$/.exec(name);
    if (m) {
      if (m[2] !== VERSION || !TOOLHOST.includes(m[1])) {
        throw new BuildError(`the plugin imports ${name}; this SDK builds against toolhost:plugin@${VERSION} (${TOOLHOST.map((i) => `toolhost:plugin/${i}@${VERSION}`).join(", ")})`);
      }
      toolhost.push(m[1]);
    } else if (WASI.includes(name)) {
      wasi.push(name);
    } else {
      throw new BuildError(`the plugin imports ${name}, which is neither one of its files nor an interface toolhost provides (${[...TOOLHOST.map((i) => `toolhost:plugin/${i}@${VERSION}`), ...WASI].join(", ")})`);
    }
  }
  const exported = exports.map((e) => e.n);
  if (!exported.includes("tool")) throw new BuildError("the plugin exports no `tool`: export const tool = definePlugin({ tools: [...] })");
  const unknown = exported.filter((e) => !EXPORTS.includes(e));
  if (unknown.length) throw new BuildError(`the plugin exports ${unknown.join(", ")}; a plugin exports ${EXPORTS.join(", ")} only`);
  return {
    toolhost: TOOLHOST.filter((i) => toolhost.includes(i)),
    wasi: WASI.filter((w) => wasi.includes(w)),
    server: exported.includes("prompts") || exported.includes("resources"),
    missing: exported.includes("prompts") !== exported.includes("resources") ? (exported.includes("prompts") ? "resources" : "prompts") : null,
  };
}

function world(s) {
  const lines = [
    "// Written by toolhost-build.mjs: the interfaces this plugin uses.",
    "package toolhost-build:plugin;",
    "",
    "world component {",
    ...s.toolhost.map((i) => `  import toolhost:plugin/${i}@${VERSION};`),
    ...s.wasi.map((w) => `  import ${w};`),
    ...(s.server ? ["tool", "prompts", "resources"] : ["tool"]).map((e) => `  export toolhost:plugin/${e}@${VERSION};`),
    "}",
  ];
  return lines.join("\n") + "\n";
}

// A WIT folder holding the plugin's world, with toolhost's package and its
// dependencies as deps (copies: the componentizer's WASI view follows no links).
function witFolder(wit, into, s) {
  const main = join(wit, "plugin.wit");
  if (!existsSync(main)) throw new BuildError(`${wit} has no plugin.wit: give --wit toolhost's wit/${VERSION} folder`);
  const pkg = /^package\s+([^;]+);/m.exec(readFileSync(main, "utf8"));
  if (!pkg || pkg[1].trim() !== `toolhost:plugin@${VERSION}`) {
    throw new BuildError(`${main} is ${pkg ? pkg[1].trim() : "no package"}; this SDK targets toolhost:plugin@${VERSION} (wit/${VERSION})`);
  }
  const out = join(into, "wit");
  mkdirSync(join(out, "deps", "toolhost-plugin"), { recursive: true });
  copyFileSync(main, join(out, "deps", "toolhost-plugin", "plugin.wit"));
  const deps = join(wit, "deps");
  if (existsSync(deps)) {
    for (const dep of readdirSync(deps)) {
      const from = join(deps, dep);
      if (statSync(from).isDirectory()) cpSync(from, join(out, "deps", dep), { recursive: true });
      else copyFileSync(from, join(out, "deps", dep));
    }
  }
  writeFileSync(join(out, "world.wit"), world(s));
  return out;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const here = dirname(fileURLToPath(import.meta.url));
  const jco = resolve(args.jco);
  const entry = resolve(args.entry);
  const configPath = join(here, "bundle.config.mjs");
  const { default: config } = await import(pathToFileURL(configPath).href);
  const { rolldown, lexer } = await toolchain(jco);
  const s = shape(lexer, await bundle(rolldown, entry, config));
  if (args.printWorld) {
    process.stdout.write(world(s));
    return 0;
  }
  const tmp = mkdtempSync(join(tmpdir(), "toolhost-build-"));
  try {
    const wit = witFolder(resolve(args.wit), tmp, s);
    const source = join(tmp, "plugin.js");
    writeFileSync(source, wrapper(entry, s.missing));
    const imports = [...s.toolhost, ...s.wasi].join(", ") || "none";
    console.error(`toolhost-build: imports ${imports}; exports ${s.server ? "tool, prompts, resources" : "tool"}`);
    const output = resolve(args.output);
    const run = spawnSync(
      jco,
      [
        "componentize", source, "--bundle", "--bundle-config", configPath,
        "--wit", wit, "--world-name", "component", "--disable", "http", "-o", output,
      ],
      {
        stdio: ["inherit", "pipe", "inherit"],
        encoding: "utf8",
        maxBuffer: 64 << 20,
        env: { ...process.env, NODE_OPTIONS: `--import ${join(here, "jco-preopens.mjs")}` },
      },
    );
    if (run.error) throw new BuildError(`cannot run ${jco}: ${run.error.message}`);
    if (run.status !== 0) {
      process.stdout.write(run.stdout ?? "");
      return run.status ?? 1;
    }
    const lines = sectionLines(run.stdout);
    const problem = unusable(lines, s);
    if (problem) {
      rmSync(output, { force: true });
      throw new BuildError(problem);
    }
    if (lines.length) {
      appendSection(output, lines);
      console.error(`toolhost-build: declares ${lines.join(", ")}`);
    }
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`toolhost-build: ${e instanceof BuildError ? e.message : e.stack ?? e}`);
    process.exit(2);
  },
);
