import { readKillSwitch, setKillSwitch } from '../automation/guards.js';
import { getWallet, grantCredits } from '../wallet/service.js';
import { ConfigError, loadConfig } from '../config.js';
import { ApiError, DatabaseVersionError, UsageError } from '../errors.js';
import { packageVersion } from '../paths.js';
import {
  changeLlmDataSharing,
  changeCabinetIdentity,
  changeUnattendedHumanSteps,
  getCabinetSettings,
  initCabinet,
  type CabinetSettings,
} from '../tenancy/service.js';
import { cabinetAddressSchema, oriasSchema } from '../../shared/tenancy.js';
import { HUB_USAGE } from '../hub/usage.js';
import { serve } from './serve.js';
import { parse, print, readPassword, ReportedFailure, required, withDeps, type CliIo } from './common.js';
import { runSync } from './sync.js';
import { runAudit, runLan } from './lan.js';
import { runUsers } from './users.js';
import { runKeys } from './keys.js';
import { runInsurers } from './insurers.js';
import { AdapterRefused } from '../insurers/service.js';
import { CLI_ACTOR, recordAudit } from '../audit/service.js';
import { HubRefusal, HubUnreachable } from '../sync/hub-client.js';

export type { CliIo } from './common.js';

const USAGE = `Usage: courtier <command> [options]

Commands:
  serve [--host 127.0.0.1] [--port 8787] [--data-dir DIR]
        Run the service until SIGINT/SIGTERM.
  init --cabinet NAME --email E (--password P | --password-stdin) [--json]
        Create a cabinet and its admin user (adds another cabinet on a data dir that has some).
  keys create --cabinet ID --name N --env prod|test --scopes s1,s2 [--expires-at ISO] [--ip-allowlist cidr,...] [--json]
  keys list --cabinet ID [--json]
  keys revoke --key-id ID [--json]
  settings get --cabinet ID [--json]
  settings set --cabinet ID [--llm-data-sharing on|off] [--unattended-human-steps wait|stop] [--json]
  insurers list [--json]
        The insurers this install prices with: built in or installed, version, adapter API, signer.
  insurers new CODE [--dir DIR] [--json]
        A new adapter package (manifest, a product, page objects, a recorded session) that passes
        courtier insurers test at once.
  insurers install PATH_OR_TARBALL [--json]
  insurers remove CODE [--json]
  insurers reload [--json]
        Install an insurer adapter package (a folder or an npm-pack .tgz), remove one, or make the
        running service read them again (it does by itself after install and remove).
  insurers try CODE --product P --data FILE [--cabinet ID] [--headed] [--json]
        Run an insurer's robot once against its portal (no job, no credits): progress, the result,
        its PDF and a trace to open with npx playwright show-trace. Codes the portal asks for are
        typed at the terminal, or read line by line from standard input.
  insurers record CODE --product P --data FILE --out DIR [--cabinet ID] [--json]
        As try, and saves the run as a cassette (DIR/<product>.json): the portal's answers in order,
        secrets and codes replaced by placeholders.
  insurers test PATH_OR_CODE [--json]
        Replays a package's cassettes (cassettes/*.json) offline in a browser and checks each result.
  insurers sign PATH --key KEY_FILE [--json]
        Sign an adapter package with an ed25519 private key (PEM, as openssl genpkey -algorithm ed25519 writes it).
  insurers set-credentials --cabinet ID --compagnie CODE --login L --password-stdin [--extra k=v,...] [--json]
  credits grant --cabinet ID --amount N [--note TEXT] [--json]
  credits balance --cabinet ID [--json]
  robots disable --reason TEXT [--json]
  robots enable [--json]
  robots status [--json]
  sync connect --cabinet ID --hub URL --code CODE [--name DEVICE] [--json]
        Register this install's cabinet on a hub and upload everything it holds.
  sync join --hub URL --code CODE --email E --password-stdin [--name DEVICE] [--json]
        Create a cabinet from the hub on this install (or restore a lost one) and download everything.
  sync status --cabinet ID [--json]
  sync conflicts --cabinet ID [--limit N] [--json]
  sync conflicts retry --cabinet ID [--seq N | --refused STAMP|all] [--json]
  sync conflicts discard --cabinet ID (--seq N | --refused STAMP) [--json]
        Changes pulled from other installs that this one set aside instead of applying: list them,
        fetch and apply them again (after an update), or forget one. With --refused: changes made
        here that the hub refused, sent again (after the hub's update) or forgotten.
  sync pause|resume|disconnect --cabinet ID [--json]
  lan enable [--address IP]... [--port 8443] [--name DNS_NAME]... [--cert FILE --key FILE] [--new-ca] [--json]
        Share this install with the office over HTTPS (its own CA); applied by the running service without a restart.
  lan disable [--json]
  lan status [--json]
  lan ca [--out FILE]
        The office CA certificate (PEM) to trust on brokers' machines.
  audit list --cabinet ID [--since ISO] [--action ACTION] [--limit N] [--json]
  audit verify [--json]
        Checks the audit log's chain of seals: exit 1, naming the entry, if one was changed, removed or inserted.
  users reset-password --email E [--cabinet ID] [--json]
        A temporary password for a locked-out account (shown once); it must be changed at the next sign-in.

Every command takes --data-dir DIR (or COURTIER_DATA_DIR); --json prints exactly one JSON object.

Sync hub (a hosted process on PostgreSQL, with no data dir):
${HUB_USAGE}`;

async function runCommand(argv: string[], io: CliIo): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      const v = parse(rest, { host: { type: 'string' }, port: { type: 'string' } });
      const config = loadConfig({ host: v.host, port: v.port, dataDir: v['data-dir'] }, io.env);
      await serve(config, { insurers: io.insurers, beforeListen: io.beforeListen, env: io.env });
      return;
    }
    case 'init': {
      const v = parse(rest, {
        cabinet: { type: 'string' },
        email: { type: 'string' },
        password: { type: 'string' },
        'password-stdin': { type: 'boolean', default: false },
      });
      const cabinet = required(v, 'cabinet');
      const email = required(v, 'email');
      const password = await readPassword(io, v);
      const result = await withDeps(v['data-dir'], io, (deps) => initCabinet(deps, { cabinet, email, password }));
      print(
        io,
        v.json,
        result,
        `Cabinet "${cabinet}" created.\n  cabinet_id: ${result.cabinet_id}\n  admin user: ${email} (${result.user_id})`,
      );
      return;
    }
    case 'keys':
      return runKeys(rest, io);
    case 'settings':
      return runSettings(rest, io);
    case 'insurers':
      return runInsurers(rest, io);
    case 'credits':
      return runCredits(rest, io);
    case 'sync':
      return runSync(rest, io);
    case 'robots':
      return runRobots(rest, io);
    case 'lan':
      return runLan(rest, io);
    case 'audit':
      return runAudit(rest, io);
    case 'users':
      return runUsers(rest, io);
    case 'hub':
      // Loaded on demand: the agent's commands never load the PostgreSQL driver.
      return (await import('../hub/cli.js')).runHub(rest, io);
    case 'version':
    case '--version':
      io.stdout(`${packageVersion()}\n`);
      return;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.stdout(USAGE);
      return;
    default:
      throw new UsageError(`unknown command "${command}"; run courtier --help`);
  }
}

async function runSettings(argv: string[], io: CliIo): Promise<void> {
  const [sub, ...rest] = argv;
  const v = parse(rest, {
    cabinet: { type: 'string' },
    'llm-data-sharing': { type: 'string' },
    'unattended-human-steps': { type: 'string' },
    orias: { type: 'string' },
    address: { type: 'string' },
  });
  const cabinet = required(v, 'cabinet');
  const describe = (settings: CabinetSettings) =>
    `llm_data_sharing: ${settings.llm_data_sharing ? 'on' : 'off'}\nunattended_human_steps: ${settings.unattended_human_steps}\n` +
    `orias: ${settings.orias ?? '(not set)'}\naddress: ${settings.address ?? '(not set)'}`;
  if (sub === 'get') {
    const settings = await withDeps(v['data-dir'], io, (deps) => getCabinetSettings(deps, cabinet));
    print(io, v.json, settings, describe(settings));
    return;
  }
  if (sub !== 'set') throw new UsageError(`unknown settings command "${sub ?? ''}"; use get or set`);
  const sharing = v['llm-data-sharing'];
  const unattended = v['unattended-human-steps'];
  const identity = {
    ...(v.orias === undefined ? {} : { orias: v.orias === '' ? null : v.orias }),
    ...(v.address === undefined ? {} : { address: v.address === '' ? null : v.address }),
  };
  if (sharing === undefined && unattended === undefined && Object.keys(identity).length === 0)
    throw new UsageError('give --llm-data-sharing, --unattended-human-steps, --orias or --address');
  if (identity.orias && !oriasSchema.safeParse(identity.orias).success)
    throw new UsageError('--orias takes the 8 digits of the ORIAS registration ("" clears it)');
  if (identity.address && !cabinetAddressSchema.safeParse(identity.address).success)
    throw new UsageError('--address takes the postal address, 5 to 300 characters ("" clears it)');
  if (sharing !== undefined && sharing !== 'on' && sharing !== 'off') throw new UsageError('--llm-data-sharing takes on or off');
  if (unattended !== undefined && unattended !== 'wait' && unattended !== 'stop')
    throw new UsageError('--unattended-human-steps takes wait or stop');
  const settings = await withDeps(v['data-dir'], io, (deps) => {
    if (sharing !== undefined) changeLlmDataSharing(deps, cabinet, sharing === 'on', CLI_ACTOR);
    if (Object.keys(identity).length > 0) changeCabinetIdentity(deps, cabinet, identity, CLI_ACTOR);
    return unattended === undefined ? getCabinetSettings(deps, cabinet) : changeUnattendedHumanSteps(deps, cabinet, unattended, CLI_ACTOR);
  });
  const sharingLine = settings.llm_data_sharing
    ? 'LLM data sharing is on: webhook payloads and MCP results carry personal data in clear.'
    : 'LLM data sharing is off: personal data in webhook payloads and MCP results is masked.';
  const unattendedLine =
    settings.unattended_human_steps === 'stop'
      ? "An integration's job stops before its insurer's portal asks a person (human_required, refunded)."
      : "An integration's job waits for a person when its insurer's portal asks for one.";
  const identityLine = `ORIAS ${settings.orias ?? '(not set)'}; address ${settings.address ?? '(not set)'}: printed on advice documents.`;
  print(io, v.json, settings, `${sharingLine}\n${unattendedLine}\n${identityLine}`);
}

async function runCredits(argv: string[], io: CliIo): Promise<void> {
  const [sub, ...rest] = argv;
  const v = parse(rest, { cabinet: { type: 'string' }, amount: { type: 'string' }, note: { type: 'string' } });
  const cabinet = required(v, 'cabinet');
  if (sub === 'balance') {
    const wallet = await withDeps(v['data-dir'], io, (deps) => getWallet(deps, cabinet));
    const shared = wallet.synced
      ? ` (the cabinet's one wallet, kept by its hub; ${wallet.unconfirmed_credits} spent here not yet acknowledged by it)`
      : '';
    print(
      io,
      v.json,
      { cabinet_id: cabinet, balance: wallet.balance, synced: wallet.synced, unconfirmed_credits: wallet.unconfirmed_credits },
      `${wallet.balance} credits${shared}`,
    );
    return;
  }
  if (sub !== 'grant') throw new UsageError(`unknown credits command "${sub ?? ''}"; use grant or balance`);
  const amount = required(v, 'amount');
  if (!/^\d+$/.test(amount) || Number(amount) <= 0) throw new UsageError('--amount must be a whole number of credits, 1 or more');
  const balance = await withDeps(v['data-dir'], io, (deps) => {
    const after = grantCredits(deps, cabinet, Number(amount), v.note);
    recordAudit(deps, {
      cabinetId: cabinet,
      action: 'credits.granted',
      actor: CLI_ACTOR,
      details: { amount: Number(amount), balance: after, ...(v.note ? { note: v.note } : {}) },
    });
    return after;
  });
  print(io, v.json, { cabinet_id: cabinet, granted: Number(amount), balance }, `Granted ${amount} credits; balance ${balance}.`);
}

async function runRobots(argv: string[], io: CliIo): Promise<void> {
  const [sub, ...rest] = argv;
  const v = parse(rest, { reason: { type: 'string' } });
  if (sub === 'disable') {
    const reason = required(v, 'reason');
    await withDeps(v['data-dir'], io, (deps) => {
      setKillSwitch(deps, reason);
      recordAudit(deps, { cabinetId: null, action: 'robots.paused', actor: CLI_ACTOR, details: { reason, install_wide: true } });
    });
    print(io, v.json, { robots_enabled: false, reason }, `Robots disabled: new tarifications answer 503 until \`courtier robots enable\`.`);
    return;
  }
  if (sub === 'enable') {
    await withDeps(v['data-dir'], io, (deps) => {
      setKillSwitch(deps, null);
      recordAudit(deps, { cabinetId: null, action: 'robots.resumed', actor: CLI_ACTOR, details: { install_wide: true } });
    });
    print(io, v.json, { robots_enabled: true }, 'Robots enabled.');
    return;
  }
  if (sub === 'status') {
    const killSwitch = await withDeps(v['data-dir'], io, (deps) => readKillSwitch(deps));
    print(
      io,
      v.json,
      { robots_enabled: killSwitch === null, kill_switch: killSwitch },
      killSwitch ? `Robots disabled since ${killSwitch.since}: ${killSwitch.reason}` : 'Robots enabled.',
    );
    return;
  }
  throw new UsageError(`unknown robots command "${sub ?? ''}"; use disable, enable or status`);
}

/** Runs one CLI invocation; returns the exit code (0 done, 1 failed, 2 wrong usage). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    await runCommand(argv, io);
    return 0;
  } catch (err) {
    if (err instanceof ReportedFailure) return 1;
    const json = argv.includes('--json');
    const [code, exit] =
      err instanceof UsageError || err instanceof ConfigError
        ? ['usage', 2]
        : err instanceof ApiError || err instanceof HubRefusal || err instanceof AdapterRefused
          ? [err.code, 1]
          : err instanceof HubUnreachable
            ? ['hub_unreachable', 1]
            : err instanceof DatabaseVersionError
              ? ['database_version', 1]
              : ['error', 1];
    // The database refused: the folder is the command line's to choose.
    const message = `${(err as Error).message}${err instanceof DatabaseVersionError ? ' (--data-dir or COURTIER_DATA_DIR chooses the data folder)' : ''}`;
    if (json) io.stdout(`${JSON.stringify({ error: code, message })}\n`);
    io.stderr(`courtier: ${message}${exit === 2 ? ' (see courtier --help)' : ''}\n`);
    return exit;
  }
}
