import type { PageProps } from '../slices/types.js';

/** /console/: who is signed in, for which cabinet. */
export function HomePage({ t, session }: PageProps) {
  return (
    <section className="card" aria-labelledby="home-title">
      <h1 id="home-title">{t.homeTitle}</h1>
      <p>
        {t.signedInAsAt} <strong>{session.user.email}</strong> — {session.cabinet.name}
      </p>
      <p className="muted">{t.homeNext}</p>
    </section>
  );
}
