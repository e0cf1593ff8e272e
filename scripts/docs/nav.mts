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
      { text: 'Receivers and handlers', target: 'docs/receivers.md' },
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
      { text: 'Express', target: 'docs/adapters.md#express-4-and-5' },
      { text: 'Fastify', target: 'docs/adapters.md#fastify-5-and-4' },
      { text: 'Next.js', target: 'docs/adapters.md#nextjs' },
      { text: 'Hono', target: 'docs/adapters.md#hono' },
      { text: 'Koa', target: 'docs/adapters.md#koa' },
      { text: 'NestJS', target: 'docs/adapters.md#nestjs' },
      { text: 'Cloudflare Workers', target: 'docs/adapters.md#cloudflare-workers' },
      { text: 'AWS Lambda', target: 'docs/adapters.md#aws-lambda' },
      { text: 'Bundling for Workers and Lambda', target: 'docs/bundling.md' },
      { text: 'Bun', target: 'docs/bun.md' },
      { text: 'Deno', target: 'docs/deno.md' },
      { text: 'fetch, node:http and others', target: 'docs/adapters.md' },
    ],
  },
  {
    title: 'Run each delivery once',
    items: [
      { text: 'Exactly-once and stores', target: 'docs/dedup.md' },
      { text: 'Choosing a store', target: 'docs/dedup.md#choosing-a-store' },
      { text: 'The database inbox', target: 'docs/inbox.md' },
    ],
  },
  { title: 'Hand-off to workers', items: [{ text: 'Hand-off mode', target: 'docs/handoff.md' }] },
  {
    title: 'Test and operate',
    items: [
      { text: 'Testing your handlers', target: 'docs/testing.md' },
      { text: 'Observability', target: 'docs/observability.md' },
      { text: 'The CLI and emulator', target: 'docs/cli.md' },
      { text: 'Management clients', target: 'docs/manage.md' },
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
