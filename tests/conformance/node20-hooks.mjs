// The module resolve hook node20.mjs registers: `fs` imported from inside the conformance
// package resolves to fs-globsync.mjs. Everything else resolves as usual.
const PACKAGE = "/node_modules/@modelcontextprotocol/conformance/";
const SHIM = new URL("./fs-globsync.mjs", import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if ((specifier === "fs" || specifier === "node:fs") && context.parentURL?.includes(PACKAGE)) {
    return { url: SHIM, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
