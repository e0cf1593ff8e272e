// The site's sidebar, by task. Items name a markdown file of the repository (and an anchor in it);
// the build checks that each one resolves. A docs/*.md page named nowhere here is listed under
// "More guides" by its title, so a new page shows up without editing this file; one line here moves
// it into a task group. The event reference's pages (scripts/docs/events.mts) are listed by event name.
import { CRM_EVENT_NAMES } from '../../src/crm/event-names.ts';
import { MAIL_EVENT_NAMES } from '../../src/mail/event-names.ts';
import { eventSource } from './events.mts';

export interface NavItem {
  text: string;
  /** A markdown file of the repository, with an optional `#anchor`; or `reference/` for the API reference. */
  target: string;
}

export interface NavGroup {
  title: string;
  items: NavItem[];
}

export const NAV: NavGroup[] = [
  {
    title: 'Start',
    items: [
      { text: 'Overview', target: 'README.md' },
      { text: 'Getting started', target: 'docs/getting-started.md' },
      { text: 'Complete apps', target: 'docs/apps.md' },
      { text: 'Verify a signature', target: 'docs/verify.md' },
      { text: 'Events', target: 'docs/events.md' },
      { text: 'Receivers', target: 'docs/receivers.md' },
      { text: 'Handlers', target: 'docs/receivers-handlers.md' },
      { text: 'Status policy', target: 'docs/receivers-status.md' },
      { text: 'Dedup keys', target: 'docs/receivers-dedup-keys.md' },
      { text: 'A secret per tenant', target: 'docs/receivers-tenants.md' },
    ],
  },
  {
    title: 'Email service events',
    items: [
      { text: 'All events', target: 'events/index.md' },
      ...MAIL_EVENT_NAMES.map((name) => ({ text: name, target: eventSource('mail', name) })),
    ],
  },
  {
    title: 'CRM events',
    items: CRM_EVENT_NAMES.map((name) => ({ text: name, target: eventSource('crm', name) })),
  },
  {
    title: 'Receive on…',
    items: [
      { text: 'Choosing an adapter', target: 'docs/adapters.md' },
      { text: 'Express', target: 'docs/adapters-express.md' },
      { text: 'Fastify', target: 'docs/adapters-fastify.md' },
      { text: 'Next.js', target: 'docs/adapters-next.md' },
      { text: 'Hono', target: 'docs/adapters-hono.md' },
      { text: 'Koa', target: 'docs/adapters-koa.md' },
      { text: 'NestJS', target: 'docs/adapters-nest.md' },
      { text: 'Cloudflare Workers', target: 'docs/adapters-workers.md' },
      { text: 'AWS Lambda', target: 'docs/adapters-lambda.md' },
      { text: 'fetch, h3, SvelteKit, Remix, Astro', target: 'docs/adapters-fetch.md' },
      { text: 'node:http', target: 'docs/adapters-node.md' },
      { text: 'Bundling for Workers and Lambda', target: 'docs/bundling.md' },
      { text: 'Bun', target: 'docs/bun.md' },
      { text: 'Deno', target: 'docs/deno.md' },
      { text: 'Slow and vanishing clients', target: 'docs/adapters-slow-clients.md' },
      { text: 'What the adapters are tested on', target: 'docs/adapters-tested.md' },
    ],
  },
  {
    title: 'Run each delivery once',
    items: [
      { text: 'Exactly-once and stores', target: 'docs/dedup.md' },
      { text: 'Choosing a store', target: 'docs/dedup.md#choosing-a-store' },
      { text: 'Memory store', target: 'docs/dedup-memory.md' },
      { text: 'SQLite store', target: 'docs/dedup-sqlite.md' },
      { text: 'Redis store', target: 'docs/dedup-redis.md' },
      { text: 'PostgreSQL store', target: 'docs/dedup-postgres.md' },
      { text: 'D1 store', target: 'docs/dedup-d1.md' },
      { text: 'DynamoDB store', target: 'docs/dedup-dynamodb.md' },
      { text: 'Store stalls and abandoned claims', target: 'docs/dedup-stalls.md' },
      { text: 'Writing your own store', target: 'docs/dedup-custom.md' },
    ],
  },
  {
    title: 'The database inbox',
    items: [
      { text: 'The inbox and its table', target: 'docs/inbox.md' },
      { text: 'The worker, exactly once', target: 'docs/inbox-worker.md' },
      { text: 'Transaction adapters', target: 'docs/inbox-transactions.md' },
      { text: 'Direct mode', target: 'docs/inbox-direct.md' },
      { text: 'Quarantine', target: 'docs/inbox-quarantine.md' },
      { text: 'When the payload changes', target: 'docs/inbox-repair.md' },
      { text: 'Ordering and the stale guard', target: 'docs/inbox-ordering.md' },
      { text: 'Depth and drift', target: 'docs/inbox-observability.md' },
      { text: 'Inspect, re-drive, purge', target: 'docs/inbox-operate.md' },
      { text: 'What the inbox is tested on', target: 'docs/inbox-tested.md' },
    ],
  },
  {
    title: 'Hand-off to workers',
    items: [
      { text: 'Hand-off mode', target: 'docs/handoff.md' },
      { text: 'pg-boss', target: 'docs/handoff-pg-boss.md' },
      { text: 'BullMQ', target: 'docs/handoff-bullmq.md' },
      { text: 'Cloudflare Queues', target: 'docs/handoff-cloudflare-queues.md' },
      { text: 'Amazon SQS', target: 'docs/handoff-sqs.md' },
      { text: 'NATS JetStream', target: 'docs/handoff-nats.md' },
      { text: 'Authenticated jobs', target: 'docs/handoff-jobs.md' },
    ],
  },
  {
    title: 'Test and operate',
    items: [
      { text: 'Testing your handlers', target: 'docs/testing.md' },
      { text: 'Observability', target: 'docs/observability.md' },
      { text: 'Logs', target: 'docs/observability-logs.md' },
      { text: 'Payload drift', target: 'docs/observability-drift.md' },
      { text: 'The CLI', target: 'docs/cli.md' },
      { text: 'The emulator', target: 'docs/cli-emulate.md' },
      { text: 'Recover and reconcile (CLI)', target: 'docs/cli-recover.md' },
      { text: 'The inbox from the CLI', target: 'docs/cli-inbox.md' },
      { text: 'Streams and queues (CLI)', target: 'docs/cli-setup.md' },
      { text: 'Fixtures, events, schemas', target: 'docs/cli-schemas.md' },
      { text: 'Reconcile on a schedule', target: 'docs/manage.md' },
      { text: 'Management clients', target: 'docs/manage-clients.md' },
      { text: 'Recovery after an outage', target: 'docs/manage-recovery.md' },
      { text: 'Security', target: 'docs/security.md' },
    ],
  },
  { title: 'Errors', items: [{ text: 'Error codes and fixes', target: 'docs/errors.md' }] },
  {
    title: 'Project',
    items: [
      { text: 'Architecture', target: 'docs/architecture.md' },
      { text: 'Benchmarks', target: 'docs/benchmarks.md' },
      { text: 'Developing this package', target: 'docs/develop.md' },
    ],
  },
];
