// The bundle configuration for `jco componentize --bundle --bundle-config`:
// the host's interfaces (`toolhost:plugin/...`) are imports of the component,
// not modules to bundle (jco already treats `wasi:` that way).
export default { external: [/^toolhost:/] };
