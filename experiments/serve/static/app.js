// psygym serve: the page's few behaviours over the JSON API (see serve/app.py).
"use strict";

const OPTIONS = JSON.parse(document.getElementById("options-data").textContent);
const $ = (id) => document.getElementById(id);
let game = null; // the current view
let upload = null; // {upload, edition, name} of an uploaded scenario
const RANDOM = "random"; // the scenario choice of a random battle: armies drawn from a seed

function edition() {
  return OPTIONS.find((e) => e.id === $("edition").value) || OPTIONS[0];
}

function fillChoices() {
  const ed = edition();
  $("edition-summary").textContent = ed.summary || "";
  const scen = $("scenario");
  scen.replaceChildren(...ed.scenarios.map((s) => new Option(s, s, false, s === ed.default_scenario)));
  if (ed.random_battle) scen.append(new Option("random battle (armies drawn from a seed)", RANDOM));
  fillOpponents();
}

function randomBattle() {
  return !upload && $("scenario").value === RANDOM;
}

// Shows the battle seed for a random battle, and the rounds the edition allows for the kind of
// game chosen (the server's limits: /api/options "rounds").
function showBattleSeed() {
  const random = randomBattle();
  $("battle-seed-label").hidden = !random;
  const r = edition().rounds;
  const low = random ? r.random_min : r.min;
  const high = random ? r.random_max : r.max;
  const input = $("rounds");
  input.disabled = low === null || high === null || (!random && r.key === null);
  if (!input.disabled) {
    input.min = String(low);
    input.max = String(high);
  }
  input.title = input.disabled ? "this game's length cannot be changed" : `${low} to ${high}`;
}

// The opponents that fit the game chosen: a model only for its own scenario (never for an
// uploaded one) and the seat it was trained in (the AI's seat is the other one).
function fillOpponents() {
  showBattleSeed();
  const ed = edition();
  const scenario = upload ? null : $("scenario").value;
  const aiSeat = 1 - Number(document.querySelector("input[name=seat]:checked").value);
  const fits = ed.agents.filter((a) =>
    (a.scenario === null || a.scenario === scenario) && (a.seat === null || a.seat === aiSeat));
  const opp = $("opponent");
  const keep = fits.some((a) => a.name === opp.value) ? opp.value : ed.default_agent;
  opp.replaceChildren(...fits.map((a) => new Option(a.title, a.name, false, a.name === keep)));
  describeOpponent();
}

function describeOpponent() {
  const a = edition().agents.find((x) => x.name === $("opponent").value);
  $("opponent-description").textContent = a ? a.description : "";
}

async function api(method, url, body, raw) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.body = raw ? body : JSON.stringify(body);
    init.headers["Content-Type"] = raw ? "application/toml" : "application/json";
  }
  const resp = await fetch(url, init);
  const data = await resp.json().catch(() => ({ error: `HTTP ${resp.status}` }));
  if (!resp.ok) throw new Error(data.error || `HTTP ${resp.status}`);
  return data;
}

// The one error line, shown above the setup form and the game alike (the server's message of a
// refused request); showError(null) clears it.
function showError(err) {
  $("error").textContent = err ? String(err.message || err) : "";
}

function busy(on) {
  document.querySelectorAll("button").forEach((b) => { b.disabled = on; });
  document.body.dataset.busy = on ? "1" : "0";
}

async function onUpload() {
  const file = $("upload").files[0];
  upload = null;
  $("upload-status").textContent = "";
  fillOpponents();
  if (!file) return;
  try {
    upload = await api("POST", "/api/scenarios", await file.text(), true);
    $("edition").value = upload.edition;
    fillChoices();
    $("upload-status").textContent = `Using the uploaded scenario "${upload.name}" (${upload.edition}).`;
    showError(null);
  } catch (err) {
    $("upload").value = "";
    showError(err);
  }
}

async function start(ev) {
  ev.preventDefault();
  const seat = Number(document.querySelector("input[name=seat]:checked").value);
  const body = {
    edition: $("edition").value,
    scenario: $("scenario").value,
    opponent: $("opponent").value,
    seat,
    seed: Number($("seed").value || 0),
  };
  if ($("rounds").value && !$("rounds").disabled) body.rounds = Number($("rounds").value);
  if (upload) body.upload = upload.upload;
  if (randomBattle()) {
    delete body.scenario;
    body.random = Number($("battle-seed").value || 0);
  }
  busy(true);
  try {
    show(await api("POST", "/api/games", body));
    showError(null);
  } catch (err) {
    showError(err);
  } finally {
    busy(false);
  }
}

async function act(action) {
  busy(true);
  try {
    // The view's step: if the game has moved on (a second click, another tab), the server
    // refuses the action instead of applying it to a decision this page never showed.
    show(await api("POST", `/api/games/${game.id}/actions`, { action, step: game.step }));
    showError(null);
  } catch (err) {
    showError(err);
    // Show the decision the game is at now (the error line stays above it until the next
    // action played).
    await api("GET", `/api/games/${game.id}`).then(show, () => {});
  } finally {
    busy(false);
  }
}

async function hint() {
  busy(true);
  $("hint-note").textContent = "Searching...";
  try {
    const h = await api("GET", `/api/games/${game.id}/hint`);
    for (const v of h.values) {
      const btn = document.querySelector(`button.action[data-action="${v.action}"]`);
      if (!btn) continue;
      btn.querySelector(".value").textContent =
        v.value === null ? "" : `${v.value >= 0 ? "+" : ""}${v.value.toFixed(3)} ${h.kind}`;
      btn.classList.toggle("best", v.best);
    }
    $("hint-note").textContent = `Hint: ${h.note}.`;
  } catch (err) {
    $("hint-note").textContent = "";
    showError(err);
  } finally {
    busy(false);
  }
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function show(view) {
  game = view;
  $("setup").hidden = true;
  $("game").hidden = false;
  $("title").textContent = `${view.edition_title}: ${view.scenario} (seed ${view.seed})`;
  $("score").textContent = `Score ${view.score >= 0 ? "+" : ""}${view.score.toFixed(2)} for you`;
  $("sides").textContent =
    `You play ${view.you} (player ${view.seat}); the AI plays ${view.ai} as ${view.opponent}` +
    (view.opponent_description ? `: ${view.opponent_description}.` : ".");
  $("board").textContent = view.board;
  const powers = $("powers");
  powers.replaceChildren();
  if (view.powers.length) {
    const dl = el("dl");
    for (const p of view.powers) { dl.append(el("dt", "", p.name), el("dd", "", p.text)); }
    powers.append(el("h3", "", "Powers"), dl);
  }
  $("turn").hidden = !view.your_turn;
  $("hint-note").textContent = "";
  const box = $("actions");
  box.replaceChildren();
  for (const a of view.actions) {
    const b = el("button", "action");
    b.type = "button";
    b.dataset.action = a.action;
    b.append(el("span", "label", a.label));
    if (a.odds) b.append(el("span", "odds", `[${a.odds}]`));
    b.append(el("span", "value", ""));
    b.addEventListener("click", () => act(a.action));
    box.append(b);
  }
  const list = $("events");
  list.replaceChildren();
  for (const e of view.events) {
    const li = el("li");
    const who = e.who === "you" ? "You" : e.who === "ai" ? "AI" : "Chance";
    li.append(el("span", `who-${e.who}`, `${who}: `), document.createTextNode(e.text));
    if (e.events.length) {
      const ul = el("ul");
      for (const x of e.events) ul.append(el("li", `kind-${x.kind}`, x.text));
      li.append(ul);
    }
    list.append(li);
  }
  list.scrollTop = list.scrollHeight;
  $("result").hidden = !view.over;
  if (view.over) {
    const r = view.result;
    $("verdict").textContent = `Game over. Final score ${r.score >= 0 ? "+" : ""}${r.score.toFixed(2)} for you: ${r.verdict}.`;
    $("log-link").href = r.log_url;
  }
  document.body.dataset.state = view.over ? "over" : view.your_turn ? "your-turn" : "waiting";
}

function again() {
  game = null;
  showError(null);
  $("game").hidden = true;
  $("setup").hidden = false;
  document.body.dataset.state = "setup";
}

$("edition").addEventListener("change", () => { upload = null; $("upload").value = ""; $("upload-status").textContent = ""; fillChoices(); });
$("opponent").addEventListener("change", describeOpponent);
$("scenario").addEventListener("change", fillOpponents);
document.querySelectorAll("input[name=seat]").forEach((r) => r.addEventListener("change", fillOpponents));
$("upload").addEventListener("change", onUpload);
$("setup-form").addEventListener("submit", start);
$("hint").addEventListener("click", hint);
$("again").addEventListener("click", again);
fillChoices();
document.body.dataset.state = "setup";
