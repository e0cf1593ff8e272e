// Loaded by check.mjs and check.cjs once msw is installed beside the tarball: the handlers of
// `@svc/webhooks/testing/msw` serve the mocked management APIs through msw's interception of
// `fetch`, exactly as an app's test suite would use them. One line per check, like checks.cjs.
'use strict';

const { readFileSync } = require('node:fs');
const { join } = require('node:path');

async function runMswChecks(format, load) {
  const msw = JSON.parse(readFileSync(join(process.cwd(), 'node_modules/msw/package.json'), 'utf8'));
  const label = `node ${process.versions.node} ${format} msw ${msw.version}`;
  const results = [];
  const check = async (name, fn) => {
    try {
      const detail = await fn();
      results.push(`ok ${label} ${name}${detail ? ` (${detail})` : ''}`);
    } catch (error) {
      results.push(`FAIL ${label} ${name}: ${String(error?.stack ?? error).split('\n').slice(0, 3).join(' | ')}`);
    }
  };
  await check('testing/msw serves the mocked management APIs through fetch', async () => {
    const testing = await load('@svc/webhooks/testing');
    const { mailApiHandlers, crmApiHandlers } = await load('@svc/webhooks/testing/msw');
    const { setupServer } = await load('msw/node');
    const clock = testing.createVirtualClock({ start: Date.parse('2025-03-01T12:00:00.000Z') });
    const handler = () => new Response(null, { status: 200 });
    const mail = testing.createMailEmitter({ clock, handler });
    const crm = testing.createCrmEmitter({ clock, handler });
    const server = setupServer(...mailApiHandlers(mail), ...crmApiHandlers(crm));
    // msw 3 renamed the option; each major ignores the other's name.
    const major = Number(msw.version.split('.')[0]);
    server.listen(major >= 3 ? { onUnhandledFrame: 'error' } : { onUnhandledRequest: 'error' });
    try {
      const created = await fetch('https://api.svcmail.test/api/v1/webhooks', {
        method: 'POST',
        headers: { 'X-API-Key': testing.MAIL_TEST_API_KEY, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: 'https://hooks.example.com/mail', events: ['bounced'] }),
      });
      if (created.status !== 201) throw new Error(`POST /api/v1/webhooks: ${created.status}`);
      const hook = await created.json();
      if (mail.listWebhooks().map((w) => w.id).join() !== hook.id) throw new Error('emitter state');
      const denied = await fetch('https://api.svcmail.test/api/v1/webhooks');
      if (denied.status !== 401) throw new Error(`no key: ${denied.status}`);
      const listed = await fetch('https://api.svccrm.test/v1/webhooks', {
        headers: { Authorization: `Bearer ${testing.CRM_TEST_TOKEN}` },
      });
      if (listed.status !== 200) throw new Error(`GET /v1/webhooks: ${listed.status}`);
      return `mail ${created.status}, unauthenticated ${denied.status}, crm ${listed.status}`;
    } finally {
      server.close();
    }
  });
  return results;
}

module.exports = { runMswChecks };
