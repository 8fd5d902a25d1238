import type { ReactNode } from 'react';
import type { Strings } from '../i18n.js';
import { Alert, Loading } from '../Layout.js';

/** Something fetched from the server: still loading, failed with a message, or there. */
export type Resource<T> = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; data: T };

/** Shows a resource: the loading line, its error, or (once there) what `children` makes of its data. */
export function ResourceView<T>({ resource, t, children }: { resource: Resource<T>; t: Strings; children: (data: T) => ReactNode }) {
  if (resource.kind === 'loading') return <Loading t={t} />;
  if (resource.kind === 'error') return <Alert>{resource.message}</Alert>;
  return <>{children(resource.data)}</>;
}
