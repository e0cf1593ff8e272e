// `node check.mjs '<subpaths as JSON>'` loads those subpaths with `import`; `node check.mjs --msw`
// runs the msw handlers' checks (check-msw.cjs) once msw is installed.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { runChecks } = require('./checks.cjs');
const { runMswChecks } = require('./check-msw.cjs');
const lines =
  process.argv[2] === '--msw'
    ? await runMswChecks('esm', (id) => import(id))
    : await runChecks('esm', (id) => import(id), JSON.parse(process.argv[2]));
for (const line of lines) console.log(line);
