// Validate protocol/asyncapi.yaml with the AsyncAPI project's own parser
// (@asyncapi/parser): exits 1 on any error diagnostic, printing them.
// Usage: node check_asyncapi.mjs [DOCUMENT]
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Parser } from "@asyncapi/parser";

const here = dirname(fileURLToPath(import.meta.url));
const path = resolve(process.argv[2] ?? join(here, "..", "asyncapi.yaml"));
const parser = new Parser();
const { document, diagnostics } = await parser.parse(readFileSync(path, "utf8"), { source: path });
const errors = diagnostics.filter((d) => d.severity === 0);
for (const d of diagnostics) {
  const where = (d.path ?? []).join("/");
  console.error(`${["error", "warning", "info", "hint"][d.severity]}: ${d.code}: ${d.message} at ${where}`);
}
if (errors.length || !document) {
  console.error(`${path}: ${errors.length} error(s): not a valid AsyncAPI document`);
  process.exit(1);
}
const ops = document.operations().length;
const msgs = document.allMessages().length;
console.log(`ok: ${path} is valid AsyncAPI ${document.version()} (${ops} operations, ${msgs} messages)`);
