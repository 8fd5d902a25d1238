import { useState, type FormEvent } from 'react';
import { removeUser, resetUserPassword, setUserDisabled, type PasswordReset } from '../../../../shared/console-account.js';
import { createUser, listUsers, updateUser, type CabinetUser, type UserRole } from '../../../../shared/console-admin.js';
import { validationIssueSchema } from '../../../../shared/errors.js';
import { call, type ApiFailure } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import { DataTable } from '../../components/DataTable.js';
import { SelectField, TextField } from '../../components/Field.js';
import { ResourceView } from '../../components/Resource.js';
import { CONSOLE_HOME } from '../../../../shared/console-pages.js';
import type { Lang } from '../../i18n.js';
import { describeIssue } from '../../issues.js';
import { go } from '../../navigation.js';
import { Alert } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { Notice, ShownOnce, errorMessage, useResource } from './common.js';
import { ADMIN_STRINGS, formatDateTime, type AdminStrings } from './strings.js';

function statusOf(user: CabinetUser, s: AdminStrings): string {
  if (user.disabled_at !== null) return s.statusDisabled;
  if (!user.has_password) return s.statusNoPassword;
  return user.must_change_password ? s.statusMustChange : s.statusActive;
}

/** What the person's line says besides its status: changes made on another computer of the cabinet. */
function notesOf(user: CabinetUser, s: AdminStrings): string[] {
  return [
    ...(!user.has_password && user.disabled_at === null ? [s.noPasswordHint] : []),
    ...(user.awaiting_confirmation.includes('admin_role') ? [s.awaitingAdmin] : []),
    ...(user.awaiting_confirmation.includes('enabling') ? [s.awaitingEnabling] : []),
  ];
}

/**
 * /console/users (admins): the cabinet's accounts, their roles and status, a form to add one; per
 * account a role change, a password reset (the temporary password shown once), disable or enable,
 * and removal, each destructive one confirmed in a dialog that says what happens.
 */
type UserField = 'email' | 'password';

/** The problems a validation_error names, by field of the add-user form, in words. */
function userFieldErrors(details: unknown, lang: Lang): Partial<Record<UserField, string>> {
  const out: Partial<Record<UserField, string>> = {};
  const issues = validationIssueSchema.array().safeParse(details);
  if (!issues.success) return out;
  for (const issue of issues.data) {
    const field = issue.path.split('.')[1];
    if ((field === 'email' || field === 'password') && out[field] === undefined) out[field] = describeIssue(issue, lang);
  }
  return out;
}

export function UsersPage({ lang, t, session }: PageProps) {
  const s = ADMIN_STRINGS[lang];
  const [users, reload] = useResource(listUsers, lang);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<UserRole>('broker');
  const [formError, setFormError] = useState<string | null>(null);
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<UserField, string>>>({});
  const [listError, setListError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [reset, setReset] = useState<PasswordReset | null>(null);
  const roleName = (r: UserRole) => (r === 'admin' ? s.roleAdmin : s.roleBroker);

  /** After an action on a row: its error, or its notice and a fresh list. */
  async function settle(result: { ok: true } | ApiFailure, success: string) {
    if (!result.ok) return setListError(errorMessage(result, lang));
    setListError(null);
    setNotice(success);
    await reload();
  }

  const resetting = useConfirmation(
    (user: CabinetUser) => call(resetUserPassword, { params: { id: user.user_id } }),
    async (_user, result) => {
      if (!result.ok) return setListError(errorMessage(result, lang));
      setListError(null);
      setNotice(null);
      setReset(result.data);
      await reload();
    },
  );
  const disabling = useConfirmation(
    (user: CabinetUser) => call(setUserDisabled, { params: { id: user.user_id }, body: { disabled: true } }),
    (user, result) => settle(result, s.userDisabled(user.email)),
  );
  const removing = useConfirmation(
    (user: CabinetUser) => call(removeUser, { params: { id: user.user_id } }),
    (user, result) => settle(result, s.userRemoved(user.email)),
  );
  const working = busy || resetting.busy || disabling.busy || removing.busy;

  async function enable(user: CabinetUser) {
    setBusy(true);
    setNotice(null);
    const result = await call(setUserDisabled, { params: { id: user.user_id }, body: { disabled: false } });
    setBusy(false);
    await settle(result, s.userEnabled(user.email));
  }

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (working) return;
    const missing: Partial<Record<UserField, string>> = {
      ...(email.trim() === '' ? { email: s.userEmailMissing } : {}),
      ...(password.length < 10 ? { password: password === '' ? s.userPasswordMissing : s.passwordTooShort } : {}),
    };
    setFieldErrors(missing);
    if (Object.keys(missing).length > 0) return setFormError(s.fieldsMarked);
    setBusy(true);
    setFormError(null);
    setNotice(null);
    const result = await call(createUser, { body: { email: email.trim(), password, role } });
    setBusy(false);
    if (!result.ok) {
      const byField = userFieldErrors(result.error.details, lang);
      setFieldErrors(byField);
      return setFormError(Object.keys(byField).length > 0 ? s.fieldsMarked : errorMessage(result, lang));
    }
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
      {reset && (
        <ShownOnce
          id="temporary-password"
          title={s.temporaryTitle(reset.user.email)}
          label={s.temporaryLabel}
          warning={s.temporaryHandOver}
          value={reset.temporary_password}
          doneLabel={s.temporaryDone}
          lang={lang}
          onDone={() => setReset(null)}
        />
      )}
      {/* Not a named region: the table's own scrolling frame is one, with this name (axe: landmark-unique). */}
      <section className="card">
        <h2>{s.usersTitle}</h2>
        {notice !== null && <Notice>{notice}</Notice>}
        {listError !== null && <Alert>{listError}</Alert>}
        <ResourceView resource={users} t={t}>
          {(list) => {
            // The server refuses it too (409 last_admin); here the button says why it cannot be pressed.
            const oneAdmin = list.filter((u) => u.role === 'admin' && u.disabled_at === null).length === 1;
            return (
              <>
                <DataTable
                  label={s.usersTitle}
                  columns={[{ header: s.email }, { header: s.role }, { header: s.status }, { header: s.createdOn }, { header: s.actions }]}
                  items={list}
                  rowKey={(user) => user.user_id}
                  row={(user) => {
                    const next: UserRole = user.role === 'admin' ? 'broker' : 'admin';
                    const label = next === 'admin' ? s.makeAdmin : s.makeBroker;
                    const lastAdmin = user.role === 'admin' && user.disabled_at === null && oneAdmin;
                    const self = user.user_id === session.user.id;
                    return (
                      <>
                        <th scope="row">
                          {user.email} {self && <span className="muted">{s.you}</span>}
                        </th>
                        <td>{roleName(user.role)}</td>
                        <td>
                          <span
                            className={user.disabled_at !== null || !user.has_password ? 'admin-status admin-status-off' : 'admin-status'}
                          >
                            {statusOf(user, s)}
                          </span>
                          {notesOf(user, s).map((note) => (
                            <p key={note} className="muted small">
                              {note}
                            </p>
                          ))}
                        </td>
                        <td>{formatDateTime(lang, user.created_at)}</td>
                        <td>
                          <div className="admin-row-actions">
                            <button
                              type="button"
                              className="button button-small"
                              disabled={working || lastAdmin}
                              aria-label={`${label}: ${user.email}`}
                              aria-describedby={lastAdmin ? 'last-admin-hint' : undefined}
                              onClick={() => void changeRole(user, next)}
                            >
                              {label}
                            </button>
                            {/* One's own account is changed on My account; the server refuses these too (409 own_account). */}
                            {!self && (
                              <>
                                <button
                                  type="button"
                                  className="button button-small"
                                  disabled={working}
                                  aria-label={`${s.resetPassword}: ${user.email}`}
                                  onClick={() => resetting.ask(user)}
                                >
                                  {s.resetPassword}
                                </button>
                                {user.disabled_at === null ? (
                                  <button
                                    type="button"
                                    className="button button-small"
                                    disabled={working || lastAdmin}
                                    aria-label={`${s.disable}: ${user.email}`}
                                    onClick={() => disabling.ask(user)}
                                  >
                                    {s.disable}
                                  </button>
                                ) : (
                                  <button
                                    type="button"
                                    className="button button-small"
                                    disabled={working}
                                    aria-label={`${s.enable}: ${user.email}`}
                                    onClick={() => void enable(user)}
                                  >
                                    {s.enable}
                                  </button>
                                )}
                                <button
                                  type="button"
                                  className="button button-small button-danger-quiet"
                                  disabled={working || lastAdmin}
                                  aria-label={`${s.remove}: ${user.email}`}
                                  onClick={() => removing.ask(user)}
                                >
                                  {s.remove}
                                </button>
                              </>
                            )}
                          </div>
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
            <TextField
              id="user-email"
              label={s.email}
              type="email"
              autoComplete="off"
              autoCapitalize="none"
              spellCheck={false}
              value={email}
              onValue={setEmail}
              error={fieldErrors.email ?? null}
            />
            <TextField
              id="user-password"
              label={s.password}
              hint={s.passwordHint}
              type="password"
              autoComplete="new-password"
              value={password}
              onValue={setPassword}
              error={fieldErrors.password ?? null}
            />
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
            <button type="submit" className="button button-primary" disabled={working} aria-busy={working}>
              {s.createUser}
            </button>
          </div>
        </form>
      </section>

      <ConfirmStep
        confirmation={resetting}
        title={(user) => s.resetTitle(user.email)}
        text={s.resetText}
        confirmLabel={s.resetPassword}
        cancelLabel={s.cancel}
        busy={working}
      />
      <ConfirmStep
        confirmation={disabling}
        title={(user) => s.disableTitle(user.email)}
        text={s.disableText}
        confirmLabel={s.disable}
        cancelLabel={s.cancel}
        busy={working}
      />
      <ConfirmStep
        confirmation={removing}
        title={(user) => s.removeTitle(user.email)}
        text={s.removeText}
        confirmLabel={s.remove}
        cancelLabel={s.cancel}
        busy={working}
      />
    </div>
  );
}
