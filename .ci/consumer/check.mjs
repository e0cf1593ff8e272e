import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { runChecks } = require('./checks.cjs');
const subpaths = JSON.parse(process.argv[2]);
for (const line of await runChecks('esm', (id) => import(id), subpaths)) console.log(line);
