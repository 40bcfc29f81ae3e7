// A toolhost plugin in JavaScript: a greeting from the operator's configuration
// and word statistics over a folder the operator grants.
import { definePlugin, InvalidArguments, output } from "../../sdk/js/toolhost-plugin.js";
import { env, readTextFile } from "../../sdk/js/toolhost-wasi.js";

const WORKSPACE = "/workspace";

export const tool = definePlugin({
  // What this plugin asks for; the operator still has to grant it.
  declare: { env: ["GREETING"], dirs: [WORKSPACE] },
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
      run({ name }) {
        if (!name.trim()) throw new InvalidArguments("`name` must not be empty");
        return `${env("GREETING") ?? "Hello"}, ${name}!`;
      },
    },
    {
      name: "word_stats",
      description:
        "Counts the lines and words of a text file in the workspace and lists its most common words.",
      parameters: {
        type: "object",
        properties: {
          path: { type: "string", description: "The file, relative to the workspace folder." },
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
        if (top < 1 || top > 20) throw new InvalidArguments("`top` must be between 1 and 20");
        const text = readTextFile(`${WORKSPACE}/${path}`);
        const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
        const counts = new Map();
        for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
        // Most common first; ties in order of first appearance (as Python's Counter).
        const common = [...counts.entries()]
          .sort((a, b) => b[1] - a[1])
          .slice(0, top)
          .map(([w]) => w);
        const lines = text.split(/\r\n|\r|\n/).length - (/(\r\n|\r|\n)$/.test(text) || text === "" ? 1 : 0);
        const stats = { lines, words: words.length, top: common };
        const summary = `${path}: ${lines} lines, ${words.length} words; most common: ${common.join(", ") || "none"}`;
        return output(stats, summary);
      },
    },
  ],
});
