import { useState, type FormEvent } from 'react';
import { createUser, listUsers, updateUser, type CabinetUser, type UserRole } from '../../../../shared/console-admin.js';
import { call } from '../../api.js';
import { DataTable } from '../../components/DataTable.js';
import { SelectField, TextField } from '../../components/Field.js';
import { ResourceView } from '../../components/Resource.js';
import { CONSOLE_HOME } from '../../../../shared/console-pages.js';
import { go } from '../../navigation.js';
import { Alert } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { Notice, errorMessage, useResource } from './common.js';
import { ADMIN_STRINGS, formatDateTime } from './strings.js';

/** /console/users (admins): the cabinet's accounts, their roles, and a form to add one. */
export function UsersPage({ lang, t, session }: PageProps) {
  const s = ADMIN_STRINGS[lang];
  const [users, reload] = useResource(listUsers, lang);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<UserRole>('broker');
  const [formError, setFormError] = useState<string | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const roleName = (r: UserRole) => (r === 'admin' ? s.roleAdmin : s.roleBroker);

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    if (email.trim() === '' || password === '') return setFormError(s.userFillAll);
    if (password.length < 10) return setFormError(s.passwordTooShort);
    setBusy(true);
    setFormError(null);
    setNotice(null);
    const result = await call(createUser, { body: { email: email.trim(), password, role } });
    setBusy(false);
    if (!result.ok) return setFormError(errorMessage(result, lang));
    setNotice(s.userCreated(result.data.email));
    setEmail('');
    setPassword('');
    setRole('broker');
    await reload();
  }

  async function changeRole(user: CabinetUser, next: UserRole) {
    setBusy(true);
    setNotice(null);
    const result = await call(updateUser, { params: { id: user.user_id }, body: { role: next } });
    setBusy(false);
    if (!result.ok) return setListError(errorMessage(result, lang));
    // Someone who just gave up their own admin role has nothing left to do on this page.
    if (user.user_id === session.user.id && next !== 'admin') return go(CONSOLE_HOME);
    setListError(null);
    setNotice(s.roleChanged(user.email));
    await reload();
  }

  return (
    <div className="admin-page">
      <h1>{s.usersTitle}</h1>
      <p className="muted">{s.usersIntro}</p>
      <section className="card" aria-labelledby="users-list-title">
        <h2 id="users-list-title">{s.usersTitle}</h2>
        {notice !== null && <Notice>{notice}</Notice>}
        {listError !== null && <Alert>{listError}</Alert>}
        <ResourceView resource={users} t={t}>
          {(list) => {
            // The server refuses it too (409 last_admin); here the button says why it cannot be pressed.
            const oneAdmin = list.filter((u) => u.role === 'admin').length === 1;
            return (
              <>
                <DataTable
                  label={s.usersTitle}
                  columns={[{ header: s.email }, { header: s.role }, { header: s.createdOn }, { header: s.actions }]}
                  items={list}
                  rowKey={(user) => user.user_id}
                  row={(user) => {
                    const next: UserRole = user.role === 'admin' ? 'broker' : 'admin';
                    const label = next === 'admin' ? s.makeAdmin : s.makeBroker;
                    const lastAdmin = user.role === 'admin' && oneAdmin;
                    return (
                      <>
                        <th scope="row">
                          {user.email} {user.user_id === session.user.id && <span className="muted">{s.you}</span>}
                        </th>
                        <td>{roleName(user.role)}</td>
                        <td>{formatDateTime(user.created_at, lang)}</td>
                        <td>
                          <button
                            type="button"
                            className="button button-small"
                            disabled={busy || lastAdmin}
                            aria-label={`${label}: ${user.email}`}
                            aria-describedby={lastAdmin ? 'last-admin-hint' : undefined}
                            onClick={() => void changeRole(user, next)}
                          >
                            {label}
                          </button>
                        </td>
                      </>
                    );
                  }}
                />
                {oneAdmin && (
                  <p id="last-admin-hint" className="muted small">
                    {s.lastAdminHint}
                  </p>
                )}
              </>
            );
          }}
        </ResourceView>
      </section>

      <section className="card" aria-labelledby="add-user-title">
        <h2 id="add-user-title">{s.addUser}</h2>
        <form className="form" onSubmit={(event) => void create(event)} noValidate>
          <div className="admin-grid admin-grid-3">
            <TextField id="user-email" label={s.email} type="email" autoComplete="off" autoCapitalize="none" spellCheck={false} value={email} onValue={setEmail} />
            <TextField id="user-password" label={s.password} hint={s.passwordHint} type="password" autoComplete="new-password" value={password} onValue={setPassword} />
            <SelectField
              id="user-role"
              label={s.role}
              value={role}
              options={[
                { value: 'broker', label: s.roleBroker },
                { value: 'admin', label: s.roleAdmin },
              ]}
              onValue={setRole}
            />
          </div>
          {formError !== null && <Alert>{formError}</Alert>}
          <div>
            <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
              {s.createUser}
            </button>
          </div>
        </form>
      </section>
    </div>
  );
}
