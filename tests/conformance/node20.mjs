// Loaded with `node --import ./tests/conformance/node20.mjs`: lets the conformance suite
// (@modelcontextprotocol/conformance 0.1.16) start on Node 20. Its dist/index.js imports
// `globSync` from `fs`, which Node gained in 22; this hook hands that package (and only that
// package) fs-globsync.mjs instead, which is `fs` plus a small `globSync`. node_modules stays
// untouched.
import { register } from "node:module";

register("./node20-hooks.mjs", import.meta.url);
