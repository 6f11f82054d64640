// The run page: live cards over a WebSocket, zoomable stages, and step documents in a side drawer.
// Every piece of HTML swapped in here was rendered (and escaped) by Django; this file only places it.
(function () {
  "use strict";

  const page = document.getElementById("run-page");
  if (!page) return;
  const runId = page.dataset.runId;
  const pipeline = document.getElementById("pipeline");
  const live = document.getElementById("live");
  const drawer = document.getElementById("drawer");
  const drawerBody = document.getElementById("drawer-body");
  const drawerTitle = document.getElementById("drawer-title");
  const drawerPage = document.getElementById("drawer-page");
  const drawerClose = document.getElementById("drawer-close");

  const REFUSED = 4404; // the consumer's answer to "no such run, or not yours": do not retry
  const FIRST_DELAY_MS = 500;
  const MAX_DELAY_MS = 15000;

  let socket = null;
  let attempts = 0;
  let retryTimer = null;
  let openStep = null; // pk of the step whose document is in the drawer
  let openedFrom = null;
  let loadToken = 0;

  function fromHtml(html) {
    const template = document.createElement("template");
    template.innerHTML = html.trim();
    return template.content;
  }

  function setLive(state, text) {
    live.dataset.state = state;
    live.textContent = text;
  }

  // --- live updates

  function swap(event) {
    const current = document.getElementById(event.target);
    if (!current) return;
    const content = fromHtml(event.html);
    const replacement = content.firstElementChild;
    if (!replacement || replacement.id !== event.target) return;
    current.classList.remove("is-open");
    // A re-sync resends every card: leave unchanged ones alone so they do not replay their animations.
    if (replacement.isEqualNode(current)) {
      if (event.kind === "agent") markOpen(current);
      return;
    }
    current.replaceWith(replacement);
    if (event.kind === "agent") {
      markOpen(replacement);
      cardChanged(replacement);
    }
  }

  function markOpen(card) {
    const pk = card.querySelector("[data-doc]")?.dataset.doc;
    card.classList.toggle("is-open", Boolean(pk) && pk === openStep);
  }

  function cardChanged(card) {
    const stage = card.closest(".stage");
    if (stage) countStage(stage);
    const pk = card.querySelector("[data-doc]")?.dataset.doc;
    if (pk && pk === openStep) {
      const shown = drawerBody.querySelector("article[data-status]");
      // Refresh the open document when its step moved on (typically: it just finished).
      if (!shown || shown.dataset.status !== card.dataset.status) loadDocument(pk, false);
    }
  }

  function countStage(stage) {
    const cards = stage.querySelectorAll(".step");
    const done = stage.querySelectorAll(".step[data-status='done']").length;
    stage.querySelector("[data-done]").textContent = String(done);
    stage.querySelector("[data-total]").textContent = String(cards.length);
    stage.dataset.complete = cards.length > 0 && done === cards.length ? "true" : "false";
  }

  function connect() {
    clearTimeout(retryTimer);
    retryTimer = null;
    if (socket && socket.readyState <= WebSocket.OPEN) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}/ws/runs/${runId}/`);
    setLive("connecting", attempts ? "reconnecting" : "connecting");
    socket.addEventListener("open", () => {
      attempts = 0;
      setLive("live", "live");
    });
    socket.addEventListener("message", (message) => {
      try {
        swap(JSON.parse(message.data));
      } catch (error) {
        console.error("run page: could not apply an event", error);
      }
    });
    socket.addEventListener("close", (closed) => {
      socket = null;
      if (closed.code === REFUSED) {
        setLive("off", "not available");
        return;
      }
      scheduleReconnect();
    });
  }

  function scheduleReconnect() {
    if (retryTimer) return;
    // Exponential backoff with jitter: a restarted server is not met by every page at the same instant.
    const delay = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** attempts) * (0.75 + Math.random() / 2);
    attempts += 1;
    setLive("off", "reconnecting");
    retryTimer = setTimeout(connect, delay);
  }

  // --- stages

  function zoom(stage) {
    const zoomed = stage.classList.contains("is-zoomed");
    for (const other of pipeline.querySelectorAll(".stage")) {
      other.classList.remove("is-zoomed");
      other.querySelector(".stage-head").setAttribute("aria-expanded", "false");
    }
    pipeline.classList.toggle("zoomed", !zoomed);
    if (!zoomed) {
      stage.classList.add("is-zoomed");
      stage.querySelector(".stage-head").setAttribute("aria-expanded", "true");
    }
  }

  pipeline.addEventListener("click", (event) => {
    const head = event.target.closest(".stage-head");
    if (head) {
      zoom(head.closest(".stage"));
      return;
    }
    const link = event.target.closest("a[data-doc]");
    if (!link || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    openedFrom = link;
    openDocument(link.dataset.doc, link.getAttribute("href"));
  });

  // --- the drawer

  function openDocument(pk, href) {
    openStep = pk;
    drawerPage.setAttribute("href", href);
    drawer.setAttribute("aria-hidden", "false");
    drawer.classList.add("open");
    document.body.classList.add("with-drawer");
    for (const card of pipeline.querySelectorAll(".step.is-open")) card.classList.remove("is-open");
    document.getElementById(`step-${pk}`)?.classList.add("is-open");
    history.replaceState(null, "", `#doc-${pk}`);
    loadDocument(pk, true);
  }

  async function loadDocument(pk, fresh) {
    const token = ++loadToken;
    const href = drawerPage.getAttribute("href");
    if (fresh) {
      drawerBody.replaceChildren();
      drawerBody.classList.add("loading");
    }
    try {
      const response = await fetch(href, { headers: { "X-Desk-Fragment": "1" }, credentials: "same-origin" });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const content = fromHtml(await response.text());
      if (token !== loadToken) return; // a newer document was asked for meanwhile
      drawerBody.replaceChildren(content);
      drawerTitle.textContent = drawerBody.querySelector(".doc-title")?.textContent || "Document";
      if (fresh) drawer.focus();
    } catch (error) {
      if (token !== loadToken) return;
      const note = document.createElement("p");
      note.className = "notice bad";
      note.textContent = `Could not load this document (${error.message}).`;
      drawerBody.replaceChildren(note);
    } finally {
      if (token === loadToken) drawerBody.classList.remove("loading");
    }
  }

  function closeDrawer() {
    openStep = null;
    loadToken += 1;
    drawer.classList.remove("open");
    drawer.setAttribute("aria-hidden", "true");
    document.body.classList.remove("with-drawer");
    for (const card of pipeline.querySelectorAll(".step.is-open")) card.classList.remove("is-open");
    history.replaceState(null, "", location.pathname + location.search);
    if (openedFrom && document.contains(openedFrom)) openedFrom.focus();
  }

  drawerClose.addEventListener("click", closeDrawer);
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    if (openStep) closeDrawer();
    else if (pipeline.classList.contains("zoomed")) zoom(pipeline.querySelector(".stage.is-zoomed"));
  });

  // Coming back (from a fact page, say) reopens the document that was open.
  function reopenFromHash() {
    const match = /^#doc-(\d+)$/.exec(location.hash);
    const link = match && document.querySelector(`#step-${match[1]} a[data-doc]`);
    if (link) openDocument(match[1], link.getAttribute("href"));
  }

  window.addEventListener("pageshow", () => {
    if (!socket) connect();
  });
  for (const stage of pipeline.querySelectorAll(".stage")) countStage(stage);
  reopenFromHash();
  connect();
})();
