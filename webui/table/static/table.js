// Royal Table page: draws the view the server sends (SSE) and posts the players' choices.
"use strict";

const CSRF = document.querySelector('meta[name="csrf-token"]').content;
const SUIT = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const GLYPH = {
  white: { king: "\u2654", queen: "\u2655", rook: "\u2656", bishop: "\u2657", knight: "\u2658", pawn: "\u2659" },
  black: { king: "\u265A", queen: "\u265B", rook: "\u265C", bishop: "\u265D", knight: "\u265E", pawn: "\u265F" },
};
const FILES = "abcdefg";
const CELL_W = 90, CELL_H = 100, BX = 30, BY = 20;
const SVG = "http://www.w3.org/2000/svg";

let current = null;          // the last view from the server
let hand = new Set();         // cards tapped in the hand picker
let highlight = null;         // {from, to, target, key}
let selectedMove = null;      // the move group or exact move picked
let planCache = { key: null, data: null };
let unsureCells = new Set();  // cells the camera could not read with confidence

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function cardLabel(code) {
  if (!code) return "?";
  if (code === "JK") return "JK";
  return code.slice(0, -1) + SUIT[code.slice(-1)];
}

function cardColour(code) {
  if (!code) return "";
  if (code === "JK") return "joker";
  return "DH".includes(code.slice(-1)) ? "red" : "black";
}

function flash(message, kind = "error") {
  const box = $("flash");
  box.textContent = message;
  box.className = "flash " + kind;
  box.hidden = false;
  clearTimeout(flash.timer);
  flash.timer = setTimeout(() => { box.hidden = true; }, kind === "error" ? 8000 : 3000);
}

async function api(method, url, body) {
  const opts = { method, headers: { "X-CSRF-Token": CSRF }, credentials: "same-origin" };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(url, opts);
  } catch (err) {
    flash("The server cannot be reached: " + err.message);
    throw err;
  }
  let data = null;
  try { data = await resp.json(); } catch (_) { data = null; }
  if (!resp.ok) {
    const message = (data && data.error) || resp.statusText;
    flash(message);
    throw new Error(message);
  }
  return data;
}

async function post(url, body) {
  const data = await api("POST", url, body);
  if (data && "version" in data) render(data);
  return data;
}

const act = (action) => post("/api/action", { action });

// ------------------------------------------------------------------ board

function cellXY(cell) {
  const f = FILES.indexOf(cell[0]), r = Number(cell[1]) - 1;
  return [BX + f * CELL_W, BY + (4 - r) * CELL_H];  // rank 5 (black's edge) at the top
}

function drawBoard(v) {
  const root = $("board");
  root.replaceChildren();
  const hl = highlight || {};
  const keys = new Set(v.key_cells || []);
  for (let r = 5; r >= 1; r--) {
    for (let f = 0; f < 7; f++) {
      const cell = FILES[f] + r;
      const [x, y] = cellXY(cell);
      const g = svg("g", { class: "cell", "data-cell": cell, transform: `translate(${x},${y})` });
      let cls = "cell-bg";
      if (hl.from === cell) cls += " hl-from";
      if (hl.to === cell) cls += " hl-to";
      if (hl.target === cell) cls += " hl-target";
      if (keys.has(cell) || (hl.key && hl.target === cell)) cls += " key";
      if (v.moved === cell) cls += " moved";
      if (unsureCells.has(cell)) cls += " unsure";
      if ((r === 1 || r === 5) && f % 2 === 0 && v.phase === "setup") cls += " setup-spot";
      g.append(svg("rect", { class: cls, x: 2, y: 2, width: CELL_W - 4, height: CELL_H - 4, rx: 6 }));
      g.append(svg("text", { class: "cell-name", x: 7, y: 15 }, cell));
      const entry = v.board[cell];
      if (entry && entry.card) {
        const land = entry.orientation === "landscape";
        const w = land ? 76 : 58, h = land ? 58 : 78;
        g.append(svg("rect", { class: "card", x: (CELL_W - w) / 2, y: (CELL_H - h) / 2, width: w, height: h, rx: 5 }));
        if (entry.stack > 1) {
          g.append(svg("text", { class: "stack", x: CELL_W - 8, y: 15, "text-anchor": "end" }, "\u00d7" + entry.stack));
        }
        g.append(svg("text", { class: "card-code " + (entry.colour || ""), x: (CELL_W - w) / 2 + 5, y: (CELL_H - h) / 2 + 17 },
          cardLabel(entry.card)));
      }
      if (entry && entry.unit) {
        const u = entry.unit;
        g.append(svg("circle", { class: "unit " + u.side, cx: CELL_W / 2, cy: 55, r: 19 }));
        g.append(svg("text", { class: "glyph " + u.side, x: CELL_W / 2, y: 64, "text-anchor": "middle" }, GLYPH[u.side][u.kind]));
        const frac = Math.max(0, u.life_left / u.life);
        g.append(svg("rect", { class: "life-bg", x: 12, y: 80, width: CELL_W - 24, height: 9, rx: 3 }));
        g.append(svg("rect", { class: "life " + (frac > 0.5 ? "ok" : frac > 0.25 ? "low" : "crit"), x: 12, y: 80,
          width: (CELL_W - 24) * frac, height: 9, rx: 3 }));
        g.append(svg("text", { class: "life-text", x: CELL_W / 2, y: 98, "text-anchor": "middle" }, `${u.life_left}/${u.life}`));
      }
      g.addEventListener("click", () => pickCell(cell));
      root.append(g);
    }
  }
  if (hl.from && hl.to && hl.from !== hl.to) drawArrow(root, hl.from, hl.to, "arrow-move");
  if (hl.to && hl.target) drawArrow(root, hl.to, hl.target, "arrow-attack");
  // initiative cards beside file g, each by its owner's home rank
  for (const [side, y] of [["black", 40], ["white", 330]]) {
    const x = BX + 7 * CELL_W + 20;
    const code = v.initiative[side];
    const first = v.first === side;
    root.append(svg("text", { class: "init-label", x, y: y - 6 }, `${side} initiative${first ? " \u2605" : ""}`));
    root.append(svg("rect", { class: "card init" + (code ? "" : " empty"), x, y, width: 70, height: 96, rx: 6 }));
    root.append(svg("text", { class: "card-code big " + cardColour(code), x: x + 35, y: y + 58, "text-anchor": "middle" },
      code ? cardLabel(code) : "\u2014"));
    root.append(svg("text", { class: "deck-label", x, y: y + 116 },
      `deck ${v.decks[side]} \u00b7 hand ${v.hand_sizes[side]}`));
  }
}

function drawArrow(root, a, b, cls) {
  const [x1, y1] = cellXY(a), [x2, y2] = cellXY(b);
  root.append(svg("line", { class: cls, x1: x1 + CELL_W / 2, y1: y1 + CELL_H / 2, x2: x2 + CELL_W / 2, y2: y2 + CELL_H / 2 }));
}

function pickCell(cell) {
  const form = $("correct-form");
  form.cell.value = cell;
  const e = current && current.board[cell];
  form.card.value = e && e.card ? e.card : "";
  form.piece.value = "";
  form.injury.value = e && e.unit ? e.unit.injury : "";
  form.dataset.card = form.card.value;
  form.dataset.injury = form.injury.value;
  $("correct").classList.add("focus");
  setTimeout(() => $("correct").classList.remove("focus"), 800);
}

function setHighlight(h) {
  highlight = h;
  if (current && current.game) drawBoard(current);
}

// ------------------------------------------------------------------ panels

function renderStatus(v) {
  $("btn-export").classList.toggle("disabled", !v.game);
  if (!v.game) {
    $("status").textContent = "No game yet";
    return;
  }
  const n = v.game.names;
  const turn = v.to_move ? `${n[v.to_move]} (${v.to_move}) to play` : "table to act";
  $("status").replaceChildren(
    el("span", { class: "pill white" }, n.white), " vs ", el("span", { class: "pill black" }, n.black),
    el("span", { class: "sep" }, "\u00b7"), `round ${v.round}`,
    el("span", { class: "sep" }, "\u00b7"), el("b", {}, v.phase),
    el("span", { class: "sep" }, "\u00b7"), turn);
}

function renderAct(v) {
  const box = $("act");
  box.replaceChildren();
  $("prompt").textContent = v.prompt;
  $("prompt").className = "prompt" + (v.outcome ? " over" : "");
  $("setup-guide").hidden = !(v.phase === "setup" || v.phase === "place");
  if (v.chance) {
    const c = v.chance;
    const list = el("datalist", { id: "chance-cards" }, c.cards.map((code) => el("option", { value: code })));
    const input = el("input", { id: "chance-card", list: "chance-cards", size: 5, maxlength: 3,
      placeholder: "e.g. 7H", autocomplete: "off" });
    const form = el("form", { class: "chance", onsubmit: (ev) => {
      ev.preventDefault();
      const code = input.value.trim().toUpperCase();
      if (!code) { flash("Name the card first (e.g. 7H, 10S, QD)."); return; }
      act(c.template.replace("{card}", code));
    } }, el("label", { for: "chance-card" }, `${c.side} ${c.event} card${c.cell ? " on " + c.cell : ""}: `),
    input, list, el("button", { type: "submit", class: "primary" }, "Record"));
    box.append(form);
    setTimeout(() => input.focus({ preventScroll: true }), 0);
  }
  const places = v.choices.filter((c) => c.kind);
  const others = v.choices.filter((c) => !c.kind);
  if (places.length) {
    const kinds = [...new Set(places.map((p) => p.kind))];
    for (const kind of kinds) {
      box.append(el("div", { class: "place-row" }, el("span", { class: "place-kind" }, kind),
        places.filter((p) => p.kind === kind).map((p) =>
          el("button", { type: "button", "data-action": p.action, onclick: () => act(p.action) }, p.to))));
    }
  }
  if (others.length) {
    box.append(el("div", { class: "choices" }, others.map((c) =>
      el("button", { type: "button", "data-action": c.action, onclick: () => act(c.action) }, c.label))));
  }
  if (v.attacks.length) {
    const rows = v.attacks.map((a) => {
      const eff = a.effects.map((e) => e.healed ? `${e.cell} +${e.healed}` : `${e.cell} \u2212${e.damage}${e.removed ? " \u2620" : ""}`).join(", ");
      return el("tr", { class: "attack-row" + (a.hit ? " hit" : " miss"), "data-action": a.action,
        onmouseenter: () => setHighlight({ from: v.moved, to: v.moved, target: a.target, key: a.key }),
        onclick: () => act(a.action) },
      el("td", {}, `${a.target} ${a.target_unit}`), el("td", {}, a.style),
      el("td", {}, a.trumps.map(cardLabel).join(" ") || "\u2014"), el("td", {}, a.needed),
      el("td", {}, a.hit ? (a.critical ? "critical" : "hit") : "miss"), el("td", {}, eff || "\u2014"),
      el("td", {}, a.key ? `key (${a.position}), +${a.draws}` : a.position),
      el("td", {}, el("button", { type: "button", class: "primary" }, "Resolve")));
    });
    box.append(el("h3", {}, "Attacks after the move"),
      el("table", { class: "grid attacks" }, el("thead", {}, el("tr", {},
        ["target", "style", "trumps", "needed", "result", "damage", "position", ""].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows)));
  }
}

function renderTallies(v) {
  for (const side of ["white", "black"]) {
    const box = $("tally-" + side);
    const rows = [];
    for (const u of v.tallies[side]) {
      const frac = Math.max(0, u.life_left / u.life);
      const state = u.status.replace(" ", "-");
      rows.push(el("tr", { class: "unit-row " + state, "data-cell": u.cell, onclick: () => u.cell && pickCell(u.cell) },
        el("td", { class: "glyph-cell " + side, rowspan: 2 }, GLYPH[side][u.kind]),
        el("td", {}, el("b", {}, u.kind), el("div", { class: "small" }, `${u.type} \u00b7 ${u.cell || u.status}`)),
        el("td", {}, `${u.accuracy}/${u.evasion}`),
        el("td", {}, u.weapon, el("div", { class: "small" }, u.damage.join("/"))),
        el("td", {}, u.armor_name, el("div", { class: "small" }, `armor ${u.armor}`)),
        el("td", { class: "life-cell" }, el("div", { class: "tally-life" }, `${u.life_left}/${u.life}`),
          el("div", { class: "mini-bar" }, el("div", { class: "mini-fill " + (frac > 0.5 ? "ok" : frac > 0.25 ? "low" : "crit"),
            "data-frac": frac.toFixed(2) })),
          el("div", { class: "small" }, `injury ${u.injury}`))));
      rows.push(el("tr", { class: "adv-row " + state },
        el("td", { colspan: 5 }, el("b", {}, u.advantage), " \u2014 ", u.advantage_text)));
    }
    box.replaceChildren(el("h3", {}, `${v.game.names[side]} \u2014 ${side}`),
      el("table", { class: "grid tally-table", "data-side": side },
        el("thead", {}, el("tr", {}, ["", "unit", "acc/eva", "weapon e/o/r", "armor", "life"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows)));
    // widths by class, since the page's CSP allows no inline style attributes
    box.querySelectorAll(".mini-fill").forEach((f) => { f.style.width = (Number(f.dataset.frac) * 100) + "%"; });
  }
}

function renderLog(v) {
  const items = v.log.slice().reverse().map((e) => el("li", { class: "log-" + e.kind },
    el("span", { class: "seq" }, e.seq), " ", e.text, e.kind === "correction" ? el("em", {}, " (correction)") : null));
  $("log").replaceChildren(...items);
  $("btn-undo").disabled = !v.events;
}

function moveLabel(m) {
  return `${m.unit} ${m.from}\u2192${m.to}`;
}

function renderMoves(data) {
  const box = $("moves");
  box.replaceChildren();
  $("moves-mode").textContent = data.side ? (data.exact ? "(exact, from the tapped cards)" : "(by card colour: the hand is hidden)") : "";
  if (!data.moves.length) {
    box.append(el("p", { class: "note" }, data.side ? "No movement is possible with these cards." : "Not a movement phase."));
    return;
  }
  // one row per unit: its destinations, each with the card colours (or cards) that get it there
  const list = el("div", { class: "move-list" });
  const byUnit = new Map();
  for (const m of data.moves) {
    if (!byUnit.has(m.from)) byUnit.set(m.from, []);
    byUnit.get(m.from).push(m);
  }
  for (const [from, moves] of byUnit) {
    const row = el("div", { class: "unit-moves" },
      el("span", { class: "unit-name" }, `${moves[0].unit} ${from}`));
    for (const m of moves) {
      const named = m.declared ? ` as ${m.declared}` : "";
      const label = (data.exact ? `\u2192${m.to} ${cardLabel(m.card)}` : `\u2192${m.to}`) + named;
      const btn = el("button", { type: "button", class: "move " + m.colour, "data-from": m.from, "data-to": m.to,
        "data-colour": m.colour, "data-card": data.exact ? m.card : null,
        title: data.exact ? m.action : `${m.colour} card (${m.cards.length} possible)` },
      label, data.exact ? null : el("span", { class: "dot " + m.colour }));
      btn.addEventListener("click", () => selectMove(m, data.exact, btn));
      row.append(btn);
    }
    list.append(row);
  }
  box.append(list, el("div", { id: "move-confirm", class: "move-confirm" }));
}

function selectMove(m, exact, btn) {
  document.querySelectorAll(".move.selected").forEach((b) => b.classList.remove("selected"));
  btn.classList.add("selected");
  selectedMove = m;
  setHighlight({ from: m.from, to: m.to });
  const box = $("move-confirm");
  box.replaceChildren();
  if (exact) {
    box.append(`Play ${cardLabel(m.card)}: ${moveLabel(m)} `,
      el("button", { type: "button", class: "primary", id: "play-move", onclick: () => act(m.action) }, "Play"));
    return;
  }
  const select = el("select", { id: "move-card" }, m.cards.map((c) => el("option", { value: c }, cardLabel(c))));
  const tapped = m.cards.find((c) => hand.has(c));
  if (tapped) select.value = tapped;
  box.append(`${moveLabel(m)} with the ${m.colour} card played: `, select, " ",
    el("button", { type: "button", class: "primary", id: "play-move",
      onclick: () => act(m.template.replace("{card}", select.value)) }, "Play"));
}

function renderPlan(data) {
  const box = $("plan");
  if (!data.options.length) {
    box.replaceChildren(el("p", { class: "note" }, "The planner has options in the movement phase."));
    return;
  }
  let head, rows;
  if (data.exact) {
    // the best first: hits, then by damage dealt and cards drawn
    const dealt = (o) => o.effects.reduce((n, e) => n + e.damage + e.healed, 0);
    const opts = data.options.filter((o) => o.target)
      .sort((a, b) => (b.hit - a.hit) || (dealt(b) - dealt(a)) || (b.draws - a.draws));
    head = ["unit", "card", "to", "target", "style", "trumps", "needed", "hit", "damage", "key position", "draws"];
    rows = opts.map((o) => el("tr", { class: "plan-row" + (o.hit ? " hit" : " miss"),
      onclick: () => setHighlight({ from: o.from, to: o.to, target: o.target, key: o.key }) },
    el("td", {}, o.unit), el("td", { class: cardColour(o.card) }, cardLabel(o.card)), el("td", {}, o.to), el("td", {}, o.target),
    el("td", {}, o.style), el("td", {}, o.trumps.map(cardLabel).join(" ") || "\u2014"), el("td", {}, o.needed),
    el("td", {}, o.hit ? (o.critical ? "critical" : "hit") : "miss"),
    el("td", {}, o.effects.map((e) => e.healed ? `${e.cell} +${e.healed}` : `${e.cell} \u2212${e.damage}`).join(", ") || "\u2014"),
    el("td", {}, o.key ? `key \u00b7 ${o.position}` : o.position || ""), el("td", {}, o.draws)));
  } else {
    head = ["unit", "to", "target", "style", "known trumps", "needed", "playable", "trump ranks", "hit now", "hit with a trump card"];
    const rank = (o) => (o.hit_without_card ? 2 : o.hit_with_trump_card ? 1 : 0);
    const sorted = data.options.slice().sort((a, b) => rank(b) - rank(a));
    rows = sorted.map((o) => el("tr", { class: "plan-row" + (o.hit_without_card ? " hit" : o.hit_with_trump_card ? " maybe" : " miss"),
      onclick: () => setHighlight({ from: o.from, to: o.to, target: o.target }) },
    el("td", {}, o.unit), el("td", {}, o.to), el("td", {}, o.target), el("td", {}, o.style),
    el("td", {}, o.known_trumps.map(cardLabel).join(" ") || "\u2014"), el("td", {}, o.needed),
    el("td", {}, o.playable_colours.join(", ") || "joker only"), el("td", {}, o.trump_ranks),
    el("td", {}, o.hit_without_card ? "yes" : "no"), el("td", {}, o.hit_with_trump_card ? "yes" : "no")));
  }
  box.replaceChildren(el("table", { class: "grid plan-table" }, el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows)));
}

async function refreshMovesAndPlan(v) {
  if (!v.game || v.phase !== "movement" || !v.to_move) {
    renderMoves(v.moves || { side: null, moves: [] });
    renderPlan({ options: [] });
    return;
  }
  const cards = [...hand].join(",");
  if (!cards) {
    renderMoves(v.moves);
  } else {
    try { renderMoves(await api("GET", "/api/moves?cards=" + encodeURIComponent(cards))); } catch (_) { renderMoves(v.moves); }
  }
  const key = v.version + "|" + cards;
  if (planCache.key !== key) {
    try {
      planCache = { key, data: await api("GET", "/api/plan" + (cards ? "?cards=" + encodeURIComponent(cards) : "")) };
    } catch (_) { planCache = { key, data: { options: [] } }; }
  }
  renderPlan(planCache.data);
}

function clearHand() {
  hand.clear();
  document.querySelectorAll(".chip.on").forEach((c) => c.classList.remove("on"));
}

function buildHandPicker() {
  const box = $("hand-picker");
  const ranks = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
  for (const s of ["S", "H", "C", "D"]) {
    const row = el("div", { class: "hand-row" });
    for (const r of ranks) row.append(handChip(r + s));
    if (s === "D") row.append(handChip("JK"));
    box.append(row);
  }
}

function handChip(code) {
  const chip = el("button", { type: "button", class: "chip " + cardColour(code), "data-card": code }, cardLabel(code));
  chip.addEventListener("click", () => {
    if (hand.has(code)) hand.delete(code); else hand.add(code);
    chip.classList.toggle("on", hand.has(code));
    if (current) refreshMovesAndPlan(current);
  });
  return chip;
}

// ------------------------------------------------------------------ camera

async function refreshProposals() {
  let data;
  try { data = await api("GET", "/api/proposals"); } catch (_) { return; }
  const unsure = new Set(data.unsure);
  if ([...unsure].join() !== [...unsureCells].join()) {
    unsureCells = unsure;
    if (current && current.game) drawBoard(current);
  }
  const box = $("proposals");
  if (!data.proposals.length) {
    // what the camera's game waits for (a card it cannot name, a move it cannot explain)
    box.hidden = !data.waiting;
    box.replaceChildren(...(data.waiting ? [el("p", { class: "small" }, "The camera waits: " + data.waiting)] : []));
    return;
  }
  box.hidden = false;
  box.replaceChildren(el("h3", {}, "The camera saw"), ...data.proposals.map((p) =>
    el("div", { class: "proposal " + p.kind }, el("span", {}, p.text), el("span", { class: "small" }, p.why),
      el("button", { type: "button", class: "primary", "data-proposal": p.text, onclick: () =>
        (p.kind === "action" ? act(p.text) : post("/api/correct", { text: p.text })).then(refreshProposals) },
      p.kind === "action" ? "Accept" : "Correct"))));
}

function overlays() {
  return [...document.querySelectorAll("[data-overlay]")].filter((c) => c.checked).map((c) => c.dataset.overlay).join(",");
}

async function setupCamera() {
  let info;
  try { info = await api("GET", "/api/camera"); } catch (_) { return; }
  const img = $("camera-img");
  const off = $("camera-off");
  if (info.state === "off" || !info.spec) {
    img.hidden = true; off.hidden = false;
    $("camera-note").textContent = "";
    return;
  }
  img.hidden = false; off.hidden = true;
  $("btn-calibrate").hidden = false;
  img.src = "/video.mjpg?overlays=" + overlays();
  img.onerror = () => { img.hidden = true; off.hidden = false; off.textContent = "The picture stopped: " + (info.message || "source ended"); };
  const notes = [];
  if (!info.grid) notes.push("no calibration profile: grid and key overlays are off");
  if (info.scanner_note) notes.push(info.scanner_note);
  if (info.set_note) notes.push(info.set_note);
  else if (!info.scanner) notes.push("no scanner yet: enter what happens with the buttons");
  if (info.scanner && !setupCamera.polling) setupCamera.polling = setInterval(refreshProposals, 1500);
  $("camera-note").textContent = `${info.spec.split("/").pop()} \u00b7 ${info.state}` + (notes.length ? " \u2014 " + notes.join("; ") : "");
}

// ------------------------------------------------------------------ main

function render(v) {
  if (current && v.version < current.version) return;  // an older message arrived late
  const newTurn = !current || !current.game || !v.game || current.version !== v.version;
  if (current && current.to_move !== v.to_move && v.to_move) clearHand();  // another player's hand
  const gameChanged = v.game && (!current || !current.game || current.game.id !== v.game.id);
  if (gameChanged) $("newgame").hidden = true;  // a game began (here, in another tab, or imported)
  current = v;
  renderStatus(v);
  if (!v.game) {
    $("main").hidden = true;
    $("newgame").hidden = false;
    return;
  }
  $("main").hidden = false;
  if (newTurn) { highlight = null; selectedMove = null; }
  drawBoard(v);
  renderAct(v);
  renderTallies(v);
  renderLog(v);
  refreshMovesAndPlan(v);
}

function listen() {
  const source = new EventSource("/api/events");
  source.addEventListener("view", (ev) => render(JSON.parse(ev.data)));
  source.onerror = () => {
    // the browser reconnects by itself; meanwhile fetch once so the page is not stale
    api("GET", "/api/view").then(render).catch(() => {});
  };
}

function wire() {
  $("btn-new").addEventListener("click", () => { $("newgame").hidden = false; $("newgame").scrollIntoView(); });
  $("newgame-cancel").addEventListener("click", () => { if (current && current.game) $("newgame").hidden = true; });
  $("newgame-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = ev.target;
    const setup = { armies: {}, names: {}, options: {} };
    for (const side of ["white", "black"]) {
      setup.names[side] = f["name-" + side].value;
      setup.armies[side] = [0, 1, 2, 3].map((i) => f[`unit-${side}-${i}`].value);
    }
    for (const opt of ["allow_pass", "allow_move_onto_unit", "joker_declared_colour", "critical_doubles_advantages"]) {
      setup.options[opt] = f[opt].checked;
    }
    await post("/api/game", setup);
    $("newgame").hidden = true;
    flash("New game started: lay the set-up cards.", "ok");
  });
  $("btn-undo").addEventListener("click", () => post("/api/undo"));
  $("import-file").addEventListener("change", async (ev) => {
    const file = ev.target.files[0];
    if (!file) return;
    let data;
    try { data = JSON.parse(await file.text()); } catch (_) { flash("That file is not JSON."); return; }
    await post("/api/import", data);
    flash("Game imported.", "ok");
    ev.target.value = "";
  });
  $("hand-clear").addEventListener("click", () => {
    clearHand();
    if (current) refreshMovesAndPlan(current);
  });
  $("correct-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = ev.target;
    const cell = f.cell.value.trim().toLowerCase();
    if (!/^[a-g][1-5]$/.test(cell)) { flash("Name a cell a1 \u2026 g5 (click it on the board)."); return; }
    const changes = [];
    if (f.card.value.trim() && f.card.value.trim().toUpperCase() !== (f.dataset.card || "").toUpperCase()) {
      changes.push({ cell, card: f.card.value.trim().toUpperCase() === "NONE" ? "none" : f.card.value.trim().toUpperCase() });
    }
    if (f.piece.value) changes.push({ cell, piece: f.piece.value });
    if (f.injury.value !== "" && f.injury.value !== f.dataset.injury) changes.push({ cell, injury: Number(f.injury.value) });
    if (!changes.length) { flash("Nothing to change: edit the card, unit or injury."); return; }
    for (const c of changes) await post("/api/correct", c);
    flash(`${cell} corrected.`, "ok");
    pickCell(cell);
  });
  document.querySelectorAll("[data-overlay]").forEach((c) => c.addEventListener("change", setupCamera));
  $("btn-calibrate").addEventListener("click", async () => {
    $("calibrate-note").textContent = "Looking for the 8 set-up cards\u2026";
    try {
      const data = await api("POST", "/api/calibrate", { white_edge: "auto" });
      const r = data.result;
      $("calibrate-note").textContent = `Board found (${r.method}): fit within ${r.residual_px} px, ` +
        `${Math.round(r.board_in_frame * 100)}% of the board in view.` +
        (r.out_of_view && r.out_of_view.length ? ` Partly out of the frame, read as unsure: ` +
          `${r.out_of_view.join(", ")}; turn or raise the camera until the whole board is in view.` : "");
      document.querySelector('[data-overlay="grid"]').checked = true;
      setupCamera();
    } catch (err) {
      $("calibrate-note").textContent = err.message;
    }
  });
}

buildHandPicker();
wire();
api("GET", "/api/view").then(render).catch(() => {});
listen();
setupCamera();
