// The search box: loads the index built by `npm run docs` (MiniSearch) on first use and lists the
// best matches; Enter opens the first one.
import { SEARCH_OPTIONS } from './tokenize.js';

const root = document.body.dataset.root || '.';
const input = document.getElementById('search');
const list = document.getElementById('search-results');
let index;

async function load() {
  if (!index) {
    const response = await fetch(`${root}/search-index.json`);
    index = globalThis.MiniSearch.loadJSON(await response.text(), SEARCH_OPTIONS);
  }
  return index;
}

function show(results) {
  list.replaceChildren(
    ...results.map((result) => {
      const item = document.createElement('li');
      const link = document.createElement('a');
      link.href = `${root}/${result.url}`;
      const title = document.createElement('strong');
      title.textContent = result.title;
      const page = document.createElement('span');
      page.textContent = result.page;
      link.append(title, page);
      item.append(link);
      return item;
    }),
  );
  if (results.length === 0 && input.value.trim()) {
    const item = document.createElement('li');
    item.className = 'empty';
    item.textContent = 'No match';
    list.append(item);
  }
  list.hidden = !input.value.trim();
}

input.addEventListener('focus', () => void load());
input.addEventListener('input', async () => {
  const query = input.value.trim();
  show(query ? (await load()).search(query).slice(0, 10) : []);
});
input.addEventListener('keydown', (event) => {
  if (event.key === 'Escape') {
    input.value = '';
    show([]);
  }
  if (event.key === 'Enter') list.querySelector('a')?.click();
});
document.addEventListener('click', (event) => {
  if (!event.target.closest('.search')) list.hidden = true;
});
