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
        img.src = `/campaigns/${ID}/analytics/${img.dataset.chart}.png?v=${stamp}`;
      }
      const figures = await api(TOKEN, "GET", `/campaigns/${ID}/analytics`);
      const dl = document.getElementById("figures");
      for (const [key, value] of Object.entries(figures)) {
        if (value === null || typeof value === "object") continue;
        dl.append(el("dt", {}, key.replace(/_/g, " ")), el("dd", {}, String(value)));
      }
    } catch (err) {
      error.textContent = problemText(err);
    }
  }
  start();
})();
