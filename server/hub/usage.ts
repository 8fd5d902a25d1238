/** The hub's lines of `courtier --help`, apart from its commands so that the help loads no PostgreSQL driver. */
export const HUB_USAGE = `  hub serve [--host 127.0.0.1] [--port 8790] [--trust-proxy ADDRS]
        Run a sync hub until SIGINT/SIGTERM (any number of hub processes may share the database).
  hub invite [--cabinet ID] [--json]
        A single-use pairing code (15 minutes): without --cabinet it registers the install's cabinet, with it joins that cabinet.
  hub cabinets list [--json]
        Cabinets with their active devices, records synced and last sync.
  hub devices list --cabinet ID [--json]
  hub devices revoke --device ID [--json]

Every hub command takes --database-url URL (or COURTIER_HUB_DATABASE_URL); serve also reads
COURTIER_HUB_HOST, COURTIER_HUB_PORT and COURTIER_HUB_TRUST_PROXY.
`;
