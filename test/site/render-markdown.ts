/**
 * The site's Markdown renderer (scripts/docs/markdown.mts), loaded when the tests run rather than
 * imported: its highlight.js types pull in TypeScript's DOM lib, which the project's type check
 * (tsconfig.json: ES2023 and Node's types only) keeps out of src, test and bench.
 */
export interface RenderContext {
  source: string;
  page: string;
  pages: Map<string, string>;
  errorCodes: Map<string, string>;
  home?: string;
  moved?: Record<string, string>;
}

const loaded = (await import(new URL('../../scripts/docs/markdown.mts', import.meta.url).href)) as {
  renderMarkdown(markdown: string, context: RenderContext): { html: string };
};

/** Renders one Markdown document for a page of the site, as `npm run docs` does. */
export const renderMarkdown = loaded.renderMarkdown;
