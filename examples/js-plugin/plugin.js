// A toolhost plugin in JavaScript: a greeting from the operator's
// configuration; word statistics, a chart, links and embedded files over a
// folder the operator grants; a chime; a greeting that asks the user's name;
// a summary by the client's model; the client's roots; a report that asks the
// user and the model in one round; what the client can be asked; an index
// that may run as an MCP task; a prompt and resources.
import {
  ask,
  audio,
  available,
  beginTask,
  ClientError,
  definePlugin,
  definePrompts,
  defineResources,
  elicit,
  image,
  InvalidArguments,
  listRoots,
  log,
  output,
  resourceLink,
  ResourceNotFound,
  sample,
  textResource,
} from "../../sdk/js/toolhost-plugin.js";
import { env, listDirectory, readTextFile } from "../../sdk/js/toolhost-wasi.js";

const WORKSPACE = "/workspace";

function greeting(name) {
  if (!name.trim()) throw new InvalidArguments("`name` must not be empty");
  return `${env("GREETING") ?? "Hello"}, ${name}!`;
}

// The `top` most common words of `text` (ties in order of first appearance,
// as Python's sort), their counts, and the word count.
function commonWords(text, top) {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  const counts = new Map();
  for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
  const common = [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([w]) => w);
  return { common, counts, words: words.length };
}

function checkTop(top) {
  if (top < 1 || top > 20) throw new InvalidArguments("`top` must be between 1 and 20");
}

// --- a PNG, by hand (StarlingMonkey has no zlib): stored deflate blocks ---

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function u32(n) {
  return new Uint8Array([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
}

// A zlib stream of `data` in stored (uncompressed) deflate blocks.
function zlibStored(data) {
  const parts = [new Uint8Array([0x78, 0x01])];
  for (let at = 0; at === 0 || at < data.length; at += 65535) {
    const block = data.subarray(at, at + 65535);
    const last = at + 65535 >= data.length ? 1 : 0;
    const len = block.length;
    parts.push(new Uint8Array([last, len & 0xff, len >> 8, ~len & 0xff, (~len >> 8) & 0xff]), block);
  }
  let a = 1;
  let b = 0;
  for (const x of data) {
    a = (a + x) % 65521;
    b = (b + a) % 65521;
  }
  parts.push(u32(((b << 16) | a) >>> 0));
  return concat(parts);
}

// A grayscale PNG of `rows` (one byte a pixel).
function png(width, height, rows) {
  const chunk = (kind, data) => {
    const body = concat([new TextEncoder().encode(kind), data]);
    return concat([u32(data.length), body, u32(crc32(body))]);
  };
  const header = concat([u32(width), u32(height), new Uint8Array([8, 0, 0, 0, 0])]);
  const pixels = zlibStored(concat(rows.flatMap((row) => [new Uint8Array([0]), row])));
  const signature = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return concat([signature, chunk("IHDR", header), chunk("IDAT", pixels), chunk("IEND", new Uint8Array())]);
}

const BAR = 12;
const GAP = 4;
const WIDTH = 200;

// Horizontal bars, the longest WIDTH pixels wide, black on white.
function barChart(values) {
  const longest = Math.max(1, ...values);
  const white = new Uint8Array(WIDTH).fill(0xff);
  const rows = [];
  values.forEach((value, i) => {
    const bar = new Uint8Array(WIDTH).fill(0xff);
    bar.fill(0, 0, Math.round((WIDTH * value) / longest));
    for (let r = 0; r < BAR; r++) rows.push(bar);
    if (i < values.length - 1) for (let r = 0; r < GAP; r++) rows.push(white);
  });
  return png(WIDTH, rows.length, rows);
}

// A sine tone as an 8-bit mono WAV file.
function wav(frequency, rate = 8000, seconds = 0.25) {
  const samples = Uint8Array.from({ length: Math.floor(rate * seconds) }, (_, i) =>
    Math.round(128 + 100 * Math.sin((2 * Math.PI * frequency * i) / rate)),
  );
  const le = (n, bytes) => Uint8Array.from({ length: bytes }, (_, i) => (n >>> (8 * i)) & 0xff);
  const ascii = (s) => new TextEncoder().encode(s);
  const fmt = concat([le(1, 2), le(1, 2), le(rate, 4), le(rate, 4), le(1, 2), le(8, 2)]);
  return concat([
    ascii("RIFF"), le(36 + samples.length, 4), ascii("WAVEfmt "), le(16, 4), fmt,
    ascii("data"), le(samples.length, 4), samples,
  ]);
}

const PATH = { type: "string", description: "The file, relative to the workspace folder." };
// What `available()` answers.
const AVAILABLE = {
  type: "object",
  properties: { elicitation: { type: "boolean" }, sampling: { type: "boolean" }, roots: { type: "boolean" } },
  required: ["elicitation", "sampling", "roots"],
  additionalProperties: false,
};

export const tool = definePlugin({
  // What this plugin asks for; the operator still has to grant it.
  declare: { env: ["GREETING"], dirs: [WORKSPACE], elicitation: true, sampling: true, roots: true },
  tools: [
    {
      name: "greet",
      description: 'Greets someone with the greeting the operator configured (`GREETING`, default "Hello").',
      parameters: {
        type: "object",
        properties: { name: { type: "string", description: "Who to greet." } },
        required: ["name"],
      },
      hints: { readOnly: true, idempotent: true },
      run: ({ name }) => greeting(name),
    },
    {
      name: "word_stats",
      description:
        "Counts the lines and words of a text file in the workspace and lists its most common words.",
      parameters: {
        type: "object",
        properties: {
          path: PATH,
          top: {
            type: "integer",
            description: "How many of the most common words to list (1 to 20).",
            default: 3,
          },
        },
        required: ["path"],
      },
      outputSchema: {
        type: "object",
        properties: {
          lines: { type: "integer" },
          words: { type: "integer" },
          top: { type: "array", items: { type: "string" } },
        },
        required: ["lines", "words", "top"],
        additionalProperties: false,
      },
      hints: { readOnly: true, idempotent: true },
      run({ path, top = 3 }) {
        checkTop(top);
        const text = readTextFile(`${WORKSPACE}/${path}`);
        const { common, words } = commonWords(text, top);
        const lines = text.split(/\r\n|\r|\n/).length - (/(\r\n|\r|\n)$/.test(text) || text === "" ? 1 : 0);
        const stats = { lines, words, top: common };
        log("info", "counted words", { path, words });
        const summary = `${path}: ${lines} lines, ${words} words; most common: ${common.join(", ") || "none"}`;
        return output(stats, summary);
      },
    },
    {
      name: "word_chart",
      title: "Word chart",
      description: "Draws the most common words of a text file in the workspace as a bar chart (a PNG image).",
      parameters: {
        type: "object",
        properties: {
          path: PATH,
          top: { type: "integer", description: "How many words to chart (1 to 20).", default: 5 },
        },
        required: ["path"],
      },
      hints: { readOnly: true, idempotent: true },
      run({ path, top = 5 }) {
        checkTop(top);
        const { common, counts } = commonWords(readTextFile(`${WORKSPACE}/${path}`), top);
        if (common.length === 0) return `${path} has no words to chart`;
        const caption = common.map((w) => `${w} (${counts.get(w)})`).join(", ");
        const chart = barChart(common.map((w) => counts.get(w)));
        return output(undefined, `Most common words of ${path}: ${caption}`, [image(chart, "image/png")]);
      },
    },
    {
      name: "share",
      description: "Gives a text file of the workspace as a link the client can read and as an embedded resource.",
      parameters: { type: "object", properties: { path: PATH }, required: ["path"] },
      hints: { readOnly: true, idempotent: true },
      run({ path }) {
        const text = readTextFile(`${WORKSPACE}/${path}`);
        const uri = `notes://workspace/${path}`;
        return [
          resourceLink({ uri, name: path, mimeType: "text/plain", size: new TextEncoder().encode(text).length }),
          textResource(uri, text, "text/plain", { audience: ["assistant"], priority: 0.5 }),
        ];
      },
    },
    {
      name: "chime",
      description: "Plays a short chime: a quarter of a second of a sine tone (a WAV sound).",
      parameters: {
        type: "object",
        properties: { frequency: { type: "integer", description: "The tone's pitch in Hz (100 to 2000).", default: 440 } },
      },
      hints: { readOnly: true, idempotent: true },
      run({ frequency = 440 }) {
        if (frequency < 100 || frequency > 2000) throw new InvalidArguments("`frequency` must be between 100 and 2000");
        return audio(wav(frequency), "audio/wav");
      },
    },
    {
      name: "greet_me",
      title: "Greet me",
      description: "Asks the user for their name, then greets them with the configured greeting.",
      parameters: { type: "object", properties: {} },
      run() {
        const answer = elicit("What is your name?", {
          type: "object",
          properties: { name: { type: "string" } },
          required: ["name"],
        });
        if (answer.action !== "accept") return `No name given (${answer.action}): no greeting.`;
        return greeting(answer.content.name);
      },
    },
    {
      name: "summarize",
      description: "Summarizes a text file in the workspace in one sentence, with the client's model.",
      parameters: { type: "object", properties: { path: PATH }, required: ["path"] },
      hints: { readOnly: true, openWorld: true },
      run({ path }) {
        const text = readTextFile(`${WORKSPACE}/${path}`);
        const reply = sample([{ role: "user", content: `Summarize these notes in one sentence:\n\n${text}` }], {
          maxTokens: 200,
          systemPrompt: "You summarize notes faithfully and briefly.",
        });
        log("info", "summarized", { path, model: reply.model });
        if (reply.text === undefined) throw new InvalidArguments("the model answered without text");
        return reply.text;
      },
    },
    {
      name: "client_roots",
      title: "Client roots",
      description: "Lists the folders and files the client shares (its roots).",
      parameters: { type: "object", properties: {} },
      hints: { readOnly: true },
      run() {
        const roots = listRoots();
        return `${roots.length} root(s): ${roots.map((r) => (r.name === undefined ? r.uri : `${r.uri} (${r.name})`)).join(", ")}`;
      },
    },
    {
      name: "report",
      description: "Reports on a text file of the workspace: asks the user who it is for and the client's model for a summary, in one round.",
      parameters: { type: "object", properties: { path: PATH }, required: ["path"] },
      hints: { readOnly: true, openWorld: true },
      run({ path }) {
        const text = readTextFile(`${WORKSPACE}/${path}`);
        const [reader, summary] = ask([
          {
            key: "reader",
            elicit: { message: "Who is the report for?", schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
          },
          { key: "summary", sample: { messages: `Summarize these notes in one sentence:\n\n${text}`, maxTokens: 200 } },
        ]);
        for (const answer of [reader, summary]) if (answer instanceof ClientError) throw answer;
        if (reader.action !== "accept") return `No reader given (${reader.action}): no report.`;
        return `Report on ${path} for ${reader.content.name}: ${summary.text}`;
      },
    },
    {
      name: "can_ask",
      description: "Says what this call may ask the client: its user (elicitation), its model (sampling), its roots.",
      parameters: { type: "object", properties: {} },
      outputSchema: AVAILABLE,
      hints: { readOnly: true, idempotent: true },
      run: () => available(),
    },
    {
      name: "index_words",
      description: "Indexes the words of a text file in the workspace: a client that supports MCP tasks gets a task once the file is read.",
      parameters: { type: "object", properties: { path: PATH }, required: ["path"] },
      hints: { readOnly: true },
      task: "optional",
      deferred: true,
      run({ path }) {
        const text = readTextFile(`${WORKSPACE}/${path}`);
        const asTask = beginTask();
        const { counts, words } = commonWords(text, 0);
        return `Indexed ${path}: ${words} words, ${counts.size} distinct (${asTask ? "as a task" : "in the request"}).`;
      },
    },
  ],
});

export const prompts = definePrompts([
  {
    name: "review",
    title: "Review notes",
    description: "Asks the model to review notes.",
    arguments: [
      { name: "notes", description: "The notes to review.", required: true },
      { name: "focus", description: "What the review looks at.", complete: ["clarity", "grammar", "tone"] },
    ],
    render({ notes, focus = "clarity" }) {
      if (!["clarity", "grammar", "tone"].includes(focus)) {
        throw new InvalidArguments(`\`focus\` must be one of ["clarity","grammar","tone"], not ${JSON.stringify(focus)}`);
      }
      return [{ role: "user", content: `Review these notes for ${focus}; list the three changes that matter most.\n\n${notes}` }];
    },
  },
]);

// The files of the workspace whose names start with `value` (none when it is not granted).
function workspaceFiles(value) {
  try {
    return listDirectory(WORKSPACE)
      .filter((e) => e.type === "regular-file" && e.name.startsWith(value))
      .map((e) => e.name);
  } catch {
    return [];
  }
}

export const resources = defineResources({
  resources: [
    {
      uri: "notes://guide",
      name: "guide",
      title: "How to use the notes plugin",
      description: "What the notes plugin offers.",
      mimeType: "text/markdown",
      read: () =>
        "# Notes\n\nAsk for `word_stats`, `word_chart` or `summarize` of a file; read one as `notes://workspace/NAME`.\n",
    },
  ],
  templates: [
    {
      uriTemplate: "notes://workspace/{name}",
      name: "workspace-file",
      description: "A text file of the workspace.",
      mimeType: "text/plain",
      complete: { name: workspaceFiles },
      read({ name }) {
        try {
          return readTextFile(`${WORKSPACE}/${name}`);
        } catch (e) {
          if (e.code === "no-entry") throw new ResourceNotFound(`no file ${name} in the workspace`);
          throw e;
        }
      },
    },
  ],
});
