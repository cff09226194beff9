/* Edition ``capes`` at the table: its moves, the fields they need, its board (scene, page,
   phase, Conflicts with their sides and dice), ledgers, character sheets and character
   forms. The generic table (table.js) calls it; it holds no rule either. */
"use strict";
Capes.editions.capes = (T) => {
  const { S, $, el, redraw, postCommand, player, charName, human, myLedger, drivesTable, die, total, problemText, anyOf } = T;
  const DRIVES = ["Justice", "Truth", "Love", "Hope", "Duty",
    "Obsession", "Pride", "Power", "Despair", "Fear"];
  const conflictOf = (id) => (S.board.conflicts || []).find((c) => c.id === Number(id));
  const myCharacters = () => S.characters.filter((c) =>
    S.board && Object.keys(S.board.cast).length
      ? S.board.cast[c.id] === S.me.seat : c.created_by === S.me.seat);
  const turnCharacter = () => S.board && S.board.turn
    ? S.characters.find((c) => c.id === S.board.turn.character) : myCharacters()[0];


  /* Each legal move (a command type of ``waiting_for``): its button and the fields it needs.
     Choices the rules may ask for (a Drive, an ally, pairs, Story Tokens…) are left out: the
     server answers 422 with the legal ``choices`` and the page shows a picker. */
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
      ["split_uncontrolled", "split-free", "Split its uncontrolled die first"],
      ["dice", "dice", "Dice it takes"], ["label", "text", "New side's name", "New side"]]],
    spend_inspiration: ["Spend an Inspiration", [["inspiration", "inspiration", "Inspiration"],
      ["conflict", "conflict", "Conflict"], ["die", "die", "Die"]]],
    end_turn: ["End the turn", []],
    resolve: ["Resolve", [["conflict", "resolving", "Conflict"]]],
    gloat: ["Gloat", [["conflict", "resolving", "Conflict"], ["times", "count", "Times", 1]]],
    declare_deadlock: ["Declare a deadlock", [["conflict", "deadlockable", "Conflict"]]],
    end_page: ["End the page", []],
    veto: ["Veto a conflict", [["conflict", "vetoable", "Conflict"]]],
  };

  /* The die players may React to on board ``b`` (R-REACT-1), as [conflict, die, value], or
     null. */
  function reactionDie(b = S.board) {
    const at = b.turn && b.turn.reacting_to;
    const c = at && b.conflicts.find((x) => x.id === at[0]);
    const d = c && c.sides.flatMap((s) => s.dice).find((x) => x.id === at[1]);
    return d ? [c.id, d.id, d.value] : null;
  }

  /* The board's Conflicts whose ids are among ``ids``, as a select offers them. */
  const listed = (b, ids) => b.conflicts.filter((x) => ids.includes(x.id)).map((x) => [x.id, `#${x.id} ${x.text}`]);

  function options(kind, form) {
    const b = S.board;
    const conflictId = form && form.elements.conflict ? form.elements.conflict.value : null;
    const c = conflictId ? conflictOf(conflictId) : (b.conflicts || [])[0];
    const side = c && form && form.elements.side ? c.sides[Number(form.elements.side.value)] : null;
    switch (kind) {
      case "conflict":
        return b.conflicts.map((x) => [x.id, `#${x.id} ${x.text}`]);
      case "resolving": {
        // The one Conflict the resolution waits on (R-PAGE-7): every Conflict was offered,
        // the first by default, and resolving or gloating on another was refused (R-RES-1).
        const x = b.resolving === undefined || b.resolving === null ? null : conflictOf(b.resolving);
        return x ? [[x.id, `#${x.id} ${x.text}`]] : [];
      }
      case "dice": {
        // A Schism's dice: those of the side the board says it may take (R-SCHISM-1), named
        // as it shows them. Every die of the side was offered, and the uncontrolled refused.
        const ids = (b.schism_dice || {})[c && c.id] || [];
        return side ? side.dice.filter((d) => ids.includes(d.id)).map((d) => [d.id,
          `die ${d.id}: ${d.value}, controlled by ${charName(d.controller)}`]) : [];
      }
      case "split-free": {
        // R-SCHISM-1: the side's uncontrolled die may be split first (n-1 Debt, R-SPLIT-1)
        // and left behind; the form could not ask for it. The Debt's Drive is asked for
        // (a picker) when there is a choice.
        const d = side && side.dice.find((x) => x.controller === null);
        return d && d.value > 1 ? [["", "no"], ...Array.from({ length: d.value - 1 },
          (_, i) => [i + 2, `into ${i + 2} (${i + 1} Debt)`])] : [];
      }
      case "claimable": {
        // The sides this seat may claim (R-PAGE-4): every Conflict was offered, one created
        // this page first, and its claim was refused.
        return listed(b, ((b.claimable || {})[S.me.seat] || []).map(([x]) => x));
      }
      case "deadlockable":
        // Those the board says may be declared Deadlocked (R-DEAD-1, R-X-DEAD-2): every
        // Conflict was offered, and the others refused.
        return listed(b, b.deadlockable || []);
      case "claimable-side": {
        const sides = ((b.claimable || {})[S.me.seat] || []).filter(([x]) => c && x === c.id);
        return sides.map(([, i]) => [i, c.sides[i].label]);
      }
      case "free-pair": {
        // R-CHAR-6, R-PAGE-3: a Conflict added while claiming costs a Story Token, unless it
        // is the Free Conflict of an Exemplar pair in the scene; the page could not add one.
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
        // A Reaction rolls the die it is to, with an ability rated at least its value
        // (R-REACT-1): the others are shown, not offered.
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


  /* A move's name where it costs a Story Token now, which the page never said: a turn in the
     bought round (R-PAGE-6), a further character in the scene (R-SCENE-2), a further Claim of
     the page (R-PAGE-3). A Conflict added while claiming says so in its form (Paid with). */
  function label(type, seat, b) {
    if (type === "start_turn" && b.round === "bought") return "Buy a turn (1 Story Token)";
    if (type === "claim" && (b.free_claims_used || []).includes(seat)) return "Claim a side (1 Story Token)";
    if (type === "choose_character" && Object.values(b.cast).includes(seat)) {
      return "Choose another character (1 Story Token)";
    }
    return undefined;
  }

  /* What the log says of an event beyond its name: who, which character, Conflict, die and
     value, Drive, Story Tokens and Debt. It said "Scene framed", "Character allied",
     "Reactions opened", and a player who looked away could not tell what had happened. A
     template's {field} is the event's field, named as FIELD says (seats by their players'
     names, characters by theirs, Conflicts by #id, dice by id); an event carrying nothing but
     its name keeps it ("Campaign closed"). */
  const tokens = (n) => `${n} Story Token${n === 1 ? "" : "s"}`;
  const dieOf = (e) => `die ${e.die} of #${e.conflict}`;
  /* A Conflict as the log and the status name it (#1 “The bridge collapses”): as it was
     created, from the log, since one resolved since is on no board. */
  // Read once per event heard, not once per name: a long log named each Conflict by a scan of
  // every event. The last one made under an id counts (an undo may give its id again).
  let madeOf = [-1, new Map()];
  const made = (id) => {
    if (madeOf[0] !== S.logged) {
      const byId = new Map();
      for (const x of S.commands.values()) {
        for (const e of x) if (e.type === "ConflictCreated") byId.set(e.event.conflict, e.event);
      }
      madeOf = [S.logged, byId];
    }
    return madeOf[1].get(id);
  };
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
  const back = (list, to = "to") => list.map((d) => `${d.amount} ${d.drive} ${to} ${charName(d.character)}`).join(", ");
  // R-RES-2, R-RES-4, R-DEAD-1: the Debt back to its Drives and the Inspirations made.
  const ended = (e) => e.inspirations.map((i) => `; Inspiration #${i.inspiration} (${i.value}) to ${player(i.seat)}`).join("")
    + (e.debt_returned.length ? `; Debt back: ${back(e.debt_returned)}` : "");
  const EVENT_TEXT = {
    CampaignCreated: "Campaign “{name}” created",
    PlayerSeated: (e) => `${e.name} took seat ${e.seat}`,
    CampaignForked: "Forked as “{name}”",
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
    // R-PAGE-2: the Overdrawn roll keeps only a lower value.
    OverdrawnDieRolled: (e) => `Overdrawn ${e.drive} of ${charName(e.character)}: ${dieOf(e)}: `
      + (e.kept ? `${e.before} → ${e.rolled}` : `rolled ${e.rolled}, stays ${e.before}`),
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

  /* A picker's question in a player's words, where the server's is the API's: the Story
     Tokens' was "giver seat -> {recipient seat: count}". */
  const QUESTIONS = {
    tokens: "who gets the Story Tokens of the winning side’s Debt?",
    pairs: "how do the dice pair off for Inspirations? Each die is paired with a die of another side until every die is used.",
  };
  const question = (field) => QUESTIONS[field];

  /* A die of the Conflict a command is about, as the board shows it: its id, value and side. */
  function dieText(command, id) {
    const c = command && conflictOf(command.conflict);
    const side = c && c.sides.find((s) => s.dice.some((d) => d.id === id));
    const d = side && side.dice.find((x) => x.id === id);
    return d ? `die ${id} (${d.value}, “${side.label}”)` : `die ${id}`;
  }

  function choiceText(field, choice, command) {
    if (field === "tokens") {
      const gifts = Object.entries(choice).flatMap(([g, to]) => Object.entries(to).map(
        ([r, n]) => `${player(Number(g))} gives ${player(Number(r))} ${n} Story Token${n > 1 ? "s" : ""}`));
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
    $("scene-line").replaceChildren(el("span", {}, bits.join(" · ")),
      cast.length ? el("span", { class: "cast" }, "Cast: " + cast.join(", ")) : "", ...asked);
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
      el("h4", {}, s.label, total(s.total)),
      el("p", { class: "meta" },
        s.claimed_by ? `claimed by ${player(s.claimed_by)}` : "unclaimed",
        s.allies.length ? ` · allies: ${s.allies.map(charName).join(", ")}` : ""),
      el("div", { class: "dice" }, s.dice.map((d) => die(d.id, d.value,
        `${d.controller ? ", controlled by " + charName(d.controller) : ""}${d.staked ? `, ${d.staked} Debt staked` : ""}`,
        d.staked ? `+${d.staked}` : "")))))));
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
      drivesTable(ch.drives, ch.name),
      ch.staked.length ? el("p", { class: "meta" }, "Staked: " + ch.staked.map((s) => `${s.amount} ${s.drive} on #${s.conflict} die ${s.die}`).join(", ")) : "",
      ch.blocked.length ? el("p", { class: "meta" }, "Blocked: " + ch.blocked.join(", ")) : "")))));
  }

  function renderCharacters() {
    // A sheet opened stays open as the table plays on (redraw).
    redraw($("characters"), S.characters.map((ch) => el("details", { class: "sheet", id: `sheet-${ch.id}` },
      el("summary", {}, `${ch.name} — ${player(ch.created_by)}’s, ${ch.method}`),
      el("ul", { class: "abilities" }, ch.abilities.map((a) => el("li", {},
        `${a.name}: ${a.category} ${a.rating}${a.super ? " (super)" : ""}`))),
      ch.exemplars.length ? el("p", { class: "meta" }, "Exemplars: " +
        ch.exemplars.map((x) => `${charName(x.other)} (${x.drive})`).join(", ")) : "")), $("characters-title"));
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

  /* A refusal at the field named ``name``: the Drives' at the first strength to fill in. */
  function fieldError(name, text) {
    const input = name === "drives"
      ? $("ch-drive-inputs").querySelector("input:not(:disabled)") || $("ch-undifferentiated")
      : chForm.querySelector(`[name="${name}"], [name="${name}_name"]`) || chForm.querySelector(`[name="${name}_abilities"]`);
    T.fieldError(chForm, name, text, input);
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
    T.clearFieldErrors(chForm);
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
      if (!(await postCommand(command))) return;  // not sent: the last command is not drawn yet
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
      await postCommand({ type: "link_exemplar", character: Number(f.character.value), exemplar: Number(f.exemplar.value), drive: f.drive.value });
    } catch (err) { $("exemplar-error").textContent = problemText(err); }
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

  /* Moves any seat may make while the table waits for someone else (R-CONF-3 a veto, R-DEAD-1 a
     deadlock): offered in "Your moves", never "your move" in the status. */
  const ASIDE = new Set(["veto", "declare_deadlock"]);

  /* Each Conflict that may be vetoed now, with the seats that may veto it (R-CONF-3); on a
     board stored before ``vetoers``, those the board offers a veto. */
  const vetoers = (b) => b.vetoable.map((id) => [id, (b.vetoers || {})[id]
    || Object.keys(b.waiting_for).map(Number).filter((s) => b.waiting_for[s].includes("veto"))]);

  /* The status's words for an aside move: who may veto what, or declare which Conflicts
     Deadlocked (R-DEAD-1: it said who might "declare a deadlock", of no Conflict). */
  const aside = (type, seats, b) => (type === "veto" ? vetoers(b).map(([id, who]) =>
    `${anyOf(who)} may veto ${titled(id)} before the next turn starts.`).join(" ")
    : (b.deadlockable || []).length
      && `${anyOf(seats)} may declare ${b.deadlockable.map(titled).join(" or ")} deadlocked.`);

  return { MOVES, ASIDE, aside, options, strings, fill, choiceText, question, label, eventText, renderBoard, renderLedgers, renderCharacters, summary, say };
};
