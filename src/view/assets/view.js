// causim view: draws one run as a space-time diagram (src/view/mod.rs says what and why).
//
// Three layers over one coordinate system:
//   - a canvas for the bulk of the run: lanes, messages, operations, protocol steps, faults
//     (thousands of items, redrawn on every pan and zoom, only what is in view);
//   - an SVG overlay for the selected violation's witness: outlined transactions tagged
//     T1, T2, …, the witness edges with their labels, the messages in flight at the stale read
//     (a few elements with crisp text, which the browser test can find);
//   - HTML panels: the verdict, the proof, the list of violations, the clicked item's record.
// Time runs left to right. The compressed axis gives every instant a step that grows with the
// log of the gap before it, so a 5 µs hop and a 20 ms slow link both stay readable; the linear
// axis is proportional to simulated time. Both are monotone, so the order of events and the
// overlap of intervals (what real-time order is about) are the same on either.
'use strict';
(() => {
  const D = JSON.parse(document.getElementById('causim-data').textContent);

  // ---------------------------------------------------------------------------------------
  // The run, unpacked (row layouts are documented in src/view/data.rs).
  const RUN = D.run || {};
  const NODES = D.nodes || [];
  const SESSIONS = D.sessions || [];
  const STR = D.strings || [];
  const TXNS = (D.txns || []).map((r, i) => ({ i, id: r[0], s: r[1], node: r[2], t0: r[3], t1: r[4], outcome: r[5], label: r[6], fn: r[7], ops: r[8] }));
  const FNS = (D.fns || []).map((r) => ({ name: r[0], s: r[1], machine: r[2], t0: r[3], t1: r[4] }));
  const MSGS = D.msgs || [];
  const STEPS = D.steps || [];
  const FAULTS = D.faults || [];
  const CHECK = D.check || null;
  // A replayed model-check counterexample: [text, message index or -1] per step.
  const CX = D.counterexample || null;
  const VIOLATIONS = (CHECK && CHECK.violations) || [];
  // The run's last instant; messages still in flight then reach past it (their planned arrival).
  const RUN_END = Math.max(RUN.end_ns || 0, 1);
  let END = RUN_END;
  for (const m of MSGS) END = Math.max(END, m[4]);
  const txnById = new Map(TXNS.map((t) => [t.id, t]));
  const txnNode = (t) => (t.node >= 0 ? t.node : t.fn >= 0 ? FNS[t.fn].machine : -1);
  const byStart = TXNS.slice().sort((a, b) => a.t0 - b.t0 || a.id - b.id);

  /** How each witness edge kind is drawn; a kind not listed here draws in grey with its name. */
  const EDGE_STYLE = {
    SessionOrder: { short: 'so', color: '#374151', dash: '', name: 'session order' },
    ReadsFrom: { short: 'wr', color: '#1d5fd1', dash: '', name: 'reads from' },
    CausalOrder: { short: 'co', color: '#7c3aed', dash: '2 4', name: 'causal order' },
    WriteOrder: { short: 'ww', color: '#c26a00', dash: '', name: 'write order' },
    AntiDependency: { short: 'rw', color: '#d0312d', dash: '7 4', name: 'anti-dependency' },
    Realtime: { short: 'rt', color: '#0f766e', dash: '', name: 'real-time order' },
  };
  const edgeStyle = (k) => EDGE_STYLE[k] || { short: String(k), color: '#4b5563', dash: '3 3', name: String(k) };
  const OP_FILL = ['#3f9b5a', '#3b6fb6', '#7b5fb0', '#9aa3b2']; // reads, writes, both, none
  const RED = '#d0312d', WITNESS = '#1f2f6b', FLIGHT = '#e8891c', STEP = '#6d28d9';

  // ---------------------------------------------------------------------------------------
  // Geometry constants (pixels).
  const LABEL_W = 104, AXIS_H = 24, SESSION_LANE_H = 50, NODE_LANE_H = 50, BOX_H = 18, LANE_H_MAX = 96, TOP_PAD = 40;
  const SESSION_LANES_MAX = 32, NODE_SUBROWS_MAX = 6, SUBROW_H = 7;

  // ---------------------------------------------------------------------------------------
  // Time axis.
  function makeAxis(linear) {
    if (linear) return { linear, total: END, u: (t) => t, t: (u) => u };
    const ts = [0, END];
    for (const t of TXNS) ts.push(t.t0, t.t1);
    for (const m of MSGS) ts.push(m[2], m[3], m[4]);
    for (const s of STEPS) ts.push(s[0]);
    for (const f of FNS) { ts.push(f.t0); if (f.t1 >= 0) ts.push(f.t1); }
    for (const f of FAULTS) { ts.push(f.t_ns); if (f.end_ns != null) ts.push(f.end_ns); }
    const sorted = Float64Array.from(ts).sort();
    const T = [];
    for (const t of sorted) if (T.length === 0 || t !== T[T.length - 1]) T.push(t);
    // Each instant is one step after the previous, plus a little more the longer the gap (in
    // units of the median gap), so bursts spread out and long waits stay visibly long.
    const U = new Float64Array(T.length);
    const gaps = [];
    for (let i = 1; i < T.length; i++) gaps.push(T[i] - T[i - 1]);
    gaps.sort((a, b) => a - b);
    const ref = Math.max(1, gaps.length ? gaps[Math.floor(gaps.length / 2)] : 1);
    for (let i = 1; i < T.length; i++) U[i] = U[i - 1] + 1 + 0.4 * Math.log2(1 + (T[i] - T[i - 1]) / ref);
    const n = T.length;
    const search = (arr, v) => { // last index with arr[i] <= v
      let lo = 0, hi = n - 1;
      if (v <= arr[0]) return 0;
      if (v >= arr[hi]) return hi;
      while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (arr[mid] <= v) lo = mid; else hi = mid - 1; }
      return lo;
    };
    return {
      linear,
      total: Math.max(U[n - 1], 1e-9),
      u(t) {
        const i = search(T, t);
        if (i >= n - 1 || T[i + 1] === T[i]) return U[i];
        return U[i] + ((t - T[i]) / (T[i + 1] - T[i])) * (U[i + 1] - U[i]);
      },
      t(u) {
        const i = search(U, u);
        if (i >= n - 1 || U[i + 1] === U[i]) return T[i];
        return T[i] + ((u - U[i]) / (U[i + 1] - U[i])) * (T[i + 1] - T[i]);
      },
    };
  }

  function fmt(ns) {
    if (ns < 1e3) return `${Math.round(ns)}ns`;
    if (ns < 1e6) return `${(ns / 1e3).toFixed(2)}µs`;
    if (ns < 1e9) return `${(ns / 1e6).toFixed(2)}ms`;
    return `${(ns / 1e9).toFixed(3)}s`;
  }

  // ---------------------------------------------------------------------------------------
  // State. Everything the picture depends on is here; `draw()` renders it.
  const state = {
    mode: TXNS.length > 400 || SESSIONS.length > SESSION_LANES_MAX ? 'timeline' : 'detail',
    linear: false,
    u0: 0,
    pxPerU: 1,
    scrollY: 0,
    vi: VIOLATIONS.length ? 0 : -1,
    sel: null, // {type: 'txn'|'msg'|'step', index}
  };
  let axis = makeAxis(false);
  let lanes = [], sessionLane = [], nodeLane = [], txnRow = new Int16Array(TXNS.length), contentH = 0;
  let W = 800, H = 600;

  const $ = (id) => document.getElementById(id);
  const stage = $('stage'), base = $('base'), svg = $('witness'), callout = $('callout'), overview = $('overview');
  const ctx = base.getContext('2d'), octx = overview.getContext('2d');

  const violation = () => (state.vi >= 0 ? VIOLATIONS[state.vi] : null);
  const focusSessions = () => {
    const v = violation();
    if (!v) return [];
    const out = [];
    for (const tr of v.transactions) { const t = txnById.get(tr.id); if (t && !out.includes(t.s)) out.push(t.s); }
    return out;
  };

  // ---------------------------------------------------------------------------------------
  // Lanes: sessions on top, nodes below. In the timeline, sessions collapse onto the node that
  // served them, except the selected violation's sessions, which keep (magnified) lanes.
  function layout() {
    lanes = [];
    sessionLane = new Array(SESSIONS.length).fill(-1);
    nodeLane = new Array(NODES.length).fill(-1);
    // Room above the first lane for the witness's arches.
    let y = AXIS_H + (state.vi >= 0 ? TOP_PAD : 4);
    const add = (lane) => { lane.y = y; y += lane.h; lanes.push(lane); return lanes.length - 1; };
    if (state.mode === 'detail') {
      if (SESSIONS.length <= SESSION_LANES_MAX) {
        SESSIONS.forEach((name, s) => { sessionLane[s] = add({ kind: 'session', title: name, sub: 'session', h: SESSION_LANE_H }); });
      } else {
        // Many sessions: sessions whose lifetimes do not overlap share a row.
        const span = SESSIONS.map(() => [Infinity, -Infinity]);
        for (const t of TXNS) { span[t.s][0] = Math.min(span[t.s][0], t.t0); span[t.s][1] = Math.max(span[t.s][1], t.t1); }
        for (const f of FNS) { span[f.s][0] = Math.min(span[f.s][0], f.t0); span[f.s][1] = Math.max(span[f.s][1], f.t1 >= 0 ? f.t1 : END); }
        const order = SESSIONS.map((_, s) => s).sort((a, b) => span[a][0] - span[b][0] || a - b);
        const rowEnd = [];
        for (const s of order) {
          let r = rowEnd.findIndex((e) => e < span[s][0]);
          if (r < 0) { r = rowEnd.length; rowEnd.push(0); }
          rowEnd[r] = span[s][1];
          sessionLane[s] = r;
        }
        const first = lanes.length;
        rowEnd.forEach((_, r) => add({ kind: 'session', title: `sessions ${r + 1}`, sub: 'shared row', h: SESSION_LANE_H }));
        sessionLane = sessionLane.map((r) => first + r);
      }
    } else {
      for (const s of focusSessions()) sessionLane[s] = add({ kind: 'session', title: SESSIONS[s], sub: 'session (magnified)', h: SESSION_LANE_H, magnified: true });
    }
    // Operations shown on node lanes (the timeline) are packed into sub-rows.
    const rows = NODES.map(() => []);
    txnRow = new Int16Array(TXNS.length).fill(-1);
    if (state.mode === 'timeline') {
      for (const t of byStart) {
        if (sessionLane[t.s] >= 0) continue;
        const n = txnNode(t);
        if (n < 0) continue;
        let r = rows[n].findIndex((e) => e <= t.t0);
        if (r < 0) r = rows[n].length < NODE_SUBROWS_MAX ? rows[n].push(0) - 1 : t.i % NODE_SUBROWS_MAX;
        rows[n][r] = Math.max(rows[n][r], t.t1);
        txnRow[t.i] = r;
      }
    }
    NODES.forEach((name, n) => {
      const h = state.mode === 'timeline' ? Math.max(NODE_LANE_H, 26 + rows[n].length * SUBROW_H) : NODE_LANE_H;
      nodeLane[n] = add({ kind: 'node', title: name, sub: 'node', h, node: n });
    });
    // A short run's few lanes grow to fill two thirds of the stage (shallower arrows, room for
    // labels); the rest stays free for the violation's sentence.
    if (state.mode === 'detail' && lanes.length) {
      const grow = Math.min(LANE_H_MAX / SESSION_LANE_H, ((H - AXIS_H) * 0.66 - (lanes[0].y - AXIS_H)) / (y - lanes[0].y));
      if (grow > 1) {
        let yy = lanes[0].y;
        for (const lane of lanes) { lane.h = Math.round(lane.h * grow); lane.y = yy; yy += lane.h; }
        y = yy;
      }
    }
    contentH = y + 8;
  }

  // Screen positions.
  const X = (t) => LABEL_W + (axis.u(t) - state.u0) * state.pxPerU;
  const laneMid = (l) => lanes[l].y + lanes[l].h / 2 - state.scrollY;
  function endpointLane(e) {
    if (e >= 0) return nodeLane[e] ?? -1;
    const f = FNS[-e - 1];
    if (!f) return -1;
    if (sessionLane[f.s] >= 0) return sessionLane[f.s];
    return f.machine >= 0 ? nodeLane[f.machine] : -1;
  }
  function txnLane(t) {
    if (sessionLane[t.s] >= 0) return sessionLane[t.s];
    const n = txnNode(t);
    return n >= 0 ? nodeLane[n] : -1;
  }
  /** The box of transaction t on screen, or null when it has no lane. */
  function txnBox(t) {
    const l = txnLane(t);
    if (l < 0) return null;
    const x0 = X(t.t0), x1 = Math.max(X(t.t1), x0 + 4);
    if (lanes[l].kind === 'node' && txnRow[t.i] >= 0) {
      const y0 = lanes[l].y - state.scrollY + 22 + txnRow[t.i] * SUBROW_H;
      return { x0, x1, y0, y1: y0 + SUBROW_H - 2, lane: l, small: true };
    }
    const yc = laneMid(l);
    return { x0, x1, y0: yc - BOX_H / 2, y1: yc + BOX_H / 2, lane: l, small: false };
  }

  // ---------------------------------------------------------------------------------------
  // View window.
  const viewW = () => Math.max(W - LABEL_W - 16, 50);
  function fitAll() { setWindow(0, END, 0.03); }
  function setWindow(t0, t1, pad) {
    const u0 = axis.u(t0), u1 = Math.max(axis.u(t1), u0 + 1e-9);
    const span = u1 - u0;
    state.pxPerU = viewW() / (span * (1 + 2 * pad));
    state.u0 = u0 - span * pad;
  }
  function violationWindow(v) {
    let t0 = Infinity, t1 = -Infinity;
    for (const tr of v.transactions) { const t = txnById.get(tr.id); if (t) { t0 = Math.min(t0, t.t0); t1 = Math.max(t1, t.t1); } }
    for (const m of inFlight(v)) t1 = Math.max(t1, MSGS[m][4]);
    return t0 <= t1 ? [t0, t1] : [0, END];
  }
  function showViolation() {
    const v = violation();
    if (!v) return;
    const [t0, t1] = violationWindow(v);
    setWindow(t0, t1, 0.12);
    // Bring the witness's lanes into view.
    const ls = v.transactions.map((tr) => txnById.get(tr.id)).filter(Boolean).map(txnLane).filter((l) => l >= 0);
    if (ls.length) {
      const top = Math.min(...ls.map((l) => lanes[l].y)), bottom = Math.max(...ls.map((l) => lanes[l].y + lanes[l].h));
      if (top - state.scrollY < AXIS_H || bottom - state.scrollY > H) state.scrollY = Math.max(0, top - AXIS_H - 30);
    }
  }
  function clampScroll() { state.scrollY = Math.max(0, Math.min(state.scrollY, Math.max(0, contentH - H))); }

  // Messages on their way from the node where a witness transaction wrote the key to the
  // node where the stale read happened, still in flight when it read: what the reader missed.
  const flightCache = new Map();
  function inFlight(v) {
    if (flightCache.has(v)) return flightCache.get(v);
    const out = [];
    const r = v.read ? txnById.get(v.read.txn) : null;
    const rn = r ? txnNode(r) : -1;
    if (r && rn >= 0 && v.key != null) {
      const key = JSON.stringify(v.key);
      const writers = v.transactions.map((tr) => txnById.get(tr.id)).filter((t) => t && t !== r && txnNode(t) >= 0 && txnNode(t) !== rn && writesKey(t, key));
      for (const w of writers) {
        const wn = txnNode(w);
        MSGS.forEach((m, i) => {
          if (m[0] === wn && m[1] === rn && m[2] >= w.t0 && m[3] <= r.t1 && m[4] > r.t0 && (m[6] === 0 || m[6] === 3)) out.push(i);
        });
      }
    }
    out.sort((a, b) => MSGS[a][2] - MSGS[b][2]);
    const shown = out.slice(0, 3);
    flightCache.set(v, shown);
    return shown;
  }
  function record(t) { try { return JSON.parse(D.records[t.i]); } catch (e) { return null; } }
  function writesKey(t, key) {
    const rec = record(t);
    return !!(rec && Array.isArray(rec.ops) && rec.ops.some((o) => o.f === 'w' && JSON.stringify(o.key) === key));
  }

  // ---------------------------------------------------------------------------------------
  // Drawing: the canvas.
  let pending = false;
  function requestDraw() { if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; draw(); }); } }

  function resize() {
    const r = stage.getBoundingClientRect();
    W = Math.max(200, r.width); H = Math.max(120, r.height);
    const dpr = window.devicePixelRatio || 1;
    base.width = Math.round(W * dpr); base.height = Math.round(H * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const o = overview.getBoundingClientRect();
    overview.width = Math.round(o.width * dpr); overview.height = Math.round(o.height * dpr);
    octx.setTransform(dpr, 0, 0, dpr, 0, 0);
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  }

  function draw() {
    clampScroll();
    const v = violation();
    const dim = !!v;
    const inWitness = new Set(v ? v.transactions.map((t) => t.id) : []);
    const tMin = axis.t(state.u0), tMax = axis.t(state.u0 + (W - LABEL_W) / state.pxPerU);
    ctx.clearRect(0, 0, W, H);
    ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
    ctx.textBaseline = 'middle';

    // Lanes.
    lanes.forEach((lane, l) => {
      const y = lane.y - state.scrollY;
      if (y > H || y + lane.h < 0) return;
      ctx.fillStyle = lane.kind === 'node' ? '#f1f3f8' : lane.magnified ? '#fff9ef' : l % 2 ? '#fbfbfd' : '#ffffff';
      ctx.fillRect(0, y, W, lane.h);
      ctx.strokeStyle = lane.kind === 'node' ? '#9aa3b2' : '#d5d9e2';
      ctx.lineWidth = lane.kind === 'node' ? 1.5 : 1;
      ctx.beginPath(); ctx.moveTo(LABEL_W, y + lane.h / 2); ctx.lineTo(W, y + lane.h / 2); ctx.stroke();
    });

    // Where each session's functions ran: a thicker stretch of its line, named by machine.
    ctx.lineWidth = 3;
    FNS.forEach((f) => {
      const l = sessionLane[f.s];
      if (l < 0) return;
      const t1 = f.t1 >= 0 ? f.t1 : END;
      if (t1 < tMin || f.t0 > tMax) return;
      const x0 = X(f.t0), x1 = X(t1), y = laneMid(l);
      ctx.strokeStyle = '#b9c0cd';
      ctx.beginPath(); ctx.moveTo(x0, y); ctx.lineTo(x1, y); ctx.stroke();
      if (state.mode === 'detail' && x1 - x0 > 46 && f.machine >= 0) {
        ctx.fillStyle = '#7a8394';
        ctx.fillText(`${f.name.slice(f.name.lastIndexOf('/') + 1)} on ${NODES[f.machine]}`, Math.max(x0, LABEL_W) + 3, lanes[l].y + lanes[l].h - state.scrollY - 8);
      }
    });

    if (END > RUN_END) { // messages still in flight when the run ended
      const x = X(RUN_END);
      ctx.strokeStyle = '#9aa3b2'; ctx.setLineDash([2, 3]); ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(x, AXIS_H); ctx.lineTo(x, H); ctx.stroke(); ctx.setLineDash([]);
      ctx.fillStyle = '#7a8394'; ctx.fillText('run ends', x + 3, AXIS_H + 9);
    }
    drawFaults(tMin, tMax);
    drawMessages(tMin, tMax, dim);
    drawSteps(tMin, tMax);
    drawTxns(tMin, tMax, dim, inWitness);
    drawAnomalyMarks(tMin, tMax);
    drawSelection();
    drawAxis();
    drawLaneLabels();
    drawWitness();
    drawOverview();
    selfCheck();
  }

  function drawFaults(tMin, tMax) {
    const clip = (t) => Math.max(LABEL_W, Math.min(W, X(t)));
    for (const f of FAULTS) {
      if (f.what === 'partition') {
        const t1 = f.end_ns != null ? f.end_ns : END;
        if (t1 < tMin || f.t_ns > tMax) continue;
        const x0 = clip(f.t_ns), x1 = clip(t1);
        ctx.fillStyle = 'rgba(208,49,45,0.07)';
        ctx.fillRect(x0, AXIS_H, Math.max(x1 - x0, 2), H);
        ctx.fillStyle = RED;
        ctx.fillText(`partition ${f.index}${f.end_ns != null ? '' : ' (never healed)'}`, x0 + 4, AXIS_H + 9);
      }
    }
    // A crashed node's lane is hatched until it restarts.
    NODES.forEach((_, n) => {
      const l = nodeLane[n];
      if (l < 0) return;
      let down = null;
      const mark = (t0, t1) => {
        const y = lanes[l].y - state.scrollY;
        ctx.fillStyle = 'rgba(208,49,45,0.13)';
        ctx.fillRect(clip(t0), y + 3, Math.max(clip(t1) - clip(t0), 2), lanes[l].h - 6);
      };
      for (const f of FAULTS) {
        if (f.node !== n) continue;
        if (f.what === 'crash') down = f.t_ns;
        if (f.what === 'restart' && down != null) { mark(down, f.t_ns); down = null; }
      }
      if (down != null) mark(down, END);
    });
    for (const f of FAULTS) {
      if (f.t_ns < tMin || f.t_ns > tMax) continue;
      let l = -1, text = '', color = RED;
      if (f.what === 'crash') { l = nodeLane[f.node]; text = '✕ crash'; }
      else if (f.what === 'restart') { l = nodeLane[f.node]; text = '↻ restart'; color = '#2e8b57'; }
      else if (f.what === 'invariant') { l = endpointLane(f.at); text = '⚠ invariant'; }
      else if (f.what === 'abort') { const s = SESSIONS.indexOf(f.session); l = s >= 0 ? sessionLane[s] : -1; text = `abort (${f.text})`; }
      else if (f.what === 'replay diverged') {
        ctx.strokeStyle = RED; ctx.beginPath(); ctx.moveTo(X(f.t_ns), AXIS_H); ctx.lineTo(X(f.t_ns), H); ctx.stroke();
        ctx.fillStyle = RED; ctx.fillText('replay diverged', X(f.t_ns) + 4, AXIS_H + 22);
        continue;
      }
      if (l == null || l < 0) continue;
      ctx.fillStyle = color;
      ctx.font = '600 12px system-ui, "DejaVu Sans", sans-serif';
      ctx.fillText(text, X(f.t_ns) + 2, lanes[l].y - state.scrollY + 9);
      ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
    }
  }

  function arrowHead(x0, y0, x1, y1, size) {
    const a = Math.atan2(y1 - y0, x1 - x0);
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - size * Math.cos(a - 0.4), y1 - size * Math.sin(a - 0.4));
    ctx.lineTo(x1 - size * Math.cos(a + 0.4), y1 - size * Math.sin(a + 0.4));
    ctx.closePath();
    ctx.fill();
  }
  function cross(x, y, r) {
    ctx.beginPath(); ctx.moveTo(x - r, y - r); ctx.lineTo(x + r, y + r); ctx.moveTo(x + r, y - r); ctx.lineTo(x - r, y + r); ctx.stroke();
  }

  let drawnMsgs = []; // [index, x0, y0, x1, y1] of arrows on screen, for clicks
  function drawMessages(tMin, tMax, dim) {
    drawnMsgs = [];
    const labels = [];
    // Zoomed far out, thousands of arrows would paint the lanes solid: fade them so their
    // density shows instead.
    let visible = 0;
    for (const m of MSGS) if (m[4] >= tMin && m[2] <= tMax) visible++;
    const fade = Math.min(1, 500 / Math.max(visible, 1));
    // The witness overlay names the messages in flight at the stale read itself.
    const named = new Set(violation() ? inFlight(violation()) : []);
    for (let i = 0; i < MSGS.length; i++) {
      const m = MSGS[i];
      if (m[4] < tMin || m[2] > tMax) continue;
      const la = endpointLane(m[0]), lb = endpointLane(m[1]);
      if (la < 0 || lb < 0 || la === lb) continue;
      const ya = laneMid(la), yb = laneMid(lb);
      if ((ya < 0 && yb < 0) || (ya > H && yb > H)) continue;
      const xs = X(m[2]), xr = X(m[3]), xe = X(m[4]);
      const client = m[0] < 0 || m[1] < 0;
      const color = client ? '#98a1b3' : '#4b5563';
      ctx.globalAlpha = (dim ? 0.6 : 1) * Math.max(fade, 0.06);
      ctx.strokeStyle = color; ctx.fillStyle = color; ctx.lineWidth = client ? 1 : 1.4;
      if (xr > xs + 1) { // held by a partition or waiting for a replay step
        ctx.setLineDash([4, 3]); ctx.strokeStyle = FLIGHT;
        ctx.beginPath(); ctx.moveTo(xs, ya); ctx.lineTo(xr, ya); ctx.stroke();
        ctx.setLineDash([]); ctx.strokeStyle = color;
      }
      let x1 = xe, y1 = yb;
      if (m[6] === 2) { x1 = xr + Math.min(36, Math.max(14, (xe - xr) * 0.5 + 14)); y1 = ya + (yb - ya) * 0.35; }
      if (m[6] === 3) ctx.setLineDash([5, 4]);
      ctx.beginPath(); ctx.moveTo(xr, ya); ctx.lineTo(x1, y1); ctx.stroke();
      ctx.setLineDash([]);
      if (m[6] === 0) arrowHead(xr, ya, x1, y1, 7);
      else if (m[6] === 1 || m[6] === 2) { ctx.strokeStyle = RED; ctx.lineWidth = 2; cross(x1, y1, 4); }
      ctx.globalAlpha = 1;
      drawnMsgs.push([i, xr, ya, x1, y1, xs]);
      if (Math.hypot(x1 - xr, y1 - ya) > 90 && Math.abs(x1 - xr) > 40 && !named.has(i)) labels.push([i, xr, ya, x1, y1, color]);
    }
    // Message names along their arrows, when there is room for them.
    if (labels.length <= (state.mode === 'timeline' ? 60 : 400)) {
      ctx.font = '10px system-ui, "DejaVu Sans", sans-serif';
      for (const [i, x0, y0, x1, y1, color] of labels) {
        const m = MSGS[i];
        let text = STR[m[5]];
        if (m[6] === 1 || m[6] === 2) text += ` (lost: ${STR[m[7]] ?? '?'})`;
        if (m[6] === 3) text += m[7] >= 0 ? ` (${STR[m[7]]} at the end)` : ' (in flight at the end)';
        const a = Math.atan2(y1 - y0, x1 - x0);
        const flip = Math.abs(a) > Math.PI / 2;
        ctx.save();
        ctx.translate((x0 + x1) / 2, (y0 + y1) / 2);
        ctx.rotate(flip ? a + Math.PI : a);
        ctx.textAlign = 'center';
        ctx.lineWidth = 3; ctx.strokeStyle = 'rgba(255,255,255,0.9)';
        ctx.strokeText(text, 0, -6);
        ctx.fillStyle = color;
        ctx.fillText(text, 0, -6);
        ctx.restore();
      }
      ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
    }
  }

  let drawnSteps = [];
  function drawSteps(tMin, tMax) {
    drawnSteps = [];
    const visible = [];
    for (let i = 0; i < STEPS.length; i++) {
      const s = STEPS[i];
      if (s[0] < tMin || s[0] > tMax) continue;
      const l = endpointLane(s[1]);
      if (l < 0) continue;
      visible.push([i, l]);
      if (visible.length > 3000) break;
    }
    const named = visible.length <= 200;
    const lastEnd = new Map();
    ctx.font = '10px system-ui, "DejaVu Sans", sans-serif';
    for (const [i, l] of visible) {
      const s = STEPS[i];
      const x = X(s[0]), y = laneMid(l);
      ctx.fillStyle = '#5b6474';
      ctx.beginPath(); ctx.moveTo(x, y - 4); ctx.lineTo(x + 4, y); ctx.lineTo(x, y + 4); ctx.lineTo(x - 4, y); ctx.closePath(); ctx.fill();
      drawnSteps.push([i, x, y]);
      if (named) {
        const text = STR[s[3]];
        const w = ctx.measureText(text).width;
        if ((lastEnd.get(l) ?? -Infinity) < x - 2) {
          ctx.fillStyle = '#4b5563';
          ctx.fillText(text, x + 5, y + 13);
          lastEnd.set(l, x + 5 + w);
        }
      }
    }
    ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
  }

  let drawnTxns = [];
  function drawTxns(tMin, tMax, dim, inWitness) {
    drawnTxns = [];
    const lastLabel = new Map();
    let count = 0;
    for (const t of byStart) {
      if (t.t1 < tMin || t.t0 > tMax) continue;
      if (++count > 20000) break;
      const b = txnBox(t);
      if (!b || b.y1 < AXIS_H || b.y0 > H) continue;
      const fill = t.outcome === 1 ? '#c3c8d2' : OP_FILL[t.ops] || OP_FILL[3];
      ctx.globalAlpha = dim && !inWitness.has(t.id) ? 0.4 : 1;
      if (t.outcome === 2) { // unknown outcome: outlined, dashed
        ctx.fillStyle = '#ffffff'; ctx.fillRect(b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0);
        ctx.setLineDash([3, 2]); ctx.strokeStyle = fill; ctx.lineWidth = 1.5;
        ctx.strokeRect(b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0); ctx.setLineDash([]);
      } else {
        ctx.fillStyle = fill; ctx.fillRect(b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0);
      }
      drawnTxns.push([t.i, b.x0, b.y0, b.x1, b.y1]);
      if (!b.small) {
        // The values: inside the box when they fit, else above it if that space is free.
        ctx.font = '600 11.5px system-ui, "DejaVu Sans", sans-serif';
        const text = t.label + (t.outcome === 1 ? ' (aborted)' : t.outcome === 2 ? ' (?)' : '');
        const w = ctx.measureText(text).width;
        if (w + 8 <= b.x1 - b.x0) {
          ctx.fillStyle = t.outcome === 2 ? '#1d2433' : '#ffffff';
          ctx.textAlign = 'center'; ctx.fillText(text, (b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2 + 0.5); ctx.textAlign = 'left';
        } else {
          const x = Math.max((b.x0 + b.x1) / 2 - w / 2, b.x0 - 4);
          if ((lastLabel.get(b.lane) ?? -Infinity) < x - 4) {
            ctx.fillStyle = '#1d2433';
            ctx.fillText(text, x, b.y0 - 8);
            lastLabel.set(b.lane, x + w);
          }
        }
        ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
      }
    }
    ctx.globalAlpha = 1;
  }

  // Every violation, as a red mark on the lane of its stale read (the timeline's anomalies).
  let drawnMarks = [];
  function drawAnomalyMarks(tMin, tMax) {
    drawnMarks = [];
    VIOLATIONS.forEach((v, i) => {
      const t = violationTime(v);
      if (t < tMin || t > tMax || i === state.vi) return;
      const r = v.read ? txnById.get(v.read.txn) : txnById.get(v.transactions[v.transactions.length - 1]?.id);
      const l = r ? txnLane(r) : -1;
      if (l < 0) return;
      const x = X(t), y = lanes[l].y - state.scrollY + 2;
      ctx.fillStyle = RED;
      ctx.beginPath(); ctx.moveTo(x - 5, y); ctx.lineTo(x + 5, y); ctx.lineTo(x, y + 9); ctx.closePath(); ctx.fill();
      drawnMarks.push([i, x, y + 4]);
    });
  }

  function drawSelection() {
    if (!state.sel) return;
    ctx.strokeStyle = '#f2b100'; ctx.lineWidth = 3;
    if (state.sel.type === 'txn') {
      const b = txnBox(TXNS[state.sel.index]);
      if (b) ctx.strokeRect(b.x0 - 2, b.y0 - 2, b.x1 - b.x0 + 4, b.y1 - b.y0 + 4);
    } else if (state.sel.type === 'msg') {
      const d = drawnMsgs.find((a) => a[0] === state.sel.index);
      if (d) { ctx.beginPath(); ctx.moveTo(d[1], d[2]); ctx.lineTo(d[3], d[4]); ctx.stroke(); }
    } else if (state.sel.type === 'step') {
      const d = drawnSteps.find((a) => a[0] === state.sel.index);
      if (d) { ctx.beginPath(); ctx.arc(d[1], d[2], 7, 0, 2 * Math.PI); ctx.stroke(); }
    }
  }

  function drawAxis() {
    ctx.fillStyle = '#ffffff'; ctx.fillRect(0, 0, W, AXIS_H);
    ctx.strokeStyle = '#c9ced8'; ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(0, AXIS_H - 0.5); ctx.lineTo(W, AXIS_H - 0.5); ctx.stroke();
    ctx.fillStyle = '#4b5563'; ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
    const ticks = [];
    if (axis.linear) {
      const span = (W - LABEL_W) / state.pxPerU;
      const raw = (span / (W - LABEL_W)) * 110;
      const p = Math.pow(10, Math.floor(Math.log10(raw)));
      const step = [1, 2, 5, 10].map((k) => k * p).find((s) => s >= raw);
      for (let t = Math.max(0, Math.ceil(state.u0 / step) * step); X(t) < W && t <= END; t += step) ticks.push(t);
    } else {
      // Every ~110 px, the time that lands there (the axis is not proportional).
      for (let x = LABEL_W + 4; x < W - 30; x += 110) {
        const t = axis.t(state.u0 + (x - LABEL_W) / state.pxPerU);
        if (t >= 0 && t <= END && (ticks.length === 0 || t > ticks[ticks.length - 1])) ticks.push(t);
      }
    }
    for (const t of ticks) {
      const x = X(t);
      if (x < LABEL_W) continue;
      ctx.strokeStyle = '#eceef3';
      ctx.beginPath(); ctx.moveTo(x, AXIS_H); ctx.lineTo(x, H); ctx.stroke();
      ctx.strokeStyle = '#9aa3b2';
      ctx.beginPath(); ctx.moveTo(x, AXIS_H - 6); ctx.lineTo(x, AXIS_H); ctx.stroke();
      ctx.fillText(fmt(t), x + 3, AXIS_H / 2);
    }
    ctx.fillStyle = '#6b7280';
    ctx.fillText(axis.linear ? 'time (linear)' : 'time (compressed)', 8, AXIS_H / 2);
  }

  function drawLaneLabels() {
    ctx.fillStyle = '#ffffff'; ctx.fillRect(0, AXIS_H, LABEL_W, H);
    lanes.forEach((lane) => {
      const y = lane.y - state.scrollY;
      if (y > H || y + lane.h < AXIS_H) return;
      ctx.fillStyle = lane.kind === 'node' ? '#eef1f6' : lane.magnified ? '#fff3dc' : '#ffffff';
      ctx.fillRect(0, Math.max(y, AXIS_H), LABEL_W, lane.h);
      ctx.fillStyle = '#1d2433'; ctx.font = '600 13px system-ui, "DejaVu Sans", sans-serif';
      ctx.fillText(lane.title, 10, y + lane.h / 2 - 6);
      ctx.fillStyle = '#7a8394'; ctx.font = '10px system-ui, "DejaVu Sans", sans-serif';
      ctx.fillText(lane.sub, 10, y + lane.h / 2 + 9);
    });
    ctx.strokeStyle = '#c9ced8';
    ctx.beginPath(); ctx.moveTo(LABEL_W - 0.5, AXIS_H); ctx.lineTo(LABEL_W - 0.5, H); ctx.stroke();
    ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
  }

  // ---------------------------------------------------------------------------------------
  // Drawing: the witness overlay (SVG).
  const NS = 'http://www.w3.org/2000/svg';
  function el(tag, attrs, parent, text) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function drawWitness() {
    svg.textContent = '';
    const v = violation();
    callout.hidden = true;
    if (!v && !CX) return;
    const defs = el('defs', {}, svg);
    const markers = new Map();
    const marker = (color) => {
      if (!markers.has(color)) {
        const id = `head-${markers.size}`;
        const m = el('marker', { id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, defs);
        el('path', { d: 'M0,0 L10,5 L0,10 z', fill: color }, m);
        markers.set(color, id);
      }
      return markers.get(color);
    };
    const clipId = 'stage-clip';
    const clip = el('clipPath', { id: clipId }, defs);
    el('rect', { x: LABEL_W, y: AXIS_H, width: Math.max(W - LABEL_W, 0), height: Math.max(H - AXIS_H, 0) }, clip);
    drawCounterexample(clipId);
    if (!v) return;
    const g = el('g', { 'clip-path': `url(#${clipId})`, class: 'w-violation', 'data-violation': state.vi + 1, 'data-anomaly': v.anomaly }, svg);
    const boxes = new Map();
    for (const tr of v.transactions) { const t = txnById.get(tr.id); const b = t && txnBox(t); if (b) boxes.set(tr.id, b); }
    const readTxn = v.read ? v.read.txn : null;

    // The stale read's instant at the node that served it, and what was still on its way there.
    const r = txnById.get(readTxn), rb = boxes.get(readTxn);
    const rn = r ? txnNode(r) : -1;
    const served = r ? servedAt(r) : 0;
    if (rb && rn >= 0 && nodeLane[rn] >= 0 && nodeLane[rn] !== rb.lane) {
      const x = X(served), y1 = laneMid(nodeLane[rn]);
      const rg = el('g', { class: 'w-read-group' }, g);
      el('path', { class: 'w-read-line', d: `M${x},${rb.y1 + 18} L${x},${y1}`, stroke: RED, 'stroke-width': 1.6, 'stroke-dasharray': '4 3' }, rg);
      el('circle', { cx: x, cy: y1, r: 4.5, fill: RED }, rg);
      el('title', {}, rg, `${labelOf(v, readTxn)} was served at ${NODES[rn]} at ${fmt(served)}`);
    }
    for (const i of inFlight(v)) {
      const m = MSGS[i];
      const la = endpointLane(m[0]), lb = endpointLane(m[1]);
      if (la < 0 || lb < 0) continue;
      const x0 = X(m[3]), y0 = laneMid(la), x1 = X(m[4]), y1 = laneMid(lb);
      const fg = el('g', { class: 'w-flight-group', 'data-msg': i }, g);
      el('path', { class: 'w-flight', d: `M${x0},${y0} L${x1},${y1}`, 'marker-end': `url(#${marker(FLIGHT)})` }, fg);
      // The label sits where the message is at the instant of the read.
      const xr = Math.min(Math.max(X(served), x0), x1);
      const yr = y0 + ((xr - x0) / Math.max(x1 - x0, 1)) * (y1 - y0);
      const what = `${STR[m[5]]} ${NODES[m[0]]}→${NODES[m[1]]} still in flight when ${labelOf(v, readTxn)} read ${v.key}`;
      const right = xr + 8 + what.length * 6.6 < W;
      el('text', { class: 'w-label w-flight-label', x: right ? xr + 8 : xr - 8, y: yr - 8, fill: '#b45309', 'text-anchor': right ? 'start' : 'end' }, fg, what);
      el('title', {}, fg, `sent ${fmt(m[2])}, ${m[6] === 0 ? 'delivered' : 'planned to arrive'} ${fmt(m[4])}`);
    }

    // A linearizability failure's smallest failing window, beyond the witness's own operations:
    // outlined dashed, under everything else.
    for (const id of v.window || []) {
      const t = txnById.get(id), b = t && !boxes.has(id) ? txnBox(t) : null;
      if (!b) continue;
      const wg = el('g', { class: 'w-window-group', 'data-txn': id }, g);
      el('rect', { class: 'w-window', x: b.x0 - 3, y: b.y0 - 3, width: b.x1 - b.x0 + 6, height: b.y1 - b.y0 + 6, rx: 3 }, wg);
      el('title', {}, wg, `${SESSIONS[t.s]} ${t.label} (id ${t.id}): in the smallest failing window of ${v.key}'s operations`);
    }
    // Real-time edges: the instant the first operation completed and the instant the second was
    // invoked, as guides across both lanes, so the gap between the two intervals shows.
    v.witness.forEach((e) => {
      if (e.kind !== 'Realtime') return;
      const a = boxes.get(e.from), b = boxes.get(e.to), ta = txnById.get(e.from), tb = txnById.get(e.to);
      if (!a || !b) return;
      const top = Math.min(a.y0, b.y0) - 8, bottom = Math.max(a.y1, b.y1) + 8;
      const rg = el('g', { class: 'w-rt-group', 'data-from': e.from, 'data-to': e.to }, g);
      el('path', { class: 'w-rt-mark', d: `M${a.x1},${top} L${a.x1},${bottom}` }, rg);
      el('path', { class: 'w-rt-mark', d: `M${b.x0},${top} L${b.x0},${bottom}` }, rg);
      el('title', {}, rg, `${labelOf(v, e.from)} completed at ${fmt(ta.t1)}, ${fmt(tb.t0 - ta.t1)} before ${labelOf(v, e.to)} was invoked at ${fmt(tb.t0)}`);
    });

    // Edges, then boxes and tags on top.
    const backCount = new Map();
    v.witness.forEach((e, k) => {
      const a = boxes.get(e.from), b = boxes.get(e.to);
      if (!a || !b) return;
      const st = edgeStyle(e.kind);
      let d, mid;
      const ay = (a.y0 + a.y1) / 2, by = (b.y0 + b.y1) / 2;
      if (b.x0 >= a.x1 - 1 && a.lane !== b.lane) {
        // Forward in time across lanes: from the end of one interval to the start of the next.
        const dx = Math.max(24, (b.x0 - a.x1) * 0.45);
        d = `M${a.x1},${ay} C${a.x1 + dx},${ay} ${b.x0 - dx},${by} ${b.x0},${by}`;
        mid = bez([a.x1, ay], [a.x1 + dx, ay], [b.x0 - dx, by], [b.x0, by]);
      } else {
        // Same lane, or backwards in time: an arch over the boxes, from top to top.
        const n = backCount.get(a.lane) || 0; backCount.set(a.lane, n + 1);
        let ax = b.x0 >= a.x1 - 1 ? a.x1 - 3 : (a.x0 + a.x1) / 2, bx = b.x0 >= a.x1 - 1 ? b.x0 + 3 : (b.x0 + b.x1) / 2;
        if (a.lane !== b.lane && Math.abs(ax - bx) < 16) {
          // Operations at the same time on two lanes: a downward edge left of the line between
          // them, an upward one right of it, so two edges in opposite directions stay apart.
          const off = (a.y0 < b.y0 ? -1 : 1) * (12 + 8 * n);
          ax += off; bx += off;
        }
        const top = Math.min(a.y0, b.y0) - 26 - 16 * n - (a.lane !== b.lane ? 10 : 0);
        d = `M${ax},${a.y0} C${ax},${top} ${bx},${top} ${bx},${b.y0}`;
        mid = bez([ax, a.y0], [ax, top], [bx, top], [bx, b.y0]);
      }
      const eg = el('g', { class: 'w-edge-group', 'data-kind': e.kind, 'data-from': e.from, 'data-to': e.to }, g);
      el('path', { class: 'w-edge', d, stroke: st.color, 'stroke-dasharray': st.dash, 'marker-end': `url(#${marker(st.color)})`, 'data-index': k }, eg);
      const text = st.short + (e.key != null ? ` ${e.key}` : '');
      el('text', { class: 'w-label w-edge-label', x: mid[0], y: mid[1] - 4, fill: st.color, 'text-anchor': 'middle' }, eg, text);
      el('title', {}, eg, `${st.name}: ${e.because}`);
    });
    for (const tr of v.transactions) {
      const b = boxes.get(tr.id);
      if (!b) continue;
      const bad = tr.id === readTxn;
      const color = bad ? RED : WITNESS;
      const tg = el('g', { class: 'w-txn-group', 'data-txn': tr.id, 'data-label': tr.label }, g);
      el('rect', { class: 'w-txn', x: b.x0 - 3, y: b.y0 - 3, width: b.x1 - b.x0 + 6, height: b.y1 - b.y0 + 6, rx: 3, stroke: color }, tg);
      const tag = el('g', { class: 'w-tag' }, tg);
      const tw = 8 + 7.5 * tr.label.length;
      el('rect', { x: b.x0 - 3, y: b.y1 + 4, width: tw, height: 15, rx: 7, fill: color }, tag);
      el('text', { x: b.x0 - 3 + tw / 2, y: b.y1 + 15.5, 'text-anchor': 'middle' }, tag, tr.label);
      el('title', {}, tg, `${tr.label} = ${tr.session} ${tr.summary}${tr.node ? ` at ${tr.node}` : ''} (id ${tr.id})`);
    }
    placeCallout(v, boxes, readTxn);
  }
  // A replayed counterexample: each delivery of the model checker's schedule outlined on its
  // arrow and numbered as in the side panel's list of steps.
  function drawCounterexample(clipId) {
    if (!CX) return;
    const g = el('g', { 'clip-path': `url(#${clipId})`, class: 'cx' }, svg);
    CX.steps.forEach(([what, mi], k) => {
      if (mi < 0) return;
      const m = MSGS[mi];
      const la = endpointLane(m[0]), lb = endpointLane(m[1]);
      if (la < 0 || lb < 0 || la === lb) return;
      const x0 = X(m[3]), y0 = laneMid(la), x1 = X(m[4]), y1 = laneMid(lb);
      const sg = el('g', { class: 'cx-step', 'data-step': k + 1, 'data-msg': mi }, g);
      el('path', { class: 'cx-arrow', d: `M${x0},${y0} L${x1},${y1}` }, sg);
      // The number sits on the arrow, three quarters of the way, where arrows of one instant
      // that leave one lane have already parted.
      const bx = x0 + (x1 - x0) * 0.75, by = y0 + (y1 - y0) * 0.75;
      el('circle', { class: 'cx-badge', cx: bx, cy: by, r: 9 }, sg);
      el('text', { class: 'cx-num', x: bx, y: by + 4, 'text-anchor': 'middle' }, sg, String(k + 1));
      el('title', {}, sg, `step ${k + 1}: ${what}`);
    });
  }
  /** When a transaction's node handled it: its function's request arriving there, else its midpoint. */
  function servedAt(t) {
    const n = txnNode(t);
    if (t.fn >= 0 && n >= 0) {
      const fe = -t.fn - 1;
      for (const m of MSGS) if (m[0] === fe && m[1] === n && m[6] === 0 && m[4] >= t.t0 && m[4] <= t.t1) return m[4];
    }
    return (t.t0 + t.t1) / 2;
  }
  const bez = (p0, p1, p2, p3) => [(p0[0] + 3 * p1[0] + 3 * p2[0] + p3[0]) / 8, (p0[1] + 3 * p1[1] + 3 * p2[1] + p3[1]) / 8];
  const labelOf = (v, id) => (v.transactions.find((t) => t.id === id) || { label: `#${id}` }).label;

  function placeCallout(v, boxes, readTxn) {
    const anchor = boxes.get(readTxn) || boxes.get(v.transactions[v.transactions.length - 1]?.id);
    if (!anchor) return;
    callout.innerHTML = '';
    const b = document.createElement('b');
    b.textContent = `${state.vi + 1}/${VIOLATIONS.length} ${v.anomaly}`;
    callout.append(b, document.createElement('br'), document.createTextNode(v.sentence));
    const r = txnById.get(readTxn);
    for (const i of inFlight(v)) {
      const m = MSGS[i];
      const why = text('div', `At ${NODES[m[1]]}, a message from ${NODES[m[0]]} (where ${v.key} was written) was still on its way: `
        + `${STR[m[5]]}, sent ${fmt(m[2])}, ${m[6] === 0 ? 'arrived' : 'due'} ${fmt(m[4])}, after the read at ${fmt(servedAt(r))}.`, 'flight');
      callout.appendChild(why);
    }
    callout.hidden = false;
    const cw = callout.offsetWidth, ch = callout.offsetHeight;
    // Under the lanes, below the stale read, if there is room there; else just under the read.
    const x = Math.min(Math.max(anchor.x0 - cw / 2, LABEL_W + 6), W - cw - 8);
    let y = contentH - state.scrollY + 6;
    if (y + ch > H - 6) y = anchor.y1 + 26;
    if (y + ch > H - 6) y = Math.max(AXIS_H + 4, anchor.y0 - ch - 34);
    callout.style.left = `${x}px`;
    callout.style.top = `${y}px`;
  }

  // ---------------------------------------------------------------------------------------
  // The overview strip: the whole run, operations and anomalies per time slice, and the window.
  function violationTime(v) {
    const r = v.read ? txnById.get(v.read.txn) : null;
    if (r) return r.t1;
    let t = 0;
    for (const tr of v.transactions) { const x = txnById.get(tr.id); if (x) t = Math.max(t, x.t1); }
    return t;
  }
  let binsCache = null;
  function bins(count) {
    if (binsCache && binsCache.count === count && binsCache.axis === axis) return binsCache;
    const ops = new Float64Array(count), bad = new Float64Array(count), first = new Int32Array(count).fill(-1);
    const bin = (t) => Math.min(count - 1, Math.max(0, Math.floor((axis.u(t) / axis.total) * count)));
    for (const t of TXNS) ops[bin(t.t0)]++;
    VIOLATIONS.forEach((v, i) => { const b = bin(violationTime(v)); bad[b]++; if (first[b] < 0) first[b] = i; });
    binsCache = { count, axis, ops, bad, first, maxOps: Math.max(1, ...ops), maxBad: Math.max(1, ...bad) };
    return binsCache;
  }
  const OV_BIN_PX = 3;
  function drawOverview() {
    const ow = overview.clientWidth, oh = overview.clientHeight;
    octx.clearRect(0, 0, ow, oh);
    const w = ow - LABEL_W - 16;
    if (w < 20) return;
    const bs = bins(Math.max(1, Math.floor(w / OV_BIN_PX)));
    const x = (i) => LABEL_W + i * OV_BIN_PX;
    const hmax = oh - 16;
    octx.fillStyle = '#aab2c0';
    for (let i = 0; i < bs.count; i++) if (bs.ops[i]) { const h = Math.max(1, (bs.ops[i] / bs.maxOps) * hmax * 0.8); octx.fillRect(x(i), oh - 3 - h, OV_BIN_PX - 0.5, h); }
    octx.fillStyle = RED;
    for (let i = 0; i < bs.count; i++) if (bs.bad[i]) { const h = Math.max(5, (bs.bad[i] / bs.maxBad) * hmax); octx.fillRect(x(i), oh - 3 - h, OV_BIN_PX, h); }
    // The main view's window.
    const a = LABEL_W + (state.u0 / axis.total) * w, b = LABEL_W + ((state.u0 + (W - LABEL_W) / state.pxPerU) / axis.total) * w;
    octx.fillStyle = 'rgba(31,47,107,0.10)'; octx.strokeStyle = WITNESS; octx.lineWidth = 1.5;
    const x0 = Math.max(LABEL_W, a), x1 = Math.min(LABEL_W + w, Math.max(b, a + 2));
    octx.fillRect(x0, 1, x1 - x0, oh - 2); octx.strokeRect(x0, 1, x1 - x0, oh - 2);
    const v = violation();
    if (v) {
      const vx = LABEL_W + (axis.u(violationTime(v)) / axis.total) * w;
      octx.fillStyle = RED;
      octx.beginPath(); octx.moveTo(vx - 5, 1); octx.lineTo(vx + 5, 1); octx.lineTo(vx, 8); octx.closePath(); octx.fill();
    }
    $('overview-label').textContent = VIOLATIONS.length ? `ops · anomalies (${CHECK.violation_count})` : 'operations over time';
  }
  function overviewU(clientX) {
    const r = overview.getBoundingClientRect();
    const w = r.width - LABEL_W - 16;
    return ((clientX - r.left - LABEL_W) / w) * axis.total;
  }

  // ---------------------------------------------------------------------------------------
  // A self-check the browser test reads: is every witness element laid out inside the stage?
  function selfCheck() {
    const sr = stage.getBoundingClientRect();
    const visible = (e) => {
      const r = e.getBoundingClientRect();
      const cs = getComputedStyle(e);
      // A vertical or horizontal line has no width or no height, and is still seen.
      return (r.width > 0 || r.height > 0) && r.right > sr.left + LABEL_W && r.left < sr.right && r.bottom > sr.top + AXIS_H && r.top < sr.bottom
        && cs.visibility !== 'hidden' && cs.display !== 'none' && Number(cs.opacity) > 0;
    };
    let shown = 0, all = 0;
    for (const e of svg.querySelectorAll('.w-txn, .w-edge, .w-edge-label, .w-flight, .w-rt-mark, .w-window')) {
      const ok = visible(e);
      e.setAttribute('data-visible', ok ? '1' : '0');
      all++; if (ok) shown++;
    }
    document.body.setAttribute('data-witness-visible', `${shown}/${all}`);
    let steps = 0, stepsShown = 0;
    for (const e of svg.querySelectorAll('.cx-badge')) {
      const ok = visible(e);
      e.setAttribute('data-visible', ok ? '1' : '0');
      steps++; if (ok) stepsShown++;
    }
    document.body.setAttribute('data-steps-visible', `${stepsShown}/${steps}`);
    callout.setAttribute('data-visible', !callout.hidden && visible(callout) ? '1' : '0');
    document.body.setAttribute('data-ready', '1');
  }

  // ---------------------------------------------------------------------------------------
  // Panels.
  function text(tag, content, cls) { const e = document.createElement(tag); if (cls) e.className = cls; if (content != null) e.textContent = content; return e; }

  function renderHeader() {
    const title = $('run-title');
    title.textContent = RUN.name || 'run';
    const badge = text('span', '', 'badge');
    if (!CHECK) { badge.classList.add('none'); badge.textContent = 'not checked'; }
    else if (CHECK.ok) { badge.classList.add('pass'); badge.textContent = `${CHECK.level}: ok`; }
    else { badge.classList.add('fail'); badge.textContent = `${CHECK.level}: ${CHECK.violation_count} violation${CHECK.violation_count === 1 ? '' : 's'}`; }
    title.appendChild(badge);
    const facts = $('run-facts');
    const parts = [];
    if (RUN.protocol) parts.push(['protocol ', RUN.protocol]);
    if (RUN.mutants && RUN.mutants.length) parts.push(['mutants ', RUN.mutants.join(', ')]);
    if (RUN.seed != null) parts.push(['seed ', String(RUN.seed)]);
    if (RUN.scenario) parts.push(['scenario ', RUN.scenario]);
    parts.push(['', `${TXNS.length} transactions, ${MSGS.length} messages, ${NODES.length} nodes, ${SESSIONS.length} sessions, ${fmt(END)}`]);
    if (!RUN.traced) parts.push(['', 'no trace: operations only']);
    parts.forEach(([k, v], i) => {
      if (i) facts.append(' · ');
      facts.append(k);
      facts.appendChild(text('code', v));
    });
    if (RUN.description) facts.title = RUN.description;
  }

  function renderVerdict() {
    const box = $('verdict');
    box.textContent = '';
    if (RUN.invariant) box.appendChild(text('div', `Invariant violated: ${RUN.invariant}`, 'line fail'));
    if (!CHECK) { box.appendChild(text('div', 'The history was not checked (the run names no level; `causim view --level L` checks it).', 'muted')); return; }
    const n = CHECK.violation_count;
    box.appendChild(text('div', CHECK.ok ? `OK: the history satisfies ${CHECK.level} (${CHECK.level_title}).`
      : n ? `FAIL: ${n} violation${n === 1 ? '' : 's'} of ${CHECK.level} (${CHECK.level_title}).`
        : `UNKNOWN: no violation of ${CHECK.level} found, but the check is incomplete.`, `line ${CHECK.ok ? 'pass' : 'fail'}`));
    const counts = Object.entries(CHECK.counts || {});
    if (counts.length) box.appendChild(text('div', counts.map(([a, k]) => `${a} ×${k}`).join(', '), 'muted'));
    if (VIOLATIONS.length < n) box.appendChild(text('div', `The first ${VIOLATIONS.length} are listed and drawn.`, 'muted'));
    for (const note of CHECK.notes || []) box.appendChild(text('div', `Note: ${note}`, 'muted'));
  }

  function renderCounterexample() {
    const box = $('counterexample');
    if (!CX) { box.hidden = true; return; }
    box.appendChild(text('h3', 'model-check counterexample'));
    box.appendChild(text('div', CX.property
      ? `The model checker found that “${CX.property}” can be violated. These are its steps; the run replays its deliveries in this order (numbered on the diagram).`
      : 'The run replays a recorded delivery order (the scenario\'s replay schedule); its steps are numbered on the diagram.', 'cx-intro'));
    const ol = text('ol', null, 'cx-steps');
    CX.steps.forEach(([what, mi], k) => {
      const li = text('li', what);
      li.value = k + 1;
      if (mi >= 0) {
        li.classList.add('delivery');
        li.title = `delivered at ${fmt(MSGS[mi][4])}: show the message`;
        li.onclick = () => selectMsg(mi);
      } else if (/ → /.test(what)) li.title = 'not in the trace: the replay did not make this delivery';
      else li.title = 'a session\'s choice: what it does next';
      ol.appendChild(li);
    });
    box.appendChild(ol);
  }

  function renderScenario() {
    const box = $('scenario');
    if (!RUN.description) { box.hidden = true; return; }
    box.appendChild(text('h3', 'scenario'));
    box.appendChild(text('div', RUN.description, 'muted'));
  }

  function renderViolationPanel() {
    const panel = $('violation-panel');
    panel.hidden = VIOLATIONS.length === 0;
    if (!VIOLATIONS.length) return;
    $('violation-count').textContent = `violation ${state.vi + 1} of ${VIOLATIONS.length}`;
    const v = violation();
    const box = $('violation-detail');
    box.textContent = '';
    box.appendChild(text('div', `#${state.vi + 1} ${v.anomaly}`, 'name'));
    const aka = [];
    if (v.popl17) aka.push(`POPL'17 ${v.popl17}`);
    if (v.tap) aka.push(`Plume ${v.tap} ${v.tap_name || ''}`.trim());
    if (v.elle) aka.push(`Elle ${v.elle}`);
    aka.push(`breaks ${v.level}`);
    box.appendChild(text('div', aka.join(' · '), 'aka'));
    box.appendChild(text('div', v.sentence, 'sentence'));
    box.appendChild(text('h3', 'Let'));
    const lets = text('ul', null, 'lets');
    v.explanation.lets.forEach((line, i) => {
      const li = text('li', line);
      const tr = v.transactions[i];
      if (tr) { li.title = 'show its record'; li.onclick = () => selectTxn(txnById.get(tr.id)); }
      lets.appendChild(li);
    });
    box.appendChild(lets);
    box.appendChild(text('h3', 'Then'));
    const then = text('ul');
    // The explanation's steps follow the witness edges, the contradiction is the last edge.
    const paired = v.explanation.steps.length + 1 === v.witness.length;
    const key = (e) => { const st = edgeStyle(e.kind); const k = text('span', st.short + (e.key != null ? ` ${e.key}` : ''), 'edge-key'); k.style.color = st.color; k.title = st.name; return k; };
    v.explanation.steps.forEach((s, i) => { const li = text('li'); if (paired) li.appendChild(key(v.witness[i])); li.append(s); then.appendChild(li); });
    const last = text('li', null, 'contradiction');
    if (paired) last.appendChild(key(v.witness[v.witness.length - 1]));
    last.append(v.explanation.contradiction);
    then.appendChild(last);
    box.appendChild(then);
    // The order the witness forces, which comes back to where it started: no history order can
    // have it (for linearizability, no order respects real time and every read).
    const chain = v.witness.every((e, i) => i === 0 || e.from === v.witness[i - 1].to);
    if (chain && v.witness.length && v.witness[v.witness.length - 1].to === v.witness[0].from) {
      box.appendChild(text('h3', 'The impossible order'));
      const order = text('div', null, 'order');
      order.append(labelOf(v, v.witness[0].from));
      for (const e of v.witness) { order.append(' —'); order.appendChild(key(e)); order.append(`→ ${labelOf(v, e.to)}`); }
      box.appendChild(order);
    }
    if (v.window && v.window.length > v.transactions.length) {
      box.appendChild(text('div', `The smallest failing window found has ${v.window.length} operations on ${v.key} (the others outlined dashed): `
        + `without any one of them, the rest is linearizable.`, 'muted'));
    }
    const flights = inFlight(v);
    if (flights.length) {
      box.appendChild(text('h3', 'In flight at the read'));
      const ul = text('ul');
      for (const i of flights) {
        const m = MSGS[i];
        const li = text('li', `${STR[m[5]]} ${NODES[m[0]]}→${NODES[m[1]]}: sent ${fmt(m[2])}, ${m[6] === 0 ? 'delivered' : 'still on its way at the end,'} ${fmt(m[4])}`);
        li.style.cursor = 'pointer'; li.onclick = () => selectMsg(i);
        ul.appendChild(li);
      }
      box.appendChild(ul);
    }
    const list = $('violations');
    if (!list.childElementCount) {
      VIOLATIONS.forEach((w, i) => {
        const r = w.read ? w.transactions.find((t) => t.id === w.read.txn) : w.transactions[w.transactions.length - 1];
        const li = text('li', `${w.anomaly} at ${fmt(violationTime(w))}${r ? ` · ${r.session} ${r.summary}` : ''}`);
        li.onclick = () => selectViolation(i);
        list.appendChild(li);
      });
    }
    [...list.children].forEach((li, i) => li.classList.toggle('on', i === state.vi));
    const on = list.children[state.vi];
    if (on) {
      const top = on.offsetTop - list.offsetTop;
      if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - 20) list.scrollTop = top - 40;
    }
  }

  function renderDetails() {
    const box = $('details');
    box.textContent = '';
    const sel = state.sel;
    if (!sel) { box.appendChild(text('p', 'Click an operation, a message or a protocol step to see its record.', 'muted')); return; }
    if (sel.type === 'txn') {
      const t = TXNS[sel.index];
      box.appendChild(text('h3', `transaction ${t.id}`));
      const f = t.fn >= 0 ? FNS[t.fn] : null;
      box.appendChild(text('div', `${SESSIONS[t.s]} ${t.label} · ${['ok', 'aborted', 'failed (outcome unknown)'][t.outcome]} · ${fmt(t.t0)} → ${fmt(t.t1)}${f ? ` · function ${f.name}` : ''}${txnNode(t) >= 0 ? ` · at ${NODES[txnNode(t)]}` : ''}`));
      const roles = [];
      VIOLATIONS.forEach((v, i) => { const tr = v.transactions.find((x) => x.id === t.id); if (tr) roles.push([i, tr.label, v.anomaly]); });
      if (roles.length) {
        const p = text('div', 'In witnesses: ');
        roles.slice(0, 12).forEach(([i, label, a], k) => { if (k) p.append(', '); const s = text('a', `#${i + 1} ${a} as ${label}`); s.href = '#'; s.onclick = (ev) => { ev.preventDefault(); selectViolation(i); }; p.appendChild(s); });
        box.appendChild(p);
      }
      box.appendChild(text('h3', 'history record'));
      const rec = record(t);
      // One field a line, each value compact (a version vector stays on one line).
      const pretty = rec ? `{\n${Object.entries(rec).map(([k, x]) => `  ${JSON.stringify(k)}: ${JSON.stringify(x)}`).join(',\n')}\n}` : D.records[t.i];
      box.appendChild(text('pre', pretty, 'record'));
      // What the protocol reported while serving it: the steps the function's messages caused,
      // and the messages themselves.
      const rows = [];
      if (t.fn >= 0) {
        STEPS.forEach((s, i) => { if (s[2] === t.fn && s[0] >= t.t0 && s[0] <= t.t1) rows.push([s[0], `${endpointName(s[1])}: ${STR[s[3]]}`, s[4], () => selectStep(i)]); });
        const fe = -t.fn - 1;
        MSGS.forEach((m, i) => {
          if ((m[0] === fe || m[1] === fe) && m[4] >= t.t0 && m[3] <= t.t1) rows.push([m[4], `${endpointName(m[0])} → ${endpointName(m[1])} ${STR[m[5]]}`, D.details[i] || '', () => selectMsg(i)]);
        });
      }
      rows.sort((a, b) => a[0] - b[0]);
      box.appendChild(text('h3', 'protocol state it reported'));
      if (!rows.length) box.appendChild(text('div', RUN.traced ? 'No trace entries for this transaction.' : 'The run has no trace.', 'muted'));
      else box.appendChild(table(rows));
    } else if (sel.type === 'msg') {
      const m = MSGS[sel.index];
      const fate = ['delivered', `lost at the receiver (${STR[m[7]] ?? '?'})`, `lost on the way (${STR[m[7]] ?? '?'})`, `unfinished at the end${m[7] >= 0 ? ` (${STR[m[7]]})` : ''}`][m[6]];
      box.appendChild(text('h3', `message ${STR[m[5]]}`));
      box.appendChild(text('div', `${endpointName(m[0])} → ${endpointName(m[1])} · sent ${fmt(m[2])}${m[3] !== m[2] ? `, held until ${fmt(m[3])}` : ''} · ${fate} ${fmt(m[4])} (${fmt(m[4] - m[3])} on the wire)`));
      if (D.details[sel.index]) box.appendChild(text('pre', D.details[sel.index]));
    } else if (sel.type === 'step') {
      const s = STEPS[sel.index];
      box.appendChild(text('h3', `protocol step ${STR[s[3]]}`));
      box.appendChild(text('div', `${endpointName(s[1])} at ${fmt(s[0])}${s[2] >= 0 ? ` · handling ${FNS[s[2]].name}` : ''}`));
      box.appendChild(text('pre', s[4]));
    }
  }
  function table(rows) {
    const tb = text('table');
    for (const [t, what, args, onclick] of rows) {
      const tr = text('tr');
      tr.appendChild(text('td', fmt(t), 't'));
      const w = text('td', what); w.style.cursor = 'pointer'; w.onclick = onclick;
      tr.appendChild(w);
      tr.appendChild(text('td', args, 'args'));
      tb.appendChild(tr);
    }
    return tb;
  }
  const endpointName = (e) => (e >= 0 ? NODES[e] : FNS[-e - 1] ? FNS[-e - 1].name : '?');

  function renderLegend() {
    const box = $('legend');
    box.appendChild(text('h3', 'legend'));
    const item = (draw, label) => {
      const d = text('div');
      const s = document.createElementNS(NS, 'svg');
      s.setAttribute('width', 34); s.setAttribute('height', 14);
      draw(s);
      d.appendChild(s); d.append(label);
      box.appendChild(d);
    };
    item((s) => el('rect', { x: 2, y: 2, width: 30, height: 10, fill: OP_FILL[1] }, s), 'write (box spans its interval, labelled with values)');
    item((s) => el('rect', { x: 2, y: 2, width: 30, height: 10, fill: OP_FILL[0] }, s), 'read (⊥: the initial value)');
    item((s) => el('path', { d: 'M2,7 L30,7', stroke: '#4b5563', 'stroke-width': 1.5 }, s), 'message between nodes (grey: to or from a client)');
    item((s) => el('path', { d: 'M2,7 L16,7', stroke: FLIGHT, 'stroke-dasharray': '4 3', 'stroke-width': 1.5 }, s), 'held by a partition / waiting for a replay step');
    item((s) => el('path', { d: 'M20,3 L28,11 M28,3 L20,11', stroke: RED, 'stroke-width': 2 }, s), 'message lost');
    item((s) => el('path', { d: 'M17,2 L22,7 L17,12 L12,7 z', fill: '#5b6474' }, s), 'protocol step (trace action)');
    for (const k of Object.keys(EDGE_STYLE)) {
      const st = EDGE_STYLE[k];
      item((s) => el('path', { d: 'M2,7 L32,7', stroke: st.color, 'stroke-width': 2.4, 'stroke-dasharray': st.dash }, s), `${st.short}: ${st.name} (witness edge)`);
    }
    item((s) => el('path', { d: 'M2,7 L32,7', stroke: FLIGHT, 'stroke-width': 4 }, s), 'in flight to the stale read\'s node when it read');
    if (VIOLATIONS.some((v) => v.witness.some((e) => e.kind === 'Realtime'))) {
      item((s) => { el('path', { d: 'M8,1 L8,13 M26,1 L26,13', stroke: EDGE_STYLE.Realtime.color, 'stroke-dasharray': '2 3', 'stroke-width': 1.4 }, s); el('path', { d: 'M8,7 L26,7', stroke: EDGE_STYLE.Realtime.color, 'stroke-width': 2 }, s); }, 'rt: one operation completed, then the other was invoked');
    }
    if (VIOLATIONS.some((v) => v.window && v.window.length > v.transactions.length)) {
      item((s) => el('rect', { x: 3, y: 2, width: 28, height: 10, rx: 2, fill: 'none', stroke: WITNESS, 'stroke-dasharray': '5 3', 'stroke-width': 1.6 }, s), 'in the smallest failing window (linearizability)');
    }
    if (CX) {
      item((s) => { el('path', { d: 'M2,7 L32,7', stroke: STEP, 'stroke-width': 3.5, 'stroke-opacity': 0.55 }, s); el('circle', { cx: 17, cy: 7, r: 6, fill: STEP }, s); }, 'a step of the counterexample, numbered (a delivery it schedules)');
    }
  }

  function renderButtons() {
    $('mode-detail').classList.toggle('on', state.mode === 'detail');
    $('mode-timeline').classList.toggle('on', state.mode === 'timeline');
    $('axis-compressed').classList.toggle('on', !state.linear);
    $('axis-linear').classList.toggle('on', state.linear);
    $('zoom-violation').disabled = !violation();
  }

  // ---------------------------------------------------------------------------------------
  // Selection and the address bar (#v=2, #op=17, #mode=timeline, #axis=linear, #t=START-END in ns).
  function writeHash() {
    const parts = [];
    if (state.vi >= 0) parts.push(`v=${state.vi + 1}`);
    if (state.sel && state.sel.type === 'txn') parts.push(`op=${TXNS[state.sel.index].id}`);
    parts.push(`mode=${state.mode}`);
    if (state.linear) parts.push('axis=linear');
    try { history.replaceState(null, '', `#${parts.join('&')}`); } catch (e) { /* file: URLs in some browsers */ }
  }
  function selectViolation(i) {
    if (!VIOLATIONS.length) return;
    state.vi = (i + VIOLATIONS.length) % VIOLATIONS.length;
    if (state.mode === 'timeline') layout();
    showViolation();
    renderViolationPanel(); renderButtons(); writeHash(); requestDraw();
  }
  function selectTxn(t) {
    if (!t) return;
    state.sel = { type: 'txn', index: t.i };
    const b = txnBox(t);
    if (!b || b.x1 < LABEL_W || b.x0 > W) setWindow(Math.max(0, t.t0 - (t.t1 - t.t0) * 4 - 1), t.t1 + (t.t1 - t.t0) * 4 + 1, 0.2);
    renderDetails(); writeHash(); requestDraw();
  }
  function selectMsg(i) { state.sel = { type: 'msg', index: i }; renderDetails(); requestDraw(); }
  function selectStep(i) { state.sel = { type: 'step', index: i }; renderDetails(); requestDraw(); }
  function setMode(mode) {
    state.mode = mode;
    layout();
    if (violation()) showViolation();
    renderButtons(); writeHash(); requestDraw();
  }
  function setAxis(linear) {
    const [t0, t1] = [axis.t(state.u0), axis.t(state.u0 + viewW() / state.pxPerU)];
    state.linear = linear;
    axis = makeAxis(linear);
    setWindow(t0, t1, 0);
    renderButtons(); writeHash(); requestDraw();
  }

  // ---------------------------------------------------------------------------------------
  // Input.
  function zoomAt(px, factor) {
    const u = state.u0 + (px - LABEL_W) / state.pxPerU;
    state.pxPerU *= factor;
    state.u0 = u - (px - LABEL_W) / state.pxPerU;
    requestDraw();
  }
  stage.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const r = stage.getBoundingClientRect();
    if (ev.shiftKey) { state.scrollY += ev.deltaY || ev.deltaX; requestDraw(); return; }
    if (Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) { state.u0 += ev.deltaX / state.pxPerU; requestDraw(); return; }
    zoomAt(ev.clientX - r.left, Math.exp(-ev.deltaY * 0.0015));
  }, { passive: false });
  let drag = null;
  stage.addEventListener('mousedown', (ev) => { drag = { x: ev.clientX, y: ev.clientY, u0: state.u0, sy: state.scrollY, moved: false }; stage.classList.add('dragging'); });
  window.addEventListener('mousemove', (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    state.u0 = drag.u0 - dx / state.pxPerU;
    state.scrollY = drag.sy - dy;
    requestDraw();
  });
  window.addEventListener('mouseup', (ev) => {
    if (!drag) return;
    const click = !drag.moved;
    drag = null; stage.classList.remove('dragging');
    if (click) {
      const r = stage.getBoundingClientRect();
      pick(ev.clientX - r.left, ev.clientY - r.top);
    }
  });
  function pick(x, y) {
    for (let k = drawnTxns.length - 1; k >= 0; k--) {
      const [i, x0, y0, x1, y1] = drawnTxns[k];
      if (x >= x0 - 2 && x <= x1 + 2 && y >= y0 - 2 && y <= y1 + 2) { selectTxn(TXNS[i]); return; }
    }
    for (const [i, mx, my] of drawnMarks) if (Math.hypot(x - mx, y - my) < 7) { selectViolation(i); return; }
    for (const [i, sx, sy] of drawnSteps) if (Math.hypot(x - sx, y - sy) < 6) { selectStep(i); return; }
    let best = null, bestD = 5;
    for (const [i, x0, y0, x1, y1] of drawnMsgs) {
      const dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy || 1;
      const k = Math.max(0, Math.min(1, ((x - x0) * dx + (y - y0) * dy) / len2));
      const d = Math.hypot(x - (x0 + k * dx), y - (y0 + k * dy));
      if (d < bestD) { bestD = d; best = i; }
    }
    if (best != null) { selectMsg(best); return; }
    state.sel = null; renderDetails(); writeHash(); requestDraw();
  }
  let ovDrag = false;
  overview.addEventListener('mousedown', (ev) => {
    ovDrag = true;
    const r = overview.getBoundingClientRect();
    const w = r.width - LABEL_W - 16;
    const i = Math.floor((ev.clientX - r.left - LABEL_W) / OV_BIN_PX);
    const bs = binsCache;
    if (bs) for (const j of [i, i - 1, i + 1]) if (j >= 0 && j < bs.count && bs.first[j] >= 0) { selectViolation(bs.first[j]); ovDrag = false; return; }
    if (w > 0) centerAt(overviewU(ev.clientX));
  });
  window.addEventListener('mousemove', (ev) => { if (ovDrag) centerAt(overviewU(ev.clientX)); });
  window.addEventListener('mouseup', () => { ovDrag = false; });
  function centerAt(u) { state.u0 = u - viewW() / state.pxPerU / 2; requestDraw(); }
  window.addEventListener('keydown', (ev) => {
    if (ev.target && ev.target.tagName === 'INPUT') return;
    const k = ev.key;
    if (k === 'n' || k === 'j') selectViolation(state.vi + 1);
    else if (k === 'p' || k === 'k') selectViolation(state.vi - 1);
    else if (k === 'f') { fitAll(); requestDraw(); }
    else if (k === 'v') { showViolation(); requestDraw(); }
    else if (k === '+' || k === '=') zoomAt(LABEL_W + viewW() / 2, 1.5);
    else if (k === '-') zoomAt(LABEL_W + viewW() / 2, 1 / 1.5);
    else if (k === 'Escape') { state.sel = null; renderDetails(); requestDraw(); }
  });
  $('mode-detail').onclick = () => setMode('detail');
  $('mode-timeline').onclick = () => setMode('timeline');
  $('axis-compressed').onclick = () => setAxis(false);
  $('axis-linear').onclick = () => setAxis(true);
  $('zoom-in').onclick = () => zoomAt(LABEL_W + viewW() / 2, 1.5);
  $('zoom-out').onclick = () => zoomAt(LABEL_W + viewW() / 2, 1 / 1.5);
  $('fit').onclick = () => { fitAll(); requestDraw(); };
  $('zoom-violation').onclick = () => { showViolation(); requestDraw(); };
  $('prev').onclick = () => selectViolation(state.vi - 1);
  $('next').onclick = () => selectViolation(state.vi + 1);
  window.addEventListener('resize', () => { resize(); layout(); requestDraw(); });

  // ---------------------------------------------------------------------------------------
  // Start: read the address bar, lay out, frame the first violation (or the whole run).
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get('mode') === 'timeline' || hash.get('mode') === 'detail') state.mode = hash.get('mode');
  if (hash.get('axis') === 'linear') { state.linear = true; axis = makeAxis(true); }
  if (hash.has('v') && VIOLATIONS.length) state.vi = Math.min(Math.max(Number(hash.get('v')) - 1 || 0, 0), VIOLATIONS.length - 1);
  renderHeader(); renderVerdict(); renderCounterexample(); renderScenario(); renderLegend(); renderButtons();
  resize();
  layout();
  const span = (hash.get('t') || '').split('-').map(Number);
  if (span.length === 2 && span[0] < span[1]) setWindow(span[0], span[1], 0);
  else if (state.vi >= 0 && TXNS.length > 200) showViolation();
  else fitAll();
  renderViolationPanel();
  const op = hash.has('op') ? txnById.get(Number(hash.get('op'))) : null;
  if (op) selectTxn(op); else renderDetails();
  draw();
  // How long the page took to show the run, from navigation start (README: 10 000 operations).
  document.body.setAttribute('data-first-draw-ms', String(Math.round(performance.now())));
})();
