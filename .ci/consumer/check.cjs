const { runChecks } = require('./checks.cjs');

const subpaths = JSON.parse(process.argv[2]);
runChecks('cjs', async (id) => require(id), subpaths).then((lines) => {
  for (const line of lines) console.log(line);
});
