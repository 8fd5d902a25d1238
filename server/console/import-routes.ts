import type { FastifyInstance } from 'fastify';
import { IMPORT_BODY_LIMIT, importClients, previewClientImport } from '../../shared/console-import.js';
import { recordAudit, requestActor } from '../audit/service.js';
import * as clientImport from '../crm/import/service.js';
import type { Deps } from '../deps.js';
import { registerEndpoint } from '../platform/http/endpoint.js';
import { consoleUser } from './guard.js';

/**
 * Importing clients from a file, for any user of the cabinet (brokers create clients too): the
 * preview writes nothing, the import creates the new valid rows at once and is audited with its
 * counts (never a client's data).
 */
export async function importConsoleRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  // The file travels in base64 in the JSON body, larger than the app's limit for other bodies.
  const options = { bodyLimit: IMPORT_BODY_LIMIT };

  registerEndpoint(
    app,
    previewClientImport,
    (request) => clientImport.previewImport(deps, consoleUser(request).cabinetId, request.body),
    options,
  );
  registerEndpoint(
    app,
    importClients,
    (request) => {
      const cabinetId = consoleUser(request).cabinetId;
      const result = clientImport.importClients(deps, cabinetId, request.body);
      recordAudit(deps, {
        cabinetId,
        action: 'clients.imported',
        actor: requestActor(request),
        target: null,
        details: {
          created: result.created,
          already_there: result.counts.already_there,
          refused: result.counts.refused,
          format: result.file.format,
        },
      });
      return result;
    },
    options,
  );
}
