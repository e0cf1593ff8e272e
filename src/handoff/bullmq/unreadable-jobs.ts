/**
 * A BullMQ job hash whose `data` is not JSON (written by hand, or damaged): BullMQ fails to read it
 * before any processor runs and leaves it active, then stalled, fetched and failing again without
 * end. The hand-off worker reads it anyway and dead-letters it as `job_invalid`.
 */
import {
  type Job,
  type JobJson,
  type Processor,
  UnrecoverableError,
  Worker,
  type WorkerOptions,
} from 'bullmq';
import { WebhookError } from '../../shared/errors.js';
import type { HandoffRunner } from '../job/types.js';

/**
 * A BullMQ worker that reads a job whose stored `data` is not JSON (written by hand into its hash)
 * instead of failing before the processor: BullMQ would leave it active, then stalled, fetched and
 * failing again without end. Its raw text becomes its data and the processor dead-letters it.
 */
export class HandoffWorker extends Worker {
  /** Ids of jobs read with unreadable data, until the processor dead-lettered them. */
  // Declared and set in the constructor, not initialised as a class field: the CJS build would
  // otherwise wrap the class in a renaming helper (test/package/error-name.test.ts).
  declare readonly unreadable: Set<string>;

  constructor(name: string, processor: Processor, options: WorkerOptions) {
    super(name, processor, options);
    (this as { unreadable: Set<string> }).unreadable = new Set();
  }

  protected override createJob(data: JobJson, jobId: string): Job {
    try {
      return super.createJob(data, jobId);
    } catch (error) {
      if (typeof data?.data !== 'string') throw error;
      this.unreadable.add(jobId);
      return super.createJob({ ...data, data: JSON.stringify(data.data) }, jobId);
    }
  }
}

/** The reason an unreadable job's dead letter shows. */
export const UNREADABLE_REASON = 'Invalid hand-off job: its stored data is not JSON.';

/**
 * Dead-letters a job `worker` read with unreadable data: its raw text is written back as a JSON
 * string (so the dead letter can be listed and re-driven like any other), the failure is reported,
 * and BullMQ fails it without retry.
 */
export async function deadLetterUnreadable(
  worker: HandoffWorker,
  job: Job,
  receiver: HandoffRunner,
): Promise<never> {
  worker.unreadable.delete(job.id ?? '');
  await job.updateData(job.data);
  receiver.reportJobError(new WebhookError('job_invalid', UNREADABLE_REASON), {
    message: `BullMQ job ${job.id} dead-lettered: ${UNREADABLE_REASON}`,
    deadLetter: true,
  });
  throw new UnrecoverableError(UNREADABLE_REASON);
}
