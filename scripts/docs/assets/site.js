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

// A copy button on every code block (the text as shown, without the button's own label).
for (const pre of document.querySelectorAll('article pre')) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'copy';
  button.textContent = 'Copy';
  button.setAttribute('aria-label', 'Copy the code');
  button.addEventListener('click', async () => {
    const text = pre.querySelector('code')?.textContent ?? '';
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // No clipboard API (an insecure origin): select the code, so Ctrl-C copies it.
      getSelection()?.selectAllChildren(pre.querySelector('code') ?? pre);
    }
    button.textContent = 'Copied';
    setTimeout(() => {
      button.textContent = 'Copy';
    }, 1500);
  });
  pre.append(button);
}

// npm / pnpm / yarn / bun tabs of install commands; the choice holds on every page.
const MANAGER_KEY = 'svc-webhooks-docs-manager';
function choose(manager) {
  for (const tabs of document.querySelectorAll('.install-tabs')) {
    if (!tabs.querySelector(`[role="tab"][data-manager="${manager}"]`)) continue;
    for (const tab of tabs.querySelectorAll('[role="tab"]'))
      tab.setAttribute('aria-selected', String(tab.dataset.manager === manager));
    for (const panel of tabs.querySelectorAll('[role="tabpanel"]')) panel.hidden = panel.dataset.manager !== manager;
  }
}
document.addEventListener('click', (event) => {
  const tab = event.target.closest('.install-tabs [role="tab"]');
  if (!tab) return;
  choose(tab.dataset.manager);
  try {
    localStorage.setItem(MANAGER_KEY, tab.dataset.manager);
  } catch {}
});
try {
  const saved = localStorage.getItem(MANAGER_KEY);
  if (saved) choose(saved);
} catch {}

// A section that moved to a page of its own keeps its old address: arriving here with its anchor
// (an old bookmark, a link from elsewhere) goes on to the new place.
const moved = JSON.parse(document.body.dataset.moved || '{}');
function followMoved() {
  const anchor = decodeURIComponent(location.hash.slice(1));
  if (anchor && !document.getElementById(anchor) && Object.hasOwn(moved, anchor)) location.replace(moved[anchor]);
}
followMoved();
window.addEventListener('hashchange', followMoved);
