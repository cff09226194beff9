/* The table of one campaign, kept live by its event stream. Everything goes through the
   HTTP API and no rule is checked here: the server refuses what is illegal, and a 422 with
   ``choices`` becomes a picker of those choices. This file is the same for every edition;
   what an edition shows and asks differently comes from ``Capes.editions[<data-edition>]``
   (edition-capes.js, edition-capees.js), given this table's shared helpers. */
"use strict";
(() => {
  const { el, redraw, announce, api, problemText } = Capes;
  const $ = (id) => document.getElementById(id);
  const ID = document.body.dataset.campaign;
  const BASE = `/campaigns/${ID}`;
  const TOKEN = Capes.token(ID);
  const RECORD_MOVES = new Set(["vote", "withdraw_dispute"]);
  /* A new link pasted into this tab changes only the fragment: the page loads again with its
     token (who this is, the stream's cookie and every form belong to the token). */
  window.addEventListener("hashchange", () => {
    if (Capes.token(ID) !== TOKEN) location.reload();
  });
  const LOG_SHOWN = 300;

  /* What this page knows; ``past`` is the board and ledgers at an earlier event. */
  const S = {
    me: { seat: null, owner: false }, version: 0, board: null, ledgers: [], characters: [],
    record: null, commands: new Map(), past: null, refreshing: false, again: false,
    sending: false, applied: 0, drawn: 0, heard: 0,
    logged: 0,  // events held: what an edition caches of them is keyed by it
  };
  const call = (method, path, body) => api(TOKEN, method, BASE + path, body);
  document.addEventListener("capes:broken", (e) => {
    document.getElementById("broken-at").textContent = e.detail;
    document.getElementById("broken").hidden = false;
  });

  // -- helpers --

  const player = (seat) => (S.board && S.board.players[seat - 1]) || `seat ${seat}`;
  const character = (id) => S.characters.find((c) => c.id === Number(id));
  const charName = (id) => character(id)?.name || `#${id}`;
  const human = (type) => type.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/_/g, " ")
    .replace(/^./, (c) => c.toUpperCase()).replace(/ [A-Z]/g, (c) => c.toLowerCase());
  const myLedger = () => S.ledgers.find((l) => l.seat === S.me.seat);
  const span = (r) => (r.first === r.last ? `event #${r.first}` : `events #${r.first}–#${r.last}`);
  /* A dispute as the record panel and the log tell it: who opened it, about which move, why. */
  const about = (d) => `by ${player(d.seat)} about event #${d.position}`
    + `${d.actor ? ` (${player(d.actor)}’s move)` : ""}: “${d.reason}”`;
  /* How a dispute ended. One whose time ran out expired, changing nothing (R-REC-4): nobody
     rejected it, as the log said ("rejected when its time ran out"). */
  const ENDED = { vote: " by vote", owner: " by the owner" };
  const settled = (s) => `Dispute #${s.dispute} ${s.by === "withdrawal" ? "withdrawn"
    : s.by === "expiry" ? "expired (its time ran out)"
      : (s.upheld ? "upheld" : "rejected") + (ENDED[s.by] ?? ` ${s.by}`)}`;
  const hash = (hex) => `${hex.slice(0, 8)}…`;
  /* A fork's source by its name too, which the fork's first event holds with the game it
     starts from (R-REC-6): the campaign's id alone told a player nothing. */
  const forkSource = (e) => {
    const first = S.commands.values().next().value || [];  // the fork's first move
    const name = first.find((x) => /CampaignForked$/.test(x.type))?.event.state.name;
    return name ? `“${name}” (campaign ${e.source})` : `campaign ${e.source}`;
  };
  /* The log's words for the record's events, alike in every edition (R-REC-*, R-FAIR-*,
     R-X-REC-4). Their keys also tell a record's entry from a move of the game. */
  const RECORD_TEXT = {
    TableOptionsSet: ({ options: o }) => `Disputes: open ${o.dispute_minutes} minutes; upheld by a `
      + `${o.dispute_threshold} vote${o.owner_settles ? " or the owner" : ""}`,
    SeatTokenIssued: (e) => `Link for seat ${e.seat} (${player(e.seat)}) issued`
      + `${e.by === "owner" ? " by the owner: the old one no longer works" : ""}`,
    Undone: (e) => `${player(e.seat)} undid ${span(e)}`,
    DisputeOpened: (e) => `Dispute #${e.dispute} opened ${about(e)} (${e.needed} of ${e.voters.length} votes to uphold)`,
    DisputeVoted: (e) => `${player(e.seat)} voted ${e.uphold ? "to uphold" : "against"} dispute #${e.dispute}`,
    DisputeSettled: settled,
    Rewound: (e) => `Rewound: ${span(e)} reverted`,
    ForkMade: (e) => `Fork made after event #${e.version}`,
    ForkedFrom: (e) => `Forked from ${forkSource(e)} after its event #${e.version}`,
    ImportedFrom: (e) => `Imported: events #1–#${e.version} of campaign ${e.source}`,
    DiceCommitted: (e) => `Dice of scene ${e.scene} committed (SHA-256 ${hash(e.commitment)})`,
    SeatSeedAdded: (e) => `${player(e.seat)} added a seed to the dice`,
    SeedsClosed: (e) => `Seeds of scene ${e.scene}’s dice closed`,
    DiceRevealed: (e) => `Dice of scene ${e.scene} revealed (seed ${hash(e.seed)})`,
  };
  const lower = (text) => text.charAt(0).toLowerCase() + text.slice(1);
  const upper = (text) => text.charAt(0).toUpperCase() + text.slice(1);
  /* Seats as a sentence's subject: "You, Ana or Ben" (this page's seat first, as "you"). */
  const anyOf = (seats) => {
    const names = [...seats].sort((a, b) => (b === S.me.seat) - (a === S.me.seat))
      .map((s) => (s === S.me.seat ? "you" : player(s)));
    const text = names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}` : names[0];
    return upper(text);
  };

  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const tokens = (n) => plural(n, "Story Token");
  /* Debt back to (or spent ``to`` = "of") its Drives: "2 Justice to Ana, 1 Fear to Ben". */
  const back = (list, to = "to") => list.map((d) => `${d.amount} ${d.drive} ${to} ${charName(d.character)}`).join(", ");
  /* An Overdrawn roll keeps only a lower value (R-PAGE-2, C-DEBT-2). */
  const overdrawn = (e) => (e.kept ? `${e.before} → ${e.rolled}` : `rolled ${e.rolled}, stays ${e.before}`);
  /* The table's own events, alike in every edition. */
  const TABLE_TEXT = {
    CampaignCreated: (e) => `Campaign “${e.name}” created`,
    PlayerSeated: (e) => `${e.name} took seat ${e.seat}`,
    CampaignForked: (e) => `Forked as “${e.name}”`,
  };

  /* A character's abilities from the form's lines, "name, <key>, rating[, super]" (blank
     lines skipped, but counted in the line a refusal names). */
  const abilityLines = (text, key) => text.split("\n").flatMap((line, n) => {
    if (!line.trim()) return [];
    const [name, value, rating, sup] = line.split(",").map((x) => x.trim());
    if (!name || !value || !rating) throw ["abilities", `line ${n + 1}: write name, ${key}, rating`];
    return [{ name, [key]: value.toLowerCase(), rating: Number(rating), super: /super/i.test(sup || "") }];
  });
  /* The Drives of ``who`` a Debt may go to, or the picker's choice later. */
  const driveChoices = (who) => [["", "(ask me when it matters)"],
    ...(who ? who.drives.map((d) => [d.name, `${d.name} (Debt ${d.debt})`]) : [])];

  const meta = (...parts) => el("p", { class: "meta" }, ...parts);
  /* A button that acts in the page (``secondary``: drawn as the lesser choice). */
  const button = (id, onclick, secondary, ...text) =>
    el("button", { type: "button", id, class: secondary ? "secondary" : null, onclick }, ...text);

  /* Words for a screen reader, hidden from the eye (what the page shows around them says it). */
  const unseen = (text) => el("span", { class: "visually-hidden" }, text);

  /* A character's Drives: strength and Debt, named after the character for a screen reader. */
  const drivesTable = (drives, name) => el("table", { class: "drives", "aria-label": `${name}’s Drives` },
    el("thead", {}, el("tr", {}, ["Drive", "Strength", "Debt"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, drives.map((d) => el("tr", { class: d.overdrawn ? "overdrawn" : "" },
      el("th", { scope: "row" }, d.name + (d.overdrawn ? " (overdrawn)" : "")),
      el("td", {}, String(d.strength)), el("td", {}, String(d.debt))))));

  /* ``select``'s options made again from [value, label, disabled] items, the chosen ones kept;
     ``disabled``: false, or why (true: "blocked"). */
  function setOptions(select, items) {
    const before = new Set([...select.selectedOptions].map((o) => o.value));
    select.replaceChildren(...items.map(([v, label, disabled]) => el("option", { value: v, disabled: !!disabled },
      label + (disabled ? ` (${disabled === true ? "blocked" : disabled})` : ""))));
    const kept = [...select.options].filter((o) => before.has(o.value));
    if (select.multiple) for (const o of kept) o.selected = true;
    else if (kept.length) select.value = kept[0].value;
  }

  /* A refusal beside the field at fault (``input``): marked invalid, described by the
     refusal and focused, so a screen reader reads the field and why. */
  function fieldError(form, name, text, input) {
    const box = form.querySelector(`[data-for="${name}"]`);
    box.id = box.id || `${form.id}-${name}-error`;
    box.textContent = text;
    if (!input) return;
    input.setAttribute("aria-invalid", "true");
    input.setAttribute("aria-describedby", box.id);
    input.focus();
  }

  /* A form's refusals cleared (it is sent again). */
  function clearFieldErrors(form) {
    for (const e of form.querySelectorAll(".field-error")) e.textContent = "";
    for (const e of form.querySelectorAll("[aria-invalid]")) {
      e.removeAttribute("aria-invalid");
      e.removeAttribute("aria-describedby");
    }
  }

  /* A die: its value, a label for screen readers, a mark (staked Debt), and its id in a
     corner, by which the moves and the log name it. */
  const die = (id, value, more, mark) => el("span", {
    class: "die", role: "img", "aria-label": `die ${id} showing ${value}${more || ""}`, title: `die ${id}`,
  }, el("span", { class: "die-id" }, String(id)), String(value), mark ? el("sub", {}, mark) : "");

  /* A side's total, read out as "total 7" (an aria-label on a span is not allowed). */
  const total = (n) => el("span", { class: "total" }, " ", unseen("total "), String(n));

  /* A Conflict's (a Complication's) sides, each with its label and total and the edition's
     parts: ``side(s)`` gives [its class, label, ...parts]. */
  const sides = (c, side) => el("div", { class: "sides" }, c.sides.map((s) => {
    const [cls, label, ...parts] = side(s);
    return el("div", { class: `side${cls}${c.controlling_side === s.index ? " controlling" : ""}` },
      el("h4", {}, label, total(s.total)), ...parts);
  }));

  /* A character in a ledger: its Drives, its Debt staked and its Blocked abilities (words). */
  const debts = (ch, more, staked, blocked) => el("div", { class: "character" },
    el("strong", {}, ch.name), more, drivesTable(ch.drives, ch.name),
    staked.length ? meta("Staked: " + staked.join(", ")) : "",
    blocked.length ? meta("Blocked: " + blocked.join(", ")) : "");

  /* A sheet's abilities, each rated in the edition's ``key`` (category, type). */
  const abilityList = (list, key) => el("ul", { class: "abilities" }, list.map((a) => el("li", {},
    `${a.name}: ${a[key]} ${a.rating}${a.super ? " (super)" : ""}`)));

  /* The character form, sent alike in every edition: ``make(FormData)`` builds the command
     (throwing [field, words]), ``fault(err, FormData)`` names the field a refusal is about,
     ``mark(field, words)`` shows it, ``reset()`` undoes what form.reset() does not. */
  function characterForm(form, make, fault, mark, reset) {
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      clearFieldErrors(form);
      const f = new FormData(form);
      let command;
      try {
        command = make(f);
      } catch (e) {
        if (Array.isArray(e)) { mark(...e); return; }
        throw e;
      }
      try {
        if (!(await postCommand(command))) return;  // not sent: the last command is not drawn yet
        form.reset();
        if (reset) reset();
        $("new-character").open = false;
      } catch (err) {
        mark(fault(err, f), problemText(err));
      }
    });
  }

  let wording;  // the position of the event ``worded`` is wording; undefined for the board
  /* What the log makes under a number (a Conflict, a Complication), for its entries to name
     each as it was when that entry happened. An undo or a rewind gives a number to the next
     one made, and a player reads each entry, reverted ones too, as what happened then: a
     taken-back ship stays the ship in its own entries, the storm made after it the storm in
     the entries after (the pages named the last made under a number in every entry).
     ``made(event, type)``: the [number, what] pairs an event makes (a fork's first event, those
     of the game it starts from, R-REC-6). Read again whenever an event is heard (S.logged).
     Returns the lookup: the last ``what`` made under a number up to the event being worded,
     else (the board) in the whole log. */
  function madeInLog(made) {
    let read = [-1, new Map()];  // [events held when read, number → [[position, what], …]]
    return (id) => {
      if (read[0] !== S.logged) {
        const byId = new Map();
        for (const x of [...S.commands.values()].flat().sort((a, b) => a.position - b.position)) {
          for (const [k, what] of made(x.event, x.type.replace(/^\w+\./, ""))) {
            if (!byId.has(k)) byId.set(k, []);
            byId.get(k).push([x.position, what]);
          }
        }
        read = [S.logged, byId];
      }
      return (read[1].get(id) || []).filter(([p]) => wording === undefined || p <= wording).pop()?.[1];
    };
  }

  /* The edition's part of the table (moves, board, ledgers, characters). */
  const E = Capes.editions[document.body.dataset.edition]({
    S, $, el, postCommand, player, character, charName, human, myLedger, die, problemText, anyOf,
    fieldError, setOptions, meta, plural, tokens, back, overdrawn, abilityLines, abilityList, driveChoices,
    sides, debts, characterForm, madeInLog, wording: () => wording,
  });
  const MOVES = E.MOVES;
  const ASIDE = E.ASIDE || new Set();

  /* One command at a time: the next is taken once the board the last one made is drawn (a
     double click sent a move twice). That board comes by the stream, or is read over HTTP
     when the stream is late (``catchUp``). */
  const busy = () => S.sending || S.drawn < S.applied;
  function setBusy() {
    if (busy()) document.body.dataset.busy = "1"; else delete document.body.dataset.busy;
  }

  /* POST what changes the campaign: the answer, or null if not sent (the last is not drawn). */
  async function post(path, body) {
    if (busy()) return null;
    S.sending = true;
    setBusy();
    try {
      const applied = await call("POST", path, body);
      S.applied = applied.version;
      document.body.dataset.applied = applied.version;
      catchUpLater(CATCH_UP_MS);
      return applied;
    } finally {
      S.sending = false;
      setBusy();
    }
  }

  /* A command with the narration written for it (then cleared): the answer, or null. Blanks
     alone are sent as none, which the server would refuse (R-X-SRV-1). */
  async function postCommand(command) {
    const said = $("narration").value;
    const applied = await post("/commands", { command, narration: said.trim() ? said : "" });
    if (applied) $("narration").value = "";
    return applied;
  }

  /* The moves' and the record's messages, cleared when a move is sent and a new board drawn:
     a refusal is about the board it was made on. */
  const recordError = (err) => { $("record-error").textContent = problemText(err); };
  /* The page's blocking message: a link refused, a read failed ("" hides it). */
  const fatal = (text) => { $("fatal").hidden = !text; $("fatal").textContent = text; };
  const savedLinks = () => JSON.parse(localStorage.getItem(`capes:links:${ID}`) || "{}");

  function clearErrors() {
    $("move-error").textContent = "";
    $("record-error").textContent = "";
  }

  // -- the moves --

  /* Each legal move (of ``waiting_for``) is a form from the edition's ``MOVES[type] =
     [label, fields, action]``; a field is [name, kind, label, initial]. Kinds "text",
     "required", "count", "bool", "names" are inputs, any other a select of the edition's
     ``options(kind, form)`` ("dice": of several). ``action`` runs instead of sending. */
  function fillSelect(select, kind, form) {
    setOptions(select, E.options(kind, form));
    // Nothing to choose (a Free Conflict outside the claiming phase): the field is not shown.
    const cell = select.closest(".field");
    if (cell) cell.hidden = !select.options.length;
  }

  /* A move's name: the edition's, which may say what it costs now (R-PAGE-6, R-SCENE-2), else
     its MOVES label. */
  function moveName(type, seat, board = S.board) {
    return (E.label && E.label(type, seat, board)) || (MOVES[type] || [human(type)])[0];
  }

  function moveForm(type) {
    const [, fields, action] = MOVES[type] || [human(type), []];
    const label = moveName(type, S.me.seat);
    const form = el("form", { id: `mv-${type}`, class: fields.length ? "move" : "move quick", dataset: { move: type } });
    const box = el("div", { class: "fields" });
    if (fields.length) form.append(el("h3", {}, label), box);
    for (const [name, kind, text, initial] of fields) {
      const id = `mv-${type}-${name}`;
      const cell = el("div", { class: "field" });
      box.append(cell);
      if (kind === "bool") {
        cell.append(el("label", { class: "check" },
          el("input", { type: "checkbox", id, name, checked: !!initial }), " " + text));
        continue;
      }
      cell.append(el("label", { for: id }, text));
      if (kind === "text" || kind === "required" || kind === "count") {
        cell.append(el("input", { id, name, autocomplete: "off", required: kind === "required",
          type: kind === "count" ? "number" : "text", min: kind === "count" ? Math.min(1, initial ?? 1) : null,
          value: initial === undefined ? (kind === "count" ? 1 : "") : initial }));
      } else if (kind === "names") {
        cell.append(el("select", { id, name, multiple: true, size: 3 }, S.characters.map((x) => el("option", { value: x.id }, x.name))));
      } else {
        const select = el("select", { id, name, dataset: { kind }, multiple: kind === "dice", size: kind === "dice" ? 3 : null });
        fillSelect(select, kind, form);
        cell.append(select);
      }
    }
    form.addEventListener("change", (ev) => {
      if (ev.target.tagName === "SELECT") {
        for (const s of form.querySelectorAll("select[data-kind]")) {
          if (s !== ev.target) fillSelect(s, s.dataset.kind, form);
        }
      }
    });
    form.append(el("button", { type: "submit" }, label));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      if (action) action(form); else send(commandOf(type, form), "move-error", form.id);
    });
    return form;
  }

  function commandOf(type, form) {
    const command = { type };
    const [, fields] = MOVES[type] || [null, []];
    for (const [name, kind] of fields) {
      const input = form.elements[name];
      if (kind === "bool") command[name] = input.checked;
      else if (kind === "names" || kind === "dice") command[kind] = [...input.selectedOptions].map((o) => Number(o.value));
      else if (E.fill && E.fill(command, name, kind, form)) continue;
      else if (input.value === "") continue;
      else if (E.strings.has(kind)) command[name] = input.value;
      else command[name] = Number(input.value);
    }
    if (type === "narrate" && !command.text) command.text = $("narration").value;
    return command;
  }

  /* ``errors``: the id of the box for a refusal; ``from``: the move's form, cleared once
     the move is applied. */
  async function send(command, errors = "move-error", from = null) {
    clearErrors();
    try {
      const applied = await postCommand(command);
      if (applied) {
        closePicker();
        if (from) clearWhenDrawn(from, applied.version);
      }
    } catch (err) {
      const p = err.problem || {};
      if (err.status === 422 && p.field && p.choices && p.choices.length) openPicker(command, p, from);
      else {
        // A choice refused: the picker closes, or the refusal would be behind it (inert).
        closePicker();
        $(errors).textContent = problemText(err);
      }
    }
  }

  /* A move's form is cleared once the board its move made is drawn (that form only; the
     stream may draw it before the answer comes), or a move offered again showed old words. */
  let clearing = null;
  function clearWhenDrawn(id, version) {
    clearing = { id, version };
    if (S.drawn >= version) clearMoveForm();
  }
  function clearMoveForm() {
    const form = $(clearing.id);
    clearing = null;
    if (!form) return;
    form.reset();
    for (const s of form.querySelectorAll("select[data-kind]")) fillSelect(s, s.dataset.kind, form);
  }

  // -- the picker (a 422 with ``choices``) --

  function choiceText(field, choice, command) {
    const text = E.choiceText(field, choice, command);
    if (text !== undefined) return text;
    if (typeof choice === "object") return JSON.stringify(choice);
    return String(choice);
  }

  function setPath(command, path, value) {
    const parts = path.split(".");
    let at = command;
    for (const part of parts.slice(0, -1)) { at[part] = at[part] || {}; at = at[part]; }
    at[parts[parts.length - 1]] = value;
  }

  /* The picker is a modal dialog: the rest of the page is inert and Tab goes round its
     buttons. It takes the focus and gives it back, to the button that asked or, that move
     made, to the moves' heading. Escape closes it, as Cancel does. */
  const picker = $("picker");
  let pickerFrom = null;
  function openPicker(command, problem, from) {
    if (!picker.open) {
      pickerFrom = document.activeElement;
      picker.hidden = false;
      picker.showModal();
    }
    $("picker-title").textContent = `${problem.rule}: ${(E.question && E.question(problem.field)) || problem.detail}`;
    $("picker-choices").replaceChildren(...problem.choices.map((choice) => el("button", {
      type: "button", class: "choice",
      onclick: () => { const next = structuredClone(command); setPath(next, problem.field, choice); send(next, "move-error", from); },
    }, choiceText(problem.field, choice, command))));
    $("picker-choices").querySelector("button").focus();
  }
  function closePicker() {
    if (picker.hidden && !picker.open) return;
    const focused = picker.contains(document.activeElement);
    picker.hidden = true;
    if (picker.open) picker.close();
    $("picker-choices").replaceChildren();
    if (!focused) return;
    const back = pickerFrom && document.body.contains(pickerFrom) ? pickerFrom : $("moves-title");
    back.focus({ preventScroll: true });
  }
  $("picker-cancel").addEventListener("click", closePicker);
  picker.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") { ev.preventDefault(); closePicker(); return; }
    if (ev.key !== "Tab") return;
    // From the last button to the first, and back with Shift: a modal dialog lets Tab leave
    // for the browser's own controls.
    const buttons = [...picker.querySelectorAll("button")];
    const [first, last] = [buttons[0], buttons[buttons.length - 1]];
    if (ev.shiftKey ? document.activeElement === first : document.activeElement === last) {
      ev.preventDefault();
      (ev.shiftKey ? last : first).focus();
    }
  });
  // Escape as the browser takes it (a close request): the same as Cancel.
  picker.addEventListener("cancel", (ev) => { ev.preventDefault(); closePicker(); });

  // -- rendering --

  /* The status is a live region: a screen reader reads it out when it changes, and only then
     (announce). */
  function renderStatus() {
    announce($("status"), statusLines());
    // The tab's title says it too, for a player whose tab is in the background.
    document.title = `${myMove() ? "Your move · " : ""}${(S.past ? S.past.board : S.board).name} · ${E.TITLE}`;
  }

  /* Whom the table waits for on ``b``: a seat whose only moves are aside ones (a veto) is not. */
  const waited = (b) => Object.entries(b.waiting_for).map(([seat, moves]) => [Number(seat), moves])
    .filter(([, moves]) => moves.some((m) => !ASIDE.has(m)));
  /* Whether the table waits for this page's move now (not a past board's, nor in a dispute). */
  const myMove = () => !S.past && !S.board.closed && !(S.record && S.record.dispute)
    && waited(S.board).some(([seat]) => seat === S.me.seat);

  function statusLines() {
    const b = S.past ? S.past.board : S.board;
    const waits = waited(b);
    const lines = [];
    const voters = waits.filter(([, moves]) => moves.includes("vote")).map(([seat]) => seat);
    if (b.closed) lines.push(el("p", { class: "turn" }, "The campaign is closed."));
    else if (S.record && S.record.dispute && !S.past) {
      // The game waits for the dispute (R-REC-2): the board offers only its votes.
      return [el("p", { class: "turn dispute" },
        `The table waits for dispute #${S.record.dispute.id} to be settled`,
        voters.length ? `: ${voters.map((s) => (s === S.me.seat ? "you" : player(s))).join(", ")} must still vote. ` : ". ",
        el("a", { href: "#dispute", class: "jump" }, "Go to the dispute"))];
    } else if (myMove()) {
      lines.push(el("p", { class: "turn mine" }, "It’s your move. ",
        el("a", { href: "#moves-title", class: "jump" }, "Go to your moves")));
    }
    const others = waits.filter(([seat]) => seat !== S.me.seat);
    if (others.length) {
      lines.push(el("p", { class: "turn" }, "Waiting for ",
        others.map(([seat, moves]) => `${player(seat)} (${moves.filter((m) => !ASIDE.has(m))
          .map((m) => lower(moveName(m, seat, b))).join(", ")})`).join("; "), "."));
    }
    if (!waits.length && !b.closed) lines.push(el("p", { class: "turn" }, "Nobody is waited on."));
    // The moves any seat may make meanwhile (a veto), apart, in the edition's words.
    for (const m of ASIDE) {
      const seats = Object.keys(b.waiting_for).map(Number).filter((s) => b.waiting_for[s].includes(m));
      if (seats.length) {
        lines.push(meta((E.aside && E.aside(m, seats, b))
          || `${anyOf(seats)} may ${lower(moveName(m, seats[0], b))}.`));
      }
    }
    return lines;
  }

  function renderMoves() {
    const panel = $("moves-panel");
    panel.hidden = S.me.seat === null || !!S.past;
    if (panel.hidden) return;
    // Votes and the withdrawal of a dispute are the record panel's buttons.
    const types = (S.board.waiting_for[S.me.seat] || []).filter((t) => !RECORD_MOVES.has(t));
    const key = JSON.stringify([types, S.version]);
    if (panel.dataset.key === key) return;
    panel.dataset.key = key;
    if (clearing && S.version >= clearing.version) clearMoveForm();
    const forms = types.map(moveForm);
    // Table talk on its own, in an edition with a command for it.
    if (E.say) forms.push(sayForm());
    forms.sort((a, b) => b.classList.contains("quick") - a.classList.contains("quick"));
    // What was typed in a form that stays stays; a form gone, the focus goes to the heading.
    redraw($("moves"), forms, $("moves-title"));
    for (const f of forms) {
      for (const s of f.querySelectorAll("select[data-kind]")) fillSelect(s, s.dataset.kind, f);
    }
  }

  /* Narration at any time (table talk, a description): the edition's ``say`` command. */
  function sayForm() {
    const form = el("form", { id: "mv-say", class: "move quick say", dataset: { move: "say" } },
      el("button", { type: "submit" }, "Say it (narration only)"));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const text = $("narration").value.trim();
      if (!text) { $("move-error").textContent = "Write the narration first."; $("narration").focus(); return; }
      send(E.say(text));
    });
    return form;
  }


  function isReverted(position) {
    return S.record && S.record.reverted.some(([a, b]) => a <= position && position <= b);
  }

  /* What the log's entry of a move (a command's events) shows, in a word: an entry whose key
     is the same need not be drawn again. */
  const logKey = (first, events) =>
    `${first}-${events[events.length - 1].position}${isReverted(first) ? "-reverted" : ""}`;

  /* An event in words: the record's, the table's, else the edition's, else its name (the log,
     the dispute form and the preview alike). While it is worded, ``wording`` is its position:
     an edition names what it is about as it was then (``madeInLog``). */
  const worded = (e) => {
    wording = e.position;
    try {
      return (RECORD_TEXT[e.type] || TABLE_TEXT[e.type.replace(/^\w+\./, "")] || E.eventText)?.(e.event) || human(e.type);
    } finally { wording = undefined; }
  };

  function logEntry(first, events) {
    const head = events[0];
    const game = events.filter((e) => !RECORD_TEXT[e.type]);
    const types = events.map(worded);
    const narration = events.map((e) => e.narration).filter(Boolean).join(" ");
    const reverted = isReverted(first);
    return el("li", {
      class: (reverted ? "reverted " : "") + (game.length ? "" : "record"),
      dataset: { position: first, last: events[events.length - 1].position, key: logKey(first, events) },
    },
    el("span", { class: "pos" }, `#${first}`), " ",
    el("span", { class: "by" }, head.seat ? player(head.seat) : "table"), " · ",
    el("span", { class: "what" }, types.join(", ")),
    narration ? el("q", { class: "narration" }, narration) : "",
    reverted ? el("span", { class: "meta" }, " (reverted)") : "");
  }

  /* The log: new moves are added at its end and the entries there stay (a screen reader keeps
     its place); drawn anew only when an entry changed (an undo marks moves reverted). */
  function renderLog() {
    const log = $("log");
    // The last LOG_SHOWN moves (the export holds them all).
    const all = [...S.commands];
    const shown = all.slice(-LOG_SHOWN);
    const keys = shown.map(([first, events]) => logKey(first, events));
    const atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 30;
    const drawn = [...log.querySelectorAll("li[data-key]")];
    const drawnKeys = drawn.map((li) => li.dataset.key);
    // The entries drawn are the first to show, or all but the oldest (past LOG_SHOWN: they go).
    const gone = drawn.length && keys.length ? drawnKeys.indexOf(keys[0]) : 0;
    const adds = gone !== -1 && drawn.length - gone <= keys.length
      && drawnKeys.slice(gone).every((key, i) => key === keys[i]);
    const earlier = all.length - shown.length;
    const note = earlier ? `${earlier} earlier moves not shown: see the export` : "";
    if (!adds) {
      log.replaceChildren(...(note ? [el("li", { class: "record earlier" }, note)] : []),
        ...shown.map(([first, events]) => logEntry(first, events)));
    } else {
      for (const li of drawn.slice(0, gone)) li.remove();
      const said = log.querySelector("li.earlier");
      if (!note && said) said.remove();
      else if (note && !said) log.prepend(el("li", { class: "record earlier" }, note));
      else if (note && said.textContent !== note) said.textContent = note;
      log.append(...shown.slice(drawn.length - gone).map(([first, events]) => logEntry(first, events)));
    }
    if (atEnd) log.scrollTop = log.scrollHeight;
  }

  /* A record's button: its command, a refusal said in the record panel. */
  const recordAct = (command) => () => send(command, "record-error");

  function renderRecord() {
    const r = S.record;
    const undo = r && r.may_undo !== null && r.may_undo === S.me.seat && !r.dispute && !S.past;
    redraw($("record-actions"), undo ? [button("undo", recordAct({ type: "undo" }), false, "Undo my last move")] : [],
      $("record-title"));
    announce($("dispute-news"), disputeNews());
    redraw($("dispute-acts"), disputeParts(), $("record-title"));
    const slider = $("slider");
    const follow = slider.dataset.moved !== "1";
    slider.max = String(Math.max(1, S.version));
    if (follow) slider.value = slider.max;
    sliderAt();
  }

  /* Where the time slider is, beside it and as its aria-valuetext ("event 12 of 40"); the
     shown words are hidden from a screen reader (an output is read out on every board). */
  function sliderAt() {
    const slider = $("slider");
    $("slider-out").textContent = `${slider.value} of ${slider.max}`;
    slider.setAttribute("aria-valuetext", `event ${slider.value} of ${slider.max}`);
  }

  /* The open dispute and its votes, else how the last one ended: a live region, read out
     only when it changes (announce). */
  function disputeNews() {
    const d = S.record && S.record.dispute;
    if (!d) return disputeEnd();
    const ayes = Object.values(d.votes).filter(Boolean).length;
    const noes = Object.values(d.votes).length - ayes;
    return [el("div", { class: "open-dispute" },
      el("p", {}, el("strong", {}, `Dispute #${d.id}`), ` ${about(d)}`),
      meta(`${ayes} to uphold, ${noes} against; ${d.needed} needed to uphold. Voters: ${d.voters.map(player).join(", ")}.`),
      // R-REC-4: past its time it expires, changing nothing (a vote then records the expiry).
      meta(`Open until ${new Date(d.expires).toLocaleString([], { dateStyle: "medium", timeStyle: "short" })}; then it expires, changing nothing.`))];
  }

  /* How the last dispute ended, from its events in the log (the record keeps open ones only). */
  function disputeEnd() {
    const events = [...S.commands.values()].flat().map((e) => e.event);
    const last = events.filter((e) => e.type === "DisputeSettled").pop();
    if (!last) return [];
    const r = events.find((e) => e.type === "Rewound" && e.dispute === last.dispute);
    const upheld = last.upheld && last.by !== "withdrawal";
    return [meta(`${settled(last)}: `
      + `${!upheld ? "the move stands" : r ? `${span(r)} reverted` : "the game went back"}.`)];
  }

  /* The open dispute's buttons, or the form that opens one. */
  function disputeParts() {
    const r = S.record;
    if (!r || S.past) return [];
    const d = r.dispute;
    const box = [];
    if (d) {
      if (S.me.seat !== null && d.voters.includes(S.me.seat) && !(String(S.me.seat) in d.votes)) {
        box.push(el("div", { class: "row" },
          button("vote-uphold", recordAct({ type: "vote", uphold: true }), false, "Vote to uphold (rewind)"),
          button("vote-against", recordAct({ type: "vote", uphold: false }), true, "Vote against")));
      }
      if (S.me.seat === d.seat) {
        box.push(button("withdraw", recordAct({ type: "withdraw_dispute" }), true, "Withdraw the dispute"));
      }
      if (S.me.owner && r.options.owner_settles) {
        box.push(el("div", { class: "row" },
          button("settle-uphold", () => settle(true), false, "Uphold (owner)"),
          button("settle-reject", () => settle(false), true, "Reject (owner)")));
      }
      return box;
    }
    if (S.me.seat === null) return [];
    // The moves the server says a dispute may be about now (R-REC-2): its check, not a copy.
    const disputable = new Set(r.disputable);
    const moves = [...S.commands.entries()].filter(([first]) => disputable.has(first)).slice(-30).reverse();
    if (!moves.length) return [];
    const form = el("form", { id: "dispute-form", class: "stack" },
      el("label", { for: "dispute-move" }, "Dispute a move"),
      el("select", { id: "dispute-move", name: "position" }, moves.map(([first, evs]) =>
        el("option", { value: first }, `#${first} ${player(evs[0].seat)}: ${evs.map(worded).join(", ")}`))),
      el("label", { for: "dispute-reason" }, "Why"),
      el("input", { id: "dispute-reason", name: "reason", maxlength: 1000, autocomplete: "off" }),
      el("div", { class: "row" },
        button("dispute-preview", () => preview(form), true, "Preview without it"),
        el("button", { type: "submit", id: "dispute-open" }, "Open the dispute")),
      el("div", { id: "preview" }));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const reason = form.elements.reason.value.trim();
      if (!reason) { $("record-error").textContent = "Say why you dispute it."; return; }
      $("record-error").textContent = "";
      send({ type: "open_dispute", position: Number(form.elements.position.value), reason }, "record-error");
    });
    return [form];
  }

  async function preview(form) {
    try {
      const p = await call("GET", `/disputes/preview?position=${Number(form.elements.position.value)}`);
      const b = p.board;
      $("preview").replaceChildren(el("div", { class: "preview", role: "status" },
        el("p", {}, `Upheld, the game goes back to just before event #${p.first}: `,
          `${plural(p.reverted.length, "event")} undone (`,
          p.reverted.map(worded).join(", "), ").",),
        meta(E.summary(b),
          `; waiting for ${Object.keys(b.waiting_for).map((s) => player(Number(s))).join(", ") || "nobody"}.`)));
    } catch (err) {
      recordError(err);
    }
  }

  async function settle(uphold) {
    try { await post("/disputes/settle", { uphold }); } catch (err) { recordError(err); }
  }

  function renderOwner() {
    $("owner").hidden = !S.me.owner;
    if (!S.me.owner) return;
    const links = savedLinks();
    redraw($("seats"), S.board.players.map((name, i) => {
      const seat = i + 1;
      const id = `link-${seat}`;
      return el("li", { class: "seat", dataset: { seat } },
        el("label", { for: id }, `${name}’s invitation link (seat ${seat})`),
        el("div", { class: "row" },
          el("input", { id, readonly: true, value: links[seat] || "", placeholder: "(not in this browser: issue a new link)", class: "link" }),
          // Whose, for a screen reader (every seat's buttons read alike).
          button(`copy-${seat}`, () => copy(id), true, "Copy", unseen(` ${name}’s link`)),
          button(`new-link-${seat}`, () => newLink(seat), true, "New link", unseen(` for ${name}`))));
    }), $("owner-title"));
  }

  function saveLink(seat, token) {
    const links = savedLinks();
    links[seat] = `${location.origin}/play/${ID}#token=${token}`;
    localStorage.setItem(`capes:links:${ID}`, JSON.stringify(links));
  }

  /* An action that changes no log (a new link, a fork): a click while it is on its way is
     ignored (a double click made two forks; its second click no longer comes here, capes.js
     drops it, but two single clicks can still come while the first is on its way). */
  function oneAtATime(action) {
    let running = false;
    return async (...args) => {
      if (running) return;
      running = true;
      try { await action(...args); } finally { running = false; }
    };
  }

  const newLink = oneAtATime(async (seat) => {
    try {
      const issued = await call("POST", `/seats/${seat}/token`);
      saveLink(seat, issued.token);
      renderOwner();
    } catch (err) { $("invite-error").textContent = problemText(err); }
  });

  function copy(id) {
    const input = $(id);
    input.select();
    if (navigator.clipboard) navigator.clipboard.writeText(input.value).catch(() => {});
  }

  $("invite").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    $("invite-error").textContent = "";
    const name = $("invite-name").value.trim();
    try {
      const taken = await post("/seats", { name });
      if (!taken) return;  // not sent: a double click, the first still on its way
      saveLink(taken.seat, taken.token);
      $("invite-name").value = "";
      // The seat shows with its link when the stream brings the new board.
    } catch (err) { $("invite-error").textContent = problemText(err); }
  });

  /* The board: the campaign's name, then the edition's ``board(b)``:
     [the scene's line, the Conflicts' cards, what to say when there are none]. */
  function renderBoard() {
    const b = S.past ? S.past.board : S.board;
    $("campaign-name").textContent = b.name;
    const [line, cards, none] = E.board(b);
    $("scene-line").replaceChildren(...line);
    $("conflicts").replaceChildren(...cards);
    if (!cards.length) $("conflicts").append(el("p", { class: "hint" }, none));
  }

  /* Each seat's ledger: its name, seat and Story Tokens, then the edition's ``ledger(l)``:
     [a badge by the name, more on the tokens' line, ...parts]. */
  function renderLedgers() {
    $("ledgers").replaceChildren(...(S.past ? S.past.ledgers : S.ledgers).map((l) => {
      const [badge, more, ...parts] = E.ledger(l);
      const mine = l.seat === S.me.seat;
      return el("article", { class: "ledger" + (mine ? " mine" : ""), dataset: { seat: l.seat } },
        el("h3", {}, l.name, mine ? " (you)" : "", badge, el("span", { class: "meta" }, ` seat ${l.seat}`)),
        el("p", {}, el("span", { class: "tokens" }, tokens(l.tokens)), more), ...parts);
    }));
  }

  /* The sheets (an open one stays open: redraw), each the edition's ``sheet(ch)``: [summary,
     abilities], and its Exemplars (the other is ``other`` in Capes, ``character`` in
     CAPEES!); then the edition's character forms. */
  function renderCharacters() {
    redraw($("characters"), S.characters.map((ch) => {
      const [summary, abilities] = E.sheet(ch);
      return el("details", { class: "sheet", id: `sheet-${ch.id}` }, el("summary", {}, `${ch.name} — ${summary}`), abilities,
        ch.exemplars.length ? meta("Exemplars: "
          + ch.exemplars.map((x) => `${charName(x.other ?? x.character)} (${x.drive})`).join(", ")) : "");
    }), $("characters-title"));
    $("new-character").hidden = S.me.seat === null;
    E.renderCharacters();
  }

  function render() {
    if (!S.board) return;
    renderBoard();
    renderStatus();
    renderLedgers();
    renderCharacters();
    renderMoves();
    renderRecord();
    renderOwner();
    renderLog();
    $("past").hidden = !S.past;
    if (S.past) $("past-version").textContent = `#${S.past.version}`;
  }

  // -- live --

  /* How long a command's board may take to come by the stream before the page reads it
     itself (a stream that is down kept every button dimmed). */
  const CATCH_UP_MS = 1000;
  /* How long the stream may be down before the page says so (a restart is back within a
     second). */
  const OFFLINE_NOTICE_MS = 1000;
  /* The next wait between two tries to reach the server: twice the last, at most 5 s. */
  const twice = (wait) => Math.min(wait * 2, 5000);
  const LINK_GONE = "This link no longer works (a new one was issued, or it is not this campaign’s). Ask the owner for a new one.";
  /* The rule of a seat an upheld dispute took away: its link is refused with 403, the server's
     words naming the dispute. */
  const SEAT_REMOVED = "R-X-REC-8";

  /* What to tell a player whose link is refused, or null: a new link was issued (401), or an
     upheld dispute took the seat away (403, R-X-REC-8, the server's words). */
  function linkGone(err) {
    if (!(err instanceof Capes.Problem)) return null;
    if (err.status === 401) return LINK_GONE;
    if (err.status === 403 && err.problem.rule === SEAT_REMOVED) {
      const said = err.message;
      return upper(said) + (said.endsWith(".") ? "" : ".");
    }
    return null;
  }

  /* If ``err`` says the link no longer works (``linkGone``): the stream closed, the page says
     so and tries nothing more; true. */
  function endIfGone(err) {
    const gone = linkGone(err);
    if (gone === null) return false;
    if (source) source.close();
    clearTimeout(offlineTimer);
    $("live").textContent = "";
    $("live").className = "live";
    $("offline").hidden = true;
    fatal(gone);
    return true;
  }

  /* The board has lost this page's seat (R-X-REC-8): the server is asked until it says so,
     naming the dispute (its keys may learn it a moment later), or the seat is back. */
  let seatCheck = null;
  function checkSeat(wait = 500) {
    if (seatCheck !== null || S.me.owner || !S.board || S.me.seat <= S.board.players.length) return;
    seatCheck = setTimeout(async () => {
      seatCheck = null;
      try {
        await call("GET", "/me");
      } catch (err) {
        if (endIfGone(err)) return;
      }
      checkSeat(twice(wait));
    }, wait);
  }

  /* An event of the log, from the stream or read after a move; once only, whichever brings it. */
  function hear(event) {
    const list = S.commands.get(event.command) || [];
    if (!list.some((e) => e.position === event.position)) {
      list.push(event);
      S.logged += 1;
    }
    S.commands.set(event.command, list);
    S.heard = Math.max(S.heard, event.position);
  }

  let catchUpTimer = null;
  function catchUpLater(wait) {
    clearTimeout(catchUpTimer);
    catchUpTimer = setTimeout(() => catchUp(wait), wait);
  }

  /* The last answer's board has not come by the stream: read it and the log up to it over
     HTTP, then draw it, freeing the buttons. Reads only, retried while unreachable; a stream
     that looks open but did not bring it is opened again. */
  async function catchUp(wait) {
    if (S.drawn >= S.applied) return;
    const version = S.applied;
    const missed = S.version < version;
    try {
      if (missed) {
        const [board] = await Promise.all([call("GET", `/board?version=${version}`), readLog(version)]);
        if (S.version < version) Object.assign(S, { board, version });
      }
      await refresh();
    } catch (err) {
      // Unreachable, or refused for now (a proxy's 502): tried again below.
    }
    if (S.drawn < S.applied) catchUpLater(twice(wait));
    else if (missed && source && source.readyState === EventSource.OPEN) listen(S.heard);
  }

  /* The log's events after the last one the page has, up to ``version``. */
  async function readLog(version) {
    while (S.heard < version) {
      const limit = Math.min(1000, version - S.heard);
      const page = await call("GET", `/events?after=${S.heard}&limit=${limit}`);
      if (!page.events.length) return;
      page.events.forEach(hear);
    }
  }

  async function refresh() {
    if (S.refreshing) { S.again = true; return; }
    S.refreshing = true;
    try {
      do {
        S.again = false;
        const v = S.version;
        const [ledgers, characters, record] = await Promise.all([
          call("GET", `/ledgers?version=${v}`), call("GET", `/characters?version=${v}`),
          call("GET", "/record")]);
        Object.assign(S, { ledgers, characters, record });
        fatal("");
        if (v > S.drawn) clearErrors();
        render();
        if (!S.again) {
          document.body.dataset.version = String(v);
          S.drawn = v;
          setBusy();
        }
      } while (S.again);
    } catch (err) {
      // Unreachable: the stream's next board refreshes again. A 401 (a new link) or a 403 of
      // R-X-REC-8 (the seat taken away) ends the page, whichever read sees it first.
      if (err instanceof Capes.Problem && !endIfGone(err)) {
        fatal(problemText(err));
      }
    } finally {
      S.refreshing = false;
    }
  }

  /* The live stream; whether it dropped since the page opened; how long to wait before opening
     it again when the browser gave up on it. */
  let source = null;
  let dropped = false;
  let reviveWait = 1000;
  let offlineTimer = null;
  /* When the stream last spoke, and how long a silence means it is dead (three of the
     server's keep-alives): a connection that died without an error may look open for minutes. */
  let heardAt = 0;
  let silenceMs = 0;
  function checkSilence() {
    if (!source || source.readyState !== EventSource.OPEN || !silenceMs) return;
    if (Date.now() - heardAt <= silenceMs) return;
    dropped = true;
    showLive(false);
    listen(S.heard);
  }
  setInterval(checkSilence, 1000);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") checkSilence();
  });

  /* The header's badge at once, and, when the stream stays down, the notice. */
  function showLive(on) {
    $("live").textContent = on ? "live" : "reconnecting…";
    $("live").className = on ? "live on" : "live off";
    if (on) {
      clearTimeout(offlineTimer);
      offlineTimer = null;
      $("offline").hidden = true;
    } else if (offlineTimer === null) {
      offlineTimer = setTimeout(() => { $("offline").hidden = false; }, OFFLINE_NOTICE_MS);
    }
  }

  /* Follow the stream after event ``after``; the browser reconnects by itself with
     Last-Event-ID, and the stream resumes with the board as of its last event. */
  function listen(after) {
    if (source) source.close();
    const es = new EventSource(
      `${BASE}/events/stream?after=${after}&plain=true&board=true&heartbeat=true`);
    source = es;
    silenceMs = 0;
    es.onopen = () => {
      if (es !== source) return;
      heardAt = Date.now();
      reviveWait = 1000;
      showLive(true);
      if (dropped) document.body.dataset.reconnected = "1";
    };
    es.onerror = () => {
      if (es !== source) return;
      dropped = true;
      showLive(false);
      // An answer that is not the stream (a proxy's 502, a 429) makes the browser give up.
      if (es.readyState === EventSource.CLOSED) reviveLater();
    };
    es.onmessage = (message) => {
      if (es !== source) return;
      heardAt = Date.now();
      // Every message is a JSON object; anything else (an empty keep-alive) is not ours.
      let data = null;
      try { data = JSON.parse(message.data); } catch (e) { return; }
      if (data === null || typeof data !== "object") return;
      if (data.type === "keep-alive") {
        // Three keep-alives missed: the connection is dead (checkSilence opens another).
        silenceMs = 3 * 1000 * data.every;
        return;
      }
      if (data.type === "board") {
        // Older than the board read after a move while the stream was down: shown already.
        if (data.version < S.version) return;
        S.board = data.board;
        S.version = data.version;
        refresh();
        checkSeat();
        return;
      }
      hear(data);
    };
  }

  /* The stream again after the browser gave up on it; a link revoked meanwhile is said so,
     not retried for ever. */
  async function revive() {
    try {
      await call("GET", "/me");
    } catch (err) {
      if (!endIfGone(err)) reviveLater();
      return;
    }
    listen(S.heard);
  }
  function reviveLater() {
    setTimeout(revive, reviveWait);
    reviveWait = twice(reviveWait);
  }

  // -- the record: time slider, fork, verify --

  let sliderTimer = null;
  $("slider").addEventListener("input", () => {
    const slider = $("slider");
    slider.dataset.moved = slider.value === slider.max ? "" : "1";
    sliderAt();
    clearTimeout(sliderTimer);
    sliderTimer = setTimeout(() => lookBack(Number(slider.value)), 150);
  });

  async function lookBack(version) {
    if (version >= S.version) { backToNow(); return; }
    try {
      const [board, ledgers] = await Promise.all([
        call("GET", `/board?version=${version}`), call("GET", `/ledgers?version=${version}`)]);
      S.past = { version, board, ledgers };
      document.body.dataset.past = String(version);
      $("fork-result").replaceChildren();
      render();
    } catch (err) { recordError(err); }
  }

  function backToNow() {
    S.past = null;
    delete document.body.dataset.past;
    $("slider").dataset.moved = "";
    render();
  }
  $("back-to-now").addEventListener("click", backToNow);

  $("fork-here").addEventListener("click", oneAtATime(async () => {
    try {
      const forked = await call("POST", "/forks", { version: S.past.version });
      const url = `/play/${forked.campaign_id}#token=${forked.owner_token}`;
      Capes.remember({ id: forked.campaign_id, name: `${S.board.name} (fork)`, role: "owner", token: forked.owner_token });
      $("fork-result").replaceChildren(el("a", { href: url, target: "_blank", rel: "noreferrer noopener", id: "fork-link" },
        `Open the fork (from event #${forked.version}) as its owner`));
    } catch (err) { recordError(err); }
  }));

  $("verify").addEventListener("click", async () => {
    const out = $("verify-result");
    out.textContent = "checking…";
    out.className = "";
    try {
      const report = await call("GET", "/verify");
      out.textContent = report.ok
        ? `✓ verified: ${report.events} events, chain intact${report.fair ? ", every die fair" : ""}`
        : `✗ ${report.discrepancy ? report.discrepancy.check + " at event " + report.discrepancy.position + ": " + report.discrepancy.message : "failed"}`;
      out.className = report.ok ? "ok" : "bad";
      out.dataset.ok = String(report.ok);
    } catch (err) { out.textContent = problemText(err); out.className = "bad"; }
  });

  // -- start --

  /* The first load, tried again while the server cannot be reached (it may be restarting). */
  async function start() {
    for (let wait = 500; ; wait = twice(wait)) {
      try {
        await load();
        return;
      } catch (err) {
        if (err instanceof Capes.Problem) throw err;
        $("live").textContent = "cannot reach the server: trying again…";
        await new Promise((done) => setTimeout(done, wait));
      }
    }
  }

  async function load() {
    if (!TOKEN) {
      fatal("This page needs your invitation link (it ends in #token=…). Ask the campaign’s owner for it.");
      $("live").textContent = "";
      return;
    }
    try {
      S.me = await call("POST", "/session");
    } catch (err) {
      if (!(err instanceof Capes.Problem)) throw err;  // unreachable: start() tries again
      fatal(linkGone(err) || problemText(err));
      return;
    }
    $("who").textContent = S.me.owner ? "You are the owner" : `You are seat ${S.me.seat}`;
    $("export").href = `${BASE}/export`;
    const summary = await call("GET", "");
    Capes.remember({ id: ID, name: summary.name, role: S.me.owner ? "owner" : `seat ${S.me.seat}`, token: TOKEN });
    S.board = await call("GET", "/board");
    S.version = summary.version;
    await refresh();
    if (!S.me.owner) $("who").textContent = `You are ${player(S.me.seat)} (seat ${S.me.seat})`;
    listen(0);
  }
  start();
})();
