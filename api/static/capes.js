/* Capes: what every page shares. The token of a table comes from the invitation link's
   fragment (#token=...), which browsers never send to a server nor put in a Referer; it is
   kept in this tab's sessionStorage and sent as a bearer header. */
"use strict";
const Capes = (() => {
  const TABLES = "capes:tables";

  /* On every page a double click on a button is one click: its second (``detail`` 2 or more)
     is dropped here, before any handler sees it. Why: a hand makes it some 200 ms after the
     first, and by then the first is answered (and a table's board drawn again), so no guard of
     a request on its way stops it: it opened a second campaign in the lobby, issued a second
     link that revoked the first, made a second fork, or told a player who had just spoken to
     "Write the narration first". The keyboard's clicks have ``detail`` 0. */
  document.addEventListener("click", (ev) => {
    if (ev.detail > 1 && ev.target instanceof Element && ev.target.closest("button")) {
      ev.preventDefault();
      ev.stopImmediatePropagation();
    }
  }, true);

  /* Likewise Enter held down on a button, or in a form's one-line field, is one press: the
     key's repeats (``repeat`` set, some 30 a second after half a second held) are dropped
     before the browser turns them into clicks or a form's submits. Why: the first press is
     answered long before the first repeat, so the guards of a request on its way let the
     repeats through, each a move of its own (or an empty form sent again, refused). In a
     text area Enter writes a new line, and there its repeats are the player's. */
  document.addEventListener("keydown", (ev) => {
    if (ev.repeat && ev.key === "Enter" && ev.target instanceof Element
        && ev.target.closest("button, input")) {
      ev.preventDefault();
      ev.stopImmediatePropagation();
    }
  }, true);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (k === "dataset") Object.assign(node.dataset, v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  /* Draw ``nodes`` into ``box`` in place of what it held, as the player left it (the table
     draws again on every board): the control that had the focus has it again (the same id, or
     the same kind of control in the same element with an id), else ``fallback``; what was typed
     stays (not in a read-only control: a new link is news); an open ``details`` with an id
     stays open. */
  function redraw(box, nodes, fallback) {
    const active = document.activeElement;
    const inside = active !== box && box.contains(active);
    const holder = inside && !active.id ? active.parentElement.closest("[id]") : null;
    const typed = new Map();
    for (const c of box.querySelectorAll("input[id], select[id], textarea[id]")) {
      if (c.readOnly || c.type === "hidden") continue;
      // A list of several (a Goal's names, a Schism's dice): every option chosen.
      typed.set(c.id, c.multiple ? [...c.selectedOptions].map((o) => o.value)
        : ["checkbox", "radio"].includes(c.type) ? c.checked : c.value);
    }
    const open = new Set([...box.querySelectorAll("details[open][id]")].map((d) => d.id));
    const caret = inside && typeof active.selectionStart === "number"
      ? [active.selectionStart, active.selectionEnd] : null;
    box.replaceChildren(...nodes);
    for (const [id, value] of typed) {
      const c = document.getElementById(id);
      if (!c || !box.contains(c) || c.readOnly) continue;
      if (Array.isArray(value)) {
        for (const o of c.options) o.selected = value.includes(o.value) && !o.disabled;
      } else if (typeof value === "boolean") c.checked = value;
      else if (c.tagName !== "SELECT" || [...c.options].some((o) => o.value === value && !o.disabled)) c.value = value;
    }
    for (const id of open) {
      const d = document.getElementById(id);
      if (d && box.contains(d)) d.open = true;
    }
    if (!inside) return;
    let again = active.id ? document.getElementById(active.id) : null;
    const drawn = holder && document.getElementById(holder.id);
    if (!again && drawn && box.contains(drawn)) again = drawn.querySelector(active.tagName);
    if (again && box.contains(again)) {
      again.focus({ preventScroll: true });
      if (caret && typeof again.selectionStart === "number") again.setSelectionRange(...caret);
    } else if (fallback) fallback.focus({ preventScroll: true });
  }

  /* Draw ``nodes`` into the live region ``box`` only if they say something new: a screen
     reader reads a live region out each time it is drawn. */
  function announce(box, nodes) {
    const said = nodes.map((n) => (n instanceof Node ? n.textContent : String(n))).join("");
    if (said !== box.textContent) redraw(box, nodes);
  }

  /* The token of campaign ``id``: from the fragment (then removed from the address bar),
     else from this tab's storage. */
  function token(id) {
    const found = new URLSearchParams(location.hash.slice(1)).get("token");
    if (found) {
      sessionStorage.setItem("capes:token:" + id, found);
      history.replaceState(null, "", location.pathname + location.search);
    }
    return sessionStorage.getItem("capes:token:" + id);
  }

  class Problem extends Error {
    constructor(status, body) {
      super((body && body.detail) || "HTTP " + status);
      this.status = status;
      this.problem = body || {};
    }
  }

  async function api(tok, method, path, body) {
    const headers = {};
    if (tok) headers.Authorization = "Bearer " + tok;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const res = await fetch(path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin", referrerPolicy: "no-referrer",
    });
    // A campaign whose log does not verify is marked on every answer (issue 13): say so.
    const broken = res.headers.get("Capes-Log-Broken");
    if (broken) document.dispatchEvent(new CustomEvent("capes:broken", { detail: broken }));
    const text = res.status === 204 ? "" : await res.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
    if (!res.ok) throw new Problem(res.status, data);
    return data;
  }

  /* The tables this browser opened or joined, for the lobby's list. */
  function tables() {
    try { return JSON.parse(localStorage.getItem(TABLES) || "[]"); } catch (e) { return []; }
  }
  function remember(entry) {
    const rest = tables().filter((t) => !(t.id === entry.id && t.role === entry.role));
    localStorage.setItem(TABLES, JSON.stringify([entry, ...rest].slice(0, 50)));
  }

  function problemText(err) {
    const p = err.problem || {};
    let text = p.rule ? `${p.rule}: ${err.message}` : err.message;
    if (p.errors && Array.isArray(p.errors)) {
      text += " — " + p.errors.map((e) => (e.key ? e.key + ": " : "") + e.message).join("; ");
    }
    return text;
  }

  /* Each edition's part of the table, registered by its script (edition-<name>.js). */
  const editions = {};

  return { el, redraw, announce, token, api, Problem, tables, remember, problemText, editions };
})();
