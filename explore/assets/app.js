// vomc explore: the page. Plain JS, no dependencies, no network beyond the
// server that sent it (or none: a static page carries its data in
// #vomc-bundle). Positions are 0-based query positions t: everything "at t"
// is after reading x[0..t]; the loss at t is −ln P(x[t+1] | x[0..t]).
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k === 'style') e.style.cssText = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of kids) if (c != null) e.append(c);
    return e;
  };
  const fmt = (v, d = 4) => (v == null || Number.isNaN(v)) ? '–' : !Number.isFinite(v) ? (v > 0 ? '∞' : '−∞') : (Math.abs(v) < 1e-4 && v !== 0 ? v.toExponential(1) : v.toFixed(d));

  // ---------- data sources: the live server, or a static bundle ----------
  const bundleEl = document.getElementById('vomc-bundle');
  // revive reads vomc's JSON floats (package jsonfloat): the strings
  // "NaN", "+Inf" and "-Inf" stand for the non-finite numbers.
  const nonFinite = new Map([['NaN', NaN], ['+Inf', Infinity], ['-Inf', -Infinity]]);
  const revive = (k, v) => (typeof v === 'string' && nonFinite.has(v)) ? nonFinite.get(v) : v;
  const bundle = bundleEl ? JSON.parse(bundleEl.textContent, revive) : null;

  async function getJSON(url) {
    for (;;) {
      const r = await fetch(url);
      const body = await r.text().then((t) => JSON.parse(t, revive)).catch(() => ({ error: `HTTP ${r.status}` }));
      if (r.status === 202) { await new Promise((f) => setTimeout(f, 400)); continue; }
      if (!r.ok) throw new Error(body.error || `HTTP ${r.status}`);
      return body;
    }
  }
  const winQ = (win) => win.seq != null ? 'seq=' + encodeURIComponent(win.seq) : 'w=' + win.w;
  const stepQ = (step) => step == null || step < 0 ? 'final' : String(step);

  const live = {
    meta: () => getJSON('api/meta'),
    refs: (win) => getJSON(`api/refs?${winQ(win)}`),
    model: (win, m, step) => getJSON(`api/model?${winQ(win)}&model=${m}&step=${stepQ(step)}`),
    async position(win, t, m, step, ivq) {
      const p = await getJSON(`api/position?${winQ(win)}&t=${t}&model=${m}&step=${stepQ(step)}&rows=b64${ivq || ''}`);
      for (const h of p.heads) { h.row = Array.from(b64floats(h.row_b64)); delete h.row_b64; }
      return p;
    },
    labels: (m, step) => getJSON(`api/labels?model=${m}&step=${stepQ(step)}`),
    mean: (m, step) => getJSON(`api/mean?model=${m}&step=${stepQ(step)}`),
    async map(win, m, step, l, h) {
      const r = await fetch(`api/map?${winQ(win)}&model=${m}&step=${stepQ(step)}&layer=${l}&head=${h}`);
      if (!r.ok) throw new Error((await r.json().catch(() => ({}))).error || `HTTP ${r.status}`);
      const T = +r.headers.get('X-Rows');
      return { T, data: new Float32Array(await r.arrayBuffer()) };
    },
  };

  // suffixMatches is attnmap.SuffixMatches: the positions j < q whose
  // length-k context (ending at j − offset) equals x[q−k+1..q].
  function suffixMatches(x, q, k, offset) {
    const out = [];
    if (q < k - 1) return out;
    for (let j = Math.max(0, k - 1 + offset); j < q; j++) {
      let ok = true;
      for (let i = 0; i < k; i++) if (x[j - offset - i] !== x[q - i]) { ok = false; break; }
      if (ok) out.push(j);
    }
    return out;
  }

  function b64floats(s) {
    const bin = atob(s);
    const b = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) b[i] = bin.charCodeAt(i);
    return new Float32Array(b.buffer);
  }

  // the static source answers from the bundle, as the server would
  const fixed = bundle && (() => {
    const T = bundle.refs.T;
    const full = {}; // "m/l/h" → T×T Float32Array
    const mapOf = (m, l, h) => {
      const key = `${m}/${l}/${h}`;
      if (!full[key]) {
        const tri = b64floats(bundle.models[m].maps[l][h]);
        const a = new Float32Array(T * T);
        let p = 0;
        for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) a[i * T + j] = tri[p++];
        full[key] = a;
      }
      return full[key];
    };
    const need = (win) => { if (win.seq != null || win.w !== bundle.refs.index) throw new Error(`this static page holds window ${bundle.refs.index} only`); };
    return {
      meta: async () => bundle.meta,
      refs: async (win) => { need(win); return bundle.refs; },
      model: async (win, m) => { need(win); return bundle.models[m].view; },
      labels: async (m) => bundle.models[m].labels,
      mean: async (m) => { if (!bundle.models[m].mean) throw new Error('no mean curves in this page'); return bundle.models[m].mean; },
      async map(win, m, step, l, h) { need(win); return { T, data: mapOf(m, l, h) }; },
      async position(win, t, m) {
        need(win);
        const R = bundle.refs, mv = bundle.models[m].view, A = R.A, x = R.x;
        const p = { key: R.key, t, symbol: x[t], next: t + 1 < T ? x[t + 1] : -1, model: m, step: -1, max_k: bundle.meta.max_k,
          omega: R.omega[t], map: bundle.map[t], map_log_posterior: bundle.map_log_posterior[t],
          true: R.true ? R.true[t] : null, posterior: R.posterior ? R.posterior[t] : null, dist: [], heads: [], matches: [[], []] };
        let om = 0; p.omega.forEach((w, l) => { if (w > p.omega[om]) om = l; }); p.omega_max = om;
        for (const s of R.refs.concat([mv])) {
          const d = { name: s.name, kind: s.kind };
          if (t + 1 < T) { d.p = s.p.slice(t * A, (t + 1) * A); d.loss = s.loss[t]; }
          p.dist.push(d);
        }
        for (let o = 0; o < 2; o++) for (let k = 0; k <= p.max_k; k++) p.matches[o].push(suffixMatches(x, t, k, o));
        const labels = bundle.models[m].labels;
        bundle.meta.models[m].config.heads.forEach((H, l) => {
          for (let h = 0; h < H; h++) {
            const a = mapOf(m, l, h);
            p.heads.push({ layer: l, head: h, row: Array.from(a.subarray(t * T, t * T + t + 1)), label: labels[l][h] });
          }
        });
        return p;
      },
    };
  })();
  const src = fixed || live;

  // ---------- state ----------
  const S = {
    meta: null, win: { w: 0, seq: null }, t: 0, model: 0, stepIdx: 0, k: 3, offset: 1, smooth: 4,
    curveMode: 'window', keys: '64', gamma: 0.5, scale: 'view', hidden: new Set(),
    refs: null, views: [], pos: null, mean: null, head: null, map: null, view: null, styles: {},
    iv: {}, // "l,h" → 'off' or the head's exact pattern ('offset:1', 'suffix:3'): the heads intervened on
    busy: 0, ready: false, seq: 0,
  };
  const api = { state: S, src, suffixMatches, setT: (t) => setT(t), selectHead: (l, h) => selectHead(l, h), setWindow: (w) => setWindow(w), setStep: (i) => setStepIdx(i), setIntervention: (iv) => { S.iv = iv; loadPosition(); }, loaded: false };
  window.vomcExplore = api;

  const steps = () => { const m = S.meta.models[S.model]; return m.steps.concat([-1]); };
  const curStep = () => steps()[S.stepIdx];
  const stepName = (s) => s < 0 ? 'final' : 'step ' + s;

  function status(msg, err) {
    const s = $('status');
    s.textContent = msg || '';
    s.className = 'status' + (err ? ' error' : '');
  }
  async function guarded(f) {
    S.busy++;
    try { return await f(); } catch (e) { status(String(e.message || e), true); throw e; } finally { S.busy--; }
  }

  // ---------- start ----------
  async function start() {
    S.meta = await src.meta();
    const M = S.meta;
    S.k = Math.min(3, M.max_k);
    S.keys = M.T <= 512 ? 'all' : '256';
    $('keys').value = S.keys;
    $('data-info').innerHTML = '';
    $('data-info').append(el('span', {}, M.data), el('span', { class: 'dim' }, ` ${M.prior}, N=${M.T}`));
    $('win').max = M.windows - 1;
    $('win-count').textContent = `of ${M.windows}`;
    M.models.forEach((m, i) => $('model').append(el('option', { value: i }, m.name)));
    for (let k = 1; k <= M.max_k; k++) $('k').append(el('option', { value: k }, String(k)));
    $('k').value = S.k;
    M.styles = M.styles || {};
    $('foot').textContent = `References: ${M.refs.map((r) => r.name + (r.note ? ` (${r.note})` : '')).join('; ')}. Excess over ${M.excess}. ` +
      `Head labels: attnmap's null test on ${M.head_windows} windows (Bonferroni-corrected p). ` + (M.notes || []).join('; ');
    if (M.static) {
      for (const id of ['win-prev', 'win-next', 'win', 'paste', 'paste-go']) $(id).disabled = true;
      $('curve-mode').querySelector('option[value=mean]').disabled = !bundle.models[0].mean;
    }
    const u = new URLSearchParams(location.hash.slice(1));
    if (u.has('w')) S.win = { w: +u.get('w'), seq: null };
    if (u.has('seq')) { S.win = { w: null, seq: u.get('seq') }; $('paste').value = S.win.seq; }
    if (M.static) S.win = { w: bundle.refs.index, seq: null };
    if (u.has('model')) S.model = Math.min(+u.get('model'), M.models.length - 1);
    $('model').value = S.model;
    S.stepIdx = steps().length - 1;
    if (u.has('step')) { const i = steps().indexOf(u.get('step') === 'final' ? -1 : +u.get('step')); if (i >= 0) S.stepIdx = i; }
    bind();
    setupSteps();
    await loadWindow(u.has('t') ? +u.get('t') : (M.static ? bundle.t : null));
    api.loaded = true;
  }

  function bind() {
    $('win-prev').onclick = () => setWindow((S.win.w || 0) - 1);
    $('win-next').onclick = () => setWindow((S.win.w || 0) + 1);
    $('win').onchange = () => setWindow(+$('win').value);
    $('paste-go').onclick = () => { const v = $('paste').value.trim(); if (v) { S.win = { w: null, seq: v }; loadWindow(null); } };
    $('paste').onkeydown = (e) => { if (e.key === 'Enter') $('paste-go').click(); e.stopPropagation(); };
    $('model').onchange = () => { S.model = +$('model').value; S.stepIdx = steps().length - 1; S.head = null; S.iv = {}; setupSteps(); loadModels(); };
    $('k').onchange = () => { S.k = +$('k').value; renderPosition(); };
    $('offset').onchange = () => { S.offset = +$('offset').value; renderPosition(); };
    $('smooth').onchange = () => { S.smooth = +$('smooth').value; drawCurves(); };
    $('curve-mode').onchange = () => { S.curveMode = $('curve-mode').value; loadMean(); };
    $('keys').onchange = () => { S.keys = $('keys').value; renderHeads(); };
    $('gamma').onchange = () => { S.gamma = +$('gamma').value; drawMap(); };
    $('scale').onchange = () => { S.scale = $('scale').value; drawMap(); };
    $('step').oninput = () => setStepIdx(+$('step').value);
    $('step').onchange = () => $('step').blur(); // the arrow keys move t again
    $('map-full').onclick = () => { mapReset(); };
    $('map-around').onclick = () => { mapAround(); };
    for (const id of ['loss', 'excess']) {
      const c = $(id);
      c.addEventListener('click', (e) => setT(chartT(c, e)));
      c.addEventListener('mousemove', (e) => hoverChart(c, e));
      c.addEventListener('mouseleave', () => drawCurves());
    }
    document.addEventListener('keydown', (e) => {
      if (e.target.tagName === 'INPUT') return; // typing, or the step slider's own keys
      if (e.target.tagName === 'SELECT') return;
      const T = S.refs ? S.refs.T : 0, step = e.shiftKey ? 10 : 1;
      let done = true;
      switch (e.key) {
        case 'ArrowRight': setT(Math.min(T - 1, S.t + step)); break;
        case 'ArrowLeft': setT(Math.max(0, S.t - step)); break;
        case 'Home': setT(0); break;
        case 'End': setT(T - 2); break;
        case '[': setWindow((S.win.w || 0) - 1); break;
        case ']': setWindow((S.win.w || 0) + 1); break;
        case 'ArrowDown': moveHead(1); break;
        case 'ArrowUp': moveHead(-1); break;
        case 'Escape': mapReset(); break;
        default: done = false;
      }
      if (done) e.preventDefault();
    });
    window.addEventListener('resize', () => { drawCurves(); renderHeads(); });
    setupMapEvents();
  }

  function saveHash() {
    if (S.meta.static) return;
    const u = new URLSearchParams();
    if (S.win.seq == null) u.set('w', S.win.w); else u.set('seq', S.win.seq);
    u.set('t', S.t); u.set('model', S.model); u.set('step', stepQ(curStep()));
    history.replaceState(null, '', '#' + u.toString());
  }

  async function setWindow(w) {
    if (S.meta.static) return;
    w = Math.max(0, Math.min(S.meta.windows - 1, w | 0));
    S.win = { w, seq: null };
    await loadWindow(S.t);
  }

  async function loadWindow(t) {
    await guarded(async () => {
      status('loading the window…');
      $('win').value = S.win.w != null ? S.win.w : '';
      S.refs = await src.refs(S.win);
      S.mean = null;
      if (S.curveMode === 'mean') S.curveMode = 'window', $('curve-mode').value = 'window';
      const T = S.refs.T;
      S.t = Math.max(0, Math.min(T - 1, t == null ? Math.min(T - 2, Math.floor(T * 0.94)) : t));
      await loadModels();
    });
  }

  async function loadModels() {
    await guarded(async () => {
      status('running the models…');
      const M = S.meta;
      S.views = await Promise.all(M.models.map((m, i) => src.model(S.win, i, i === S.model ? curStep() : -1)));
      assignStyles();
      drawCurves();
      renderStrip();
      await loadPosition();
      if (S.curveMode === 'mean') await loadMean();
      status('');
    });
  }

  // styles: the excess reference black, the models first in the palette
  const PALETTE = ['#e69f00', '#56b4e9', '#009e73', '#f0e442', '#0072b2', '#d55e00', '#cc79a7', '#332288', '#88ccee', '#44aa99', '#117733', '#999933', '#ddcc77', '#cc6677', '#882255', '#aa4499'];
  const DASHES = [[], [6, 3], [1.5, 2], [7, 2.5, 1.5, 2.5]];
  function assignStyles() {
    if (Object.keys(S.styles).length) return;
    let k = 0;
    const names = S.views.map((v) => v.name).concat(S.refs.refs.map((r) => r.name));
    for (const n of names) {
      if (n === S.meta.excess) { S.styles[n] = { color: '#000', dash: [] }; continue; }
      if (S.styles[n]) continue;
      S.styles[n] = { color: PALETTE[k % 16], dash: DASHES[(k + Math.floor(k / 16)) % 4] };
      k++;
    }
    S.styles['source tree'] = { color: '#8a8f96', dash: [1.5, 2] };
  }

  function setStepIdx(i) {
    S.stepIdx = Math.max(0, Math.min(steps().length - 1, i));
    $('step').value = S.stepIdx;
    renderStepInfo();
    clearTimeout(S.stepTimer);
    S.stepTimer = setTimeout(() => { S.mean = null; loadModels().then(() => { if (S.head) loadMap(); }); }, 120);
  }

  // ---------- the step slider with the dynamics' phases ----------
  function setupSteps() {
    const m = S.meta.models[S.model], st = steps();
    $('steps').classList.toggle('hidden', m.steps.length === 0);
    if (!m.steps.length) return;
    $('step').max = st.length - 1;
    $('step').value = S.stepIdx;
    renderStepInfo();
    const svg = $('phases');
    svg.innerHTML = '';
    const W = svg.clientWidth || 900, n = st.length;
    const xOf = (i) => 8 + (W - 16) * (n > 1 ? i / (n - 1) : 0.5); // the range input's thumb centres
    // a step past the last snapshot is the final model's (a run measured
    // with its last snapshot, which is model.safetensors, left out)
    const idxOf = (step) => {
      const i = st.indexOf(step);
      if (i >= 0) return i;
      if (step > m.steps[m.steps.length - 1]) return n - 1;
      let best = 0; st.forEach((s, j) => { if (s >= 0 && Math.abs(s - step) < Math.abs(st[best] - step)) best = j; });
      return best;
    };
    const NS = 'http://www.w3.org/2000/svg';
    const add = (tag, attrs, text) => { const e = document.createElementNS(NS, tag); for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v); if (text != null) e.textContent = text; svg.append(e); return e; };
    const anchor = (i) => i === 0 ? 'start' : i === n - 1 ? 'end' : 'middle';
    for (let i = 0; i < n; i++) {
      add('line', { x1: xOf(i), x2: xOf(i), y1: 32, y2: 38, stroke: '#9aa4af' });
      add('text', { x: xOf(i) + (i === 0 ? -6 : i === n - 1 ? 6 : 0), y: 47, 'font-size': 10, 'text-anchor': anchor(i), fill: '#6b7480' }, st[i] < 0 ? 'final' : String(st[i]));
    }
    const dyn = m.dynamics;
    if (!dyn) {
      add('text', { x: 8, y: 14, 'font-size': 11, fill: '#6b7480' }, 'no dynamics measured: run vomc dynamics --run DIR --data TEST to mark the phases and head emergence here');
      return;
    }
    const cols = ['#cfe3f3', '#fde2c5', '#d4eedf', '#f3d4e4', '#e7e3c4', '#dcd6f0'];
    const colOf = {};
    // each phase a band from half-way to the previous snapshot to half-way to the next
    const half = W / Math.max(1, n - 1) / 2;
    dyn.phases.forEach((ph) => {
      const ia = idxOf(ph.from_step), ib = idxOf(ph.to_step);
      const a = Math.max(0, xOf(ia) - half), b = Math.min(W, xOf(ib) + half);
      const name = ph.closest + (ph.tied_with && ph.tied_with.length ? ' ≈ ' + ph.tied_with.join(' ≈ ') : '');
      if (!(ph.closest in colOf)) colOf[ph.closest] = cols[Object.keys(colOf).length % cols.length];
      const r = add('rect', { x: a + 1, y: 2, width: Math.max(4, b - a - 2), height: 17, rx: 3, fill: colOf[ph.closest] });
      r.append(Object.assign(document.createElementNS(NS, 'title'), { textContent: `closest algorithm: ${name}, steps ${ph.from_step}–${ph.to_step}` }));
      const label = [ph.closest].concat(ph.tied_with || []).map(shortName).join(' ≈ ');
      add('text', { x: (a + b) / 2, y: 14, 'font-size': 10.5, 'text-anchor': 'middle', fill: '#1d2228' }, label);
    });
    const byStep = {};
    dyn.emergences.forEach((e) => { (byStep[e.step] = byStep[e.step] || []).push(e); });
    for (const [step, es] of Object.entries(byStep)) {
      const x = xOf(idxOf(+step));
      const g = add('path', { d: `M${x - 4},21 L${x + 4},21 L${x},29 Z`, fill: '#d55e00' });
      g.append(Object.assign(document.createElementNS(NS, 'title'), { textContent: es.map((e) => `L${e.layer}H${e.head} ${e.hypothesis} from step ${e.step}`).join('\n') }));
      const right = x > W - 160;
      add('text', { x: right ? x - 7 : x + 7, y: 29, 'font-size': 9.5, 'text-anchor': right ? 'end' : 'start', fill: '#d55e00' }, 'new: ' + es.map((e) => `L${e.layer}H${e.head}`).join(' '));
    }
  }
  function renderStepInfo() {
    const m = S.meta.models[S.model], s = curStep();
    $('step-label').textContent = s < 0 ? 'final' : String(s);
    let info = '';
    const dyn = m.dynamics;
    if (dyn) {
      const last = dyn.points[dyn.points.length - 1];
      const p = s < 0 ? (last && last.step > m.steps[m.steps.length - 1] ? last : null) : dyn.points.find((p) => p.step === s);
      if (p) info = `closest algorithm: ${[p.closest].concat(p.tied_with || []).map(shortName).join(' ≈ ')} · excess over ${shortName(dyn.excess_reference)} ${fmt(p.excess)} nats/symbol (whole window; ${fmt(p.excess_half)} second half; ${dyn.windows} windows of vomc dynamics) · ${p.labelled_heads} labelled heads`;
      else if (s < 0) info = 'the final parameters (model.safetensors)';
    }
    $('step-info').textContent = info;
  }
  // a method's name without its prior's λ and α ("CTW(D=3)", "Markov(k=2)",
  // "Unigram"); a model's as "RUN · TF(4,4) E=32"
  const shortName = (n) => {
    const m = /^TF\(L=\d+,H=\[([\d,]+)\],E=(\d+),N=\d+([^)]*)\)@(.*)$/.exec(n);
    if (m) return `${m[4]} · TF(${m[1]})${m[3]} E=${m[2]}`;
    return n.replace(/,?[λα]=[^,)]*/g, '').replace('(,', '(').replace('()', '');
  };
  api.shortName = shortName;

  // ---------- curves ----------
  function smooth(a, w) {
    if (w <= 1) return a;
    const out = new Array(a.length), h = Math.floor(w / 2);
    const ps = [0];
    let cnt = [0];
    for (let i = 0; i < a.length; i++) {
      const v = Number.isFinite(a[i]) ? a[i] : 0;
      ps.push(ps[i] + v); cnt.push(cnt[i] + (Number.isFinite(a[i]) ? 1 : 0));
    }
    for (let i = 0; i < a.length; i++) {
      const lo = Math.max(0, i - h), hi = Math.min(a.length, i + w - h);
      const c = cnt[hi] - cnt[lo];
      out[i] = c ? (ps[hi] - ps[lo]) / c : NaN;
    }
    return out;
  }

  function curves() {
    // [{name, loss[], kind}] of the chosen mode
    if (S.curveMode === 'mean' && S.mean) {
      const m = S.mean;
      return m.names.map((n, i) => ({ name: n, kind: m.kinds[i], loss: m.loss[i] }));
    }
    const out = S.refs.refs.map((r) => ({ name: r.name, kind: 'reference', loss: r.loss }));
    S.views.forEach((v) => out.push({ name: v.name, kind: 'model', loss: v.loss }));
    const iv = S.pos && S.pos.intervened;
    if (iv) out.push({ name: iv.dist.name, kind: 'model', loss: iv.loss });
    if (S.refs.source_loss) out.push({ name: 'source tree', kind: 'source', loss: S.refs.source_loss });
    return out;
  }

  function setupCanvas(c) {
    const r = window.devicePixelRatio || 1, w = c.clientWidth, h = c.height / (c._r || 1);
    if (!c._h) c._h = +c.getAttribute('height');
    c.width = w * r; c.height = c._h * r; c.style.height = c._h + 'px';
    c._r = r;
    const g = c.getContext('2d');
    g.setTransform(r, 0, 0, r, 0, 0);
    return { g, w, h: c._h };
  }
  const PAD = { l: 46, r: 10, t: 8, b: 20 };
  function chartT(c, e) {
    const rect = c.getBoundingClientRect(), T = S.refs.T;
    const x = (e.clientX - rect.left - PAD.l) / (rect.width - PAD.l - PAD.r);
    return Math.max(0, Math.min(T - 2, Math.round(x * (T - 2))));
  }

  function drawCurves(hoverT) {
    if (!S.refs) return;
    const cs = curves().filter((c) => c.kind !== 'source' || !S.hidden.has('source tree'));
    drawChart($('loss'), cs.filter((c) => !S.hidden.has(c.name)).map((c) => ({ name: c.name, y: smooth(c.loss, S.smooth) })), false, hoverT);
    const ref = cs.find((c) => c.name === S.meta.excess);
    const ex = [];
    if (ref) for (const c of cs) if (c.kind === 'model' && !S.hidden.has(c.name)) ex.push({ name: c.name, y: smooth(c.loss.map((v, i) => v - ref.loss[i]), S.smooth) });
    drawChart($('excess'), ex, true, hoverT);
    $('excess-title').textContent = `Excess over ${shortName(S.meta.excess)}: model − reference` + (S.curveMode === 'mean' && S.mean ? ` (mean of ${S.mean.windows} windows)` : ' (this window)');
    renderLegend(cs);
  }

  function drawChart(c, series, zero, hoverT) {
    const { g, w, h } = setupCanvas(c);
    g.clearRect(0, 0, w, h);
    const T = S.refs.T, n = T - 1;
    const X = (t) => PAD.l + (w - PAD.l - PAD.r) * (n > 1 ? t / (n - 1) : 0);
    let lo = Infinity, hi = -Infinity;
    for (const s of series) for (const v of s.y) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    if (!Number.isFinite(lo)) { lo = 0; hi = 1; }
    if (!zero) lo = Math.min(0, lo);
    if (zero) { const m = Math.max(Math.abs(lo), Math.abs(hi), 1e-3); lo = Math.min(lo, -0.05 * m); hi = Math.max(hi, 0.05 * m); }
    const pad = (hi - lo) * 0.05; lo -= zero ? pad : 0; hi += pad;
    const Y = (v) => PAD.t + (h - PAD.t - PAD.b) * (1 - (v - lo) / (hi - lo));
    g.font = '10px system-ui, sans-serif'; g.fillStyle = '#6b7480'; g.strokeStyle = '#e4e7eb'; g.lineWidth = 1;
    for (const v of niceTicks(lo, hi, 4)) {
      g.beginPath(); g.moveTo(PAD.l, Y(v)); g.lineTo(w - PAD.r, Y(v)); g.stroke();
      g.textAlign = 'right'; g.fillText(+v.toPrecision(3), PAD.l - 4, Y(v) + 3);
    }
    g.textAlign = 'center';
    for (const v of niceTicks(0, n - 1, 8)) g.fillText(v, X(v), h - 6);
    if (zero) { g.strokeStyle = '#000'; g.beginPath(); g.moveTo(PAD.l, Y(0)); g.lineTo(w - PAD.r, Y(0)); g.stroke(); }
    for (const s of series) {
      const st = S.styles[s.name] || { color: '#888', dash: [] };
      g.strokeStyle = st.color; g.setLineDash(st.dash); g.lineWidth = st.color === '#000' ? 1.6 : 1.4;
      g.beginPath();
      let pen = false;
      for (let t = 0; t < s.y.length; t++) {
        const v = s.y[t];
        if (!Number.isFinite(v)) { pen = false; continue; }
        if (pen) g.lineTo(X(t), Y(v)); else g.moveTo(X(t), Y(v));
        pen = true;
      }
      g.stroke();
    }
    g.setLineDash([]);
    if (S.t <= n - 1) { g.strokeStyle = '#c0392b'; g.lineWidth = 1.5; g.beginPath(); g.moveTo(X(S.t), PAD.t); g.lineTo(X(S.t), h - PAD.b); g.stroke(); }
    if (hoverT != null) {
      g.strokeStyle = 'rgba(0,0,0,.3)'; g.lineWidth = 1; g.beginPath(); g.moveTo(X(hoverT), PAD.t); g.lineTo(X(hoverT), h - PAD.b); g.stroke();
      g.textAlign = 'left'; g.fillStyle = '#1d2228'; g.fillText(`t=${hoverT}`, Math.min(X(hoverT) + 4, w - 40), PAD.t + 10);
    }
    c._series = series;
  }

  function niceTicks(lo, hi, n) {
    const span = hi - lo; if (!(span > 0)) return [lo];
    const step0 = span / n, mag = Math.pow(10, Math.floor(Math.log10(step0)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= step0) || 10 * mag;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-12; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    return out;
  }

  function hoverChart(c, e) { drawCurves(chartT(c, e)); }

  function renderLegend(cs) {
    const L = $('legend');
    L.innerHTML = '';
    for (const c of cs) {
      const st = S.styles[c.name] || { color: '#888', dash: [] };
      const sp = el('span', { class: S.hidden.has(c.name) ? 'off' : '', title: 'click to hide or show' },
        el('i', { style: `border-top-color:${st.color};border-top-style:${st.dash.length ? (st.dash[0] < 2 ? 'dotted' : 'dashed') : 'solid'}` }), shortName(c.name));
      sp.title = c.name + ' — click to hide or show';
      sp.onclick = () => { S.hidden.has(c.name) ? S.hidden.delete(c.name) : S.hidden.add(c.name); drawCurves(); };
      L.append(sp);
    }
  }

  async function loadMean() {
    if (S.curveMode !== 'mean') { drawCurves(); return; }
    await guarded(async () => {
      status(`averaging over ${S.meta.mean_windows} windows…`);
      S.mean = await src.mean(S.model, curStep());
      status('');
      drawCurves();
    });
  }

  // ---------- position ----------
  function setT(t) {
    if (!S.refs) return;
    S.t = Math.max(0, Math.min(S.refs.T - 1, t | 0));
    drawCurves();
    renderStrip();
    loadPosition();
  }

  async function loadPosition() {
    const my = ++S.seq;
    await guarded(async () => {
      const t0 = performance.now();
      const p = await src.position(S.win, S.t, S.model, curStep(), ivQuery());
      if (my !== S.seq) return; // a newer click won
      const t1 = performance.now();
      const had = S.pos && S.pos.intervened;
      S.pos = p;
      renderPosition();
      if (had || p.intervened) drawCurves();
      saveHash();
      const t2 = performance.now();
      if (S.head) drawMap(); else selectHead(defaultHead().layer, defaultHead().head);
      // the last click's time in ms: the answer, the page, the map
      S.timing = { fetch: t1 - t0, render: t2 - t1, map: performance.now() - t2 };
      if (p.labels_pending) setTimeout(() => { if (my === S.seq) loadPosition(); }, 700);
    });
  }

  // ---------- interventions: heads switched off or set to their pattern ----------
  // ivQuery is the position request's ablate= and pattern= for S.iv.
  function ivQuery() {
    const off = [], pat = [];
    for (const [k, v] of Object.entries(S.iv)) {
      const [l, h] = k.split(',').map(Number), name = `L${l + 1}H${h + 1}`;
      if (v === 'off') off.push(name); else pat.push(`${name}=${v}`);
    }
    return (off.length ? '&ablate=' + encodeURIComponent(off.join('+')) : '') + (pat.length ? '&pattern=' + encodeURIComponent(pat.join('+')) : '');
  }

  // headPattern is the exact pattern of a head's label: offset:d for a
  // relative-position head, suffix:k for a suffix-match head at offset 1;
  // null for other heads.
  function headPattern(lab) {
    if (!lab || !lab.labelled) return null;
    const b = lab.best;
    if (b.kind === 'relative') return `offset:${b.d}`;
    if (b.kind === 'suffix-match' && b.offset === 1 && b.k >= 1) return `suffix:${b.k}`;
    return null;
  }

  // cycleHead moves a head on → off → its pattern (when it has one) → on.
  function cycleHead(l, h, lab) {
    const k = `${l},${h}`, cur = S.iv[k], pat = headPattern(lab);
    if (cur == null) S.iv[k] = 'off';
    else if (cur === 'off' && pat) S.iv[k] = pat;
    else delete S.iv[k];
    loadPosition();
  }

  function renderIntervened(p) {
    const box = $('iv-info');
    box.innerHTML = '';
    const iv = p.intervened;
    box.classList.toggle('hidden', !iv);
    if (!iv) return;
    const ref = shortName(iv.reference), d = (a, b) => (a == null || b == null) ? null : a - b;
    const num = (id, v, digits) => el('b', { id, 'data-value': v == null ? '' : String(v) }, fmt(v, digits));
    box.append(el('div', {}, 'Intervention: ', el('span', { class: 'mono', id: 'iv-spec' }, iv.spec),
      el('span', { class: 'dim' }, ' — click a head\'s switch to change it; ', el('span', { class: 'mono' }, 'vomc eval --methods tf:path=DIR:' + iv.spec), ' evaluates the same model')));
    box.append(el('div', {}, `excess over ${ref} at t: `, num('iv-excess', iv.excess, 4), ' intervened vs ', num('iv-model-excess', iv.model_excess, 4),
      ' intact (Δ ', num('iv-delta', d(iv.excess, iv.model_excess), 4), ')'));
    box.append(el('div', {}, 'over this window: ', num('iv-mean-excess', iv.mean_excess, 4), ' vs ', num('iv-model-mean-excess', iv.model_mean_excess, 4),
      ' (Δ ', num('iv-mean-delta', d(iv.mean_excess, iv.model_mean_excess), 4), ') nats/symbol'));
  }

  function defaultHead() {
    // the labelled suffix head of the highest layer, else the last head
    const hs = S.pos.heads;
    let best = hs[hs.length - 1];
    for (const h of hs) if (h.label && h.label.labelled && h.label.best.kind === 'suffix-match' && h.layer >= best.layer) best = h;
    return best;
  }

  function matches() { return S.pos ? (S.pos.matches[S.offset][S.k] || []) : []; }

  function renderStrip() {
    const R = S.refs, x = R.x, st = $('strip');
    st.innerHTML = '';
    const w = st.clientWidth || 800, n = Math.max(10, Math.floor(w / 17));
    const hi = Math.min(R.T - 1, S.t + 2), lo = Math.max(0, hi - n + 1);
    const ms = new Set(S.pos && S.pos.t === S.t ? matches() : []);
    for (let i = lo; i <= hi; i++) {
      const sp = el('span', { class: (i === S.t ? 'cur' : '') + (i === S.t + 1 ? ' next' : '') + (ms.has(i) ? ' m' : ''), title: `x[${i}] = ${x[i]}`, 'data-pos': i }, String(x[i]), el('sub', {}, i % 5 === 0 ? String(i) : '\u00a0'));
      sp.onclick = () => setT(i);
      st.append(sp);
    }
  }

  function renderPosition() {
    const p = S.pos;
    if (!p) return;
    const R = S.refs, A = R.A, x = R.x;
    $('t-label').textContent = `t = ${p.t}`;
    if (!S.meta.static) {
      $('json-link').href = `api/position?${winQ(S.win)}&t=${p.t}&model=${S.model}&step=${stepQ(curStep())}`;
      $('static-link').classList.toggle('hidden', S.win.seq != null);
      $('static-link').href = `api/static?w=${S.win.w}&t=${p.t}`;
    } else {
      $('json-link').classList.add('hidden');
      $('static-link').classList.add('hidden');
    }
    $('t-label').setAttribute('data-t', p.t);
    const ctx = x.slice(Math.max(0, p.t - 7), p.t + 1).join(' ');
    $('t-context').textContent = `x[..${p.t}] = …${ctx}` + (p.next >= 0 ? `  → next x[${p.t + 1}] = ${p.next}` : '  (last position: no target)');
    // distributions
    const thead = $('dist').querySelector('thead'), tb = $('dist').querySelector('tbody');
    thead.innerHTML = ''; tb.innerHTML = '';
    const hr = el('tr', {}, el('th', {}, 'method'));
    for (let a = 0; a < A; a++) hr.append(el('th', { class: a === p.next ? 'next' : '' }, `P(${a})`));
    hr.append(el('th', {}, 'loss'));
    thead.append(hr);
    const rows = p.dist.slice();
    if (p.intervened) rows.push(p.intervened.dist);
    if (p.true && p.next >= 0) rows.push({ name: 'source tree', kind: 'source', p: p.true.p, loss: -Math.log(p.true.p[p.next]) });
    const rank = (d) => d.kind === 'model' ? -2 : d.kind === 'intervened' ? -1 : 0;
    rows.sort((a, b) => rank(a) - rank(b));
    if (p.intervened && !S.styles[p.intervened.dist.name]) S.styles[p.intervened.dist.name] = { color: '#d55e00', dash: [4, 2] };
    for (const d of rows) {
      const st = S.styles[d.name] || { color: '#888' };
      const tr = el('tr', { class: d.kind, 'data-method': d.name }, el('td', { title: d.name }, el('span', { class: 'swatch', style: `background:${st.color}` }), shortName(d.name)));
      for (let a = 0; a < A; a++) {
        const v = d.p ? d.p[a] : null;
        const td = el('td', { class: 'p' + (a === p.next ? ' next' : ''), 'data-symbol': a, 'data-value': v == null ? '' : String(v) }, fmt(v));
        if (v != null) td.append(el('span', { class: 'bar', style: `width:${(v * 100).toFixed(1)}%` }));
        tr.append(td);
      }
      tr.append(el('td', { class: 'loss', 'data-value': d.loss == null ? '' : String(d.loss) }, fmt(d.loss, 3)));
      tb.append(tr);
    }
    // ω
    const om = $('omega');
    om.innerHTML = '';
    const mapD = p.map ? p.map.depth : -1;
    p.omega.forEach((w, l) => {
      om.append(el('div', { class: 'b' + (l === p.omega_max ? ' max' : '') + (l === mapD ? ' mapd' : ''), 'data-l': l, 'data-value': String(w), title: `ω_${l} = ${w}` },
        el('span', { class: 'v' }, fmt(w, 3)), el('div', { class: 'fill', style: `height:${Math.max(1, 62 * w)}px` }), el('span', { class: 'lab' }, `l=${l}`)));
    });
    const sfx = (c) => c ? (c.depth ? c.suffix.join('') : 'ε (root)') + ` (depth ${c.depth})` : '–';
    const cx = $('contexts');
    cx.innerHTML = '';
    cx.append(el('div', {}, 'MAP context: ', el('b', { id: 'map-context', 'data-depth': p.map ? p.map.depth : '' }, sfx(p.map)),
      el('span', { class: 'dim' }, ` — the leaf of the MAP tree of x[0..${p.t}] for the current history (ln posterior ${fmt(p.map_log_posterior, 2)})`)));
    cx.append(el('div', {}, 'argmax ω: ', el('b', {}, `l = ${p.omega_max}`), el('span', { class: 'dim' }, ` (ω = ${fmt(p.omega[p.omega_max], 3)})`)));
    if (p.true) cx.append(el('div', {}, 'true context: ', el('b', {}, sfx(p.true)), el('span', { class: 'dim' }, ' — the generating tree\'s leaf')));
    const pb = $('posterior-box');
    pb.classList.toggle('hidden', !p.posterior);
    if (p.posterior) {
      const po = $('posterior'); po.innerHTML = '';
      let mx = 0; p.posterior.forEach((w, i) => { if (w > p.posterior[mx]) mx = i; });
      p.posterior.forEach((w, i) => po.append(el('div', { class: 'b' + (i === mx ? ' max' : ''), 'data-value': String(w) }, el('span', { class: 'v' }, fmt(w, 3)), el('div', { class: 'fill', style: `height:${Math.max(1, 62 * w)}px` }), el('span', { class: 'lab', title: R.components[i] }, R.components[i]))));
    }
    renderIntervened(p);
    renderStrip();
    renderHeads();
  }

  // ---------- heads ----------
  function renderHeads() {
    const p = S.pos;
    if (!p) return;
    const M = S.meta.models[S.model];
    $('heads-model').textContent = `— ${M.name}, ${stepName(curStep())}` + (p.labels_pending ? ' (labelling heads…)' : '') + (p.labels_error ? ` (labels: ${p.labels_error})` : '');
    const box = $('heads');
    box.innerHTML = '';
    const ms = matches(), mset = new Set(ms);
    const H = Math.max(...M.config.heads);
    const t = p.t, lo = S.keys === 'all' ? 0 : Math.max(0, t - (+S.keys) + 1);
    M.config.heads.forEach((nh, l) => {
      const row = el('div', { class: 'layer', style: `grid-template-columns: 26px repeat(${H}, minmax(0, 1fr))` }, el('div', { class: 'layer-name' }, `L${l + 1}`));
      for (let h = 0; h < nh; h++) {
        const hd = p.heads.find((e) => e.layer === l && e.head === h);
        const r = hd.row;
        let mass = 0; for (const j of ms) mass += r[j];
        let top = []; r.forEach((v, j) => top.push([j, v])); top.sort((a, b) => b[1] - a[1]); top = top.slice(0, 3);
        const lab = hd.label;
        const cell = el('div', { class: 'head' + (S.head && S.head.l === l && S.head.h === h ? ' sel' : ''), 'data-layer': l, 'data-head': h,
          'data-top-key': top[0][0], 'data-top-weight': String(top[0][1]), 'data-match-mass': String(mass), title: lab ? lab.text : 'label pending' },
        el('div', {}, el('span', { class: 'hname' }, `L${l + 1}H${h + 1} `), el('span', { class: 'lab' + (lab && lab.labelled ? ' on' : '') }, lab ? lab.short : '…')));
        if (!S.meta.static) {
          const st = S.iv[`${l},${h}`], pat = headPattern(lab);
          const sw = el('button', { class: 'iv' + (st ? ' set' : ''), 'data-iv': st || 'on',
            title: 'on → off (its attention output set to 0)' + (pat ? ` → its exact pattern ${pat}` : '') + ' → on' }, st ? (st === 'off' ? 'off' : st) : 'on');
          sw.onclick = (e) => { e.stopPropagation(); cycleHead(l, h, lab); };
          cell.firstChild.prepend(sw);
        }
        const c = el('canvas', { height: 58 });
        cell.append(c);
        cell.append(el('div', { class: 'stats' }, `k=${S.k} matches: ${ms.length ? fmt(mass, 3) : '–'} · top ` + top.map(([j, v]) => `${j}:${fmt(v, 3)}`).join(' ')));
        cell.onclick = () => selectHead(l, h);
        const stats = cell.lastChild, text = stats.textContent;
        c.addEventListener('mousemove', (e) => {
          const rc = c.getBoundingClientRect(), j = lo + Math.floor((e.clientX - rc.left) / rc.width * (t - lo + 1));
          if (j >= lo && j <= t) stats.textContent = `key ${j} (x=${S.refs.x[j]}, t−k=${t - j}): weight ${fmt(r[j], 4)}` + (mset.has(j) ? ' · a k-match' : '');
        });
        c.addEventListener('mouseleave', () => { stats.textContent = text; });
        row.append(cell);
        requestAnimationFrame(() => drawRow(c, r, lo, t, mset, lab));
      }
      box.append(row);
    });
  }

  function drawRow(c, r, lo, t, mset, lab) {
    const { g, w, h } = setupCanvas(c);
    g.clearRect(0, 0, w, h);
    const n = t - lo + 1, bw = w / n, base = h - 8;
    let mx = 0; for (let j = lo; j <= t; j++) mx = Math.max(mx, r[j]);
    const scale = mx > 0 ? (base - 2) / Math.max(mx, 0.05) : 0;
    if (lab && lab.labelled && lab.best.kind === 'relative' && t - lab.best.d >= lo) {
      g.fillStyle = '#e8f4ee'; g.fillRect((t - lab.best.d - lo) * bw, 0, Math.max(bw, 1), base);
    }
    for (let j = lo; j <= t; j++) {
      const x = (j - lo) * bw;
      if (mset.has(j)) { g.fillStyle = '#e69f00'; g.fillRect(x, base + 2, Math.max(bw - 0.5, 1), 5); }
      g.fillStyle = j === t ? '#9aa4af' : '#0072b2';
      const bh = r[j] * scale;
      g.fillRect(x, base - bh, Math.max(bw - (bw > 3 ? 1 : 0), 0.7), bh);
    }
    g.fillStyle = '#6b7480'; g.font = '9px system-ui'; g.textAlign = 'right';
    g.fillText(`max ${fmt(mx, 2)}`, w - 2, 9);
  }

  function moveHead(d) {
    if (!S.pos) return;
    const hs = S.pos.heads;
    let i = S.head ? hs.findIndex((e) => e.layer === S.head.l && e.head === S.head.h) : -1;
    i = Math.max(0, Math.min(hs.length - 1, i + d));
    selectHead(hs[i].layer, hs[i].head);
  }

  // ---------- the attention map ----------
  async function selectHead(l, h) {
    S.head = { l, h };
    document.querySelectorAll('.head').forEach((e) => e.classList.toggle('sel', +e.dataset.layer === l && +e.dataset.head === h));
    await loadMap();
  }

  async function loadMap() {
    const key = `${S.win.seq}|${S.win.w}|${S.model}|${curStep()}|${S.head.l}|${S.head.h}`;
    if (!S.map || S.map.key !== key) {
      const m = await guarded(() => src.map(S.win, S.model, curStep(), S.head.l, S.head.h));
      S.map = { key, T: m.T, data: m.data };
      if (!S.view || S.view.T !== m.T) m.T <= $('map').width ? mapReset() : mapAround();
    }
    drawMap();
  }

  function mapReset() { if (!S.map) return; S.view = { T: S.map.T, q0: 0, q1: S.map.T, k0: 0, k1: S.map.T }; drawMap(); }
  function mapAround() {
    if (!S.map) return;
    const T = S.map.T, n = Math.min(T, 64), q1 = Math.min(T, Math.max(n, S.t + 9)), q0 = Math.max(0, q1 - n);
    S.view = { T, q0, q1, k0: q0, k1: q1 };
    drawMap();
  }

  function drawMap() {
    if (!S.map || !S.view) return;
    const c = $('map'), g = c.getContext('2d'), P = c.width;
    const { T, data } = S.map, v = S.view, rows = v.q1 - v.q0, cols = v.k1 - v.k0;
    const M = S.meta.models[S.model], lab = S.pos && S.pos.heads.find((e) => e.layer === S.head.l && e.head === S.head.h);
    $('map-title').textContent = `Attention map L${S.head.l + 1}H${S.head.h + 1}` + (lab && lab.label ? ` — ${lab.label.short}` : '') + ` (${M.name}, ${stepName(curStep())})`;
    let top = 1;
    if (S.scale === 'view') {
      top = 0;
      for (let r = v.q0; r < v.q1; r++) for (let k = v.k0; k < Math.min(v.k1, r + 1); k++) if (data[r * T + k] > top) top = data[r * T + k];
      top = top || 1;
    }
    $('map-range').textContent = `queries ${v.q0}–${v.q1 - 1} × keys ${v.k0}–${v.k1 - 1} of ${T}×${T} · darkest = ${S.scale === 'row' ? "the row's largest weight" : fmt(top, 3)}`;
    const gam = S.gamma;
    const rowMax = {};
    const rmax = (r) => { if (!(r in rowMax)) { let m = 0; for (let k = 0; k <= r; k++) m = Math.max(m, data[r * T + k]); rowMax[r] = m || 1; } return rowMax[r]; };
    const color = (a, r) => {
      const u = Math.pow(Math.max(0, Math.min(1, a / (S.scale === 'row' ? rmax(r) : top))), gam);
      // white → blue → dark navy
      return [Math.round(255 * (1 - u) + 8 * u), Math.round(255 * (1 - u) + 48 * u), Math.round(255 * (1 - u) + 107 * u)];
    };
    const W = Math.min(cols, P), H = Math.min(rows, P);
    const img = g.createImageData(W, H);
    for (let py = 0; py < H; py++) {
      const r0 = v.q0 + Math.floor(py * rows / H), r1 = Math.max(r0 + 1, v.q0 + Math.floor((py + 1) * rows / H));
      for (let px = 0; px < W; px++) {
        const c0 = v.k0 + Math.floor(px * cols / W), c1 = Math.max(c0 + 1, v.k0 + Math.floor((px + 1) * cols / W));
        let m = 0, mr = r0, upper = true;
        for (let r = r0; r < r1; r++) for (let k = c0; k < c1; k++) { if (k <= r) { upper = false; const a = data[r * T + k]; if (a > m) { m = a; mr = r; } } }
        const o = 4 * (py * W + px);
        const [R, G, B] = upper ? [242, 243, 245] : color(m, mr);
        img.data[o] = R; img.data[o + 1] = G; img.data[o + 2] = B; img.data[o + 3] = 255;
      }
    }
    const off = document.createElement('canvas');
    off.width = W; off.height = H;
    off.getContext('2d').putImageData(img, 0, 0);
    g.imageSmoothingEnabled = false;
    g.clearRect(0, 0, P, P);
    g.drawImage(off, 0, 0, P, P);
    const cy = (q) => (q - v.q0) / rows * P, cx = (k) => (k - v.k0) / cols * P;
    if (S.t >= v.q0 && S.t < v.q1) {
      g.strokeStyle = 'rgba(192,57,43,.9)'; g.lineWidth = 1.5;
      g.strokeRect(0, cy(S.t), P, Math.max(1.5, P / rows));
      g.fillStyle = '#e69f00';
      for (const j of matches()) if (j >= v.k0 && j < v.k1) g.fillRect(cx(j), Math.max(0, cy(S.t) - 5), Math.max(2, P / cols), 4);
    }
    renderTopKeys();
    if (S.drag) {
      g.strokeStyle = '#d55e00'; g.setLineDash([4, 3]); g.lineWidth = 1;
      g.strokeRect(S.drag.x0, S.drag.y0, S.drag.x1 - S.drag.x0, S.drag.y1 - S.drag.y0); g.setLineDash([]);
    }
  }

  // the keys the selected head's query t attends most, with their contexts
  function renderTopKeys() {
    const tb = $('topkeys').querySelector('tbody');
    tb.innerHTML = '';
    const hd = S.pos && S.head && S.pos.heads.find((e) => e.layer === S.head.l && e.head === S.head.h);
    if (!hd || S.pos.t !== S.t) return;
    const x = S.refs.x, t = S.pos.t, r = hd.row;
    const common = (j) => { let n = 0; while (j - n >= 0 && x[j - n] === x[t - n] && n <= t) n++; return n; };
    const keys = r.map((v, j) => [j, v]).sort((a, b) => b[1] - a[1]).slice(0, 12);
    const mset = new Set(matches());
    for (const [j, v] of keys) {
      const l0 = j < t ? common(j) : '–', l1 = j > 0 && j <= t ? common(j - 1) : 0;
      const ctx = el('td', { class: 'ctx' }, x.slice(Math.max(0, j - 4), j + 1).join(' '), ' → ', j + 1 < x.length ? el('b', {}, String(x[j + 1])) : '·');
      tb.append(el('tr', { class: mset.has(j) ? 'm' : '', 'data-key': j, 'data-value': String(v) }, el('td', {}, String(j)), el('td', {}, fmt(v, 4)), el('td', {}, String(t - j)), ctx, el('td', {}, String(l0)), el('td', {}, String(l1))));
    }
  }

  function mapCell(e) {
    const c = $('map'), r = c.getBoundingClientRect(), v = S.view;
    const fx = (e.clientX - r.left) / r.width, fy = (e.clientY - r.top) / r.height;
    return { q: Math.min(v.q1 - 1, v.q0 + Math.floor(fy * (v.q1 - v.q0))), k: Math.min(v.k1 - 1, v.k0 + Math.floor(fx * (v.k1 - v.k0))),
      x: fx * c.width, y: fy * c.height, fx, fy };
  }

  function setupMapEvents() {
    const c = $('map');
    c.addEventListener('mousedown', (e) => { if (!S.view) return; const p = mapCell(e); S.drag = { x0: p.x, y0: p.y, x1: p.x, y1: p.y, a: p }; });
    c.addEventListener('mousemove', (e) => {
      if (!S.view) return;
      const p = mapCell(e), T = S.map.T, x = S.refs.x;
      const a = p.k <= p.q ? S.map.data[p.q * T + p.k] : null;
      $('map-hover').textContent = `query q = ${p.q}  (x = ${x[p.q]})\nkey   k = ${p.k}  (x = ${x[p.k]})\nweight  = ${a == null ? '— (masked: k > q)' : a.toPrecision(6)}\nq − k   = ${p.q - p.k}`;
      if (S.drag) { S.drag.x1 = p.x; S.drag.y1 = p.y; S.drag.b = p; drawMap(); }
    });
    window.addEventListener('mouseup', () => {
      const d = S.drag; S.drag = null;
      if (!d) return;
      if (d.b && Math.abs(d.x1 - d.x0) > 4 && Math.abs(d.y1 - d.y0) > 4) {
        S.view = { T: S.view.T, q0: Math.min(d.a.q, d.b.q), q1: Math.max(d.a.q, d.b.q) + 1, k0: Math.min(d.a.k, d.b.k), k1: Math.max(d.a.k, d.b.k) + 1 };
      } else if (d.a) { setT(d.a.q); return; }
      drawMap();
    });
    c.addEventListener('dblclick', () => mapReset());
    c.addEventListener('wheel', (e) => {
      if (!S.view) return;
      e.preventDefault();
      const p = mapCell(e), v = S.view, f = e.deltaY > 0 ? 1.25 : 0.8, T = v.T;
      const zoom = (a0, a1, at, fr) => {
        let n = Math.max(4, Math.min(T, Math.round((a1 - a0) * f)));
        let lo = Math.round(at - fr * n); lo = Math.max(0, Math.min(T - n, lo));
        return [lo, lo + n];
      };
      [v.q0, v.q1] = zoom(v.q0, v.q1, p.q, p.fy);
      [v.k0, v.k1] = zoom(v.k0, v.k1, p.k, p.fx);
      drawMap();
    }, { passive: false });
  }

  start().catch((e) => status('could not start: ' + (e.message || e), true));
})();
