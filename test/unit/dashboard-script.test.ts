import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_SCRIPT_MODULE, dashboardScriptModule } from '../../local/dashboard.ts';

describe('the committed dashboard script', () => {
  it('is exactly the browser code bundled (run `npm run build:dashboard` after editing shared/http/dashboard/browser/)', async () => {
    expect(readFileSync(DASHBOARD_SCRIPT_MODULE, 'utf8')).toBe(await dashboardScriptModule());
  });
});
