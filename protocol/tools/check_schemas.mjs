// Compile every JSON Schema of the protocol with ajv in strict mode (draft 2020-12):
// the published ones (protocol/schemas/) and the strict ones the server's tests use
// (protocol/schemas/strict/). Exits 1, naming each schema that does not compile.
// Usage: node check_schemas.mjs [SCHEMA_DIR ...]
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";

const here = dirname(fileURLToPath(import.meta.url));
const dirs = process.argv.length > 2
  ? process.argv.slice(2)
  : [join(here, "..", "schemas"), join(here, "..", "schemas", "strict")];

let failed = 0;
let compiled = 0;
for (const dir of dirs) {
  const ajv = new Ajv2020({ strict: true, allErrors: false });
  const files = readdirSync(dir).filter((f) => f.endsWith(".schema.json")).sort();
  const schemas = files.map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")));
  try {
    for (const schema of schemas) ajv.addSchema(schema);
  } catch (err) {
    console.error(`${dir}: ${err.message}`);
    failed += 1;
    continue;
  }
  for (const [i, schema] of schemas.entries()) {
    try {
      ajv.getSchema(schema.$id);
      compiled += 1;
    } catch (err) {
      console.error(`${join(dir, files[i])}: ${err.message}`);
      failed += 1;
    }
  }
}
if (failed) {
  console.error(`${failed} schema(s) do not compile in ajv's strict mode`);
  process.exit(1);
}
console.log(`ok: ${compiled} schemas compile in ajv's strict mode`);
