// An install command in the docs (`npm install …`, `npm install -D …`) as the four package managers
// spell it, for the page's npm / pnpm / yarn / bun tabs. Anything else is not an install block.

export interface InstallTab {
  manager: 'npm' | 'pnpm' | 'yarn' | 'bun';
  command: string;
}

const INSTALL = /^npm (?:install|i)((?: -D| --save-dev)?) ((?:[@\w./^~<>=-]+ ?)+)$/;

/** The tabs of a shell block that is exactly one `npm install` line; undefined otherwise. */
export function installTabs(text: string): InstallTab[] | undefined {
  const match = INSTALL.exec(text.trim());
  if (!match) return undefined;
  const dev = match[1] !== '';
  const packages = match[2]!.trim();
  return [
    { manager: 'npm', command: `npm install${dev ? ' -D' : ''} ${packages}` },
    { manager: 'pnpm', command: `pnpm add${dev ? ' -D' : ''} ${packages}` },
    { manager: 'yarn', command: `yarn add${dev ? ' -D' : ''} ${packages}` },
    { manager: 'bun', command: `bun add${dev ? ' -d' : ''} ${packages}` },
  ];
}
