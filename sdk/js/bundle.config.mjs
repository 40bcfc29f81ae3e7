// The bundle configuration for `jco componentize --bundle --bundle-config`
// (toolhost-build.mjs passes it, and bundles with it once more to see what
// the plugin imports): the host's interfaces (`toolhost:plugin/...`) are
// imports of the component, not modules to bundle (jco already treats
// `wasi:` that way), and an import of the host's that nothing uses is left
// out rather than kept for its side effects (it has none), so that the
// component imports only what the plugin uses.
export default {
  external: [/^toolhost:/],
  treeshake: { moduleSideEffects: (_id, external) => !external },
};
