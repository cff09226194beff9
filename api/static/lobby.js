/* The lobby: open a campaign and go to its table as its owner. */
"use strict";
(() => {
  const { el, api, tables, remember, problemText } = Capes;
  const form = document.getElementById("open-campaign");
  const error = document.getElementById("open-error");

  /* Whether a campaign is being opened: a press meanwhile (Enter again, say) opens no other.
     Cleared when the page is shown again from the browser's back-forward cache (Back from
     the table just opened), which keeps it as it was when the table's page was opened. */
  let opening = false;
  window.addEventListener("pageshow", () => { opening = false; });

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (opening) return;
    opening = true;
    error.textContent = "";
    const f = new FormData(form);
    const body = {
      name: f.get("name"),
      edition: f.get("edition"),
      starting_tokens: Number(f.get("starting_tokens") || 0),
      options: {
        dispute_threshold: f.get("dispute_threshold"),
        owner_settles: f.get("owner_settles") === "on",
        dispute_minutes: Number(f.get("dispute_minutes") || 1440),
      },
    };
    try {
      // Only the host may open campaigns on some servers (CAPES_OPEN_CAMPAIGNS=host): the
      // lobby then asks for the host key, sent as the bearer token of this request alone.
      const hostKey = f.get("host_key");
      const opened = await api(hostKey || null, "POST", "/campaigns", body);
      remember({ id: opened.campaign_id, name: body.name, role: "owner", token: opened.owner_token });
      location.assign(`/play/${opened.campaign_id}#token=${opened.owner_token}`);
    } catch (err) {
      error.textContent = problemText(err);
      opening = false;  // refused (a wrong host key, say): the host may correct it and retry
    }
  });

  const list = document.getElementById("my-tables");
  const mine = tables();
  if (!mine.length) list.append(el("li", { class: "hint", text: "None yet." }));
  for (const t of mine) {
    list.append(el("li", {}, el("a", { href: `/play/${t.id}#token=${t.token}` }, t.name),
      ` (${t.role})`));
  }
})();
