import type { z } from 'zod';
import { IMPORT_FIELDS, type importClients, type ImportColumn, type previewClientImport } from '../../../../shared/console-import.js';
import { DataTable } from '../../components/DataTable.js';
import { formatDay, formatNumber } from '../../format.js';
import type { Lang } from '../../i18n.js';
import { describeIssue, type IssueContext } from '../../issues.js';
import type { ImportStrings } from './importStrings.js';

/** The import page's tables: the columns and their fields, the first clients, the rows refused and those already there. */

export type Preview = z.output<NonNullable<(typeof previewClientImport.responses)[200]['schema']>>;
export type Imported = z.output<NonNullable<(typeof importClients.responses)[200]['schema']>>;
type Refused = Preview['refused'][number];
type Problem = Refused['problems'][number];

/** A column as the broker knows it: its header, or its place when it has none. */
function columnName(header: string, index: number, s: ImportStrings): string {
  return header || s.noHeader(index + 1);
}

export function ColumnsTable(props: {
  s: ImportStrings;
  columns: Preview['columns'];
  chosen: readonly ImportColumn[];
  disabled: boolean;
  onChange: (index: number, field: ImportColumn) => void;
}) {
  const { s, columns, chosen, disabled, onChange } = props;
  return (
    <DataTable
      label={s.columnsTable}
      columns={[{ header: s.column }, { header: s.field }]}
      items={columns.map((column, index) => ({ ...column, index }))}
      rowKey={(column) => column.index}
      row={(column) => (
        <>
          <th scope="row">
            {columnName(column.header, column.index, s)}
            <span className="import-samples muted small">{s.examples(column.samples.join(' · ') || '—')}</span>
          </th>
          <td>
            <select
              aria-label={s.fieldFor(columnName(column.header, column.index, s))}
              value={chosen[column.index] ?? 'ignore'}
              disabled={disabled}
              onChange={(e) => onChange(column.index, e.target.value as ImportColumn)}
            >
              <option value="ignore">{s.ignore}</option>
              {IMPORT_FIELDS.map((field) => (
                <option key={field} value={field}>
                  {s.fields[field]}
                </option>
              ))}
            </select>
          </td>
        </>
      )}
    />
  );
}

/** A person by first and last name; a company by its name, then its contact's. */
function nameOf(client: Preview['preview'][number]['client']): string {
  const person = [client.first_name, client.last_name].filter((part) => part).join(' ');
  return client.company_name ? [client.company_name, person].filter((part) => part).join(' · ') : person;
}

export function PreviewTable({ s, lang, preview }: { s: ImportStrings; lang: Lang; preview: Preview['preview'] }) {
  if (preview.length === 0) return null;
  return (
    <>
      <p>{s.previewIntro(preview.length)}</p>
      <DataTable
        label={s.previewTable}
        columns={[
          { header: s.row },
          { header: s.fields.type },
          { header: s.name },
          { header: s.contact },
          { header: s.place },
          { header: s.fields.birth_date },
        ]}
        items={preview}
        rowKey={(item) => item.row}
        row={({ row, client }) => (
          <>
            <th scope="row">{row}</th>
            <td>{client.type === 'person' ? s.defaultTypes.person : s.defaultTypes.company}</td>
            <td>{nameOf(client)}</td>
            <td>{[client.email, client.phone, client.siret].filter((part) => part).join(' · ') || '—'}</td>
            <td>{client.address ? `${client.address.postcode} ${client.address.city}` : '—'}</td>
            <td>{client.birth_date ? formatDay(lang, client.birth_date) : '—'}</td>
          </>
        )}
      />
    </>
  );
}

/** What the page knows of a field to word its problem: the type's choices, an example of a right value. */
function contextOf(field: Problem['field'], s: ImportStrings): IssueContext {
  const examples: Partial<Record<Problem['field'], string>> = {
    siret: '732 829 320 00074',
    postcode: '69003',
    phone: '06 12 34 56 78',
    country: 'FR',
  };
  if (field === 'type') return { valueLabels: { person: s.defaultTypes.person, company: s.defaultTypes.company } };
  return { example: examples[field] };
}

export function RefusedTable({ s, lang, refused, total }: { s: ImportStrings; lang: Lang; refused: readonly Refused[]; total: number }) {
  if (total === 0) return null;
  const lines = refused.flatMap((item) => item.problems.map((problem, index) => ({ row: item.row, problem, index })));
  return (
    <section className="import-refused" aria-labelledby="import-refused-title">
      <h3 id="import-refused-title">{`${s.refusedTitle} (${formatNumber(lang, total)})`}</h3>
      <p className="muted">{s.refusedIntro}</p>
      {refused.length < total && <p className="muted small">{s.listedOnly(refused.length, total)}</p>}
      <DataTable
        label={s.refusedTable}
        columns={[{ header: s.row }, { header: s.column }, { header: s.problem }]}
        items={lines}
        rowKey={(line) => `${line.row}-${line.index}`}
        row={({ row, problem }) => (
          <>
            <th scope="row">{row}</th>
            <td>{s.fields[problem.field]}</td>
            <td>{describeIssue(problem.issue, lang, contextOf(problem.field, s))}</td>
          </>
        )}
      />
    </section>
  );
}

export function AlreadyThere({ s, lang, items, total }: { s: ImportStrings; lang: Lang; items: Preview['already_there']; total: number }) {
  if (total === 0) return null;
  return (
    <details className="import-already">
      <summary>{`${s.alreadyTitle} (${formatNumber(lang, total)})`}</summary>
      <ul>
        {items.map((item) => (
          <li key={item.row}>
            {s.rowOf(String(item.row))}
            {item.existing === 'cabinet'
              ? s.alreadyInCabinet(s.matches[item.match])
              : s.alreadyInFile(s.matches[item.match], String(item.first_row ?? ''))}
          </li>
        ))}
      </ul>
    </details>
  );
}
