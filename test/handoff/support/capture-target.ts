/**
 * A hand-off target that keeps a copy of every job it is given, for tests that read the jobs a
 * receiver writes (their fields and MACs) without a queue engine.
 */
import type { HandoffJob, HandoffTarget } from '../../../src/handoff/index.js';

/** A target whose `enqueue` stores a copy of each job in `jobs` and answers `enqueued`. */
export function captureTarget(): HandoffTarget & { jobs: HandoffJob[] } {
  const jobs: HandoffJob[] = [];
  return {
    jobs,
    async enqueue(job) {
      jobs.push(structuredClone(job));
      return 'enqueued';
    },
  };
}
