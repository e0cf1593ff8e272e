// The search index's tokenizer, the same in the build (Node) and the page: whole identifiers
// (`signature_mismatch`, `createSqliteStore`) plus their parts (`signature`, `sqlite`, `store`).
export function tokenize(text) {
  const tokens = [];
  for (const word of text.split(/[^\p{L}\p{N}_$]+/u)) {
    if (!word) continue;
    tokens.push(word);
    const parts = word.split(/_+|(?<=[\p{Ll}\p{N}])(?=\p{Lu})/u).filter(Boolean);
    if (parts.length > 1) tokens.push(...parts);
  }
  return tokens;
}

/** MiniSearch options shared by the build and the page. */
export const SEARCH_OPTIONS = {
  fields: ['title', 'text'],
  storeFields: ['title', 'page', 'url'],
  tokenize,
  searchOptions: { boost: { title: 5 }, prefix: true, fuzzy: 0.1, tokenize },
};
