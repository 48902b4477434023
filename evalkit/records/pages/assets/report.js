/* evalkit report page. Every value shown here came from an agent under test or a user's
   files: nodes are built with textContent and never from markup in the data. */
(function () {
  'use strict';

  var DATA = JSON.parse(document.getElementById('evalkit-data').textContent);
  var REPORT = DATA.report;
  var REPS = DATA.reps;
  /* a large folder's page: per-cell summaries here, each cell's reps in a file beside the
     page, loaded when a cell or a narrow enough filter asks for them */
  var CELLS = DATA.cells || null;
  var REP_COUNT = CELLS ? DATA.rep_count : REPS.length;
  var LOAD_CAP = 20000;
  var BY_ID = {};
  REPS.forEach(function (r) { BY_ID[r.id] = r; });
  var cellFiles = {};
  var listTicket = 0;
  var SCEN = DATA.scenarios || {};
  var FILTER_KEYS = ['set', 'verdict', 'model', 'variant', 'scenario', 'level', 'polarity', 'flag'];
  var GROUP_SKIP = { model: 1, polarity: 1, scenarios: 1, variant: 1, subject_hash: 1 };
  /* several subjects (variants or wording hashes): every table names each row's, since their
     rates are kept apart */
  var SPLIT = (REPORT.subjects || []).length > 1;
  /* rows of several CLI versions: rates are split by version (a group column) */
  var VERSIONS = (REPORT.cli_versions || []).length > 1;
  /* rows of several judges, agents or confinement backends: rates are split by each (a group
     column) */
  var JUDGES = Object.keys(REPORT.judges || {}).length > 1;
  var AGENTS = Object.keys(REPORT.agents || {}).length > 1;
  var BACKENDS = Object.keys(REPORT.backends || {}).length > 1;
  /* the rep field a cell's group key is matched against (a rep's `judge` is its judge's answer) */
  var REP_FIELD = { judge: 'judged_by' };
  var INNER = !!REPORT.inner_loop;
  var state = { filters: {}, selected: null, compare: null, showAll: false };
  var LIST_PAGE = 400;
  var cache = {};
  var pending = {};
  var inlineEvidence = null;
  var app = document.getElementById('app');

  /* ------------------------------------------------------------------ DOM helpers */

  function el(tag, props) {
    var node = document.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (key) {
        var value = props[key];
        if (value === undefined || value === null) return;
        if (key === 'cls') node.className = value;
        else if (key === 'text') node.textContent = String(value);
        else if (key === 'onclick') node.addEventListener('click', value);
        else if (key === 'onchange') node.addEventListener('change', value);
        else if (key === 'style') node.setAttribute('style', value);
        else node.setAttribute(key, String(value));
      });
    }
    for (var i = 2; i < arguments.length; i++) add(node, arguments[i]);
    return node;
  }

  function add(node, child) {
    if (child === undefined || child === null || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { add(node, c); }); return; }
    if (typeof child === 'string' || typeof child === 'number') {
      node.appendChild(document.createTextNode(String(child)));
    } else {
      node.appendChild(child);
    }
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function pct(x) { return Math.round(x * 100); }

  // The headline interval counts scenarios; the rep-level Wilson interval is shown beside it,
  // and alone (labelled) where a cell holds one scenario.
  function clustered(r) { return r.clustered_low !== null && r.clustered_low !== undefined; }

  // How far a rate's ERROR rows could move it: to this, had every one passed.
  function errorsReach(r) {
    if (!r.errors || r.errors_as_pass === null || r.errors_as_pass === undefined) return '';
    return '; ' + r.errors + ' ERROR: ' + pct(r.k / r.n) + '\u2013' + pct(r.errors_as_pass) +
      '% had they passed';
  }

  /* k/n and the headline interval alone, where two rates sit side by side; the whole
     reading is the cell's title. */
  function headRate(r) {
    if (!r || !r.n) return '0/0';
    var lo = clustered(r) ? r.clustered_low : r.low, hi = clustered(r) ? r.clustered_high : r.high;
    return r.k + '/' + r.n + ' ' + pct(lo) + '\u2013' + pct(hi) + '%';
  }

  function fmtRate(r) {
    if (!r || !r.n) return '0/0';
    var indep = pct(r.low) + '\u2013' + pct(r.high) + '%';
    if (!clustered(r)) return r.k + '/' + r.n + ' ' + indep + ' (indep)' + errorsReach(r);
    return r.k + '/' + r.n + ' ' + pct(r.clustered_low) + '\u2013' + pct(r.clustered_high) +
      '% (indep ' + indep + ', deff ' + r.deff.toFixed(1) + ', G ' + r.scenarios + ')' +
      errorsReach(r);
  }

  /* The interval rule, said once above the tables rather than in every cell. */
  var RATE_RULE = 'A rate reads k/n, then its 95% interval clustered by scenario (G scenarios, ' +
    'design effect deff), then in brackets the interval with reps taken as independent ' +
    '(Wilson), optimistic when a scenario\u2019s reps are alike; a cell of one scenario has ' +
    'only the latter (indep).';

  function bar(r) {
    var box = el('span', { cls: 'bar', title: r && r.n ? 'PASS ' + fmtRate(r) : 'no rows' });
    if (r && r.n) {
      var low = clustered(r) ? r.clustered_low : r.low;
      var high = clustered(r) ? r.clustered_high : r.high;
      box.appendChild(el('span', { cls: 'ci', style: 'left:' + (low * 100).toFixed(2) +
        '%;width:' + ((high - low) * 100).toFixed(2) + '%' }));
      box.appendChild(el('span', { cls: 'pt', style: 'left:' + (r.rate * 100).toFixed(2) + '%' }));
    }
    return box;
  }

  function barText(x) {
    var has = function (b) { return b !== null && b !== undefined; };
    if (has(x.bar) && has(x.bar_max)) return x.bar.toFixed(2) + '-' + x.bar_max.toFixed(2);
    if (has(x.bar_max)) return '<= ' + x.bar_max.toFixed(2);
    return '>= ' + Number(x.bar).toFixed(2);
  }

  var ROUTE_COLOURS = ['#1a7f37', '#4ac26b', '#8250df', '#bf8700', '#0969da', '#cf222e'];

  // One positive cell's reps as a stacked bar: PASS rows by their B-via route, then rows whose
  // axis A passed but not the verdict; the rest of the bar is neither.
  function earnedBar(c) {
    if (c.polarity !== 'positive' || !c.axis_a || !c.pass_rate.n) return el('span', { text: '-' });
    var n = c.pass_rate.n;
    var box = el('span', { cls: 'stack' });
    var parts = Object.keys(c.b_via || {}).map(function (route, i) {
      return { label: 'PASS via ' + route, count: c.b_via[route], colour: ROUTE_COLOURS[i % 6] };
    });
    parts.push({ label: 'axis A only', count: c.axis_a.k - c.pass_rate.k, colour: '#afb8c1' });
    parts.forEach(function (part) {
      if (part.count <= 0) return;
      box.appendChild(el('span', { cls: 'seg', title: part.label + ': ' + part.count + '/' + n,
        style: 'width:' + (part.count / n * 100).toFixed(2) + '%;background:' + part.colour }));
    });
    box.title = 'axis A ' + c.axis_a.k + '/' + n + ' of positives; ' + counts(c.b_via);
    return box;
  }

  function shortHash(h) { return h ? String(h).replace(/^sha256:/, '').slice(0, 12) : 'unknown'; }

  function subjectCells(rec) {
    return SPLIT ? [el('td', { cls: 'name variant', text: rec.variant }),
      el('td', { cls: 'name subject', title: rec.subject_hash || 'unknown',
        text: shortHash(rec.subject_hash) })] : [];
  }

  function subjectHeads() { return SPLIT ? ['variant', 'subject'] : []; }

  function verdictTag(v) { return el('span', { cls: 'v v-' + String(v).toLowerCase(), text: v }); }

  function counts(obj) {
    var keys = Object.keys(obj || {}).filter(function (k) { return obj[k]; });
    return keys.length ? keys.map(function (k) { return k + ' ' + obj[k]; }).join(', ') : '-';
  }

  function isBreach(token) { return token.split(':')[0].indexOf('breach') >= 0; }

  function breaches(rep) {
    if (typeof rep.breaches === 'number') return rep.breaches;
    return (rep.reasons || []).filter(isBreach).length;
  }

  function facts(rep) { return SCEN[rep.scenario] || {}; }

  function flagNames(rep) { return rep.flags || []; }

  /* ------------------------------------------------------------------ evidence */

  window.evalkitEvidence = function (id, blob) {
    var waiting = pending[id];
    delete pending[id];
    if (waiting) waiting.resolve(blob);
  };

  function loadScript(src, onerror) {
    var s = document.createElement('script');
    s.src = src;
    s.onerror = onerror;
    document.body.appendChild(s);
  }

  window.evalkitReps = function (index, reps) {
    var cell = cellFiles[index];
    if (!cell || cell.reps) return;
    reps.forEach(function (r) { BY_ID[r.id] = r; });
    cell.reps = reps;
    cell.resolve(reps);
  };

  function loadCell(cell) {
    var index = Number(cell.file);
    if (cellFiles[index]) return cellFiles[index].promise;
    var entry = cellFiles[index] = {};
    entry.promise = new Promise(function (resolve, reject) {
      entry.resolve = resolve;
      var src = encodeURIComponent(DATA.evidence.folder) + '/reps-' + index + '.js';
      loadScript(src, function () {
        delete cellFiles[index];
        reject(new Error('rep list file missing: ' + src));
      });
    });
    return entry.promise;
  }

  function evidenceBlob(id) {
    var where = DATA.evidence || {};
    if (where.placement === 'inline') {
      if (inlineEvidence === null) {
        var node = document.getElementById('evalkit-evidence');
        inlineEvidence = node ? JSON.parse(node.textContent) : [];
      }
      return Promise.resolve(inlineEvidence[id]);
    }
    return new Promise(function (resolve, reject) {
      pending[id] = { resolve: resolve };
      var src = encodeURIComponent(where.folder) + '/rep-' + Number(id) + '.js';
      loadScript(src, function () { delete pending[id]; reject(new Error('evidence file missing: ' + src)); });
    });
  }

  function loadEvidence(id) {
    if (cache[id]) return cache[id];
    cache[id] = evidenceBlob(id).then(function (b64) {
      if (!b64) throw new Error('no evidence kept for this rep');
      var bin = atob(b64);
      var bytes = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
      return new Response(stream).text();
    }).then(function (text) { return JSON.parse(text); });
    return cache[id];
  }

  /* ------------------------------------------------------------------ header and banners */

  /* ------------------------------------------------------------------ first screen */

  /* What failed before why: per scenario and model, how its reps came out (a large page's
     cells know which verdicts they hold, not how many of each). */
  function tallies() {
    var by = {}, order = [];
    (CELLS || REPS).forEach(function (r) {
      var key = r.scenario + '\u0000' + r.model;
      var t = by[key];
      if (!t) {
        t = by[key] = { scenario: r.scenario, model: r.model, n: 0, PASS: 0, FAIL: 0, ERROR: 0 };
        order.push(t);
      }
      t.n += CELLS ? r.count : 1;
      (CELLS ? r.verdicts || [] : [r.verdict]).forEach(function (v) {
        if (v in t) t[v] += 1;
      });
    });
    return order;
  }

  function worst(t) { return t.FAIL ? 2 : t.ERROR ? 1 : 0; }

  function headlineText(cells) {
    var failed = {};
    cells.forEach(function (t) { if (t.FAIL || t.ERROR) failed[t.scenario] = 1; });
    var names = Object.keys(failed).sort();
    var shown = names.slice(0, 8).join(', ') + (names.length > 8 ?
      ' and ' + (names.length - 8) + ' more' : '');
    if (CELLS) {
      return REP_COUNT + ' reps; ' + (names.length ? names.length + ' scenario(s) with a FAIL ' +
        'or ERROR: ' + shown : 'every rep passed');
    }
    var sum = function (k) { return cells.reduce(function (a, t) { return a + t[k]; }, 0); };
    var errors = sum('ERROR');
    return sum('PASS') + ' of ' + REP_COUNT + ' reps passed' + (errors ? ' (' + errors +
      ' ERROR: no measurement)' : '') + (names.length ? '; failed: ' + shown : '');
  }

  function cellText(t) {
    if (CELLS) return ['PASS', 'FAIL', 'ERROR'].filter(function (v) { return t[v]; }).join(' ') +
      ' (' + t.n + ')';
    return t.PASS + '/' + t.n + (t.ERROR ? ' (' + t.ERROR + ' ERR)' : '');
  }

  function firstScreen() {
    var cells = tallies();
    var bad = cells.some(worst);
    var wrap = el('section', { id: 'first-screen' },
      el('p', { id: 'headline', cls: 'headline ' + (bad ? 'bad' : 'good'), text: headlineText(cells) }));
    var modelsSeen = [], scen = {};
    cells.forEach(function (t) {
      if (modelsSeen.indexOf(t.model) < 0) modelsSeen.push(t.model);
      var s = scen[t.scenario] || (scen[t.scenario] = { id: t.scenario, worst: 0, cells: {} });
      s.cells[t.model] = t;
      s.worst = Math.max(s.worst, worst(t));
    });
    var rows = Object.keys(scen).map(function (k) { return scen[k]; });
    rows.sort(function (a, b) { return b.worst - a.worst || (a.id < b.id ? -1 : 1); });
    modelsSeen.sort();
    var tbody = el('tbody');
    rows.forEach(function (s) {
      tbody.appendChild(el('tr', null, el('td', { cls: 'name', text: s.id }),
        modelsSeen.map(function (m) {
          var t = s.cells[m];
          if (!t) return el('td', { cls: 'muted', text: '-' });
          return el('td', { cls: 'cell cell-' + ['pass', 'error', 'fail'][worst(t)],
            'data-scenario': s.id, 'data-model': m, title: 'open these reps',
            text: cellText(t), onclick: function () { setFilters({ scenario: s.id, model: m }); } });
        })));
    });
    wrap.appendChild(el('table', { cls: 'grid first', id: 'first-grid' },
      el('thead', null, el('tr', null, ['scenario'].concat(modelsSeen).map(function (h) {
        return el('th', { text: h }); }))), tbody));
    return wrap;
  }

  function header() {
    var wrap = el('header', null,
      el('h1', { text: 'evalkit report: ' + REPORT.suite }),
      el('p', { cls: 'meta', text: REPORT.rows + ' row(s) from ' + REPORT.workdir }));
    if (!REPORT.calibration) wrap.appendChild(firstScreen());
    var sets = el('p', { cls: 'sets' });
    Object.keys(REPORT.sets || {}).forEach(function (which) {
      sets.appendChild(el('span', { cls: 'chip label-' + REPORT.sets[which].split(/\W/)[0],
        text: which + ' set: ' + REPORT.sets[which] }));
    });
    (REPORT.subjects || []).forEach(function (x) {
      sets.appendChild(el('span', { cls: 'chip subject', title: x.subject_hash || 'unknown',
        text: 'subject: ' + x.variant + ' ' + shortHash(x.subject_hash) +
          (SPLIT ? ' (' + x.rows + ' rows)' : '') }));
    });
    var judges = Object.keys(REPORT.judges || {});
    judges.forEach(function (j) {
      sets.appendChild(el('span', { cls: 'chip judge', text: 'judged by: ' + j + ' (' +
        REPORT.judges[j] + ' rows)' }));
    });
    wrap.appendChild(sets);
    var notes = el('div', { cls: 'banners' });
    var agents = Object.keys(REPORT.agents || {});
    if (AGENTS || (agents.length === 1 && agents[0] !== 'claude')) {
      agents.forEach(function (a) {
        sets.appendChild(el('span', { cls: 'chip agent', text: 'agent: ' + a + ' (' +
          REPORT.agents[a] + ' rows)' }));
      });
    }
    if (judges.length > 1) {
      notes.appendChild(el('div', { cls: 'banner bad', id: 'judges-split' },
        el('strong', { text: 'JUDGES: ' + judges.length }), ' \u2014 every rate is of one ' +
          'judge, none pooled; the folder is not publishable until it is split by run id.'));
    }
    if (AGENTS) {
      notes.appendChild(el('div', { cls: 'banner warn', id: 'agents-split', text:
        agents.length + ' agents (' + agents.join(', ') + '): every rate is of one of them; ' +
        'none is pooled across them.' }));
    }
    var backends = Object.keys(REPORT.backends || {});
    if (BACKENDS || (backends.length === 1 && backends[0] !== 'bwrap')) {
      backends.forEach(function (b) {
        sets.appendChild(el('span', { cls: 'chip backend', text: 'confined by: ' + b + ' (' +
          REPORT.backends[b] + ' rows)' }));
      });
    }
    if (BACKENDS) {
      notes.appendChild(el('div', { cls: 'banner warn', id: 'backends-split', text:
        backends.length + ' confinement backends (' + backends.join(', ') + '): every rate is ' +
        'of one of them; none is pooled across them.' }));
    }
    if (INNER) {
      notes.appendChild(el('div', { cls: 'banner bad', id: 'inner-loop' },
        el('strong', { text: 'INNER LOOP' }), ' \u2014 this folder holds an inner-loop grid (' +
          (REPORT.inner_loop_runs || []).join(', ') + '): the cells that failed before plus ' +
          'passing controls, not the whole set. No rate on this page is the set\u2019s recall ' +
          'or specificity.'));
    }
    if (SPLIT) {
      notes.appendChild(el('div', { cls: 'banner warn', id: 'subjects-split', text:
        (REPORT.subjects || []).length + ' subjects (variant and wording hash): every rate is ' +
        'of one of them; none is pooled across them.' }));
    }
    if (REPORT.unconfined) {
      notes.appendChild(el('div', { cls: 'banner bad', id: 'unconfined' },
        el('strong', { text: 'UNCONFINED' }), ' \u2014 ' + REPORT.unconfined + ' row(s) ran ' +
          'without their OS sandbox: the agent could reach the whole machine. Never publishable.'));
    }
    var misses = (REPORT.expected || []).filter(function (x) { return x.verdict === 'miss'; });
    if (misses.length) {
      notes.appendChild(el('div', { cls: 'banner bad', id: 'expected-missed' },
        el('strong', { text: 'EXPECTED BAR MISSED' }), ' \u2014 ' + misses.length + ' of ' +
          REPORT.expected.length + ' cell(s) below their hypothesised pass bar, interval ' +
          'included (see Expected against observed).'));
    }
    notes.appendChild(el('div', { cls: 'banner info', id: 'mask-note',
      text: 'Held-out rule: no scenario Task is in this page. Any line of the evidence that holds ' +
        'a line of a Task is shown as \u201c' + DATA.mask_text + '\u201d (' + DATA.masked_lines +
        ' line(s) masked).' }));
    if (REPORT.incomplete) {
      var inc = el('div', { cls: 'banner bad', id: 'incomplete' },
        el('strong', { text: 'INCOMPLETE' }), ' \u2014 planned reps with no row:');
      var list = el('ul');
      REPORT.missing.forEach(function (m) {
        list.appendChild(el('li', { text: m.run_id + ' ' + m.scenario + ' ' + m.model + ': ' +
          m.planned + ' planned, ' + m.recorded + ' recorded' }));
      });
      inc.appendChild(list);
      notes.appendChild(inc);
    }
    var pub = REPORT.publishability || {};
    var cal = REPORT.calibration;
    if (cal) {
      /* a calibration folder: how its cells came out, never a publishability verdict */
      var calNote = el('div', { cls: 'banner ' + (cal.as_expected === cal.total ? 'good' : 'bad'),
        id: 'calibration' }, el('strong', { text: cal.headline }));
      var calList = el('ul');
      (cal.differ || []).concat(cal.expected_errors || [], pub.problems || []).forEach(function (x) {
        calList.appendChild(el('li', { text: x }));
      });
      calNote.appendChild(calList);
      wrap.insertBefore(calNote, wrap.firstChild);
    } else {
      notes.appendChild(el('div', { cls: 'banner ' + (pub.publishable ? 'good' : 'bad'),
        id: 'publishability', text: pub.verdict }));
    }
    (REPORT.unknown || []).forEach(function (u) {
      notes.appendChild(el('div', { cls: 'banner warn', text: 'Unknown scenario ' + u.scenario +
        ' (' + u.model + '): ' + u.rows + ' row(s), PASS ' + u.passes + ', FAIL ' + u.fails +
        ', ERROR ' + u.errors }));
    });
    (DATA.problems || []).forEach(function (p) {
      notes.appendChild(el('div', { cls: 'banner warn', text: p }));
    });
    wrap.appendChild(notes);
    return wrap;
  }

  /* ------------------------------------------------------------------ overview */

  function groupKeys(cells) {
    var keys = [];
    cells.forEach(function (c) {
      Object.keys(c).forEach(function (k) {
        if (k === 'cli_version' && !VERSIONS) return;
        if (k === 'judge' && !JUDGES) return;
        if (k === 'agent' && !AGENTS) return;
        if (k === 'backend' && !BACKENDS) return;
        if (!GROUP_SKIP[k] && typeof c[k] === 'string' && keys.indexOf(k) < 0) keys.push(k);
      });
    });
    return keys;
  }

  function cellReps(table, cell, keys) {
    return REPS.filter(function (r) {
      var f = facts(r);
      if (r.model !== cell.model || f.level !== table.level || f.set !== table.set ||
          f.polarity !== cell.polarity || r.variant !== cell.variant ||
          r.subject_hash !== cell.subject_hash) return false;
      return keys.every(function (k) {
        var v = r[REP_FIELD[k] || k];
        return v === undefined || v === cell[k];
      });
    });
  }

  function overview() {
    var sec = el('section', { id: 'overview' }, el('h2', { text: 'Overview' }),
      el('p', { cls: 'muted', id: 'rate-rule', text: RATE_RULE }));
    (REPORT.levels || []).forEach(function (table) {
      var keys = groupKeys(table.cells);
      var head = ['model'].concat(subjectHeads(), keys, ['polarity', 'PASS k/n  95%', '95% interval',
        'ERROR', 'breaches', 'B:FAIL', 'A-via (PASS)', 'flags (rows)', 'how positives passed']);
      var tbody = el('tbody');
      table.cells.forEach(function (c) {
        var br = c.breaches;
        if (typeof br !== 'number') {
          br = cellReps(table, c, keys).reduce(function (a, r) { return a + breaches(r); }, 0);
        }
        var tr = el('tr', { cls: 'click', 'data-model': c.model, 'data-polarity': c.polarity,
          'data-variant': c.variant, title: 'show these reps',
          onclick: function () {
            setFilters({ set: table.set, level: table.level, model: c.model, polarity: c.polarity,
              variant: SPLIT ? c.variant : undefined });
          } },
          el('td', { cls: 'name', text: c.model }),
          subjectCells(c),
          keys.map(function (k) { return el('td', { cls: 'name', text: c[k] }); }),
          el('td', { text: c.polarity }),
          el('td', { cls: 'num pass-rate', text: fmtRate(c.pass_rate) }),
          el('td', null, bar(c.pass_rate)),
          el('td', { cls: 'num errors' + (c.pass_rate.errors ? ' hot' : ''), text: c.pass_rate.errors }),
          el('td', { cls: 'num breaches' + (br ? ' hot' : ''), text: br }),
          el('td', { cls: 'num', text: c.b_fail }),
          el('td', { text: c.polarity === 'positive' ? counts(c.a_via) : '-' }),
          el('td', { cls: 'flags', text: counts(c.flags) }),
          el('td', { cls: 'earned' }, earnedBar(c)));
        tbody.appendChild(tr);
      });
      sec.appendChild(el('div', { cls: 'level', 'data-set': table.set, 'data-level': table.level },
        el('h3', { text: table.level + ' \u00b7 ' + table.set + ' set (' + table.label + ')' +
          (INNER ? ' \u00b7 inner loop, not the whole set' : '') }),
        el('table', { cls: 'grid' }, el('thead', null, el('tr', null,
          head.map(function (h) { return el('th', { text: h }); }))), tbody)));
    });
    if (REPORT.calibration) sec.appendChild(calibrationMatrix(REPORT.calibration));
    sec.appendChild(models());
    if ((REPORT.activation || []).length) sec.appendChild(activation());
    if ((REPORT.expected || []).length) sec.appendChild(expected());
    sec.appendChild(extras());
    return sec;
  }

  /* A calibration folder's cells as policy x scenario: what each got, and where that is not
     what was expected, the expected verdict beside it and the cell marked. */
  function calibrationMatrix(cal) {
    var runs = {};
    cal.cells.forEach(function (c) { runs[c.run_id] = 1; });
    var several = Object.keys(runs).length > 1;
    var scenarios = [];
    var policies = [];
    var by = {};
    cal.cells.forEach(function (c) {
      var policy = c.model + (several ? ' (run ' + c.run_id + ')' : '');
      if (scenarios.indexOf(c.scenario) < 0) scenarios.push(c.scenario);
      if (policies.indexOf(policy) < 0) policies.push(policy);
      by[policy + '\u0000' + c.scenario] = c;
    });
    var tbody = el('tbody');
    policies.forEach(function (policy) {
      tbody.appendChild(el('tr', { cls: 'policy', 'data-policy': policy },
        el('td', { cls: 'name', text: policy }),
        scenarios.map(function (s) {
          var c = by[policy + '\u0000' + s];
          if (!c) return el('td', { cls: 'cal none', text: '-' });
          var got = c.got.length ? c.got.join(', ') : 'no row';
          var want = c.expected.verdict + (c.expected.reason ? ' (' + c.expected.reason + ')' : '');
          return el('td', { cls: 'cal ' + (c.as_expected ? 'same' : 'differs hot'),
            'data-scenario': s, title: 'expected ' + want,
            text: c.as_expected ? got : got + ' \u2260 ' + want });
        })));
    });
    return el('div', { id: 'calibration-matrix' },
      el('h3', { text: 'Calibration: got (\u2260 expected where it differs)' }),
      el('table', { cls: 'grid' }, el('thead', null, el('tr', null,
        [el('th', { text: 'policy' })].concat(scenarios.map(function (s) {
          return el('th', { text: s });
        })))), tbody));
  }

  var KNOWN = ['schema_version', 'suite', 'workdir', 'results_files', 'rows', 'sets', 'levels',
    'models', 'incomplete', 'missing', 'unknown', 'publishability', 'inner_loop',
    'inner_loop_runs', 'subjects', 'expected', 'calibration', 'judges', 'agents', 'backends',
    'unconfined',
    'activation'];

  function flat(v) {
    if (v === null || v === undefined) return '-';
    if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(4);
    if (typeof v === 'object') return counts(v);
    return String(v);
  }

  /* Whatever else the report carries (usage, retries, fields added later): a table for a
     list of records, key/value pairs for a record, so a new field shows without a change. */
  function extras() {
    var wrap = el('div', { id: 'extras' });
    Object.keys(REPORT).forEach(function (key) {
      if (KNOWN.indexOf(key) >= 0) return;
      var value = REPORT[key];
      if (Array.isArray(value)) {
        if (!value.length || typeof value[0] !== 'object') return;
        var cols = Object.keys(value[0]);
        wrap.appendChild(el('h3', { text: key }));
        wrap.appendChild(el('table', { cls: 'grid', 'data-field': key },
          el('thead', null, el('tr', null, cols.map(function (c) { return el('th', { text: c }); }))),
          el('tbody', null, value.map(function (rec) {
            return el('tr', null, cols.map(function (c) {
              return el('td', { cls: typeof rec[c] === 'number' ? 'num' : 'name', text: flat(rec[c]) });
            }));
          }))));
      } else if (value && typeof value === 'object') {
        wrap.appendChild(el('h3', { text: key }));
        wrap.appendChild(kv(Object.keys(value).map(function (k) { return [k, flat(value[k])]; })));
      }
    });
    return wrap;
  }

  function models() {
    var wrap = el('div', { id: 'models' }, el('h3', { text: INNER ?
      'Per model: PASS over the chosen positives and negatives (inner loop: not the set\u2019s ' +
      'recall or specificity)' : 'Per model: recall and specificity' }));
    var tbody = el('tbody');
    (REPORT.models || []).forEach(function (m) {
      var reps = (CELLS || REPS).filter(function (r) {
        return r.model === m.model && facts(r).set === m.set && r.variant === m.variant &&
          r.subject_hash === m.subject_hash && (!VERSIONS || r.cli_version === m.cli_version) &&
          (!JUDGES || r.judged_by === m.judge) && (!AGENTS || r.agent === m.agent) &&
          (!BACKENDS || r.backend === m.backend);
      });
      var br = reps.reduce(function (a, r) { return a + (CELLS ? r.breaches : breaches(r)); }, 0);
      tbody.appendChild(el('tr', { 'data-model': m.model, 'data-set': m.set, 'data-variant': m.variant },
        el('td', { text: m.set }),
        el('td', { cls: 'name', text: m.model }),
        subjectCells(m),
        VERSIONS ? el('td', { cls: 'name', text: m.cli_version }) : null,
        JUDGES ? el('td', { cls: 'name judge', text: m.judge }) : null,
        AGENTS ? el('td', { cls: 'name agent', text: m.agent }) : null,
        BACKENDS ? el('td', { cls: 'name backend', text: m.backend }) : null,
        el('td', { cls: 'num recall', text: fmtRate(m.recall) }), el('td', null, bar(m.recall)),
        el('td', { cls: 'num specificity', text: fmtRate(m.specificity) }),
        el('td', null, bar(m.specificity)),
        el('td', { cls: 'num', text: m.recall.errors + m.specificity.errors }),
        el('td', { cls: 'num', text: br })));
    });
    wrap.appendChild(el('table', { cls: 'grid' }, el('thead', null, el('tr', null,
      ['set', 'model'].concat(subjectHeads(), VERSIONS ? ['cli'] : [], JUDGES ? ['judge'] : [],
        AGENTS ? ['agent'] : [], BACKENDS ? ['backend'] : [], [INNER ? 'PASS (chosen positives)' :
        'recall (positives)', '', INNER ? 'PASS (chosen negatives)' : 'specificity (negatives)',
        '', 'ERROR', 'breaches']).map(function (h) {
        return el('th', { text: h }); }))), tbody));
    return wrap;
  }

  /* Per skill of the subject and its neighbours: fired when a user would want it, quiet when
     not, each a rate with its interval; a neighbour's row says what it is for. */
  function activation() {
    var wrap = el('div', { id: 'activation' }, el('h3', { text: 'Activation among the neighbours' }),
      el('p', { cls: 'muted', text: 'fired when wanted: a neighbour where the scenario names it ' +
        'as wanted, the subject\u2019s skills on the other positives; quiet when not: every ' +
        'other row; ERROR rows count against both; the interval is the headline one (a ' +
        'cell\u2019s title reads it whole)' }));
    var tbody = el('tbody');
    REPORT.activation.forEach(function (a) {
      tbody.appendChild(el('tr', { 'data-skill': a.skill, 'data-side': a.side,
        'data-model': a.model, 'data-set': a.set },
        el('td', { text: a.set }), el('td', { cls: 'name', text: a.model }), subjectCells(a),
        VERSIONS ? el('td', { cls: 'name', text: a.cli_version }) : null,
        JUDGES ? el('td', { cls: 'name judge', text: a.judge }) : null,
        AGENTS ? el('td', { cls: 'name agent', text: a.agent }) : null,
        BACKENDS ? el('td', { cls: 'name backend', text: a.backend }) : null,
        el('td', { cls: 'name skill', text: a.skill, title: a.covers || a.side }),
        el('td', { text: a.side }),
        el('td', { cls: 'num when-wanted', text: headRate(a.when_wanted),
          title: fmtRate(a.when_wanted) }),
        el('td', null, bar(a.when_wanted)),
        el('td', { cls: 'num quiet-when-not', text: headRate(a.quiet_when_not),
          title: fmtRate(a.quiet_when_not) }),
        el('td', null, bar(a.quiet_when_not))));
    });
    wrap.appendChild(el('table', { cls: 'grid' }, el('thead', null, el('tr', null,
      ['set', 'model'].concat(subjectHeads(), VERSIONS ? ['cli'] : [], JUDGES ? ['judge'] : [],
        AGENTS ? ['agent'] : [], BACKENDS ? ['backend'] : [], ['skill', 'side',
        'fired when wanted', '', 'quiet when not', '']).map(function (h) { return el('th', { text: h }); }))), tbody));
    return wrap;
  }

  /* A suite's hypothesised pass bars beside what was observed: every cell with a bar, a miss
     as visible as a meet. */
  function expected() {
    var wrap = el('div', { id: 'expected' }, el('h3', { text: 'Expected against observed' +
      (INNER ? ' (inner loop: chosen cells, not the set)' : '') }),
      el('p', { cls: 'muted', text: 'met: PASS rate within the bars; miss: the Wilson 95% ' +
        'interval lies wholly below a minimum or above a maximum; unclear: past a bar, but the ' +
        'interval still reaches it' }));
    var tbody = el('tbody');
    REPORT.expected.forEach(function (x) {
      var shown = bar(x.observed);
      [x.bar, x.bar_max].forEach(function (b, i) {
        if (b === null || b === undefined) return;
        shown.appendChild(el('span', { cls: 'exp', title: (i ? 'at most ' : 'at least ') + b,
          style: 'left:' + (b * 100).toFixed(2) + '%' }));
      });
      tbody.appendChild(el('tr', { cls: 'exp-' + x.verdict, 'data-verdict': x.verdict,
        'data-model': x.model, 'data-polarity': x.polarity },
        el('td', { text: x.set }), el('td', { text: x.level }),
        el('td', { cls: 'name', text: x.model }), subjectCells(x),
        JUDGES ? el('td', { cls: 'name judge', text: x.judge }) : null,
        AGENTS ? el('td', { cls: 'name agent', text: x.agent }) : null,
        BACKENDS ? el('td', { cls: 'name backend', text: x.backend }) : null,
        el('td', { text: x.polarity }),
        el('td', null, el('span', { cls: 'ev ev-' + x.verdict, text: String(x.verdict).toUpperCase() })),
        el('td', { cls: 'num', text: barText(x) }),
        el('td', { cls: 'num observed', text: fmtRate(x.observed) }),
        el('td', null, shown)));
    });
    wrap.appendChild(el('table', { cls: 'grid' }, el('thead', null, el('tr', null,
      ['set', 'level', 'model'].concat(subjectHeads(), JUDGES ? ['judge'] : [],
        AGENTS ? ['agent'] : [], BACKENDS ? ['backend'] : [], ['polarity', 'verdict', 'bar',
        'PASS k/n  95%', 'observed against the bar']).map(function (h) {
        return el('th', { text: h }); }))), tbody));
    return wrap;
  }

  /* ------------------------------------------------------------------ filters and rep list */

  /* the values a filter key takes on a rep, or on a cell's summary (every one of its reps') */
  function valuesOf(r, key) {
    if (key === 'flag') return flagNames(r);
    if (key === 'set' || key === 'level' || key === 'polarity') return [facts(r)[key]];
    if (key === 'verdict' && CELLS && r.verdicts) return r.verdicts;
    return [r[key]];
  }

  function cellMatches(cell) {
    return FILTER_KEYS.every(function (key) {
      var want = state.filters[key];
      return !want || valuesOf(cell, key).map(String).indexOf(want) >= 0;
    });
  }

  function values(key) {
    var seen = {};
    (CELLS || REPS).forEach(function (r) {
      var vs = valuesOf(r, key);
      vs.forEach(function (v) { if (v !== undefined && v !== null && v !== '') seen[v] = 1; });
    });
    return Object.keys(seen).sort();
  }

  function matches(rep) {
    var f = facts(rep);
    return FILTER_KEYS.every(function (key) {
      var want = state.filters[key];
      if (!want) return true;
      if (key === 'flag') return flagNames(rep).indexOf(want) >= 0;
      if (key === 'set' || key === 'level' || key === 'polarity') return f[key] === want;
      return String(rep[key]) === want;
    });
  }

  var listSection, listBody, listCount, selects = {};

  function filterBar() {
    var barNode = el('div', { cls: 'filters', id: 'filters' });
    FILTER_KEYS.forEach(function (key) {
      var sel = el('select', { name: key, id: 'filter-' + key, onchange: function () {
        state.filters[key] = sel.value; renderList();
      } });
      sel.appendChild(el('option', { value: '', text: 'any ' + key }));
      values(key).forEach(function (v) { sel.appendChild(el('option', { value: v, text: v })); });
      selects[key] = sel;
      barNode.appendChild(el('label', null, key + ' ', sel));
    });
    barNode.appendChild(el('button', { id: 'clear-filters', text: 'clear', onclick: function () {
      setFilters({});
    } }));
    return barNode;
  }

  function setFilters(f) {
    state.filters = f;
    FILTER_KEYS.forEach(function (k) { if (selects[k]) selects[k].value = f[k] || ''; });
    renderList();
    listSection.scrollIntoView({ block: 'start' });
  }

  function repsSection() {
    listCount = el('span', { id: 'rep-count' });
    listBody = el('tbody', { id: 'rep-rows' });
    listSection = el('section', { id: 'reps' },
      el('h2', null, 'Reps ', listCount), filterBar(),
      el('table', { cls: 'grid reps' }, el('thead', null, el('tr', null,
        ['scenario', 'model'].concat(SPLIT ? ['variant'] : [], ['rep', 'verdict', 'A', 'B',
          'reasons', 'flags', 'turns', 's', 'run']).map(function (h) {
          return el('th', { text: h }); }))), listBody));
    return listSection;
  }

  function listNote(text) {
    clear(listBody);
    listBody.appendChild(el('tr', null, el('td', { cls: 'muted', id: 'rep-note',
      colspan: SPLIT ? 12 : 11, text: text })));
  }

  /* A large page's list: the reps of the cells the filters can match, loaded on demand; at
     once when they are loaded already, so a filter inside an opened cell answers at once. */
  function renderCells() {
    var ticket = ++listTicket;
    var wanted = CELLS.filter(cellMatches);
    var n = wanted.reduce(function (a, c) { return a + c.count; }, 0);
    var narrowed = FILTER_KEYS.some(function (k) { return state.filters[k]; });
    if (!narrowed || n > LOAD_CAP) {
      listCount.textContent = (narrowed ? n + ' may match' : 'none loaded') + ' of ' + REP_COUNT;
      listNote(narrowed ? 'Too many reps to load at once (' + n + '): narrow the filters.' :
        'Open a cell in the overview, or choose a filter, to load its reps.');
      return;
    }
    var missing = wanted.filter(function (c) {
      var got = cellFiles[Number(c.file)];
      return !(got && got.reps);
    });
    if (!missing.length) {
      var loaded = [];
      wanted.forEach(function (c) { loaded = loaded.concat(cellFiles[Number(c.file)].reps); });
      drawList(loaded.filter(matches));
      return;
    }
    listCount.textContent = 'loading ' + n + ' of ' + REP_COUNT;
    listNote('Loading ' + n + ' reps\u2026');
    Promise.all(missing.map(loadCell)).then(function () {
      if (ticket === listTicket) renderCells();
    }, function (err) {
      if (ticket === listTicket) listNote(String(err && err.message || err));
    });
  }

  function renderList() {
    if (CELLS) renderCells(); else drawList(REPS.filter(matches));
  }

  function drawList(shown) {
    clear(listBody);
    var frag = document.createDocumentFragment();
    /* the first LIST_PAGE rows at once, the rest on request: a 2,000-rep list costs layout */
    var drawn = state.showAll ? shown : shown.slice(0, LIST_PAGE);
    drawn.forEach(function (r) {
      frag.appendChild(el('tr', { cls: 'click rep' + (state.selected === r.id ? ' sel' : ''),
        'data-rep': r.id, 'data-verdict': r.verdict,
        onclick: function () { openRep(r.id); } },
        el('td', { cls: 'name', text: r.scenario }),
        el('td', { cls: 'name', text: r.model }),
        SPLIT ? el('td', { cls: 'name variant', text: r.variant }) : null,
        el('td', { cls: 'num', text: r.rep }),
        el('td', null, verdictTag(r.verdict)),
        el('td', { text: r.a }), el('td', { text: r.b }),
        el('td', { cls: 'reasons', text: r.reasons.filter(function (t) {
          return r.flags.indexOf(t) < 0; }).join('; ') || '-' }),
        el('td', { cls: 'flags', text: r.flags.join('; ') || '-' }),
        el('td', { cls: 'num', text: r.turns }),
        el('td', { cls: 'num', text: (r.duration_ms / 1000).toFixed(1) }),
        el('td', { cls: 'run', text: r.run_id })));
    });
    if (drawn.length < shown.length) {
      frag.appendChild(el('tr', null, el('td', { colspan: SPLIT ? 12 : 11 }, el('button', { id: 'show-all-reps',
        cls: 'more', text: 'show all ' + shown.length + ' (' + (shown.length - drawn.length) +
          ' more)', onclick: function () { state.showAll = true; renderList(); } }))));
    }
    listBody.appendChild(frag);
    listCount.textContent = shown.length + ' of ' + REP_COUNT;
    listBody.setAttribute('data-loaded', '1');
    window.evalkitListDrawnAt = performance.now();
  }

  /* ------------------------------------------------------------------ drill-down */

  var detailSection;

  function openRep(id, other) {
    state.selected = id;
    state.compare = other === undefined ? null : other;
    Array.prototype.forEach.call(listBody.querySelectorAll('tr.sel'), function (tr) {
      tr.classList.remove('sel');
    });
    var row = listBody.querySelector('tr[data-rep="' + Number(id) + '"]');
    if (row) row.classList.add('sel');
    clear(detailSection);
    var cols = el('div', { cls: state.compare === null ? 'one' : 'two' });
    cols.appendChild(repPanel(BY_ID[id], true));
    if (state.compare !== null) cols.appendChild(repPanel(BY_ID[state.compare], false));
    detailSection.appendChild(cols);
    detailSection.scrollIntoView({ block: 'start' });
  }

  function kv(pairs) {
    var dl = el('dl', { cls: 'kv' });
    pairs.forEach(function (p) {
      if (p[1] === undefined || p[1] === null || p[1] === '') return;
      dl.appendChild(el('dt', { text: p[0] }));
      dl.appendChild(el('dd', { text: typeof p[1] === 'object' ? JSON.stringify(p[1]) : p[1] }));
    });
    return dl;
  }

  /* a large page offers the reps loaded so far */
  function compareChoices(rep) {
    return Object.keys(BY_ID).map(function (k) { return BY_ID[k]; }).filter(function (r) {
      return r.scenario === rep.scenario && r.id !== rep.id;
    });
  }

  function repPanel(rep, primary) {
    var panel = el('div', { cls: 'panel', 'data-rep': rep.id });
    panel.appendChild(el('h2', null, rep.scenario + ' \u00b7 ' + rep.model + ' \u00b7 rep ' + rep.rep + ' ',
      verdictTag(rep.verdict)));
    var f = facts(rep);
    panel.appendChild(kv([['set / level / polarity', [f.set, f.level, f.polarity].join(' / ')],
      ['axes', rep.a + '  ' + rep.b], ['run', rep.run_id], ['time', rep.time],
      ['bundle', rep.bundle_id], ['subject', rep.variant + ' ' + (rep.subject_hash || 'unknown')],
      ['model id', rep.model_id], ['CLI', rep.cli_version],
      ['evidence', rep.evidence]]));
    panel.appendChild(el('h3', { text: 'Reasons and flags' }));
    var ul = el('ul', { cls: 'reasons' });
    rep.reasons.forEach(function (t) {
      var flag = rep.flags.indexOf(t) >= 0;
      ul.appendChild(el('li', { cls: flag ? 'flag' : (isBreach(t) ? 'breach' : 'reason'),
        text: (flag ? 'flag: ' : '') + t }));
    });
    if (!rep.reasons.length) ul.appendChild(el('li', { text: '(none)' }));
    panel.appendChild(ul);
    var p = rep.process || {};
    panel.appendChild(el('h3', { text: 'Process' }));
    panel.appendChild(kv([['exit', p.exit_code], ['stopped', p.stopped], ['timeout (s)', p.timeout],
      ['seconds', p.seconds], ['turns', rep.turns], ['duration', rep.duration_ms + ' ms'],
      ['cost (estimate)', '$' + Number(rep.cost_usd_estimate || 0).toFixed(4)],
      ['guarded paths', p.guarded_env]]));
    if (!rep.found) panel.appendChild(el('p', { cls: 'banner warn', text: 'No evidence folder for this row.' }));
    if (primary) {
      var choices = compareChoices(rep);
      if (choices.length) {
        var sel = el('select', { id: 'compare-with', onchange: function () {
          openRep(rep.id, sel.value === '' ? undefined : Number(sel.value));
        } });
        sel.appendChild(el('option', { value: '', text: '(none)' }));
        choices.forEach(function (c) {
          var o = el('option', { value: c.id, text: c.model + ' rep ' + c.rep + ' ' + c.verdict });
          if (state.compare === c.id) o.selected = true;
          sel.appendChild(o);
        });
        panel.appendChild(el('p', { cls: 'compare' }, 'Side by side with the same scenario: ', sel));
      }
    }
    var body = el('div', { cls: 'evidence' }, el('p', { cls: 'muted', text: 'Loading evidence\u2026' }));
    panel.appendChild(body);
    loadEvidence(rep.id).then(function (ev) {
      clear(body);
      renderEvidence(body, rep, ev);
    }, function (err) {
      clear(body);
      body.appendChild(el('p', { cls: 'banner warn', text: String(err && err.message || err) }));
    });
    return panel;
  }

  function renderEvidence(body, rep, ev) {
    body.appendChild(el('h3', { text: 'Judge' }));
    if (rep.judge) {
      body.appendChild(kv([['answer', rep.judge.answer], ['error', rep.judge.error],
        ['raw output', rep.judge.raw_output], ['prompt sha256', rep.judge.prompt_sha256],
        ['prompt rebuilt from rubric + final message', rep.judge_prompt_matches === true ?
          'matches the kept hash' : rep.judge_prompt_matches === false ? 'differs from the kept hash' : '']]));
      if (ev.judge_prompt) body.appendChild(collapsible('judge prompt', ev.judge_prompt, 'pre'));
    } else {
      body.appendChild(el('p', { cls: 'muted', text: 'The judge was not asked for this rep.' }));
    }
    Object.keys(ev.diffs || {}).forEach(function (name) {
      body.appendChild(el('h3', { text: name + '.diff' }));
      body.appendChild(diffView(ev.diffs[name]));
    });
    if (ev.stderr) {
      body.appendChild(el('h3', { text: 'stderr' }));
      body.appendChild(el('pre', { cls: 'stderr', text: ev.stderr }));
    }
    body.appendChild(el('h3', { text: 'Transcript' }));
    if (!ev.transcript) {
      body.appendChild(el('p', { cls: 'muted', text: 'No transcript kept.' }));
    } else {
      body.appendChild(timelineView(timeline(ev.transcript)));
    }
  }

  function diffView(text) {
    if (!text) return el('p', { cls: 'muted', text: '(no change)' });
    var pre = el('pre', { cls: 'diff' });
    var lines = text.split('\n');
    var frag = document.createDocumentFragment();
    lines.forEach(function (line) {
      var cls = 'ctx';
      if (line.indexOf('diff --git') === 0 || line.indexOf('+++') === 0 || line.indexOf('---') === 0 ||
          line.indexOf('index ') === 0 || line.indexOf('new file') === 0 || line.indexOf('deleted file') === 0) cls = 'hdr';
      else if (line.charAt(0) === '+') cls = 'add';
      else if (line.charAt(0) === '-') cls = 'del';
      else if (line.indexOf('@@') === 0) cls = 'hunk';
      frag.appendChild(el('span', { cls: 'dl ' + cls, text: line + '\n' }));
    });
    pre.appendChild(frag);
    return pre;
  }

  var LONG = 6000;

  function textBlock(text, cls) {
    text = typeof text === 'string' ? text : JSON.stringify(text, null, 2);
    var pre = el('pre', { cls: cls || '' });
    if (text.length <= LONG) { pre.textContent = text; return pre; }
    pre.textContent = text.slice(0, LONG);
    var more = el('button', { cls: 'more', text: 'show all ' + text.length + ' characters',
      onclick: function () { pre.textContent = text; more.remove(); } });
    return el('div', null, pre, more);
  }

  function collapsible(summary, text, cls) {
    return el('details', null, el('summary', { text: summary }), textBlock(text, cls));
  }

  function resultText(content) {
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) {
      return content.map(function (c) { return c && typeof c.text === 'string' ? c.text : ''; }).join('\n');
    }
    return content === undefined ? '' : JSON.stringify(content);
  }

  function timeline(lines) {
    var items = [];
    var calls = {};
    lines.forEach(function (raw, index) {
      if (!raw.trim()) return;
      var ev;
      try { ev = JSON.parse(raw); } catch (e) { ev = null; }
      if (!ev || typeof ev !== 'object') {
        items.push({ kind: 'bad', line: index + 1, text: raw });
        return;
      }
      var type = ev.type;
      if (type === 'system') {
        if (ev.subtype === 'init') items.push({ kind: 'init', ev: ev });
        else if (ev.subtype === 'hook_started' || ev.subtype === 'hook_response') items.push({ kind: 'hook', ev: ev });
        else if (ev.subtype === 'api_retry') items.push({ kind: 'retry', ev: ev });
        else items.push({ kind: 'system', ev: ev });
      } else if (type === 'assistant') {
        var msg = ev.message || {};
        (Array.isArray(msg.content) ? msg.content : []).forEach(function (b) {
          if (!b || typeof b !== 'object') return;
          if (b.type === 'text') items.push({ kind: 'text', text: b.text, synthetic: msg.model === '<synthetic>' });
          else if (b.type === 'thinking') items.push({ kind: 'thinking', text: b.thinking });
          else if (b.type === 'tool_use') {
            var call = { kind: 'call', name: b.name, input: b.input, id: b.id, result: null };
            if (typeof b.id === 'string') calls[b.id] = call;
            items.push(call);
          }
        });
      } else if (type === 'user') {
        var content = ev.message ? ev.message.content : null;
        if (typeof content === 'string') items.push({ kind: 'user', text: content });
        (Array.isArray(content) ? content : []).forEach(function (b) {
          if (!b || typeof b !== 'object') return;
          if (b.type === 'tool_result') {
            var r = { text: resultText(b.content), isError: b.is_error === true };
            var owner = calls[b.tool_use_id];
            if (owner) owner.result = r; else items.push({ kind: 'orphan', result: r });
          } else if (b.type === 'text') {
            items.push({ kind: ev.isSynthetic ? 'synthetic' : 'user', text: b.text });
          }
        });
      } else if (type === 'result') {
        items.push({ kind: 'result', ev: ev });
      } else {
        items.push({ kind: 'system', ev: ev });
      }
    });
    return items;
  }

  function item(kind, title, children) {
    return el('li', { cls: 'tl tl-' + kind }, el('div', { cls: 'tl-head', text: title }), children);
  }

  function renderItem(it) {
    var ev = it.ev || {};
    switch (it.kind) {
      case 'init':
        return item('init', 'session start \u00b7 model ' + (ev.model || '?') + ' \u00b7 CLI ' +
          (ev.claude_code_version || '?'), kv([['cwd', ev.cwd], ['plugins',
            (ev.plugins || []).map(function (p) { return p && p.name; }).join(', ')]]));
      case 'hook':
        return item('hook', 'hook ' + (ev.subtype === 'hook_started' ? 'started' : 'response') + ': ' +
          (ev.hook_name || ev.hook_event || '') + (ev.outcome ? ' \u00b7 ' + ev.outcome : '') +
          (ev.exit_code !== undefined && ev.exit_code !== null ? ' \u00b7 exit ' + ev.exit_code : ''),
          ev.output ? textBlock(ev.output) : null);
      case 'retry':
        return item('retry', 'API retry ' + ev.attempt + ' \u00b7 ' + (ev.error_status || '') + ' ' + (ev.error || ''));
      case 'text':
        return item(it.synthetic ? 'error' : 'text', it.synthetic ? 'assistant (synthetic error)' : 'assistant', textBlock(it.text));
      case 'thinking':
        return item('thinking', 'thinking', collapsible('thinking', it.text));
      case 'call':
        return item('call', 'tool call: ' + it.name, [
          el('div', { cls: 'io' }, el('span', { cls: 'io-label', text: 'input' }),
            textBlock(JSON.stringify(it.input, null, 2), 'input')),
          it.result ? el('div', { cls: 'io' + (it.result.isError ? ' err' : '') },
            el('span', { cls: 'io-label', text: it.result.isError ? 'result (error)' : 'result' }),
            textBlock(it.result.text, 'result')) : el('p', { cls: 'muted', text: 'no result recorded' })]);
      case 'orphan':
        return item('call', 'tool result without its call', textBlock(it.result.text));
      case 'user':
        return item('user', 'user', textBlock(it.text));
      case 'synthetic':
        return item('synthetic', 'injected (skill body or system text)', collapsible('show', it.text));
      case 'result':
        return item(ev.is_error ? 'error' : 'result', 'final result \u00b7 ' +
          (ev.is_error ? 'error ' : '') + (ev.terminal_reason || ev.subtype || ''), [
            kv([['turns', ev.num_turns], ['duration', ev.duration_ms + ' ms'],
              ['cost', ev.total_cost_usd === undefined ? '' : '$' + Number(ev.total_cost_usd).toFixed(4)],
              ['API error status', ev.api_error_status]]),
            ev.result ? textBlock(ev.result) : null]);
      case 'bad':
        return item('error', 'line ' + it.line + ' is not JSON', textBlock(it.text));
      default:
        return item('system', 'event: ' + (ev.type || '?') + (ev.subtype ? '/' + ev.subtype : ''),
          collapsible('raw', JSON.stringify(ev, null, 2)));
    }
  }

  function timelineView(items) {
    var PAGE = 300;
    var list = el('ol', { cls: 'timeline' });
    var shown = 0;
    var more = el('button', { cls: 'more' });
    function next() {
      var frag = document.createDocumentFragment();
      items.slice(shown, shown + PAGE).forEach(function (it) { frag.appendChild(renderItem(it)); });
      shown = Math.min(items.length, shown + PAGE);
      list.appendChild(frag);
      more.textContent = 'show ' + Math.min(PAGE, items.length - shown) + ' more of ' + (items.length - shown);
      more.style.display = shown < items.length ? '' : 'none';
    }
    more.addEventListener('click', next);
    next();
    return el('div', null, list, more);
  }

  /* ------------------------------------------------------------------ page */

  function render() {
    clear(app);
    var t0 = performance.now();
    app.appendChild(header());
    app.appendChild(overview());
    app.appendChild(repsSection());
    detailSection = el('section', { id: 'detail' },
      el('p', { cls: 'muted', text: 'Click a rep to see what the agent did.' }));
    app.appendChild(detailSection);
    renderList();
    window.evalkitRenderMs = performance.now() - t0;
    document.body.setAttribute('data-ready', '1');
  }

  render();
})();
