import { useEffect, useId, useRef, useState } from 'react';
import {
  IMPORT_DEFAULT_TYPES,
  IMPORT_MAX_BYTES,
  importClients,
  previewClientImport,
  type ImportColumn,
} from '../../../../shared/console-import.js';
import { call } from '../../api.js';
import { errorSentence } from '../../messages.js';
import type { PageProps } from '../../slices/types.js';
import { IMPORT_STRINGS, type ImportStrings } from './importStrings.js';
import { AlreadyThere, ColumnsTable, PreviewTable, RefusedTable, type Imported, type Preview } from './ImportTables.js';
import { RECORDS_STRINGS } from './strings.js';

type DefaultType = (typeof IMPORT_DEFAULT_TYPES)[number];
interface Picked {
  file_name: string;
  content_base64: string;
}

/** The file's bytes in base64, a slice at a time (a whole file in one call would overflow the stack). */
function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Moves the focus to an element once it is shown (a result, an error), so that a screen reader reads it. */
function useFocusOn(target: unknown) {
  const ref = useRef<HTMLElement | null>(null);
  useEffect(() => {
    if (target) ref.current?.focus();
  }, [target]);
  return ref;
}

/**
 * /console/clients/import: a file (CSV or .xlsx), its columns mapped to a client's fields, a
 * preview with every row's problems, then the import. The server reads and checks the file; the
 * page words the problems from their codes in the console's language.
 */
export function ImportClientsPage({ lang }: PageProps) {
  const s = IMPORT_STRINGS[lang];
  const records = RECORDS_STRINGS[lang];
  const id = useId();
  const [file, setFile] = useState<Picked | null>(null);
  const [columns, setColumns] = useState<ImportColumn[] | undefined>(undefined);
  const [defaultType, setDefaultType] = useState<DefaultType>('auto');
  const [preview, setPreview] = useState<Preview | null>(null);
  const [result, setResult] = useState<Imported | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // Once per file: the columns' heading when its first preview shows, not at every change of a column.
  const previewRef = useFocusOn(preview ? file : null);
  const resultRef = useFocusOn(result);
  const errorRef = useFocusOn(error);

  async function read(picked: Picked, chosen: ImportColumn[] | undefined, type: DefaultType) {
    setBusy(true);
    const answer = await call(previewClientImport, { body: { ...picked, columns: chosen, default_type: type } });
    setBusy(false);
    if (!answer.ok) return setError(answer.error.message);
    setError(null);
    setPreview(answer.data);
    setColumns(answer.data.columns.map((column) => column.field));
  }

  async function pick(input: HTMLInputElement) {
    const chosen = input.files?.[0];
    setResult(null);
    setPreview(null);
    setColumns(undefined);
    if (!chosen) return setFile(null);
    if (chosen.size > IMPORT_MAX_BYTES) return setError(errorSentence({ error: 'import_file_too_large', message: '' }, lang));
    const picked = { file_name: chosen.name, content_base64: toBase64(new Uint8Array(await chosen.arrayBuffer())) };
    setFile(picked);
    await read(picked, undefined, defaultType);
  }

  /** A field chosen for one column leaves the column that had it. */
  function choose(index: number, field: ImportColumn) {
    if (!file || !columns) return;
    const next = columns.map((current, i) => (i === index ? field : current === field ? 'ignore' : current));
    void read(file, next, defaultType);
  }

  async function run() {
    if (!file) return;
    setBusy(true);
    const answer = await call(importClients, { body: { ...file, columns, default_type: defaultType } });
    setBusy(false);
    if (!answer.ok) return setError(answer.error.message);
    setError(null);
    setPreview(null);
    setResult(answer.data);
  }

  return (
    <section className="records import">
      <p>
        <a className="back-link" href="/console/clients">{`← ${records.allClients}`}</a>
      </p>
      <h1>{s.title}</h1>
      <p className="muted">{s.intro}</p>
      {!result && (
        <div className="card records-panel">
          <h2>{s.fileStep}</h2>
          <div className="field">
            <label htmlFor={`${id}-file`}>{s.fileLabel}</label>
            <input
              id={`${id}-file`}
              type="file"
              accept=".csv,.txt,.tsv,.xlsx,text/csv,text/plain,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
              aria-describedby={`${id}-file-hint`}
              disabled={busy}
              onChange={(e) => void pick(e.currentTarget)}
            />
            <span id={`${id}-file-hint`} className="muted small">
              {s.fileHint}
            </span>
          </div>
          {busy && !preview && <p role="status">{s.reading}</p>}
        </div>
      )}
      <div aria-live="assertive">
        {error && (
          <p className="alert" ref={(node) => void (errorRef.current = node)} tabIndex={-1}>
            {error}
          </p>
        )}
      </div>
      {preview && columns && (
        <PreviewSteps
          s={s}
          lang={lang}
          preview={preview}
          columns={columns}
          defaultType={defaultType}
          busy={busy}
          headingRef={(node) => void (previewRef.current = node)}
          onColumn={choose}
          onDefaultType={(type) => {
            setDefaultType(type);
            if (file) void read(file, columns, type);
          }}
          onImport={() => void run()}
        />
      )}
      {result && (
        <div className="card records-panel">
          <h2 ref={(node) => void (resultRef.current = node)} tabIndex={-1}>
            {s.doneTitle}
          </h2>
          <p role="status">{s.done(result.created, result.counts.already_there, result.counts.refused)}</p>
          <RefusedTable s={s} lang={lang} refused={result.refused} total={result.counts.refused} />
          <AlreadyThere s={s} lang={lang} items={result.already_there} total={result.counts.already_there} />
          <div className="actions">
            <a className="button button-primary" href="/console/clients">
              {s.seeClients}
            </a>
            <button
              type="button"
              className="button"
              onClick={() => {
                setResult(null);
                setFile(null);
              }}
            >
              {s.another}
            </button>
          </div>
        </div>
      )}
    </section>
  );
}

function PreviewSteps(props: {
  s: ImportStrings;
  lang: PageProps['lang'];
  preview: Preview;
  columns: readonly ImportColumn[];
  defaultType: DefaultType;
  busy: boolean;
  headingRef: (node: HTMLHeadingElement | null) => void;
  onColumn: (index: number, field: ImportColumn) => void;
  onDefaultType: (type: DefaultType) => void;
  onImport: () => void;
}) {
  const { s, lang, preview, columns, busy } = props;
  const id = useId();
  const { counts } = preview;
  const { encoding, separator } = preview.file;
  const format =
    preview.file.format === 'xlsx'
      ? 'Excel (.xlsx)'
      : `CSV (${[encoding, separator && s.separators[separator]].filter((part) => part).join(', ')})`;
  return (
    <>
      <div className="card records-panel">
        <h2 ref={props.headingRef} tabIndex={-1}>
          {s.columnsStep}
        </h2>
        <p className="muted">{`${s.readAs(format, counts.rows)} ${s.columnsIntro}`}</p>
        <ColumnsTable s={s} columns={preview.columns} chosen={columns} disabled={busy} onChange={props.onColumn} />
        <div className="field import-default-type">
          <label htmlFor={`${id}-type`}>{s.defaultType}</label>
          <select
            id={`${id}-type`}
            value={props.defaultType}
            disabled={busy}
            onChange={(e) => props.onDefaultType(e.target.value as DefaultType)}
          >
            {IMPORT_DEFAULT_TYPES.map((type) => (
              <option key={type} value={type}>
                {s.defaultTypes[type]}
              </option>
            ))}
          </select>
        </div>
      </div>
      <div className="card records-panel">
        <h2>{s.previewStep}</h2>
        <p role="status" className="import-counts">
          {s.counts(counts.valid, counts.already_there, counts.refused)}
        </p>
        <PreviewTable s={s} lang={lang} preview={preview.preview} />
        <RefusedTable s={s} lang={lang} refused={preview.refused} total={counts.refused} />
        <AlreadyThere s={s} lang={lang} items={preview.already_there} total={counts.already_there} />
        <div className="actions">
          {counts.valid === 0 ? (
            <p className="muted">{s.nothingToImport}</p>
          ) : (
            <button type="button" className="button button-primary" disabled={busy} aria-busy={busy} onClick={props.onImport}>
              {busy ? s.importing : s.importButton(counts.valid)}
            </button>
          )}
        </div>
      </div>
    </>
  );
}
