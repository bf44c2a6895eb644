// `fs` plus the `globSync` Node 22 added, for the conformance suite on Node 20 (see node20.mjs).
// The suite calls it only as globSync("**/NAME", { cwd }) (to find results' checks.json), so
// that is the one pattern shape this supports; any other is an error naming it.
import fs from "node:fs";
import path from "node:path";

export * from "node:fs";
export default fs;

export function globSync(pattern, options = {}) {
  const match = /^\*\*\/([^*?[\]{}/]+)$/.exec(pattern);
  if (!match) {
    throw new Error(
      `tests/conformance/fs-globsync.mjs supports only "**/NAME" patterns, not ${JSON.stringify(pattern)}: ` +
        "extend it, or run the suite on Node >= 22",
    );
  }
  const cwd = options.cwd ?? process.cwd();
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(cwd, dir), { withFileTypes: true })) {
      const relative = dir ? path.join(dir, entry.name) : entry.name;
      if (entry.isDirectory()) walk(relative);
      else if (entry.name === match[1]) found.push(relative);
    }
  };
  walk("");
  return found;
}
