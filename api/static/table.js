/* The table: board, ledgers, legal moves, log and record of one campaign, kept live by the
   campaign's event stream. Everything goes through the HTTP API; no rule is checked here:
   the server refuses what is illegal, and a refusal that asks for a choice (422 with
   ``choices``) becomes a picker of exactly those choices.

   This file is the same for every edition: the status, the moves' forms, the picker, the
   record (undo, disputes, time slider, fork, verify), seats, the log and the live stream.
   What an edition shows and asks differently (its moves and their fields, its board, ledgers
   and character sheets) comes from ``Capes.editions[<the body's data-edition>]``, a
   function of this table's shared helpers (edition-capes.js, edition-capees.js). */
"use strict";
(() => {
  const { el, redraw, announce, api, problemText } = Capes;
  const $ = (id) => document.getElementById(id);
  const ID = document.body.dataset.campaign;
  const BASE = `/campaigns/${ID}`;
  const TOKEN = Capes.token(ID);
  const RECORD_MOVES = new Set(["vote", "withdraw_dispute"]);
  /* A new invitation link pasted into this tab changes only the fragment, and the browser does
     not load the page again: the old token stayed, and with it "This link no longer works".
     Capes.token keeps the new one; the page then loads again with it, since who this is, the
     stream's cookie and every form drawn belong to the token. */
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

  // -- helpers ------------------------------------------------------------------------------

  const player = (seat) => (S.board && S.board.players[seat - 1]) || `seat ${seat}`;
  const charName = (id) => (S.characters.find((c) => c.id === id) || {}).name || `#${id}`;
  const human = (type) => type.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/_/g, " ")
    .replace(/^./, (c) => c.toUpperCase()).replace(/ [A-Z]/g, (c) => c.toLowerCase());
  const myLedger = () => S.ledgers.find((l) => l.seat === S.me.seat);
  const span = (r) => (r.first === r.last ? `event #${r.first}` : `events #${r.first}–#${r.last}`);
  /* A dispute as the record panel and the log tell it: who opened it, about which move, why. */
  const about = (d) => `by ${player(d.seat)} about event #${d.position}`
    + `${d.actor ? ` (${player(d.actor)}’s move)` : ""}: “${d.reason}”`;
  const ENDED = { vote: " by vote", owner: " by the owner", expiry: " when its time ran out" };
  const settled = (s) => `Dispute #${s.dispute} ${s.by === "withdrawal" ? "withdrawn"
    : (s.upheld ? "upheld" : "rejected") + (ENDED[s.by] ?? ` ${s.by}`)}`;
  const hash = (hex) => `${hex.slice(0, 8)}…`;
  /* What the log says of the record's events (R-REC-*, R-FAIR-*, R-X-REC-4), the same in every
     edition: who did what, to which move or dispute, and how it ended. They were shown by their
     names ("Dispute voted", "Dice committed"): whose vote, which way, which scene's dice? Their
     keys are also what tells a record's entry from a move of the game. */
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
    ForkedFrom: (e) => `Forked from campaign ${e.source} after its event #${e.version}`,
    ImportedFrom: (e) => `Imported: events #1–#${e.version} of campaign ${e.source}`,
    DiceCommitted: (e) => `Dice of scene ${e.scene} committed (SHA-256 ${hash(e.commitment)})`,
    SeatSeedAdded: (e) => `${player(e.seat)} added a seed to the dice`,
    SeedsClosed: (e) => `Seeds of scene ${e.scene}’s dice closed`,
    DiceRevealed: (e) => `Dice of scene ${e.scene} revealed (seed ${hash(e.seed)})`,
  };
  const lower = (text) => text.charAt(0).toLowerCase() + text.slice(1);
  /* Seats as a sentence's subject: "You, Ana or Ben" (this page's seat first, as "you"). */
  const anyOf = (seats) => {
    const names = [...seats].sort((a, b) => (b === S.me.seat) - (a === S.me.seat))
      .map((s) => (s === S.me.seat ? "you" : player(s)));
    const text = names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}` : names[0];
    return text.charAt(0).toUpperCase() + text.slice(1);
  };

  /* Words for a screen reader, hidden from the eye (what the page shows around them says it). */
  const unseen = (text) => el("span", { class: "visually-hidden" }, text);

  /* A character's Drives: strength and Debt (both editions' ledgers carry them). Named after
     the character: a screen reader's list of tables was a row of unnamed ones. */
  const drivesTable = (drives, name) => el("table", { class: "drives", "aria-label": `${name}’s Drives` },
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Drive"), el("th", { scope: "col" }, "Strength"), el("th", { scope: "col" }, "Debt"))),
    el("tbody", {}, drives.map((d) => el("tr", { class: d.overdrawn ? "overdrawn" : "" },
      el("th", { scope: "row" }, d.name + (d.overdrawn ? " (overdrawn)" : "")),
      el("td", {}, String(d.strength)), el("td", {}, String(d.debt))))));

  /* A refusal shown next to the field at fault (``input``, when the form has one for it):
     the field is marked invalid, described by the refusal and given the focus, so a screen
     reader reads out the field and why. The refusal alone, beside the field, was silent: the
     focus stayed on the form's button. */
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

  /* A die as a die: its value, a label for screen readers, a small mark (staked Debt), and
     its id in a corner: the moves' selects and the log name dice by id ("die 3"), which the
     board showed only in a tooltip, so two dice of one value could not be told apart. */
  const die = (id, value, more, mark) => el("span", {
    class: "die", role: "img", "aria-label": `die ${id} showing ${value}${more || ""}`, title: `die ${id}`,
  }, el("span", { class: "die-id" }, String(id)), String(value), mark ? el("sub", {}, mark) : "");

  /* A side's total: the number, read out as "total 7" (the word hidden from the eye). It was
     an aria-label on a plain span, which ARIA does not allow: ignored by some screen readers,
     run into the side's label by Chrome ("Everyone gets offtotal 2"). */
  const total = (n) => el("span", { class: "total" }, " ", unseen("total "), String(n));

  /* The edition's part of the table (moves, board, ledgers, characters). */
  const E = Capes.editions[document.body.dataset.edition]({
    S, $, el, redraw, call, send, postCommand, player, charName, human, myLedger, drivesTable, die, total, problemText, anyOf,
    fieldError, clearFieldErrors,
  });
  const MOVES = E.MOVES;
  const ASIDE = E.ASIDE || new Set();

  /* The page sends one command at a time, and takes the next once it shows the board the last
     one made. A command sent meanwhile is ignored: a double click on a move's button sent it
     twice (the buttons were only dimmed), and the narration was stored twice, or the move
     applied and its copy refused. Until the redraw the form that sent it is still there, to be
     clicked again. That board comes by the live stream, or, when the stream has not brought it
     soon after the answer, is read over HTTP (``catchUp``). */
  const busy = () => S.sending || S.drawn < S.applied;
  function setBusy() {
    if (busy()) document.body.dataset.busy = "1"; else delete document.body.dataset.busy;
  }

  /* POST to ``path`` what changes the campaign (a command, the owner's settling): the answer,
     or null if it was not sent (the last one is on its way, or not drawn yet). */
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

  /* A command with the narration written for it (then cleared): the answer, or null. A box
     left with blanks alone (a stray space, a line break) is sent as none, as an empty one is:
     the server refuses blanks alone (R-X-SRV-1), and every move was refused for them. */
  async function postCommand(command) {
    const said = $("narration").value;
    const applied = await post("/commands", { command, narration: said.trim() ? said : "" });
    if (applied) $("narration").value = "";
    return applied;
  }

  /* The messages of the moves and of the record, cleared when a move is sent and when a new
     board is drawn: a refusal is about the board it was made on (a refusal once stayed in
     "Your moves" into later scenes). */
  function clearErrors() {
    $("move-error").textContent = "";
    $("record-error").textContent = "";
  }

  // -- the moves ----------------------------------------------------------------------------

  /* Each legal move (a command type of ``waiting_for``) is a form made from the edition's
     ``MOVES[type] = [label, fields, action]``: a field is [name, kind, label, initial]; kinds
     "text", "required" (a text the move cannot go without: the browser asks for it, and
     gives it the focus, before anything is sent), "count", "bool", "names" are inputs, any
     other a select of the edition's ``options(kind, form)`` ("dice": of several). ``action``
     (if any) runs instead of sending the command. */
  function fillSelect(select, kind, form) {
    const before = new Set([...select.selectedOptions].map((o) => o.value));
    // An option's third item: false, or why it may not be chosen (true: "blocked").
    select.replaceChildren(...E.options(kind, form).map(([v, label, disabled]) =>
      el("option", { value: v, disabled: !!disabled },
        label + (disabled ? ` (${disabled === true ? "blocked" : disabled})` : ""))));
    const kept = [...select.options].filter((o) => before.has(o.value));
    if (select.multiple) for (const o of kept) o.selected = true;
    else if (kept.length) select.value = kept[0].value;
    // Nothing to choose (a Free Conflict outside the claiming phase): the field is not shown.
    const cell = select.closest(".field");
    if (cell) cell.hidden = !select.options.length;
  }

  /* A move's name for ``seat`` on ``board``: the edition's, which may say what it costs now (a bought turn,
     a further character: R-PAGE-6, R-SCENE-2), else its MOVES label. */
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
        const select = el("select", { id, name, multiple: true, size: 3 });
        select.replaceChildren(...S.characters.map((x) => el("option", { value: x.id }, x.name)));
        cell.append(select);
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
      else if (kind === "names") command.names = [...input.selectedOptions].map((o) => Number(o.value));
      else if (kind === "dice") command.dice = [...input.selectedOptions].map((o) => Number(o.value));
      else if (E.fill && E.fill(command, name, kind, form)) continue;
      else if (input.value === "") continue;
      else if (E.strings.has(kind)) command[name] = input.value;
      else command[name] = Number(input.value);
    }
    if (type === "narrate" && !command.text) command.text = $("narration").value;
    return command;
  }

  /* ``errors``: the id of the box beside the form that sent it, for a refusal; ``from``: the id
     of the move's form that sent it, cleared once the move is applied. */
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

  /* A move's form is cleared once the board its move made is drawn: a move still offered
     after it (a second Conflict in one turn) showed the words of the first again, kept as the
     moves were drawn again (redraw). Only that form: what the player is writing elsewhere
     stays. The board may be drawn before the answer is in (the live stream is quicker). */
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

  // -- the picker (a 422 with ``choices``) --------------------------------------------------

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

  /* The picker is a modal dialog (showModal): while it asks, the rest of the page is inert, to
     a pointer and to a screen reader alike, and Tab goes round its buttons. It was a box in the
     page, and Tab walked out of it into moves and links it had left behind. It takes the focus
     (its first choice) and gives it back when it closes: to the move's button that asked, or,
     that move made, to the moves' heading (it fell to the page's top). Escape closes it, as
     Cancel does. Its ``hidden`` says whether it is open, as before. */
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
    // the page for the browser's own controls, and a keyboard player then had to find the
    // way back into it.
    const buttons = [...picker.querySelectorAll("button")];
    const [first, last] = [buttons[0], buttons[buttons.length - 1]];
    if (ev.shiftKey ? document.activeElement === first : document.activeElement === last) {
      ev.preventDefault();
      (ev.shiftKey ? last : first).focus();
    }
  });
  // Escape as the browser takes it (a close request): the same as Cancel.
  picker.addEventListener("cancel", (ev) => { ev.preventDefault(); closePicker(); });

  // -- rendering ----------------------------------------------------------------------------

  /* The status is a live region: a screen reader reads it out when it changes, and only then
     (announce). */
  function renderStatus() {
    announce($("status"), statusLines());
  }

  function statusLines() {
    const b = S.past ? S.past.board : S.board;
    // Whom the table waits for: a seat whose only moves are aside ones (a veto) is not.
    const waits = Object.entries(b.waiting_for).map(([seat, moves]) => [Number(seat), moves])
      .filter(([, moves]) => moves.some((m) => !ASIDE.has(m)));
    const mine = waits.find(([seat]) => seat === S.me.seat);
    const lines = [];
    const voters = waits.filter(([, moves]) => moves.includes("vote")).map(([seat]) => seat);
    if (b.closed) lines.push(el("p", { class: "turn" }, "The campaign is closed."));
    else if (S.record && S.record.dispute && !S.past) {
      // The game waits for the dispute (R-REC-2): the board offers only its votes.
      return [el("p", { class: "turn dispute" },
        `The table waits for dispute #${S.record.dispute.id} to be settled`,
        voters.length ? `: ${voters.map((s) => (s === S.me.seat ? "you" : player(s))).join(", ")} must still vote. ` : ". ",
        el("a", { href: "#dispute", class: "jump" }, "Go to the dispute"))];
    } else if (mine && !S.past) {
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
    // The moves any seat may make meanwhile (a veto), apart: who may make them (and on what,
    // in the edition's words). Among the waited seat's moves, a veto read as awaited.
    for (const m of ASIDE) {
      const seats = Object.keys(b.waiting_for).map(Number).filter((s) => b.waiting_for[s].includes(m));
      if (seats.length) {
        lines.push(el("p", { class: "meta" }, (E.aside && E.aside(m, seats, b))
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
    // Table talk on its own, in an edition that has a command for it (CAPEES! narrates
    // only with a move).
    if (E.say) forms.push(sayForm());
    forms.sort((a, b) => b.classList.contains("quick") - a.classList.contains("quick"));
    // What the player was typing in a form that stays, and where: a move made, its form gone,
    // the focus goes to the heading, from which Tab reaches the narration and the next moves.
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

  /* What an event of the log did, in words: the record's, else the edition's, else its name.
     The log, the dispute form's moves and the preview's reverted events say it alike (the
     last two said "Ability used, Debt gained, Die rolled"). Its position too: an edition names
     what it is about as it was then (an undo may give a Complication's number again). */
  const worded = (e) => (RECORD_TEXT[e.type] || E.eventText)?.(e.event, e.position) || human(e.type);

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

  /* The log: the new moves are added at its end, and the entries already there stay as they
     are (the same elements). It was drawn anew on every board, and a screen reader reading it
     lost its place each time anyone moved. It is drawn anew only when an entry there changed:
     an undo or a rewind marks moves reverted. */
  function renderLog() {
    const log = $("log");
    // The last LOG_SHOWN moves (the export holds them all): a long campaign stays quick.
    const all = [...S.commands];
    const shown = all.slice(-LOG_SHOWN);
    const keys = shown.map(([first, events]) => logKey(first, events));
    const atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 30;
    const drawn = [...log.querySelectorAll("li[data-key]")];
    const drawnKeys = drawn.map((li) => li.dataset.key);
    // The entries drawn are the first ones to show, as they are; or, when the oldest went past
    // LOG_SHOWN, all but those (they go).
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

  function renderRecord() {
    const r = S.record;
    const undo = r && r.may_undo !== null && r.may_undo === S.me.seat && !r.dispute && !S.past;
    redraw($("record-actions"), undo ? [el("button", {
      type: "button", id: "undo", onclick: () => send({ type: "undo" }, "record-error"),
    }, "Undo my last move")] : [], $("record-title"));
    announce($("dispute-news"), disputeNews());
    redraw($("dispute-acts"), disputeParts(), $("record-title"));
    const slider = $("slider");
    const follow = slider.dataset.moved !== "1";
    slider.max = String(Math.max(1, S.version));
    if (follow) slider.value = slider.max;
    sliderAt();
  }

  /* Where the time slider is: shown beside it, and its value as a screen reader reads it
     ("event 12 of 40"; it read "12" alone). The shown words are hidden from a screen reader:
     an output is a live region, and it was read out on every board, as the last event moved. */
  function sliderAt() {
    const slider = $("slider");
    $("slider-out").textContent = `${slider.value} of ${slider.max}`;
    slider.setAttribute("aria-valuetext", `event ${slider.value} of ${slider.max}`);
  }

  /* The open dispute and its votes, else how the last one ended: a live region, read out when
     a dispute opens, takes a vote and ends, and only then (announce; it was drawn again, and
     read out, on every board while the dispute lasted). */
  function disputeNews() {
    const d = S.record && S.record.dispute;
    if (!d) return disputeEnd();
    const ayes = Object.values(d.votes).filter(Boolean).length;
    const noes = Object.values(d.votes).length - ayes;
    return [el("div", { class: "open-dispute" },
      el("p", {}, el("strong", {}, `Dispute #${d.id}`), ` ${about(d)}`),
      el("p", { class: "meta" }, `${ayes} to uphold, ${noes} against; ${d.needed} needed to uphold. Voters: ${d.voters.map(player).join(", ")}.`),
      // R-REC-4: past its time it expires, changing nothing (a vote then records the expiry).
      el("p", { class: "meta" }, `Open until ${new Date(d.expires).toLocaleString([], { dateStyle: "medium", timeStyle: "short" })}; then it expires, changing nothing.`))];
  }

  /* How the last dispute ended, from its events in the log (the record keeps open ones only). */
  function disputeEnd() {
    const events = [...S.commands.values()].flat().map((e) => e.event);
    const last = events.filter((e) => e.type === "DisputeSettled").pop();
    if (!last) return [];
    const r = events.find((e) => e.type === "Rewound" && e.dispute === last.dispute);
    const upheld = last.upheld && last.by !== "withdrawal";
    return [el("p", { class: "meta" }, `${settled(last)}: `
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
          el("button", { type: "button", id: "vote-uphold", onclick: () => send({ type: "vote", uphold: true }, "record-error") }, "Vote to uphold (rewind)"),
          el("button", { type: "button", id: "vote-against", class: "secondary", onclick: () => send({ type: "vote", uphold: false }, "record-error") }, "Vote against")));
      }
      if (S.me.seat === d.seat) {
        box.push(el("button", { type: "button", id: "withdraw", class: "secondary", onclick: () => send({ type: "withdraw_dispute" }, "record-error") }, "Withdraw the dispute"));
      }
      if (S.me.owner && r.options.owner_settles) {
        box.push(el("div", { class: "row" },
          el("button", { type: "button", id: "settle-uphold", onclick: () => settle(true) }, "Uphold (owner)"),
          el("button", { type: "button", id: "settle-reject", class: "secondary", onclick: () => settle(false) }, "Reject (owner)")));
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
        el("button", { type: "button", id: "dispute-preview", class: "secondary", onclick: () => preview(form) }, "Preview without it"),
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
          `${p.reverted.length} event${p.reverted.length === 1 ? "" : "s"} undone (`,
          p.reverted.map(worded).join(", "), ").",),
        el("p", { class: "meta" }, E.summary(b),
          `; waiting for ${Object.keys(b.waiting_for).map((s) => player(Number(s))).join(", ") || "nobody"}.`)));
    } catch (err) {
      $("record-error").textContent = problemText(err);
    }
  }

  async function settle(uphold) {
    try { await post("/disputes/settle", { uphold }); } catch (err) { $("record-error").textContent = problemText(err); }
  }

  function renderOwner() {
    $("owner").hidden = !S.me.owner;
    if (!S.me.owner) return;
    const links = JSON.parse(localStorage.getItem(`capes:links:${ID}`) || "{}");
    redraw($("seats"), S.board.players.map((name, i) => {
      const seat = i + 1;
      const id = `link-${seat}`;
      return el("li", { class: "seat", dataset: { seat } },
        el("label", { for: id }, `${name}’s invitation link (seat ${seat})`),
        el("div", { class: "row" },
          el("input", { id, readonly: true, value: links[seat] || "", placeholder: "(not in this browser: issue a new link)", class: "link" }),
          // Whose, for a screen reader: each seat's buttons were "Copy" and "New link" alike.
          el("button", { type: "button", id: `copy-${seat}`, class: "secondary", onclick: () => copy(id) }, "Copy", unseen(` ${name}’s link`)),
          el("button", { type: "button", id: `new-link-${seat}`, class: "secondary", onclick: () => newLink(seat) }, "New link", unseen(` for ${name}`))));
    }), $("owner-title"));
  }

  function saveLink(seat, token) {
    const links = JSON.parse(localStorage.getItem(`capes:links:${ID}`) || "{}");
    links[seat] = `${location.origin}/play/${ID}#token=${token}`;
    localStorage.setItem(`capes:links:${ID}`, JSON.stringify(links));
  }

  /* An action that does not change this campaign's log (a new link, a fork), so the page
     does not wait for a board after it: a click while it is on its way is ignored (a double
     click made two forks, or issued a link and at once revoked it for another). */
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

  function render() {
    if (!S.board) return;
    E.renderBoard();
    renderStatus();
    E.renderLedgers();
    E.renderCharacters();
    renderMoves();
    renderRecord();
    renderOwner();
    renderLog();
    $("past").hidden = !S.past;
    if (S.past) $("past-version").textContent = `#${S.past.version}`;
  }

  // -- live ---------------------------------------------------------------------------------

  /* How long the board a command made may take to come by the stream before the page reads it
     itself: a stream that is down (the server restarting, a network blip, a proxy that dropped
     it) kept every button dimmed until it was back, with no sign why. */
  const CATCH_UP_MS = 1000;
  /* How long the stream may be down before the page says so: a restarted server is back within
     about a second (the stream's ``retry``), and the notice would only flash. */
  const OFFLINE_NOTICE_MS = 1000;
  /* The longest wait between two tries to reach the server again (as the first load's). */
  const RETRY_MAX_MS = 5000;
  const LINK_GONE = "This link no longer works (a new one was issued, or it is not this campaign’s). Ask the owner for a new one.";
  /* The rule of a seat an upheld dispute took away: its link is refused with 403, the server's
     words naming the dispute. */
  const SEAT_REMOVED = "R-X-REC-8";

  /* What to tell the player whose link the server no longer takes, or null for any other
     refusal: a new link was issued for the seat (401), or an upheld dispute took the seat
     away (403, R-X-REC-8, in the server's words, which name the dispute). */
  function linkGone(err) {
    if (!(err instanceof Capes.Problem)) return null;
    if (err.status === 401) return LINK_GONE;
    if (err.status === 403 && err.problem.rule === SEAT_REMOVED) {
      const said = err.message;
      return said.charAt(0).toUpperCase() + said.slice(1) + (said.endsWith(".") ? "" : ".");
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
    $("fatal").hidden = false;
    $("fatal").textContent = gone;
    return true;
  }

  /* The board no longer has this page's seat: an upheld dispute took it away (R-X-REC-8).
     The server says so, naming the dispute, once its keys know (at once, or a moment later
     when another process wrote them): asked until it does, or the seat is back. */
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
      checkSeat(Math.min(wait * 2, RETRY_MAX_MS));
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

  /* The last answer's board has not come by the stream: read it, and the log's events up to
     it, over HTTP (the exact version the command made, as the ledgers are read), then draw it,
     which frees the buttons. Reads only: a command is never sent again. Tried again while the
     server cannot be reached. A stream that looks open but did not bring the board (a proxy
     holding it, an announcement lost between workers) is opened again. */
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
    if (S.drawn < S.applied) catchUpLater(Math.min(wait * 2, RETRY_MAX_MS));
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
        $("fatal").hidden = true;
        $("fatal").textContent = "";
        if (v > S.drawn) clearErrors();
        render();
        if (!S.again) {
          document.body.dataset.version = String(v);
          S.drawn = v;
          setBusy();
        }
      } while (S.again);
    } catch (err) {
      // Unreachable (the server restarting): the stream's next board message refreshes again.
      // A 401 here is the link replaced while the page read, a 403 of R-X-REC-8 its seat
      // taken away by a dispute (the stream then ends and says the same): the one message a
      // player can act on, whichever read saw it first.
      if (err instanceof Capes.Problem && !endIfGone(err)) {
        $("fatal").hidden = false;
        $("fatal").textContent = problemText(err);
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
  /* When the stream last said anything, and how long a silence means it is dead: the server's
     keep-alive (``heartbeat=true``) says how often it comes, and a connection that died
     without an error (a laptop woken from sleep, a phone that changed networks) brings none,
     though the browser may hold it "open" for minutes. */
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

  /* Follow the campaign's stream from after event ``after``. The browser reconnects by itself
     when the connection drops, sending Last-Event-ID: the stream resumes after it, with the
     board as of its last event. */
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
      // An answer that is not the stream (a proxy's 502 while the server is away, a 429)
      // makes the browser give up for good: the page was stale until reloaded.
      if (es.readyState === EventSource.CLOSED) reviveLater();
    };
    es.onmessage = (message) => {
      if (es !== source) return;
      heardAt = Date.now();
      // Every message is a JSON object; anything else is not ours to read. The server's
      // keep-alive (a comment) came with an empty data line, which the browser dispatches as
      // an empty message: JSON.parse threw every 15 s.
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

  /* The stream again, after the browser gave up on it, from the last event the page has; a
     link revoked meanwhile (a new one issued for this seat, or the seat taken away by a
     dispute) is said so, not retried for ever. */
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
    reviveWait = Math.min(reviveWait * 2, RETRY_MAX_MS);
  }

  // -- the record: time slider, fork, verify --------------------------------------------------

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
    } catch (err) { $("record-error").textContent = problemText(err); }
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
    } catch (err) { $("record-error").textContent = problemText(err); }
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

  // -- start ----------------------------------------------------------------------------------

  /* The first load, tried again while the server cannot be reached (it may be restarting). */
  async function start() {
    for (let wait = 500; ; wait = Math.min(wait * 2, RETRY_MAX_MS)) {
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
      $("fatal").hidden = false;
      $("fatal").textContent = "This page needs your invitation link (it ends in #token=…). Ask the campaign’s owner for it.";
      $("live").textContent = "";
      return;
    }
    try {
      S.me = await call("POST", "/session");
    } catch (err) {
      if (!(err instanceof Capes.Problem)) throw err;  // unreachable: start() tries again
      $("fatal").hidden = false;
      $("fatal").textContent = linkGone(err) || problemText(err);
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
