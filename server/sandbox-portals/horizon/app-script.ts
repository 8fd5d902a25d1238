/**
 * Horizon Direct's single-page app, served as /app.js: plain JavaScript written by hand, run as it
 * is (no build step, no framework), under a CSP that allows only scripts of the portal's origin. It
 * draws every screen from the JSON API, checks each form before sending it (the API checks again),
 * and keeps the address in step with history.pushState. It never builds HTML from text: every node
 * is made with createElement and textContent.
 */
export const APP_SCRIPT = String.raw`'use strict';
(function () {
  var base = document.body.getAttribute('data-base') || '';
  var root = document.getElementById('app');
  var approvalTimer = null;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === 'text') node.textContent = attrs[key];
      else if (key === 'onclick') node.addEventListener('click', attrs[key]);
      else if (key === 'onsubmit') node.addEventListener('submit', attrs[key]);
      else if (attrs[key] !== false && attrs[key] !== null && attrs[key] !== undefined) node.setAttribute(key, attrs[key] === true ? '' : attrs[key]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  function show(title, nodes) {
    if (approvalTimer) { clearInterval(approvalTimer); approvalTimer = null; }
    document.title = title + ' – Horizon Direct';
    root.replaceChildren.apply(root, [el('h1', { text: title })].concat(nodes));
    root.removeAttribute('aria-busy');
  }

  function go(path, replace) {
    if (location.pathname !== base + path) history[replace ? 'replaceState' : 'pushState'](null, '', base + path);
  }

  function outage() {
    show('Horizon Direct est en maintenance', [el('p', { text: 'Nos services reviennent dans quelques instants.' })]);
  }

  function api(method, path, body) {
    var init = { method: method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (body !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
    return fetch(base + path, init).then(function (response) {
      if (response.status >= 500) { outage(); throw new Error('unavailable'); }
      return response.status === 204 ? { status: 204, data: {} } : response.json().then(function (data) { return { status: response.status, data: data }; });
    }, function (err) { outage(); throw err; });
  }

  function alertBox(text) { return el('p', { role: 'alert', class: 'summary', text: text }); }

  // ---- Login and the approval in the Horizon app ----

  function loginView(message) {
    go('/app/connexion', true);
    var form = el('form', { novalidate: true, onsubmit: function (event) {
      event.preventDefault();
      api('POST', '/api/session', { login: form.elements.login.value, password: form.elements.password.value }).then(function (r) {
        if (r.status === 200) return afterLogin(r.data);
        loginView(r.data.message || 'Connexion impossible.');
      });
    } }, [
      field({ name: 'login', label: 'Identifiant', kind: 'text' }, ''),
      field({ name: 'password', label: 'Mot de passe', kind: 'password' }, ''),
      el('button', { type: 'submit', text: 'Se connecter' }),
    ]);
    show('Connexion à l’espace partenaires', [message ? alertBox(message) : null, form]);
  }

  function afterLogin(session) {
    if (session.state === 'approval_required') return approvalView(null);
    go('/app/accueil');
    homeView(session);
  }

  function approvalView(message) {
    go('/app/validation');
    var status = el('p', { role: 'status' });
    var button = el('button', { type: 'button', text: 'Envoyer la demande', onclick: function () {
      api('POST', '/api/session/approval').then(function (r) {
        if (r.status !== 202) return approvalView(r.data.message);
        button.disabled = true;
        status.textContent = 'Demande envoyée sur votre téléphone. En attente de votre validation…';
        approvalTimer = setInterval(pollApproval, 1000);
      });
    } });
    show('Validation de la connexion', [
      message ? alertBox(message) : null,
      el('p', { text: 'Validez la connexion dans l’application Horizon.' }),
      button,
      status,
    ]);
  }

  function pollApproval() {
    api('GET', '/api/session/approval').then(function (r) {
      if (r.data.status === 'approved') return start();
      if (r.data.status === 'expired') approvalView('La demande a expiré. Envoyez une nouvelle demande.');
    });
  }

  function homeView(session) {
    go('/app/accueil');
    show('Tableau de bord', [
      el('p', { text: 'Bienvenue, ' + session.display_name + '.' }),
      el('button', { type: 'button', text: 'Nouveau devis auto', onclick: function () { newQuote('voiture'); } }),
      el('button', { type: 'button', text: 'Nouveau devis habitation', onclick: function () { newQuote('logement'); } }),
      el('button', { type: 'button', text: 'Se déconnecter', onclick: function () { api('DELETE', '/api/session').then(function () { loginView(null); }); } }),
    ]);
  }

  // ---- The wizard ----

  function newQuote(product) {
    api('POST', '/api/quotes', { product: product }).then(function (r) { if (r.status === 201) quoteView(r.data, null); });
  }

  function quoteView(quote, errors) {
    if (quote.next_step === null) return documentsView(quote);
    if (quote.next_step === 'formule') return offersView(quote);
    var index = quote.steps.findIndex(function (s) { return s.name === quote.next_step; });
    stepView(quote, quote.steps[index], index, errors);
  }

  function field(spec, value) {
    var id = 'f-' + spec.name;
    var attrs = { id: id, name: spec.name };
    var input;
    if (spec.kind === 'select') {
      input = el('select', attrs, [el('option', { value: '', text: 'Choisir…' })].concat(spec.choices.map(function (c) {
        return el('option', { value: c.value, text: c.label, selected: c.value === value });
      })));
    } else if (spec.kind === 'checkbox') {
      input = el('input', Object.assign(attrs, { type: 'checkbox', checked: value === true }));
      return el('div', { class: 'field checkbox' }, [input, el('label', { for: id, text: spec.label })]);
    } else {
      var numeric = spec.kind === 'integer' || spec.kind === 'decimal' || spec.kind === 'postcode';
      input = el('input', Object.assign(attrs, {
        type: spec.kind === 'password' ? 'password' : 'text',
        inputmode: numeric ? 'decimal' : null,
        placeholder: spec.help || null,
        autocomplete: 'off',
        value: value === null || value === undefined ? '' : String(value),
      }));
    }
    return el('div', { class: 'field' }, [el('label', { for: id, text: spec.label }), input]);
  }

  var DATE = /^(\d{2})\/(\d{2})\/(\d{4})$/;

  /** The value to send, or an error message, from what the broker typed. */
  function read(spec, input) {
    if (spec.kind === 'checkbox') return { value: input.checked };
    var raw = input.value.trim();
    if (raw === '') return spec.required ? { error: 'Ce champ est obligatoire.' } : { value: null };
    if (spec.kind === 'date') {
      var m = DATE.exec(raw);
      var iso = m ? m[3] + '-' + m[2] + '-' + m[1] : '';
      var d = new Date(iso + 'T00:00:00Z');
      return m && !isNaN(d.getTime()) && d.toISOString().slice(0, 10) === iso ? { value: iso } : { error: 'Date invalide (JJ/MM/AAAA).' };
    }
    if (spec.kind === 'postcode') return /^\d{5}$/.test(raw) ? { value: raw } : { error: 'Code postal à 5 chiffres.' };
    if (spec.kind === 'integer' || spec.kind === 'decimal') {
      var n = Number(raw.replace(',', '.'));
      var ok = raw !== '' && isFinite(n) && (spec.kind === 'decimal' || Number.isInteger(n)) && n >= spec.min && n <= spec.max;
      return ok ? { value: n } : { error: 'Nombre' + (spec.kind === 'integer' ? ' entier' : '') + ' entre ' + spec.min + ' et ' + spec.max + ' attendu.' };
    }
    if (spec.kind === 'text' && raw.length > spec.max) return { error: 'Entre ' + spec.min + ' et ' + spec.max + ' caractères.' };
    return { value: raw };
  }

  function markErrors(form, errors, summary) {
    form.querySelectorAll('.field-error').forEach(function (node) { node.remove(); });
    form.querySelectorAll('[aria-invalid]').forEach(function (node) { node.removeAttribute('aria-invalid'); });
    var old = root.querySelector('.summary');
    if (old) old.remove();
    var names = Object.keys(errors);
    if (names.length === 0) return;
    names.forEach(function (name) {
      var input = form.elements[name];
      if (!input) return;
      input.setAttribute('aria-invalid', 'true');
      input.setAttribute('aria-describedby', 'err-' + name);
      input.parentNode.appendChild(el('p', { id: 'err-' + name, class: 'field-error', text: errors[name] }));
    });
    root.insertBefore(alertBox(summary), root.children[1] || null);
  }

  function stepView(quote, step, index, errors) {
    go('/app/devis/' + quote.id + '/' + step.name);
    var last = index === quote.steps.length - 1;
    var form = el('form', { novalidate: true, onsubmit: function (event) {
      event.preventDefault();
      var answers = {};
      var problems = {};
      step.fields.forEach(function (spec) {
        var got = read(spec, form.elements[spec.name]);
        if ('error' in got) problems[spec.name] = got.error; else answers[spec.name] = got.value;
      });
      if (Object.keys(problems).length > 0) return markErrors(form, problems, 'Corrigez les champs signalés.');
      api('POST', '/api/quotes/' + quote.id + '/steps', { step: step.name, answers: answers }).then(function (r) {
        if (r.status === 200) return quoteView(r.data, null);
        markErrors(form, r.data.errors || {}, r.data.message || 'Étape refusée.');
      });
    } }, step.fields.map(function (spec) { return field(spec, null); }).concat([
      el('button', { type: 'submit', text: last ? 'Voir les tarifs' : 'Continuer' }),
    ]));
    var product = quote.product === 'voiture' ? 'Devis auto' : 'Devis habitation';
    show(product + ' – ' + step.title, [el('p', { text: 'Étape ' + (index + 1) + ' sur ' + quote.steps.length }), form]);
    if (errors) markErrors(form, errors, 'Corrigez les champs signalés.');
  }

  function euros(amount) {
    return amount.toLocaleString('fr-FR', { minimumFractionDigits: 2, maximumFractionDigits: 2 }) + ' €';
  }

  function offersView(quote) {
    go('/app/devis/' + quote.id + '/formule');
    var cards = quote.offers.map(function (offer) {
      return el('li', { class: 'offer' }, [
        el('h2', { text: offer.libelle }),
        el('p', { text: euros(offer.prime_annuelle_eur) + ' par an, ou ' + euros(offer.prime_mensuelle_eur) + ' par mois' }),
        el('p', { text: 'Franchise : ' + euros(offer.franchise_eur) }),
        el('ul', {}, offer.garanties.map(function (g) {
          return el('li', { text: g.libelle + (g.incluse ? ' : incluse' : ' : non incluse') + (g.plafond_eur ? ' (plafond ' + euros(g.plafond_eur) + ')' : '') });
        })),
        el('button', { type: 'button', text: 'Choisir ' + offer.libelle, onclick: function () {
          api('POST', '/api/quotes/' + quote.id + '/steps', { step: 'formule', answers: { formule: offer.formule } }).then(function (r) {
            if (r.status === 200) documentsView(r.data);
          });
        } }),
      ]);
    });
    show('Nos formules', [el('p', { text: 'Devis ' + quote.reference }), el('ul', { class: 'offers' }, cards)]);
  }

  function documentsView(quote) {
    go('/app/devis/' + quote.id + '/documents');
    show('Votre devis ' + quote.reference, [el('p', { text: 'Chargement des documents…' })]);
    api('GET', '/api/quotes/' + quote.id + '/documents').then(function (r) {
      var links = (r.data.documents || []).map(function (d) {
        // A plain link: the API answers it as an attachment, which the browser downloads in place.
        return el('li', {}, [el('a', { href: d.url, text: 'Télécharger : ' + d.label })]);
      });
      show('Votre devis ' + quote.reference, [el('p', { text: 'Formule choisie : ' + quote.chosen }), el('ul', { class: 'documents' }, links)]);
    });
  }

  // ---- Start: the address says where to go, the session whether it may ----

  function start() {
    api('GET', '/api/session').then(function (r) {
      if (r.status === 401) return loginView(null);
      if (r.data.state === 'approval_required') return approvalView(null);
      var match = /^\/app\/devis\/([0-9a-f]+)\//.exec(location.pathname.slice(base.length));
      if (!match) return homeView(r.data);
      api('GET', '/api/quotes/' + match[1]).then(function (q) { if (q.status === 200) quoteView(q.data, null); else homeView(r.data); });
    });
  }

  window.addEventListener('popstate', start);
  start();
})();
`;
