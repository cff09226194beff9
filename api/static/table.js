/* The table: board, ledgers, legal moves, log and record of one campaign, kept live by the
   campaign's event stream. Everything goes through the HTTP API; no rule is checked here:
   the server refuses what is illegal, and a refusal that asks for a choice (422 with
   ``choices``) becomes a picker of exactly those choices. */
"use strict";
(() => {
  const { el, api, problemText } = Capes;
  const $ = (id) => document.getElementById(id);
  const ID = document.body.dataset.campaign;
  const BASE = `/campaigns/${ID}`;
  const TOKEN = Capes.token(ID);
  const RECORD_EVENTS = new Set(["TableOptionsSet", "Undone", "DisputeOpened", "DisputeVoted",
    "DisputeSettled", "Rewound", "ForkMade", "ForkedFrom", "DiceCommitted", "SeatSeedAdded",
    "SeedsClosed", "DiceRevealed", "ImportedFrom"]);
  const LOG_SHOWN = 300;
  const DRIVES = ["Justice", "Truth", "Love", "Hope", "Duty",
    "Obsession", "Pride", "Power", "Despair", "Fear"];

  /* What this page knows; ``past`` is the board and ledgers at an earlier event. */
  const S = {
    me: { seat: null, owner: false }, version: 0, board: null, ledgers: [], characters: [],
    record: null, commands: new Map(), past: null, refreshing: false, again: false,
  };
  const call = (method, path, body) => api(TOKEN, method, BASE + path, body);

  // -- helpers ------------------------------------------------------------------------------

  const player = (seat) => (S.board && S.board.players[seat - 1]) || `seat ${seat}`;
  const charName = (id) => (S.characters.find((c) => c.id === id) || {}).name || `#${id}`;
  const human = (type) => type.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/_/g, " ")
    .replace(/^./, (c) => c.toUpperCase()).replace(/ [A-Z]/g, (c) => c.toLowerCase());
  const conflictOf = (id) => (S.board.conflicts || []).find((c) => c.id === Number(id));
  const myLedger = () => S.ledgers.find((l) => l.seat === S.me.seat);
  const myCharacters = () => S.characters.filter((c) =>
    S.board && Object.keys(S.board.cast).length
      ? S.board.cast[c.id] === S.me.seat : c.created_by === S.me.seat);
  const turnCharacter = () => S.board && S.board.turn
    ? S.characters.find((c) => c.id === S.board.turn.character) : myCharacters()[0];

  function setBusy(on) {
    if (on) document.body.dataset.busy = "1"; else delete document.body.dataset.busy;
  }

  // -- the moves ----------------------------------------------------------------------------

  /* Each legal move (a command type of ``waiting_for``): its button and the fields it needs.
     Choices the rules may ask for (a Drive, an ally, pairs, Story Tokens…) are left out: the
     server answers 422 with the legal ``choices`` and the page shows a picker. */
  const MOVES = {
    frame_scene: ["Frame the scene", [["text", "text", "The scene"]]],
    pass_framing: ["Pass framing", []],
    choose_character: ["Choose a character", [["character", "free-character", "Character"]]],
    create_conflict: ["Create a conflict", [["kind", "kind", "Kind"],
      ["text", "text", "What is at stake"], ["side0", "text", "First side", "For"],
      ["side1", "text", "Second side", "Against"], ["names", "names", "Names (a Goal)"]]],
    claim: ["Claim a side", [["conflict", "conflict", "Conflict"], ["side", "side", "Side"]]],
    pass_claiming: ["Pass (claiming)", []],
    start_turn: ["Start a turn", [["character", "my-character", "Character"]]],
    end_free_play: ["End free play", []],
    roll_overdrawn: ["Roll for an Overdrawn Drive", [["character", "my-character", "Character"],
      ["drive", "drive", "Drive"]]],
    pass_turn: ["Pass the turn", []],
    roll_die: ["Roll a die", [["ability", "ability", "Ability"],
      ["conflict", "conflict", "Conflict"], ["die", "die", "Die"],
      ["drive", "drive", "Drive taking the Debt (super abilities)"]]],
    raise_inspiration: ["Raise an Inspiration", [["ability", "ability", "Ability"],
      ["inspiration", "inspiration", "Inspiration"],
      ["drive", "drive", "Drive taking the Debt (super abilities)"]]],
    accept_roll: ["Accept the roll", []],
    reject_roll: ["Reject the roll", []],
    react: ["React", [["character", "my-character", "Character"],
      ["ability", "ability", "Ability"],
      ["drive", "drive", "Drive taking the Debt (super abilities)"]]],
    pass_reaction: ["Pass (no reaction)", []],
    narrate: ["Narrate", [["text", "text", "What happens"],
      ["and_then", "bool", "This completes the “And Then”", true]]],
    stake_debt: ["Stake Debt", [["conflict", "conflict", "Conflict"], ["die", "die", "Die"],
      ["amount", "count", "Debt", 1]]],
    split_die: ["Split a die", [["conflict", "conflict", "Conflict"], ["die", "die", "Die"],
      ["into", "count", "Into how many dice", 2]]],
    schism: ["Schism", [["conflict", "conflict", "Conflict"], ["side", "side", "Side it leaves"],
      ["dice", "dice", "Dice (ids, comma-separated)"], ["label", "text", "New side's name", "New side"]]],
    spend_inspiration: ["Spend an Inspiration", [["inspiration", "inspiration", "Inspiration"],
      ["conflict", "conflict", "Conflict"], ["die", "die", "Die"]]],
    end_turn: ["End the turn", []],
    resolve: ["Resolve", [["conflict", "conflict", "Conflict"]]],
    gloat: ["Gloat", [["conflict", "conflict", "Conflict"], ["times", "count", "Times", 1]]],
    declare_deadlock: ["Declare a deadlock", [["conflict", "conflict", "Conflict"]]],
    end_page: ["End the page", []],
    veto: ["Veto a conflict", [["conflict", "vetoable", "Conflict"]]],
  };

  function options(kind, form) {
    const b = S.board;
    const conflictId = form && form.elements.conflict ? form.elements.conflict.value : null;
    const c = conflictId ? conflictOf(conflictId) : (b.conflicts || [])[0];
    switch (kind) {
      case "conflict":
        return b.conflicts.map((x) => [x.id, `#${x.id} ${x.text}`]);
      case "vetoable":
        return b.vetoable.map((id) => [id, `#${id} ${(conflictOf(id) || {}).text || ""}`]);
      case "side":
        return c ? c.sides.map((s) => [s.index, s.label]) : [];
      case "die":
        return c ? c.sides.flatMap((s) => s.dice.map((d) =>
          [d.id, `die ${d.id}: ${d.value || "–"} (${s.label})`])) : [];
      case "free-character":
        return S.characters.filter((x) => !(x.id in b.cast)).map((x) => [x.id, x.name]);
      case "my-character":
        return myCharacters().map((x) => [x.id, x.name]);
      case "drive": {
        const who = form && form.elements.character
          ? S.characters.find((x) => x.id === Number(form.elements.character.value))
          : turnCharacter();
        return [["", "(ask me when it matters)"],
          ...(who ? who.drives.map((d) => [d.name, `${d.name} (Debt ${d.debt})`]) : [])];
      }
      case "ability": {
        const who = form && form.elements.character
          ? S.characters.find((x) => x.id === Number(form.elements.character.value))
          : turnCharacter();
        return who ? who.abilities.map((a) => [a.name,
          `${a.name} (${a.category} ${a.rating}${a.super ? ", super" : ""})`,
          (who.blocked || []).includes(a.name)]) : [];
      }
      case "inspiration": {
        const l = myLedger();
        return l ? l.inspirations.map((i) => [i.id, `#${i.id}: ${i.value}`]) : [];
      }
      case "kind":
        return [["event", "Event"], ["goal", "Goal"]];
      default:
        return [];
    }
  }

  function fillSelect(select, kind, form) {
    const before = select.value;
    select.replaceChildren(...options(kind, form).map(([v, label, disabled]) =>
      el("option", { value: v, disabled: !!disabled }, label + (disabled ? " (blocked)" : ""))));
    if ([...select.options].some((o) => o.value === before)) select.value = before;
  }

  function moveForm(type) {
    const [label, fields] = MOVES[type] || [human(type), []];
    const form = el("form", { class: fields.length ? "move" : "move quick", dataset: { move: type } });
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
      if (kind === "text" || kind === "count" || kind === "dice") {
        cell.append(el("input", { id, name, autocomplete: "off",
          type: kind === "count" ? "number" : "text", min: kind === "count" ? 1 : null,
          value: initial === undefined ? (kind === "count" ? 1 : "") : initial }));
      } else if (kind === "names") {
        const select = el("select", { id, name, multiple: true, size: 3 });
        select.replaceChildren(...S.characters.map((x) => el("option", { value: x.id }, x.name)));
        cell.append(select);
      } else {
        const select = el("select", { id, name, dataset: { kind } });
        fillSelect(select, kind, form);
        cell.append(select);
      }
    }
    form.addEventListener("change", (ev) => {
      if (ev.target.name === "conflict" || ev.target.name === "character") {
        for (const s of form.querySelectorAll("select[data-kind]")) {
          if (s !== ev.target) fillSelect(s, s.dataset.kind, form);
        }
      }
    });
    form.append(el("button", { type: "submit" }, label));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      send(commandOf(type, form));
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
      else if (kind === "dice") {
        command.dice = input.value.split(",").map((x) => Number(x.trim())).filter(Boolean);
      } else if (name === "side0" || name === "side1") {
        command.sides = [form.elements.side0.value || "For", form.elements.side1.value || "Against"];
      } else if (input.value === "") continue;
      else if (["text", "ability", "kind", "drive"].includes(kind)) command[name] = input.value;
      else command[name] = Number(input.value);
    }
    if (type === "narrate" && !command.text) command.text = $("narration").value;
    return command;
  }

  async function send(command) {
    $("move-error").textContent = "";
    setBusy(true);
    try {
      const applied = await call("POST", "/commands", { command, narration: $("narration").value });
      $("narration").value = "";
      closePicker();
      document.body.dataset.applied = applied.version;
    } catch (err) {
      const p = err.problem || {};
      if (err.status === 422 && p.field && p.choices && p.choices.length) openPicker(command, p);
      else $("move-error").textContent = problemText(err);
    } finally {
      setBusy(false);
    }
  }

  // -- the picker (a 422 with ``choices``) --------------------------------------------------

  function choiceText(field, choice) {
    if (field === "tokens") {
      const gifts = Object.entries(choice).flatMap(([g, to]) => Object.entries(to).map(
        ([r, n]) => `${player(Number(g))} gives ${player(Number(r))} ${n} Story Token${n > 1 ? "s" : ""}`));
      return gifts.join("; ") || "no Story Tokens";
    }
    if (field === "pairs") return choice.map(([a, b]) => `die ${a} with die ${b}`).join("; ");
    if (field.startsWith("inspirations.")) return player(Number(choice));
    if (field === "ally") {
      const roll = S.board.turn && S.board.turn.roll;
      const c = roll && conflictOf(roll[0]);
      const side = c && c.sides[choice];
      return side ? `Ally with “${side.label}”` : `side ${choice}`;
    }
    if (typeof choice === "object") return JSON.stringify(choice);
    return String(choice);
  }

  function setPath(command, path, value) {
    const parts = path.split(".");
    let at = command;
    for (const part of parts.slice(0, -1)) { at[part] = at[part] || {}; at = at[part]; }
    at[parts[parts.length - 1]] = value;
  }

  function openPicker(command, problem) {
    $("picker").hidden = false;
    $("picker-title").textContent = `${problem.rule}: ${problem.detail}`;
    $("picker-choices").replaceChildren(...problem.choices.map((choice) => el("button", {
      type: "button", class: "choice",
      onclick: () => { const next = structuredClone(command); setPath(next, problem.field, choice); send(next); },
    }, choiceText(problem.field, choice))));
    $("picker-choices").querySelector("button").focus();
  }
  function closePicker() { $("picker").hidden = true; $("picker-choices").replaceChildren(); }
  $("picker-cancel").addEventListener("click", closePicker);

  // -- rendering ----------------------------------------------------------------------------

  function renderStatus() {
    const b = S.past ? S.past.board : S.board;
    const waits = Object.entries(b.waiting_for).map(([seat, moves]) => [Number(seat), moves]);
    const mine = waits.find(([seat]) => seat === S.me.seat);
    const status = $("status");
    status.replaceChildren();
    if (b.closed) status.append(el("p", { class: "turn" }, "The campaign is closed."));
    else if (mine && !S.past) {
      status.append(el("p", { class: "turn mine" }, "It’s your move. ",
        el("a", { href: "#moves-title", class: "jump" }, "Go to your moves")));
    }
    const others = waits.filter(([seat]) => seat !== S.me.seat);
    if (others.length) {
      status.append(el("p", { class: "turn" }, "Waiting for ",
        others.map(([seat, moves]) => `${player(seat)} (${moves.map((m) => (MOVES[m] || [human(m)])[0].toLowerCase()).join(", ")})`).join("; "), "."));
    }
    if (!waits.length && !b.closed) status.append(el("p", { class: "turn" }, "Nobody is waited on."));
  }

  function renderMoves() {
    const panel = $("moves-panel");
    panel.hidden = S.me.seat === null || !!S.past;
    if (panel.hidden) return;
    const types = [...(S.board.waiting_for[S.me.seat] || [])];
    const key = JSON.stringify([types, S.version]);
    if (panel.dataset.key === key) return;
    panel.dataset.key = key;
    // Keep what the player was typing in a form that stays.
    const kept = {};
    for (const f of $("moves").querySelectorAll("form")) {
      kept[f.dataset.move] = Object.fromEntries([...f.elements].filter((e) => e.name)
        .map((e) => [e.name, e.type === "checkbox" ? e.checked : e.value]));
    }
    const forms = types.map(moveForm);
    forms.push(sayForm());
    forms.sort((a, b) => b.classList.contains("quick") - a.classList.contains("quick"));
    for (const f of forms) {
      for (const [name, value] of Object.entries(kept[f.dataset.move] || {})) {
        const input = f.elements[name];
        if (!input || input.multiple) continue;
        if (input.type === "checkbox") input.checked = value;
        else if (input.tagName !== "SELECT" || [...input.options].some((o) => o.value === value)) input.value = value;
      }
      for (const s of f.querySelectorAll("select[data-kind]")) fillSelect(s, s.dataset.kind, f);
    }
    $("moves").replaceChildren(...forms);
  }

  /* Narration at any time (table talk, a description): the ``narrate`` command. */
  function sayForm() {
    const form = el("form", { class: "move quick say", dataset: { move: "say" } },
      el("button", { type: "submit" }, "Say it (narration only)"));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const text = $("narration").value.trim();
      if (!text) { $("move-error").textContent = "Write the narration first."; $("narration").focus(); return; }
      send({ type: "narrate", text });
    });
    return form;
  }

  function renderBoard() {
    const b = S.past ? S.past.board : S.board;
    $("campaign-name").textContent = b.name;
    document.title = `${b.name} · Capes`;
    const bits = [];
    if (b.scene) {
      bits.push(`Scene ${b.scene}${b.scene_text ? ": " + b.scene_text : ""}`);
      if (b.framer) bits.push(`framed by ${player(b.framer)}`);
      if (b.page) bits.push(`page ${b.page}, started by ${player(b.starter)}`);
      if (b.phase) bits.push(`phase: ${human(b.phase)}${b.round ? ` (${b.round} round)` : ""}`);
      if (b.turn) bits.push(`${player(b.turn.seat)}’s turn with ${charName(b.turn.character)}`);
      if (b.turn && b.turn.roll) {
        const [c, d, before, rolled] = b.turn.roll;
        bits.push(`roll waiting: conflict #${c}, die ${d}: ${before} → ${rolled}`);
      }
      if (b.turn && b.turn.and_then) bits.push(`“And Then” by ${b.turn.and_then.map(player).join(" or ")}`);
    } else {
      bits.push(`Between scenes (${b.scenes_played} played)`);
      if (b.next_framer) bits.push(`${player(b.next_framer)} frames next`);
    }
    const cast = Object.entries(b.cast).map(([ch, seat]) => `${charName(Number(ch))} (${player(seat)})`);
    $("scene-line").replaceChildren(el("span", {}, bits.join(" · ")),
      cast.length ? el("span", { class: "cast" }, "Cast: " + cast.join(", ")) : "");
    $("conflicts").replaceChildren(...b.conflicts.map(conflictCard));
    if (!b.conflicts.length) $("conflicts").append(el("p", { class: "hint" }, "No conflicts on the table."));
  }

  function conflictCard(c) {
    return el("article", { class: "conflict", dataset: { conflict: c.id } },
      el("h3", {}, `#${c.id} ${c.kind === "goal" ? "Goal" : "Event"}: ${c.text}`),
      el("p", { class: "meta" }, `created by ${player(c.creator)}`,
        c.names.length ? ` · names ${c.names.map(charName).join(", ")}` : "",
        c.controlling_side !== null ? ` · controlled by “${c.sides[c.controlling_side].label}”` : ""),
      el("div", { class: "sides" }, c.sides.map((s) => el("div", {
        class: "side" + (c.controlling_side === s.index ? " controlling" : ""),
      },
      el("h4", {}, s.label, el("span", { class: "total", "aria-label": `total ${s.total}` }, ` ${s.total}`)),
      el("p", { class: "meta" },
        s.claimed_by ? `claimed by ${player(s.claimed_by)}` : "unclaimed",
        s.allies.length ? ` · allies: ${s.allies.map(charName).join(", ")}` : ""),
      el("div", { class: "dice" }, s.dice.map((d) => el("span", {
        class: "die", role: "img",
        "aria-label": `die ${d.id} showing ${d.value}${d.controller ? ", controlled by " + player(d.controller) : ""}${d.staked ? `, ${d.staked} Debt staked` : ""}`,
        title: `die ${d.id}`,
      }, String(d.value), d.staked ? el("sub", {}, `+${d.staked}`) : "")))))));
  }

  function renderLedgers() {
    const ledgers = S.past ? S.past.ledgers : S.ledgers;
    $("ledgers").replaceChildren(...ledgers.map((l) => el("article", {
      class: "ledger" + (l.seat === S.me.seat ? " mine" : ""), dataset: { seat: l.seat },
    },
    el("h3", {}, `${l.name}`, l.seat === S.me.seat ? " (you)" : "", el("span", { class: "meta" }, ` seat ${l.seat}`)),
    el("p", {}, el("span", { class: "tokens" }, `${l.tokens} Story Token${l.tokens === 1 ? "" : "s"}`),
      " · Inspirations: ", l.inspirations.length
        ? l.inspirations.map((i) => `#${i.id} (${i.value})`).join(", ") : "none"),
    l.characters.map((ch) => el("div", { class: "character" },
      el("strong", {}, ch.name),
      el("table", { class: "drives" },
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Drive"), el("th", { scope: "col" }, "Strength"), el("th", { scope: "col" }, "Debt"))),
        el("tbody", {}, ch.drives.map((d) => el("tr", { class: d.overdrawn ? "overdrawn" : "" },
          el("th", { scope: "row" }, d.name + (d.overdrawn ? " (overdrawn)" : "")),
          el("td", {}, String(d.strength)), el("td", {}, String(d.debt)))))),
      ch.staked.length ? el("p", { class: "meta" }, "Staked: " + ch.staked.map((s) => `${s.amount} ${s.drive} on #${s.conflict} die ${s.die}`).join(", ")) : "",
      ch.blocked.length ? el("p", { class: "meta" }, "Blocked: " + ch.blocked.join(", ")) : "")))));
  }

  function renderCharacters() {
    $("characters").replaceChildren(...S.characters.map((ch) => el("details", { class: "sheet" },
      el("summary", {}, `${ch.name} — ${player(ch.created_by)}’s, ${ch.method}`),
      el("ul", { class: "abilities" }, ch.abilities.map((a) => el("li", {},
        `${a.name}: ${a.category} ${a.rating}${a.super ? " (super)" : ""}`))),
      ch.exemplars.length ? el("p", { class: "meta" }, "Exemplars: " +
        ch.exemplars.map((x) => `${charName(x.other)} (${x.drive})`).join(", ")) : "")));
    const mine = S.characters.filter((c) => c.created_by === S.me.seat);
    const ex = $("exemplar-form");
    const fill = (select, items) => {
      const before = select.value;
      select.replaceChildren(...items.map(([v, label]) => el("option", { value: v }, label)));
      if ([...select.options].some((o) => o.value === before)) select.value = before;
    };
    fill(ex.elements.character, mine.map((c) => [c.id, c.name]));
    fill(ex.elements.exemplar, S.characters.map((c) => [c.id, c.name]));
    fill(ex.elements.drive, DRIVES.map((d) => [d, d]));
    $("link-exemplar").hidden = S.me.seat === null;
    $("new-character").hidden = S.me.seat === null;
  }

  function isReverted(position) {
    return S.record && S.record.reverted.some(([a, b]) => a <= position && position <= b);
  }

  function renderLog() {
    const log = $("log");
    const items = [];
    // The last LOG_SHOWN moves (the export holds them all): a long campaign stays quick.
    const all = [...S.commands];
    if (all.length > LOG_SHOWN) {
      items.push(el("li", { class: "record" }, `${all.length - LOG_SHOWN} earlier moves not shown: see the export`));
    }
    for (const [first, events] of all.slice(-LOG_SHOWN)) {
      const head = events[0];
      const game = events.filter((e) => !RECORD_EVENTS.has(e.type));
      const types = events.map((e) => human(e.type));
      const narration = events.map((e) => e.narration).filter(Boolean).join(" ");
      items.push(el("li", {
        class: (isReverted(first) ? "reverted " : "") + (game.length ? "" : "record"),
        dataset: { position: first, last: events[events.length - 1].position },
      },
      el("span", { class: "pos" }, `#${first}`), " ",
      el("span", { class: "by" }, head.seat ? player(head.seat) : "table"), " · ",
      el("span", { class: "what" }, types.join(", ")),
      narration ? el("q", { class: "narration" }, narration) : "",
      isReverted(first) ? el("span", { class: "meta" }, " (reverted)") : ""));
    }
    const atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 30;
    log.replaceChildren(...items);
    if (atEnd) log.scrollTop = log.scrollHeight;
  }

  function renderRecord() {
    const r = S.record;
    const box = $("record-actions");
    box.replaceChildren();
    if (r && r.may_undo !== null && r.may_undo === S.me.seat && !r.dispute && !S.past) {
      box.append(el("button", { type: "button", id: "undo", onclick: () => send({ type: "undo" }) },
        "Undo my last move"));
    }
    renderDispute();
    const slider = $("slider");
    const follow = slider.dataset.moved !== "1";
    slider.max = String(Math.max(1, S.version));
    if (follow) slider.value = slider.max;
    $("slider-out").textContent = `${slider.value} of ${slider.max}`;
  }

  function renderDispute() {
    const r = S.record;
    const box = $("dispute");
    box.replaceChildren();
    if (!r || S.past) return;
    const d = r.dispute;
    if (d) {
      const ayes = Object.values(d.votes).filter(Boolean).length;
      const noes = Object.values(d.votes).length - ayes;
      box.append(el("div", { class: "open-dispute", role: "status" },
        el("p", {}, el("strong", {}, `Dispute #${d.id}`), ` by ${player(d.seat)} about event #${d.position}`,
          d.actor ? ` (${player(d.actor)}’s move)` : "", `: “${d.reason}”`),
        el("p", { class: "meta" }, `${ayes} to uphold, ${noes} against; ${d.needed} needed to uphold. Voters: ${d.voters.map(player).join(", ")}.`)));
      if (S.me.seat !== null && d.voters.includes(S.me.seat) && !(String(S.me.seat) in d.votes)) {
        box.append(el("div", { class: "row" },
          el("button", { type: "button", onclick: () => send({ type: "vote", uphold: true }) }, "Vote to uphold (rewind)"),
          el("button", { type: "button", class: "secondary", onclick: () => send({ type: "vote", uphold: false }) }, "Vote against")));
      }
      if (S.me.seat === d.seat) {
        box.append(el("button", { type: "button", class: "secondary", onclick: () => send({ type: "withdraw_dispute" }) }, "Withdraw the dispute"));
      }
      if (S.me.owner && r.options.owner_settles) {
        box.append(el("div", { class: "row" },
          el("button", { type: "button", onclick: () => settle(true) }, "Uphold (owner)"),
          el("button", { type: "button", class: "secondary", onclick: () => settle(false) }, "Reject (owner)")));
      }
      return;
    }
    if (S.me.seat === null) return;
    const moves = [...S.commands.entries()].filter(([first, evs]) =>
      evs.some((e) => !RECORD_EVENTS.has(e.type)) && evs[0].seat && !isReverted(first)).slice(-30).reverse();
    if (!moves.length) return;
    const form = el("form", { id: "dispute-form", class: "stack" },
      el("label", { for: "dispute-move" }, "Dispute a move"),
      el("select", { id: "dispute-move", name: "position" }, moves.map(([first, evs]) =>
        el("option", { value: first }, `#${first} ${player(evs[0].seat)}: ${evs.map((e) => human(e.type)).join(", ")}`))),
      el("label", { for: "dispute-reason" }, "Why"),
      el("input", { id: "dispute-reason", name: "reason", maxlength: 1000, autocomplete: "off" }),
      el("div", { class: "row" },
        el("button", { type: "button", id: "dispute-preview", class: "secondary", onclick: () => preview(form) }, "Preview without it"),
        el("button", { type: "submit" }, "Open the dispute")),
      el("div", { id: "preview" }));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const reason = form.elements.reason.value.trim();
      if (!reason) { $("record-error").textContent = "Say why you dispute it."; return; }
      $("record-error").textContent = "";
      send({ type: "open_dispute", position: Number(form.elements.position.value), reason });
    });
    box.append(form);
  }

  async function preview(form) {
    try {
      const p = await call("GET", `/disputes/preview?position=${Number(form.elements.position.value)}`);
      const b = p.board;
      $("preview").replaceChildren(el("div", { class: "preview", role: "status" },
        el("p", {}, `Upheld, the game goes back to just before event #${p.first}: `,
          `${p.reverted.length} event${p.reverted.length === 1 ? "" : "s"} undone (`,
          p.reverted.map((e) => human(e.type)).join(", "), ").",),
        el("p", { class: "meta" }, b.scene ? `Scene ${b.scene}, page ${b.page || "–"}, ${human(b.phase || "between pages")}` : "Between scenes",
          `; waiting for ${Object.keys(b.waiting_for).map((s) => player(Number(s))).join(", ") || "nobody"}.`)));
    } catch (err) {
      $("record-error").textContent = problemText(err);
    }
  }

  async function settle(uphold) {
    try { await call("POST", "/disputes/settle", { uphold }); } catch (err) { $("record-error").textContent = problemText(err); }
  }

  function renderOwner() {
    $("owner").hidden = !S.me.owner;
    if (!S.me.owner) return;
    const links = JSON.parse(localStorage.getItem(`capes:links:${ID}`) || "{}");
    $("seats").replaceChildren(...S.board.players.map((name, i) => {
      const seat = i + 1;
      const id = `link-${seat}`;
      return el("li", { class: "seat", dataset: { seat } },
        el("label", { for: id }, `${name}’s invitation link (seat ${seat})`),
        el("div", { class: "row" },
          el("input", { id, readonly: true, value: links[seat] || "", placeholder: "(not in this browser: issue a new link)", class: "link" }),
          el("button", { type: "button", class: "secondary", onclick: () => copy(id) }, "Copy"),
          el("button", { type: "button", class: "secondary", onclick: () => newLink(seat) }, "New link")));
    }));
  }

  function saveLink(seat, token) {
    const links = JSON.parse(localStorage.getItem(`capes:links:${ID}`) || "{}");
    links[seat] = `${location.origin}/play/${ID}#token=${token}`;
    localStorage.setItem(`capes:links:${ID}`, JSON.stringify(links));
  }

  async function newLink(seat) {
    try {
      const issued = await call("POST", `/seats/${seat}/token`);
      saveLink(seat, issued.token);
      renderOwner();
    } catch (err) { $("invite-error").textContent = problemText(err); }
  }

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
      const taken = await call("POST", "/seats", { name });
      saveLink(taken.seat, taken.token);
      $("invite-name").value = "";
      // The seat shows with its link when the stream brings the new board.
    } catch (err) { $("invite-error").textContent = problemText(err); }
  });

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

  // -- live ---------------------------------------------------------------------------------

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
        render();
        if (!S.again) document.body.dataset.version = String(v);
      } while (S.again);
    } catch (err) {
      // Unreachable (the server restarting): the stream's next board message refreshes again.
      if (err instanceof Capes.Problem) {
        $("fatal").hidden = false;
        $("fatal").textContent = problemText(err);
      }
    } finally {
      S.refreshing = false;
    }
  }

  function listen() {
    const source = new EventSource(`${BASE}/events/stream?after=0&plain=true&board=true`);
    let dropped = false;
    source.onopen = () => {
      $("live").textContent = "live";
      $("live").className = "live on";
      if (dropped) document.body.dataset.reconnected = "1";
    };
    // The browser reconnects by itself, sending Last-Event-ID: the stream resumes after it.
    source.onerror = () => {
      dropped = true;
      $("live").textContent = "reconnecting…";
      $("live").className = "live off";
    };
    source.onmessage = (message) => {
      const data = JSON.parse(message.data);
      if (data.type === "board") {
        S.board = data.board;
        S.version = data.version;
        refresh();
        return;
      }
      const list = S.commands.get(data.command) || [];
      if (!list.some((e) => e.position === data.position)) list.push(data);
      S.commands.set(data.command, list);
    };
  }

  // -- the record: time slider, fork, verify --------------------------------------------------

  let sliderTimer = null;
  $("slider").addEventListener("input", () => {
    const slider = $("slider");
    slider.dataset.moved = slider.value === slider.max ? "" : "1";
    $("slider-out").textContent = `${slider.value} of ${slider.max}`;
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

  $("fork-here").addEventListener("click", async () => {
    try {
      const forked = await call("POST", "/forks", { version: S.past.version });
      const url = `/play/${forked.campaign_id}#token=${forked.owner_token}`;
      Capes.remember({ id: forked.campaign_id, name: `${S.board.name} (fork)`, role: "owner", token: forked.owner_token });
      $("fork-result").replaceChildren(el("a", { href: url, target: "_blank", rel: "noreferrer noopener", id: "fork-link" },
        `Open the fork (from event #${forked.version}) as its owner`));
    } catch (err) { $("record-error").textContent = problemText(err); }
  });

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

  // -- characters -----------------------------------------------------------------------------

  const chForm = $("character-form");
  $("ch-drive-inputs").append(...DRIVES.map((d) => el("label", { class: "drive" }, d,
    el("input", { type: "number", name: `drive-${d}`, min: 0, max: 5, "aria-label": `${d} strength` }))));
  chForm.addEventListener("change", (ev) => {
    if (ev.target.name === "method") {
      for (const part of chForm.querySelectorAll("[data-method]")) part.hidden = part.dataset.method !== ev.target.value;
    }
    if (ev.target.name === "undifferentiated") {
      for (const i of $("ch-drive-inputs").querySelectorAll("input")) i.disabled = ev.target.checked;
    }
  });
  const list = (text) => text.split(",").map((x) => x.trim()).filter(Boolean);

  function fieldError(name, text) {
    const box = chForm.querySelector(`[data-for="${name}"]`);
    box.textContent = text;
    const input = chForm.querySelector(`[name="${name}"], [name="${name}_name"]`) || chForm.querySelector(`[name="${name}_abilities"]`);
    if (input) { input.setAttribute("aria-invalid", "true"); input.setAttribute("aria-describedby", box.id || ""); }
  }

  function buildOf(f) {
    if (f.get("method") === "freeform") {
      const abilities = [];
      for (const [n, line] of f.get("abilities").split("\n").entries()) {
        if (!line.trim()) continue;
        const [name, category, rating, sup] = line.split(",").map((x) => x.trim());
        if (!name || !category || !rating) throw ["abilities", `line ${n + 1}: write name, category, rating`];
        abilities.push({ name, category: category.toLowerCase(), rating: Number(rating), super: /super/i.test(sup || "") });
      }
      return { method: "freeform", abilities };
    }
    const ratings = {};
    for (const line of f.get("ratings").split("\n")) {
      if (!line.trim()) continue;
      const [name, rating] = line.split("=").map((x) => x.trim());
      ratings[name] = Number(rating);
    }
    return {
      method: "click_and_lock", set_kind: f.get("set_kind"),
      set: { name: f.get("set_name") || "Set", abilities: list(f.get("set_abilities")), styles: list(f.get("set_styles")) },
      persona: { name: f.get("persona_name") || "Persona", abilities: list(f.get("persona_abilities")), styles: list(f.get("persona_styles")) },
      crossed_out: list(f.get("crossed_out")), ratings,
    };
  }

  /* Which field a refusal is about: a 400's error key, else the rule's area. */
  function faultOf(err, method) {
    const p = err.problem || {};
    const key = JSON.stringify(p.errors || "");
    const text = (err.message || "") + key;
    if (p.rule === "R-X-CHAR-1" || /\.name"/.test(key) && !/build/.test(key)) return "name";
    if (p.rule === "R-CHAR-5" || /drives/.test(key)) return "drives";
    if (method === "click_and_lock") {
      if (/cross/i.test(text)) return "crossed_out";
      if (/Persona|persona/.test(text)) return "persona";
      if (/Set|\.set/.test(text)) return "set";
      return "ratings";
    }
    if (/^R-CHAR-/.test(p.rule || "") || /build|abilit/.test(key)) return "abilities";
    return "form";
  }

  chForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    for (const e of chForm.querySelectorAll(".field-error")) e.textContent = "";
    for (const e of chForm.querySelectorAll("[aria-invalid]")) e.removeAttribute("aria-invalid");
    const f = new FormData(chForm);
    const method = f.get("method");
    let command;
    try {
      command = { type: "create_character", name: f.get("name").trim(), build: buildOf(f) };
      if (!command.name) throw ["name", "Give the character a name."];
    } catch (e) {
      if (Array.isArray(e)) { fieldError(e[0], e[1]); return; }
      throw e;
    }
    if (!f.get("undifferentiated")) {
      command.drives = Object.fromEntries(DRIVES.map((d) => [d, Number(f.get(`drive-${d}`) || 0)]).filter(([, n]) => n > 0));
    }
    try {
      const done = await call("POST", "/commands", { command, narration: $("narration").value });
      document.body.dataset.applied = done.version;
      $("narration").value = "";
      chForm.reset();
      for (const part of chForm.querySelectorAll("[data-method]")) part.hidden = part.dataset.method !== "freeform";
      for (const i of $("ch-drive-inputs").querySelectorAll("input")) i.disabled = false;
      $("new-character").open = false;
    } catch (err) {
      fieldError(faultOf(err, method), problemText(err));
    }
  });

  $("exemplar-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = ev.target.elements;
    $("exemplar-error").textContent = "";
    try {
      const done = await call("POST", "/commands", { command: { type: "link_exemplar", character: Number(f.character.value), exemplar: Number(f.exemplar.value), drive: f.drive.value }, narration: $("narration").value });
      document.body.dataset.applied = done.version;
      $("narration").value = "";
    } catch (err) { $("exemplar-error").textContent = problemText(err); }
  });

  // -- start ----------------------------------------------------------------------------------

  /* The first load, tried again while the server cannot be reached (it may be restarting). */
  async function start() {
    for (let wait = 500; ; wait = Math.min(wait * 2, 5000)) {
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
      $("fatal").textContent = err.status === 401
        ? "This link no longer works (a new one was issued, or it is not this campaign’s). Ask the owner for a new one."
        : problemText(err);
      return;
    }
    $("who").textContent = S.me.owner ? "You are the owner" : `You are seat ${S.me.seat}`;
    $("export").href = `${BASE}/export`;
    const summary = await call("GET", "");
    Capes.remember({ id: ID, name: summary.name, role: S.me.owner ? "owner" : `seat ${S.me.seat}`, token: TOKEN });
    S.board = await call("GET", "/board");
    if (S.board.edition && S.board.edition !== "capes") {
      // The page knows the moves of the edition ``capes``; the second edition's are not here yet.
      $("fatal").hidden = false;
      $("fatal").textContent = `This page plays campaigns of the edition “capes”; this one is “${S.board.edition}”: play it over the HTTP API (see the docs at /schema).`;
      $("live").textContent = "";
      return;
    }
    S.version = summary.version;
    await refresh();
    if (!S.me.owner) $("who").textContent = `You are ${player(S.me.seat)} (seat ${S.me.seat})`;
    listen();
  }
  start();
})();
