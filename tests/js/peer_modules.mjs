// Loads a module of an npm package from the pinned peers (.peers/node/node_modules) by its
// absolute path, through the package's own `exports` map, so a script under tests/js does not
// depend on where node_modules lives.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

// The ESM file a conditional `exports` value names.
function esmEntry(target, what) {
  if (typeof target === "string") return target;
  for (const condition of ["import", "node", "default"]) {
    if (target && target[condition]) return esmEntry(target[condition], what);
  }
  throw new Error(`no ESM entry for ${what}`);
}

// `import(pkg + subpath)` as a module inside `nodeModules` would resolve it.
export async function load(nodeModules, pkg, subpath) {
  const dir = join(nodeModules, pkg);
  const { exports } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  let target = exports[subpath];
  if (target === undefined) {
    for (const [key, value] of Object.entries(exports)) {
      if (key.endsWith("*") && subpath.startsWith(key.slice(0, -1))) {
        const rest = subpath.slice(key.length - 1);
        target = JSON.parse(JSON.stringify(value).replaceAll("*", rest));
        break;
      }
    }
  }
  return import(pathToFileURL(join(dir, esmEntry(target, pkg + subpath))).href);
}
