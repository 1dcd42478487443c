/* app.js - the drover dashboard: a one-page app over droverd's API (docs/api.md).
 *
 * Routes (#/, #/queue, #/job/ID, #/nodes) each mount their controls once and
 * then refresh only their data, so a filter being typed survives a refresh.
 * Refreshes come from the event stream (GET /v1/events?follow=1) when it is
 * there, else from polling every few seconds.  Everything shown is built with
 * DOM calls (textContent, never innerHTML): job names and reasons are data.
 * State-changing calls carry X-Drover-CSRF: 1, which droverd requires of
 * requests authenticated by the session cookie. */
'use strict';

const POLL_MS = 3000;
const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'timeout']);
const COLORS = ['#2f6fde', '#e8590c', '#2b8a3e', '#ae3ec9', '#c92a2a', '#0c8599', '#5f3dc4', '#868e96'];
const S = { me: null, page: null, es: null, poll: null, slow: null, timer: null, busy: false, again: false };

const $ = (sel) => document.querySelector(sel);

/* h('td', {class: 'num'}, 'text', child, [more]) */
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, kids);
  return el;
}
function svg(tag, attrs, ...kids) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  setAttrs(el, attrs);
  append(el, kids);
  return el;
}
function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}
function append(el, kids) {
  for (const k of kids.flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    el.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
}

/* ---- API ---- */
async function api(method, path, body) {
  const opt = { method, headers: {}, credentials: 'same-origin', cache: 'no-store' };
  if (method !== 'GET') opt.headers['X-Drover-CSRF'] = '1';
  if (body !== undefined) {
    opt.headers['Content-Type'] = 'application/json';
    opt.body = JSON.stringify(body);
  }
  const r = await fetch(path, opt);
  const json = (r.headers.get('Content-Type') || '').startsWith('application/json');
  const data = json ? await r.json().catch(() => null) : await r.text();
  if (!r.ok) {
    const e = new Error((data && data.error) || `HTTP ${r.status} from ${path}`);
    e.status = r.status;
    throw e;
  }
  return { data, headers: r.headers };
}
/* an optional endpoint (one another release may lack): null when absent */
async function apiMaybe(path) {
  try { return (await api('GET', path)).data; } catch (e) { if (e.status === 401) throw e; return null; }
}

/* ---- formatting ---- */
const now = () => Date.now() / 1000;
function dur(s) {
  if (s === null || s === undefined || !isFinite(s)) return '-';
  s = Math.max(0, Math.floor(s));
  const d = Math.floor(s / 86400), hh = Math.floor(s / 3600) % 24, m = Math.floor(s / 60) % 60, ss = s % 60;
  if (d) return `${d}d${String(hh).padStart(2, '0')}h`;
  if (hh) return `${hh}h${String(m).padStart(2, '0')}m`;
  if (m) return `${m}m${String(ss).padStart(2, '0')}s`;
  return `${ss}s`;
}
const usd = (x) => (x === null || x === undefined) ? '-' : '$' + Number(x).toFixed(x >= 100 ? 0 : x >= 1 ? 2 : 4);
function when(t) {
  if (!t) return '-';
  const d = new Date(t * 1000);
  return d.toLocaleString(undefined, { hour12: false });
}
const hhmm = (t) => new Date(t * 1000).toTimeString().slice(0, 5);
const badge = (st) => h('span', { class: 'state ' + st }, st);
function jobTime(j) {
  if (j.state === 'pending' && !j.start_time) return now() - j.submit_time;
  return j.elapsed;
}
const jobType = (j) => j.gpu_type || j.gpu_types_requested || 'any';
function flash(msg, info) {
  const f = $('#flash');
  f.textContent = msg;
  f.className = info ? 'info' : '';
  f.hidden = !msg;
  clearTimeout(S.flashT);
  if (msg) S.flashT = setTimeout(() => { f.hidden = true; }, 8000);
}

/* ---- actions (the controller decides who may; its refusal is shown) ---- */
async function act(what, method, path, body) {
  try {
    await api(method, path, body);
    flash(what + ': done', true);
  } catch (e) {
    if (e.status === 401) return showLogin();
    flash(what + ': ' + e.message);
  }
  refreshSoon(0);
}
const cancelJob = (id) => act(`cancel job ${id}`, 'POST', `/v1/jobs/${id}/cancel`);
function cancelButton(j) {
  if (TERMINAL.has(j.state)) return null;
  return h('button', { class: 'act danger cancel', 'data-job': j.id, type: 'button',
                       title: 'only its owner or an operator may', onclick: () => cancelJob(j.id) }, 'Cancel');
}

/* ---- charts: small inline SVG, no library ---- */
const W = 420, H = 180, PL = 40, PR = 10, PT = 10, PB = 22;
function legend(names) {
  return h('div', { class: 'legend' }, names.map((n, i) => {
    const sw = h('i');
    sw.style.background = COLORS[i % COLORS.length];
    return [sw, n];
  }));
}
function chartBox(title, id, body, names) {
  return h('div', { class: 'chart', id }, h('h3', null, title), body, names ? legend(names) : null);
}
function axes(yMax, yFmt, x0, x1) {
  const g = svg('g');
  for (let k = 0; k <= 4; k++) {
    const y = PT + (H - PT - PB) * (1 - k / 4);
    g.append(svg('line', { class: k ? 'gridline' : 'axis', x1: PL, x2: W - PR, y1: y, y2: y }),
             svg('text', { x: PL - 4, y: y + 3, 'text-anchor': 'end' }, yFmt(yMax * k / 4)));
  }
  if (x0 !== undefined) {
    g.append(svg('text', { x: PL, y: H - 6 }, x0),
             svg('text', { x: W - PR, y: H - 6, 'text-anchor': 'end' }, x1));
  }
  return g;
}
/* lines: [{name, values}] over times t (unix s) */
function lineChart(t, lines, yMax, yFmt) {
  const s = svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img' });
  s.append(axes(yMax, yFmt, hhmm(t[0]), hhmm(t[t.length - 1])));
  const span = Math.max(1, t[t.length - 1] - t[0]);
  lines.forEach((l, i) => {
    const pts = l.values.map((v, k) => {
      const x = PL + (W - PL - PR) * (t[k] - t[0]) / span;
      const y = PT + (H - PT - PB) * (1 - Math.min(1, (v || 0) / yMax));
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    });
    s.append(svg('polyline', { points: pts.join(' '), fill: 'none', stroke: COLORS[i % COLORS.length],
                               'stroke-width': 2, 'data-series': l.name }));
  });
  return s;
}
/* stacked bars: cats (x labels), keys (stack parts), val(cat, key) */
function barChart(cats, keys, val, yFmt) {
  const tot = cats.map((c) => keys.reduce((a, k) => a + val(c, k), 0));
  const yMax = niceMax(Math.max(...tot, 0));
  const s = svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img' });
  s.append(axes(yMax, yFmt));
  const bw = (W - PL - PR) / Math.max(1, cats.length);
  cats.forEach((c, ci) => {
    let y = H - PB;
    keys.forEach((k, ki) => {
      const hgt = (H - PT - PB) * val(c, k) / yMax;
      if (hgt <= 0) return;
      y -= hgt;
      s.append(svg('rect', { x: PL + ci * bw + bw * 0.15, y, width: bw * 0.7, height: hgt,
                             fill: COLORS[ki % COLORS.length], 'data-account': k, 'data-day': c },
                   svg('title', null, `${k} ${c}: ${usd(val(c, k))}`)));
    });
    if (cats.length <= 8 || ci % Math.ceil(cats.length / 8) === 0)
      s.append(svg('text', { x: PL + ci * bw + bw / 2, y: H - 6, 'text-anchor': 'middle' }, c.slice(5)));
  });
  return s;
}
function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/* ---- pages ---- */
const pages = {};

pages.overview = {
  mount(m) {
    m.append(h('h1', null, 'Cluster'), h('div', { class: 'cards', id: 'types' }),
             h('h2', null, 'Over time'), h('div', { class: 'charts', id: 'charts' }));
  },
  async refresh() {
    const [stats, nodes, jobs, hist] = await Promise.all([
      apiMaybe('/v1/stats'), api('GET', '/v1/nodes').then((r) => r.data),
      api('GET', '/v1/jobs').then((r) => r.data),
      history()]);
    let types = stats && stats.types;
    if (!types) { /* no /v1/stats: the same from the nodes */
      const by = {};
      for (const n of nodes.nodes) {
        const r = by[n.gpu_type] || (by[n.gpu_type] = { type: n.gpu_type, total: 0, allocated: 0, idle: 0, down: 0 });
        r.total += n.gpus;
        r.allocated += n.gpus_alloc;
        if (n.state === 'up') r.idle += n.gpus - n.gpus_alloc; else r.down += n.gpus - n.gpus_alloc;
      }
      types = Object.values(by);
    }
    const run = jobs.jobs.filter((j) => j.state === 'running');
    const rate = stats && stats.cost_usd_per_hour !== undefined ? stats.cost_usd_per_hour
      : run.reduce((a, j) => a + (j.elapsed > 0 ? j.cost_usd / j.elapsed * 3600 : 0), 0);
    const cards = types.map((t) => h('div', { class: 'card gputype', 'data-type': t.type },
      h('div', { class: 'k' }, t.type),
      h('div', { class: 'v' }, `${t.allocated} / ${t.total}`),
      h('table', null,
        h('tr', null, h('td', null, 'allocated'), h('td', { class: 'alloc' }, t.allocated)),
        h('tr', null, h('td', null, 'idle'), h('td', { class: 'idle' }, t.idle)),
        h('tr', null, h('td', null, 'down'), h('td', { class: 'down' }, t.down)),
        t.usd_per_gpu_hour !== undefined ? h('tr', null, h('td', null, 'price'), h('td', null, usd(t.usd_per_gpu_hour) + '/GPU-h')) : null)));
    const pend = jobs.jobs.filter((j) => j.state === 'pending').length;
    cards.push(h('div', { class: 'card' }, h('div', { class: 'k' }, 'cost rate'),
                 h('div', { class: 'v', id: 'cost-rate' }, usd(rate) + '/h'),
                 h('div', { class: 'k' }, `${run.length} running, ${pend} pending`)));
    $('#types').replaceChildren(...cards);

    const charts = [];
    const se = stats && stats.series;
    if (se && se.t && se.t.length >= 2) {
      const names = Object.keys(se.allocated || {});
      charts.push(chartBox('GPU utilisation by type (%)', 'chart-util', lineChart(se.t, names.map((n) => ({
        name: n, values: se.allocated[n].map((a) => 100 * a / Math.max(1, (se.total || {})[n] || 1)) })), 100,
        (v) => v.toFixed(0)), names));
      const qmax = niceMax(Math.max(1, ...se.pending, ...se.running));
      charts.push(chartBox('Queue length (jobs)', 'chart-queue', lineChart(se.t,
        [{ name: 'pending', values: se.pending }, { name: 'running', values: se.running }], qmax,
        (v) => (Number.isInteger(v) ? String(v) : v.toFixed(1))), ['pending', 'running']));
    } else {
      charts.push(chartBox('GPU utilisation and queue length', 'chart-util',
        h('p', { class: 'muted' }, stats ? 'not enough samples yet' : 'no samples: this controller has no /v1/stats')));
    }
    if (hist && hist.jobs) {
      const cost = {}, accts = new Set(), days = [];
      for (let t = now() - 13 * 86400; t <= now() + 1; t += 86400) days.push(dayOf(t));
      for (const r of hist.jobs) {
        if (r.array_tasks !== null && r.array_tasks !== undefined) continue; /* summary rows */
        const a = r.account || '(none)', d = dayOf(r.end_time);
        accts.add(a);
        cost[d + ' ' + a] = (cost[d + ' ' + a] || 0) + (r.cost_usd || 0);
      }
      const keys = [...accts].sort();
      charts.push(chartBox('Cost per account per day (USD)', 'chart-cost',
        keys.length ? barChart(days, keys, (d, a) => cost[d + ' ' + a] || 0, (v) => '$' + v.toPrecision(2))
                    : h('p', { class: 'muted' }, 'no finished jobs in the last 14 days'), keys));
    }
    $('#charts').replaceChildren(...charts);
  },
  on: () => true,
};
/* finished jobs of the last 14 days: a heavier query, so at most every 30 s */
async function history() {
  if (!S.hist || now() - S.hist.at > 30) {
    S.hist = { at: now(), data: await apiMaybe(`/v1/history?since=${Math.floor(now() - 14 * 86400)}&limit=100000`) };
  }
  return S.hist.data;
}
function dayOf(t) {
  const d = new Date(t * 1000);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

pages.queue = {
  mount(m) {
    const f = (id, el) => [h('label', { for: id }, el.dataset.label), el];
    const sel = (id, label, opts) => { const s = h('select', { id, 'data-label': label, onchange: () => refreshSoon(0) },
      opts.map(([v, t]) => h('option', { value: v }, t))); return s; };
    const txt = (id, label, ph) => h('input', { id, 'data-label': label, placeholder: ph, oninput: () => this.draw() });
    m.append(h('h1', null, 'Queue'), h('div', { class: 'filters' },
      f('f-state', sel('f-state', 'state', [['', 'pending + running'], ['pending', 'pending'], ['running', 'running'],
        ['ended', 'ended'], ['all', 'all']])),
      f('f-user', txt('f-user', 'user', 'any user')),
      f('f-type', sel('f-type', 'GPU type', [['', 'any type']])),
      f('f-text', txt('f-text', 'search', 'id, name, reason')),
      h('span', { class: 'muted', id: 'q-count' })),
    h('table', { class: 'grid', id: 'queue' }, h('thead', null, h('tr', null,
      ['ID', 'Name', 'User', 'Kind', 'State', 'GPU type', 'GPUs', 'Nodes', 'Time', 'Cost', 'Reason', ''].map(
        (c) => h('th', { class: ['GPUs', 'Time', 'Cost'].includes(c) ? 'num' : null }, c)))), h('tbody')));
    $('#f-type').addEventListener('change', () => this.draw());
  },
  async refresh() {
    const st = $('#f-state').value;
    const q = st === '' ? '' : st === 'ended' ? '?state=completed,failed,cancelled,timeout&limit=500'
      : st === 'all' ? '?all=1&limit=500' : `?state=${st}`;
    this.jobs = (await api('GET', '/v1/jobs' + q)).data.jobs;
    const ts = $('#f-type'), cur = ts.value, types = [...new Set(this.jobs.map(jobType))].sort();
    ts.replaceChildren(h('option', { value: '' }, 'any type'), types.map((t) => h('option', { value: t }, t)));
    ts.value = types.includes(cur) ? cur : '';
    this.draw();
  },
  draw() {
    if (!this.jobs) return;
    const u = $('#f-user').value.trim(), ty = $('#f-type').value, tx = $('#f-text').value.trim().toLowerCase();
    const rows = this.jobs.filter((j) => (!u || j.user === u) && (!ty || jobType(j) === ty) &&
      (!tx || `${j.id} ${j.name} ${j.reason}`.toLowerCase().includes(tx)));
    $('#q-count').textContent = `${rows.length} of ${this.jobs.length} jobs`;
    $('#queue tbody').replaceChildren(...rows.map((j) => h('tr', { 'data-job': j.id, 'data-state': j.state },
      h('td', null, h('a', { href: `#/job/${j.id}` }, j.id)), h('td', null, j.name), h('td', null, j.user),
      h('td', null, j.kind), h('td', null, badge(j.state)), h('td', { class: 'type' }, jobType(j)),
      h('td', { class: 'num' }, j.gpus), h('td', null, j.nodelist || '-'), h('td', { class: 'num' }, dur(jobTime(j))),
      h('td', { class: 'num' }, usd(j.cost_usd)), h('td', { class: 'muted' }, j.reason), h('td', null, cancelButton(j)))));
  },
  on: (ev) => ev.kind === 'job',
};

pages.job = {
  mount(m, id) {
    this.id = id;
    this.out = { offset: 0, text: '', err: null };
    m.append(h('h1', { id: 'job-title' }, `Job ${id}`), h('div', { class: 'cols', id: 'job-body' }),
             h('div', { class: 'cols' },
               h('div', null, h('h2', null, 'Events'), h('ol', { class: 'timeline', id: 'job-events' })),
               h('div', null, h('h2', null, 'Output (tail)'), h('pre', { class: 'output', id: 'job-output' }))));
  },
  async refresh() {
    const id = this.id;
    const [j, ev] = await Promise.all([api('GET', `/v1/jobs/${id}`).then((r) => r.data),
                                       apiMaybe(`/v1/jobs/${id}/events`)]);
    $('#job-title').replaceChildren(`Job ${j.id} `, h('span', { class: 'muted' }, j.name), ' ', badge(j.state), ' ',
                                    cancelButton(j));
    const kv = (k, v) => h('tr', null, h('td', null, k), h('td', null, v));
    const info = [h('table', { class: 'kv', id: 'job-info' },
      kv('user', j.user), kv('account', j.account || '-'), kv('kind', j.kind), kv('state', j.state),
      kv('reason', j.reason || '-'), kv('exit code', j.exit_code === null ? '-' : j.exit_code + (j.signal ? ` (signal ${j.signal})` : '')),
      kv('submitted', when(j.submit_time)), kv('started', when(j.start_time)), kv('ended', when(j.end_time)),
      kv('time', dur(jobTime(j)) + (j.time_limit ? ` of ${dur(j.time_limit)}` : ' (no limit)')),
      kv('cost', usd(j.cost_usd)), kv('GPU-hours', j.gpu_hours === null ? '-' : j.gpu_hours),
      kv('command', (j.argv || []).join(' ')))];
    const parts = [h('h2', null, 'Placement'), h('table', { class: 'kv', id: 'job-placement' },
      kv('GPU type', jobType(j)), kv('GPUs', j.gpus), kv('nodes', (j.nodes || []).length ?
        (j.nodes || []).map((n, i) => [i ? ', ' : '', h('a', { href: '#/nodes' }, n)]) : '-'),
      kv('generation', j.generation))];
    if (j.speeds) {
      /* why here: every type it may use, with its time, cost and deadline */
      const sp = j.speeds;
      parts.push(h('h2', null, 'Why this GPU type'), h('p', { class: 'muted', id: 'job-why' },
        `${sp.why || 'not placed yet'}. Class ${sp.class} (prior: ${sp.prior}, ${sp.class_runs} runs); work: ` +
        (sp.work_s ? `${dur(sp.work_s)} on ${sp.reference} (${sp.work_from})` : 'unknown')),
        h('table', { class: 'grid', id: 'job-speeds' }, h('thead', null, h('tr', null,
          ['GPU type', 'rate', 'run time', 'cost', 'meets deadline', 'from'].map((c) => h('th', null, c)))),
        h('tbody', null, (sp.types || []).map((t) => h('tr', { 'data-type': t.type, class: t.chosen ? 'chosen' : '' },
          h('td', null, t.type + (t.chosen ? ' *' : '')), h('td', null, t.rate),
          h('td', null, t.run_s === undefined ? '-' : dur(t.run_s)), h('td', null, t.usd === undefined ? '-' : usd(t.usd)),
          h('td', null, t.meets_deadline === undefined ? '-' : (t.meets_deadline ? 'yes' : 'no')),
          h('td', { class: 'muted' }, t.basis))))));
    }
    if (j.checkpoint_dir || j.checkpoints) {
      parts.push(h('h2', null, 'Checkpoints'), h('table', { class: 'kv', id: 'job-ckpt' },
        kv('directory', j.checkpoint_dir || '-'),
        Array.isArray(j.checkpoints) ? j.checkpoints.map((c) => kv(c.step !== undefined ? `step ${c.step}` : 'checkpoint',
          typeof c === 'object' ? JSON.stringify(c) : String(c))) : null));
    }
    if (j.steps && j.steps.length) {
      parts.push(h('h2', null, 'Steps'), h('table', { class: 'grid' }, j.steps.map((s) => h('tr', null,
        h('td', null, s.id), h('td', null, badge(s.state)), h('td', null, s.command), h('td', null, s.nodelist),
        h('td', null, s.exit_code === null ? '' : 'exit ' + s.exit_code), h('td', { class: 'muted' }, s.reason)))));
    }
    if (j.tasks) parts.push(h('h2', null, 'Array tasks'), h('p', null, Object.entries(j.tasks).map(([k, v]) => `${k} ${v}`).join(', ')));
    if (j.service) parts.push(h('h2', null, 'Service'), h('p', null,
      `${j.service.ready} of ${j.service.replicas} replicas ready; endpoints ${(j.service.endpoints || []).join(', ') || '-'}`));
    $('#job-body').replaceChildren(h('div', null, info), h('div', null, parts));
    $('#job-events').replaceChildren(...((ev && ev.events) || []).map((e) => h('li', null,
      h('span', { class: 't' }, when(e.t)), h('b', null, e.what), ' ',
      e.from || e.state ? `${e.from} → ${e.state}` : '', e.detail ? h('span', { class: 'muted' }, ' ' + e.detail) : '')));
    await this.output(id);
  },
  /* the output's tail, read on from where the last refresh stopped */
  async output(id) {
    const o = this.out, pre = $('#job-output');
    for (let k = 0; k < 16; k++) {
      let r;
      try {
        r = await api('GET', `/v1/jobs/${id}/output?offset=${o.offset}&limit=262144`);
      } catch (e) {
        if (e.status === 401) throw e;
        o.err = e.status === 404 && !o.text ? 'no output yet' : e.message;
        break;
      }
      o.err = null;
      if (!r.data.length) break;
      o.text = (o.text + r.data).slice(-32768);
      const next = Number(r.headers.get('X-Drover-Offset-Next'));
      o.offset = isFinite(next) && next > o.offset ? next : o.offset + new TextEncoder().encode(r.data).length;
    }
    pre.textContent = o.err && !o.text ? o.err : o.text;
    pre.classList.toggle('error', !!o.err && !o.text);
    pre.scrollTop = pre.scrollHeight;
  },
  on(ev) { return ev.kind === 'job' && String(ev.job) === String(this.id); },
};

pages.nodes = {
  mount(m) {
    m.append(h('h1', null, 'Nodes'));
    if (S.me.role === 'operator') {
      m.append(h('div', { class: 'filters' }, h('label', { for: 'drain-reason' }, 'reason for a drain'),
        h('input', { id: 'drain-reason', size: 40, placeholder: 'e.g. fan failure' })));
    }
    m.append(h('table', { class: 'grid', id: 'nodes' }, h('thead', null, h('tr', null,
      ['Node', 'State', 'GPU type', 'Price', 'GPUs in use', 'Health', 'Reason', 'Jobs', ''].map((c) => h('th', null, c)))),
      h('tbody')));
  },
  async refresh() {
    const nodes = (await api('GET', '/v1/nodes')).data.nodes;
    const op = S.me.role === 'operator';
    $('#nodes tbody').replaceChildren(...nodes.map((n) => {
      const a = n.agent || {};
      const bar = h('span', { class: 'bar' }, h('span'));
      bar.firstChild.style.width = `${n.gpus ? 100 * n.gpus_alloc / n.gpus : 0}%`;
      const health = a.connected ? `agent up, heartbeat ${dur(now() - a.last_heartbeat)} ago (${a.source}, ${a.gpus_found} GPUs found)`
        : 'agent not connected';
      const acts = !op ? null : n.state === 'drain'
        ? h('button', { class: 'act resume', 'data-node': n.name, type: 'button',
                        onclick: () => act(`resume ${n.name}`, 'POST', `/v1/nodes/${encodeURIComponent(n.name)}/resume`, {}) }, 'Resume')
        : h('button', { class: 'act danger drain', 'data-node': n.name, type: 'button',
                        onclick: () => act(`drain ${n.name}`, 'POST', `/v1/nodes/${encodeURIComponent(n.name)}/drain`,
                                           { reason: $('#drain-reason').value.trim() }) }, 'Drain');
      return h('tr', { 'data-node': n.name, 'data-state': n.state },
        h('td', null, n.name), h('td', null, badge(n.state)), h('td', { class: 'type' }, n.gpu_type),
        h('td', { class: 'price', title: 'per GPU-hour; where the price comes from: the site\'s GpuType= line, the catalog\'s list price, or a type the site declared' },
          n.price_per_gpu_hour == null ? '-' : `$${n.price_per_gpu_hour.toFixed(2)}/h (${n.price_source})`),
        h('td', null, bar, `${n.gpus_alloc} / ${n.gpus}`), h('td', { class: a.connected ? '' : 'error' }, health),
        h('td', { class: 'muted reason' }, n.reason), h('td', null, (n.jobs || []).map((id, i) =>
          [i ? ', ' : '', h('a', { href: `#/job/${typeof id === 'object' ? id.id : id}` }, typeof id === 'object' ? id.id : id)])),
        h('td', null, acts));
    }));
  },
  on: () => true,
};

/* ---- routing and refreshing ---- */
function route() {
  const hash = location.hash.replace(/^#\/?/, '');
  const [name, arg] = hash.split('/');
  if (name === 'job' && /^\d+$/.test(arg || '')) return ['job', arg];
  return [pages[name] && name !== 'job' ? name : 'overview', null];
}
function mount() {
  if (!S.me) return;
  const [name, arg] = route();
  const m = $('#main');
  m.replaceChildren();
  m.dataset.page = name;
  m.dataset.loaded = '0';
  document.querySelectorAll('header nav a').forEach((a) =>
    a.classList.toggle('active', a.dataset.route === (name === 'job' ? 'queue' : name)));
  S.page = pages[name];
  S.page.mount(m, arg);
  refreshSoon(0);
}
/* ms 0: now (a click, a poll); else soon, and at most once a second, so a
 * burst of events (an array's tasks ending) is one refresh */
function refreshSoon(ms) {
  clearTimeout(S.timer);
  if (ms === undefined) ms = Math.max(250, 1000 - (Date.now() - (S.last || 0)));
  S.timer = setTimeout(refresh, ms);
}
async function refresh() {
  if (!S.me || !S.page) return;
  if (S.busy) { S.again = true; return; }
  S.busy = true;
  S.last = Date.now();
  const page = S.page;
  try {
    await page.refresh();
    if (page === S.page) $('#main').dataset.loaded = String(Number($('#main').dataset.loaded) + 1);
  } catch (e) {
    if (e.status === 401) showLogin();
    else flash(e.message);
  } finally {
    S.busy = false;
    if (S.again) { S.again = false; refreshSoon(); }
  }
}

/* live: the event stream while it works, polling while it does not */
function setLive(mode) {
  const l = $('#live');
  l.className = 'live ' + mode;
  l.textContent = { on: 'live', poll: 'polling', off: 'offline' }[mode];
}
function startLive() {
  stopLive();
  startPolling();
  let es;
  try { es = new EventSource('/v1/events?follow=1'); } catch (e) { return; }
  S.es = es;
  es.onopen = () => {
    setLive('on');
    clearInterval(S.poll);
    S.poll = null;
    clearInterval(S.slow);
    S.slow = setInterval(() => refreshSoon(0), 15000); /* elapsed times move on */
  };
  const on = (m) => {
    let ev = {};
    try { ev = JSON.parse(m.data); } catch (e) { /* a refresh anyway */ }
    if (!S.page || !S.page.on || S.page.on(ev)) refreshSoon();
  };
  es.addEventListener('job', on);
  es.addEventListener('node', on);
  es.onmessage = on;
  es.onerror = () => {
    es.close();
    if (S.es !== es) return;
    S.es = null;
    startPolling();
    S.retry = setTimeout(() => { if (S.me) startLive(); }, 15000);
  };
}
function startPolling() {
  setLive('poll');
  clearInterval(S.slow);
  if (!S.poll) S.poll = setInterval(() => refreshSoon(0), POLL_MS);
}
function stopLive() {
  if (S.es) { const es = S.es; S.es = null; es.close(); }
  clearInterval(S.poll); clearInterval(S.slow); clearTimeout(S.retry);
  S.poll = S.slow = null;
  setLive('off');
}

/* ---- login ---- */
function showLogin() {
  S.me = null;
  stopLive();
  $('#top').hidden = true;
  $('#main').replaceChildren();
  $('#main').dataset.page = 'login';
  $('#login').hidden = false;
  $('#token').focus();
}
async function start() {
  try {
    S.me = (await api('GET', '/v1/ping')).data;
  } catch (e) {
    if (e.status !== 401) $('#login-error').textContent = e.message;
    return showLogin();
  }
  $('#login').hidden = true;
  $('#top').hidden = false;
  $('#who').textContent = `${S.me.user} (${S.me.role})`;
  mount();
  startLive();
}
document.addEventListener('DOMContentLoaded', () => {
  $('#login-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    $('#login-error').textContent = '';
    try {
      await api('POST', '/v1/session', { token: $('#token').value.trim() });
      $('#token').value = '';
      await start();
    } catch (err) {
      $('#login-error').textContent = err.message;
    }
  });
  $('#logout').addEventListener('click', async () => {
    try { await api('DELETE', '/v1/session'); } catch (e) { /* gone either way */ }
    showLogin();
  });
  window.addEventListener('hashchange', mount);
  start();
});
