// The search box: loads the index built by `npm run docs` (MiniSearch) on first use and lists the
// best matches; Enter opens the first one. A classic script (the build puts tokenize.js before it)
// and the index as a script too, not a module or a fetch: those are blocked on a page opened from a
// file, and the site works opened from a file or served.

const root = document.body.dataset.root || '.';
const input = document.getElementById('search');
const list = document.getElementById('search-results');
let index;

function load() {
  index ??= new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = `${root}/search-index.js`;
    script.onload = () => resolve(globalThis.MiniSearch.loadJSON(globalThis.SVC_WEBHOOKS_SEARCH, SEARCH_OPTIONS));
    script.onerror = () => {
      index = undefined; // try again on the next keystroke
      reject(new Error('The search index did not load.'));
    };
    document.head.append(script);
  });
  return index;
}

function unavailable(error) {
  const item = document.createElement('li');
  item.className = 'empty';
  item.textContent = `Search is unavailable: ${error.message}`;
  list.replaceChildren(item);
  list.hidden = false;
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

input.addEventListener('focus', () => void load().catch(() => {}));
input.addEventListener('input', async () => {
  const query = input.value.trim();
  try {
    show(query ? (await load()).search(query).slice(0, 10) : []);
  } catch (error) {
    unavailable(error);
  }
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
