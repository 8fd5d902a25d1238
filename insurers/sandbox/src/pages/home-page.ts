import type { Landing, PortalSession } from '../page-driver.js';

/** "Accueil": the links to each of the portal's services. */
export class HomePage {
  constructor(private readonly portal: PortalSession) {}

  follow(link: 'Nouveau devis auto' | 'Nouveau devis habitation' | 'Attestation d’assurance'): Promise<Landing> {
    return this.portal.navigate(`the link "${link}"`, this.portal.page.getByRole('link', { name: link, exact: true }));
  }
}
