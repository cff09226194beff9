/* Edition ``capes`` at the table: its moves and their fields, board, ledgers, sheets and
   character forms, for table.js; it holds no rule either. */
"use strict";
Capes.editions.capes = (T) => {
  const { S, $, el, postCommand, player, charName, human, myLedger, die, anyOf, tokens, back } = T;
  const DRIVES = ["Justice", "Truth", "Love", "Hope", "Duty",
    "Obsession", "Pride", "Power", "Despair", "Fear"];
  const conflictOf = (id) => (S.board.conflicts || []).find((c) => c.id === Number(id));
  const myCharacters = () => S.characters.filter((c) =>
    S.board && Object.keys(S.board.cast).length
      ? S.board.cast[c.id] === S.me.seat : c.created_by === S.me.seat);
  const turnCharacter = () => S.board && S.board.turn
    ? T.character(S.board.turn.character) : myCharacters()[0];


  /* Each legal move's button and fields. Choices the rules may ask for (a Drive, an ally,
     pairs, Story Tokens…) are left to the picker (the 422's ``choices``). */
  const CONFLICT = ["conflict", "conflict", "Conflict"];
  const DIE = ["die", "die", "Die"];
  const DRIVE = ["drive", "drive", "Drive taking the Debt (super abilities)"];
  const MOVES = {
    frame_scene: ["Frame the scene", [["text", "text", "The scene"]]],
    pass_framing: ["Pass framing", []],
    choose_character: ["Choose a character", [["character", "free-character", "Character"]]],
    create_conflict: ["Create a conflict", [["kind", "kind", "Kind"],
      ["text", "text", "What is at stake"], ["side0", "text", "First side", "For"],
      ["side1", "text", "Second side", "Against"], ["names", "names", "Names (a Goal)"],
      ["free_for", "free-pair", "Paid with"]]],
    claim: ["Claim a side", [["conflict", "claimable", "Conflict"], ["side", "claimable-side", "Side"]]],
    pass_claiming: ["Pass (claiming)", []],
    start_turn: ["Start a turn", [["character", "my-character", "Character"]]],
    end_free_play: ["End free play", []],
    roll_overdrawn: ["Roll for an Overdrawn Drive", [["character", "my-character", "Character"],
      ["drive", "drive", "Drive"]]],
    pass_turn: ["Pass the turn", []],
    roll_die: ["Roll a die", [["ability", "ability", "Ability"],
      CONFLICT, DIE, DRIVE]],
    raise_inspiration: ["Raise an Inspiration", [["ability", "ability", "Ability"],
      ["inspiration", "inspiration", "Inspiration"],
      DRIVE]],
    accept_roll: ["Accept the roll", []],
    reject_roll: ["Reject the roll", []],
    react: ["React", [["character", "my-character", "Character"],
      ["ability", "ability", "Ability"],
      DRIVE]],
    pass_reaction: ["Pass (no reaction)", []],
    narrate: ["Narrate", [["text", "text", "What happens"],
      ["and_then", "bool", "This completes the “And Then”", true]]],
    stake_debt: ["Stake Debt", [CONFLICT, DIE,
      ["amount", "count", "Debt", 1]]],
    split_die: ["Split a die", [CONFLICT, DIE,
      ["into", "count", "Into how many dice", 2]]],
    schism: ["Schism", [["conflict", "schism-conflict", "Conflict"], ["side", "schism-side", "Side it leaves"],
      ["split_uncontrolled", "split-free", "Split its uncontrolled die first"],
      ["dice", "dice", "Dice it takes"], ["label", "text", "New side's name", "New side"]]],
    spend_inspiration: ["Spend an Inspiration", [["inspiration", "inspiration", "Inspiration"],
      CONFLICT, DIE]],
    end_turn: ["End the turn", []],
    resolve: ["Resolve", [["conflict", "resolving", "Conflict"]]],
    gloat: ["Gloat", [["conflict", "resolving", "Conflict"], ["times", "count", "Times", 1]]],
    declare_deadlock: ["Declare a deadlock", [["conflict", "deadlockable", "Conflict"]]],
    end_page: ["End the page", []],
    veto: ["Veto a conflict", [["conflict", "vetoable", "Conflict"]]],
  };

  /* The die players may React to (R-REACT-1), as [conflict, die, value], or null. */
  function reactionDie(b = S.board) {
    const at = b.turn && b.turn.reacting_to;
    const c = at && b.conflicts.find((x) => x.id === at[0]);
    const d = c && c.sides.flatMap((s) => s.dice).find((x) => x.id === at[1]);
    return d ? [c.id, d.id, d.value] : null;
  }

  /* Conflicts as a select offers them; those of the board whose ids are among ``ids``. */
  const choices = (list) => list.map((x) => [x.id, `#${x.id} ${x.text}`]);
  const listed = (b, ids) => choices(b.conflicts.filter((x) => ids.includes(x.id)));

  function options(kind, form) {
    const b = S.board;
    const conflictId = form && form.elements.conflict ? form.elements.conflict.value : null;
    const c = conflictId ? conflictOf(conflictId) : (b.conflicts || [])[0];
    const side = c && form && form.elements.side ? c.sides[Number(form.elements.side.value)] : null;
    // The character a Drive or an ability is of: the form's, else the turn's.
    const who = form && form.elements.character
      ? T.character(form.elements.character.value) : turnCharacter();
    switch (kind) {
      case "conflict":
        return choices(b.conflicts);
      case "resolving": {
        // The one Conflict the resolution waits on (R-PAGE-7, R-RES-1).
        const x = b.resolving === undefined || b.resolving === null ? null : conflictOf(b.resolving);
        return choices(x ? [x] : []);
      }
      // A Schism's Conflict, side and dice, and whether it splits the uncontrolled die first,
      // as the board offers them: the engine's checks (R-SCHISM-1, R-SPLIT-1, R-STAKE-2).
      case "schism-conflict":
        return listed(b, Object.keys(b.schism_sides || {}).map(Number));
      case "schism-side":
        return c ? ((b.schism_sides || {})[c.id] || []).map((i) => [i, c.sides[i].label]) : [];
      case "dice": {
        const ids = (b.schism_dice || {})[c && c.id] || [];
        return side ? side.dice.filter((d) => ids.includes(d.id)).map((d) => [d.id,
          `die ${d.id}: ${d.value}, controlled by ${charName(d.controller)}`]) : [];
      }
      case "split-free": {
        // Into 2..its value (n-1 Debt); the Debt's Drive is asked for by a picker.
        const d = side && ((b.schism_splits || {})[c.id] || []).includes(side.index)
          && side.dice.find((x) => x.controller === null);
        return d ? [["", "no"], ...Array.from({ length: d.value - 1 },
          (_, i) => [i + 2, `into ${i + 2} (${i + 1} Debt)`])] : [];
      }
      case "claimable": {
        // The sides this seat may claim (R-PAGE-4).
        return listed(b, ((b.claimable || {})[S.me.seat] || []).map(([x]) => x));
      }
      case "deadlockable":
        // Those the board says may be declared Deadlocked (R-DEAD-1, R-X-DEAD-2).
        return listed(b, b.deadlockable || []);
      case "claimable-side": {
        const sides = ((b.claimable || {})[S.me.seat] || []).filter(([x]) => c && x === c.id);
        return sides.map(([, i]) => [i, c.sides[i].label]);
      }
      case "free-pair": {
        // R-CHAR-6, R-PAGE-3: a Conflict added while claiming costs a Story Token, unless it
        // is the Free Conflict of an Exemplar pair in the scene.
        if (b.phase !== "claiming") return [];
        const pairs = (b.free_conflicts || {})[S.me.seat] || [];
        return [...pairs.map(([x, y]) => [`${x},${y}`, `the Free Conflict of ${charName(x)} and ${charName(y)}`]),
          ["", "1 Story Token"]];
      }
      case "vetoable":
        // Those this seat may veto (R-CONF-3: a Goal, only the players of its characters).
        return vetoers(b).filter(([, seats]) => seats.includes(S.me.seat))
          .map(([id]) => [id, `#${id} ${(conflictOf(id) || {}).text || ""}`]);
      case "side":
        return c ? c.sides.map((s) => [s.index, s.label]) : [];
      case "die":
        return c ? c.sides.flatMap((s) => s.dice.map((d) =>
          [d.id, `die ${d.id}: ${d.value || "–"} (${s.label})`])) : [];
      case "free-character":
        return S.characters.filter((x) => !(x.id in b.cast)).map((x) => [x.id, x.name]);
      case "my-character":
        return myCharacters().map((x) => [x.id, x.name]);
      case "drive":
        return T.driveChoices(who);
      case "ability": {
        // A Reaction's ability is rated at least the die's value (R-REACT-1): others shown, not offered.
        const to = form && form.dataset.move === "react" ? reactionDie() : null;
        return who ? who.abilities.map((a) => [a.name,
          `${a.name} (${a.category} ${a.rating}${a.super ? ", super" : ""})`,
          (who.blocked || []).includes(a.name)
            || (to && a.rating < to[2] ? `rated below the die’s ${to[2]}` : false)]) : [];
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


  /* A move's name where it costs a Story Token now: a turn in the bought round (R-PAGE-6), a
     further character (R-SCENE-2), a further Claim of the page (R-PAGE-3). */
  function label(type, seat, b) {
    if (type === "start_turn" && b.round === "bought") return "Buy a turn (1 Story Token)";
    if (type === "claim" && (b.free_claims_used || []).includes(seat)) return "Claim a side (1 Story Token)";
    if (type === "choose_character" && Object.values(b.cast).includes(seat)) {
      return "Choose another character (1 Story Token)";
    }
    return undefined;
  }

  /* The log's words for an event: who, which character, Conflict, die and value, Drive,
     Story Tokens and Debt. A template's {field} is the event's, named as FIELD says; an event
     with nothing but its name keeps it ("Campaign closed"). */
  const dieOf = (e) => `die ${e.die} of #${e.conflict}`;
  /* A Conflict as the log names it (#1 “The bridge collapses”): as created, from the log
     (one resolved is on no board), as it was when the entry happened (an undo gives its
     number to the next one made); in a fork, those made before it as its first event has
     them (R-REC-6; one resolved in the fork said "#2 resolved: side 0 won"). */
  const made = T.madeInLog((e, type) => (type === "ConflictCreated" ? [[e.conflict, e]]
    : type === "CampaignForked" ? Object.values(e.state.conflicts)
      .map((c) => [c.id, { text: c.text, sides: c.sides.map((s) => s.label) }]) : []));
  const titled = (id) => { const t = made(id)?.text || conflictOf(id)?.text; return t ? `#${id} “${t}”` : `#${id}`; };
  // An original side by the label it was created with (a Schism's may move down, R-SCHISM-1).
  const sideName = (e) => {
    const l = made(e.conflict)?.sides[e.side] || conflictOf(e.conflict)?.sides[e.side]?.label;
    return l ? `“${l}”` : `side ${e.side}`;
  };
  const FIELD = {
    seat: player, to: player, framer: player, creator: player, next_framer: player,
    character: charName, exemplar: charName, conflict: (v) => `#${v}`, die: (v) => `die ${v}`,
    cost: (v) => (v ? ` for ${tokens(v)}` : ""), side: (v, e) => sideName(e),
    seats: (v) => v.map(player).join(" or "), order: (v) => v.map(player).join(", "),
    dice: (v) => `dice ${v.join(", ")}`,
  };
  // R-RES-2, R-RES-4, R-DEAD-1: the Debt back to its Drives and the Inspirations made.
  const ended = (e) => e.inspirations.map((i) => `; Inspiration #${i.inspiration} (${i.value}) to ${player(i.seat)}`).join("")
    + (e.debt_returned.length ? `; Debt back: ${back(e.debt_returned)}` : "");
  const EVENT_TEXT = {
    CharacterCreated: "{name} created ({method})",
    ExemplarLinked: "{exemplar} linked as Exemplar of {character} ({drive})",
    ExemplarRequested: "{seat} asked to link {exemplar} as Exemplar of {character} ({drive})",
    CharacterEdited: "{name} edited ({method})",
    FramingPassed: "{seat} passed framing to {to}",
    SceneFramed: (e) => `Scene ${e.scene} framed by ${player(e.framer)}${e.text ? `: “${e.text}”` : ""}`,
    CharacterChosen: "{seat} chose {character}{cost}",
    SceneEnded: "Scene {scene} ended ({next_framer} frames next)",
    PageStarted: (e) => `Page ${e.page} started by ${player(e.starter)}`
      + (e.overdrawn.length ? ` (Overdrawn: ${e.overdrawn.map((o) => `${o.drive} of ${charName(o.character)}`).join(", ")})` : ""),
    OverdrawnDieRolled: (e) => `Overdrawn ${e.drive} of ${charName(e.character)}: ${dieOf(e)}: ${T.overdrawn(e)}`,
    PhaseBegan: (e) => `Phase: ${human(e.phase)}${e.seat ? ` (${player(e.seat)} first)` : ""}`,
    ClaimTurnPassed: (e) => `${player(e.seat)} passed to ${player(e.to)}${e.idle ? " (idle)" : ""}`,
    ClaimMade: "{seat} claimed {side} of {conflict}{cost}",
    PageEnded: "Page {page} ended",
    ConflictCreated: (e) => `${human(e.kind)} #${e.conflict} “${e.text}” created (${e.sides.join(" / ")}`
      + `${e.names.length ? `; names ${e.names.map(charName).join(", ")}` : ""})`
      + (e.free_for ? ` as the Free Conflict of ${e.free_for.map(charName).join(" and ")}` : FIELD.cost(e.cost)),
    ConflictVetoed: (e) => `${player(e.seat)} vetoed ${titled(e.conflict)}`,
    CharacterAllied: "{character} allied with {side} of {conflict}",
    TurnStarted: "{seat}’s turn with {character}{cost}",
    TurnEnded: "{seat}’s turn ended",
    // R-STAKE-4: no Ability used, the turn's stakes go back.
    ProvisionalStakesReturned: (e) => `Stakes back: ${back(e.returned)}`,
    TurnPassed: "{seat} passed the turn to {to}",
    AbilityUsed: (e) => `${charName(e.character)} used ${e.ability} (${e.rating})${e.reaction ? " to React" : ""}`,
    DebtGained: "{character} gained {amount} Debt on {drive}",
    AbilityBlocked: "{ability} of {character} blocked",
    DieRolled: "Rolled {die} of {conflict}: {before} → {rolled}",
    RollAccepted: "Kept {value} on {die} of {conflict}",
    RollRejected: "Rejected the roll: {die} of {conflict} back to {value}",
    ReactionsOpened: "Reactions to {die} of {conflict} opened ({order})",
    ReactionPassed: "{seat} did not react",
    ReactionsClosed: "Reactions to {die} of {conflict} closed",
    AndThenRequired: "“And Then” for {side} of {conflict} by {seats}",
    Narrated: (e) => `${player(e.seat)} narrated${e.and_then ? " the “And Then”" : ""}`,
    DebtStaked: "{character} staked {amount} {drive} Debt under {die} of {conflict}",
    DieSplit: (e) => `${charName(e.character)} split ${dieOf(e)} into `
      + [[e.die, e.value], ...e.new_dice].map(([d, v]) => `die ${d} (${v})`).join(" + "),
    SideSchismed: "{character} split “{label}” off {side} of {conflict} with {dice}",
    InspirationRaised: "{seat} raised Inspiration #{inspiration} to {value}",
    InspirationSpent: "{seat} spent Inspiration #{inspiration} on {die} of {conflict}: {before} → {value}",
    ConflictResolved: (e) => `${titled(e.conflict)} resolved: ${sideName(e)} won`
      + (e.goal_failed_by.length ? `; Goal failed for ${e.goal_failed_by.map(charName).join(", ")}` : "")
      + e.tokens.map((g) => `; ${player(g.giver)} gave ${player(g.recipient)} ${tokens(g.count)}`).join("")
      + (e.debt_spent.length ? `; Debt spent: ${back(e.debt_spent, "of")}` : "") + ended(e),
    Gloated: (e) => `Gloated on #${e.conflict} for ${tokens(e.tokens)}`,
    ConflictDeadlocked: (e) => `${titled(e.conflict)} deadlocked${ended(e)}`,
  };
  const eventText = (e) => {
    const t = EVENT_TEXT[e.type];
    return typeof t === "string" ? t.replace(/\{(\w+)\}/g, (_, k) => (FIELD[k] || String)(e[k], e)) : t?.(e);
  };

  /* A picker's question in a player's words (the server's is the API's). */
  const QUESTIONS = {
    tokens: "who gets the Story Tokens of the winning side’s Debt?",
    pairs: "how do the dice pair off for Inspirations? Each die is paired with a die of another side until every die is used.",
  };
  const question = (field) => QUESTIONS[field];

  /* A die of the command's Conflict as the board shows it: id, value and side. */
  function dieText(command, id) {
    const c = command && conflictOf(command.conflict);
    const side = c && c.sides.find((s) => s.dice.some((d) => d.id === id));
    const d = side && side.dice.find((x) => x.id === id);
    return d ? `die ${id} (${d.value}, “${side.label}”)` : `die ${id}`;
  }

  function choiceText(field, choice, command) {
    if (field === "tokens") {
      const gifts = Object.entries(choice).flatMap(([g, to]) => Object.entries(to).map(
        ([r, n]) => `${player(Number(g))} gives ${player(Number(r))} ${tokens(n)}`));
      return gifts.join("; ") || "no Story Tokens";
    }
    if (field === "pairs") return choice.map(([a, b]) => `${dieText(command, a)} with ${dieText(command, b)}`).join("; ");
    if (field.startsWith("inspirations.")) return player(Number(choice));
    if (field === "ally") {
      const roll = S.board.turn && S.board.turn.roll;
      const c = roll && conflictOf(roll[0]);
      const side = c && c.sides[choice];
      return side ? `Ally with “${side.label}”` : `side ${choice}`;
    }
    return undefined;
  }


  function board(b) {
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
      const to = reactionDie(b);
      if (to && !b.turn.roll) bits.push(`reactions to die ${to[1]} of conflict #${to[0]}, showing ${to[2]}`);
      if (b.turn && b.turn.and_then) bits.push(`“And Then” by ${b.turn.and_then.map(player).join(" or ")}`);
    } else {
      bits.push(`Between scenes (${b.scenes_played} played)`);
      if (b.next_framer) bits.push(`${player(b.next_framer)} frames next`);
    }
    const cast = Object.entries(b.cast).map(([ch, seat]) => `${charName(Number(ch))} (${player(seat)})`);
    // Shared Exemplars waiting for the other player's agreement (R-CHAR-6, R-X-CHAR-2).
    const asked = (b.exemplar_requests || []).map((r) => el("span", { class: "cast" },
      `${player(r.asked_by)} asks to link ${r.exemplar_name} as Exemplar of ${r.character_name} ` +
      `(${r.drive}): ` + (r.awaiting === null ? "can no longer be made"
        : r.awaiting === S.me.seat ? "your agreement is awaited (Link an Exemplar)"
          : `waiting for ${player(r.awaiting)}`)));
    return [[el("span", {}, bits.join(" · ")), cast.length ? el("span", { class: "cast" }, "Cast: " + cast.join(", ")) : "", ...asked],
      b.conflicts.map(conflictCard), "No conflicts on the table."];
  }

  function conflictCard(c) {
    return el("article", { class: "conflict", dataset: { conflict: c.id } },
      el("h3", {}, `#${c.id} ${c.kind === "goal" ? "Goal" : "Event"}: ${c.text}`),
      T.meta(`created by ${player(c.creator)}`,
        c.names.length ? ` · names ${c.names.map(charName).join(", ")}` : "",
        c.controlling_side !== null ? ` · controlled by “${c.sides[c.controlling_side].label}”` : ""),
      T.sides(c, (s) => ["", s.label,
        T.meta(
          s.claimed_by ? `claimed by ${player(s.claimed_by)}` : "unclaimed",
          s.allies.length ? ` · allies: ${s.allies.map(charName).join(", ")}` : ""),
        el("div", { class: "dice" }, s.dice.map((d) => die(d.id, d.value,
          `${d.controller ? ", controlled by " + charName(d.controller) : ""}${d.staked ? `, ${d.staked} Debt staked` : ""}`,
          d.staked ? `+${d.staked}` : "")))]));
  }

  const ledger = (l) => ["", [" · Inspirations: ", l.inspirations.length
    ? l.inspirations.map((i) => `#${i.id} (${i.value})`).join(", ") : "none"],
  l.characters.map((ch) => T.debts(ch, "",
    ch.staked.map((s) => `${s.amount} ${s.drive} on #${s.conflict} die ${s.die}`), ch.blocked))];

  const sheet = (ch) => [`${player(ch.created_by)}’s, ${ch.method}`, T.abilityList(ch.abilities, "category")];

  /* The Exemplar form's lists (the new character's are in the page). */
  function renderCharacters() {
    const ex = $("exemplar-form");
    const named = (list) => list.map((c) => [c.id, c.name]);
    T.setOptions(ex.elements.character, named(S.characters.filter((c) => c.created_by === S.me.seat)));
    T.setOptions(ex.elements.exemplar, named(S.characters));
    T.setOptions(ex.elements.drive, DRIVES.map((d) => [d, d]));
    $("link-exemplar").hidden = S.me.seat === null;
  }

  // -- characters --

  const chForm = $("character-form");
  $("ch-drive-inputs").append(...DRIVES.map((d) => el("label", { class: "drive" }, d,
    el("input", { type: "number", name: `drive-${d}`, min: 0, max: 5, "aria-label": `${d} strength` }))));
  /* The parts of the form for a build method; the Drives' strengths, off when undifferentiated. */
  const showMethod = (m) => { for (const part of chForm.querySelectorAll("[data-method]")) part.hidden = part.dataset.method !== m; };
  const drivesOff = (off) => { for (const i of $("ch-drive-inputs").querySelectorAll("input")) i.disabled = off; };
  chForm.addEventListener("change", (ev) => {
    if (ev.target.name === "method") showMethod(ev.target.value);
    if (ev.target.name === "undifferentiated") drivesOff(ev.target.checked);
  });
  const list = (text) => text.split(",").map((x) => x.trim()).filter(Boolean);

  /* A refusal at the field named ``name``: the Drives' at the first strength to fill in. */
  function fieldError(name, text) {
    const input = name === "drives"
      ? $("ch-drive-inputs").querySelector("input:not(:disabled)") || $("ch-undifferentiated")
      : chForm.querySelector(`[name="${name}"], [name="${name}_name"]`) || chForm.querySelector(`[name="${name}_abilities"]`);
    T.fieldError(chForm, name, text, input);
  }

  function buildOf(f) {
    if (f.get("method") === "freeform") return { method: "freeform", abilities: T.abilityLines(f.get("abilities"), "category") };
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
  function faultOf(err, f) {
    const method = f.get("method");
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

  T.characterForm(chForm, (f) => {
    const command = { type: "create_character", name: f.get("name").trim(), build: buildOf(f) };
    if (!command.name) throw ["name", "Give the character a name."];
    if (!f.get("undifferentiated")) {
      command.drives = Object.fromEntries(DRIVES.map((d) => [d, Number(f.get(`drive-${d}`) || 0)]).filter(([, n]) => n > 0));
    }
    return command;
  }, faultOf, fieldError, () => { showMethod("freeform"); drivesOff(false); });

  $("exemplar-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = ev.target.elements;
    $("exemplar-error").textContent = "";
    try {
      await postCommand({ type: "link_exemplar", character: Number(f.character.value), exemplar: Number(f.exemplar.value), drive: f.drive.value });
    } catch (err) { $("exemplar-error").textContent = T.problemText(err); }
  });


  /* The fields a move's form sends as text; the others are numbers. */
  const strings = new Set(["text", "ability", "kind", "drive"]);

  /* The fields of a Conflict's creation that make up one value. */
  function fill(command, name, kind, form) {
    if (name === "side0" || name === "side1") {
      command.sides = [form.elements.side0.value || "For", form.elements.side1.value || "Against"];
      return true;
    }
    if (name === "free_for") {
      const pair = form.elements.free_for.value;
      if (pair) command.free_for = pair.split(",").map(Number);
      return true;
    }
    return false;
  }

  function summary(b) {
    return b.scene ? `Scene ${b.scene}, page ${b.page || "–"}, ${human(b.phase || "between pages")}` : "Between scenes";
  }

  /* Table talk on its own: the ``narrate`` command. */
  const say = (text) => ({ type: "narrate", text });

  /* Moves any seat may make while the table waits for another (R-CONF-3, R-DEAD-1): never
     "your move" in the status. */
  const ASIDE = new Set(["veto", "declare_deadlock"]);

  /* Each Conflict that may be vetoed now, with the seats that may veto it (R-CONF-3); on an
     older board, those offered a veto. */
  const vetoers = (b) => b.vetoable.map((id) => [id, (b.vetoers || {})[id]
    || Object.keys(b.waiting_for).map(Number).filter((s) => b.waiting_for[s].includes("veto"))]);

  /* The status's words for an aside move: who may veto what, or declare which Conflicts
     Deadlocked (R-DEAD-1). */
  const aside = (type, seats, b) => (type === "veto" ? vetoers(b).map(([id, who]) =>
    `${anyOf(who)} may veto ${titled(id)} before the next turn starts.`).join(" ")
    : (b.deadlockable || []).length
      && `${anyOf(seats)} may declare ${b.deadlockable.map(titled).join(" or ")} deadlocked.`);

  return { TITLE: "Capes", MOVES, ASIDE, aside, options, strings, fill, choiceText, question, label, eventText, board, ledger, sheet, renderCharacters, summary, say };
};
