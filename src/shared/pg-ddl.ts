/**
 * Runs a PostgreSQL schema (`CREATE … IF NOT EXISTS` statements) one statement at a time, safe
 * against another session running the same schema at once: two processes that start together (a
 * receiver and its worker) both call `migrate()`. PostgreSQL checks `IF NOT EXISTS` before it takes
 * the name, so the slower of two concurrent creations fails with 23505 on a `pg_catalog` index
 * (`pg_type_typname_nsp_index`) or 42P07/42710 (duplicate table, object); the object then exists,
 * so running the statement again succeeds (test/dedup/postgres-migrate-race.test.ts).
 */
export async function runPostgresDDL(
  ddl: string,
  run: (statement: string) => Promise<unknown>,
): Promise<void> {
  // One statement per call: pg's extended protocol (used with params) runs one statement at a time.
  for (const statement of ddl.split(';\n')) {
    for (let attempt = 1; ; attempt++) {
      try {
        await run(statement);
        break;
      } catch (error) {
        if (attempt === 3 || !lostCreateRace(error)) throw error;
      }
    }
  }
}

/** Whether `error` (or its cause) is the loser's side of two concurrent `CREATE … IF NOT EXISTS`. */
function lostCreateRace(error: unknown): boolean {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 3; depth++) {
    const { code, constraint, constraint_name } = e as Record<string, unknown>;
    if (code === '42P07' || code === '42710') return true;
    // pg names the index `constraint`, postgres.js `constraint_name`.
    const index = constraint ?? constraint_name;
    if (code === '23505' && typeof index === 'string' && index.startsWith('pg_')) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
