import { describe, expect, it } from 'vitest';
import { devisPdfFileName } from '../../server/devis/file-name.js';

describe('devisPdfFileName', () => {
  it('names the client, the product and the day', () => {
    expect(devisPdfFileName({ name: 'Dupont', productLabel: 'Auto', date: '2026-11-23' })).toBe('Devis_Dupont_Auto_2026-11-23.pdf');
    expect(devisPdfFileName({ name: 'Dupont', productLabel: 'Assurance auto', date: '2026-11-23' })).toBe(
      'Devis_Dupont_Assurance-auto_2026-11-23.pdf',
    );
  });

  it('drops accents and turns anything else into dashes: ASCII letters, digits, dashes and underscores only', () => {
    expect(devisPdfFileName({ name: 'Lefèvre-Œuvray', productLabel: 'Attestation d’assurance', date: '2026-01-05' })).toBe(
      'Devis_Lefevre-OEuvray_Attestation-d-assurance_2026-01-05.pdf',
    );
    expect(devisPdfFileName({ name: 'Straße & Søn', productLabel: 'Multirisque habitation', date: '2026-01-05' })).toBe(
      'Devis_Strasse-Son_Multirisque-habitation_2026-01-05.pdf',
    );
  });

  it('lets no path character, quote or control character through', () => {
    const name = devisPdfFileName({ name: '../../etc/passwd"\r\nX-Evil: 1', productLabel: 'a\\b/c:d*e?f<g>h|i', date: '2026-01-05' });
    expect(name).toMatch(/^[A-Za-z0-9_-]+\.pdf$/);
    expect(name).toBe('Devis_etc-passwd-X-Evil-1_a-b-c-d-e-f-g-h-i_2026-01-05.pdf');
  });

  it('leaves out a missing or empty part, and cuts long ones', () => {
    expect(devisPdfFileName({ name: null, productLabel: 'Auto', date: '2026-11-23' })).toBe('Devis_Auto_2026-11-23.pdf');
    expect(devisPdfFileName({ name: '日本', productLabel: null, date: '2026-11-23' })).toBe('Devis_2026-11-23.pdf');
    const long = devisPdfFileName({ name: 'A'.repeat(39) + ' Bcdef', productLabel: 'Auto', date: '2026-11-23' });
    expect(long).toBe(`Devis_${'A'.repeat(39)}_Auto_2026-11-23.pdf`);
  });
});
