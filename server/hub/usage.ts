/** The hub's lines of `courtier --help`, apart from its commands so that the help loads no PostgreSQL driver. */
export const HUB_USAGE = `  hub serve [--host 127.0.0.1] [--port 8790] [--trust-proxy ADDRS]
        Run a sync hub until SIGINT/SIGTERM (any number of hub processes may share the database).
  hub invite (--new-cabinet ID | --cabinet ID) [--json]
        A single-use pairing code (15 minutes) for one cabinet: --new-cabinet registers that cabinet of an
        install (sync connect), --cabinet adds a new install to a cabinet the hub has (sync join), or
        reconnects one of its installs (sync connect).
  hub cabinets list [--json]
        Cabinets with their active devices, records synced and last sync.
  hub cabinets reset-protocol --cabinet ID [--protocol N] [--json]
        Serve the cabinet's installs from protocol N (default: this hub's) again, after a rollback.
  hub devices list --cabinet ID [--json]
  hub devices revoke --device ID [--json]
  hub credits grant --cabinet ID --amount N [--note TEXT] [--json]
        Credits for the cabinet's one wallet, which all its installs share (they show it within seconds).
  hub credits balance --cabinet ID [--json]
        The cabinet's balance on the hub and its newest entries.
  hub compact [--cabinet ID] [--json]
        Deletes the changes older than the retention (each record's state keeps their effect) and the PDFs
        no record names, now (hub serve does it every COURTIER_HUB_COMPACT_EVERY_MINUTES, default 60).
  hub restored [--json]
        After restoring the hub's database from a backup: every install then pulls its cabinet again
        and sends again what the backup lacks.
  hub audit list [--cabinet ID] [--limit N] [--json]
        The hub's audit log, newest first: pairings (and refused ones), devices leaving or revoked, these commands.
  hub audit verify [--json]
        Checks the chain of seals of the hub's audit log: exit 1, naming the entry, if one was changed or removed.

Every hub command takes --database-url URL (or COURTIER_HUB_DATABASE_URL); serve also reads
COURTIER_HUB_HOST, COURTIER_HUB_PORT and COURTIER_HUB_TRUST_PROXY. Retention: COURTIER_HUB_RETAIN_DAYS (30) and
COURTIER_HUB_RETAIN_CHANGES (100000 per cabinet), whichever keeps more; COURTIER_HUB_BLOB_GRACE_HOURS (24).
`;
