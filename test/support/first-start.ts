/**
 * `npm run dev`'s first start alone (local/demo-data.ts), for test/local/first-start.stress.test.ts to
 * interrupt: `node test/support/first-start.ts <root> <documents> <tasks>` opens (building it when
 * absent) the local data in `<root>`, prints `READY <demo project as JSON>`, closes it and exits.
 */
import { openDemoData } from '../../local/demo-data.ts';

const [root, documents, tasks] = process.argv.slice(2);
const { neon, demo } = await openDemoData({ root, corpus: { documents: Number(documents), tasks: Number(tasks) } });
await neon.close();
console.log(`READY ${JSON.stringify(demo)}`);
