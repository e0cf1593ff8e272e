// `node check.cjs '<subpaths as JSON>'` loads those subpaths with `require`; `node check.cjs --msw`
// runs the msw handlers' checks (check-msw.cjs) once msw is installed.
const { runChecks } = require('./checks.cjs');
const { runMswChecks } = require('./check-msw.cjs');

const run =
  process.argv[2] === '--msw'
    ? runMswChecks('cjs', async (id) => require(id))
    : runChecks('cjs', async (id) => require(id), JSON.parse(process.argv[2]));
run.then((lines) => {
  for (const line of lines) console.log(line);
});
