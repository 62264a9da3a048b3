// Loader hooks of hack/bench/module-graph.mjs (run in the loader thread): each module loaded is
// appended to the file the main thread names, synchronously, so it is there before the module runs.
import { appendFileSync } from "node:fs";

let out = "";

export function initialize(data) {
  out = data.file;
}

export async function load(url, context, next) {
  if (url.startsWith("file:")) appendFileSync(out, url + "\n");
  return next(url, context);
}
