// The fleet page: takes its updates from the admin event stream (server-sent events, at most one frame a second)
// and polls the admin API instead (at most one request of each kind in flight, every POLL_MS) while the stream is
// unavailable, trying the stream again every RETRY_MS. Renders with textContent only (fleet input is never parsed as markup) and keeps bounded history, so a page left
// open for hours holds its memory flat.
'use strict';
(function () {
  const POLL_MS = 2000;
  const RETRY_MS = 30000; // after a stream failure, how long the page polls before trying the stream again
  const EVENTS = '/admin/dynamo/events';
  const HISTORY = 120; // trend points kept (4 minutes at the poll rate)
  const LATEST = 25; // decisions shown
  const history = [];
  let last = null; // the previous totals, for per-second rates
  let busy = false;
  let selected = null;
  let transport = 'none'; // 'sse' while the event stream delivers, 'poll' otherwise
  let pollTimer = null;
  let source = null;
  const received = { frames: 0, chars: 0 }; // stream frames and their characters so far (two numbers, flat)

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function row(cells, cls) {
    const tr = el('tr', null, cls);
    for (const c of cells) tr.appendChild(el('td', c === null || c === undefined ? '-' : c));
    return tr;
  }

  async function get(path) {
    const r = await fetch(path, { credentials: 'same-origin', cache: 'no-store' });
    if (!r.ok) throw new Error(path + ': HTTP ' + r.status);
    return r.json();
  }

  function setStatus(text, error) {
    const s = document.getElementById('status');
    s.textContent = text;
    s.className = error ? 'status error' : 'status';
  }

  function renderRanks(view, active) {
    const body = document.querySelector('#ranks tbody');
    const rows = [];
    for (const r of view.ranks) {
      const s = r.sample;
      const key = r.instance_id + '/' + r.dp_rank;
      rows.push(row([r.namespace, r.role, r.instance_id, r.dp_rank,
        s ? s.decode_blocks : null, s ? s.active_prefill_tokens : null,
        s && s.kv_used_blocks !== null ? s.kv_used_blocks + ' / ' + (r.total_kv_blocks ?? '?') : null,
        active.has(key) ? active.get(key) : null,
        s ? s.age_ms + ' ms' : 'no sample'], s && s.fresh ? 'fresh' : 'stale'));
    }
    body.replaceChildren(...rows);
  }

  function renderWorkers(view) {
    const states = {};
    for (const s of view.subscriptions || []) {
      const k = s.family + ' ' + s.state;
      states[k] = (states[k] || 0) + 1;
    }
    const parts = Object.keys(states).sort().map((k) => k + ': ' + states[k]);
    document.getElementById('subscriptions').textContent = 'subscriptions: ' + (parts.join(', ') || 'none');
    const cov = view.broker_coverage;
    document.getElementById('coverage').textContent = 'broker coverage: ' + (cov === null || cov === undefined
      ? 'direct transport'
      : cov.map((c) => c.namespace + (c.covered ? ' covered' : ' NOT covered')).join(', '));
  }

  function renderQuality(t, now) {
    document.getElementById('q-recorded').textContent = t.recorded;
    if (last) {
      const secs = Math.max(0.001, (now - last.at) / 1000);
      const rates = Object.keys(t.by_result).sort().map((k) =>
        k + ' ' + ((t.by_result[k] - (last.t.by_result[k] || 0)) / secs).toFixed(1));
      document.getElementById('q-rate').textContent = rates.join(', ') || '0';
      const d = t.recorded - last.t.recorded;
      const best = t.best_overlap_blocks - last.t.best_overlap_blocks;
      history.push({
        hit: best > 0 ? (t.winner_overlap_blocks - last.t.winner_overlap_blocks) / best : 1,
        avoid: d > 0 ? (t.avoidable_prefill_tokens - last.t.avoidable_prefill_tokens) / d : 0,
      });
      if (history.length > HISTORY) history.shift();
    }
    last = { t: t, at: now };
    document.getElementById('q-results').textContent =
      Object.keys(t.by_result).sort().map((k) => k + ' ' + t.by_result[k]).join(', ') || '-';
    document.getElementById('q-overlap').textContent = t.winner_overlap_blocks + ' / ' + t.best_overlap_blocks +
      ' blocks' + (t.best_overlap_blocks > 0
        ? ' (' + (100 * t.winner_overlap_blocks / t.best_overlap_blocks).toFixed(1) + ' %)' : '');
    document.getElementById('q-avoidable').textContent = t.avoidable_prefill_tokens + ' of ' +
      t.scored_prompt_tokens + ' scored prompt tokens';
    document.getElementById('q-ring').textContent = t.held_bytes + ' bytes in ' + t.capacity + ' slots';
    drawTrend();
  }

  function drawTrend() {
    const c = document.getElementById('trend');
    const g = c.getContext('2d');
    g.clearRect(0, 0, c.width, c.height);
    if (history.length < 2) return;
    const step = c.width / (HISTORY - 1);
    const maxAvoid = Math.max(1, ...history.map((h) => h.avoid));
    const line = (color, f) => {
      g.strokeStyle = color;
      g.beginPath();
      history.forEach((h, i) => {
        const y = c.height - 2 - f(h) * (c.height - 4);
        if (i === 0) g.moveTo(i * step, y); else g.lineTo(i * step, y);
      });
      g.stroke();
    };
    line('#2e7d32', (h) => Math.min(1, h.hit));
    line('#c62828', (h) => h.avoid / maxAvoid);
  }

  function renderDecisions(list) {
    const body = document.querySelector('#decisions tbody');
    const rows = [];
    for (const d of list.slice(0, LATEST)) {
      const tr = row([d.id, d.at.substring(11, 23), d.model, d.result + (d.fallback ? ' (' + d.fallback + ')' : ''),
        d.decode_worker + '/' + d.decode_rank, d.prefill_worker === null ? '-' : d.prefill_worker + '/' + d.prefill_rank,
        d.winner_overlap_blocks + ' (' + d.best_overlap_blocks + ')', d.avoidable_prefill_tokens]);
      tr.dataset.id = d.id;
      rows.push(tr);
    }
    body.replaceChildren(...rows);
  }

  async function showDetail(id) {
    selected = id;
    const d = await get('/admin/dynamo/decisions/' + encodeURIComponent(id));
    if (selected !== id) return;
    document.getElementById('detail-id').textContent = d.id;
    const s = ['model ' + d.model + ', namespace ' + d.namespace, 'result ' + d.result +
      (d.fallback ? ', fallback ' + d.fallback : ''), 'reasons: decode ' + d.decode_reason + ', prefill ' +
      d.prefill_reason, 'prompt: ' + JSON.stringify(d.prompt), 'winner overlap ' + d.winner_overlap_blocks +
      ' blocks, best ' + d.best_overlap_blocks + ', avoidable ' + d.avoidable_prefill_tokens + ' tokens',
      'time to first token on ' + (d.ttft ? d.ttft.worker + '/' + d.ttft.dp_rank + ': predicted ' +
        (d.ttft.predicted_ms === null ? '- (' + d.ttft.basis + ')' : fmt(d.ttft.predicted_ms) + ' ms (' +
        d.ttft.basis + ')') + ', observed ' + (d.ttft.observed_ms === null ? '-' : fmt(d.ttft.observed_ms) +
        ' ms') + ', ' + d.ttft.work_tokens + ' tokens of work' : '-')];
    document.getElementById('detail-summary').textContent = s.join('\n');
    const phases = [];
    for (const p of d.phases) {
      const box = el('div', null, 'phase');
      box.appendChild(el('h3', p.phase + (p.temperature_draw === null ? '' : ', draw ' + p.temperature_draw) +
        (p.omitted ? ', ' + p.omitted + ' candidates omitted' : '')));
      const t = el('table');
      const head = el('tr');
      for (const h of ['worker', 'rank', 'state', 'eligible', 'sample backlog', 'ledger tokens', 'ledger blocks',
        'active seqs', 'overlap', 'credited', 'adjusted prefill', 'decode', 'cost']) head.appendChild(el('th', h));
      const thead = el('thead');
      thead.appendChild(head);
      t.appendChild(thead);
      const tb = el('tbody');
      p.candidates.forEach((c, i) => tb.appendChild(row([c.worker, c.dp_rank, c.state, c.eligible,
        c.sample_backlog, c.ledger_tokens, c.ledger_blocks, c.active_sequences, c.overlap_blocks,
        fmt(c.credited_prefill), fmt(c.adjusted_prefill), fmt(c.decode_blocks), fmt(c.cost)],
        i === p.winner ? 'winner' : '')));
      t.appendChild(tb);
      box.appendChild(t);
      phases.push(box);
    }
    document.getElementById('detail-phases').replaceChildren(...phases);
    document.getElementById('detail').hidden = false;
  }

  function fmt(v) {
    return v === null ? '-' : Math.round(v * 100) / 100;
  }

  function render(ranks, workers, decisions) {
    const active = new Map(); // active sequences per rank: absent until the router tracks them
    renderRanks(ranks, active);
    renderWorkers(workers);
    renderQuality(decisions.totals, Date.now());
    renderDecisions(decisions.decisions);
    setStatus('updated ' + new Date().toISOString().substring(11, 19) + ' UTC over ' + transport, false);
  }

  async function poll() {
    if (busy) return;
    busy = true;
    try {
      const [ranks, workers, decisions] = await Promise.all([get('/admin/dynamo/ranks'),
        get('/admin/dynamo/workers'), get('/admin/dynamo/decisions?limit=' + LATEST)]);
      render(ranks, workers, decisions);
    } catch (e) {
      setStatus(String(e.message || e), true);
    } finally {
      busy = false;
    }
  }

  function startPolling() {
    transport = 'poll';
    if (pollTimer === null) pollTimer = setInterval(poll, POLL_MS);
  }

  // One stream at a time; any failure (refused, server gone, stream ended by a reload) closes it and polls until
  // the next try, so the page never stops updating and never holds more than one connection for events.
  function listen() {
    if (!window.EventSource) {
      startPolling();
      return;
    }
    const streamed = {}; // a new stream's first frame carries every part
    source = new EventSource(EVENTS);
    source.onmessage = (ev) => {
      if (pollTimer !== null) {
        clearInterval(pollTimer);
        pollTimer = null;
      }
      transport = 'sse';
      try {
        // A frame holds only the parts that changed since the stream's previous one: keep the others.
        received.frames++;
        received.chars += ev.data.length;
        const f = JSON.parse(ev.data);
        for (const k of ['ranks', 'workers', 'decisions']) if (f[k] !== undefined) streamed[k] = f[k];
        if (streamed.ranks && streamed.workers && streamed.decisions) {
          render(streamed.ranks, streamed.workers, streamed.decisions);
        }
      } catch (e) {
        setStatus(String(e.message || e), true);
      }
    };
    source.onerror = () => {
      source.close();
      source = null;
      startPolling();
      setTimeout(listen, RETRY_MS);
    };
  }

  document.addEventListener('DOMContentLoaded', () => {
    document.querySelector('#decisions tbody').addEventListener('click', (ev) => {
      const tr = ev.target.closest('tr');
      if (tr && tr.dataset.id) showDetail(tr.dataset.id).catch((e) => setStatus(String(e.message || e), true));
    });
    poll(); // the first view at once; the stream's first frame follows within a second
    listen();
  });

  // For the browser tests: one more poll round now, the transport updates arrive over ('sse' or 'poll'), and the sizes that must stay bounded however long the page
  // stays open (trend points and the document's element count).
  window.continuumFleetPage = Object.freeze({
    poll: poll,
    transport: () => transport,
    received: () => ({ frames: received.frames, chars: received.chars }),
    sizes: () => ({ history: history.length, elements: document.getElementsByTagName('*').length }),
  });
})();
