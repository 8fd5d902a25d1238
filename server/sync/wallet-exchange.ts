import type { Deps } from '../deps.js';
import { applyWalletAnswer, setAsideRefusedEntries, walletToSend } from '../wallet/hub-link.js';
import { HubRefusal, type HubClient } from './hub-client.js';

/**
 * The wallet exchange with the hub (POST /sync/v1/wallet), which keeps the cabinet's one wallet:
 * this install's entries the hub has not acknowledged go up, the balance and the cabinet's entries
 * after the wallet cursor come down (server/wallet/hub-link.ts writes them).
 */

export interface WalletExchangeContext {
  deps: Pick<Deps, 'db' | 'clock'>;
  client: HubClient;
}

/** Entries sent per exchange (the hub takes up to 500). */
const SENT_PER_EXCHANGE = 500;
/** Exchanges in a row at most, should the hub keep saying `more`: the next cycle goes on. */
const MAX_ROUNDS = 100;

/** The ids the hub refused for what they are (details.refused); empty when the refusal is about anything else. */
function refusedIds(err: unknown): string[] {
  if (!(err instanceof HubRefusal) || err.code !== 'wallet_entry_refused') return [];
  const refused = (err.details as { refused?: unknown } | undefined)?.refused;
  if (!Array.isArray(refused)) return [];
  return refused.flatMap((r: unknown) =>
    typeof r === 'object' && r !== null && typeof (r as { entry_id?: unknown }).entry_id === 'string'
      ? [(r as { entry_id: string }).entry_id]
      : [],
  );
}

/** One exchange; whether another should follow at once (the hub has more, this install may have, or refused entries were set aside). */
async function exchangeOnce(context: WalletExchangeContext, cabinetId: string): Promise<boolean> {
  const sent = walletToSend(context.deps, cabinetId, SENT_PER_EXCHANGE);
  if (!sent) return false;
  try {
    const answer = await context.client.exchangeWallet(sent);
    // A full batch sent: more may wait (everything is sent again after the hub was restored).
    return applyWalletAnswer(context.deps, cabinetId, answer, sent.after).more || sent.entries.length === SENT_PER_EXCHANGE;
  } catch (err) {
    // An entry the hub refuses would be refused at every try, and the ones behind it with it.
    const refused = refusedIds(err).filter((id) => sent.entries.some((e) => e.entry_id === id));
    if (refused.length === 0) throw err;
    setAsideRefusedEntries(context.deps, cabinetId, refused);
    return true;
  }
}

/** Exchanges until the install holds the cabinet's whole ledger; returns how many exchanges it took (0 without a link). */
export async function exchangeWallet(context: WalletExchangeContext, cabinetId: string): Promise<number> {
  let rounds = 0;
  while (rounds < MAX_ROUNDS) {
    rounds += 1;
    if (!(await exchangeOnce(context, cabinetId))) break;
  }
  return walletToSend(context.deps, cabinetId, 0) === null ? 0 : rounds;
}
