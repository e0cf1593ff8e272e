/**
 * The docs site's Markdown renderer (scripts/docs/markdown.mts) given hostile Markdown: raw HTML shows
 * as text, and links and images whose URL is not http(s), mailto or relative show as their text,
 * however the scheme is spelled. The Markdown the docs hold (code, tables, headings, links between
 * pages, the comment markers CI reads) renders as it always did. test/site/site.test.ts loads such a
 * page in Chromium.
 */
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from './render-markdown.js';

const render = (markdown: string) =>
  renderMarkdown(markdown, {
    source: 'docs/probe.md',
    page: 'probe.html',
    pages: new Map([['docs/dedup.md', 'dedup.html']]),
    errorCodes: new Map([['signature_mismatch', 'errors.html#signature_mismatch']]),
  }).html;

/** The tags the renderer itself writes; anything else came from the Markdown. */
const OWN_TAGS = new Set(
  'p a code pre span h1 h2 h3 h4 h5 h6 ul ol li table thead tbody tr th td em strong del blockquote hr br img input'.split(
    ' ',
  ),
);

/** Tag names, event-handler attributes and URL attributes of an HTML fragment (as a browser tokenizes it). */
function elements(html: string) {
  const tags = [...html.matchAll(/<\/?([a-zA-Z][^\s/>]*)([^>]*)>/g)];
  return {
    names: tags.map((t) => t[1]!.toLowerCase()),
    handlers: tags.flatMap((t) => [...t[2]!.matchAll(/[\s"'/](on[a-z]+)\s*=/gi)].map((m) => m[1]!)),
    urls: tags.flatMap((t) => [...t[2]!.matchAll(/\s(?:href|src)="([^"]*)"/g)].map((m) => m[1]!)),
  };
}

describe('the docs renderer given hostile Markdown', () => {
  it.each([
    ['an image with onerror', '<img src=x onerror="window.__pwned = 1">'],
    ['a script block', '<script>window.__pwned = 1</script>'],
    [
      'inline HTML in a paragraph',
      'Text <b onclick="window.__pwned = 1">bold</b> <svg onload=alert(1)></svg> text.',
    ],
    ['an iframe', '<iframe src="javascript:alert(1)"></iframe>'],
    ['a raw anchor', '<a href="javascript:alert(1)">x</a>'],
    ['a comment followed by markup', '<!-- marker --><script>window.__pwned = 1</script>'],
    ['details', '<details open ontoggle="window.__pwned = 1"><summary>s</summary>\n\nbody\n\n</details>'],
    ['HTML in a heading', '## Title <img src=x onerror=alert(1)>'],
    ['HTML in a table cell', '| a |\n|---|\n| <img src=x onerror=alert(1)> |'],
    ['HTML in a list', '- <style>body { display: none }</style>'],
  ])('shows %s as text', (_, markdown) => {
    const html = render(markdown);
    const seen = elements(html);
    expect(seen.names.filter((n) => !OWN_TAGS.has(n))).toEqual([]);
    expect(seen.names).not.toContain('img');
    expect(seen.handlers).toEqual([]);
    // Only the headings' own anchors.
    expect(seen.urls.filter((url) => !/^#[\w-]*$/.test(url))).toEqual([]);
    // The markup is still on the page, as written.
    expect(html).toContain('&lt;');
  });

  const hostile = [
    'javascript:window.__pwned=1',
    'JaVaScRiPt:window.__pwned=1',
    ' javascript:alert(1)',
    '<java\tscript:alert(1)>',
    'java&#10;script:alert(1)',
    '<\u0001javascript:alert(1)>',
    '&#106;avascript:alert(1)',
    '&#x6A;avascript&colon;alert(1)',
    'jav&#x09;ascript:alert(1)',
    'javascript&#58;alert(1)',
    'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
    'data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=',
    'vbscript:msgbox(1)',
    'file:///etc/passwd',
    '\\javascript:alert(1)',
  ];
  it.each(hostile)('drops the link and image URL %j, keeping the text', (url) => {
    for (const markdown of [
      `[click me](${url})`,
      `[click me](${url} "title")`,
      `[click me][ref]\n\n[ref]: ${url}`,
      `![click me](${url})`,
    ]) {
      const html = render(markdown);
      expect(elements(html).urls, markdown).toEqual([]);
      expect(html, markdown).toMatch(/^<p>click me<\/p>\n$/);
    }
  });

  it('drops an autolink with a script scheme', () => {
    const html = render('<javascript:alert(1)> and <JAVASCRIPT:alert(1)>');
    expect(elements(html).urls).toEqual([]);
    expect(html).toBe('<p>javascript:alert(1) and JAVASCRIPT:alert(1)</p>\n');
  });

  it('writes a link to a section that moved (scripts/docs/moved.json) to its new page, relative and absolute', () => {
    const html = renderMarkdown(
      [
        '[a](handoff.md#redis-requirements)',
        '[b](handoff.md#guarantees)',
        '[c](handoff.md)',
        '[d](https://svc.github.io/webhooks/handoff.html#redis-requirements)',
      ].join('\n\n'),
      {
        source: 'docs/probe.md',
        page: 'probe.html',
        pages: new Map([
          ['docs/handoff.md', 'handoff.html'],
          ['docs/handoff-bullmq.md', 'handoff-bullmq.html'],
        ]),
        errorCodes: new Map(),
        home: 'https://svc.github.io/webhooks/',
        moved: { 'docs/handoff.md#redis-requirements': 'docs/handoff-bullmq.md#redis-requirements' },
      },
    ).html;
    expect(elements(html).urls).toEqual([
      'handoff-bullmq.html#redis-requirements',
      'handoff.html#guarantees',
      'handoff.html',
      'handoff-bullmq.html#redis-requirements',
    ]);
  });

  it('keeps http(s), mailto, relative and fragment URLs', () => {
    const html = render(
      [
        '[a](https://example.com/a?b=1&c=2#d)',
        '[b](http://127.0.0.1:3000/webhooks)',
        '[c](mailto:ops@example.com)',
        '[d](dedup.md#the-stores)',
        '[e](#top)',
        '[f](//example.com/x)',
        '[g](errors.html#signature_mismatch)',
        '![h](diagram.png "Diagram")',
        '<https://example.com/auto>',
      ].join('\n\n'),
    );
    expect(elements(html).urls).toEqual([
      'https://example.com/a?b=1&amp;c=2#d',
      'http://127.0.0.1:3000/webhooks',
      'mailto:ops@example.com',
      'dedup.html#the-stores',
      '#top',
      '//example.com/x',
      'errors.html#signature_mismatch',
      'diagram.png',
      'https://example.com/auto',
    ]);
    expect(html).toContain('<img src="diagram.png" alt="h" title="Diagram">');
  });
});

describe("links to the published site's address (the README's, for npm's page)", () => {
  const home = 'https://svc.github.io/webhooks/';
  const at = (page: string, markdown: string) =>
    renderMarkdown(markdown, { source: 'README.md', page, pages: new Map(), errorCodes: new Map(), home })
      .html;

  it('stay within the site, relative to the page', () => {
    expect(at('index.html', `[inbox](${home}inbox.html#the-worker)`)).toContain(
      '<a href="inbox.html#the-worker">',
    );
    expect(at('reference/index.html', `[inbox](${home}inbox.html)`)).toContain('<a href="../inbox.html">');
    expect(at('index.html', `[home](${home})`)).toContain('<a href="index.html">');
  });

  it('leave other absolute links as they are', () => {
    expect(at('index.html', '[code](https://github.com/svc/webhooks/tree/main/etc)')).toContain(
      'href="https://github.com/svc/webhooks/tree/main/etc"',
    );
  });
});

describe('the docs renderer given the docs', () => {
  it('drops the comment markers CI reads and renders the block after them', () => {
    const html = render(
      '<!-- shell: skip — needs an account -->\n```sh\nnpm test\n```\n\n<!-- bench:a:start -->\n<!-- bench:a:end -->',
    );
    expect(html).not.toContain('<!--');
    expect(html).not.toContain('shell: skip');
    expect(html).toBe(
      '<pre><code class="hljs language-bash">npm <span class="hljs-built_in">test</span></code></pre>\n',
    );
  });

  it('renders headings with anchors, tables, code blocks and error codes as before', () => {
    const html = render(
      [
        '# Stores',
        '## The `signature_mismatch` error',
        '| code | status |',
        '|---|---:|',
        '| `signature_mismatch` | 401 |',
        '',
        '```ts',
        "const a: Array<string> = ['<b>'];",
        '```',
        '',
        'Text with `Promise<Response>` and **bold**, and [a link](dedup.md).',
      ].join('\n'),
    );
    expect(html).toContain(
      '<h1 id="stores"><a class="anchor" href="#stores" aria-hidden="true">#</a>Stores</h1>',
    );
    expect(html).toContain(
      '<h2 id="the-signature_mismatch-error"><a class="anchor" href="#the-signature_mismatch-error" aria-hidden="true">#</a>The <a class="error-code" href="errors.html#signature_mismatch"><code>signature_mismatch</code></a> error</h2>',
    );
    expect(html).toContain('<th align="right">status</th>');
    expect(html).toContain('<td align="right">401</td>');
    expect(html).toMatch(
      /<pre><code class="hljs language-typescript"><span class="hljs-keyword">const<\/span>/,
    );
    expect(html).toContain('&#x27;&lt;b&gt;&#x27;');
    expect(html).toContain('<code>Promise&lt;Response&gt;</code>');
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('<a href="dedup.html">a link</a>');
  });
});
