/* The analytics page: the campaign's charts (PNG, drawn by the server) and its figures. The
   chart requests carry the session cookie (set by exchanging the token), never the token. */
"use strict";
(() => {
  const { el, api, problemText } = Capes;
  const ID = document.body.dataset.campaign;
  const TOKEN = Capes.token(ID);
  const error = document.getElementById("charts-error");

  async function start() {
    if (!TOKEN) { error.textContent = "Open the table with your invitation link first."; return; }
    try {
      await api(TOKEN, "POST", `/campaigns/${ID}/session`);
      const summary = await api(TOKEN, "GET", `/campaigns/${ID}`);
      document.getElementById("title").textContent = `Analytics: ${summary.name}`;
      const stamp = summary.version;
      for (const img of document.querySelectorAll("img[data-chart]")) {
        img.addEventListener("error", () => {
          img.replaceWith(el("p", { class: "error" }, "This chart could not be drawn (a server " +
            "without its charts extra answers 501: pip install '.[charts]'). The figures below " +
            "hold the same numbers."));
        });
        img.src = `/campaigns/${ID}/analytics/${img.dataset.chart}.png?v=${stamp}`;
      }
      const figures = await api(TOKEN, "GET", `/campaigns/${ID}/analytics`);
      const dl = document.getElementById("figures");
      for (const [label, value] of [["Game events", figures.events],
        ["Reverted by undos and disputes", figures.reverted_events], ["Undos", figures.undos],
        ["Disputes upheld (rewinds)", figures.rewinds], ["Dice rolled", figures.dice.overall.rolls]]) {
        dl.append(el("dt", {}, label), el("dd", {}, String(value)));
      }
      const fmt = (x, digits) => (x === null || x === undefined ? "–" : x.toFixed(digits));
      const rows = [...figures.dice.by_player.map((p) => [p.name, p.dice]), ["Everyone", figures.dice.overall]];
      document.getElementById("dice-table").append(el("tbody", {}, rows.map(([name, d]) => el("tr", {},
        el("th", { scope: "row" }, name), el("td", {}, String(d.rolls)),
        d.faces.map((n) => el("td", {}, String(n))),
        el("td", {}, fmt(d.mean, 2)), el("td", {}, fmt(d.p_value, 2))))));
    } catch (err) {
      error.textContent = problemText(err);
    }
  }
  start();
})();
