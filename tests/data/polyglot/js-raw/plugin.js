// A JavaScript plugin written against the bindings alone, without
// toolhost-plugin.js, importing nothing of the host's: a throw that is not a tool-error
// payload is a trap (the tests check that the caller still gets the thrown
// message), and it reads its arguments without checking them (the tests check
// that the host does, before the call).
const PARAMETERS = {
  type: "object",
  properties: { a: { type: "number" }, b: { type: "number" } },
  required: ["a", "b"],
  additionalProperties: false,
};

export const tool = {
  listTools() {
    return [
      {
        name: "divide",
        description: "Divides a by b.",
        parameters: JSON.stringify(PARAMETERS),
        hints: { readOnly: true, idempotent: true },
      },
    ];
  },
  declare() {
    return { dirs: [], env: [], http: [], secrets: [], tools: [], elicitation: false, sampling: false };
  },
  callTool(name, args) {
    const { a, b } = JSON.parse(args);
    if (typeof b !== "number") throw new TypeError(`b is ${b}: the host let a bad call through`);
    if (b === 0) throw new RangeError("cannot divide by zero");
    return { content: [{ content: { tag: "text", val: JSON.stringify(a / b) } }] };
  },
};
