import { Bonjour, type ServiceConfig } from 'bonjour-service';
import type { FastifyBaseLogger } from 'fastify';

/** What colleagues' machines find over mDNS/DNS-SD while LAN mode is on. */
interface Advertisement {
  /** The machine's host name: the instance is "Courtier (<host>)", its target <host>.local. */
  hostname: string;
  addresses: readonly string[];
  port: number;
  /** The office CA's SHA-256 fingerprint, to compare before trusting it (null with an IT certificate). */
  caFingerprint: string | null;
}

/**
 * Advertises `_courtier._tcp` on the LAN listener's interfaces only (one responder bound to each
 * address), with the console's path and the CA fingerprint in the TXT record. Nothing depends on
 * it: Windows adapters and Android often drop mDNS, so the console also shows URLs and a QR code.
 */
export interface Discovery {
  /** Publishes this advertisement (or withdraws it with null); a repeat of the current one is a no-op. */
  update(advertisement: Advertisement | null): void;
  stop(): Promise<void>;
}

const SERVICE_TYPE = 'courtier';

export function createDiscovery(logger: FastifyBaseLogger): Discovery {
  let current = '';
  let responders: Bonjour[] = [];

  async function withdraw(): Promise<void> {
    const closing = responders;
    responders = [];
    await Promise.all(
      closing.map(
        (responder) =>
          new Promise<void>((resolve) => {
            responder.unpublishAll(() => responder.destroy(() => resolve()));
          }),
      ),
    );
  }

  return {
    update(advertisement) {
      const key = advertisement === null ? '' : JSON.stringify(advertisement);
      if (key === current) return;
      current = key;
      void withdraw().then(() => {
        if (advertisement === null || key !== current) return;
        const short = advertisement.hostname.split('.')[0] ?? advertisement.hostname;
        for (const address of advertisement.addresses.filter((a) => !a.includes(':'))) {
          // Joined and sending on this address's interface alone; bound to the wildcard, because a
          // socket bound to a unicast address never receives the multicast queries.
          const options: Partial<ServiceConfig> & { interface: string; bind: string } = { interface: address, bind: '0.0.0.0' };
          const responder = new Bonjour(options, (err: Error) =>
            logger.warn({ err, address }, 'mDNS advertisement failed (colleagues can still use the URLs the console shows)'),
          );
          responder.publish({
            name: `Courtier (${short})`,
            type: SERVICE_TYPE,
            port: advertisement.port,
            host: `${short}.local`,
            disableIPv6: true,
            txt: {
              path: '/console/',
              ...(advertisement.caFingerprint ? { ca_sha256: advertisement.caFingerprint.replaceAll(':', '').toLowerCase() } : {}),
            },
          });
          responders.push(responder);
        }
        logger.info({ addresses: advertisement.addresses, port: advertisement.port }, 'office LAN advertised over mDNS as _courtier._tcp');
      });
    },
    async stop() {
      current = '';
      await withdraw();
    },
  };
}
