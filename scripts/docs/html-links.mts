// Links added to a rendered page's HTML where its Markdown had plain text: a `docs/x.md` mentioned in
// prose (JSDoc says "(docs/inbox.md "Direct mode")") becomes a link to that page, and in a reference
// page's declarations an exported type's name links to its entry. Text inside code, links and tags
// is left alone, except the highlighted type names of declarations.

const TAG = /(<[^>]+>)/;

/** `html` with each prose mention of a docs page that `pageOf` knows linked to it. */
export function linkDocMentions(html: string, pageOf: (source: string) => string | undefined): string {
  let inside = 0; // depth of <code>, <pre> and <a>, where text stays text
  return html
    .split(TAG)
    .map((part) => {
      const tag = /^<(\/?)(code|pre|a)\b/i.exec(part);
      if (tag) {
        inside += tag[1] ? -1 : 1;
        return part;
      }
      if (part.startsWith('<') || inside > 0) return part;
      return part.replace(/\bdocs\/([\w-]+)\.md\b/g, (mention) => {
        const href = pageOf(mention);
        return href ? `<a href="${href}">${mention}</a>` : mention;
      });
    })
    .join('');
}

/** Highlighted TypeScript with each type name that `hrefOf` knows linked to its reference entry. */
export function linkTypeNames(highlighted: string, hrefOf: (name: string) => string | undefined): string {
  return highlighted.replace(/<span class="hljs-title class_">([\w$]+)<\/span>/g, (span, name: string) => {
    const href = hrefOf(name);
    return href ? `<a class="type-link" href="${href}">${span}</a>` : span;
  });
}
