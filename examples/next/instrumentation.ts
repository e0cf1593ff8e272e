// Next.js runs register() once when a server starts (`next start`, `next dev`), not during
// `next build`: a missing or unusable secret stops the server here, one line per variable, instead
// of a 500 and a stack trace on every delivery.
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  const { envProblems } = await import('./lib/env');
  const problems = envProblems();
  if (problems.length === 0) return;
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
