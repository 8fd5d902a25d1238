/**
 * The ways a secret typed into a web page can end up written down: as typed, URL-encoded (a form
 * post, a query string), JSON-escaped (a trace's action parameters), HTML-escaped (a DOM
 * snapshot) or base64 (a resource body). A file holding any of them holds the secret.
 */
function secretForms(secret: string): Buffer[] {
  const forms = new Set<string>([
    secret,
    encodeURIComponent(secret),
    new URLSearchParams({ s: secret }).toString().slice(2),
    JSON.stringify(secret).slice(1, -1),
    secret.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;'),
    ...base64Forms(Buffer.from(secret, 'utf8')),
  ]);
  return [...forms].filter((form) => form !== '').map((form) => Buffer.from(form, 'utf8'));
}

/**
 * In base64, bytes are read 3 at a time, so the same secret is written one of three ways
 * depending on where it starts in the encoded data: for each, the characters that depend on the
 * secret's bytes alone (the first and last may mix with its neighbours' bits).
 */
function base64Forms(bytes: Buffer): string[] {
  return [0, 1, 2].map((offset) => {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    return encoded.slice(Math.ceil((offset * 8) / 6), Math.floor(((offset + bytes.length) * 8) / 6));
  });
}

/** Whether any of these bytes holds one of the secrets in any of its forms. */
export function holdsSecret(chunks: readonly Buffer[], secrets: Iterable<string>): boolean {
  const needles = [...secrets].flatMap(secretForms);
  return chunks.some((chunk) => needles.some((needle) => chunk.includes(needle)));
}

/** The text with every form of every secret replaced by "•••" (an error message, before it is stored or logged). */
export function redactSecrets(text: string, secrets: Iterable<string>): string {
  let redacted = text;
  for (const secret of secrets) {
    for (const form of secretForms(secret)) redacted = redacted.split(form.toString('utf8')).join('•••');
  }
  return redacted;
}
