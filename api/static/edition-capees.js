/* Edition ``capees`` (CAPEES!) at the table: its moves, the fields they need, its board
   (the story and scene, the Editor, Victory Points, Prominence, Complications with their hero
   and opponent dice), ledgers (Story Tokens, Inspiration cards, Debt), character sheets and
   the character form. The generic table (table.js) calls it; it holds no rule either. */
"use strict";
Capes.editions.capees = (T) => {
  const { S, $, el, player, character, charName, human, myLedger, die, tokens, back } = T;
  const SIDE = { hero: "Hero", opponent: "Opponent" };
  const board = () => (S.past ? S.past.board : S.board);
  const complication = (id) => S.board.complications.find((c) => c.id === Number(id));
  /* A Complication as the cards show it ("#2 Hostages"). An entry of the log names it as it
     was when that entry happened (table.js's madeInLog: a taken-back Getaway stays Getaway in
     its own entry, the Escape made under its number after it is Escape in the entries after);
     a fork's log starts with the game as it was (R-REC-6): the Complications on it then count
     as made by that first event (one discarded in the fork said "#3 discarded"). The board and
     its ledgers name it by its card. */
  const made = T.madeInLog((e, type) => (type === "ComplicationCreated" ? [[e.complication, e.name]]
    : type === "CampaignForked" ? Object.values(e.state.complications).map((k) => [k.id, k.name]) : []));
  function titled(id) {
    const card = board().complications.find((x) => x.id === id)?.name;
    return `#${id} ${(T.wording() === undefined ? card || made(id) : made(id) || card) || ""}`.trim();
  }
  const dieValue = (id, d) => (board().complications.find((c) => c.id === id) || { sides: [] }).sides
    .flatMap((s) => s.dice).find(([n]) => n === d)?.[1];
  /* My characters: those I narrate in the scene, else those I made. */
  const mine = () => (S.board.present.length
    ? S.board.present.filter((p) => p.narrator === S.me.seat).map((p) => character(p.character))
    : S.characters.filter((c) => c.created_by === S.me.seat)).filter(Boolean);
  /* A side of a Complication by its faction; one no longer on the table, by C-COMP-1's order. */
  const sideOf = (e) => SIDE[(complication(e.complication)?.sides[e.side] || {}).faction || ["hero", "opponent"][e.side]] || `#${e.side}`;
  /* The choices the server accepts for a move of mine that names a character (and a
     Complication): the board's ``options``, worked out by the rules themselves, so this page
     copies none of them (C-PROM-3, C-PROM-6, C-CLAIM-1, C-CLAIM-2, C-STAKE-5). */
  const legal = (move) => ((S.board.options || {})[S.me.seat] || {})[move] || [];
  /* Each character of ``choices`` once, by name. */
  const characters = (choices) => [...new Set(choices.map((o) => o.character))].map((id) => [id, charName(id)]);
  /* The character a form is about: its own field, else the one acting now, else my first. */
  const actor = (form) => (form && form.elements.character && form.elements.character.value
    ? character(form.elements.character.value)
    : character((S.board.action || {}).character) || mine()[0]);

  /* C-PROM-6: balancing adds to the side with the lower Prominence total, which the server
     gives a character with no side yet unasked: the form shows no Side then, and its move is
     named after that side. Null with both sides at 0, where the Editor chooses. */
  const lowerSide = (b = S.board) => (b.hero_prominence === b.opponent_prominence ? null
    : b.hero_prominence < b.opponent_prominence ? "hero" : "opponent");

  /* Each legal move (a command type of ``waiting_for``): its button and the fields it needs.
     Choices the rules may ask for (a Drive, a side, who gets a stake's tokens…) are left to
     the picker (the 422's ``choices``). */
  const openForm = () => {
    $("new-character").open = true;
    $("ch-name").focus();
  };
  const complicationField = ["complication", "complication", "Complication"];
  const driveField = ["drive", "drive", "Drive taking the Debt (super abilities)"];
  const MOVES = {
    "capees.create_character": ["Create a character", [], openForm],
    "capees.begin_story": ["Begin a story as its Editor", [["victory_total", "count", "Victory Total", 24]]],
    "capees.start_scene": ["Start the scene", [["featured", "hero", "Hero who gets two Story Tokens (a story's first scene)"]]],
    "capees.use_inspiration": ["Use an Inspiration", [["inspiration", "inspiration", "Inspiration"],
      ["name", "required", "The Complication it becomes"]]],
    "capees.add_complication": ["Add a Complication", [["name", "required", "Complication"]]],
    "capees.pass_setup": ["Pass (setup)", []],
    "capees.buy_prominence": ["Buy Prominence", [["character", "buyable", "Character"],
      ["points", "count", "Points (a Story Token each)", 1], ["side", "side", "Side"]]],
    "capees.balance": ["Balance Prominence", [["character", "balanceable", "Character"],
      ["points", "count", "Points", 1], ["side", "lower-side", "Side"], ["narrator", "seat", "Narrated by"]]],
    "capees.end_scene": ["End the scene", []],
    "capees.claim": ["Claim a Complication", [["character", "claimer", "Character"], ["complication", "claimable", "Complication"]]],
    "capees.pass_claim": ["Pass (no claim)", []],
    "capees.roll_overdrawn": ["Roll for an Overdrawn Drive", [["character", "overdrawn", "Character"]]],
    "capees.start_action": ["Start an action", [["character", "acting", "Character"]]],
    "capees.stake": ["Stake Debt", [complicationField, ["amount", "count", "Debt", 1], driveField,
      ["character", "absent", "Whose Debt (the Editor, for an absent opponent)"]]],
    // The die before the ability: which abilities may roll it depends on its value (C-ABIL-6),
    // and a form's lists are filled again in their order when a choice changes.
    "capees.roll_ability": ["Roll an ability", [complicationField, ["die", "die", "Die"],
      ["ability", "ability", "Ability"], driveField]],
    "capees.keep_roll": ["Keep the roll", []],
    "capees.turn_back": ["Turn the roll back", []],
    "capees.react": ["React", [["character", "reactor", "Character"], ["ability", "ability", "Ability"], driveField,
      ["stake", "count", "Debt staked just before (optional)", 0], ["stake_drive", "drive", "Drive staking it"],
      ["stake_on", "stake-on", "Staked on"]]],
    "capees.pass_reaction": ["Pass (no reaction)", []],
    "capees.split": ["Split a die", [complicationField, ["die", "die", "Die"],
      ["into", "count", "Into how many dice", 2], ["move", "count", "How many open a new side", 0],
      ["stake", "count", "New Debt staked just before (optional)", 0], ["drive", "drive", "Drive staking it"]]],
    "capees.end_action": ["End the action", []],
    "capees.check_claim": ["Resolve a claim", [["complication", "claimed", "Complication"],
      ["replacement", "required", "Its replacement: the new Complication’s name (C-RES-4)"],
      ["inspiration", "my-inspiration", "Made from my Inspiration"]]],
    "capees.give_tokens": ["Give Story Tokens", [["complication", "giving", "Complication"],
      ["character", "giver", "Whose stake"], ["to", "recipient", "Given to"]]],
  };

  function options(kind, form) {
    const b = S.board;
    const c = form && form.elements.complication ? complication(form.elements.complication.value) : null;
    const who = actor(form);
    switch (kind) {
      case "complication":
        return b.complications.map((x) => [x.id, `#${x.id} ${x.name}`]);
      case "stake-on":
        // C-REACT-3: a reaction's stake goes on any Complication; left out, the die's own.
        return [["", "(the die’s Complication)"], ...b.complications.map((x) => [x.id, `#${x.id} ${x.name}`])];
      case "claimed":
        return b.complications.filter((x) => x.claimed_by !== null).map((x) => [x.id, `#${x.id} ${x.name} (${charName(x.claimed_by)})`]);
      case "die":
        return c ? c.sides.flatMap((s) => s.dice.map(([id, value]) => [id, `die ${id}: ${value} (${SIDE[s.faction]})`])) : [];
      case "hero":
        return [["", "(ask me)"], ...S.characters.filter((x) => x.hero).map((x) => [x.id, x.name])];
      case "absent":
        // Whose Debt: the acting character's, or an absent opponent's the server accepts on
        // the chosen Complication.
        return [["", "(the acting character)"], ...characters(legal("capees.stake")
          .filter((o) => !c || o.complication === c.id))];
      case "claimer":
        return characters(legal("capees.claim"));
      case "claimable":
        return legal("capees.claim").filter((o) => who && o.character === who.id)
          .map((o) => [o.complication, `#${o.complication} ${(complication(o.complication) || {}).name}`]);
      case "giving":
        // C-RES-3: the resolution waiting for my stakes' Story Tokens.
        return [...new Set(legal("capees.give_tokens").map((o) => o.complication))]
          .map((id) => [id, `#${id} ${(complication(id) || {}).name || ""}`]);
      case "giver":
        return characters(legal("capees.give_tokens").filter((o) => !c || o.complication === c.id));
      case "recipient":
        return [["", "(ask me)"], ...b.players.map((name, i) => [i + 1, name]).filter(([seat]) => seat !== S.me.seat)];
      case "buyable":
        return characters(legal("capees.buy_prominence"));
      case "balanceable":
        return characters(legal("capees.balance"));
      case "reactor":
        return characters(legal("capees.react"));
      case "acting":
        return [["", "(the one whose turn it is)"], ...mine().map((x) => [x.id, x.name])];
      case "overdrawn":
        return b.overdrawn.map(([id, drive]) => [id, `${charName(id)} (${drive})`]);
      case "side":
        return [["", "(as declared)"], ["hero", "Hero"], ["opponent", "Opponent"]];
      case "lower-side":
        // Nobody is declared yet when both sides are at 0; otherwise nothing to ask.
        return lowerSide() ? [] : [["hero", "Hero"], ["opponent", "Opponent"]];
      case "seat":
        return [["", "(me)"], ...b.players.map((name, i) => [i + 1, name])];
      case "inspiration":
      case "my-inspiration": {
        const l = myLedger();
        return [...(kind === "my-inspiration" ? [["", "(none: at 1 and 1)"]] : []),
          ...(l ? l.inspirations.map((i) => [i.id, `#${i.id} ${i.name} (${i.vp} VP, Bonus ${i.bonus})`]) : [])];
      }
      case "drive":
        return T.driveChoices(who);
      case "ability": {
        // C-ABIL-5: Tropes serve reactions only, and only Tropes do; C-ABIL-4: Blocked, or
        // used this page, shown but not chosen; the abilities the server does not accept on
        // the die (the board's options: rated below it, C-REACT-1, C-ABIL-6) likewise.
        const reaction = form && form.dataset.move === "capees.react";
        const d = form && form.elements.die ? Number(form.elements.die.value) : null;
        const fits = new Set(reaction
          ? legal("capees.react").filter((o) => who && o.character === who.id).map((o) => o.ability)
          : legal("capees.roll_ability").filter((o) => c && o.complication === c.id && o.die === d).map((o) => o.ability));
        return who ? who.abilities.filter((a) => (a.type === "trope") === reaction).map((a) => [a.name,
          `${a.name} (${a.type} ${a.rating}${a.super ? ", super" : ""})`,
          who.blocked.includes(a.name) ? "blocked" : who.used.includes(a.name) ? "used this page"
            : (reaction || (c && d)) && !fits.has(a.name) ? "rated below the die" : false]) : [];
      }
      default:
        return [];
    }
  }

  /* The fields a move's form sends as text; the others are numbers. */
  const strings = new Set(["text", "required", "ability", "drive", "side", "lower-side"]);

  /* What the log says of an event beyond its name: who, which Complication and die, which
     ability, what the die showed and shows now, where the Debt and the Story Tokens went. It
     said "Claim made", "Die rolled", and a player who looked away could not tell what had
     happened. An event carrying nothing but its name keeps it ("Resolution began"). */
  const dieOf = (e) => `die ${e.die} of ${titled(e.complication)}`;
  const who = (e) => charName(e.character);
  const vp = (e) => `(Hero ${e.hero_vp} VP, Opponent ${e.opponent_vp} VP)`;
  const EVENT_TEXT = {
    CharacterCreated: (e) => `${e.name} created (${e.hero ? "hero" : e.drives.length ? "non-hero" : "known by name only"})`,
    SheetCompleted: (e) => `Sheet of ${who(e)} completed`,
    StoryBegun: (e) => `Story ${e.story} begun (Editor: ${player(e.editor)}, Victory Total ${e.victory_total})`,
    SceneStarted: (e) => `Scene ${e.scene} started (Story Tokens: ${e.tokens.map((t) => `${player(t.seat)} ${t.count}`).join(", ")}`
      + `${e.featured ? `; ${charName(e.featured)} featured` : ""})`,
    SetupStepBegan: (e) => `Step: ${human(e.step)} (${player(e.seat)} first)`,
    SetupPassed: (e) => `${player(e.seat)} passed to ${player(e.to)}`,
    ComplicationCreated: (e) => `Complication #${e.complication} ${e.name} added (Hero ${e.hero_die}, Opponent ${e.opponent_die}`
      + `${e.inspiration ? `; from Inspiration #${e.inspiration}` : ""})`,
    ProminenceBought: (e) => `${who(e)}: ${e.points} Prominence (${SIDE[e.faction]}) for ${tokens(e.cost)}`,
    ProminenceBalanced: (e) => `${who(e)} balanced with ${e.points} Prominence (${SIDE[e.faction]}; narrated by ${player(e.narrator)})`,
    PlayBegan: (e) => `Play began: Victory Target ${e.target}`,
    PageStarted: (e) => `Page ${e.page} started by ${player(e.seat)}`,
    ClaimMade: (e) => `${who(e)} claimed ${titled(e.complication)}${e.displaced ? ` from ${charName(e.displaced)}` : ""}`,
    ClaimPassed: (e) => `${player(e.seat)} made no claim${e.forced ? " (none possible)" : ""}`,
    OverdrawnStepBegan: (e) => `Overdrawn: ${e.drives.map(([c, d]) => `${d} of ${charName(c)}`).join(", ") || "none"}`,
    OverdrawnRolled: (e) => `Overdrawn ${e.drive} of ${who(e)}: ${dieOf(e)}: ${T.overdrawn(e)}`,
    TurnBegan: (e) => `Turn ${e.turn}`,
    ActionStarted: (e) => `Action: ${who(e)}`,
    DebtStaked: (e) => `${who(e)} staked ${e.amount} ${e.drive} Debt on ${titled(e.complication)} (${sideOf(e)} side)`,
    AbilityUsed: (e) => `${who(e)} used ${e.ability} (${e.rating}${e.super ? ", super" : ""})${e.reaction ? " to react" : ""}`,
    DebtGained: (e) => `${who(e)} gained ${e.amount} Debt on ${e.drive}`,
    AbilityBlocked: (e) => `${e.ability} blocked (${who(e)})`,
    DieRolled: (e) => `Rolled ${dieOf(e)}: ${e.before} → ${e.rolled}`,
    RollKept: (e) => `Kept ${e.value} on ${dieOf(e)}`,
    RollTurnedBack: (e) => `Turned back: ${dieOf(e)} back to ${e.value}`,
    ReactionPassed: (e) => `${player(e.seat)} did not react${e.forced ? " (could not)" : ""}`,
    ReactionsClosed: (e) => `Reactions to ${dieOf(e)} closed`,
    DieSplit: (e) => `${who(e)} split ${dieOf(e)} into ${[e.value, ...e.new_dice.map(([, v]) => v)].join(" + ")}`
      + `${e.moved.length ? ` (${e.moved.length} on a side of its own)` : ""}`,
    ActionEnded: (e) => `Action of ${who(e)} ended`,
    ClaimFailed: (e) => `Claim of ${who(e)} on ${titled(e.complication)} failed`,
    ComplicationResolved: (e) => `${titled(e.complication)} resolved for ${who(e)} (${SIDE[e.faction]}: ${e.vp} VP, Bonus ${e.bonus}; `
      + `Inspiration #${e.inspiration} to ${player(e.seat)}${e.gifts.map((g) => `; ${player(g.giver)} gave ${player(g.recipient)} ${tokens(g.count)}`).join("")}`
      + `${e.returned.length ? `; Debt back: ${back(e.returned)}` : ""})`,
    ClaimChecked: (e) => `Claim of ${who(e)} on ${titled(e.complication)} holds (replacement: ${e.replacement}`
      + `${e.inspiration ? ` from Inspiration #${e.inspiration}` : ""}`
      + `${e.givers.map(([c, seat]) => `; waiting for ${player(seat)} to give the Story Tokens of ${charName(c)}`).join("")})`,
    StoryTokensGiven: (e) => `Story Tokens of ${who(e)} on ${titled(e.complication)} go to ${player(e.to)}`,
    ComplicationDiscarded: (e) => `${titled(e.complication)} discarded${e.returned.length ? ` (Debt back: ${back(e.returned)})` : ""}`,
    PageEnded: (e) => `Page ${e.page} ended`,
    SceneEnding: (e) => (e.reason === "target" ? "Victory Target reached: the scene ends" : `${player(e.seat)} ends the scene`),
    SceneEnded: (e) => `Scene ${e.scene} ended ${vp(e)}`,
    StoryEnded: (e) => `Story ${e.story} ended ${vp(e)}`,
  };
  const eventText = (e) => EVENT_TEXT[e.type.replace(/^capees\./, "")]?.(e);

  /* Balance's name says which side its points go to where only one may have them. */
  const label = (type, seat, b) => (type === "capees.balance" && lowerSide(b)
    ? `Balance Prominence (${SIDE[lowerSide(b)]} side)` : undefined);

  function choiceText(field, choice) {
    if (field === "side") return SIDE[choice];
    if (field === "character" || field === "featured") return charName(choice);
    if (field === "die") return `die ${choice[1]} on #${choice[0]} ${(complication(choice[0]) || {}).name || ""}`;
    if (field.startsWith("gifts.") || field === "to") return player(Number(choice));
    return undefined;
  }

  function summary(b) {
    return b.scene ? `Scene ${b.scene}${b.page ? `, page ${b.page}` : ""}, ${human(b.step)}` : "Between scenes";
  }

  // -- the board --------------------------------------------------------------------------

  function renderBoard(b) {
    const bits = [];
    if (b.editor) bits.push(`Editor: ${player(b.editor)}`);
    if (b.story) bits.push(`Story ${b.story} (Victory Total ${b.victory_total}: Hero ${b.story_hero_vp}, Opponent ${b.story_opponent_vp})`);
    if (b.scene) {
      bits.push(`Scene ${b.scene}${b.target ? `, Victory Target ${b.target}` : ""}`);
      if (b.page) bits.push(`page ${b.page}${b.turn ? `, turn ${b.turn}` : ""}`);
      bits.push(`step: ${human(b.step)}`);
      const a = b.action;
      if (a) {
        bits.push(`${charName(a.character)} acts (${player(a.seat)})`);
        if (a.roll) bits.push(`roll waiting: die ${a.roll[1]} on ${titled(a.roll[0])}: ${a.roll[2]} → ${a.roll[3]}`);
        // The die the round is about: a Trope reacts only if rated at least its value
        // (C-REACT-1), so a player must see which die that is.
        if (a.reacting) bits.push(`${player(a.reacting)} may react` + (a.reaction
          ? ` to die ${a.reaction[1]} on ${titled(a.reaction[0])}, showing ${dieValue(...a.reaction)}` : ""));
      }
    } else {
      bits.push(`Between scenes (${b.scenes_played} played)`);
    }
    const score = b.scene ? el("div", { class: "score" }, ["hero", "opponent"].map((f) => el("p", { class: `faction ${f}` },
      el("strong", {}, SIDE[f]), ` ${b[f + "_vp"]} Victory Point${b[f + "_vp"] === 1 ? "" : "s"} · Prominence ${b[f + "_prominence"]}`))) : "";
    const present = b.present.length ? el("ul", { class: "present plain" }, b.present.map((p) => el("li", { class: `faction ${p.faction}` },
      `${p.name}: Prominence ${p.prominence} (${SIDE[p.faction]}, ${player(p.narrator)})`))) : "";
    return [[el("span", {}, bits.join(" · ")), score, present], b.complications.map(card), "No Complications on the table."];
  }

  function card(c) {
    const control = c.controlled_by;
    return el("article", { class: "conflict complication" + (control ? ` ${control}` : ""), dataset: { complication: c.id } },
      el("h3", {}, `#${c.id} ${c.name}`),
      el("p", { class: "meta" }, control
        ? `Controlled by the ${SIDE[control]} side: worth ${c.vp} VP, Bonus ${c.bonus}` : "Nobody Controls it",
      c.claimed_by !== null ? ` · claimed by ${charName(c.claimed_by)}` : ""),
      T.sides(c, (s) => [` ${s.faction}`, `${SIDE[s.faction]} side`,
        // A split-off side belongs to the character that opened it (C-SPLIT-3): ``owner`` is a
        // character, not a seat (it was shown as "opened by seat 7").
        s.owner ? el("p", { class: "meta owner" }, `${charName(s.owner)}’s own side (split off)`) : "",
        el("div", { class: "dice" }, s.dice.map(([id, value]) => die(id, value, `, ${SIDE[s.faction]} side`))),
        s.stakes.length ? el("p", { class: "meta" }, "Staked: " + s.stakes.map((st) => `${st.amount} ${st.drive} (${charName(st.character)})`).join(", ")) : ""]));
  }

  const ledger = (l) => [l.editor ? el("span", { class: "editor" }, " Editor") : "", "",
    l.inspirations.length ? el("ul", { class: "cards plain" }, l.inspirations.map((i) => el("li", { class: `card faction ${i.faction}` },
      `Inspiration #${i.id} ${i.name}: ${SIDE[i.faction]}, ${i.vp} VP, Bonus ${i.bonus}`))) : el("p", { class: "meta" }, "No Inspirations"),
    named(l.characters),
    l.characters.filter((ch) => ch.drives.length).map((ch) => T.debts(ch, ch.prominence ? ` · Prominence ${ch.prominence}` : "",
      // The Complication by its name too, as its card shows it (it said "on #2" alone).
      ch.staked.map(([cid, drive, n]) => `${n} ${drive} on ${titled(cid)}`),
      ch.abilities.filter((a) => a.blocked).map((a) => a.name)))];

  /* Non-heroes known by name only (no sheet, no Debt) on one line. */
  function named(characters) {
    const names = characters.filter((ch) => !ch.drives.length).map((ch) => ch.name);
    return names.length ? el("p", { class: "meta" }, "Known by name only: " + names.join(", ")) : "";
  }

  const sheet = (ch) => [`${ch.hero ? "hero" : "non-hero"}, ${player(ch.created_by)}’s`,
    ch.abilities.length ? T.abilityList(ch.abilities, "type") : el("p", { class: "meta" }, "Known by name only")];

  /* The character form's sheets to complete: my characters known by name only (C-NPC-1). */
  const renderCharacters = () => T.setOptions(form.elements.complete, [["", "(a new character)"],
    ...S.characters.filter((c) => !c.drives.length && c.created_by === S.me.seat).map((c) => [c.id, c.name])]);

  // -- the character form -----------------------------------------------------------------

  const form = $("character-form");
  const lines = (text) => text.split("\n").map((x) => x.trim()).filter(Boolean);
  const pairs = (text, what) => Object.fromEntries(lines(text).map((line, n) => {
    const [k, v] = line.split("=").map((x) => x.trim());
    if (!k || !v) throw [what, `line ${n + 1}: write name = value`];
    return [k, v];
  }));

  function commandOf(f) {
    const sheet = f.get("complete");
    const name = f.get("name").trim();
    if (!name && !sheet) throw ["name", "Give the character a name."];
    // A name alone makes a non-hero (C-NPC-1), but the hero box starts ticked: the server's
    // C-HERO-1 at the Drives then said nothing of the box the player had to untick.
    if (!sheet && f.get("hero") === "on" && !["drives", "abilities", "exemplars"].some((x) => f.get(x).trim())) {
      throw ["hero", "A hero needs its five Drives, abilities and Exemplars: untick “A hero” for a non-hero known by name only (C-NPC-1)."];
    }
    const drives = Object.fromEntries(Object.entries(pairs(f.get("drives"), "drives")).map(([k, v]) => [k, Number(v)]));
    const abilities = T.abilityLines(f.get("abilities"), "type");
    const exemplars = Object.fromEntries(Object.entries(pairs(f.get("exemplars"), "exemplars")).map(([drive, who]) => {
      const found = S.characters.find((c) => c.name.toLowerCase() === who.toLowerCase());
      if (!found) throw ["exemplars", `no character called ${who}`];
      return [drive, found.id];
    }));
    // C-NPC-1: a non-hero known by name gets its sheet later.
    if (sheet) return { type: "capees.complete_sheet", character: Number(sheet), drives, abilities };
    return { type: "capees.create_character", name, hero: f.get("hero") === "on", drives, abilities, exemplars };
  }

  /* Which field a refusal is about: a 400's error key, else the words of the rule's reason. */
  function faultOf(err) {
    const p = err.problem || {};
    const text = JSON.stringify(p.errors || "") + (err.message || "");
    if (/exemplar/i.test(text)) return "exemplars";
    if (/drive/i.test(text)) return "drives";
    if (/abilit|trope|power|attitude|skill|rating/i.test(text)) return "abilities";
    if (/name/i.test(text)) return "name";
    return "form";
  }

  const fieldError = (name, text) => T.fieldError(form, name, text, form.elements[name]);

  T.characterForm(form, commandOf, faultOf, fieldError);

  return { TITLE: "CAPEES!", MOVES, options, strings, label, eventText, choiceText, board: renderBoard, ledger, sheet, renderCharacters, summary };
};
