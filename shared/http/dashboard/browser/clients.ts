/**
 * The dashboard's connected clients: the OAuth grants people approved for this project, each with
 * a Revoke button (`DELETE /grants/:grant_id`, which stops the grant's tokens within seconds).
 */
import { api, type ConnectedClient, type ConnectedClients } from './api.ts';
import { byId, element, reconcile, when } from './dom.ts';

/** The rows drawn, by grant id: kept across refreshes, so focus stays on a button. */
const rows = new Map<string, Element>();

/** Reads and draws the project's connected clients. */
export async function refreshClients(): Promise<void> {
  const { grants } = await api<ConnectedClients>('/grants');
  reconcile(byId('clients').querySelector('tbody')!, grants, (grant) => grant.grant_id, rowOf, rows);
  byId('clients').hidden = grants.length === 0;
  byId('no-clients').hidden = grants.length > 0;
}

function rowOf(grant: ConnectedClient): HTMLTableRowElement {
  const row = element('tr', null, { 'data-grant-id': grant.grant_id });
  const revoke = element('button', 'Revoke', { type: 'button', class: 'danger', 'aria-label': `Revoke ${grant.client}` });
  revoke.addEventListener('click', () => void revokeGrant(grant, revoke));
  const action = element('td');
  action.append(revoke);
  row.append(
    element('th', grant.client, { scope: 'row', title: `${grant.client_id} · redirects to ${grant.redirect_host}` }),
    element('td', grant.toolsets.join(', '), { 'data-label': 'Toolsets' }),
    element('td', grant.read_only ? 'read-only' : 'read & write', { 'data-label': 'Access' }),
    element('td', when(grant.created_at), { 'data-label': 'Connected' }),
    action,
  );
  return row;
}

/** Revokes one grant, then redraws the list (from which it is gone). */
async function revokeGrant(grant: ConnectedClient, button: HTMLButtonElement): Promise<void> {
  button.disabled = true;
  const status = byId('clients-status');
  try {
    await api(`/grants/${encodeURIComponent(grant.grant_id)}`, { method: 'DELETE' });
    status.textContent = `Revoked ${grant.client}: its tokens stop working within seconds.`;
    await refreshClients();
  } catch (error) {
    status.textContent = error instanceof Error ? error.message : String(error);
    button.disabled = false;
  }
}
