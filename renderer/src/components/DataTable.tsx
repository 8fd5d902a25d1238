import type { Key, ReactNode } from 'react';

/** A table that scrolls sideways on a narrow screen instead of overflowing the page. */
function TableFrame({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="admin-table-frame" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

export interface Column {
  header: ReactNode;
  className?: string;
}

/**
 * A table of items, one row each: `row` gives the cells of an item (its header cell, data, an action).
 * With `empty`, no items show that line instead of an empty table.
 */
export function DataTable<T>(props: {
  label: string;
  columns: readonly Column[];
  items: readonly T[];
  rowKey: (item: T) => Key;
  row: (item: T) => ReactNode;
  empty?: ReactNode;
}) {
  const { label, columns, items, rowKey, row, empty } = props;
  if (items.length === 0 && empty !== undefined) return <p className="muted">{empty}</p>;
  return (
    <TableFrame label={label}>
      <table className="admin-table">
        <thead>
          <tr>
            {columns.map((column, index) => (
              <th key={index} scope="col" className={column.className}>
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <tr key={rowKey(item)}>{row(item)}</tr>
          ))}
        </tbody>
      </table>
    </TableFrame>
  );
}
